//! What a learner reads about the backward stages: their names, titles and formulas (as text
//! and as MathML) for the loss and the settings on screen, their shapes, what happens and why,
//! a note on the current numbers, and what a stage says when the chosen loss does not reach it.
//! The arithmetic behind one gradient cell is in [`explain`].

pub mod explain;
mod mathml;
mod notes;

pub use mathml::{back_formula_mathml, back_part_formula_mathml};
pub use notes::{back_note, back_note_of_head, GRADIENT_DECIMALS};

use super::number::subscript;
use super::stages::PARAGRAPH_BREAK;
use crate::attention::{
    BackMatrix, Config, HeadGrad, LossKind, Norm, Order, Outline, ScaleMode, Stage, Wiring,
};

/// Its symbol as the panels title it: `∂L/∂A₁`, `A*₂`, `∂L/∂W_q`.
pub fn back_label(m: BackMatrix) -> String {
    let whole = |s: &str| s.to_string();
    match m {
        BackMatrix::TargetPattern(h) => format!("A*{}", subscript(h + 1)),
        BackMatrix::TaskTarget => whole("Y*"),
        BackMatrix::Output => whole("∂L/∂Y"),
        BackMatrix::WO => whole("∂L/∂W_o"),
        BackMatrix::Concat => whole("∂L/∂C"),
        BackMatrix::Head(h, g) => {
            let symbol = match g {
                HeadGrad::Context => "C",
                HeadGrad::V => "V",
                HeadGrad::Weights => "A",
                HeadGrad::Masked => "M",
                HeadGrad::Scores => "S",
                HeadGrad::QRope => "Q̃",
                HeadGrad::KRope => "K̃",
                HeadGrad::Q => "Q",
                HeadGrad::K => "K",
            };
            format!("∂L/∂{symbol}{}", subscript(h + 1))
        }
        BackMatrix::Q => whole("∂L/∂Q"),
        BackMatrix::K => whole("∂L/∂K"),
        BackMatrix::V => whole("∂L/∂V"),
        BackMatrix::WQ => whole("∂L/∂W_q"),
        BackMatrix::WK => whole("∂L/∂W_k"),
        BackMatrix::WV => whole("∂L/∂W_v"),
        BackMatrix::Norm1 => whole("∂L/∂N₁"),
        BackMatrix::X => whole("∂L/∂X"),
        BackMatrix::SourceX => whole("∂L/∂X_src"),
        BackMatrix::ViaTarget => whole("Πᵀ·∂L/∂Y*"),
        BackMatrix::Embeddings => whole("∂L/∂E"),
        BackMatrix::SourceEmbeddings => whole("∂L/∂E_src"),
    }
}

/// Whether the rows of `m` are the key tokens (the source's, in cross-attention).
pub fn back_rows_are_keys(m: BackMatrix, cross: bool) -> bool {
    match m {
        BackMatrix::K | BackMatrix::V | BackMatrix::SourceX | BackMatrix::SourceEmbeddings => true,
        BackMatrix::Head(_, HeadGrad::K | HeadGrad::V) => true,
        // Πᵀ·∂L/∂Y* has a row per embedding the target is built from.
        BackMatrix::ViaTarget => cross,
        _ => false,
    }
}

/// Whether the rows and columns of `m` are dimensions (a weight's gradient).
pub fn back_is_weight(m: BackMatrix) -> bool {
    matches!(
        m,
        BackMatrix::WQ | BackMatrix::WK | BackMatrix::WV | BackMatrix::WO
    )
}

/// Whether the columns of `m` are the key tokens (queries × keys).
pub fn back_cols_are_keys(m: BackMatrix) -> bool {
    matches!(
        m,
        BackMatrix::TargetPattern(_)
            | BackMatrix::Head(_, HeadGrad::Weights | HeadGrad::Masked | HeadGrad::Scores)
    )
}

/// What one of its cells is called in a title.
pub fn back_cell_kind(m: BackMatrix) -> &'static str {
    match m {
        BackMatrix::TargetPattern(_) => "Target weight",
        BackMatrix::TaskTarget => "Target",
        _ => "Gradient",
    }
}

