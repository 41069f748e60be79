//! The sentences of the Markdown handout: its title, the configuration in words, a note per stage
//! and a description per matrix. The document's layout (headings, lists, tables) is
//! `crate::formats::report`'s; numbers here have the `decimals` it asks for.

use super::explain::ONE_TOKEN_MASK;
use super::matrices::{dim, label};
use super::number::format_value;
use super::settings::word_order_after_switch;
use super::stages::score_spreads;
use super::training::{each_head_target, goal_description};
use crate::attention::{
    key_input, query_input, BlockMatrix, BlockParam, Goal, HeadTarget, MatrixId, Norm, ScaleMode,
    Stage, Trace, WeightName, Wiring,
};
use crate::panels::HEAD_PANELS;
use std::fmt::Write as _;

/// The heading of the configuration section.
pub const CONFIGURATION: &str = "Configuration";

/// What comes before a stage's formula: `Formula: …`.
pub const FORMULA: &str = "Formula";

/// What a warning in the configuration is called: `Note: …`.
pub const NOTE: &str = "Note";

/// The heading of the column that holds each row's sum in a table of attention weights.
pub const ROW_SUM: &str = "row sum";

/// What is written after the sum of a row whose every key is masked.
pub const FULLY_MASKED: &str = "(fully masked)";

/// The tables' rows and columns in the stages whose matrices are queries × keys.
const QUERY_KEY_NOTE: &str = "In the tables, rows = queries, columns = keys.";

/// The handout's title, for the sentence's `tokens` (already escaped for the document) and,
/// in cross-attention, the source's.
pub fn handout_title(tokens: &[String], source: Option<&[String]>) -> String {
    let kind = if source.is_some() {
        "Cross-attention"
    } else {
        "Self-attention"
    };
    format!("{kind}, step by step: {}", sentences_title(tokens, source))
}

/// The sentences a title names: the sentence's `tokens`, or in cross-attention both sentences
/// with their parts, `“the cat” (queries) attending to “le chat” (source)`, since an arrow
/// between them would read as a translation from the first into the second.
pub fn sentences_title(tokens: &[String], source: Option<&[String]>) -> String {
    match source {
        Some(source) => format!(
            "“{}” (queries) attending to “{}” (source)",
            tokens.join(" "),
            source.join(" ")
        ),
        None => tokens.join(" "),
    }
}

/// The heading of head `h`'s matrices, counted from 1: `Head 2`.
pub fn head_heading(h: usize) -> String {
    format!("Head {}", h + 1)
}

/// One line of the configuration: a label in bold and what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigLine {
    /// `d_model = 4`.
    pub label: String,
    /// `every token is a row of 4 numbers.`
    pub text: String,
}

