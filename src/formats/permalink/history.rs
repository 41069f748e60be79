//! How a change of the shared state is recorded in the browser history.

use super::ShareState;
use crate::attention::{toy_embedding, Activation, Block, BlockParam, Norm, WeightName};
use crate::state::{Model, Overrides};

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
///   causal mask, positional encoding, the scaling, cross-attention or its source sentence, the
///   block or its norm, activation or d_ff changes, training's goal or settings change (a
///   menu, a box or a painted cell), or when two or more matrix
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
        || a.config.scale != b.config.scale
        || a.cross != b.cross
        || (b.cross && a.source != b.source)
        || a.block_on != b.block_on
        || (b.block_on && block_shape(&a.block) != block_shape(&b.block))
        || a.training != b.training;
    if structural || changed_numbers(a, b) >= 2 {
        HistoryStep::Push
    } else {
        HistoryStep::Replace
    }
}

/// The block's switches and width: what a learner picks from a menu, not a number they scrub.
fn block_shape(b: &Block) -> (Norm, crate::attention::NormType, Activation, usize) {
    (b.norm, b.norm_type, b.activation, b.w_1.ncols())
}

/// How many matrix entries differ between two models of the same d_model, counting an edited
/// embedding against the toy embedding it replaced.
fn changed_numbers(a: &Model, b: &Model) -> usize {
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
    let embeddings = changed_rows(&a.embedding_overrides, &b.embedding_overrides, d);
    let source = changed_rows(&a.source_overrides, &b.source_overrides, d);
    let same_block = a.block_on && b.block_on && block_shape(&a.block) == block_shape(&b.block);
    let block: usize = if same_block {
        BlockParam::ALL
            .into_iter()
            .map(|p| differ(a.block.get(p).as_slice(), b.block.get(p).as_slice()))
            .sum()
    } else {
        0
    };
    weights + embeddings + block + source
}

/// How many numbers differ between two lists.
fn differ(x: &[f64], y: &[f64]) -> usize {
    x.len().abs_diff(y.len())
        + x.iter()
            .zip(y)
            .filter(|(p, q)| p.to_bits() != q.to_bits())
            .count()
}

/// How many embedding numbers differ between two sets of edited rows, counting an edited row
/// against the toy embedding it replaced.
fn changed_rows(a: &Overrides, b: &Overrides, d_model: usize) -> usize {
    let vector = |m: &Overrides, token: &str| {
        m.get(token)
            .cloned()
            .unwrap_or_else(|| toy_embedding(token, d_model))
    };
    let only_in_b = b.keys().filter(|t| !a.contains_key(*t));
    a.keys()
        .chain(only_in_b)
        .map(|t| differ(&vector(a, t), &vector(b, t)))
        .sum()
}