/// One line of help on a target or a gradient.
pub fn back_help(m: BackMatrix) -> String {
    let what = match m {
        BackMatrix::TargetPattern(_) => {
            return "A*: the pattern this head should learn; each row sums to 1.".into()
        }
        BackMatrix::TaskTarget => {
            return "Y*: the output the task asks for, built from the embeddings.".into()
        }
        BackMatrix::ViaTarget => {
            return "Πᵀ·∂L/∂Y*: the embeddings' gradient through the task's target Y*, which the mixing matrix Π builds from their rows.".into()
        }
        BackMatrix::Output => "the layer's output Y",
        BackMatrix::WO => "W_o",
        BackMatrix::Concat => "the concatenation C",
        BackMatrix::Head(_, g) => match g {
            HeadGrad::Context => "this head's context Cₕ",
            HeadGrad::V => "this head's values Vₕ",
            HeadGrad::Weights => "this head's attention weights Aₕ",
            HeadGrad::Masked => "this head's masked scores Mₕ",
            HeadGrad::Scores => "this head's raw scores Sₕ",
            HeadGrad::QRope => "this head's turned queries Q̃ₕ",
            HeadGrad::KRope => "this head's turned keys K̃ₕ",
            HeadGrad::Q => "this head's queries Qₕ",
            HeadGrad::K => "this head's keys Kₕ",
        },
        BackMatrix::Q => "the queries Q",
        BackMatrix::K => "the keys K",
        BackMatrix::V => "the values V",
        BackMatrix::WQ => "W_q",
        BackMatrix::WK => "W_k",
        BackMatrix::WV => "W_v",
        BackMatrix::Norm1 => "N₁",
        BackMatrix::X => "the input X",
        BackMatrix::SourceX => "the source's input X_src",
        BackMatrix::Embeddings => "the embeddings E",
        BackMatrix::SourceEmbeddings => "the source's embeddings E_src",
    };
    format!(
        "The gradient of the loss with respect to {what}: how fast L changes as each of its numbers grows."
    )
}

/// The label of the stage rail's group of backward stages.
pub const BACKWARD_GROUP: &str = "Backward";

/// The name shown to people.
pub fn back_stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::BackLoss => "Loss and its gradient",
        Stage::BackOutput => "Back through W_o",
        Stage::BackWeightedSum => "Back through AₕVₕ",
        Stage::BackSoftmax => "Back through softmax",
        Stage::BackScale => "Back through the scale",
        Stage::BackScores => "Back through QₕKₕᵀ",
        Stage::BackProjection => "Gradients of the weights W_q, W_k, W_v",
        _ => "Back to the embeddings",
    }
}

/// The name in three parts for the stage rail, as [`crate::words::stage_rail_name`].
pub fn back_rail_name(stage: Stage) -> (&'static str, &'static str, &'static str) {
    match stage {
        Stage::BackLoss => ("", "Loss", " and its gradient"),
        Stage::BackOutput => ("Back through ", "W_o", ""),
        Stage::BackWeightedSum => ("Back through ", "AₕVₕ", ""),
        Stage::BackSoftmax => ("Back through ", "softmax", ""),
        Stage::BackScale => ("Back through the ", "scale", ""),
        Stage::BackScores => ("Back through ", "QₕKₕᵀ", ""),
        Stage::BackProjection => ("Gradients of the ", "weights", " W_q, W_k, W_v"),
        _ => ("Back to the ", "embeddings", ""),
    }
}

/// What keys are called in shapes and formulas: `src_len` with a source, else `seq_len`.
fn keys_word(w: Wiring) -> &'static str {
    if w.cross {
        "src_len"
    } else {
        "seq_len"
    }
}

/// The divisor of the scale as written in a formula: `√d_k`, `√seq_len`, `√src_len`, or
/// `None` without scaling.
pub fn divisor_symbol(c: &Config, w: Wiring) -> Option<String> {
    match c.scale {
        ScaleMode::SqrtHeadDim => Some("√d_k".into()),
        ScaleMode::SqrtSeqLen => Some(format!("√{}", keys_word(w))),
        ScaleMode::None => None,
    }
}

