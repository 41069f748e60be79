//! What each input of the forward pass changes: a learner's edit of one [`Parameter`] changes
//! every matrix that depends on it, and so every [`Stage`] that shows such a matrix.
//!
//! The dependencies are read off the formulas in the module doc of `crate::attention`:
//! X = E + P, Q = X·W_q, Qₕ = Q's head columns, Sₕ = Qₕ·Kₕᵀ, Zₕ = Sₕ / √d_k,
//! Mₕ = mask(Zₕ), Aₕ = softmax(Mₕ / T), Cₕ = Aₕ·Vₕ, C = [C₁ | …], Y = C·W_o.

use super::block::{BlockParam, Norm};
use super::config::Wiring;
use super::matrix_id::{BlockMatrix, HeadMatrix, MatrixId};
use super::stage::Stage;
use super::weights::WeightName;

/// One input of the forward pass that a learner can change: a matrix or a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Parameter {
    /// The sentence: the tokens, and so the number of rows of every matrix.
    Sentence,
    /// d_model, the width of every token vector (it resizes every matrix).
    DModel,
    /// The token embeddings E.
    Embeddings,
    /// The positional encoding switch, which adds P to E.
    Positional,
    /// A projection matrix.
    Weight(WeightName),
    /// The number of heads, which sets how Q, K and V are cut and d_k.
    Heads,
    /// What the scores are divided by.
    Scale,
    /// The causal mask switch.
    Causal,
    /// The softmax temperature T.
    Temperature,
    /// The source sentence of cross-attention (its tokens and so the number of keys).
    Source,
    /// The source's token embeddings E_src.
    SourceEmbeddings,
    /// A parameter of the block (W₁, b₁, …, γ₂, β₂).
    Block(BlockParam),
    /// The block's hidden width d_ff.
    DFf,
    /// The block's activation.
    Activation,
    /// Rotary positions: on or off, θ and the pairing.
    Rope,
    /// The number of key/value heads.
    KvHeads,
    /// The sliding window.
    Window,
}

/// One matrix of each kind, in stage order; a head stands for every head, since each head
/// depends on the parameters in the same way.
const REPRESENTATIVES: [MatrixId; 34] = [
    MatrixId::Embeddings,
    MatrixId::Positional,
    MatrixId::X,
    MatrixId::SourceEmbeddings,
    MatrixId::SourcePositional,
    MatrixId::SourceX,
    MatrixId::Weight(WeightName::Q),
    MatrixId::Weight(WeightName::K),
    MatrixId::Weight(WeightName::V),
    MatrixId::Q,
    MatrixId::K,
    MatrixId::V,
    MatrixId::Head(0, HeadMatrix::Q),
    MatrixId::Head(0, HeadMatrix::K),
    MatrixId::Head(0, HeadMatrix::V),
    MatrixId::Head(0, HeadMatrix::KTransposed),
    MatrixId::Head(0, HeadMatrix::QRope),
    MatrixId::Head(0, HeadMatrix::KRope),
    MatrixId::Head(0, HeadMatrix::KRopeTransposed),
    MatrixId::Head(0, HeadMatrix::Scores),
    MatrixId::Head(0, HeadMatrix::Scaled),
    MatrixId::Head(0, HeadMatrix::Masked),
    MatrixId::Head(0, HeadMatrix::Weights),
    MatrixId::Head(0, HeadMatrix::Context),
    MatrixId::Concat,
    MatrixId::Output,
    MatrixId::Block(BlockMatrix::Sum1),
    MatrixId::Block(BlockMatrix::Norm1),
    MatrixId::Block(BlockMatrix::Hidden),
    MatrixId::Block(BlockMatrix::Activated),
    MatrixId::Block(BlockMatrix::Ffn),
    MatrixId::Block(BlockMatrix::Sum2),
    MatrixId::Block(BlockMatrix::Norm2),
    MatrixId::BlockParam(BlockParam::W1),
];

