//! The stage's words: above the pictures, where it is among the stages, its name, formula and
//! shapes; after them, the plain-language explanation and a note on the current numbers.

use crate::attention::{BackMatrix, LossKind, Stage, Trace};
use crate::components::context::{backward_context, run_context, ui_context};
use crate::components::presenter::{decode_part_shown, has_parts, in_halves, presenter_parts};
use crate::components::{trace_outline, Paragraphs};
use crate::words::{
    back_formula_mathml, back_note_of_head, back_part_formula_mathml, back_shape_text, back_title,
    decode_note, formula_equation, formula_equations, formula_half, shape_text,
    stage_explanation_in, stage_formula_mathml, stage_note, stage_progress, stage_title,
    tiles_note, tiles_shapes, unreached_text,
};

/// The loss of the goal's gradients; `None` when the goal cannot be used (the stage then says
/// why).
fn goal_loss() -> Memo<Option<LossKind>> {
    let backward = backward_context();
    Memo::new(move |_| {
        backward.and_then(|b| b.pass.with(|p| p.as_ref().ok().map(|p| p.loss_kind())))
    })
}
use leptos::prelude::*;

/// The header of the current stage: compact, so the first heatmap shows without scrolling.
#[component]
pub(super) fn StageHeader(
    /// The one trace.
    trace: Memo<Trace>,
    /// The stage to show.
    stage: RwSignal<Stage>,
    /// Whether every head is shown on one colour scale.
    compare: RwSignal<bool>,
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
    let loss = goal_loss();
    // The loss the backward stages follow: the goal's, or the pattern loss's when the goal
    // cannot be used.
    let kind = Memo::new(move |_| loss.get().unwrap_or(LossKind::Pattern));
    let ui = ui_context();
    // From the outline alone: an edit of the numbers leaves them as they are, and the formula
    // is not laid out again.
    let outline = trace_outline(trace);
    let shapes = Memo::new(move |_| {
        let s = stage.get();
        if s.is_backward() {
            let k = kind.get();
            outline.with(|o| back_shape_text(s, o, k))
        } else if s == Stage::Tiles {
            let block = run_context().and_then(|r| r.tile.get());
            outline.with(|o| tiles_shapes(o, block))
        } else {
            outline.with(|o| shape_text(s, o))
        }
    });
    let title = Memo::new(move |_| {
        let s = stage.get();
        outline.with(|o| {
            if s.is_backward() {
                back_title(s, &o.config, o.wiring, kind.get())
            } else {
                stage_title(s, &o.config, o.wiring)
            }
        })
    });
    let formula = Memo::new(move |_| {
        let s = stage.get();
        outline.with(|o| {
            let inner = if s.is_backward() {
                back_formula_mathml(s, &o.config, o.wiring, kind.get())
            } else {
                stage_formula_mathml(s, &o.config, o.wiring)
            };
            // Presenting a product or a gradient at a time, the header gives the equation of
            // the one on show; so does a compact embed, which shows one of Q, K and V at the
            // projection and the split.
            let one_of_q_k_v = ui.one_of_q_k_v(s) && !handout && !compare.get();
            let in_parts = has_parts(s) && !handout && ui.presenting.get();
            // Each head's ∂L/∂Qₕ and ∂L/∂Kₕ on steps of their own: one equation each.
            let halves = !handout
                && ui.presenting.get()
                && in_halves(
                    s,
                    presenter_parts(s, o.config.n_heads, o.wiring, loss.get()),
                );
            let parts = if one_of_q_k_v {
                3
            } else if in_parts {
                presenter_parts(s, o.config.n_heads, o.wiring, loss.get())
            } else if halves {
                2
            } else {
                1
            };
            let alone = (parts > 1).then(|| {
                let part = ui.part_of(s).min(parts - 1);
                match s {
                    Stage::Projection | Stage::SplitHeads => formula_equation(&inner, part),
                    Stage::BackScores => formula_half(&inner, part),
                    _ => BackMatrix::shown_alone(s, o.wiring)
                        .get(part)
                        .and_then(|&m| {
                            back_part_formula_mathml(s, &o.config, o.wiring, kind.get(), m)
                        }),
                }
            });
            let inner = alone.flatten().unwrap_or(inner);
            let mut equations = formula_equations(&inner);
            // Presenting a decoding step, a head's part has the equations up to its weighted
            // sum cₕ and the output's part the output's equation, the last.
            match (handout, decode_part_shown(ui, s)) {
                (false, Some(true)) => equations = equations.split_off(equations.len() - 1),
                (false, Some(false)) => {
                    equations.pop();
                    // The comma that parted it from the one before goes with it.
                    if let Some(before) = equations.last_mut() {
                        if let Some(bare) = before.strip_suffix("<mo>,</mo>") {
                            *before = bare.to_string();
                        }
                    }
                }
                _ => {}
            }
            // Its equations wrap as words do where the formula is wider than the box: paper
            // cannot scroll, and a phone would hide the second equation behind a scroll.
            equations
                .into_iter()
                .map(|e| format!("<math>{e}</math>"))
                .collect::<String>()
        })
    });
    view! {
        <header class="stage-header">
            <div class="stage-heading">
                <p class="stage-kicker">{move || stage_progress(stage.get(), ui.order.get())}</p>
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
    /// The head shown, whose numbers the tiles' and the backward stages' notes name (the
    /// first without one).
    #[prop(optional)]
    head: Option<RwSignal<usize>>,
    /// Shown first (on paper, which step the pictures show).
    #[prop(optional)]
    children: Option<Children>,
) -> impl IntoView {
    let backward = backward_context();
    // A memo: an edit that leaves the note's words as they were rebuilds none of its paragraphs.
    let note = Memo::new(move |_| {
        let s = stage.get();
        if s.is_backward() {
            return backward
                .and_then(|b| {
                    let source = b.goal_source.get();
                    b.pass.with(|p| {
                        let p = p.as_ref().ok()?;
                        // The stage shows the reason it is not reached in place of its
                        // pictures: the note would only repeat it.
                        if unreached_text(s, p.loss_kind(), source).is_some() {
                            return None;
                        }
                        // The numbers of the head on show where one is.
                        let h = head.map_or(0, |h| h.get());
                        trace.with(|t| back_note_of_head(s, t, p, source, h))
                    })
                })
                .unwrap_or_default();
        }
        if matches!(s, Stage::Decode | Stage::Tiles) {
            return run_note(s, trace, head.map_or(0, |h| h.get())).unwrap_or_default();
        }
        trace.with(|t| stage_note(s, t)).unwrap_or_default()
    });
    let explanation = move || {
        let ui = ui_context();
        let text = Signal::derive(move || stage_explanation_in(stage.get(), ui.order.get()));
        view! { <Paragraphs text class="explanation" testid="explanation" /> }
    };
    // A compact embed sits in a blog post whose text explains; the stage's prose is folded.
    let folded = crate::components::context::ui_context().compact;
    view! {
        <section class="stage-notes" aria-label="About this stage">
            {children.map(|c| c())}
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

/// The note under a decoding step or the tiles, for the row, head and block on screen.
fn run_note(stage: Stage, trace: Memo<Trace>, head: usize) -> Option<String> {
    let run = run_context()?;
    let seq_len = trace.with(|t| t.seq_len());
    let paragraphs = if stage == Stage::Decode {
        run.decode.with(|d| {
            let d = d.as_ref()?.as_ref().ok()?;
            let row = run.decoded_row(d.prefill, seq_len);
            Some(trace.with(|t| decode_note(t, d, row)))
        })?
    } else {
        let block = run.tile.get()?;
        let row = run.tiled_row(seq_len);
        let n = trace.with(|t| t.heads.len());
        let h = head.min(n.saturating_sub(1));
        trace.with(|t| {
            let tiles =
                crate::attention::row_tiles(t.heads.get(h)?, t.config.temperature, block, row)?;
            Some(tiles_note(t, h, row, block, &tiles))
        })?
    };
    Some(paragraphs.join("\n\n"))
}
