//! The stages of multi-head attention and of the transformer block around it, shared by the
//! trace, the stepper, the plots and the explanations, so the names a learner sees are the names
//! in the code. What a learner reads about each stage is in `crate::words`.
//!
//! Which stages are shown, and in which order, depends on the block: [`Stage::sequence`].

use super::choices::Norm;

/// One step of multi-head self-attention, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// The input matrix X: one embedding row per token, plus positions.
    Input,
    /// Q, K and V: X times the three projection matrices.
    Projection,
    /// Q, K and V cut into one slice of columns per head.
    SplitHeads,
    /// Each head's Qₕ and Kₕ turned by rotary positions (only with them).
    Rotary,
    /// Raw scores: every query dotted with every key.
    Scores,
    /// Scores divided by √d_k.
    Scale,
    /// Future keys hidden with −∞ (when the causal mask is on).
    Mask,
    /// Each row turned into probabilities.
    Softmax,
    /// Each token's new vector: a weighted average of value rows.
    WeightedSum,
    /// The heads' results placed side by side.
    Concat,
    /// The concatenation times W_o: the layer's output.
    OutputProjection,
    /// R₁ = X + Y: the first residual sum.
    Residual1,
    /// N₁: the first LayerNorm (of R₁ after attention, or of X before it in pre-norm).
    Norm1,
    /// H = N·W₁ + b₁: the feed-forward network's hidden layer.
    Hidden,
    /// G = act(H): the non-linearity.
    Activation,
    /// F = G·W₂ + b₂: back to d_model.
    FeedForward,
    /// R₂: the second residual sum.
    Residual2,
    /// N₂: the second LayerNorm.
    Norm2,
    /// Backward: the loss, and the gradient of what it reads (∂L/∂A or ∂L/∂Y).
    BackLoss,
    /// Backward through the output projection: ∂L/∂W_o and ∂L/∂C (the task loss only).
    BackOutput,
    /// Backward through the weighted sum: ∂L/∂Aₕ and ∂L/∂Vₕ (the task loss only).
    BackWeightedSum,
    /// Backward through the softmax and the temperature: ∂L/∂Mₕ.
    BackSoftmax,
    /// Backward through the mask and the scale: ∂L/∂Sₕ.
    BackScale,
    /// Backward through the scores: ∂L/∂Qₕ and ∂L/∂Kₕ.
    BackScores,
    /// Backward through the projections: ∂L/∂W_q, ∂L/∂W_k, ∂L/∂W_v.
    BackProjection,
    /// Backward to the input: ∂L/∂X and ∂L/∂E.
    BackInput,
    /// One query row's softmax and weighted sum computed over blocks of keys, as
    /// FlashAttention does (only when asked for).
    Tiles,
    /// Decoding one token at a time from a KV cache (only when asked for, under the causal
    /// mask and without a source sentence).
    Decode,
}

/// The stages of attention alone.
const ATTENTION: [Stage; 10] = [
    Stage::Input,
    Stage::Projection,
    Stage::SplitHeads,
    Stage::Scores,
    Stage::Scale,
    Stage::Mask,
    Stage::Softmax,
    Stage::WeightedSum,
    Stage::Concat,
    Stage::OutputProjection,
];

/// The stages of the block alone, after attention's.
const BLOCK_ONLY: [Stage; 7] = [
    Stage::Residual1,
    Stage::Norm1,
    Stage::Hidden,
    Stage::Activation,
    Stage::FeedForward,
    Stage::Residual2,
    Stage::Norm2,
];

/// The backward stages, in the order the gradient flows: from the loss back to the weights and
/// the embeddings. They follow the forward stages whatever the block.
const BACKWARD: [Stage; 8] = [
    Stage::BackLoss,
    Stage::BackOutput,
    Stage::BackWeightedSum,
    Stage::BackSoftmax,
    Stage::BackScale,
    Stage::BackScores,
    Stage::BackProjection,
    Stage::BackInput,
];

