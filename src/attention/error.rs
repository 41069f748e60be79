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
    /// One token has more characters than a label can show.
    #[error(
        "The token “{start}…” is {chars} Unicode characters long (an accented letter or a \
         joined emoji can count as several); a token can have at most {max}. Shorten it, or \
         split it with spaces."
    )]
    TokenTooLong {
        start: String,
        chars: usize,
        max: usize,
    },
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
        "{} puts weight on a key the causal mask hides: {}row {} puts weight on key {}, a \
         later token{}. The mask holds that attention weight at 0, so the loss term −A*·log 0 \
         would be infinite whatever the weights, and no training step could lower it.{} {}",
        target_named(target, *head, detail.shared),
        head_named(target, *head, detail.shared),
        at(*row, &detail.row),
        at(*key, &detail.key),
        first_of(detail.cells),
        also_named(&detail.also),
        masked_remedy(target, !detail.also.is_empty())
    )]
    TargetOnMaskedKey {
        target: String,
        head: usize,
        row: usize,
        key: usize,
        detail: Box<Detail>,
    },
    /// A click would paint a target cell on a key the causal mask hides.
    #[error(
        "In {}, key {} comes after row {}'s token{}: the causal mask holds that attention \
         weight at 0, so the cell cannot be painted. Paint keys on or left of the diagonal, or \
         switch the causal mask off.",
        painted_named(*head, detail.shared),
        at(*key, &detail.key),
        row + 1,
        quoted(&detail.row)
    )]
    PaintOnMaskedKey {
        head: usize,
        row: usize,
        key: usize,
        detail: Box<Detail>,
    },
    /// A click would clear the last painted key of a row of a painted target: `only` when it
    /// is the one key the row can see.
    #[error("{}", last_key_kept(*head, *row, *key, *only, detail))]
    ClearLastPaintedKey {
        head: usize,
        row: usize,
        key: usize,
        only: bool,
        detail: Box<Detail>,
    },
    /// The list of pattern targets fits neither one head nor every head.
    #[error("There are {count} targets for {}", target_count_remedy(*n_heads))]
    TargetCount { count: usize, n_heads: usize },
    /// A painted target has a row with no weight anywhere.
    #[error(
        "Row {} of {} has no weight: paint at least one key in every row.",
        at(*row, &detail.row),
        painted_named(*head, detail.shared)
    )]
    EmptyTargetRow {
        head: usize,
        row: usize,
        detail: Box<Detail>,
    },
    /// A painted target has a negative cell.
    #[error(
        "{} has a negative value at row {}, key {}: a target shares out attention, so every \
         cell must be 0 or more.",
        capitalised(&painted_named(*head, detail.shared)),
        at(*row, &detail.row),
        at(*col, &detail.key)
    )]
    NegativeTarget {
        head: usize,
        row: usize,
        col: usize,
        detail: Box<Detail>,
    },
    /// Embeddings were chosen to learn with a task, whose target is built from them.
    #[error(
        "With the `{task}` task, `{name}` cannot learn: a task trains only w_q, w_k, w_v and \
         w_o. Its target is built from the embeddings (from the source's alone in \
         cross-attention), and embeddings the target is built from would move it as they \
         learned. Train w_q, w_k, w_v or w_o, or choose a pattern target."
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
    /// Rotary positions need heads with an even number of columns.
    #[error(
        "Rotary positions turn a head's columns two at a time, so d_k must be even; it is \
         {d_k}. Choose d_model and a number of heads whose d_k = d_model / heads is even."
    )]
    RopeOddHeadWidth { d_k: usize },
    /// Rotary positions' base is not a finite number above 1.
    #[error(
        "θ for rotary positions is {theta}, but it must be a number greater than 1 (10000 in \
         RoFormer and Llama 1 and 2, larger in later models): pair i turns by θ^(−2i/d_k) \
         radians a position."
    )]
    RopeTheta { theta: f64 },
    /// Decoding token by token needs the causal mask.
    #[error(
        "Decoding from a KV cache needs the causal mask: without it each token reads the \
         tokens after it, which a decoder has not produced yet. Switch the causal mask on."
    )]
    DecodeNeedsCausal,
    /// Decoding reads the sentence's own tokens, not a source sentence.
    #[error(
        "Decoding from a KV cache is shown for self-attention: with a source sentence the keys \
         and values come from the source, which is known whole. Remove the source sentence."
    )]
    DecodeWithSource,
    /// The prefill is empty or longer than the sentence.
    #[error(
        "The prefill is {prefill} tokens, but it must be between 1 and {seq_len}, the \
         sentence's length in tokens."
    )]
    PrefillOutOfRange { prefill: usize, seq_len: usize },
    /// The tiled softmax's blocks are empty.
    #[error(
        "A block of 0 keys holds nothing: the tiled softmax reads the keys in blocks of 1 or \
         more."
    )]
    TileZero,
    /// Rotary positions were asked for together with a source sentence.
    #[error(
        "Rotary positions turn a query and a key by their positions in one sentence, so the \
         score depends on their distance; a source sentence's positions are counted apart, \
         and there is no such distance. Switch rotary positions off, or remove the source \
         sentence."
    )]
    RopeWithSource,
    /// The number of key/value heads does not divide the number of query heads.
    #[error(
        "There are {n_kv_heads} key/value heads, but the number must divide the {n_heads} query \
         heads, so each key/value head is shared by the same number of query heads: choose \
         one of {}.",
        list_or(&divisors(*n_heads))
    )]
    KvHeadsDoNotDivide { n_kv_heads: usize, n_heads: usize },
    /// The sliding window is empty.
    #[error(
        "The window is 0 tokens, but it must hold at least the token itself: a window of W \
         lets a token see itself and the W − 1 tokens before it."
    )]
    WindowZero,
    /// A sliding window was asked for without the causal mask.
    #[error(
        "A sliding window limits how far back a token looks under the causal mask, so it \
         needs the causal mask: switch the causal mask on, or the window off."
    )]
    WindowNeedsCausal,
    /// A target pattern puts weight on a key the sliding window hides.
    #[error(
        "{} puts weight on a key the sliding window hides: {}row {} puts weight on key {}, \
         outside its window of {} (the row's own token and the ones just before it){}. The \
         window holds that attention weight at 0, so the loss term \
         −A*·log 0 would be infinite whatever the weights, and no training step could lower \
         it. Widen the window, switch it off, or choose a target on keys inside it: the \
         token itself, the one before (with a window of 2 or more), or equal weight (self, \
         previous or uniform).",
        target_named(target, *head, detail.shared),
        head_named(target, *head, detail.shared),
        at(*row, &detail.row),
        at(*key, &detail.key),
        tokens(*window),
        first_of(detail.cells)
    )]
    TargetOutsideWindow {
        target: String,
        head: usize,
        row: usize,
        key: usize,
        window: usize,
        detail: Box<Detail>,
    },
}