/// The configuration of `trace` in words, one line per setting; `tokens` are already escaped.
pub fn configuration(trace: &Trace, tokens: &[String], decimals: usize) -> Vec<ConfigLine> {
    let c = &trace.config;
    let seq_len = trace.seq_len();
    let head_dim = c.head_dim();
    let line = |label: String, text: String| ConfigLine { label, text };
    let heads = if c.n_heads == 1 { "head" } else { "heads" };
    let scaling = match c.scale {
        ScaleMode::SqrtHeadDim => format!(
            "the scores are divided by √d_k = {}, the square root of the head width",
            root(head_dim, decimals)
        ),
        ScaleMode::SqrtSeqLen if trace.source.is_some() => format!(
            "the scores are divided by √src_len = {}",
            root(trace.n_keys(), decimals)
        ),
        ScaleMode::SqrtSeqLen => format!(
            "the scores are divided by √seq_len = {}",
            root(seq_len, decimals)
        ),
        ScaleMode::None => "off, the scores are not divided".to_string(),
    };
    let mut lines = vec![
        line(
            format!("Tokens ({seq_len})"),
            format!("{}, one row each.", tokens.join(" · ")),
        ),
        line(
            format!("d_model = {}", c.d_model),
            format!("every token is a row of {} numbers.", c.d_model),
        ),
        line(
            format!("{} {heads}", c.n_heads),
            match (c.n_heads, head_dim) {
                (1, _) => format!("the head works on all d_k = d_model = {head_dim} columns."),
                (_, 1) => format!(
                    "each head works on d_k = d_model ÷ heads = {} ÷ {} = 1 column.",
                    c.d_model, c.n_heads
                ),
                _ => format!(
                    "each head works on d_k = d_model ÷ heads = {} ÷ {} = {head_dim} columns.",
                    c.d_model, c.n_heads
                ),
            },
        ),
        line("Scaling".to_string(), format!("{scaling}.")),
        line(
            "Causal mask".to_string(),
            if trace.source.is_some() {
                "off: it belongs to self-attention, and the keys here are another sentence."
                    .to_string()
            } else if let (true, Some(w)) = (c.causal, c.window) {
                format!(
                    "on with a sliding window of W = {w}: each token attends to {}.",
                    super::settings::window_reach(w)
                )
            } else if c.causal {
                "on, each token attends only to itself and the tokens before it.".to_string()
            } else {
                "off, every token attends to every token.".to_string()
            },
        ),
        line(
            "Positional encoding".to_string(),
            format!(
                "{}. {}{}",
                if c.positional_encoding && trace.source.is_some() {
                    "on, sinusoidal positions are added to both sentences' embeddings"
                } else if c.positional_encoding {
                    "on, sinusoidal positions are added to the embeddings"
                } else {
                    "off"
                },
                if c.rope.is_some() {
                    super::settings::rotary_word_order_text(c.positional_encoding, c.causal)
                } else {
                    word_order_after_switch(c.positional_encoding, c.causal, trace.source.is_some())
                },
                match c.window.filter(|_| c.causal) {
                    Some(w) => format!(" {}", super::settings::window_narrows(w)),
                    None => String::new(),
                }
            ),
        ),
        line(
            "Softmax temperature".to_string(),
            if c.temperature == 1.0 {
                "T = 1, the scores go into the softmax unchanged.".to_string()
            } else {
                format!(
                    "T = {}: the scores are divided by T before the softmax (T below 1 sharpens \
                     the weights, above 1 flattens them).",
                    c.temperature
                )
            },
        ),
    ];
    if let Some(source) = &trace.source {
        lines.insert(
            1,
            line(
                format!("Source tokens ({})", source.tokens.len()),
                format!(
                    "{}: cross-attention, the keys and values come from this sentence.",
                    source.tokens.join(" · ")
                ),
            ),
        );
    }
    if let Some(rope) = c.rope {
        lines.push(line(
            "Rotary positions".to_string(),
            format!(
                "on, θ = {}, {} pairing: each head's queries and keys are turned by their positions after the split.",
                super::number::format_value(rope.theta, 0),
                rope.pairing.key()
            ),
        ));
    }
    if c.grouped() {
        lines.push(line(
            match c.n_kv_heads() {
                1 => "1 key/value head".to_string(),
                n => format!("{n} key/value heads"),
            },
            format!(
                "the {} query heads share {} in groups of {}: K and V are {} columns wide.",
                c.n_heads,
                if c.n_kv_heads() == 1 { "it" } else { "them" },
                c.n_heads / c.n_kv_heads(),
                c.kv_width()
            ),
        ));
    }
    if let Some(block) = &trace.block {
        lines.push(line(
            "Transformer block".to_string(),
            format!(
                "{}, {}, {} activation, d_ff = {}.",
                super::stages::norm_name(block.norm),
                block.params.norm_type.name(),
                super::stages::activation_name(block.activation),
                block.hidden.ncols()
            ),
        ));
    }
    lines
}

