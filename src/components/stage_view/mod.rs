//! The current stage: title, formula, explanation, shapes, and its operands and result drawn
//! side by side.
//!
//! - `header`: where the stage is, its name, formula and shapes; after the pictures, its
//!   explanation and note.
//! - `head_tools`: compare every head, or pick the head to show.
//! - `body`: the stage's lines of panels, laid out by `lines` (and `backward_lines` for the
//!   backward stages) from the panels of `panel_data`, as the `Line`s and `Item`s of `line`;
//!   `arrows` turns an arrow that ends a row to point down.

mod arrows;
mod backward_lines;
mod body;
mod head_tools;
mod header;
mod line;
mod lines;
mod panel_data;
mod run_lines;
mod run_tools;

use crate::attention::{Stage, Trace};
use body::StageBody;
use head_tools::HeadTools;
use header::{StageHeader, StageNotes};
use leptos::prelude::*;
use panel_data::Panels;
use run_tools::{RunStatus, RunTools};

/// The current stage in full.
#[component]
pub fn StageView(
    /// The one trace.
    trace: Memo<Trace>,
    /// The stage to show.
    stage: RwSignal<Stage>,
    /// The head shown when there are too many to show at once.
    head: RwSignal<usize>,
    /// Whether the stage's result is hidden (a quiz waits for an answer): its pictures, lines
    /// and notes give way to a placeholder.
    #[prop(optional, into)]
    hide_result: Option<Signal<bool>>,
    /// Shown between the header and the pictures (the quiz's question).
    #[prop(optional)]
    children: Option<Children>,
    /// One stage of the printed handout: every head, no head tools, ids of its own.
    #[prop(optional)]
    handout: bool,
) -> impl IntoView {
    let hidden = Signal::derive(move || hide_result.is_some_and(|h| h.get()));
    let compare = RwSignal::new(false);
    let panels = Panels::new(trace);
    let layout = panels.layout();
    let n_heads = Signal::derive(move || layout.get().n_heads);

    if handout {
        let key = stage.get_untracked().key();
        return view! {
            <article class="stage print-stage" data-testid=format!("handout-{key}")
                aria-labelledby=format!("stage-title-{key}")>
                <StageHeader trace stage compare handout=true />
                <StageBody trace panels stage head compare hidden every_head=true />
                <StageNotes trace stage>
                    <RunStatus trace stage=stage.get_untracked() />
                </StageNotes>
            </article>
        }
        .into_any();
    }
    view! {
        <article class="stage" data-testid="stage-view" aria-labelledby="stage-title">
            <StageHeader trace stage compare />
            {children.map(|c| c())}
            <HeadTools n_heads stage head compare />
            <RunTools trace stage hidden />
            <StageBody trace panels stage head compare hidden />
            {move || (!hidden.get()).then(|| view! { <StageNotes trace stage head /> })}
        </article>
    }
    .into_any()
}
