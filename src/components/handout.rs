//! The whole worked example on one page, to print: the sentence and settings, then every stage
//! with all its heads, its pictures and its notes, a page each: the forward stages, then the
//! backward ones for the goal of the training settings. A bar that is not printed offers Print
//! and the way back to the app.

use super::context::{backward_context, ui_context, IdScope};
use super::fit::fit_pages;
use super::stage_view::StageView;
use crate::attention::{Stage, Trace};
use crate::words::{
    configuration, configuration_warning, handout_goal_error, handout_goal_text, handout_title,
    ConfigLine, BACKWARD_STAGES, NOTE,
};
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
        fit_pages();
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
    // The app's one backward pass, for the goal of its training settings: the backward stages
    // follow the forward ones when the goal can be used with the settings.
    let backward = backward_context();
    let reached = Memo::new(move |_| backward.is_some_and(|b| b.pass.with(|p| p.is_ok())));
    let stages = Memo::new(move |_| {
        // The stages the page shows, with decoding and the tiles where they are asked for.
        trace.track();
        let order = ui.order.get();
        if reached.get() {
            Stage::walk(order).collect::<Vec<_>>()
        } else {
            Stage::sequence(order).to_vec()
        }
    });
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
    // Which goal the gradients are for, or why there are none: said once, with the settings.
    let goal = move || {
        let b = backward?;
        let name = b.goal_name.get();
        Some(b.pass.with(|p| {
            match p {
                Ok(pass) => view! {
                    <div data-testid="handout-goal">
                        <dt>{BACKWARD_STAGES}</dt><dd>{handout_goal_text(&name, &pass.goal, trace.with(|t| t.source.is_some()))}</dd>
                    </div>
                }
                .into_any(),
                Err(e) => view! {
                    <div class="handout-goal-error" data-testid="handout-backward-error">
                        <dt>{BACKWARD_STAGES}</dt><dd>{handout_goal_error(&name, e)}</dd>
                    </div>
                }
                .into_any(),
            }
        }))
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
    // Each stage laid out on its page, again when the numbers change.
    Effect::new(move |_| {
        trace.track();
        stages.track();
        request_animation_frame(fit_pages);
    });

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
                    {goal}
                </dl>
            </header>
            {move || stages.get().into_iter().map(|s| view! { <HandoutStage trace stage=s /> }).collect_view()}
        </div>
    }
}
