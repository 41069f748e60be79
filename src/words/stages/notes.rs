//! What the settings and numbers of one trace say about a stage, beyond its explanation: the
//! mask, the divisor, the source sentence and the block's norm as they are on screen, with the
//! trace's own numbers.

use super::super::explain::{ONE_TOKEN_MASK, ONE_TOKEN_NO_MASK};
use super::super::number::format_value;
use super::super::settings::{cross_word_order_text, rotary_word_order_text, word_order_text};
use super::explanation::PARAGRAPH_BREAK;
use super::residual_2_input;
use crate::attention::{row_stats, Activation, Matrix, Norm, ScaleMode, Stage, Trace};

/// `√n ≈ value` with three decimals, or `√n = value` when the root is whole: `value` is the
/// number the maths used.
fn root(n: usize, value: f64) -> String {
    if value.fract() == 0.0 {
        format!("√{n} = {value}")
    } else {
        format!("√{n} ≈ {}", format_value(value, 3))
    }
}

/// What standard attention divides by, after the ÷√seq_len mistake: the `standard` divisor,
/// which is the one used when the number of keys happens to be d_k (`agree`).
fn standard_too(agree: bool, standard: &str) -> String {
    if agree {
        format!(
            "Here the two happen to agree: standard attention divides by √d_k = {standard} too."
        )
    } else {
        format!("Standard attention would divide by {standard}.")
    }
}

/// Each head's spread of scores before and after the division, `head 1: 1.52 → 1.07; …`, with
/// `decimals` places.
pub fn score_spreads(trace: &Trace, decimals: usize) -> String {
    let spreads: Vec<String> = trace
        .heads
        .iter()
        .enumerate()
        .map(|(h, head)| {
            let (before, after) = head.score_spread();
            format!(
                "head {}: {} → {}",
                h + 1,
                format_value(before, decimals),
                format_value(after, decimals)
            )
        })
        .collect();
    spreads.join("; ")
}

/// What the numbers and settings of this trace say about the stage, beyond the general
/// explanation: short paragraphs separated by [`PARAGRAPH_BREAK`].
pub fn stage_note(stage: Stage, trace: &Trace) -> Option<String> {
    let paragraphs = match block_note(stage, trace) {
        Some(p) => p,
        None => attention_note(stage, trace)?,
    };
    Some(paragraphs.join(PARAGRAPH_BREAK))
}

