//! The stage's panels, line by line: the shown heads' equations, or every head compared.

use super::lines::{compare_line, stage_lines, Item};
use super::panel_data::Panels;
use crate::attention::{Stage, Trace};
use crate::components::attention_lines::AttentionLines;
use crate::components::context::ui_context;
use crate::components::heatmap::HeatmapView;
use crate::words;
use leptos::prelude::*;

/// The lines of the current stage.
#[component]
pub(super) fn StageBody(
    /// The one trace.
    trace: Memo<Trace>,
    /// The panels of `trace`.
    panels: Panels,
    /// The stage to show.
    stage: RwSignal<Stage>,
    /// The head shown when there are too many to show at once.
    head: RwSignal<usize>,
    /// Whether every head is shown on one colour scale.
    compare: RwSignal<bool>,
    /// Whether the stage's results are hidden behind a placeholder.
    hidden: Signal<bool>,
    /// Every head, whatever the screen (a printed handout).
    #[prop(optional)]
    every_head: bool,
) -> impl IntoView {
    let ui = ui_context();
    let body = move || {
        let s = stage.get();
        let hide = hidden.get();
        let n = panels.layout().get().n_heads;
        let selected = head.get().min(n.saturating_sub(1));
        // A lecture hall and a compact embed see one head at a time.
        let heads: Vec<usize> = if !every_head && (n > 2 || ui.compact || ui.presenting.get()) {
            vec![selected]
        } else {
            (0..n).collect()
        };
        let comparing = compare.get() && !ui.presenting.get() && !every_head;
        let mut shown = if comparing && s.is_per_head() && n > 1 {
            vec![compare_line(&panels, s, n)]
        } else {
            stage_lines(&panels, trace, s, &heads)
        };
        // A lecture hall and a compact embed see the projection's three products one at a
        // time; a compact embed also splits Q, K or V alone.
        match (s, ui.shown_part()) {
            (Stage::Projection, Some(part)) if !every_head && !comparing => {
                shown = shown.into_iter().skip(part).take(1).collect();
            }
            (Stage::SplitHeads, Some(part)) if ui.compact && !every_head && !comparing => {
                for line in &mut shown {
                    if line.items.len() == 3 {
                        line.items = vec![line.items.swap_remove(part)];
                    }
                }
            }
            _ => {}
        }
        shown
            .into_iter()
            .map(|line| {
                let items = line
                    .items
                    .into_iter()
                    .map(|item| match item {
                        Item::Panel(data) if hide => view! {
                            <div class="hidden-result" data-testid=format!("hidden-{}", data.name)>
                                <p class="hidden-title">{data.title}</p>
                                <p class="hidden-mark" aria-hidden="true">"?"</p>
                                <p class="visually-hidden">{words::QUIZ_HIDDEN}</p>
                            </div>
                        }
                        .into_any(),
                        Item::Lines(_) if hide => ().into_any(),
                        Item::Panel(data) => view! { <HeatmapView data /> }.into_any(),
                        Item::Given(data) => {
                            view! { <div class="given"><HeatmapView data /></div> }.into_any()
                        }
                        Item::Op(text) => {
                            // A product's dot is one small glyph: drawn larger to be seen.
                            let dot = text == "·";
                            view! { <span class="op" class:dot=dot aria-hidden="true">{text}</span> }
                                .into_any()
                        }
                        Item::Lines(h) => view! { <AttentionLines trace head=h /> }.into_any(),
                    })
                    .collect_view();
                view! {
                    <div class="line">
                        {line.heading.map(|h| view! { <h3 class="line-heading">{h}</h3> }.into_any())}
                        <div class="equation">{items}</div>
                    </div>
                }
            })
            .collect_view()
    };
    view! { <div class="stage-body">{body}</div> }
}
