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
    /// A target pattern puts weight on a key the causal mask hides.
    #[error(
        "The `{target}` target puts weight on a key the causal mask hides: in head {}, row {} \
         puts weight on key {}, a later token. The mask holds that attention weight at 0, so \
         the loss term −A*·log 0 would be infinite whatever the weights, and no training step \
         could lower it. Switch the causal mask off, or choose a target with nothing above the \
         diagonal: the token itself, the one before, the first, or equal weight (self, \
         previous, first or uniform).",
        head + 1,
        row + 1,
        key + 1
    )]
    TargetOnMaskedKey {
        target: String,
        head: usize,
        row: usize,
        key: usize,
    },
    /// A click would paint a target cell on a key the causal mask hides.
    #[error(
        "Key {} comes after row {}'s token in head {}'s target: the causal mask holds that \
         attention weight at 0, so it cannot be painted. Paint keys on or left of the \
         diagonal, or switch the causal mask off.",
        key + 1,
        row + 1,
        head + 1
    )]
    PaintOnMaskedKey { head: usize, row: usize, key: usize },
    /// The list of pattern targets fits neither one head nor every head.
    #[error(
        "There are {count} targets for {n_heads} heads: give a single target shared by \
         all heads, or exactly one per head."
    )]
    TargetCount { count: usize, n_heads: usize },
    /// A painted target has a row with no weight anywhere.
    #[error(
        "Row {} of head {}'s painted target has no weight: paint at least one key in every row.",
        row + 1,
        head + 1
    )]
    EmptyTargetRow { head: usize, row: usize },
    /// A painted target has a negative cell.
    #[error(
        "Head {}'s painted target has a negative value at row {}, column {}: a target shares \
         out attention, so every cell must be 0 or more.",
        head + 1,
        row + 1,
        col + 1
    )]
    NegativeTarget { head: usize, row: usize, col: usize },
    /// Embeddings were chosen to learn with a task, whose target is built from them.
    #[error(
        "With the `{task}` task, `{name}` cannot learn: the target is built from the embeddings \
         (the source's in cross-attention), so neither `embeddings` nor `source_embeddings` may \
         learn; shrinking them would shrink the target too. Train w_q, w_k, w_v or w_o, or \
         choose a pattern target."
    )]
    TaskTrainsEmbeddings { task: String, name: String },
    /// The source's embeddings were chosen to learn without a source sentence.
    #[error(
        "`source_embeddings` belong to a source sentence, and there is none: set one \
         (cross-attention) to train them."
    )]
    NoSourceToTrain,
    /// The learning rate is not a positive finite number.
    #[error("The learning rate is {value}, but it must be a positive number.")]
    BadLearningRate { value: f64 },
    /// The gradient overflowed to infinity or NaN.
    #[error(
        "The gradient grew too large to represent. Use smaller weights or embeddings, switch \
         scaling on, or raise the temperature T."
    )]
    GradientOverflow,
    /// An update made a weight overflow; the weights before that step are kept.
    #[error(
        "Training diverged at step {step}: the weights grew beyond what a number can hold, so \
         the weights before that step are kept. Lower the learning rate."
    )]
    TrainingDiverged { step: usize },
}

impl AttentionError {
    /// The same error, said of the source sentence.
    pub fn for_source(self) -> Self {
        Self::Source(Box::new(self))
    }
}
