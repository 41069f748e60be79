//! What a learner reads about each stage: its name, its formula (as text and as MathML), what
//! happens and why ([`explanation`]), the shapes involved, and a note on the current settings
//! and numbers ([`notes`]).

mod explanation;
mod notes;

pub use explanation::{stage_explanation, stage_explanation_in, PARAGRAPH_BREAK};
pub use notes::{score_spreads, stage_note};

use crate::attention::Order;
use crate::attention::{Activation, Config, Norm, Outline, ScaleMode, Stage, Wiring};

/// The name shown to people.
pub fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::Input => "Input X",
        Stage::Projection => "Projections Q, K, V",
        Stage::SplitHeads => "Split into heads",
        Stage::Rotary => "Rotary positions Q̃ₕ, K̃ₕ",
        Stage::Scores => "Scores QₕKₕᵀ",
        Stage::Scale => "Scale the scores",
        Stage::Mask => "Causal mask",
        Stage::Softmax => "Softmax",
        Stage::WeightedSum => "Weighted sum AₕVₕ",
        Stage::Concat => "Concatenate heads",
        Stage::OutputProjection => "Output projection",
        Stage::Residual1 => "Residual sum R₁",
        Stage::Norm1 => "LayerNorm N₁",
        Stage::Hidden => "Hidden layer H",
        Stage::Activation => "Activation",
        Stage::FeedForward => "Feed-forward output F",
        Stage::Residual2 => "Residual sum R₂",
        Stage::Norm2 => "LayerNorm N₂",
        Stage::Tiles => super::running::TILES_NAME,
        Stage::Decode => super::running::DECODE_NAME,
        _ => super::backward::back_stage_name(stage),
    }
}

/// Which product of the projection stage presenter mode shows, `part` 0, 1 or 2, reading the
/// inputs of `w` (N₁ in pre-norm, X_src for keys and values in cross-attention).
pub fn projection_part_name(part: usize, w: Wiring) -> String {
    match part {
        0 => format!("Queries: Q = {}·W_q", w.query_input()),
        1 => format!("Keys: K = {}·W_k", w.key_input()),
        _ => format!("Values: V = {}·W_v", w.key_input()),
    }
}

/// Which step of SwiGLU's activation presenter mode shows, `part` 0 or 1, reading the input of
/// `w`'s feed-forward network: the gating, then the gate's weights.
pub fn gated_part_name(part: usize, w: Wiring) -> String {
    match part {
        0 => format!("Gating: G = SiLU({}·W_gate) ⊙ H", ffn_input(w)),
        _ => "The gate's weights: W_gate".into(),
    }
}

/// The stage's name in three parts for the stage rail, which shows only the middle one (a word
/// or two) where space is short; the three together are [`stage_name`], so the button's
/// accessible name holds what it shows.
pub fn stage_rail_name(stage: Stage) -> (&'static str, &'static str, &'static str) {
    match stage {
        Stage::Input => ("", "Input", " X"),
        Stage::Projection => ("Projections ", "Q, K, V", ""),
        Stage::SplitHeads => ("Split into ", "heads", ""),
        Stage::Rotary => ("", "Rotary", " positions Q̃ₕ, K̃ₕ"),
        Stage::Scores => ("", "Scores", " QₕKₕᵀ"),
        Stage::Scale => ("", "Scale", " the scores"),
        Stage::Mask => ("Causal ", "mask", ""),
        Stage::Softmax => ("", "Softmax", ""),
        Stage::WeightedSum => ("Weighted ", "sum", " AₕVₕ"),
        Stage::Concat => ("", "Concat", "enate heads"),
        Stage::OutputProjection => ("", "Output", " projection"),
        Stage::Residual1 => ("", "Residual", " sum R₁"),
        Stage::Norm1 => ("Layer", "Norm", " N₁"),
        Stage::Hidden => ("", "Hidden", " layer H"),
        Stage::Activation => ("", "Activation", ""),
        Stage::FeedForward => ("Feed-forward ", "output", " F"),
        Stage::Residual2 => ("", "Residual", " sum R₂"),
        Stage::Norm2 => ("Layer", "Norm", " N₂"),
        Stage::Tiles => ("FlashAttention's ", "tiled", " softmax"),
        Stage::Decode => ("Decoding from the ", "KV cache", ""),
        _ => super::backward::back_rail_name(stage),
    }
}

/// [`stage_rail_name`] for the stages shown in `order`: the scores, both ways, name their turned
/// operands with rotary positions, and the norms are RMSNorm where the block says so.
pub fn stage_rail_name_in(
    stage: Stage,
    order: Order,
) -> (&'static str, &'static str, &'static str) {
    match stage {
        Stage::Scores if order.rope => ("", "Scores", " Q̃ₕK̃ₕᵀ"),
        Stage::BackScores if order.rope => ("Back through ", "Q̃ₕK̃ₕᵀ", ""),
        Stage::Norm1 if order.rms => ("RMS", "Norm", " N₁"),
        Stage::Norm2 if order.rms => ("RMS", "Norm", " N₂"),
        _ => stage_rail_name(stage),
    }
}

/// [`stage_name`] for the stages shown in `order`: the three parts of [`stage_rail_name_in`]
/// together, so that a norm reads "RMSNorm N₁" where the block uses RMSNorm.
pub fn stage_name_in(stage: Stage, order: Order) -> String {
    let (before, shown, after) = stage_rail_name_in(stage, order);
    format!("{before}{shown}{after}")
}

/// The activation's name as people write it.
pub fn activation_name(a: Activation) -> &'static str {
    match a {
        Activation::Relu => "ReLU",
        Activation::Gelu => "GELU (tanh approximation)",
        Activation::Swiglu => "SwiGLU (Llama)",
    }
}

/// Where the norms sit, in words: the settings' menu labels.
pub fn norm_name(n: Norm) -> &'static str {
    match n {
        Norm::Post => "Post-norm (original)",
        Norm::Pre => "Pre-norm (GPT-2, Llama)",
    }
}