/// A post-norm block: attention, then add & norm, feed-forward, add & norm.
const POST_NORM: [Stage; 17] = join(&ATTENTION, &BLOCK_ONLY, &[]);

/// A pre-norm block: norm, attention, add; norm, feed-forward, add.
const PRE_NORM: [Stage; 17] = join(
    &[Stage::Input, Stage::Norm1],
    ATTENTION.split_at(1).1,
    &[
        Stage::Residual1,
        Stage::Norm2,
        Stage::Hidden,
        Stage::Activation,
        Stage::FeedForward,
        Stage::Residual2,
    ],
);

/// Every stage in the order they came to the app: see [`Stage::index`].
const STABLE: [Stage; 28] = join(
    &POST_NORM,
    &BACKWARD,
    &[Stage::Rotary, Stage::Tiles, Stage::Decode],
);

/// What decides which stages are shown: the block's norm placement, rotary positions, and the
/// two ways of running attention a learner may ask to see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Order {
    /// Where the block's norms sit; `None` without a block.
    pub block: Option<Norm>,
    /// Rotary positions add the turn after the split.
    pub rope: bool,
    /// The tiled softmax follows the weighted sum.
    pub tiles: bool,
    /// Decoding from a KV cache follows the output projection.
    pub decode: bool,
    /// The block's norms are RMSNorm: it names its norm stages (it shows no other stage).
    pub rms: bool,
    /// The block's activation is SwiGLU, whose stage shows the gate's weights too (a step of
    /// their own where the stage is shown in steps).
    pub gated: bool,
}

impl From<Option<Norm>> for Order {
    fn from(block: Option<Norm>) -> Self {
        Self {
            block,
            ..Self::default()
        }
    }
}

/// `a`, `b` and `c` one after the other; their lengths must add up to `N` (checked when the
/// crate compiles).
const fn join<const N: usize>(a: &[Stage], b: &[Stage], c: &[Stage]) -> [Stage; N] {
    assert!(a.len() + b.len() + c.len() == N);
    let mut out = [Stage::Input; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() {
            a[i]
        } else if i < a.len() + b.len() {
            b[i - a.len()]
        } else {
            c[i - a.len() - b.len()]
        };
        i += 1;
    }
    out
}

impl Stage {
    /// The stages of attention alone, in order.
    pub const ALL: [Stage; 10] = ATTENTION;

    /// Every stage there is: attention's, the block's, the backward ones, then the turn, the
    /// tiles and decoding.
    pub const EVERY: [Stage; 28] = STABLE;

    /// The backward stages, from the loss back to the embeddings.
    pub const BACKWARD: [Stage; 8] = BACKWARD;

    /// The forward stages shown, in order: attention alone without a block, else the block's
    /// stages in the order of its norm. With rotary positions the turn follows the split; the
    /// tiles follow the weighted sum, and decoding follows the output projection.
    pub fn sequence(order: impl Into<Order>) -> Vec<Stage> {
        let order = order.into();
        let base: &[Stage] = match order.block {
            None => &ATTENTION,
            Some(Norm::Post) => &POST_NORM,
            Some(Norm::Pre) => &PRE_NORM,
        };
        let mut out = Vec::with_capacity(base.len() + 3);
        for &s in base {
            out.push(s);
            match s {
                Stage::SplitHeads if order.rope => out.push(Stage::Rotary),
                Stage::WeightedSum if order.tiles => out.push(Stage::Tiles),
                Stage::OutputProjection if order.decode => out.push(Stage::Decode),
                _ => {}
            }
        }
        out
    }

    /// Every stage the stepper walks, in order: the forward stages of `sequence(order)`, then
    /// the backward ones.
    pub fn walk(order: impl Into<Order>) -> impl Iterator<Item = Stage> {
        Self::sequence(order).into_iter().chain(BACKWARD)
    }

    /// Position in [`Stage::walk`], from 0; `None` when the stage is not shown.
    pub fn position(self, order: impl Into<Order>) -> Option<usize> {
        Self::walk(order).position(|s| s == self)
    }

