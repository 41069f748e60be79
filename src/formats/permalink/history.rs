//! How a change of the shared state is recorded in the browser history.

use super::ShareState;
use crate::attention::{toy_embedding, WeightName};
use crate::state::Model;

/// What a change of state should do to the browser history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryStep {
    /// A new entry: Back returns to the previous state.
    Push,
    /// Rewrite the current entry: the link stays current without flooding Back.
    Replace,
    /// Nothing changed; leave the history alone.
    Keep,
}

/// How to record the move from `previous` to `next` in the browser history.
///
/// The rule: a step a learner would want Back to undo gets its own entry, a fine adjustment
/// does not.
/// - [`HistoryStep::Push`] when the stage, quiz mode, the sentence, d_model, the number of heads, the
///   causal mask, positional encoding or the scaling changes, or when two or more matrix
///   numbers change at once (loading a preset or a file, filling or resetting a matrix).
/// - [`HistoryStep::Replace`] when at most one matrix number changes (editing a cell, dragging
///   a value) together with any change of temperature, seed, head, question set or highlighted cell: these
///   come in bursts while scrubbing, and one entry per frame would make Back useless.
/// - [`HistoryStep::Keep`] when the two states are equal.
pub fn history_step(previous: &ShareState, next: &ShareState) -> HistoryStep {
    if previous == next {
        return HistoryStep::Keep;
    }
    let (a, b) = (&previous.model, &next.model);
    let structural = previous.stage != next.stage
        || previous.quiz.is_some() != next.quiz.is_some()
        || a.sentence != b.sentence
        || a.config.d_model != b.config.d_model
        || a.config.n_heads != b.config.n_heads
        || a.config.causal != b.config.causal
        || a.config.positional_encoding != b.config.positional_encoding
        || a.config.scale != b.config.scale;
    if structural || changed_numbers(a, b) >= 2 {
        HistoryStep::Push
    } else {
        HistoryStep::Replace
    }
}

/// How many matrix entries differ between two models of the same d_model, counting an edited
/// embedding against the toy embedding it replaced.
fn changed_numbers(a: &Model, b: &Model) -> usize {
    let differ = |x: &[f64], y: &[f64]| {
        x.len().abs_diff(y.len())
            + x.iter()
                .zip(y)
                .filter(|(p, q)| p.to_bits() != q.to_bits())
                .count()
    };
    let weights: usize = WeightName::ALL
        .into_iter()
        .map(|name| {
            differ(
                a.weights.get(name).as_slice(),
                b.weights.get(name).as_slice(),
            )
        })
        .sum();
    let d = b.config.d_model;
    let vector = |m: &Model, token: &str| {
        m.embedding_overrides
            .get(token)
            .cloned()
            .unwrap_or_else(|| toy_embedding(token, d))
    };
    let only_in_b = b
        .embedding_overrides
        .keys()
        .filter(|t| !a.embedding_overrides.contains_key(*t));
    let embeddings: usize = a
        .embedding_overrides
        .keys()
        .chain(only_in_b)
        .map(|t| differ(&vector(a, t), &vector(b, t)))
        .sum();
    weights + embeddings
}