/// What the queries read (`X`, or `N₁` in pre-norm) and what keys and values read.
fn inputs(w: Wiring) -> (&'static str, &'static str) {
    (w.query_input(), w.key_input())
}

/// The stage's title for the loss and the settings on screen.
pub fn back_title(stage: Stage, c: &Config, w: Wiring, kind: LossKind) -> String {
    let pattern = kind == LossKind::Pattern;
    match stage {
        Stage::BackLoss if pattern => "Pattern loss and ∂L/∂Aₕ".into(),
        Stage::BackLoss => "Task loss and ∂L/∂Y".into(),
        Stage::BackOutput if pattern => "∂L/∂W_o and ∂L/∂C: not reached by the pattern loss".into(),
        Stage::BackOutput => "∂L/∂W_o and ∂L/∂C".into(),
        Stage::BackWeightedSum if pattern => "∂L/∂Vₕ: not reached by the pattern loss".into(),
        Stage::BackWeightedSum => "∂L/∂Aₕ and ∂L/∂Vₕ".into(),
        Stage::BackSoftmax if c.temperature != 1.0 => {
            format!("∂L/∂Mₕ through softmax at T = {}", c.temperature)
        }
        Stage::BackSoftmax => "∂L/∂Mₕ through softmax".into(),
        Stage::BackScale => {
            let mask = if c.causal && !w.cross {
                "the mask and "
            } else {
                ""
            };
            match divisor_symbol(c, w) {
                Some(d) => format!("∂L/∂Sₕ through {mask}÷{d}"),
                None if c.causal && !w.cross => "∂L/∂Sₕ through the mask (no scaling)".into(),
                None => "∂L/∂Sₕ: no scaling, no mask".into(),
            }
        }
        Stage::BackScores => "∂L/∂Qₕ and ∂L/∂Kₕ".into(),
        Stage::BackProjection if pattern => "∂L/∂W_q and ∂L/∂W_k (W_v not reached)".into(),
        Stage::BackProjection => "∂L/∂W_q, ∂L/∂W_k, ∂L/∂W_v".into(),
        _ => {
            let x = match (w.block, w.norm_type) {
                (Some(Norm::Pre), crate::attention::NormType::RmsNorm) => "∂L/∂X through RMSNorm₁",
                (Some(Norm::Pre), _) => "∂L/∂X through LN₁",
                _ => "∂L/∂X",
            };
            if w.cross {
                format!("{x}, ∂L/∂E and ∂L/∂E_src")
            } else {
                format!("{x} and ∂L/∂E")
            }
        }
    }
}