/// A warning when the configuration departs from the textbook formula.
pub fn configuration_warning(trace: &Trace, decimals: usize) -> Option<String> {
    let d_k = trace.config.head_dim();
    let correct = format!("√d_k = {}", root(d_k, decimals));
    match trace.config.scale {
        ScaleMode::SqrtHeadDim => None,
        ScaleMode::SqrtSeqLen => {
            let (symbol, what, count) = if trace.source.is_some() {
                ("√src_len", "the source's length", "src_len")
            } else {
                ("√seq_len", "the sentence's length", "seq_len")
            };
            let agree = if trace.n_keys() == d_k {
                format!(" With these settings the two happen to agree: {count} = d_k = {d_k}.")
            } else {
                String::new()
            };
            Some(format!(
                "this is not the formula of “Attention Is All You Need”, which divides by \
                 {correct}. Dividing by {symbol}, the square root of {what}, is a common \
                 mistake, kept here on purpose: the number of tokens does not change the size of \
                 one dot product.{agree}"
            ))
        }
        ScaleMode::None if d_k == 1 => Some(
            "with d_k = 1 standard attention divides by √1 = 1, so leaving the scaling out \
             changes nothing here."
                .to_string(),
        ),
        ScaleMode::None => Some(format!(
            "the standard formula divides by {correct}. Without it, large scores push the \
             softmax towards all-or-nothing weights."
        )),
    }
}

/// What the handout's line on the backward stages is called.
pub const BACKWARD_STAGES: &str = "Backward stages";

/// The handout's line on the backward stages: the goal whose loss they differentiate, as the
/// goal menu names it (`goal_name`), and each head's target when the heads have their own
/// (`cross`: the keys are the source's words).
pub fn handout_goal_text(goal_name: &str, goal: &Goal, cross: bool) -> String {
    // One painted target is every head's, which the goal menu's name for it does not say.
    let painted_for_all =
        matches!(goal, Goal::Pattern(t) if matches!(t.as_slice(), [HeadTarget::Painted(_)]));
    let described;
    let goal_name = if painted_for_all {
        described = goal_description(goal, cross);
        described.as_str()
    } else {
        goal_name
    };
    let mut text = format!(
        "the gradient of the loss for the goal “{goal_name}”, from L back to the weights and \
         the embeddings."
    );
    if let Goal::Pattern(targets) = goal {
        if let [HeadTarget::Painted(_)] = targets.as_slice() {
            text.push_str(" Its target A* is drawn on the first backward page.");
            return text;
        }
        if targets.len() > 1 {
            let _ = write!(
                text,
                " Each head's target (A*ₕ, drawn on the first backward page): {}.",
                each_head_target(targets, cross)
            );
        }
    }
    text
}

/// Why the handout has no backward stages: the goal the menu calls `goal_name` cannot be used
/// with the settings, for the reason `error`.
pub fn handout_goal_error(goal_name: &str, error: &str) -> String {
    format!(
        "left out. The goal “{goal_name}” cannot be used with these settings, so there is no \
         gradient to show. {error}"
    )
}

/// What the rounding of the tables means.
pub fn rounding_remark(decimals: usize) -> String {
    format!(
        "Numbers are rounded to {decimals} decimals; the computation keeps full precision, so a \
         value recomputed from the rounded ones may differ in the last digit."
    )
}

/// `√n = v` or `√n ≈ v`.
fn root(n: usize, decimals: usize) -> String {
    let r = (n as f64).sqrt();
    if r.fract() == 0.0 {
        format!("√{n} = {r}")
    } else {
        format!("√{n} ≈ {}", format_value(r, decimals))
    }
}