impl Parameter {
    /// Every stage shown with `wiring` whose matrices change when this parameter does, in
    /// order.
    pub fn changed_stages(self, wiring: Wiring) -> Vec<Stage> {
        Stage::sequence(wiring.order())
            .iter()
            .copied()
            .filter(|s| s.is_changed_by(self, wiring))
            .collect()
    }

    /// The first stage whose numbers it changes: where it first matters.
    pub fn first_stage(self, wiring: Wiring) -> Stage {
        let seq = Stage::sequence(wiring.order());
        seq.iter()
            .copied()
            .find(|s| s.is_changed_by(self, wiring))
            .or_else(|| seq.last().copied())
            .unwrap_or(Stage::OutputProjection)
    }

    /// The first stage after `stage` that it changes, if any.
    pub fn next_stage_after(self, stage: Stage, wiring: Wiring) -> Option<Stage> {
        let seq = Stage::sequence(wiring.order());
        seq.iter()
            .copied()
            .skip(stage.position(wiring.order())? + 1)
            .find(|s| s.is_changed_by(self, wiring))
    }
}

impl Stage {
    /// Whether a matrix this stage computes or reads changes with `parameter`.
    pub fn is_changed_by(self, parameter: Parameter, wiring: Wiring) -> bool {
        REPRESENTATIVES
            .iter()
            .filter(|m| m.stage() == self || self.reads(**m, wiring))
            .any(|m| m.depends_on(parameter, wiring))
    }

    /// Whether the stage's formula reads `matrix`, computed at an earlier stage.
    fn reads(self, matrix: MatrixId, wiring: Wiring) -> bool {
        use BlockMatrix as B;
        use HeadMatrix as H;
        let pre = wiring.block == Some(Norm::Pre);
        match self {
            // The backward stages read a goal besides the trace: the stepper does not mark them.
            Self::BackLoss
            | Self::BackOutput
            | Self::BackWeightedSum
            | Self::BackSoftmax
            | Self::BackScale
            | Self::BackScores
            | Self::BackProjection
            | Self::BackInput => false,
            Self::Input => false,
            Self::Projection => matrix == query_input(wiring) || matrix == key_input(wiring),
            Self::SplitHeads => matches!(matrix, MatrixId::Q | MatrixId::K | MatrixId::V),
            Self::Rotary => matches!(matrix, MatrixId::Head(0, H::Q | H::K)),
            Self::Scores if wiring.rope => matches!(matrix, MatrixId::Head(0, H::QRope)),
            Self::Scores => matrix == MatrixId::Head(0, H::Q),
            Self::Scale => matrix == MatrixId::Head(0, H::Scores),
            Self::Mask => matrix == MatrixId::Head(0, H::Scaled),
            Self::Softmax => matrix == MatrixId::Head(0, H::Masked),
            Self::WeightedSum => {
                matches!(
                    matrix,
                    MatrixId::Head(0, H::Weights) | MatrixId::Head(0, H::V)
                )
            }
            Self::Tiles => {
                matches!(
                    matrix,
                    MatrixId::Head(0, H::Masked) | MatrixId::Head(0, H::V)
                )
            }
            Self::Decode => matrix == MatrixId::Output,
            Self::Concat => matrix == MatrixId::Head(0, H::Context),
            Self::OutputProjection => matrix == MatrixId::Concat,
            Self::Residual1 => matches!(matrix, MatrixId::X | MatrixId::Output),
            Self::Norm1 if pre => matrix == MatrixId::X,
            Self::Norm1 => matrix == MatrixId::Block(B::Sum1),
            Self::Norm2 if pre => matrix == MatrixId::Block(B::Sum1),
            Self::Norm2 => matrix == MatrixId::Block(B::Sum2),
            Self::Hidden => matrix == ffn_input(wiring),
            Self::Activation => matrix == MatrixId::Block(B::Hidden),
            Self::FeedForward => matrix == MatrixId::Block(B::Activated),
            Self::Residual2 => {
                matrix == MatrixId::Block(B::Ffn) || matrix == residual_2_input(wiring)
            }
        }
    }
}