/// The note on one of attention's stages.
fn attention_note(stage: Stage, trace: &Trace) -> Option<Vec<String>> {
    let c = &trace.config;
    let w = trace.wiring();
    let (s, n, d, dk) = (trace.seq_len(), trace.n_keys(), c.d_model, c.head_dim());
    let note = match stage {
        Stage::Input if w.cross && c.positional_encoding => vec![
            cross_word_order_text(true).to_string(),
            "The source sentence gets its own positional encoding, counted from its own first token: its token 1 gets the same pattern as your sentence's token 1.".to_string(),
        ],
        Stage::Input if w.cross => vec![
            cross_word_order_text(false).to_string(),
            "The source sentence's rows form X_src, one row per source token.".to_string(),
        ],
        Stage::Input => {
            let order = if c.rope.is_some() {
                rotary_word_order_text(c.positional_encoding, c.causal)
            } else {
                word_order_text(c.positional_encoding, c.causal)
            };
            std::iter::once(order.to_string())
                .chain(c.window.filter(|_| c.causal).map(crate::words::settings::window_narrows))
                .collect()
        }
        Stage::Rotary => std::iter::once(super::super::handout::rotary_note(trace))
            .chain(super::super::running::rotary_what_ifs(trace))
            .collect(),
        Stage::SplitHeads if c.grouped() => vec![super::super::handout::grouped_note(trace)],
        Stage::Projection => {
            let mut note = Vec::new();
            if w.cross {
                note.push(format!(
                    "Cross-attention: the queries come from your sentence ({s} rows), the keys and values from the source sentence ({n} rows). Each of your sentence's tokens will look for information among the source's tokens."
                ));
                note.push(
                    "Where it lives: in the Transformer, each decoder layer runs masked self-attention over its own sentence, then cross-attention, whose keys and values come from the encoder's output, the encoded source sentence. Here the source's rows X_src stand in for that output."
                        .to_string(),
                );
            }
            if w.block == Some(Norm::Pre) {
                note.push(if w.cross {
                    "Pre-norm: the queries are computed from N₁, the normalised X, not from X itself. The keys and values come from X_src, which this LayerNorm does not touch.".to_string()
                } else {
                    "Pre-norm: the queries, keys and values are computed from N₁, the normalised X, not from X itself.".to_string()
                });
            }
            if note.is_empty() {
                return None;
            }
            note
        }
        Stage::SplitHeads if c.n_heads == 1 => vec![format!(
            "With one head there is nothing to cut: head 1 takes all {d} columns, and d_k = d_model = {d}."
        )],
        Stage::SplitHeads => {
            let takes: Vec<String> = (0..c.n_heads)
                .map(|h| {
                    let cols = trace.head_columns(h);
                    let range = if cols.len() == 1 {
                        format!("d{}", cols.start + 1)
                    } else {
                        format!("d{}–d{}", cols.start + 1, cols.end)
                    };
                    format!("head {} takes {range}", h + 1)
                })
                .collect();
            let columns = if dk == 1 { "column" } else { "columns" };
            vec![format!(
                "Here n_heads = {}, so each head takes d_k = {dk} {columns}: {}.",
                c.n_heads,
                takes.join(", ")
            )]
        }
        Stage::Scores if w.cross => vec![format!(
            "Rows are your sentence's tokens (the queries), columns the source's tokens (the keys): each Sₕ is seq_len × src_len = {s} × {n}."
        )],
        Stage::Scale => scale_note(trace),
        Stage::Mask if w.cross => vec![
            "The causal mask belongs to self-attention, where it hides later tokens of the same sentence. Here the keys are another sentence, which is known in full, so nothing is hidden: every query sees every source token."
                .to_string(),
        ],
        Stage::Mask if !c.causal && s == 1 => vec![ONE_TOKEN_NO_MASK.to_string()],
        Stage::Mask if !c.causal => vec![
            "The causal mask is off: nothing is hidden and every token sees every token, itself included. Switch it on under Settings in Sentence & weights to see −∞ above the diagonal."
                .to_string(),
        ],
        Stage::Mask if s == 1 => vec![ONE_TOKEN_MASK.to_string()],
        Stage::Mask if c.window.is_some() => {
            let w = c.window.unwrap_or_default();
            vec![format!(
                "Cells above the diagonal (a key after its query) and cells {w} or more places left of it (a key at least W = {w} tokens before its query) are −∞ and drawn hatched: each token sees {}.",
                super::super::settings::window_reach(w)
            )]
        }
        Stage::Mask => vec![
            "Cells above the diagonal (a key that comes after its query) are −∞ and drawn hatched."
                .to_string(),
        ],
        Stage::Softmax => {
            let mut note = vec![if c.temperature != 1.0 {
                format!(
                    "Temperature T = {}: the scores are divided by it before the softmax ({}). Standard attention uses T = 1; see the temperature what-if in the lab.",
                    c.temperature,
                    if c.temperature < 1.0 { "sharper" } else { "flatter" }
                )
            } else {
                "Each row sums to 1: the sums are listed beside every chart.".to_string()
            }];
            if w.cross {
                note.push(
                    "Each row is a soft alignment: how that token shares its attention among the source's tokens. In a trained translator some heads come close to the word alignment; these toy weights, hand-made or random, are not trained."
                        .to_string(),
                );
            }
            note
        }
        Stage::WeightedSum if w.cross => vec![
            "Here the value rows are the source's: each of your sentence's tokens gets an average of the source tokens' values, weighted by its row of attention weights."
                .to_string(),
        ],
        Stage::Concat if c.n_heads == 1 => {
            vec!["With one head, C is just C₁: there is nothing to place beside it.".to_string()]
        }
        Stage::OutputProjection => {
            let mut note = Vec::new();
            if c.n_heads == 1 {
                note.push(
                    "With one head there is nothing to mix: W_o still maps the head's result to the output's d_model columns, and it is learned like W_q, W_k and W_v."
                        .to_string(),
                );
            }
            note.push(if w.block.is_some() {
                "With the block on, Y is not the end. The block shown has two sub-layers, attention and then a feed-forward network, and Y is the output of the first; the block goes on with the residual sum R₁ = X + Y.".to_string()
            } else {
                "Y is this layer's output, one row per token, d_model wide like X.".to_string()
            });
            if w.block.is_some() && w.cross {
                note.push(DECODER_LAYER.to_string());
            }
            note
        }
        _ => return None,
    };
    Some(note)
}

