use super::stage::Stage;
use thiserror::Error;

/// Everything that can be wrong with the inputs to attention, in words a learner can act on.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum AttentionError {
    /// The sentence has no tokens at all.
    #[error("Type at least one word: attention needs a token to attend from.")]
    EmptySentence,
    /// The sentence has more tokens than the visualiser can show.
    #[error("The sentence has {count} tokens; the visualiser shows at most {max}. Shorten it.")]
    TooManyTokens { count: usize, max: usize },
    /// `d_model` is outside the supported range.
    #[error("d_model is {d_model}, but it must be between {min} and {max}.")]
    DModelOutOfRange {
        d_model: usize,
        min: usize,
        max: usize,
    },
    /// The number of heads is outside the supported range.
    #[error("The number of heads is {n_heads}, but it must be between {min} and {max}.")]
    HeadsOutOfRange {
        n_heads: usize,
        min: usize,
        max: usize,
    },
    /// The heads do not split `d_model` into equal parts.
    #[error(
        "{n_heads} heads cannot split d_model = {d_model} into equal parts: \
         the number of heads must divide d_model."
    )]
    HeadsDoNotDivide { d_model: usize, n_heads: usize },
    /// The temperature is not a positive finite number in range.
    #[error("The temperature is {value}, but it must be a number between 0.01 and 100.")]
    BadTemperature { value: f64 },
    /// A matrix has the wrong number of rows or columns.
    #[error(
        "{name} must have {} rows and {} columns, but it has {} rows and {} columns.",
        expected.0, expected.1, found.0, found.1
    )]
    WrongShape {
        name: String,
        expected: (usize, usize),
        found: (usize, usize),
    },
    /// A matrix holds NaN or an infinity.
    #[error(
        "{name} has a value that is not a finite number at row {}, column {}.",
        row + 1,
        col + 1
    )]
    NotFinite {
        name: String,
        row: usize,
        col: usize,
    },
    /// A computed value overflowed to infinity or NaN.
    // Named by its key: the name a learner reads belongs to `crate::words`.
    #[error(
        "The numbers grew too large to represent at the {} stage. Use smaller values.",
        .stage.key()
    )]
    Overflow { stage: Stage },
    /// The feed-forward width is outside the supported range.
    #[error("d_ff is {d_ff}, but it must be between {min} and {max}.")]
    DffOutOfRange { d_ff: usize, min: usize, max: usize },
    /// The causal mask was asked for together with a source sentence.
    #[error(
        "The causal mask hides later tokens of the same sentence, so it belongs to \
         self-attention: switch it off to attend to a source sentence."
    )]
    CausalWithSource,
    /// Something is wrong with the source sentence.
    #[error("In the source sentence: {0}")]
    Source(Box<AttentionError>),
}

impl AttentionError {
    /// The same error, said of the source sentence.
    pub fn for_source(self) -> Self {
        Self::Source(Box::new(self))
    }
}