/// The stage's title for the settings in `c`: the name, with what the settings do to it where
/// they depart from standard attention or switch the stage off.
pub fn stage_title(stage: Stage, c: &Config, w: Wiring) -> String {
    match stage {
        Stage::Scores if w.rope => "Scores Q̃ₕK̃ₕᵀ (rotary)".into(),
        Stage::SplitHeads if c.grouped() && c.n_kv_heads() == 1 => {
            "Split into heads (one shared K, V)".into()
        }
        Stage::SplitHeads if c.grouped() => format!(
            "Split into heads ({} share {} K, V)",
            c.n_heads,
            c.n_kv_heads()
        ),
        Stage::Mask if c.causal && !w.cross && c.window.is_some() => {
            format!("Causal mask, window W = {}", c.window.unwrap_or_default())
        }
        Stage::Mask if w.cross => "Causal mask: off (cross-attention)".into(),
        Stage::Activation => format!("Activation: {}", activation_name(w.activation)),
        Stage::Norm1 if w.norm_type == crate::attention::NormType::RmsNorm => "RMSNorm N₁".into(),
        Stage::Norm2 if w.norm_type == crate::attention::NormType::RmsNorm => "RMSNorm N₂".into(),
        Stage::Scale => match c.scale {
            ScaleMode::SqrtHeadDim => "Scale ÷√d_k".into(),
            ScaleMode::SqrtSeqLen if w.cross => "Scale ÷√src_len (a common mistake)".into(),
            ScaleMode::SqrtSeqLen => "Scale ÷√seq_len (a common mistake)".into(),
            ScaleMode::None => "Scale: off (no scaling)".into(),
        },
        Stage::Mask if !c.causal => "Causal mask: off".into(),
        Stage::Softmax if c.temperature != 1.0 => {
            format!("Softmax at temperature T = {}", c.temperature)
        }
        _ => stage_name(stage).into(),
    }
}

/// The formula in plain Unicode text, for the settings in `c`. Heads, rows and columns count
/// from 1, like the labels beside the pictures.
pub fn stage_formula(stage: Stage, c: &Config, w: Wiring) -> String {
    let (n_in, n_sum) = norm_inputs(w);
    let ln = |n: &str, sub: &str, of: &str| match w.norm_type {
        crate::attention::NormType::LayerNorm => {
            format!("{n} = LN{sub}({of}) = ({of} − μ) / √(σ² + ε) · γ{sub} + β{sub}, per row")
        }
        crate::attention::NormType::RmsNorm => {
            format!("{n} = RMSNorm{sub}({of}) = {of} / √(mean({of}²) + ε) · γ{sub}, per row")
        }
    };
    match stage {
        Stage::Input if w.cross && c.positional_encoding => {
            "X = E + P,  X_src = E_src + P_src".into()
        }
        Stage::Input if w.cross => "X = E,  X_src = E_src".into(),
        Stage::Input if c.positional_encoding => "X = E + P".into(),
        Stage::Input => "X = E".into(),
        Stage::Projection => format!(
            "Q = {q}·W_q,  K = {k}·W_k,  V = {k}·W_v",
            q = w.query_input(),
            k = w.key_input()
        ),
        Stage::SplitHeads if c.grouped() => format!(
            "Qₕ = columns (h−1)·d_k + 1 … h·d_k of Q;  Kₕ, Vₕ = key/value head g's columns of K, V, g = ⌈h / {}⌉",
            c.n_heads / c.n_kv_heads()
        ),
        Stage::SplitHeads => "Qₕ = columns (h−1)·d_k + 1 … h·d_k of Q,  likewise Kₕ, Vₕ".into(),
        Stage::Rotary => {
            let pair = match c.rope.map(|r| r.pairing).unwrap_or_default() {
                crate::attention::Pairing::Half => "(a, b) = columns (i, i + d_k/2)",
                crate::attention::Pairing::Interleaved => "(a, b) = columns (2i, 2i + 1)",
            };
            format!(
                "Q̃ₕ[p, a] = Qₕ[p, a]·cos φ − Qₕ[p, b]·sin φ,  Q̃ₕ[p, b] = Qₕ[p, a]·sin φ + Qₕ[p, b]·cos φ,  φ = p·θ^(−2i/d_k),  {pair},  i = 0 … d_k/2 − 1 (columns counted from 0);  likewise K̃ₕ"
            )
        }
        Stage::Scores if w.rope => "Sₕ = Q̃ₕ·K̃ₕᵀ".into(),
        Stage::Scores => "Sₕ = Qₕ·Kₕᵀ".into(),
        Stage::Scale => match c.scale {
            ScaleMode::SqrtHeadDim => "Zₕ = Sₕ / √d_k".into(),
            ScaleMode::SqrtSeqLen if w.cross => "Zₕ = Sₕ / √src_len".into(),
            ScaleMode::SqrtSeqLen => "Zₕ = Sₕ / √seq_len".into(),
            ScaleMode::None => "Zₕ = Sₕ".into(),
        },
        Stage::Mask if c.causal && !w.cross && c.window.is_some() => format!(
            "Mₕ[i, j] = −∞ if j > i or i − j ≥ {}, else Zₕ[i, j]",
            c.window.unwrap_or_default()
        ),
        Stage::Mask if c.causal && !w.cross => "Mₕ[i, j] = −∞ if j > i, else Zₕ[i, j]".into(),
        Stage::Mask => "Mₕ = Zₕ".into(),
        Stage::Softmax if c.temperature != 1.0 => {
            "Aₕ[i, j] = exp(Mₕ[i, j] / T) / Σⱼ′ exp(Mₕ[i, j′] / T)".into()
        }
        Stage::Softmax => "Aₕ[i, j] = exp(Mₕ[i, j]) / Σⱼ′ exp(Mₕ[i, j′])".into(),
        Stage::WeightedSum => "Cₕ = Aₕ·Vₕ".into(),
        // One head has no C₂ to show, two heads no "…".
        Stage::Concat => match c.n_heads {
            1 => "C = C₁".into(),
            2 => "C = [C₁ | C₂]".into(),
            _ => "C = [C₁ | C₂ | … | C_{n_heads}]".into(),
        },
        Stage::OutputProjection => "Y = C·W_o".into(),
        Stage::Residual1 => "R₁ = X + Y".into(),
        Stage::Norm1 => ln("N₁", "₁", n_in),
        Stage::Hidden => format!("H = {}·W₁ + b₁", ffn_input(w)),
        Stage::Activation => match w.activation {
            Activation::Relu => "G = ReLU(H) = max(H, 0), cell by cell".into(),
            Activation::Gelu => {
                "G = 0.5·H·(1 + tanh(√(2/π)·(H + 0.044715·H³))) ≈ H·Φ(H), cell by cell".into()
            }
            Activation::Swiglu => format!(
                "G = SiLU({}·W_gate) ⊙ H, SiLU(z) = z/(1 + e^(−z)), cell by cell",
                ffn_input(w)
            ),
        },
        Stage::FeedForward => "F = G·W₂ + b₂".into(),
        Stage::Residual2 => format!("R₂ = {} + F", residual_2_input(w)),
        Stage::Norm2 => ln("N₂", "₂", n_sum),
        Stage::Tiles => super::running::tiles_formula(),
        Stage::Decode => super::running::decode_formula(c, w),
        // The backward stages' formulas follow the loss too: `back_formula` is the one shown.
        _ => super::backward::back_formula(stage, c, w, crate::attention::LossKind::Pattern),
    }
}

