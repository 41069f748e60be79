//! The stage's header: where it is among the stages, its name, formula, explanation, shapes and
//! a note on the current numbers, all in the learner's words.

use crate::attention::{Stage, Trace};
use crate::words::{
    shape_text, stage_explanation, stage_formula_mathml, stage_name, stage_note, stage_progress,
};
use leptos::prelude::*;

/// The header of the current stage.
#[component]
pub(super) fn StageHeader(
    /// The one trace.
    trace: Memo<Trace>,
    /// The stage to show.
    stage: RwSignal<Stage>,
) -> impl IntoView {
    let note = move || {
        let s = stage.get();
        trace.with(|t| stage_note(s, t))
    };
    let shapes = move || {
        let s = stage.get();
        trace.with(|t| shape_text(s, t.seq_len(), t.config.d_model, t.config.n_heads))
    };
    view! {
        <header class="stage-header">
            <p class="stage-kicker">{move || stage_progress(stage.get())}</p>
            <h2 id="stage-title" data-testid="stage-title" tabindex="-1">{move || stage_name(stage.get())}</h2>
            <div class="formula" data-testid="formula"
                inner_html=move || format!("<math display=\"block\">{}</math>", stage_formula_mathml(stage.get()))>
            </div>
            <p class="explanation" data-testid="explanation">{move || stage_explanation(stage.get())}</p>
            <p class="shapes" data-testid="shapes">{shapes}</p>
            <p class="note" data-testid="stage-note">{note}</p>
        </header>
    }
}