/// The formula in plain Unicode text, for the loss and the settings on screen.
pub fn back_formula(stage: Stage, c: &Config, w: Wiring, kind: LossKind) -> String {
    let pattern = kind == LossKind::Pattern;
    let over_t = if c.temperature != 1.0 { "·T" } else { "" };
    let (q_in, k_in) = inputs(w);
    match stage {
        Stage::BackLoss if pattern => "L = −1/(n_heads·n) · Σₕ Σᵢ Σⱼ A*ₕ[i, j] · log Aₕ[i, j],  ∂L/∂Aₕ = −A*ₕ / (n_heads·n·Aₕ)".into(),
        Stage::BackLoss => "L = 1/(n·d_model) · Σ (Y − Y*)²,  ∂L/∂Y = 2·(Y − Y*) / (n·d_model)".into(),
        // The pattern loss reads A alone: ∂L/∂Y and ∂L/∂Cₕ are 0, and ∂L/∂Aₕ comes from the loss.
        Stage::BackOutput if pattern => "∂L/∂W_o = Cᵀ·∂L/∂Y = 0,  ∂L/∂C = ∂L/∂Y·W_oᵀ = 0".into(),
        Stage::BackOutput => "∂L/∂W_o = Cᵀ·∂L/∂Y,  ∂L/∂C = ∂L/∂Y·W_oᵀ".into(),
        Stage::BackWeightedSum if pattern => "∂L/∂Vₕ = Aₕᵀ·∂L/∂Cₕ = 0".into(),
        Stage::BackWeightedSum if c.causal && !w.cross => format!(
            "∂L/∂Aₕ = ∂L/∂Cₕ·Vₕᵀ, 0 where j > i{},  ∂L/∂Vₕ = Aₕᵀ·∂L/∂Cₕ",
            c.window.map(|w| format!(" or i − j ≥ {w}")).unwrap_or_default()
        ),
        Stage::BackWeightedSum => "∂L/∂Aₕ = ∂L/∂Cₕ·Vₕᵀ,  ∂L/∂Vₕ = Aₕᵀ·∂L/∂Cₕ".into(),
        Stage::BackSoftmax if pattern => {
            format!("∂L/∂Mₕ = (Aₕ − A*ₕ) / (n_heads·n{over_t})")
        }
        Stage::BackSoftmax => {
            let t = if c.temperature != 1.0 { " / T" } else { "" };
            format!("∂L/∂Mₕ = Aₕ ⊙ (D − rowsum(D ⊙ Aₕ)){t},  D = ∂L/∂Aₕ")
        }
        Stage::BackScale => {
            let window = c.window.map(|w| format!(" or i − j ≥ {w}"));
            let masked = if c.causal && !w.cross {
                format!(",  0 where j > i{}", window.unwrap_or_default())
            } else {
                String::new()
            };
            match divisor_symbol(c, w) {
                Some(d) => format!("∂L/∂Sₕ = ∂L/∂Mₕ / {d}{masked}"),
                None => format!("∂L/∂Sₕ = ∂L/∂Mₕ{masked}"),
            }
        }
        Stage::BackScores if w.rope => "∂L/∂Q̃ₕ = ∂L/∂Sₕ·K̃ₕ,  ∂L/∂K̃ₕ = (∂L/∂Sₕ)ᵀ·Q̃ₕ,  then ∂L/∂Qₕ, ∂L/∂Kₕ = each row turned by −φ (turned back)".into(),
        Stage::BackScores => "∂L/∂Qₕ = ∂L/∂Sₕ·Kₕ,  ∂L/∂Kₕ = (∂L/∂Sₕ)ᵀ·Qₕ".into(),
        Stage::BackProjection => {
            let mut f = format!("∂L/∂W_q = {q_in}ᵀ·∂L/∂Q,  ∂L/∂W_k = {k_in}ᵀ·∂L/∂K");
            if !pattern {
                f.push_str(&format!(",  ∂L/∂W_v = {k_in}ᵀ·∂L/∂V"));
            }
            f
        }
        _ => {
            let v = if pattern { "" } else { " + ∂L/∂V·W_vᵀ" };
            let target = if pattern { "" } else { " + Πᵀ·∂L/∂Y*" };
            let d_in = format!("∂L/∂{q_in}");
            let mut parts = Vec::new();
            if w.cross {
                parts.push(format!("{d_in} = ∂L/∂Q·W_qᵀ"));
                parts.push(format!("∂L/∂X_src = ∂L/∂K·W_kᵀ{v}"));
            } else {
                parts.push(format!("{d_in} = ∂L/∂Q·W_qᵀ + ∂L/∂K·W_kᵀ{v}"));
            }
            if w.block == Some(Norm::Pre) && w.norm_type == crate::attention::NormType::RmsNorm {
                parts.push("∂L/∂X = (ĝ − x̂·mean(ĝ ⊙ x̂)) / r per row, ĝ = ∂L/∂N₁ ⊙ γ₁, r = √(mean(x²) + ε), x̂ = X / r".into());
            } else if w.block == Some(Norm::Pre) {
                parts.push("∂L/∂X = (ĝ − mean(ĝ) − n̂·mean(ĝ ⊙ n̂)) / √(σ² + ε) per row, ĝ = ∂L/∂N₁ ⊙ γ₁".into());
            }
            if w.cross {
                parts.push("∂L/∂E = ∂L/∂X".into());
                parts.push(format!("∂L/∂E_src = ∂L/∂X_src{target}"));
            } else {
                parts.push(format!("∂L/∂E = ∂L/∂X{target}"));
            }
            parts.join(",  ")
        }
    }
}