/// What the two LayerNorms read, N₁'s and N₂'s: X and R₁ in pre-norm, R₁ and R₂ in post-norm.
pub(super) fn norm_inputs(w: Wiring) -> (&'static str, &'static str) {
    match w.block {
        Some(Norm::Pre) => ("X", "R₁"),
        _ => ("R₁", "R₂"),
    }
}

/// What the feed-forward network reads: N₁ after a post-norm add & norm, N₂ in pre-norm.
pub(super) fn ffn_input(w: Wiring) -> &'static str {
    if w.block == Some(Norm::Pre) {
        "N₂"
    } else {
        "N₁"
    }
}

/// What F is added to: N₁ in post-norm, R₁ in pre-norm.
pub(super) fn residual_2_input(w: Wiring) -> &'static str {
    if w.block == Some(Norm::Pre) {
        "R₁"
    } else {
        "N₁"
    }
}

/// `<msub><mi>{base}</mi><mn>{n}</mn></msub>`.
fn msub_n(base: &str, n: usize) -> String {
    format!("<msub><mi>{base}</mi><mn>{n}</mn></msub>")
}

/// A symbol such as `R₁`, `X` or `X_src` as MathML.
fn symbol_mathml(symbol: &str) -> String {
    match symbol {
        "N₁" => msub_n("N", 1),
        "N₂" => msub_n("N", 2),
        "R₁" => msub_n("R", 1),
        "R₂" => msub_n("R", 2),
        "X_src" => "<msub><mi>X</mi><mtext>src</mtext></msub>".into(),
        other => format!("<mi>{other}</mi>"),
    }
}

/// `N = (S − μ) / √(σ² + ε) · γ + β` as MathML, for norm `n` reading `of`.
fn layer_norm_mathml(n: usize, of: &str) -> String {
    let of = symbol_mathml(of);
    format!(
        "{}<mo>=</mo><mfrac><mrow>{of}<mo>−</mo><mi>μ</mi></mrow><msqrt><msup><mi>σ</mi><mn>2</mn></msup><mo>+</mo><mi>ε</mi></msqrt></mfrac><mo>·</mo>{}<mo>+</mo>{}",
        msub_n("N", n),
        msub_n("γ", n),
        msub_n("β", n)
    )
}

/// `N = S / √(mean(S²) + ε) · γ` as MathML, for RMSNorm `n` reading `of`.
fn rms_norm_mathml(n: usize, of: &str) -> String {
    let of = symbol_mathml(of);
    format!(
        "{}<mo>=</mo><mfrac>{of}<msqrt><mi>mean</mi><mo>(</mo><msup>{of}<mn>2</mn></msup><mo>)</mo><mo>+</mo><mi>ε</mi></msqrt></mfrac><mo>·</mo>{}",
        msub_n("N", n),
        msub_n("γ", n)
    )
}

/// `<msub><mi>{base}</mi><mi>{sub}</mi></msub>`.
fn msub(base: &str, sub: &str) -> String {
    format!("<msub><mi>{base}</mi><mi>{sub}</mi></msub>")
}

/// What stands between two equations of one formula in MathML: a comma and a space.
pub(crate) const EQUATION_SEPARATOR: &str = "<mo>,</mo><mspace width=\"1em\"/>";

/// The equations of a formula in MathML (the inside of a `<math>` element), each the inside of
/// a `<math>` element of its own, all but the last ending in the comma that separated them: a
/// page that cannot scroll sets them side by side and breaks the line between them.
pub fn formula_equations(mathml: &str) -> Vec<String> {
    let parts: Vec<&str> = mathml.split(EQUATION_SEPARATOR).collect();
    let last = parts.len() - 1;
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            if i < last {
                format!("{part}<mo>,</mo>")
            } else {
                (*part).to_string()
            }
        })
        .collect()
}

/// Equation `i` of a formula in MathML, alone (the inside of a `<math>` element); `None` past
/// the last.
pub fn formula_equation(mathml: &str, i: usize) -> Option<String> {
    mathml.split(EQUATION_SEPARATOR).nth(i).map(str::to_string)
}

/// Half `i` (0 or 1) of a formula's equations in MathML, as one formula: the first half's or
/// the second's (∂L/∂Qₕ's equations or ∂L/∂Kₕ's); `None` past the second.
pub fn formula_half(mathml: &str, i: usize) -> Option<String> {
    let equations: Vec<&str> = mathml.split(EQUATION_SEPARATOR).collect();
    let half = equations.len().div_ceil(2);
    equations
        .chunks(half)
        .nth(i)
        .map(|part| part.join(EQUATION_SEPARATOR))
}