/// The divisor the maths used, in words, and what it did to the spread of each head's scores.
fn scale_note(trace: &Trace) -> Vec<String> {
    let c = &trace.config;
    let dk = c.head_dim();
    let (n, divisor) = (trace.n_keys(), trace.scale_divisor);
    let standard = root(dk, ScaleMode::SqrtHeadDim.divisor(dk, n));
    let first = match c.scale {
        ScaleMode::SqrtHeadDim if divisor == 1.0 => format!(
            "Here d_k = {dk}, so every score is divided by {} and nothing changes.",
            root(dk, divisor)
        ),
        ScaleMode::SqrtHeadDim => format!(
            "Here d_k = {dk}, so every score is divided by {}.",
            root(dk, divisor)
        ),
        ScaleMode::SqrtSeqLen if trace.source.is_some() => format!(
            "You chose ÷√src_len, the square root of the number of keys, which here are the source's tokens: src_len = {n}, so every score is divided by {}. This is a common mistake (see the what-if lab): the size of a dot product depends on d_k = {dk}, not on how many keys there are. {}",
            root(n, divisor),
            standard_too(n == dk, &standard)
        ),
        ScaleMode::SqrtSeqLen => format!(
            "You chose ÷√seq_len: seq_len = {n}, so every score is divided by {}. This is a common mistake (see the what-if lab): the size of a dot product depends on d_k = {dk}, not on how many tokens there are. {}",
            root(n, divisor),
            standard_too(n == dk, &standard)
        ),
        ScaleMode::None if dk == 1 => format!(
            "Scaling is off: the scores go into the softmax as they are. With d_k = 1 standard attention divides by {standard}, so leaving the scaling out changes nothing here."
        ),
        ScaleMode::None => format!(
            "Scaling is off, which differs from standard attention (see the what-if lab): the scores go into the softmax as they are. With d_k = {dk} they would be divided by {standard}."
        ),
    };
    let counted = if c.scale == ScaleMode::SqrtSeqLen {
        n
    } else {
        dk
    };
    let mut spread = format!(
        "The spread (standard deviation) of each head's scores, before → after: {}.",
        score_spreads(trace, 2)
    );
    if divisor != 1.0 {
        spread.push_str(&format!(
            " Each spread is divided by exactly {} (the spreads shown are rounded).",
            root(counted, divisor)
        ));
        if c.scale == ScaleMode::SqrtHeadDim {
            spread.push_str(" The spread after dividing is expected near 1 if the queries' and keys' components were independent with mean 0 and variance 1; these weights need not give that.");
        }
    }
    vec![first, spread]
}

/// A row's mean and standard deviation, two decimals each.
fn row_summary(m: &Matrix, row: usize) -> (String, String) {
    let (mean, var) = row_stats(m, row);
    (format_value(mean, 2), format_value(var.sqrt(), 2))
}

/// What pre-norm is, and why it exists: the block's first stage in pre-norm.
const PRE_NORM_WHAT: &str = "Pre-norm (GPT-2 and most models since): the block shown has two sub-layers, attention and then a feed-forward network. Each reads a normalised copy of the residual stream, the running row per token that starts as X and to which each sub-layer adds its output.";

/// What a block with a source sentence leaves out: a decoder layer's first sub-layer.
const DECODER_LAYER: &str = "A Transformer decoder layer has three sub-layers: masked self-attention, cross-attention, feed-forward. This block leaves out the first, so X stands in for its output.";

/// Why pre-norm exists.
const PRE_NORM_WHY: &str = "Why: in post-norm, every residual sum passes through a norm, so the gradients' path back to the input crosses every norm of the stack, and deep post-norm stacks train well only with a careful warm-up of the learning rate. In pre-norm the residual stream itself is never normalised, so gradients flow straight along it and deep stacks train more steadily. The stream's scale can then grow from block to block, so GPT-2 adds one final LayerNorm after its last block (Llama a final RMSNorm).";