/// What the queries read: X, or N₁ in a pre-norm block.
pub fn query_input(wiring: Wiring) -> MatrixId {
    if wiring.block == Some(Norm::Pre) {
        MatrixId::Block(BlockMatrix::Norm1)
    } else {
        MatrixId::X
    }
}

/// What keys and values read: X_src with a source, else the queries' input.
pub fn key_input(wiring: Wiring) -> MatrixId {
    if wiring.cross {
        MatrixId::SourceX
    } else {
        query_input(wiring)
    }
}

/// What the feed-forward network reads: N₁ (post-norm) or N₂ (pre-norm).
fn ffn_input(wiring: Wiring) -> MatrixId {
    if wiring.block == Some(Norm::Pre) {
        MatrixId::Block(BlockMatrix::Norm2)
    } else {
        MatrixId::Block(BlockMatrix::Norm1)
    }
}

/// What F is added to: N₁ (post-norm) or R₁ (pre-norm).
fn residual_2_input(wiring: Wiring) -> MatrixId {
    if wiring.block == Some(Norm::Pre) {
        MatrixId::Block(BlockMatrix::Sum1)
    } else {
        MatrixId::Block(BlockMatrix::Norm1)
    }
}

impl MatrixId {
    /// Whether its values change when `parameter` does, with the source and block of
    /// `wiring`.
    pub fn depends_on(&self, parameter: Parameter, wiring: Wiring) -> bool {
        use BlockMatrix as B;
        use BlockParam as BP;
        use HeadMatrix as H;
        use Parameter as P;
        let on = |m: MatrixId| m.depends_on(parameter, wiring);
        let pre = wiring.block == Some(Norm::Pre);
        // Every matrix has as many rows or columns as d_model.
        if matches!(parameter, P::DModel) {
            return true;
        }
        let is = |p: P| parameter == p;
        match *self {
            // A gradient depends on every number of the forward pass.
            Self::Back(_) => true,
            Self::Embeddings => is(P::Embeddings) || is(P::Sentence),
            Self::Positional => is(P::Positional) || is(P::Sentence),
            Self::X => on(Self::Embeddings) || on(Self::Positional),
            Self::SourceEmbeddings => is(P::SourceEmbeddings) || is(P::Source),
            Self::SourcePositional => is(P::Positional) || is(P::Source),
            Self::SourceX => on(Self::SourceEmbeddings) || on(Self::SourcePositional),
            Self::Weight(w) => is(P::Weight(w)),
            Self::BlockParam(p) => is(P::Block(p)) || (p.is_ffn() && is(P::DFf)),
            Self::Q => on(query_input(wiring)) || is(P::Weight(WeightName::Q)),
            Self::K => on(key_input(wiring)) || is(P::Weight(WeightName::K)) || is(P::KvHeads),
            Self::V => on(key_input(wiring)) || is(P::Weight(WeightName::V)) || is(P::KvHeads),
            Self::Head(h, m) => {
                let head = |m: H| on(Self::Head(h, m));
                match m {
                    H::Q => on(Self::Q) || is(P::Heads),
                    H::K | H::KTransposed => on(Self::K) || is(P::Heads) || is(P::KvHeads),
                    H::V => on(Self::V) || is(P::Heads) || is(P::KvHeads),
                    H::QRope => head(H::Q) || is(P::Rope),
                    H::KRope => head(H::K) || is(P::Rope),
                    H::KRopeTransposed => head(H::KRope),
                    // The number of columns is the number of queries' tokens.
                    H::Scores => head(H::QRope) || head(H::KRope),
                    H::Scaled => head(H::Scores) || is(P::Scale),
                    H::Masked => head(H::Scaled) || is(P::Causal) || is(P::Window),
                    H::Weights => head(H::Masked) || is(P::Temperature),
                    H::Context => head(H::Weights) || head(H::V),
                }
            }
            Self::Concat => on(Self::Head(0, H::Context)),
            Self::Output => on(Self::Concat) || is(P::Weight(WeightName::O)),
            Self::Block(b) => match b {
                B::Sum1 => on(Self::X) || on(Self::Output),
                B::Norm1 if pre => on(Self::X) || on_ln(parameter, 1),
                B::Norm1 => on(Self::Block(B::Sum1)) || on_ln(parameter, 1),
                B::Norm2 if pre => on(Self::Block(B::Sum1)) || on_ln(parameter, 2),
                B::Norm2 => on(Self::Block(B::Sum2)) || on_ln(parameter, 2),
                B::Hidden => {
                    on(ffn_input(wiring))
                        || is(P::Block(BP::W1))
                        || is(P::Block(BP::B1))
                        || is(P::DFf)
                }
                B::Activated => on(Self::Block(B::Hidden)) || is(P::Activation),
                B::Ffn => {
                    on(Self::Block(B::Activated)) || is(P::Block(BP::W2)) || is(P::Block(BP::B2))
                }
                B::Sum2 => on(Self::Block(B::Ffn)) || on(residual_2_input(wiring)),
            },
        }
    }
}

