use std::fmt;

/// Everything that can be wrong with the inputs to attention, in words a learner can act on.
#[derive(Debug, Clone, PartialEq)]
pub enum AttentionError {
    /// The sentence has no tokens at all.
    EmptySentence,
    /// The sentence has more tokens than the visualiser can show.
    TooManyTokens { count: usize, max: usize },
    /// `d_model` is outside the supported range.
    DModelOutOfRange {
        d_model: usize,
        min: usize,
        max: usize,
    },
    /// The number of heads is outside the supported range.
    HeadsOutOfRange {
        n_heads: usize,
        min: usize,
        max: usize,
    },
    /// The heads do not split `d_model` into equal parts.
    HeadsDoNotDivide { d_model: usize, n_heads: usize },
    /// The temperature is not a positive finite number in range.
    BadTemperature { value: f64 },
    /// A matrix has the wrong number of rows or columns.
    WrongShape {
        name: String,
        expected: (usize, usize),
        found: (usize, usize),
    },
    /// A matrix holds NaN or an infinity.
    NotFinite {
        name: String,
        row: usize,
        col: usize,
    },
    /// A computed value overflowed to infinity or NaN.
    Overflow { stage: String },
}

impl fmt::Display for AttentionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptySentence => write!(
                f,
                "Type at least one word: attention needs a token to attend from."
            ),
            Self::TooManyTokens { count, max } => write!(
                f,
                "The sentence has {count} tokens; the visualiser shows at most {max}. Shorten it."
            ),
            Self::DModelOutOfRange { d_model, min, max } => write!(
                f,
                "d_model is {d_model}, but it must be between {min} and {max}."
            ),
            Self::HeadsOutOfRange { n_heads, min, max } => write!(
                f,
                "The number of heads is {n_heads}, but it must be between {min} and {max}."
            ),
            Self::HeadsDoNotDivide { d_model, n_heads } => write!(
                f,
                "{n_heads} heads cannot split d_model = {d_model} into equal parts: \
                 the number of heads must divide d_model."
            ),
            Self::BadTemperature { value } => write!(
                f,
                "The temperature is {}, but it must be a number between 0.01 and 100.",
                value
            ),
            Self::WrongShape {
                name,
                expected,
                found,
            } => write!(
                f,
                "{name} must have {} rows and {} columns, but it has {} rows and {} columns.",
                expected.0, expected.1, found.0, found.1
            ),
            Self::NotFinite { name, row, col } => write!(
                f,
                "{name} has a value that is not a finite number at row {}, column {}.",
                row + 1,
                col + 1
            ),
            Self::Overflow { stage } => write!(
                f,
                "The numbers grew too large to represent at the {stage} stage. Use smaller values."
            ),
        }
    }
}

impl std::error::Error for AttentionError {}