/// What the numbers say about one of the block's stages.
fn block_note(stage: Stage, trace: &Trace) -> Option<Vec<String>> {
    let b = trace.block.as_ref()?;
    let w = trace.wiring();
    let token = trace.tokens.first().map(String::as_str).unwrap_or("");
    let rms = b.params.norm_type == crate::attention::NormType::RmsNorm;
    // The norm's name in formulas and in words: LN and LayerNorm, or RMSNorm.
    let (ln, norm_word) = if rms {
        ("RMSNorm", "RMSNorm")
    } else {
        ("LN", "LayerNorm")
    };
    let numbers = |before: &Matrix, after: &Matrix| {
        if rms {
            let r = |m: &Matrix| format_value(crate::attention::row_mean_square(m, 0).sqrt(), 2);
            return format!(
                "Row 1 (“{token}”): root mean square {} → {}. With γ = 1 every row would leave with a root mean square of about 1; γ then rescales each column. RMSNorm does not subtract the mean: the mean is only rescaled along with the row.",
                r(before),
                r(after)
            );
        }
        let (m0, s0) = row_summary(before, 0);
        let (m1, s1) = row_summary(after, 0);
        format!(
            "Row 1 (“{token}”): mean {m0} → {m1}, standard deviation {s0} → {s1}. With γ = 1 and β = 0 every row would leave with mean 0 and standard deviation about 1; γ and β then rescale and shift each column."
        )
    };
    let last = trace.stages().last() == Some(&stage);
    let mut note = match (stage, b.norm) {
        (Stage::Residual1, norm) => {
            let size = |m: &Matrix| format_value(m.row(0).norm(), 2);
            let mut note = vec![
                format!(
                    "Row 1 (“{token}”): its own row of X has length {}, attention added a row of length {}, and the sum has length {}.",
                    size(&trace.x),
                    size(&trace.output),
                    size(&b.sum_1)
                ),
                match norm {
                    Norm::Post => format!("Post-norm normalises this sum next: N₁ = {ln}₁(R₁)."),
                    Norm::Pre => "In pre-norm R₁ itself is not normalised: it carries on as the residual stream, and only the feed-forward network's copy of it, N₂, is.".to_string(),
                },
            ];
            if w.cross {
                note.push(DECODER_LAYER.to_string());
            }
            note
        }
        (Stage::Norm1, Norm::Post) => vec![
            format!("Post-norm, as in the original Transformer: N₁ = {ln}₁(R₁) normalises the sum just made, and N₁ is what the feed-forward network reads and what its output is added to."),
            numbers(&b.sum_1, &b.norm_1),
        ],
        (Stage::Norm1, Norm::Pre) => {
            let reads = if w.cross {
                format!("Attention's queries read N₁, not X. Its keys and values read X_src, the source sentence, which this {norm_word} does not touch.")
            } else {
                "Attention's queries, keys and values all read N₁, not X.".to_string()
            };
            let mut note = vec![format!(
                "{PRE_NORM_WHAT} This {norm_word} makes attention's copy, N₁ = {ln}₁(X). {reads}"
            )];
            if w.cross {
                note.push(DECODER_LAYER.to_string());
            }
            note.extend([PRE_NORM_WHY.to_string(), numbers(&trace.x, &b.norm_1)]);
            note
        }
        (Stage::Norm2, Norm::Post) => vec![
            format!("N₂ = {ln}₂(R₂) normalises the second sum."),
            numbers(b.norm_2_input(), &b.norm_2),
        ],
        (Stage::Norm2, Norm::Pre) => vec![
            format!("Pre-norm: the feed-forward network reads N₂ = {ln}₂(R₁), a normalised copy of the residual stream; R₁ itself goes on, unnormalised, to the second residual sum R₂ = R₁ + F."),
            numbers(b.norm_2_input(), &b.norm_2),
        ],
        (Stage::Hidden, _) => {
            let (f, d) = (b.hidden.ncols(), trace.config.d_model);
            let how = match f.cmp(&d) {
                std::cmp::Ordering::Greater => "widened",
                std::cmp::Ordering::Less => "narrowed",
                std::cmp::Ordering::Equal => "kept",
            };
            vec![format!(
                "d_ff = {f} and d_model = {d}: each token's row is {how} to {f} numbers here, and W₂ brings it back to {d}."
            )]
        }
        (Stage::Activation, _) => vec![match &b.gate {
            Some(gate) => gate_note(gate, if b.norm == Norm::Pre { "N₂" } else { "N₁" }),
            None => activation_note(b.activation, &b.hidden),
        }],
        (Stage::FeedForward, _) => vec![
            "Row i of F was computed from row i of G alone: the feed-forward network never mixes tokens.".to_string(),
        ],
        (Stage::Residual2, _) => vec![format!("R₂ = {} + F, row by row.", residual_2_input(w))],
        _ => return None,
    };
    if last {
        let mut end = "This is the block's output: one row per token, d_model wide like X, ready to be the next block's input.".to_string();
        if b.norm == Norm::Pre {
            end.push_str(if rms {
                " After the last block of a stack, Llama normalises it once more with a final RMSNorm."
            } else {
                " After the last block of a stack, GPT-2 normalises it once more with a final LayerNorm."
            });
        }
        note.push(end);
    }
    Some(note)
}