/// The formula as presentation MathML (the inside of a `<math>` element), for the settings in
/// `c`: the same formula as [`stage_formula`].
pub fn stage_formula_mathml(stage: Stage, c: &Config, w: Wiring) -> String {
    let (dk, ij, ijp) = (
        msub("d", "k"),
        "<mrow><mi>i</mi><mi>j</mi></mrow>",
        "<mrow><mi>i</mi><msup><mi>j</mi><mo>′</mo></msup></mrow>",
    );
    let sep = EQUATION_SEPARATOR;
    match stage {
        Stage::Input => {
            let one = |x: &str, e: &str, p: &str| {
                if c.positional_encoding {
                    format!("{x}<mo>=</mo>{e}<mo>+</mo>{p}")
                } else {
                    format!("{x}<mo>=</mo>{e}")
                }
            };
            let own = one("<mi>X</mi>", "<mi>E</mi>", "<mi>P</mi>");
            if w.cross {
                let src = |m: &str| format!("<msub><mi>{m}</mi><mtext>src</mtext></msub>");
                format!("{own}{sep}{}", one(&src("X"), &src("E"), &src("P")))
            } else {
                own
            }
        }
        Stage::Projection => ["q", "k", "v"]
            .iter()
            .zip(["Q", "K", "V"])
            .map(|(wn, m)| {
                let input = if m == "Q" { w.query_input() } else { w.key_input() };
                format!("<mi>{m}</mi><mo>=</mo>{}{}", symbol_mathml(input), msub("W", wn))
            })
            .collect::<Vec<_>>()
            .join(sep),
        Stage::SplitHeads if c.grouped() => {
            let q = format!(
                "{}<mo>=</mo><mi>Q</mi><mo>[</mo><mo>:</mo><mo>,</mo><mo>(</mo><mi>h</mi><mo>−</mo><mn>1</mn><mo>)</mo><mo>·</mo>{dk}<mo>+</mo><mn>1</mn><mo>…</mo><mi>h</mi><mo>·</mo>{dk}<mo>]</mo>",
                msub("Q", "h")
            );
            let kv = ["K", "V"]
                .map(|m| {
                    format!(
                        "{}<mo>=</mo><mi>{m}</mi><mo>[</mo><mo>:</mo><mo>,</mo><mo>(</mo><mi>g</mi><mo>−</mo><mn>1</mn><mo>)</mo><mo>·</mo>{dk}<mo>+</mo><mn>1</mn><mo>…</mo><mi>g</mi><mo>·</mo>{dk}<mo>]</mo>",
                        msub(m, "h")
                    )
                })
                .join(sep);
            format!(
                "{q}{sep}{kv}{sep}<mi>g</mi><mo>=</mo><mo>⌈</mo><mi>h</mi><mo>/</mo><mn>{}</mn><mo>⌉</mo>",
                c.n_heads / c.n_kv_heads()
            )
        }
        Stage::SplitHeads => ["Q", "K", "V"]
            .map(|m| {
                format!(
                    "{}<mo>=</mo><mi>{m}</mi><mo>[</mo><mo>:</mo><mo>,</mo><mo>(</mo><mi>h</mi><mo>−</mo><mn>1</mn><mo>)</mo><mo>·</mo>{dk}<mo>+</mo><mn>1</mn><mo>…</mo><mi>h</mi><mo>·</mo>{dk}<mo>]</mo>",
                    msub(m, "h")
                )
            })
            .join(sep),
        Stage::Rotary => format!(
            "{}<mo>=</mo><mi>rot</mi><mo>(</mo>{}<mo>,</mo><mi>p</mi><mo>)</mo>{sep}{}<mo>=</mo><mi>rot</mi><mo>(</mo>{}<mo>,</mo><mi>p</mi><mo>)</mo>{sep}<mi>φ</mi><mo>=</mo><mi>p</mi><mo>·</mo><msup><mi>θ</mi><mrow><mo>−</mo><mn>2</mn><mi>i</mi><mo>/</mo>{dk}</mrow></msup>",
            msub("Q̃", "h"),
            msub("Q", "h"),
            msub("K̃", "h"),
            msub("K", "h")
        ),
        Stage::Scores if w.rope => format!(
            "{}<mo>=</mo>{}<msubsup><mi>K̃</mi><mi>h</mi><mi>T</mi></msubsup>",
            msub("S", "h"),
            msub("Q̃", "h")
        ),
        Stage::Scores => format!(
            "{}<mo>=</mo>{}<msubsup><mi>K</mi><mi>h</mi><mi>T</mi></msubsup>",
            msub("S", "h"),
            msub("Q", "h")
        ),
        Stage::Scale => {
            let (z, s) = (msub("Z", "h"), msub("S", "h"));
            match c.scale {
                ScaleMode::SqrtHeadDim => {
                    format!("{z}<mo>=</mo><mfrac>{s}<msqrt>{dk}</msqrt></mfrac>")
                }
                ScaleMode::SqrtSeqLen => format!(
                    "{z}<mo>=</mo><mfrac>{s}<msqrt><mtext>{}</mtext></msqrt></mfrac>",
                    if w.cross { "src_len" } else { "seq_len" }
                ),
                ScaleMode::None => format!("{z}<mo>=</mo>{s}"),
            }
        }
        Stage::Mask if c.causal && !w.cross && c.window.is_some() => format!(
            "<msub><mi>M</mi>{ij}</msub><mo>=</mo><mrow><mo>{{</mo><mtable><mtr><mtd><mo>−</mo><mi>∞</mi></mtd><mtd><mtext>if </mtext><mi>j</mi><mo>&gt;</mo><mi>i</mi><mtext>\u{a0}or\u{a0}</mtext><mi>i</mi><mo>−</mo><mi>j</mi><mo>≥</mo><mn>{}</mn></mtd></mtr><mtr><mtd><msub><mi>Z</mi>{ij}</msub></mtd><mtd><mtext>otherwise</mtext></mtd></mtr></mtable></mrow>",
            c.window.unwrap_or_default()
        ),
        Stage::Mask if c.causal && !w.cross => format!(
            "<msub><mi>M</mi>{ij}</msub><mo>=</mo><mrow><mo>{{</mo><mtable><mtr><mtd><mo>−</mo><mi>∞</mi></mtd><mtd><mtext>if </mtext><mi>j</mi><mo>&gt;</mo><mi>i</mi></mtd></mtr><mtr><mtd><msub><mi>Z</mi>{ij}</msub></mtd><mtd><mtext>otherwise</mtext></mtd></mtr></mtable></mrow>"
        ),
        Stage::Mask => format!("{}<mo>=</mo>{}", msub("M", "h"), msub("Z", "h")),
        Stage::Softmax => {
            let over_t = if c.temperature != 1.0 {
                "<mo>/</mo><mi>T</mi>"
            } else {
                ""
            };
            format!(
                "<msub><mi>A</mi>{ij}</msub><mo>=</mo><mfrac><mrow><mi>exp</mi><mo>(</mo><msub><mi>M</mi>{ij}</msub>{over_t}<mo>)</mo></mrow><mrow><munder><mo>∑</mo><msup><mi>j</mi><mo>′</mo></msup></munder><mi>exp</mi><mo>(</mo><msub><mi>M</mi>{ijp}</msub>{over_t}<mo>)</mo></mrow></mfrac>"
            )
        }
        Stage::WeightedSum => format!(
            "{}<mo>=</mo>{}{}",
            msub("C", "h"),
            msub("A", "h"),
            msub("V", "h")
        ),
        Stage::Concat => {
            let heads = match c.n_heads {
                1 => msub_n("C", 1),
                2 => format!("<mo>[</mo>{}<mo>|</mo>{}<mo>]</mo>", msub_n("C", 1), msub_n("C", 2)),
                _ => format!(
                    "<mo>[</mo>{}<mo>|</mo>{}<mo>|</mo><mo>…</mo><mo>|</mo><msub><mi>C</mi><msub><mi>n</mi><mtext>heads</mtext></msub></msub><mo>]</mo>",
                    msub_n("C", 1),
                    msub_n("C", 2)
                ),
            };
            format!("<mi>C</mi><mo>=</mo>{heads}")
        }
        Stage::OutputProjection => format!("<mi>Y</mi><mo>=</mo><mi>C</mi>{}", msub("W", "o")),
        Stage::Residual1 => format!("{}<mo>=</mo><mi>X</mi><mo>+</mo><mi>Y</mi>", msub_n("R", 1)),
        Stage::Norm1 if w.norm_type == crate::attention::NormType::RmsNorm => {
            rms_norm_mathml(1, norm_inputs(w).0)
        }
        Stage::Norm1 => layer_norm_mathml(1, norm_inputs(w).0),
        Stage::Hidden => format!(
            "<mi>H</mi><mo>=</mo>{}{}<mo>+</mo>{}",
            symbol_mathml(ffn_input(w)),
            msub_n("W", 1),
            msub_n("b", 1)
        ),
        Stage::Activation => match w.activation {
            Activation::Relu => "<mi>G</mi><mo>=</mo><mi>max</mi><mo>(</mo><mi>H</mi><mo>,</mo><mn>0</mn><mo>)</mo>".into(),
            Activation::Swiglu => format!(
                "<mi>G</mi><mo>=</mo><mi>SiLU</mi><mo>(</mo>{}{}<mo>)</mo><mo>⊙</mo><mi>H</mi>",
                symbol_mathml(ffn_input(w)),
                msub("W", "gate")
            ),
            Activation::Gelu => "<mi>G</mi><mo>=</mo><mn>0.5</mn><mi>H</mi><mo>(</mo><mn>1</mn><mo>+</mo><mi>tanh</mi><mo>(</mo><msqrt><mfrac><mn>2</mn><mi>π</mi></mfrac></msqrt><mo>(</mo><mi>H</mi><mo>+</mo><mn>0.044715</mn><msup><mi>H</mi><mn>3</mn></msup><mo>)</mo><mo>)</mo><mo>)</mo><mo>≈</mo><mi>H</mi><mi>Φ</mi><mo>(</mo><mi>H</mi><mo>)</mo>".into(),
        },
        Stage::FeedForward => format!(
            "<mi>F</mi><mo>=</mo><mi>G</mi>{}<mo>+</mo>{}",
            msub_n("W", 2),
            msub_n("b", 2)
        ),
        Stage::Residual2 => format!(
            "{}<mo>=</mo>{}<mo>+</mo><mi>F</mi>",
            msub_n("R", 2),
            symbol_mathml(residual_2_input(w))
        ),
        Stage::Norm2 if w.norm_type == crate::attention::NormType::RmsNorm => {
            rms_norm_mathml(2, norm_inputs(w).1)
        }
        Stage::Norm2 => layer_norm_mathml(2, norm_inputs(w).1),
        Stage::Tiles => super::running::tiles_formula_mathml(),
        Stage::Decode => super::running::decode_formula_mathml(c, w),
        _ => super::backward::back_formula_mathml(stage, c, w, crate::attention::LossKind::Pattern),
    }
}