    /// The next stage shown, if any: after the last forward stage, the first backward one.
    pub fn next_in(self, order: impl Into<Order>) -> Option<Stage> {
        let order = order.into();
        Self::walk(order).nth(self.position(order)? + 1)
    }

    /// The previous stage shown, if any.
    pub fn prev_in(self, order: impl Into<Order>) -> Option<Stage> {
        let order = order.into();
        Self::walk(order).nth(self.position(order)?.checked_sub(1)?)
    }

    /// Whether the stage belongs to the block rather than to attention.
    pub fn is_block(self) -> bool {
        BLOCK_ONLY.contains(&self)
    }

    /// Whether the stage walks the gradient back rather than the numbers forward.
    pub fn is_backward(self) -> bool {
        BACKWARD.contains(&self)
    }

    /// Position among the backward stages, from 0.
    pub fn backward_position(self) -> Option<usize> {
        BACKWARD.iter().position(|s| *s == self)
    }

    /// A fixed number per stage, from 0, for maps and seeds: the stages in the order they came
    /// to the app, the rotary stage last, so a stage added later moves no other stage's number.
    pub fn index(self) -> usize {
        STABLE.iter().position(|s| *s == self).unwrap_or(0)
    }

    /// The stage at `index` of [`Stage::ALL`], if there is one.
    pub fn from_index(index: usize) -> Option<Stage> {
        Self::ALL.get(index).copied()
    }

    /// The next stage of attention alone, if any.
    pub fn next(self) -> Option<Stage> {
        self.next_in(None)
    }

    /// The previous stage of attention alone, if any.
    pub fn prev(self) -> Option<Stage> {
        self.prev_in(None)
    }

