//! The head a run trains, beside its loss curve: its attention weights Aₕ and their lines, as
//! TensorFlow Playground shows its network beside the loss, so the pattern is seen to form
//! wherever the stage being read is.

use super::heatmap::PanelData;
use super::{AttentionLines, HeatmapView};
use crate::attention::{HeadMatrix, Matrix, MatrixId, Trace};
use crate::panels::{panel_name, TRAINING_VIEW};
use crate::words::{label, token_labels, WATCHED_HEAD};
use leptos::prelude::*;

/// Aₕ of `head` as the training view draws it.
fn weights_panel(trace: Memo<Trace>, head: usize) -> PanelData {
    let matrix = MatrixId::Head(head, HeadMatrix::Weights);
    PanelData::attention_weights(
        format!("{TRAINING_VIEW}{}", panel_name(matrix)),
        label(matrix),
        Signal::derive(move || {
            trace.with(|t| {
                t.heads
                    .get(head)
                    .map(|h| h.weights.clone())
                    .unwrap_or_else(|| Matrix::zeros(0, 0))
            })
        }),
        // A repeated word by its position, as the stage's own heatmaps name it.
        Signal::derive(move || trace.with(|t| token_labels(&t.tokens))),
        Signal::derive(move || trace.with(|t| token_labels(t.key_tokens()))),
    )
}

/// The watched head's Aₕ and lines, with a button per head where there are several.
#[component]
pub fn TrainingHead(
    /// The one trace, which the run changes.
    trace: Memo<Trace>,
) -> impl IntoView {
    let watched = RwSignal::new(0usize);
    let n_heads = Memo::new(move |_| trace.with(|t| t.heads.len()));
    view! {
        <div class="training-head" data-testid="training-head">
            <p class="training-head-title">{WATCHED_HEAD}</p>
            {move || (n_heads.get() > 1).then(|| view! {
                <div class="head-picker" role="group" aria-label="Head to watch">
                    {(0..n_heads.get()).map(|h| view! {
                        <button type="button" data-testid=format!("train-watch-{h}")
                            aria-pressed=move || (watched.get() == h).to_string()
                            on:click=move |_| watched.set(h)>
                            {format!("Head {}", h + 1)}
                        </button>
                    }).collect_view()}
                </div>
            })}
            {move || {
                let head = watched.get().min(n_heads.get().saturating_sub(1));
                view! {
                    <HeatmapView data=weights_panel(trace, head) />
                    <AttentionLines trace head prefix=TRAINING_VIEW />
                }
            }}
        </div>
    }
}
