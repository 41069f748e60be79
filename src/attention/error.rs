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
        "The `{target}` target puts weight on a key the causal mask hides: in {}, row {} puts \
         weight on key {}, a later token. The mask holds that attention weight at 0, so the \
         loss term −A*·log 0 would be infinite whatever the weights, and no training step \
         could lower it. Switch the causal mask off, or choose a target with nothing above the \
         diagonal: the token itself, the one before, the first, or equal weight (self, \
         previous, first or uniform).",
        heads_named(*head, *shared),
        at(*row, &tokens.row),
        at(*key, &tokens.key)
    )]
    TargetOnMaskedKey {
        target: String,
        head: usize,
        /// Whether every head shares the target.
        shared: bool,
        row: usize,
        key: usize,
        tokens: Box<CellTokens>,
    },
    /// A click would paint a target cell on a key the causal mask hides.
    #[error(
        "In head {}'s target, key {} is a later token than row {}: the causal mask holds that \
         attention weight at 0, so it cannot be painted. Paint keys on or left of the \
         diagonal, or switch the causal mask off.",
        head + 1,
        at(*key, &tokens.key),
        at(*row, &tokens.row)
    )]
    PaintOnMaskedKey {
        head: usize,
        row: usize,
        key: usize,
        tokens: Box<CellTokens>,
    },
    /// The list of pattern targets fits neither one head nor every head.
    #[error(
        "There are {count} targets for {n_heads} heads: give a single target shared by \
         all heads, or exactly one per head."
    )]
    TargetCount { count: usize, n_heads: usize },
    /// A painted target has a row with no weight anywhere.
    #[error(
        "Row {} of head {}'s painted target has no weight: paint at least one key in every row.",
        at(*row, &tokens.row),
        head + 1
    )]
    EmptyTargetRow {
        head: usize,
        row: usize,
        tokens: Box<CellTokens>,
    },
    /// A painted target has a negative cell.
    #[error(
        "Head {}'s painted target has a negative value at row {}, key {}: a target shares \
         out attention, so every cell must be 0 or more.",
        head + 1,
        at(*row, &tokens.row),
        at(*col, &tokens.key)
    )]
    NegativeTarget {
        head: usize,
        row: usize,
        col: usize,
        tokens: Box<CellTokens>,
    },
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

/// The tokens an error about one cell of a target names: its row's (the query) and its
/// key's; empty where the error was made without the sentence at hand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CellTokens {
    /// The row's token.
    pub row: String,
    /// The key's token.
    pub key: String,
}

/// Row or key `index`, counted from 1, with its token when known: `2 (“am”)`.
fn at(index: usize, token: &str) -> String {
    if token.is_empty() {
        (index + 1).to_string()
    } else {
        format!("{} (“{token}”)", index + 1)
    }
}

/// The heads a target error is about: every head when they share the target.
fn heads_named(head: usize, shared: bool) -> String {
    if shared {
        "every head".to_string()
    } else {
        format!("head {}", head + 1)
    }
}

impl AttentionError {
    /// The same error, said of the source sentence.
    pub fn for_source(self) -> Self {
        Self::Source(Box::new(self))
    }

    /// The same error naming the tokens of the cell it is about: `queries` are the sentence's
    /// tokens (the rows), `keys` the tokens attended to (the columns). Other errors are
    /// unchanged.
    pub fn naming(mut self, queries: &[String], keys: &[String]) -> Self {
        let name = |list: &[String], i: usize| list.get(i).cloned().unwrap_or_default();
        match &mut self {
            Self::TargetOnMaskedKey {
                row, key, tokens, ..
            }
            | Self::PaintOnMaskedKey {
                row, key, tokens, ..
            }
            | Self::NegativeTarget {
                row,
                col: key,
                tokens,
                ..
            } => {
                **tokens = CellTokens {
                    row: name(queries, *row),
                    key: name(keys, *key),
                };
            }
            Self::EmptyTargetRow { row, tokens, .. } => {
                tokens.row = name(queries, *row);
            }
            _ => {}
        }
        self
    }

    /// The same error said of every head, for a target that all heads share.
    pub fn shared(mut self) -> Self {
        if let Self::TargetOnMaskedKey { shared, .. } = &mut self {
            *shared = true;
        }
        self
    }
}