/// Where the stage is among those shown: `Stage 3 of 10`, or `Backward 3 of 8`.
pub fn stage_progress(stage: Stage, block: impl Into<Order>) -> String {
    if stage.is_backward() {
        return super::backward::back_progress(stage);
    }
    let block = block.into();
    let seq = Stage::sequence(block);
    format!(
        "Stage {} of {}",
        stage.position(block).unwrap_or(0) + 1,
        seq.len()
    )
}

/// The shapes of a stage's operands and result, in words and numbers.
pub fn shape_text(stage: Stage, outline: &Outline) -> String {
    let c = &outline.config;
    let (n_heads, dk, d) = (c.n_heads, c.head_dim(), c.d_model);
    let (s, n) = (outline.seq_len(), outline.n_keys());
    let w = outline.wiring;
    // Columns are keys: the source's tokens in cross-attention.
    let keys = if w.cross { "src_len" } else { "seq_len" };
    let f = outline.d_ff;
    let rows = format!("seq_len × d_model = {s} × {d}");
    let heads = match n_heads {
        1 => "1 head".to_string(),
        n => format!("{n} heads"),
    };
    match stage {
        Stage::Input if w.cross => format!("X: {rows}; X_src: src_len × d_model = {n} × {d}"),
        Stage::Input => format!("X: {rows}"),
        Stage::Projection if w.cross => format!(
            "{q} ({s} × {d}) · W_q ({d} × {d}) = Q ({s} × {d}); X_src ({n} × {d}) · W_k, W_v = K, V (src_len × d_model = {n} × {d})",
            q = w.query_input()
        ),
        Stage::Projection if c.grouped() => format!(
            "{q} ({s} × {d}) · W_q ({d} × {d}) = Q ({rows}); · W_k, W_v ({d} × {kv}) = K, V ({s} × {kv})",
            q = w.query_input(),
            kv = c.kv_width()
        ),
        Stage::Projection => format!(
            "{q} ({s} × {d}) · W ({d} × {d}) = Q, K, V ({rows})",
            q = w.query_input()
        ),
        Stage::SplitHeads if c.grouped() => format!(
            "Q ({s} × {d}) → {heads} × Qₕ (seq_len × d_k = {s} × {dk}); K, V ({n} × {kv}) → {g} × ({n} × {dk}), each read by {per} query heads",
            kv = c.kv_width(),
            g = match c.n_kv_heads() {
                1 => "1 key/value head".to_string(),
                n => format!("{n} key/value heads"),
            },
            per = n_heads / c.n_kv_heads()
        ),
        Stage::SplitHeads => format!(
            "Q ({s} × {d}) → {heads} × Qₕ (seq_len × d_k = {s} × {dk}); K, V ({n} × {d}) → Kₕ, Vₕ ({n} × {dk})"
        ),
        Stage::Rotary => format!(
            "Qₕ ({s} × {dk}) → Q̃ₕ ({s} × {dk}); Kₕ ({n} × {dk}) → K̃ₕ ({n} × {dk}); {} a row",
            match dk / 2 {
                1 => "1 pair of columns".to_string(),
                pairs => format!("{pairs} pairs of columns"),
            }
        ),
        Stage::Scores if w.rope => {
            format!("Q̃ₕ ({s} × {dk}) · K̃ₕᵀ ({dk} × {n}) = Sₕ (seq_len × {keys} = {s} × {n})")
        }
        Stage::Scores => {
            format!("Qₕ ({s} × {dk}) · Kₕᵀ ({dk} × {n}) = Sₕ (seq_len × {keys} = {s} × {n})")
        }
        Stage::Scale | Stage::Mask | Stage::Softmax => {
            format!("seq_len × {keys} = {s} × {n}, per head")
        }
        Stage::WeightedSum => {
            format!("Aₕ ({s} × {n}) · Vₕ ({n} × {dk}) = Cₕ (seq_len × d_k = {s} × {dk})")
        }
        Stage::Concat => {
            format!("{n_heads} × Cₕ ({s} × {dk}) side by side = C ({rows})")
        }
        Stage::OutputProjection => {
            format!("C ({s} × {d}) · W_o ({d} × {d}) = Y ({rows})")
        }
        Stage::Residual1 | Stage::Residual2 => format!("{s} × {d} + {s} × {d} = {rows}"),
        Stage::Norm1 | Stage::Norm2 if w.norm_type == crate::attention::NormType::RmsNorm => {
            format!("{rows}, each row normalised on its own; γ: 1 × {d}")
        }
        Stage::Norm1 | Stage::Norm2 => {
            format!("{rows}, each row normalised on its own; γ and β: 1 × {d}")
        }
        Stage::Hidden => format!(
            "{s} × {d} · W₁ ({d} × {f}) + b₁ (1 × {f}) = H (seq_len × d_ff = {s} × {f})"
        ),
        Stage::Activation if w.activation.gated() => format!(
            "H and the gate {}·W_gate ({d} × {f}) → G: seq_len × d_ff = {s} × {f}, cell by cell",
            ffn_input(w)
        ),
        Stage::Activation => format!("H → G: seq_len × d_ff = {s} × {f}, cell by cell"),
        Stage::FeedForward => format!(
            "G ({s} × {f}) · W₂ ({f} × {d}) + b₂ (1 × {d}) = F ({rows})"
        ),
        Stage::Tiles => super::running::tiles_shapes(outline, None),
        Stage::Decode => super::running::decode_shapes(outline),
        _ => super::backward::back_shape_text(stage, outline, crate::attention::LossKind::Pattern),
    }
}