/// The shapes of a backward stage's operands and result, in words and numbers.
pub fn back_shape_text(stage: Stage, outline: &Outline, kind: LossKind) -> String {
    let c = &outline.config;
    let (dk, d) = (c.head_dim(), c.d_model);
    let (s, n) = (outline.seq_len(), outline.n_keys());
    let w = outline.wiring;
    let keys = keys_word(w);
    let pattern = kind == LossKind::Pattern;
    match stage {
        Stage::BackLoss if pattern => format!(
            "L: one number; Aₕ, A*ₕ, ∂L/∂Aₕ: seq_len × {keys} = {s} × {n}, per head"
        ),
        Stage::BackLoss => {
            format!("L: one number; Y, Y*, ∂L/∂Y: seq_len × d_model = {s} × {d}")
        }
        Stage::BackOutput if pattern => format!(
            "∂L/∂W_o: d_model × d_model = {d} × {d}; ∂L/∂C: seq_len × d_model = {s} × {d}; every entry 0"
        ),
        Stage::BackOutput => format!(
            "Cᵀ ({d} × {s}) · ∂L/∂Y ({s} × {d}) = ∂L/∂W_o ({d} × {d}); ∂L/∂Y ({s} × {d}) · W_oᵀ ({d} × {d}) = ∂L/∂C ({s} × {d})"
        ),
        Stage::BackWeightedSum if pattern => {
            format!("∂L/∂Vₕ: {keys} × d_k = {n} × {dk}, per head; every entry 0")
        }
        Stage::BackWeightedSum => format!(
            "∂L/∂Cₕ ({s} × {dk}) · Vₕᵀ ({dk} × {n}) = ∂L/∂Aₕ ({s} × {n}); Aₕᵀ ({n} × {s}) · ∂L/∂Cₕ ({s} × {dk}) = ∂L/∂Vₕ ({n} × {dk})"
        ),
        Stage::BackSoftmax | Stage::BackScale => {
            format!("seq_len × {keys} = {s} × {n}, per head")
        }
        Stage::BackScores if w.rope => format!(
            "∂L/∂Sₕ ({s} × {n}) · K̃ₕ ({n} × {dk}) = ∂L/∂Q̃ₕ ({s} × {dk}), turned back to ∂L/∂Qₕ ({s} × {dk}); (∂L/∂Sₕ)ᵀ ({n} × {s}) · Q̃ₕ ({s} × {dk}) = ∂L/∂K̃ₕ ({n} × {dk}), turned back to ∂L/∂Kₕ ({n} × {dk})"
        ),
        Stage::BackScores => format!(
            "∂L/∂Sₕ ({s} × {n}) · Kₕ ({n} × {dk}) = ∂L/∂Qₕ ({s} × {dk}); (∂L/∂Sₕ)ᵀ ({n} × {s}) · Qₕ ({s} × {dk}) = ∂L/∂Kₕ ({n} × {dk})"
        ),
        Stage::BackProjection => {
            let (q_in, k_in) = inputs(w);
            let which = if pattern { "∂L/∂W_k" } else { "∂L/∂W_k, ∂L/∂W_v" };
            let kv = if pattern { "∂L/∂K" } else { "∂L/∂K, ∂L/∂V" };
            let kw = outline.config.kv_width();
            format!(
                "{q_in}ᵀ ({d} × {s}) · ∂L/∂Q ({s} × {d}) = ∂L/∂W_q ({d} × {d}); {k_in}ᵀ ({d} × {n}) · {kv} ({n} × {kw}) = {which} ({d} × {kw})"
            )
        }
        _ if w.cross => format!(
            "∂L/∂X, ∂L/∂E: seq_len × d_model = {s} × {d}; ∂L/∂X_src, ∂L/∂E_src: src_len × d_model = {n} × {d}"
        ),
        _ => format!("∂L/∂X, ∂L/∂E: seq_len × d_model = {s} × {d}"),
    }
}

