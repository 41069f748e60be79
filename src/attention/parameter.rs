//! What each input of the forward pass changes: a learner's edit of one [`Parameter`] changes
//! every matrix that depends on it, and so every [`Stage`] that shows such a matrix.
//!
//! The dependencies are read off the formulas in the module doc of `crate::attention`:
//! X = E + P, Q = X·W_q, Qₕ = Q's head columns, Sₕ = Qₕ·Kₕᵀ, Zₕ = Sₕ / √d_k,
//! Mₕ = mask(Zₕ), Aₕ = softmax(Mₕ / T), Cₕ = Aₕ·Vₕ, C = [C₁ | …], Y = C·W_o.

use super::matrix_id::{HeadMatrix, MatrixId};
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
}

/// One matrix of each kind, in stage order; a head stands for every head, since each head
/// depends on the parameters in the same way.
const REPRESENTATIVES: [MatrixId; 20] = [
    MatrixId::Embeddings,
    MatrixId::Positional,
    MatrixId::X,
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
    MatrixId::Head(0, HeadMatrix::Scores),
    MatrixId::Head(0, HeadMatrix::Scaled),
    MatrixId::Head(0, HeadMatrix::Masked),
    MatrixId::Head(0, HeadMatrix::Weights),
    MatrixId::Head(0, HeadMatrix::Context),
    MatrixId::Concat,
    MatrixId::Output,
];

impl Parameter {
    /// Every stage whose matrices change when this parameter does, in order.
    pub fn changed_stages(self) -> Vec<Stage> {
        Stage::ALL
            .into_iter()
            .filter(|s| s.is_changed_by(self))
            .collect()
    }

    /// The first stage whose numbers it changes: where it first matters.
    pub fn first_stage(self) -> Stage {
        // Every parameter reaches the output, so the list is never empty.
        Stage::ALL
            .into_iter()
            .find(|s| s.is_changed_by(self))
            .unwrap_or(Stage::OutputProjection)
    }

    /// The first stage after `stage` that it changes, if any.
    pub fn next_stage_after(self, stage: Stage) -> Option<Stage> {
        Stage::ALL
            .into_iter()
            .skip(stage.index() + 1)
            .find(|s| s.is_changed_by(self))
    }
}

impl Stage {
    /// Whether a matrix this stage computes or reads changes with `parameter`.
    pub fn is_changed_by(self, parameter: Parameter) -> bool {
        REPRESENTATIVES
            .iter()
            .filter(|m| m.stage() == self || self.reads(**m))
            .any(|m| m.depends_on(parameter))
    }

    /// Whether the stage's formula reads `matrix`, computed at an earlier stage.
    fn reads(self, matrix: MatrixId) -> bool {
        use HeadMatrix as H;
        match self {
            Self::Input => false,
            Self::Projection => matrix == MatrixId::X,
            Self::SplitHeads => matches!(matrix, MatrixId::Q | MatrixId::K | MatrixId::V),
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
            Self::Concat => matrix == MatrixId::Head(0, H::Context),
            Self::OutputProjection => matrix == MatrixId::Concat,
        }
    }
}

impl MatrixId {
    /// Whether its values change when `parameter` does.
    pub fn depends_on(&self, parameter: Parameter) -> bool {
        use HeadMatrix as H;
        use Parameter as P;
        // Every matrix has as many rows as tokens or as d_model.
        if matches!(parameter, P::DModel) {
            return true;
        }
        let shaped_by_sentence = !matches!(self, Self::Weight(_));
        if parameter == P::Sentence {
            return shaped_by_sentence;
        }
        let head = |h: usize, m: H| Self::Head(h, m).depends_on(parameter);
        match *self {
            Self::Embeddings => parameter == P::Embeddings,
            Self::Positional => parameter == P::Positional,
            Self::X => Self::Embeddings.depends_on(parameter) || parameter == P::Positional,
            Self::Weight(w) => parameter == P::Weight(w),
            Self::Q => Self::X.depends_on(parameter) || parameter == P::Weight(WeightName::Q),
            Self::K => Self::X.depends_on(parameter) || parameter == P::Weight(WeightName::K),
            Self::V => Self::X.depends_on(parameter) || parameter == P::Weight(WeightName::V),
            Self::Head(h, m) => match m {
                H::Q => Self::Q.depends_on(parameter) || parameter == P::Heads,
                H::K | H::KTransposed => Self::K.depends_on(parameter) || parameter == P::Heads,
                H::V => Self::V.depends_on(parameter) || parameter == P::Heads,
                H::Scores => head(h, H::Q) || head(h, H::K),
                H::Scaled => head(h, H::Scores) || parameter == P::Scale,
                H::Masked => head(h, H::Scaled) || parameter == P::Causal,
                H::Weights => head(h, H::Masked) || parameter == P::Temperature,
                H::Context => head(h, H::Weights) || head(h, H::V),
            },
            Self::Concat => head(0, H::Context),
            Self::Output => {
                Self::Concat.depends_on(parameter) || parameter == P::Weight(WeightName::O)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Stage::*;

    fn numbers(p: Parameter) -> Vec<usize> {
        p.changed_stages().iter().map(|s| s.index() + 1).collect()
    }

    #[test]
    fn each_projection_first_matters_where_it_is_multiplied() {
        for w in [WeightName::Q, WeightName::K, WeightName::V] {
            assert_eq!(Parameter::Weight(w).first_stage(), Projection);
        }
        assert_eq!(
            Parameter::Weight(WeightName::O).first_stage(),
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
        assert!(!Softmax.is_changed_by(Parameter::Weight(WeightName::V)));
    }

    #[test]
    fn w_o_changes_only_the_output() {
        assert_eq!(numbers(Parameter::Weight(WeightName::O)), [10]);
    }

    #[test]
    fn settings_first_matter_where_their_formula_uses_them() {
        // A = softmax(M / T): the temperature acts in the softmax, not in the scaling.
        assert_eq!(Parameter::Temperature.first_stage(), Softmax);
        assert_eq!(numbers(Parameter::Temperature), [7, 8, 9, 10]);
        assert_eq!(Parameter::Causal.first_stage(), Mask);
        assert_eq!(numbers(Parameter::Causal), [6, 7, 8, 9, 10]);
        assert_eq!(Parameter::Scale.first_stage(), Scale);
        assert_eq!(Parameter::Heads.first_stage(), SplitHeads);
        assert_eq!(numbers(Parameter::Heads), [3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(Parameter::Positional.first_stage(), Input);
    }

    #[test]
    fn inputs_change_every_stage() {
        for p in [
            Parameter::Embeddings,
            Parameter::Positional,
            Parameter::Sentence,
            Parameter::DModel,
        ] {
            assert_eq!(p.changed_stages(), Stage::ALL, "{p:?}");
        }
    }

    #[test]
    fn the_next_stage_after_one_it_skips_is_where_it_matters_again() {
        let v = Parameter::Weight(WeightName::V);
        assert_eq!(v.next_stage_after(Input), Some(Projection));
        assert_eq!(v.next_stage_after(Scores), Some(WeightedSum));
        assert_eq!(v.next_stage_after(OutputProjection), None);
    }

    #[test]
    fn the_weights_themselves_do_not_change_with_the_sentence() {
        assert!(!MatrixId::Weight(WeightName::Q).depends_on(Parameter::Sentence));
        assert!(MatrixId::Weight(WeightName::Q).depends_on(Parameter::DModel));
        assert!(MatrixId::Head(3, HeadMatrix::Context).depends_on(Parameter::Sentence));
    }
}