#[cfg(test)]
mod tests {
    use super::super::number::format_value;
    use super::*;
    use crate::attention::Wiring;

    const W: Wiring = Wiring {
        cross: false,
        block: None,
        activation: crate::attention::Activation::Relu,
        rope: false,
        norm_type: crate::attention::NormType::LayerNorm,
    };
    use crate::attention::{forward, Config, Init, Inputs, Trace, Weights};

    fn trace(scale: ScaleMode) -> Trace {
        let config = Config {
            scale,
            ..Config::default()
        };
        let weights = Weights::new(Init::Default, config.d_model);
        forward(&Inputs::from_sentence("I am hungry", config, weights).unwrap()).unwrap()
    }

    #[test]
    fn every_stage_is_named_and_explained() {
        for stage in Stage::ALL {
            assert!(
                stage_explanation(stage).len() > 100,
                "{stage:?} is barely explained"
            );
            assert!(!stage_name(stage).is_empty());
            assert!(!stage_formula(stage, &Config::default(), W).is_empty());
            assert!(stage_formula_mathml(stage, &Config::default(), W).starts_with('<'));
        }
    }

    #[test]
    fn the_rail_names_turned_scores_and_rms_norms() {
        let whole = stage_name_in;
        let plain = Order::default();
        for s in Stage::EVERY {
            assert_eq!(whole(s, plain), stage_name(s));
        }
        let modern = Order {
            rope: true,
            rms: true,
            block: Some(Norm::Pre),
            ..Order::default()
        };
        assert_eq!(whole(Stage::Scores, modern), "Scores Q̃ₕK̃ₕᵀ");
        assert_eq!(whole(Stage::BackScores, modern), "Back through Q̃ₕK̃ₕᵀ");
        assert_eq!(whole(Stage::Norm1, modern), "RMSNorm N₁");
        assert_eq!(whole(Stage::Norm2, modern), "RMSNorm N₂");
        assert_eq!(whole(Stage::Softmax, modern), "Softmax");
    }