/// What SwiGLU's gate did: how many of its numbers are negative, which flip the sign of their
/// hidden unit and shrink it.
fn gate_note(gate: &Matrix, input: &str) -> String {
    let total = gate.len();
    let negative = gate.iter().filter(|v| **v < 0.0).count();
    let lowest = gate.iter().copied().fold(f64::INFINITY, f64::min);
    let largest = gate.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let silu = crate::attention::Activation::Swiglu;
    format!(
        "Each hidden unit H[i, c] is multiplied by SiLU(Z[i, c]), the gate Z = {input}·W_gate read \
         from the same row as H. SiLU(z) = z/(1 + e^(−z)) is about z for a large z, 0 at z = 0 and \
         a small negative number (at least −0.28) for a negative z, so the gate scales each unit \
         (by about z), silences it, or flips and shrinks it. Here {negative} of Z's {total} numbers are negative; Z runs from \
         {} (SiLU {}) to {} (SiLU {}).",
        format_value(lowest, 3),
        format_value(silu.apply(lowest), 3),
        format_value(largest, 3),
        format_value(silu.apply(largest), 3)
    )
}

/// What the activation did to H's negative numbers.
fn activation_note(activation: Activation, hidden: &Matrix) -> String {
    let total = hidden.len();
    let negative = hidden.iter().filter(|v| **v < 0.0).count();
    // `1 of H's 6 numbers is negative`, `All of H's 2 numbers are negative`.
    let counted = match (negative, total) {
        (_, 1) => "H's only number is negative".to_string(),
        (n, t) if n == t => format!("All of H's {t} numbers are negative"),
        (1, t) => format!("1 of H's {t} numbers is negative"),
        (n, t) => format!("{n} of H's {t} numbers are negative"),
    };
    let none = if total == 1 {
        "H's only number is not negative".to_string()
    } else {
        format!("None of H's {total} numbers is negative")
    };
    match activation {
        Activation::Relu if negative == 0 => {
            format!("{none}, so ReLU changes nothing here: G = H.")
        }
        Activation::Relu if negative == total => format!(
            "{counted}, so ReLU sets {} to 0 and G is all zeros.",
            if total == 1 { "it" } else { "every one" }
        ),
        Activation::Relu => format!(
            "{counted}, and ReLU set {} to 0; the others pass unchanged.",
            if negative == 1 { "it" } else { "each of them" }
        ),
        // A gated network's note is `gate_note`'s.
        Activation::Swiglu => String::new(),
        Activation::Gelu => {
            let how = "This app computes GELU by its tanh approximation, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), as GPT-2 does: it stays within 0.0005 of x·Φ(x).";
            let positive = "GELU shrinks each positive one: numbers near 0 to about half, large ones hardly at all.";
            if negative == 0 {
                return format!("{none}; {positive} {how}");
            }
            let lowest = hidden.iter().copied().fold(f64::INFINITY, f64::min);
            let each = if negative == 1 { "it" } else { "each" };
            format!(
                "{counted}; GELU keeps less than half of {each}: the lowest, {}, became {}. {how}",
                format_value(lowest, 3),
                format_value(activation.apply(lowest), 3)
            )
        }
    }
}