/// What the tables of `stage` show for `trace`, beyond the stage's explanation.
pub fn handout_stage_note(trace: &Trace, stage: Stage, decimals: usize) -> String {
    let c = &trace.config;
    let head_dim = c.head_dim();
    let cross = trace.source.is_some();
    match stage {
        Stage::Input if cross => {
            let own = if trace.positional.is_none() {
                "Positional encoding is off, so X = E and X_src = E_src."
            } else {
                "E holds the token embeddings and P the positional encoding; the source's P_src counts positions from its own first token."
            };
            format!("{own} X_src is the source sentence, which keys and values are computed from.")
        }
        Stage::Input if trace.positional.is_none() => {
            "Positional encoding is off, so X = E.".to_string()
        }
        Stage::Input => "E holds the token embeddings and P the positional encoding.".to_string(),
        Stage::Residual1
        | Stage::Norm1
        | Stage::Hidden
        | Stage::Activation
        | Stage::FeedForward
        | Stage::Residual2
        | Stage::Norm2 => super::stages::stage_note(stage, trace).unwrap_or_default(),
        // The handout prints the forward pass; the backward stages need a goal.
        Stage::BackLoss
        | Stage::BackOutput
        | Stage::BackWeightedSum
        | Stage::BackSoftmax
        | Stage::BackScale
        | Stage::BackScores
        | Stage::BackProjection
        | Stage::BackInput => String::new(),
        Stage::Rotary => rotary_note(trace),
        // Printed with the settings the page shows them with.
        Stage::Tiles | Stage::Decode => String::new(),
        Stage::SplitHeads if c.grouped() => grouped_note(trace),
        Stage::SplitHeads if c.n_heads == 1 => format!(
            "With one head, head 1 takes all {} columns, {}: Q₁ = Q, K₁ = K and V₁ = V.",
            c.d_model,
            columns(0..c.d_model)
        ),
        Stage::SplitHeads => {
            let ranges: Vec<String> = (0..c.n_heads)
                .map(|h| format!("head {} takes {}", h + 1, columns(trace.head_columns(h))))
                .collect();
            let each = if head_dim == 1 {
                "one column and keeps its name".to_string()
            } else {
                format!("{head_dim} columns and keeps their names")
            };
            format!("Each head takes {each}: {}.", ranges.join(", "))
        }
        Stage::Scores => QUERY_KEY_NOTE.to_string(),
        Stage::Scale => {
            let keys = if cross { "√src_len" } else { "√seq_len" };
            let how = match c.scale {
                ScaleMode::SqrtHeadDim => {
                    format!(
                        "Every score is divided by √d_k = {}",
                        root(head_dim, decimals)
                    )
                }
                ScaleMode::SqrtSeqLen if trace.n_keys() == head_dim => format!(
                    "Every score is divided by {keys} = {}, which here happens to equal the \
                     correct √d_k = {}",
                    root(trace.n_keys(), decimals),
                    root(head_dim, decimals)
                ),
                ScaleMode::SqrtSeqLen => format!(
                    "Every score is divided by {keys} = {}, not by the correct √d_k = {}",
                    root(trace.n_keys(), decimals),
                    root(head_dim, decimals)
                ),
                ScaleMode::None if head_dim == 1 => "Scaling is off: the scores are not \
                    divided, so Zₕ equals Sₕ. With d_k = 1 standard attention divides by √1 = 1, \
                    so leaving the scaling out changes nothing here"
                    .to_string(),
                ScaleMode::None => {
                    "Scaling is off: the scores are not divided, so Zₕ equals Sₕ".to_string()
                }
            };
            format!(
                "{how}. The spread (standard deviation) of the scores, before → after: {}. \
                 {QUERY_KEY_NOTE}",
                score_spreads(trace, decimals)
            )
        }
        Stage::Mask if cross => format!(
            "The causal mask belongs to self-attention and is off: the keys are the source \
             sentence, known in full, so Mₕ equals Zₕ. {QUERY_KEY_NOTE}"
        ),
        Stage::Mask if c.causal && c.window.is_some() => format!(
            "The mask is on with a sliding window of W = {w}: entries above the diagonal (the key \
             comes after the query) and entries where the key is {w} or more tokens before the \
             query (i − j ≥ {w}) are −∞, so each token sees {}. {QUERY_KEY_NOTE}",
            super::settings::window_reach(c.window.unwrap_or(1)),
            w = c.window.unwrap_or(1)
        ),
        Stage::Mask if c.causal && trace.seq_len() == 1 => {
            format!("The mask is on. {ONE_TOKEN_MASK} {QUERY_KEY_NOTE}")
        }
        Stage::Mask if c.causal => format!(
            "The mask is on: entries above the diagonal, where the key comes after the query, \
             are −∞. {QUERY_KEY_NOTE}"
        ),
        Stage::Mask => {
            format!("The mask is off, so nothing is hidden and Mₕ equals Zₕ. {QUERY_KEY_NOTE}")
        }
        Stage::Softmax => {
            let mut note = format!(
                "The last column is each row's sum, which is 1 up to rounding. {QUERY_KEY_NOTE}"
            );
            if c.temperature != 1.0 {
                let _ = write!(
                    note,
                    " The masked scores were divided by T = {} first.",
                    c.temperature
                );
            }
            if trace.heads.iter().any(|h| !h.fully_masked_rows.is_empty()) {
                note.push_str(
                    " A row whose every key is masked has no key to attend to: its weights are \
                     set to 0, a convention rather than a result of the formula, which gives 0/0 \
                     (PyTorch, for one, returns NaN).",
                );
            }
            note
        }
        Stage::WeightedSum => format!(
            "Row i of Cₕ is the sum of the rows of Vₕ, each times its weight in row i of Aₕ, so \
             Cₕ has {} of Vₕ, the head's own slice.",
            if head_dim == 1 {
                "the single column".to_string()
            } else {
                format!("the {head_dim} columns")
            }
        ),
        Stage::Concat if c.n_heads == 1 => {
            "With one head there is nothing to place side by side: C is head 1's context C₁."
                .to_string()
        }
        Stage::Concat => {
            let parts: Vec<String> = (0..c.n_heads)
                .map(|h| {
                    format!(
                        "{} fills {}",
                        label(MatrixId::Head(h, crate::attention::HeadMatrix::Context)),
                        columns(trace.head_columns(h))
                    )
                })
                .collect();
            format!(
                "The heads' contexts sit side by side: {}.",
                parts.join(", ")
            )
        }
        Stage::Projection => with_app_note(
            "Rows of W are the input dimensions, columns the output dimensions.".to_string(),
            trace,
            stage,
        ),
        Stage::OutputProjection => with_app_note(
            "Rows of W_o match the columns of C; Y has one row per token, like X.".to_string(),
            trace,
            stage,
        ),
    }
}