    #[test]
    fn a_formula_splits_into_its_equations_keeping_their_commas() {
        let projection = stage_formula_mathml(Stage::Projection, &Config::default(), W);
        let parts = formula_equations(&projection);
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert!(parts[0].starts_with("<mi>Q</mi>") && parts[0].ends_with("<mo>,</mo>"));
        assert!(parts[1].starts_with("<mi>K</mi>") && parts[1].ends_with("<mo>,</mo>"));
        assert!(parts[2].starts_with("<mi>V</mi>") && !parts[2].ends_with("<mo>,</mo>"));
        // Nothing is lost but the spaces between them.
        assert_eq!(
            parts.concat().len() + 2 * r#"<mspace width="1em"/>"#.len(),
            projection.len()
        );
        let one = stage_formula_mathml(Stage::Softmax, &Config::default(), W);
        assert_eq!(formula_equations(&one), vec![one]);
    }

    #[test]
    fn the_scale_stage_teaches_root_d_k_and_names_the_mistake_as_root_seq_len() {
        let text = stage_explanation(Stage::Scale);
        assert!(text.contains("divides every score by √d_k"), "{text}");
        assert!(text.contains("Dividing by √seq_len"), "{text}");
        assert!(text.contains("√src_len, the number of keys"), "{text}");
        assert!(!text.contains("divisor is the head width"), "{text}");
        assert!(stage_formula(Stage::Scale, &Config::default(), W).contains("√d_k"));
    }

    #[test]
    fn titles_and_formulas_follow_the_settings() {
        let standard = Config::default();
        assert_eq!(stage_formula(Stage::Input, &standard, W), "X = E");
        assert_eq!(stage_title(Stage::Mask, &standard, W), "Causal mask: off");
        assert_eq!(stage_formula(Stage::Mask, &standard, W), "Mₕ = Zₕ");
        assert!(!stage_formula(Stage::Softmax, &standard, W).contains('T'));
        assert!(!stage_formula_mathml(Stage::Softmax, &standard, W).contains("<mi>T</mi>"));
        let changed = Config {
            positional_encoding: true,
            causal: true,
            temperature: 0.5,
            scale: ScaleMode::SqrtSeqLen,
            ..standard
        };
        assert_eq!(stage_formula(Stage::Input, &changed, W), "X = E + P");
        assert_eq!(stage_title(Stage::Mask, &changed, W), "Causal mask");
        assert!(stage_formula(Stage::Mask, &changed, W).contains("−∞ if j > i"));
        assert!(stage_formula(Stage::Softmax, &changed, W).contains("/ T"));
        assert!(stage_formula_mathml(Stage::Softmax, &changed, W).contains("<mi>T</mi>"));
        assert_eq!(
            stage_title(Stage::Softmax, &changed, W),
            "Softmax at temperature T = 0.5"
        );
        assert_eq!(
            stage_title(Stage::Scale, &changed, W),
            "Scale ÷√seq_len (a common mistake)"
        );
        assert_eq!(
            stage_formula(Stage::Scale, &changed, W),
            "Zₕ = Sₕ / √seq_len"
        );
        assert!(stage_formula_mathml(Stage::Scale, &changed, W).contains("seq_len"));
        let unscaled = Config {
            scale: ScaleMode::None,
            ..standard
        };
        assert_eq!(stage_formula(Stage::Scale, &unscaled, W), "Zₕ = Sₕ");
        assert!(!stage_title(Stage::Scale, &unscaled, W).contains('√'));
        assert!(!stage_formula_mathml(Stage::Scale, &unscaled, W).contains("msqrt"));
    }

    #[test]
    fn under_rotary_positions_each_half_of_the_way_back_through_the_scores_turns_its_gradient_back()
    {
        use crate::attention::LossKind;
        let rope = Wiring { rope: true, ..W };
        let f = crate::words::back_formula_mathml(
            Stage::BackScores,
            &Config::default(),
            rope,
            LossKind::Pattern,
        );
        assert_eq!(formula_equations(&f).len(), 4, "{f}");
        for (i, m) in ["Q", "K"].iter().enumerate() {
            let half = formula_half(&f, i).unwrap();
            let other = if i == 0 { "K" } else { "Q" };
            assert_eq!(formula_equations(&half).len(), 2, "{half}");
            // ∂L/∂Q̃ₕ = …, then ∂L/∂Qₕ = rot(∂L/∂Q̃ₕ, −p), and nothing of the other half's.
            let lhs = |x: &str| {
                format!("<mfrac><mrow><mo>∂</mo><mi>L</mi></mrow><mrow><mo>∂</mo><msub><mi>{x}</mi><mi>h</mi></msub></mrow></mfrac><mo>=</mo>")
            };
            assert!(half.starts_with(&lhs(&format!("{m}\u{303}"))), "{half}");
            assert!(half.contains(&format!("{}<mi>rot</mi>", lhs(m))), "{half}");
            assert!(half.contains("<mo>−</mo><mi>p</mi>"), "{half}");
            assert!(!half.contains(&lhs(other)), "{half}");
        }
        assert_eq!(formula_half(&f, 2), None);
        // Without the turn, each half is one equation, as before.
        let plain = crate::words::back_formula_mathml(
            Stage::BackScores,
            &Config::default(),
            W,
            LossKind::Pattern,
        );
        assert_eq!(formula_half(&plain, 1), formula_equation(&plain, 1));
    }

    #[test]
    fn the_split_formula_counts_heads_from_one_like_the_labels() {
        let f = stage_formula(Stage::SplitHeads, &Config::default(), W);
        assert!(f.contains("(h−1)·d_k + 1 … h·d_k"), "{f}");
    }

    #[test]
    fn the_split_formula_cuts_q_k_and_v_in_that_order_one_equation_each() {
        let f = stage_formula_mathml(Stage::SplitHeads, &Config::default(), W);
        let equations = formula_equations(&f);
        assert_eq!(equations.len(), 3, "{f}");
        for (i, m) in ["Q", "K", "V"].iter().enumerate() {
            let alone = formula_equation(&f, i).unwrap();
            assert!(
                alone.starts_with(&format!(
                    "<msub><mi>{m}</mi><mi>h</mi></msub><mo>=</mo><mi>{m}</mi><mo>[</mo>"
                )),
                "{alone}"
            );
        }
    }