    /// A short machine name, used in URLs and files.
    pub fn key(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::Projection => "projection",
            Self::SplitHeads => "split",
            Self::Rotary => "rotary",
            Self::Scores => "scores",
            Self::Scale => "scale",
            Self::Mask => "mask",
            Self::Softmax => "softmax",
            Self::WeightedSum => "weighted-sum",
            Self::Concat => "concat",
            Self::OutputProjection => "output",
            Self::Residual1 => "residual-1",
            Self::Norm1 => "norm-1",
            Self::Hidden => "ffn-hidden",
            Self::Activation => "activation",
            Self::FeedForward => "ffn-out",
            Self::Residual2 => "residual-2",
            Self::Norm2 => "norm-2",
            Self::BackLoss => "back-loss",
            Self::BackOutput => "back-output",
            Self::BackWeightedSum => "back-weighted-sum",
            Self::BackSoftmax => "back-softmax",
            Self::BackScale => "back-scale",
            Self::BackScores => "back-scores",
            Self::BackProjection => "back-projection",
            Self::BackInput => "back-input",
            Self::Tiles => "tiles",
            Self::Decode => "decode",
        }
    }

    /// The stage whose key is `key`.
    pub fn from_key(key: &str) -> Option<Stage> {
        Self::EVERY.into_iter().find(|s| s.key() == key)
    }

    /// Whether the stage has one result per head under the goal's `loss`: the loss itself is
    /// per head under the pattern loss (each head's ∂L/∂Aₕ), one ∂L/∂Y under the task loss.
    pub fn is_per_head_under(self, loss: Option<super::LossKind>) -> bool {
        self.is_per_head() || (self == Self::BackLoss && loss == Some(super::LossKind::Pattern))
    }

    /// Whether the stage has one result per head.
    pub fn is_per_head(self) -> bool {
        matches!(
            self,
            Self::SplitHeads
                | Self::Rotary
                | Self::Scores
                | Self::Scale
                | Self::Mask
                | Self::Softmax
                | Self::WeightedSum
                | Self::Tiles
                | Self::Decode
                | Self::BackWeightedSum
                | Self::BackSoftmax
                | Self::BackScale
                | Self::BackScores
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_in_order_and_walkable_both_ways() {
        assert_eq!(Stage::ALL.len(), 10);
        let mut stage = Stage::Input;
        let mut walked = vec![stage];
        while let Some(next) = stage.next() {
            assert_eq!(next.prev(), Some(stage));
            stage = next;
            walked.push(stage);
        }
        assert_eq!(walked[..10], Stage::ALL);
        assert_eq!(walked[10..], Stage::BACKWARD);
        assert_eq!(Stage::Input.prev(), None);
    }

    #[test]
    fn both_norms_show_every_block_stage_once_and_pre_norm_normalises_first() {
        for norm in [Norm::Post, Norm::Pre] {
            let seq = Stage::sequence(Some(norm));
            let mut sorted = seq.to_vec();
            sorted.sort();
            let mut forward: Vec<Stage> = Stage::EVERY
                .into_iter()
                .filter(|s| !s.is_backward())
                .filter(|s| ![Stage::Rotary, Stage::Tiles, Stage::Decode].contains(s))
                .collect();
            forward.sort();
            assert_eq!(sorted, forward);
            let order = Order {
                block: Some(norm),
                rope: true,
                ..Order::default()
            };
            let with_turn = Stage::sequence(order);
            assert_eq!(with_turn.len(), seq.len() + 1);
            let split = with_turn
                .iter()
                .position(|s| *s == Stage::SplitHeads)
                .unwrap();
            assert_eq!(with_turn[split + 1], Stage::Rotary);
            assert_eq!(Stage::Rotary.next_in(order), Some(Stage::Scores));
            let mut stage = seq[0];
            while let Some(next) = stage.next_in(Some(norm)) {
                assert_eq!(next.prev_in(Some(norm)), Some(stage));
                stage = next;
            }
            assert_eq!(stage, Stage::BackInput);
            assert_eq!(
                seq.last().unwrap().next_in(Some(norm)),
                Some(Stage::BackLoss)
            );
        }
        assert_eq!(Stage::Input.next_in(Some(Norm::Pre)), Some(Stage::Norm1));
        assert_eq!(
            Stage::sequence(Some(Norm::Post)).last(),
            Some(&Stage::Norm2)
        );
        assert_eq!(
            Stage::sequence(Some(Norm::Pre)).last(),
            Some(&Stage::Residual2)
        );
        assert_eq!(Stage::OutputProjection.next(), Some(Stage::BackLoss));
        assert_eq!(Stage::BackInput.next(), None);
        assert_eq!(Stage::BackLoss.prev(), Some(Stage::OutputProjection));
        assert_eq!(Stage::Norm1.position(None), None);
        assert!(Stage::BACKWARD
            .iter()
            .all(|s| s.is_backward() && !s.is_block()));
    }

    #[test]
    fn the_tiles_follow_the_weighted_sum_and_decoding_the_output_projection() {
        for block in [None, Some(Norm::Post), Some(Norm::Pre)] {
            let order = Order {
                block,
                rope: true,
                tiles: true,
                decode: true,
                rms: false,
                gated: false,
            };
            let seq = Stage::sequence(order);
            assert_eq!(seq.len(), Stage::sequence(block).len() + 3);
            assert_eq!(Stage::WeightedSum.next_in(order), Some(Stage::Tiles));
            assert_eq!(Stage::Tiles.next_in(order), Some(Stage::Concat));
            assert_eq!(Stage::OutputProjection.next_in(order), Some(Stage::Decode));
            assert_eq!(Stage::Decode.prev_in(order), Some(Stage::OutputProjection));
            assert_eq!(Stage::Tiles.position(block), None);
            assert_eq!(Stage::Decode.position(block), None);
        }
        // Numbers given earlier stay where they were.
        assert_eq!(Stage::Rotary.index(), 25);
        assert_eq!((Stage::Tiles.index(), Stage::Decode.index()), (26, 27));
    }

    #[test]
    fn keys_round_trip() {
        for stage in Stage::EVERY {
            assert_eq!(Stage::from_key(stage.key()), Some(stage));
        }
        assert_eq!(Stage::from_key("Softmax"), None);
    }
}