/// The handout's own `note`, followed by the app's note on `stage` where that says what the
/// wiring changes (cross-attention, pre-norm, one head, the block after Y).
fn with_app_note(note: String, trace: &Trace, stage: Stage) -> String {
    match super::stages::stage_note(stage, trace) {
        Some(app) => format!("{note}\n\n{app}"),
        None => note,
    }
}

/// `d3` or `d3–d4`: the columns in `range`, named as on the heatmaps.
fn columns(range: std::ops::Range<usize>) -> String {
    match range.len() {
        0 => String::new(),
        1 => dim(range.start),
        _ => format!("{}–{}", dim(range.start), dim(range.end - 1)),
    }
}

/// The matrix the handout, the JSON and the CSV call `key` (of head `head`, counted from 0).
fn handout_matrix(key: &str, head: Option<usize>) -> Option<MatrixId> {
    if let Some(h) = head {
        // The trace's files call the turned matrices by longer names.
        let key = match key {
            "q_rope" => "qr",
            "k_rope" => "kr",
            other => other,
        };
        return HEAD_PANELS
            .iter()
            .find(|p| p.key == key)
            .map(|p| MatrixId::Head(h, p.matrix));
    }
    let whole = match key {
        "embeddings" => MatrixId::Embeddings,
        "positional" => MatrixId::Positional,
        "x" => MatrixId::X,
        "q" => MatrixId::Q,
        "k" => MatrixId::K,
        "v" => MatrixId::V,
        "concat" => MatrixId::Concat,
        "output" => MatrixId::Output,
        "source_embeddings" => MatrixId::SourceEmbeddings,
        "source_positional" => MatrixId::SourcePositional,
        "source_x" => MatrixId::SourceX,
        _ => {
            return WeightName::ALL
                .into_iter()
                .find(|w| w.key() == key)
                .map(MatrixId::Weight)
                .or_else(|| {
                    BlockParam::ALL
                        .into_iter()
                        .find(|p| p.key() == key)
                        .map(MatrixId::BlockParam)
                })
                .or_else(|| {
                    BlockMatrix::ALL
                        .into_iter()
                        .find(|b| b.key() == key)
                        .map(MatrixId::Block)
                })
        }
    };
    Some(whole)
}