/// Whether `parameter` is γ or β of LayerNorm `n`.
fn on_ln(parameter: Parameter, n: usize) -> bool {
    use BlockParam as BP;
    matches!(
        (parameter, n),
        (Parameter::Block(BP::Ln1Gamma | BP::Ln1Beta), 1)
            | (Parameter::Block(BP::Ln2Gamma | BP::Ln2Beta), 2)
    )
}

impl BlockParam {
    /// Whether it belongs to the feed-forward network (its shape follows d_ff).
    pub fn is_ffn(self) -> bool {
        matches!(self, Self::W1 | Self::B1 | Self::W2 | Self::B2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Stage::*;

    const ALONE: Wiring = Wiring {
        cross: false,
        block: None,
        activation: crate::attention::Activation::Relu,
        rope: false,
        norm_type: crate::attention::NormType::LayerNorm,
    };

    fn numbers(p: Parameter) -> Vec<usize> {
        p.changed_stages(ALONE)
            .iter()
            .map(|s| s.position(ALONE.order()).unwrap_or(0) + 1)
            .collect()
    }

    fn block(norm: Norm, cross: bool) -> Wiring {
        Wiring {
            cross,
            block: Some(norm),
            ..ALONE
        }
    }

    #[test]
    fn block_parameters_first_matter_where_the_block_uses_them() {
        let post = block(Norm::Post, false);
        let pre = block(Norm::Pre, false);
        let w1 = Parameter::Block(BlockParam::W1);
        assert_eq!(w1.first_stage(post), Hidden);
        assert_eq!(
            w1.changed_stages(post),
            [Hidden, Activation, FeedForward, Residual2, Norm2]
        );
        // Pre-norm: γ₁ scales what attention reads, so it changes every stage after the input.
        let g1 = Parameter::Block(BlockParam::Ln1Gamma);
        assert_eq!(g1.first_stage(pre), Norm1);
        assert_eq!(g1.changed_stages(pre).len(), 16);
        // Post-norm: γ₁ acts after attention.
        assert_eq!(g1.first_stage(post), Norm1);
        assert!(!Softmax.is_changed_by(g1, post));
        // The second norm's parameters come last in post-norm, before the network in pre-norm.
        let b2 = Parameter::Block(BlockParam::Ln2Beta);
        assert_eq!(b2.changed_stages(post), [Norm2]);
        assert_eq!(
            b2.changed_stages(pre),
            [Norm2, Hidden, Activation, FeedForward, Residual2]
        );
        assert_eq!(Parameter::Activation.first_stage(post), Activation);
        assert!(!Residual1.is_changed_by(Parameter::Activation, post));
    }

    #[test]
    fn the_source_changes_keys_and_values_but_not_the_queries() {
        let cross = Wiring {
            cross: true,
            ..ALONE
        };
        assert!(!MatrixId::Q.depends_on(Parameter::Source, cross));
        assert!(MatrixId::K.depends_on(Parameter::SourceEmbeddings, cross));
        assert!(!MatrixId::K.depends_on(Parameter::Embeddings, cross));
        assert_eq!(Parameter::SourceEmbeddings.first_stage(cross), Input);
        assert_eq!(
            Parameter::Weight(WeightName::V).changed_stages(cross),
            [
                Projection,
                SplitHeads,
                WeightedSum,
                Concat,
                OutputProjection
            ]
        );
        // In a pre-norm block the source's keys still skip N₁.
        assert!(!MatrixId::K.depends_on(
            Parameter::Block(BlockParam::Ln1Gamma),
            block(Norm::Pre, true)
        ));
        assert!(MatrixId::Q.depends_on(
            Parameter::Block(BlockParam::Ln1Gamma),
            block(Norm::Pre, true)
        ));
    }

    #[test]
    fn each_projection_first_matters_where_it_is_multiplied() {
        for w in [WeightName::Q, WeightName::K, WeightName::V] {
            assert_eq!(Parameter::Weight(w).first_stage(ALONE), Projection);
        }
        assert_eq!(
            Parameter::Weight(WeightName::O).first_stage(ALONE),
            OutputProjection
        );
    }

    #[test]
    fn queries_and_keys_change_every_stage_from_the_projections_on() {
        for w in [WeightName::Q, WeightName::K] {
            assert_eq!(numbers(Parameter::Weight(w)), [2, 3, 4, 5, 6, 7, 8, 9, 10]);
        }
    }

    #[test]
    fn values_skip_the_scores_and_the_softmax() {
        // V is split with Q and K, then waits until Cₕ = Aₕ·Vₕ.
        assert_eq!(numbers(Parameter::Weight(WeightName::V)), [2, 3, 8, 9, 10]);
        assert!(!Softmax.is_changed_by(Parameter::Weight(WeightName::V), ALONE));
    }

    #[test]
    fn w_o_changes_only_the_output() {
        assert_eq!(numbers(Parameter::Weight(WeightName::O)), [10]);
    }

    #[test]
    fn settings_first_matter_where_their_formula_uses_them() {
        // A = softmax(M / T): the temperature acts in the softmax, not in the scaling.
        assert_eq!(Parameter::Temperature.first_stage(ALONE), Softmax);
        assert_eq!(numbers(Parameter::Temperature), [7, 8, 9, 10]);
        assert_eq!(Parameter::Causal.first_stage(ALONE), Mask);
        assert_eq!(numbers(Parameter::Causal), [6, 7, 8, 9, 10]);
        assert_eq!(Parameter::Scale.first_stage(ALONE), Scale);
        assert_eq!(Parameter::Heads.first_stage(ALONE), SplitHeads);
        assert_eq!(numbers(Parameter::Heads), [3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(Parameter::Positional.first_stage(ALONE), Input);
    }

    #[test]
    fn inputs_change_every_stage() {
        for p in [
            Parameter::Embeddings,
            Parameter::Positional,
            Parameter::Sentence,
            Parameter::DModel,
        ] {
            assert_eq!(p.changed_stages(ALONE), Stage::ALL, "{p:?}");
        }
    }

    #[test]
    fn the_next_stage_after_one_it_skips_is_where_it_matters_again() {
        let v = Parameter::Weight(WeightName::V);
        assert_eq!(v.next_stage_after(Input, ALONE), Some(Projection));
        assert_eq!(v.next_stage_after(Scores, ALONE), Some(WeightedSum));
        assert_eq!(v.next_stage_after(OutputProjection, ALONE), None);
    }

    #[test]
    fn the_weights_themselves_do_not_change_with_the_sentence() {
        assert!(!MatrixId::Weight(WeightName::Q).depends_on(Parameter::Sentence, ALONE));
        assert!(MatrixId::Weight(WeightName::Q).depends_on(Parameter::DModel, ALONE));
        assert!(MatrixId::Head(3, HeadMatrix::Context).depends_on(Parameter::Sentence, ALONE));
    }
}