    #[test]
    fn progress_counts_stages_from_one() {
        assert_eq!(stage_progress(Stage::Input, None), "Stage 1 of 10");
        assert_eq!(
            stage_progress(Stage::OutputProjection, None),
            "Stage 10 of 10"
        );
    }

    #[test]
    fn shapes_name_the_head_width_for_per_head_stages() {
        let config = Config {
            d_model: 8,
            n_heads: 2,
            ..Config::default()
        };
        let weights = Weights::new(Init::Default, 8);
        let t = forward(&Inputs::from_sentence("a b c d e", config, weights).unwrap()).unwrap();
        assert_eq!(
            shape_text(Stage::Scores, &t.outline()),
            "Qₕ (5 × 4) · Kₕᵀ (4 × 5) = Sₕ (seq_len × seq_len = 5 × 5)"
        );
        assert!(shape_text(Stage::Concat, &t.outline()).contains("5 × 8"));
    }

    #[test]
    fn cross_attention_and_the_block_change_shapes_formulas_and_titles() {
        use crate::attention::{Block, Norm, Source};
        let config = Config::default();
        let weights = Weights::new(Init::Default, 4);
        let mut inputs = Inputs::from_sentence("the cat sat", config, weights).unwrap();
        inputs.source = Some(Source::from_sentence("le chat est assis", 4).unwrap());
        let mut block = Block::new(4, 6);
        block.norm = Norm::Pre;
        inputs.block = Some(block);
        let t = forward(&inputs).unwrap();
        let w = t.wiring();
        assert_eq!(
            shape_text(Stage::Scores, &t.outline()),
            "Qₕ (3 × 2) · Kₕᵀ (2 × 4) = Sₕ (seq_len × src_len = 3 × 4)"
        );
        assert_eq!(
            stage_formula(Stage::Projection, &config, w),
            "Q = N₁·W_q,  K = X_src·W_k,  V = X_src·W_v"
        );
        assert_eq!(stage_formula(Stage::Hidden, &config, w), "H = N₂·W₁ + b₁");
        assert_eq!(stage_formula(Stage::Residual2, &config, w), "R₂ = R₁ + F");
        assert!(stage_formula(Stage::Norm1, &config, w).starts_with("N₁ = LN₁(X)"));
        assert_eq!(
            stage_title(Stage::Activation, &config, w),
            "Activation: ReLU"
        );
        assert_eq!(stage_progress(Stage::Norm1, w.block), "Stage 2 of 17");
        assert!(shape_text(Stage::Hidden, &t.outline()).contains("H (seq_len × d_ff = 3 × 6)"));
        // Every block stage has a note with the trace's own numbers; the last one says it is
        // the block's output.
        for &s in t.stages().iter().filter(|s| s.is_block()) {
            assert!(stage_note(s, &t).is_some(), "{s:?}");
            assert!(stage_explanation(s).len() > 100, "{s:?}");
        }
        assert!(stage_note(Stage::Residual2, &t)
            .unwrap()
            .contains("the block's output"));
        let relu_zeros = t
            .block
            .as_ref()
            .unwrap()
            .hidden
            .iter()
            .filter(|v| **v < 0.0)
            .count();
        assert!(stage_note(Stage::Activation, &t)
            .unwrap()
            .starts_with(&format!("{relu_zeros} of H's 18 numbers are negative")));
    }

    #[test]
    fn the_scale_note_gives_the_real_divisor_and_flags_the_mistake() {
        let t = trace(ScaleMode::SqrtHeadDim);
        let note = stage_note(Stage::Scale, &t).unwrap();
        assert!(
            note.starts_with("Here d_k = 2, so every score is divided by √2 ≈ 1.414."),
            "{note}"
        );
        // The learner's own spreads, before and after: divided by exactly √2.
        for (h, head) in t.heads.iter().enumerate() {
            let (before, after) = head.score_spread();
            assert!((before / after - 2f64.sqrt()).abs() < 1e-12);
            let shown = format!(
                "head {}: {} → {}",
                h + 1,
                format_value(before, 2),
                format_value(after, 2)
            );
            assert!(note.contains(&shown), "{note} lacks {shown}");
        }
        let t = trace(ScaleMode::SqrtSeqLen);
        assert!(stage_note(Stage::Scale, &t)
            .unwrap()
            .contains("common mistake"));
    }

    #[test]
    fn the_hidden_note_says_widened_or_narrowed_as_d_ff_is() {
        use crate::attention::Block;
        let config = Config::default();
        let mut inputs = Inputs::from_sentence(
            "I am hungry",
            config,
            Weights::new(Init::Default, config.d_model),
        )
        .unwrap();
        inputs.block = Some(Block::new(4, 2));
        let t = forward(&inputs).unwrap();
        let note = stage_note(Stage::Hidden, &t).unwrap();
        assert!(note.contains("is narrowed to 2 numbers"), "{note}");
        inputs.block = Some(Block::new(4, 16));
        let t = forward(&inputs).unwrap();
        assert!(stage_note(Stage::Hidden, &t)
            .unwrap()
            .contains("is widened to 16 numbers"));
        // With no negative number in H, ReLU changes nothing, and the note says so.
        let mut block = Block::new(4, 2);
        block.b_1 = crate::attention::Matrix::from_element(1, 2, 100.0);
        inputs.block = Some(block);
        let t = forward(&inputs).unwrap();
        assert!(stage_note(Stage::Activation, &t)
            .unwrap()
            .starts_with("None of H's 6 numbers is negative"));
    }

    #[test]
    fn the_rail_name_parts_make_the_full_name() {
        for stage in Stage::ALL {
            let (before, shown, after) = stage_rail_name(stage);
            assert_eq!(format!("{before}{shown}{after}"), stage_name(stage));
            assert!(!shown.is_empty());
        }
    }
}