/// The symbol of the matrix the handout calls `key`, with the head as a subscript: `Q₁`, `W_q`,
/// `Y`. The app's own table, [`label`], so the handout and the heatmaps agree.
pub fn matrix_symbol(key: &str, head: Option<usize>) -> String {
    handout_matrix(key, head).map_or_else(|| key.to_string(), label)
}

/// What the matrix the handout calls `key` is, for a whole layer or one head, in words that
/// hold for every wiring. [`matrix_caption`] also says what it is computed from.
pub fn matrix_description(key: &str, per_head: bool) -> &'static str {
    match (key, per_head) {
        ("embeddings", _) => "token embeddings",
        ("positional", _) => "positional encoding",
        ("x", _) => "input to the layer",
        ("w_q", _) => "query projection",
        ("w_k", _) => "key projection",
        ("w_v", _) => "value projection",
        ("w_o", _) => "output projection",
        ("q", false) => "queries",
        ("k", false) => "keys",
        ("v", false) => "values",
        ("q", true) => "this head's queries",
        ("k", true) => "this head's keys",
        ("v", true) => "this head's values",
        ("q_rope", _) => "this head's queries, turned by their positions",
        ("k_rope", _) => "this head's keys, turned by their positions",
        ("w_gate", _) => "feed-forward gate matrix",
        ("scores", _) => "raw scores Qₕ·Kₕᵀ",
        ("scaled", _) => "scaled scores",
        ("masked", _) => "masked scores",
        ("weights", _) => "attention weights",
        ("context", _) => "context, Aₕ·Vₕ",
        ("concat", _) => "heads side by side",
        ("source_embeddings", _) => "the source's token embeddings",
        ("source_positional", _) => "the source's positional encoding",
        ("source_x", _) => "the source's input, for keys and values",
        ("sum_1", _) => "first residual sum",
        ("sum_2", _) => "second residual sum",
        ("norm_1", _) => "first LayerNorm",
        ("norm_2", _) => "second LayerNorm",
        ("hidden", _) => "feed-forward hidden layer",
        ("activated", _) => "after the activation",
        ("ffn", _) => "feed-forward output",
        ("w_1", _) => "feed-forward first matrix",
        ("w_2", _) => "feed-forward second matrix",
        ("b_1", _) | ("b_2", _) => "bias, added to every row",
        ("ln_1_gamma", _) | ("ln_2_gamma", _) => "LayerNorm scale γ, per column",
        ("ln_1_beta", _) | ("ln_2_beta", _) => "LayerNorm shift β, per column",
        _ => "attention's output C·W_o",
    }
}

/// What the matrix the handout calls `key` is and, where the wiring decides it, what it is
/// computed from, in the symbols of the app: `queries N₁·W_q` in a pre-norm block, `keys
/// X_src·W_k` in cross-attention.
pub fn matrix_caption(key: &str, head: Option<usize>, wiring: Wiring) -> String {
    use BlockMatrix as B;
    let description = matrix_description(key, head.is_some());
    // The norms' names follow the block.
    let description = if wiring.norm_type == crate::attention::NormType::RmsNorm {
        description.replace("LayerNorm", "RMSNorm")
    } else {
        description.to_string()
    };
    let pre = wiring.block == Some(Norm::Pre);
    let block = |b: B| label(MatrixId::Block(b));
    let source = match (key, head) {
        ("q", None) => format!("{}·W_q", label(query_input(wiring))),
        ("k", None) => format!("{}·W_k", label(key_input(wiring))),
        ("v", None) => format!("{}·W_v", label(key_input(wiring))),
        ("sum_1", _) => "X + Y".to_string(),
        ("norm_1", _) if pre => "of X".to_string(),
        ("norm_1", _) => format!("of {}", block(B::Sum1)),
        ("norm_2", _) if pre => format!("of {}", block(B::Sum1)),
        ("norm_2", _) => format!("of {}", block(B::Sum2)),
        ("hidden", _) => format!("{}·W₁ + b₁", block(if pre { B::Norm2 } else { B::Norm1 })),
        ("ffn", _) => format!("{}·W₂ + b₂", block(B::Activated)),
        ("sum_2", _) => format!(
            "{} + {}",
            block(if pre { B::Sum1 } else { B::Norm1 }),
            block(B::Ffn)
        ),
        _ => return description,
    };
    format!("{description} {source}")
}