/// [`back_explanation`] for the stages of `order`: the scores' gradients are turned back where
/// rotary positions turned the scores' operands, and in a pre-norm block ∂L/∂X comes through
/// the norm.
pub fn back_explanation_in(stage: Stage, order: Order) -> String {
    let text = back_explanation(stage);
    match stage {
        Stage::BackScores if order.rope => format!(
            "{}{PARAGRAPH_BREAK}{ROTARY_BACK}",
            text.replacen("Sₕ = QₕKₕᵀ", "Sₕ = Q̃ₕK̃ₕᵀ", 1)
        ),
        // The norm's sentence ends the first paragraph, which it continues.
        Stage::BackInput if order.block == Some(Norm::Pre) => text.replacen(
            PARAGRAPH_BREAK,
            &format!(" {PRE_NORM_BACK}{PARAGRAPH_BREAK}"),
            1,
        ),
        _ => text.to_string(),
    }
}

/// How the scores' gradients reach Qₕ and Kₕ through rotary positions.
const ROTARY_BACK: &str = "With rotary positions the scores were made from the turned rows Q̃ₕ and K̃ₕ, so these products give their gradients; each row's gradient is then turned back by its position's angles, one for each pair of columns, since a turn's transpose is the turn back.";

/// How ∂L/∂X comes through the norm in a pre-norm block.
const PRE_NORM_BACK: &str = "In this pre-norm block the projections read the sentence's rows normalised, as N₁, and the norm's backward carries the gradient of N₁ on to X.";

/// What happens here and why, in short paragraphs: true for both losses and every setting; the
/// stage's note says what the loss and the settings on screen do.
pub fn back_explanation(stage: Stage) -> &'static str {
    match stage {
        Stage::BackLoss => "Training needs one number that says how far the heads are from their goal (a target pattern for each head, or one task for the output): the loss L. The backward pass asks, for every number of the forward pass, how fast L changes when that number grows a little: its gradient, written ∂L/∂ followed by the number's name.\n\n\
            It starts where the loss reads the forward pass: the attention weights A for a pattern goal, the output Y for a task. A positive gradient means L rises as the number rises; a negative one that L falls.",
        Stage::BackOutput => "Y = C·W_o is a matrix product, and a product's backward rule is another product with one factor transposed. Each weight of W_o gets the sum over the tokens of its input times the output's gradient; each cell of C gets the sum of the output's gradients weighted by the row of W_o it was multiplied with.",
        Stage::BackWeightedSum => "Cₕ = Aₕ·Vₕ is a product too. Through it, ∂L/∂Aₕ[i, j] is the dot product of the value row Vₕ[j] with ∂L/∂Cₕ[i]: positive when giving key j more weight would move row i of Cₕ the way that raises L. A value row collects the gradients of every query that gave it weight. A pattern loss reads Aₕ itself: there ∂L/∂Cₕ is 0, and ∂L/∂Aₕ is the loss's own gradient.",
        Stage::BackSoftmax => "The softmax ties the weights of a row together: raising one score takes weight from every other key of the row. So a score's gradient is its weight times how much its weight's gradient, ∂L/∂A[i, j], exceeds the row's A-weighted average of ∂L/∂A. The temperature divides it once more, as it divided the scores.\n\n\
            Each row of ∂L/∂Mₕ sums to 0: adding the same amount to every score of a row changes no weight.",
        Stage::BackScale => "Where the forward pass divided every score by one number (√d_k in standard attention), the backward pass divides every gradient by the same number; without scaling it passes them on unchanged. A masked cell was replaced by −∞ whatever its score, so its score gets no gradient.",
        Stage::BackScores => "Sₕ = QₕKₕᵀ: a query row gets the key rows, each weighted by the gradient of the score it made with that key; a key row gets the query rows, weighted the same way. This is where a query learns what to look for and a key what to offer.",
        Stage::BackProjection => "Every token's query is made with the same W_q, so W_q's gradient adds up every token's contribution: column r of what the queries read times column c of ∂L/∂Q, summed over the tokens. W_k and W_v likewise, with what the keys and values read. The heads' slices of ∂L/∂Q sit side by side, as the heads' columns did.\n\n\
            Training moves only the matrices ticked to learn. Plain SGD moves each of their weights against its gradient, by η times it; Adam moves it against a moving average of its gradients, by at most about η a step, so its steps need not be proportional to the gradient.",
        _ => "Every projection that read a token's row sends its gradient back to that row through its transposed weight matrix, and the paths add up.\n\n\
            With positional encoding, X = E + P (X_src = E_src + P_src) and the positions are constant, so the path through attention gives the embeddings E exactly X's gradient; without it X is E. A task adds a second path, through its target, which is built from the embeddings.",
    }
}

