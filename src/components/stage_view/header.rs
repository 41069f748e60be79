//! The stage's words: above the pictures, where it is among the stages, its name, formula and
//! shapes; after them, the plain-language explanation and a note on the current numbers.

use crate::attention::{Stage, Trace};
use crate::components::Paragraphs;
use crate::words::{
    shape_text, stage_explanation, stage_formula_mathml, stage_note, stage_progress, stage_title,
};
use leptos::prelude::*;

/// The header of the current stage: compact, so the first heatmap shows without scrolling.
#[component]
pub(super) fn StageHeader(
    /// The one trace.
    trace: Memo<Trace>,
    /// The stage to show.
    stage: RwSignal<Stage>,
    /// In the printed handout, among other stages: the title's id names its stage.
    #[prop(optional)]
    handout: bool,
) -> impl IntoView {
    let (title_id, title_testid) = if handout {
        let key = stage.get_untracked().key();
        (format!("stage-title-{key}"), "handout-stage-title")
    } else {
        ("stage-title".to_string(), "stage-title")
    };
    let shapes = move || {
        let s = stage.get();
        trace.with(|t| shape_text(s, t))
    };
    // Memos: an edit of the numbers leaves them unchanged, and the formula is not laid out again.
    let title = Memo::new(move |_| trace.with(|t| stage_title(stage.get(), &t.config, t.wiring())));
    let formula = Memo::new(move |_| {
        trace.with(|t| {
            format!(
                "<math display=\"block\">{}</math>",
                stage_formula_mathml(stage.get(), &t.config, t.wiring())
            )
        })
    });
    view! {
        <header class="stage-header">
            <div class="stage-heading">
                <p class="stage-kicker">{move || trace.with(|t| stage_progress(stage.get(), t.norm()))}</p>
                <h2 id=title_id data-testid=title_testid tabindex="-1">{title}</h2>
            </div>
            <div class="formula" data-testid="formula"
                inner_html=formula>
            </div>
            <p class="shapes" data-testid="shapes">{shapes}</p>
        </header>
    }
}

/// What the stage does in words, and a note on the current numbers, after the pictures.
#[component]
pub(super) fn StageNotes(
    /// The one trace.
    trace: Memo<Trace>,
    /// The stage to show.
    stage: RwSignal<Stage>,
) -> impl IntoView {
    let note = Signal::derive(move || {
        let s = stage.get();
        trace.with(|t| stage_note(s, t)).unwrap_or_default()
    });
    let explanation = move || {
        let text = Signal::derive(move || stage_explanation(stage.get()).to_string());
        view! { <Paragraphs text class="explanation" testid="explanation" /> }
    };
    // A compact embed sits in a blog post whose text explains; the stage's prose is folded.
    let folded = crate::components::context::ui_context().compact;
    view! {
        <section class="stage-notes" aria-label="About this stage">
            {if folded {
                view! {
                    <details class="stage-about">
                        <summary>"What this stage does"</summary>
                        {explanation()}
                    </details>
                }.into_any()
            } else {
                explanation().into_any()
            }}
            <Paragraphs text=note class="note" testid="stage-note" />
        </section>
    }
}