/// `1 token`, `3 tokens`.
fn tokens(n: usize) -> String {
    if n == 1 {
        "1 token".into()
    } else {
        format!("{n} tokens")
    }
}

/// The divisors of `n`, smallest first.
fn divisors(n: usize) -> Vec<usize> {
    (1..=n).filter(|d| n.is_multiple_of(*d)).collect()
}

/// `1, 2 or 4`.
fn list_or(items: &[usize]) -> String {
    let words: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    match words.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// What an error about one cell of a target says besides its numbers, filled in where the
/// sentence and the goal are at hand ([`AttentionError::naming`], [`AttentionError::shared`],
/// [`AttentionError::counting`], [`AttentionError::also`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detail {
    /// The row's token (the query); empty when not known.
    pub row: String,
    /// The key's token; empty when not known.
    pub key: String,
    /// Whether every head shares the target.
    pub shared: bool,
    /// How many cells of the head's target break the same rule (0 when not counted).
    pub cells: usize,
    /// The other heads whose own targets break it too, counted from 0.
    pub also: Vec<usize>,
}

/// Row or key `index`, counted from 1, with its token when known: `2 (“am”)`.
fn at(index: usize, token: &str) -> String {
    format!("{}{}", index + 1, quoted(token))
}

/// ` (“am”)` for a known token, nothing otherwise.
fn quoted(token: &str) -> String {
    if token.is_empty() {
        String::new()
    } else {
        format!(" (“{token}”)")
    }
}

/// `s` with its first letter in capitals.
fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A painted target, by whose it is.
fn painted_named(head: usize, shared: bool) -> String {
    if shared {
        "the painted target every head shares".to_string()
    } else {
        format!("head {}'s painted target", head + 1)
    }
}

/// The subject of a masked-key refusal: a named target by its key, a painted one by its head.
fn target_named(target: &str, head: usize, shared: bool) -> String {
    if target == PAINTED {
        capitalised(&painted_named(head, shared))
    } else {
        format!("The `{target}` target")
    }
}