/// The header's kicker: `Backward 3 of 8`.
pub fn back_progress(stage: Stage) -> String {
    format!(
        "Backward {} of {}",
        stage.backward_position().unwrap_or(0) + 1,
        Stage::BACKWARD.len()
    )
}

/// Where the goal of the backward stages' loss comes from, as the page on screen offers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoalSource {
    /// The “Train the weights” panel of the full page.
    Panel,
    /// The same panel while presenter mode hides it.
    Presenter,
    /// An embed, whose goal is its link's or the default: it has no training panel, but its
    /// “Open full view” link leads to one.
    Link,
    /// The printed handout, which has no panel to choose in.
    Paper,
}

/// What a stage the chosen loss does not reach says instead of its heatmaps, ending with where
/// to choose a goal that reaches it; `None` when the loss reaches it.
pub fn unreached_text(stage: Stage, kind: LossKind, source: GoalSource) -> Option<String> {
    let why = match (stage, kind) {
        (Stage::BackOutput | Stage::BackWeightedSum, LossKind::Pattern) => {
            "The pattern loss reads only the attention weights A, so no gradient reaches Y, W_o, C or the values V: their gradients are exactly 0, and training towards a pattern leaves W_v and W_o as they are. ∂L/∂Aₕ comes straight from the loss (the first backward stage)."
        }
        _ => return None,
    };
    let choose = match source {
        GoalSource::Panel => "Choose a task as the goal under “Train the weights” to see this stage at work.",
        GoalSource::Presenter => "To see this stage at work, leave presenter mode (the Leave button or Esc) and choose a task as the goal in “Train the weights”.",
        GoalSource::Link => "To see this stage at work, open the full view and choose a task as the goal in its “Train the weights”.",
        GoalSource::Paper => "With a task as the goal (chosen in the app, under “Train the weights”), this stage has gradients to show.",
    };
    Some(format!("{why} {choose}"))
}

/// Why the backward stages show nothing: the goal cannot be computed for the settings on
/// screen.
pub fn goal_error_text(error: &str, source: GoalSource) -> String {
    match source {
        GoalSource::Panel => format!("The goal chosen in “Train the weights” cannot be used here, so there is no gradient to show: {error}"),
        GoalSource::Presenter => format!("The goal chosen in “Train the weights” cannot be used here, so there is no gradient to show: {error} Presenter mode hides “Train the weights” and the inputs (sentence, settings, matrices): leave presenter mode (the Leave button or Esc) to make these changes."),
        GoalSource::Link => format!("This embed's goal does not fit its settings, so there is no gradient to show: {error} Open the full view (“Open full view ↗”) to change either."),
        GoalSource::Paper => format!("The goal chosen in the app cannot be used here, so there is no gradient to show: {error}"),
    }
}

/// The line above the backward stages' pictures that names the goal their loss measures, and
/// where it was chosen.
pub fn goal_line(goal_name: &str, source: GoalSource) -> String {
    match source {
        GoalSource::Panel => {
            format!("Goal (another can be chosen under “Train the weights”): {goal_name}.")
        }
        // One line, so the step keeps its height: the class sees the goal, and the lecturer
        // chooses another after leaving (the bar's help names Esc).
        GoalSource::Presenter => format!("Goal: {goal_name}."),
        // The link may carry a goal or leave the default: either way the embed's own.
        GoalSource::Link => format!(
            "Goal (another can be chosen in the full view's “Train the weights”): {goal_name}."
        ),
        GoalSource::Paper => format!("Goal (chosen in the app): {goal_name}."),
    }
}
