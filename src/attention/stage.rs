//! The ten stages of multi-head attention, shared by the trace, the stepper, the plots and the
//! explanations, so the names a learner sees are the names in the code.

use std::fmt;

/// One step of multi-head self-attention, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// The input matrix X: one embedding row per token, plus positions.
    Input,
    /// Q, K and V: X times the three projection matrices.
    Projection,
    /// Q, K and V cut into one slice of columns per head.
    SplitHeads,
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
}

impl Stage {
    /// All stages, in order.
    pub const ALL: [Stage; 10] = [
        Self::Input,
        Self::Projection,
        Self::SplitHeads,
        Self::Scores,
        Self::Scale,
        Self::Mask,
        Self::Softmax,
        Self::WeightedSum,
        Self::Concat,
        Self::OutputProjection,
    ];

    /// Position in [`Stage::ALL`], from 0.
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }

    /// The stage at `index`, if there is one.
    pub fn from_index(index: usize) -> Option<Stage> {
        Self::ALL.get(index).copied()
    }

    /// The next stage, if any.
    pub fn next(self) -> Option<Stage> {
        Self::from_index(self.index() + 1)
    }

    /// The previous stage, if any.
    pub fn prev(self) -> Option<Stage> {
        self.index().checked_sub(1).and_then(Self::from_index)
    }

    /// A short machine name, used in URLs and files.
    pub fn key(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::Projection => "projection",
            Self::SplitHeads => "split",
            Self::Scores => "scores",
            Self::Scale => "scale",
            Self::Mask => "mask",
            Self::Softmax => "softmax",
            Self::WeightedSum => "weighted-sum",
            Self::Concat => "concat",
            Self::OutputProjection => "output",
        }
    }

    /// The stage whose key is `key`.
    pub fn from_key(key: &str) -> Option<Stage> {
        Self::ALL.into_iter().find(|s| s.key() == key)
    }

    /// The name shown to people.
    pub fn name(self) -> &'static str {
        match self {
            Self::Input => "Input X",
            Self::Projection => "Projections Q, K, V",
            Self::SplitHeads => "Split into heads",
            Self::Scores => "Scores QₕKₕᵀ",
            Self::Scale => "Scale ÷√d_k",
            Self::Mask => "Causal mask",
            Self::Softmax => "Softmax",
            Self::WeightedSum => "Weighted sum AₕVₕ",
            Self::Concat => "Concatenate heads",
            Self::OutputProjection => "Output projection",
        }
    }

    /// Whether the stage has one result per head.
    pub fn is_per_head(self) -> bool {
        matches!(
            self,
            Self::SplitHeads
                | Self::Scores
                | Self::Scale
                | Self::Mask
                | Self::Softmax
                | Self::WeightedSum
        )
    }

    /// The formula in plain Unicode text.
    pub fn formula(self) -> &'static str {
        match self {
            Self::Input => "X = E + P",
            Self::Projection => "Q = X·W_q,  K = X·W_k,  V = X·W_v",
            Self::SplitHeads => "Qₕ = Q[:, h·d_k … (h+1)·d_k),  likewise Kₕ, Vₕ",
            Self::Scores => "Sₕ = Qₕ·Kₕᵀ",
            Self::Scale => "Zₕ = Sₕ / √d_k",
            Self::Mask => "Mₕ[i, j] = −∞ if j > i, else Zₕ[i, j]",
            Self::Softmax => "Aₕ[i, j] = exp(Mₕ[i, j] / T) / Σⱼ′ exp(Mₕ[i, j′] / T)",
            Self::WeightedSum => "Cₕ = Aₕ·Vₕ",
            Self::Concat => "C = [C₁ | C₂ | … | C_H]",
            Self::OutputProjection => "Y = C·W_o",
        }
    }

    /// The formula as presentation MathML (the inside of a `<math>` element).
    pub fn formula_mathml(self) -> &'static str {
        match self {
            Self::Input => "<mi>X</mi><mo>=</mo><mi>E</mi><mo>+</mo><mi>P</mi>",
            Self::Projection => "<mi>Q</mi><mo>=</mo><mi>X</mi><msub><mi>W</mi><mi>q</mi></msub><mo>,</mo><mspace width=\"1em\"/><mi>K</mi><mo>=</mo><mi>X</mi><msub><mi>W</mi><mi>k</mi></msub><mo>,</mo><mspace width=\"1em\"/><mi>V</mi><mo>=</mo><mi>X</mi><msub><mi>W</mi><mi>v</mi></msub>",
            Self::SplitHeads => "<msub><mi>Q</mi><mi>h</mi></msub><mo>=</mo><mi>Q</mi><mo>[</mo><mo>:</mo><mo>,</mo><mi>h</mi><msub><mi>d</mi><mi>k</mi></msub><mo>…</mo><mo>(</mo><mi>h</mi><mo>+</mo><mn>1</mn><mo>)</mo><msub><mi>d</mi><mi>k</mi></msub><mo>)</mo>",
            Self::Scores => "<msub><mi>S</mi><mi>h</mi></msub><mo>=</mo><msub><mi>Q</mi><mi>h</mi></msub><msubsup><mi>K</mi><mi>h</mi><mi>T</mi></msubsup>",
            Self::Scale => "<msub><mi>Z</mi><mi>h</mi></msub><mo>=</mo><mfrac><msub><mi>S</mi><mi>h</mi></msub><msqrt><msub><mi>d</mi><mi>k</mi></msub></msqrt></mfrac>",
            Self::Mask => "<msub><mi>M</mi><mrow><mi>i</mi><mi>j</mi></mrow></msub><mo>=</mo><mrow><mo>{</mo><mtable><mtr><mtd><mo>−</mo><mi>∞</mi></mtd><mtd><mtext>if </mtext><mi>j</mi><mo>&gt;</mo><mi>i</mi></mtd></mtr><mtr><mtd><msub><mi>Z</mi><mrow><mi>i</mi><mi>j</mi></mrow></msub></mtd><mtd><mtext>otherwise</mtext></mtd></mtr></mtable></mrow>",
            Self::Softmax => "<msub><mi>A</mi><mrow><mi>i</mi><mi>j</mi></mrow></msub><mo>=</mo><mfrac><mrow><mi>exp</mi><mo>(</mo><msub><mi>M</mi><mrow><mi>i</mi><mi>j</mi></mrow></msub><mo>/</mo><mi>T</mi><mo>)</mo></mrow><mrow><munder><mo>∑</mo><msup><mi>j</mi><mo>′</mo></msup></munder><mi>exp</mi><mo>(</mo><msub><mi>M</mi><mrow><mi>i</mi><msup><mi>j</mi><mo>′</mo></msup></mrow></msub><mo>/</mo><mi>T</mi><mo>)</mo></mrow></mfrac>",
            Self::WeightedSum => "<msub><mi>C</mi><mi>h</mi></msub><mo>=</mo><msub><mi>A</mi><mi>h</mi></msub><msub><mi>V</mi><mi>h</mi></msub>",
            Self::Concat => "<mi>C</mi><mo>=</mo><mo>[</mo><msub><mi>C</mi><mn>1</mn></msub><mo>|</mo><msub><mi>C</mi><mn>2</mn></msub><mo>|</mo><mo>…</mo><mo>|</mo><msub><mi>C</mi><mi>H</mi></msub><mo>]</mo>",
            Self::OutputProjection => "<mi>Y</mi><mo>=</mo><mi>C</mi><msub><mi>W</mi><mi>o</mi></msub>",
        }
    }

    /// A paragraph in plain language: what happens here and why.
    pub fn explanation(self) -> &'static str {
        match self {
            Self::Input => "Each token becomes one row of numbers, its embedding. Stacked, the rows form X, one row per token. Attention itself ignores word order, so when positional encoding is on, a pattern of sines and cosines that is different for every position is added to each row.",
            Self::Projection => "Every token row is multiplied by three learned matrices. The query Q says what a token is looking for, the key K what it offers to others, and the value V what it passes on when it is chosen. The same matrices are used for every token.",
            Self::SplitHeads => "The columns of Q, K and V are cut into equal slices, one per head, each d_k = d_model ÷ heads wide. Each head works on its own slice, so different heads can learn to look for different things.",
            Self::Scores => "In each head, every query row is compared with every key row by a dot product. A large score means the query token finds that key token relevant. Rows are queries (the token that is looking), columns are keys (the token being looked at).",
            Self::Scale => "The scores are divided by √d_k, the square root of the head width. A dot product of d_k terms grows with d_k, and large scores would push the softmax to all-or-nothing. The divisor is the head width, not the sentence length: the sentence length does not change the size of one dot product.",
            Self::Mask => "In a language model a token may not look at tokens that come after it. The causal mask sets those scores to −∞ (above the diagonal), so the softmax gives them exactly zero weight. With the mask off, every token can see every other.",
            Self::Softmax => "Each row of scores becomes a probability distribution: every entry is exponentiated and divided by the row's total, so the weights are positive and each row sums to 1. The row maximum is subtracted first, which changes nothing mathematically but keeps exp from overflowing.",
            Self::WeightedSum => "Each token's new vector is a weighted average of all value rows, using that token's attention weights. A token that puts most of its weight on another token mostly copies that token's value.",
            Self::Concat => "The heads' results are placed side by side, head 1's columns first, giving one row of d_model numbers per token again.",
            Self::OutputProjection => "Finally the concatenated rows are multiplied by W_o, which mixes the heads' findings into one output vector per token. This is the layer's output, the same shape as its input X.",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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
        assert_eq!(walked, Stage::ALL);
        assert_eq!(Stage::Input.prev(), None);
    }

    #[test]
    fn keys_round_trip_and_every_stage_is_explained() {
        for stage in Stage::ALL {
            assert_eq!(Stage::from_key(stage.key()), Some(stage));
            assert!(
                stage.explanation().len() > 100,
                "{stage} is barely explained"
            );
            assert!(!stage.formula().is_empty());
            assert!(stage.formula_mathml().starts_with('<'));
        }
    }

    #[test]
    fn the_scale_stage_teaches_the_head_width_not_the_sentence_length() {
        assert!(Stage::Scale
            .explanation()
            .contains("not the sentence length"));
        assert!(Stage::Scale.formula().contains("√d_k"));
    }
}