/// Where a named target breaks the mask; a painted one already named its head.
fn head_named(target: &str, head: usize, shared: bool) -> String {
    match (target == PAINTED, shared) {
        (true, _) => String::new(),
        (false, true) => "in every head, ".to_string(),
        (false, false) => format!("in head {}, ", head + 1),
    }
}

/// ` (the first of 3 such cells)` when there are more.
fn first_of(cells: usize) -> String {
    if cells > 1 {
        format!(" (the first of {cells} such cells)")
    } else {
        String::new()
    }
}

/// The other heads whose targets break the mask, as a sentence of its own.
fn also_named(heads: &[usize]) -> String {
    let numbers: Vec<String> = heads.iter().map(|h| (h + 1).to_string()).collect();
    match numbers.as_slice() {
        [] => String::new(),
        [one] => format!(" Head {one}'s target puts weight on a hidden key too."),
        [rest @ .., last] => format!(
            " The targets of heads {} and {last} put weight on hidden keys too.",
            rest.join(", ")
        ),
    }
}

/// What to do about a target on a masked key, when `others` break the mask too.
fn masked_remedy(target: &str, others: bool) -> &'static str {
    if others {
        "Switch the causal mask off, or give each of these heads a target with nothing above \
         the diagonal: self, previous, first or uniform, or a painting with no cells above it."
    } else if target == PAINTED {
        "Switch the causal mask off, or choose a named target for this head, or move the \
         painted weight above the diagonal onto keys on or left of it, keeping a key in every \
         row (switch the mask off to repaint, then on again)."
    } else {
        "Switch the causal mask off, or choose a target with nothing above the diagonal: the \
         token itself, the one before, the first, or equal weight (self, previous, first or \
         uniform)."
    }
}

/// What a refused click on a row's last painted key says: the row would be left with no
/// weight, or (`only`) it cannot move its weight, having one key it can see.
fn last_key_kept(head: usize, row: usize, key: usize, only: bool, detail: &Detail) -> String {
    let target = painted_named(head, detail.shared);
    let row = at(row, &detail.row);
    if only {
        format!(
            "Row {row} of {target} must keep its weight on key {}: it is the only key this row \
             can see, and training divides each row by its sum.",
            at(key, &detail.key)
        )
    } else {
        format!(
            "Row {row} of {target} would have no weight left: training divides each row by its \
             sum, so every row needs a painted key. Paint another key in this row before \
             clearing this one."
        )
    }
}

/// The end of a refused count of targets: with one head only one target fits.
fn target_count_remedy(n_heads: usize) -> String {
    if n_heads == 1 {
        "1 head: give exactly one.".to_string()
    } else {
        format!(
            "{n_heads} heads: give a single target shared by all heads, or exactly one per head."
        )
    }
}

/// The name a painted target goes by in [`AttentionError::TargetOnMaskedKey`].
pub const PAINTED: &str = "painted";

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
        if let Some((row, key, detail)) = self.cell_detail() {
            detail.row = name(queries, row);
            detail.key = key.map(|k| name(keys, k)).unwrap_or_default();
        }
        self
    }

    /// The same error said of the target every head shares.
    pub fn shared(mut self) -> Self {
        if let Some((_, _, detail)) = self.cell_detail() {
            detail.shared = true;
        }
        self
    }

    /// The same error counting `cells` cells of the target that break the same rule.
    pub fn counting(mut self, cells: usize) -> Self {
        if let Some((_, _, detail)) = self.cell_detail() {
            detail.cells = cells;
        }
        self
    }

    /// The same error adding `heads` (counted from 0), whose own targets break the same rule.
    pub fn also(mut self, heads: Vec<usize>) -> Self {
        if let Some((_, _, detail)) = self.cell_detail() {
            detail.also = heads;
        }
        self
    }

    /// The row, the key (when there is one) and the detail of an error about a target's cell.
    fn cell_detail(&mut self) -> Option<(usize, Option<usize>, &mut Detail)> {
        match self {
            Self::TargetOnMaskedKey {
                row, key, detail, ..
            }
            | Self::TargetOutsideWindow {
                row, key, detail, ..
            }
            | Self::PaintOnMaskedKey {
                row, key, detail, ..
            }
            | Self::ClearLastPaintedKey {
                row, key, detail, ..
            }
            | Self::NegativeTarget {
                row,
                col: key,
                detail,
                ..
            } => Some((*row, Some(*key), detail)),
            Self::EmptyTargetRow { row, detail, .. } => Some((*row, None, detail)),
            _ => None,
        }
    }
}
