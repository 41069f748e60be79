//! The ten stages of multi-head attention, shared by the trace, the stepper, the plots and the
//! explanations, so the names a learner sees are the names in the code. What a learner reads
//! about each stage is in `crate::words`.

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
    fn keys_round_trip() {
        for stage in Stage::ALL {
            assert_eq!(Stage::from_key(stage.key()), Some(stage));
        }
        assert_eq!(Stage::from_key("Softmax"), None);
    }
}
