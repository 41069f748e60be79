//! The whole worked example on one page, to print: the sentence and settings, then every stage
//! with all its heads, its pictures and its notes, a page each. A bar that is not printed offers
//! Print and the way back to the app.

use super::context::{ui_context, IdScope};
use super::stage_view::StageView;
use crate::attention::{Stage, Trace};
use crate::words::{configuration, configuration_warning, handout_title, ConfigLine, NOTE};
use leptos::ev;
use leptos::html;
use leptos::prelude::*;

/// Opens the print dialog once the handout's heatmaps have been drawn for paper. The browser
/// prints what is on the canvases, and a print the page starts itself gives the page no chance
/// to repaint between `beforeprint` and the printing: `printing` is set, and the heatmaps
/// repainted, first. `afterprint` clears it.
fn print_when_drawn(printing: RwSignal<bool>) {
    printing.set(true);
    request_animation_frame(|| {
        request_animation_frame(|| {
            let _ = window().print();
        })
    });
}

/// One stage of the handout, its ids kept apart from the other stages' (a matrix is drawn in
/// several stages).
#[component]
fn HandoutStage(trace: Memo<Trace>, stage: Stage) -> impl IntoView {
    provide_context(IdScope(format!("{}-", stage.key())));
    view! { <StageView trace stage=RwSignal::new(stage) head=RwSignal::new(0) handout=true /> }
}

/// The handout, shown instead of the app while `UiContext::handout` is on.
#[component]
pub fn Handout(
    /// The one trace.
    trace: Memo<Trace>,
) -> impl IntoView {
    let ui = ui_context();
    let heading = NodeRef::<html::H1>::new();
    let stages = Memo::new(move |_| trace.with(|t| t.stages().to_vec()));
    let title = move || {
        trace.with(|t| {
            let source = t.source.as_ref().map(|s| s.tokens.as_slice());
            handout_title(&t.tokens, source)
        })
    };
    let settings = move || {
        trace.with(|t| {
            let mut lines = configuration(t, &t.tokens, 2);
            if let Some(text) = configuration_warning(t, 2) {
                lines.push(ConfigLine {
                    label: NOTE.to_string(),
                    text,
                });
            }
            lines
        })
    };
    let back = move || ui.handout.set(false);
    let escape = window_event_listener(ev::keydown, move |ev| {
        if ev.key() == "Escape" {
            back();
        }
    });
    on_cleanup(move || escape.remove());
    // The reader starts at the top, on the handout's title.
    request_animation_frame(move || {
        window().scroll_to_with_x_and_y(0.0, 0.0);
        if let Some(h) = heading.get_untracked() {
            let _ = h.focus();
        }
    });
    print_when_drawn(ui.printing);

    view! {
        <div class="handout" data-testid="handout">
            <div class="handout-bar">
                <p>"The whole worked example, a page per stage, ready to print."</p>
                <button type="button" class="primary" data-testid="handout-print"
                    on:click=move |_| print_when_drawn(ui.printing)>"Print"</button>
                <button type="button" data-testid="handout-back" on:click=move |_| back()>
                    "Back to the app"
                </button>
            </div>
            <header class="handout-head">
                <h1 tabindex="-1" node_ref=heading data-testid="handout-title">{title}</h1>
                <dl class="handout-settings">
                    {move || settings().into_iter().map(|line| view! {
                        <div><dt>{line.label}</dt><dd>{line.text}</dd></div>
                    }).collect_view()}
                </dl>
            </header>
            {move || stages.get().into_iter().map(|s| view! { <HandoutStage trace stage=s /> }).collect_view()}
        </div>
    }
}