/// What the rotary stage's tables show: which columns pair up and how fast each pair turns.
pub fn rotary_note(trace: &Trace) -> String {
    let Some(rope) = trace.config.rope else {
        return String::new();
    };
    let d_k = trace.head_dim();
    let pairs = super::guide::pairing_note(rope.pairing, d_k);
    let speeds: Vec<String> = (0..d_k / 2)
        .map(|k| {
            let rate = super::number::equals_short(rope.frequency(k, d_k));
            format!(
                "pair {k} turns {} rad a position",
                rate.trim_start_matches("= ")
            )
        })
        .collect();
    format!(
        "Rotary positions turn each head's queries and keys, never its values. {pairs} Pair k, \
         counted from 0, turns by p·θ^(−2k/d_k) radians at position p, with θ = {}: {}. The row \
         at position 0 is not turned. A score Q̃ₕ[i]·K̃ₕ[j] then depends on the positions only \
         through i − j.",
        super::number::format_value(rope.theta, 0),
        speeds.join(", ")
    )
}

/// Which query heads share which key/value head's columns.
pub fn grouped_note(trace: &Trace) -> String {
    let c = &trace.config;
    let d_k = trace.head_dim();
    let groups: Vec<String> = (0..c.n_kv_heads())
        .map(|g| {
            let heads = c.query_heads(g);
            let who = if heads.len() == 1 {
                format!("head {}", heads.start + 1)
            } else {
                format!("heads {}–{}", heads.start + 1, heads.end)
            };
            format!(
                "{who} read{} key/value head {} ({} of K and V)",
                if heads.len() == 1 { "s" } else { "" },
                g + 1,
                columns(g * d_k..(g + 1) * d_k)
            )
        })
        .collect();
    let kind = if c.n_kv_heads() == 1 {
        "multi-query attention"
    } else {
        "grouped-query attention"
    };
    let shared = match c.n_kv_heads() {
        1 => "one key/value head".to_string(),
        n => format!("{n} key/value heads"),
    };
    let own = if d_k == 1 {
        "its own column".to_string()
    } else {
        format!("its own {d_k} columns")
    };
    format!(
        "Each query head takes {own} of Q, but the {} query heads share \
         {shared} ({kind}), in contiguous groups: {}. K and V are {} columns wide, not {}.",
        c.n_heads,
        groups.join("; "),
        c.kv_width(),
        c.d_model
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grouped_note_counts_a_head_s_one_column_in_the_singular() {
        let mut m = crate::state::Model::default();
        m.set_n_heads(4).unwrap();
        m.set_kv_heads(2).unwrap();
        let note = grouped_note(&m.trace().unwrap());
        assert!(
            note.starts_with("Each query head takes its own column of Q"),
            "{note}"
        );
        let mut m = crate::state::Model::default();
        m.set_kv_heads(1).unwrap();
        let note = grouped_note(&m.trace().unwrap());
        assert!(
            note.starts_with("Each query head takes its own 2 columns of Q"),
            "{note}"
        );
    }

    #[test]
    fn roots_are_exact_when_they_can_be() {
        assert_eq!(root(4, 3), "√4 = 2");
        assert_eq!(root(2, 3), "√2 ≈ 1.414");
    }

    #[test]
    fn symbols_take_the_head_as_a_subscript_counted_from_one() {
        assert_eq!(matrix_symbol("weights", Some(0)), "A₁");
        assert_eq!(matrix_symbol("context", Some(11)), "C₁₂");
        assert_eq!(matrix_symbol("w_o", None), "W_o");
    }

    #[test]
    fn every_matrix_the_handout_names_has_the_apps_symbol() {
        use crate::attention::{forward, Block, Config, Init, Inputs, Source, Weights};
        use crate::formats::report::trace_matrices;
        let mut inputs =
            Inputs::from_sentence("a b", Config::default(), Weights::new(Init::Default, 4))
                .unwrap();
        inputs.source = Some(Source::from_sentence("c d e", 4).unwrap());
        inputs.block = Some(Block::new(4, 8));
        let trace = forward(&inputs).unwrap();
        for m in trace_matrices(&trace) {
            let id = handout_matrix(m.key, m.head)
                .unwrap_or_else(|| panic!("{} is not a matrix of the app", m.key));
            assert_eq!(id.get(&trace).as_ref(), Some(m.matrix), "{}", m.key);
            assert_eq!(matrix_symbol(m.key, m.head), label(id));
        }
        assert_eq!(matrix_symbol("sum_1", None), "R₁");
        assert_eq!(matrix_symbol("ln_2_gamma", None), "γ₂");
    }

    #[test]
    fn the_goal_line_names_the_goal_and_each_heads_own_target_but_no_panel() {
        use crate::attention::{Matrix, NamedTarget, Task};
        let shared = handout_goal_text(
            "Pattern: every token looks at the first key",
            &Goal::named(NamedTarget::First),
            false,
        );
        assert!(
            shared.contains("“Pattern: every token looks at the first key”"),
            "{shared}"
        );
        assert!(!shared.contains("head 1"), "{shared}");
        assert!(!shared.contains("Train the weights"), "{shared}");
        let task = handout_goal_text(
            "Task: every row of Y should equal the first row of E",
            &Goal::Task(Task::CopyFirst),
            false,
        );
        assert!(!task.contains("target ("), "{task}");
        let own = Goal::Pattern(vec![
            HeadTarget::Named(NamedTarget::Previous),
            HeadTarget::Painted(Matrix::identity(2, 2)),
        ]);
        let per_head = handout_goal_text(
            "Pattern: a target for each head, named or painted by hand",
            &own,
            false,
        );
        assert!(
            per_head.contains("head 1, the key one position before (the first at itself); head 2, painted by hand."),
            "{per_head}"
        );
        // One painted target is every head's.
        let painted = Goal::Pattern(vec![HeadTarget::Painted(Matrix::identity(2, 2))]);
        let text = handout_goal_text("x", &painted, false);
        assert!(
            text.contains("“Pattern: one target painted by hand, the same for every head”"),
            "{text}"
        );
        assert!(!text.contains("head 1"), "{text}");
    }

    #[test]
    fn a_goal_the_settings_refuse_is_named_with_the_reason() {
        let text = handout_goal_error(
            "Pattern: the key after",
            "The `next` target puts weight on a key the causal mask hides.",
        );
        assert!(text.starts_with("left out."), "{text}");
        assert!(
            text.contains("“Pattern: the key after” cannot be used"),
            "{text}"
        );
        assert!(text.ends_with("the causal mask hides."), "{text}");
    }

    #[test]
    fn captions_name_the_input_the_wiring_uses() {
        use crate::attention::Activation;
        let wiring = |cross, block| Wiring {
            cross,
            block,
            activation: Activation::Relu,
            rope: false,
            norm_type: Default::default(),
        };
        let alone = wiring(false, None);
        assert_eq!(matrix_caption("q", None, alone), "queries X·W_q");
        assert_eq!(matrix_caption("k", None, alone), "keys X·W_k");
        let pre = wiring(false, Some(Norm::Pre));
        assert_eq!(matrix_caption("q", None, pre), "queries N₁·W_q");
        assert_eq!(matrix_caption("v", None, pre), "values N₁·W_v");
        assert_eq!(
            matrix_caption("hidden", None, pre),
            "feed-forward hidden layer N₂·W₁ + b₁"
        );
        assert_eq!(
            matrix_caption("sum_2", None, pre),
            "second residual sum R₁ + F"
        );
        let cross = wiring(true, Some(Norm::Post));
        assert_eq!(matrix_caption("q", None, cross), "queries X·W_q");
        assert_eq!(matrix_caption("k", None, cross), "keys X_src·W_k");
        assert_eq!(
            matrix_caption("norm_1", None, cross),
            "first LayerNorm of R₁"
        );
        assert_eq!(matrix_caption("k", Some(0), cross), "this head's keys");
        // The words without a wiring claim no input.
        assert!(!matrix_description("q", false).contains('X'));
    }
}
