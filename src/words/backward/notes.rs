//! The note under a backward stage: what the loss and the settings on screen do there, with the
//! current numbers, named by the cells the heatmaps show.

use super::super::matrices::cell_name;
use super::super::number::format_value;
use super::super::stages::PARAGRAPH_BREAK;
use super::{divisor_symbol, unreached_text};
use crate::attention::{
    BackMatrix, BackwardPass, HeadGrad, LossKind, Matrix, MatrixId, Norm, ScaleMode, Stage, Trace,
};

/// Decimals of a gradient on the heatmaps and in the notes.
pub const GRADIENT_DECIMALS: usize = 3;

/// A gradient as the heatmaps show it.
pub(crate) fn g3(v: f64) -> String {
    format_value(v, GRADIENT_DECIMALS)
}

/// A forward number (a weight, a target) as the heatmaps show it.
pub(crate) fn f2(v: f64) -> String {
    format_value(v, 2)
}

/// The cell of `m` largest in size, first in reading order among equals; `None` when empty.
fn largest(m: &Matrix) -> Option<(usize, usize, f64)> {
    let mut best: Option<(usize, usize, f64)> = None;
    for i in 0..m.nrows() {
        for j in 0..m.ncols() {
            let v = m[(i, j)];
            if best.is_none_or(|(_, _, b)| v.abs() > b.abs()) {
                best = Some((i, j, v));
            }
        }
    }
    best
}

/// "∂L/∂A₁[am, I] ≈ −0.542": the largest cell of a gradient, named and valued.
fn largest_text(trace: &Trace, pass: &BackwardPass, m: BackMatrix) -> Option<(String, f64)> {
    let (i, j, v) = largest(m.get(pass)?)?;
    Some((
        format!("{} = {}", cell_name(trace, MatrixId::Back(m), i, j), g3(v)),
        v,
    ))
}

/// What the sign of a gradient says, without claiming where training will move the number.
fn sign_text(v: f64) -> &'static str {
    if v > 0.0 {
        "positive: L rises as that number rises"
    } else if v < 0.0 {
        "negative: L falls as that number rises"
    } else {
        "0: L does not change as that number changes"
    }
}

/// The note of backward stage `stage` for `pass`, with the current numbers; `None` for a
/// forward stage.
pub fn back_note(stage: Stage, trace: &Trace, pass: &BackwardPass) -> Option<String> {
    if !stage.is_backward() {
        return None;
    }
    let kind = pass.loss_kind();
    if let Some(text) = unreached_text(stage, kind) {
        return Some(text.to_string());
    }
    let c = &trace.config;
    let w = trace.wiring();
    let n_heads = trace.heads.len();
    let s = trace.seq_len();
    let g = &pass.gradients;
    let pattern = kind == LossKind::Pattern;
    let mut note: Vec<String> = Vec::new();
    match stage {
        Stage::BackLoss if pattern => {
            note.push(format!(
                "L = {}: the cross-entropy of the weights against the targets, averaged over n_heads·n = {n_heads}·{s} = {} rows. It is smallest when every head's weights equal its target: 0 for a target that puts all of a row's weight on one key.",
                g3(pass.gradients.loss),
                n_heads * s
            ));
            if let Some((text, _)) =
                largest_text(trace, pass, BackMatrix::Head(0, HeadGrad::Weights))
            {
                note.push(format!(
                    "∂L/∂Aₕ is −A*/({}·A) where the target puts weight, and 0 where it puts none: the less weight a wanted key gets, the larger the gradient. Head 1's largest is {text}.",
                    n_heads * s
                ));
            }
        }
        Stage::BackLoss => {
            let d = c.d_model;
            note.push(format!(
                "L = {}: the mean of the n·d_model = {s}·{d} = {} squared differences between Y and Y*.",
                g3(g.loss),
                s * d
            ));
            if let Some((text, v)) = largest_text(trace, pass, BackMatrix::Output) {
                note.push(format!(
                    "∂L/∂Y = 2·(Y − Y*)/{}: each cell is the difference, scaled. The largest is {text}, {}.",
                    s * d,
                    sign_text(v)
                ));
            }
        }
        Stage::BackOutput => {
            if let Some((text, _)) = largest_text(trace, pass, BackMatrix::WO) {
                note.push(format!("The largest cell of ∂L/∂W_o is {text}."));
            }
            note.push(format!(
                "∂L/∂C is cut into the heads' columns, d_k = {} each: head h gets ∂L/∂Cₕ.",
                c.head_dim()
            ));
        }
        Stage::BackWeightedSum => {
            if c.causal && !w.cross {
                note.push("Under the causal mask the hidden cells of ∂L/∂Aₕ are 0: the mask holds those weights at 0 whatever the scores, so nothing flows through them.".into());
            }
            if let Some((text, v)) =
                largest_text(trace, pass, BackMatrix::Head(0, HeadGrad::Weights))
            {
                note.push(format!(
                    "Head 1's largest weight gradient is {text}, {}.",
                    sign_text(v)
                ));
            }
        }
        Stage::BackSoftmax => {
            let t = c.temperature;
            if pattern {
                let divisor = (n_heads * s) as f64 * t;
                let t_part = if t != 1.0 {
                    format!("·T = {n_heads}·{s}·{t}")
                } else {
                    format!(" = {n_heads}·{s}")
                };
                note.push(format!(
                    "For the pattern loss the softmax's backward becomes (A − A*)/(n_heads·n{t_part}), so each cell is how far the weight is from its target, divided by {}: positive where the head gives a key more weight than the target, negative where it gives less.",
                    format_value(divisor, if divisor.fract() == 0.0 { 0 } else { 2 })
                ));
            } else if t != 1.0 {
                note.push(format!(
                    "At T = {t} every cell is divided by T once more, as the scores were."
                ));
            }
            if let Some((text, v)) =
                largest_text(trace, pass, BackMatrix::Head(0, HeadGrad::Masked))
            {
                note.push(format!("Head 1's largest is {text}, {}.", sign_text(v)));
            }
            if c.causal && !w.cross {
                note.push("Masked cells stay 0: their weight is 0, and so is the product.".into());
            }
        }
        Stage::BackScale => {
            let divisor = trace.scale_divisor;
            match (c.scale, divisor_symbol(c, w)) {
                (ScaleMode::None, _) | (_, None) => note.push(
                    "Scaling is off, so the forward pass did not divide the scores and the gradient passes on unchanged: ∂L/∂Sₕ = ∂L/∂Mₕ.".into(),
                ),
                (mode, Some(symbol)) => {
                    let root_of = match mode {
                        ScaleMode::SqrtHeadDim => c.head_dim(),
                        _ => trace.n_keys(),
                    };
                    note.push(format!(
                        "Every cell of ∂L/∂Mₕ is divided by {symbol} = √{root_of} ≈ {}, the divisor the forward pass used.",
                        format_value(divisor, 2)
                    ));
                    if mode == ScaleMode::SqrtSeqLen {
                        note.push("That divisor is the common mistake chosen in Settings; standard attention divides by √d_k.".into());
                    }
                }
            }
            if c.causal && !w.cross {
                let hidden = s * s.saturating_sub(1) / 2;
                note.push(if hidden == 0 {
                    "With one token the mask hides nothing.".into()
                } else {
                    format!(
                        "The {hidden} masked cells of each head are 0: the mask replaced those scores by −∞ whatever they were, so no gradient reaches them."
                    )
                });
            }
        }
        Stage::BackScores => {
            if let Some((text, _)) = largest_text(trace, pass, BackMatrix::Head(0, HeadGrad::Q)) {
                note.push(format!("Head 1's largest query gradient is {text}."));
            }
            if let Some((text, _)) = largest_text(trace, pass, BackMatrix::Head(0, HeadGrad::K)) {
                note.push(format!("Its largest key gradient is {text}."));
            }
        }
        Stage::BackProjection => {
            let (q_in, k_in) = (w.query_input(), w.key_input());
            if q_in != k_in {
                note.push(format!(
                    "The queries read {q_in}, the keys{} read {k_in}: each weight's gradient sums over the rows its own input has.",
                    if pattern { "" } else { " and values" }
                ));
            }
            if let Some((i, j, v)) = largest(&g.d_w_q) {
                let name = cell_name(trace, MatrixId::Back(BackMatrix::WQ), i, j);
                let weight = super::super::matrices::cell_name(
                    trace,
                    MatrixId::Weight(crate::attention::WeightName::Q),
                    i,
                    j,
                );
                let times = if v < 0.0 {
                    format!("({})", g3(v))
                } else {
                    g3(v)
                };
                note.push(format!(
                    "The largest is {name} = {}. A plain SGD step with learning rate η would change {weight} by −η × {times}, against the gradient; Adam's step has the opposite sign of its running average of gradients, not necessarily of this one.",
                    g3(v)
                ));
            }
            if pattern {
                note.push("W_v is not reached by the pattern loss: the weights A do not depend on the values, so ∂L/∂W_v is exactly 0.".into());
            }
        }
        _ => {
            if w.block == Some(Norm::Pre) {
                let reader = if w.cross { "the queries" } else { "attention" };
                note.push(format!("Pre-norm: {reader} read N₁ = LN₁(X), so the gradient of N₁ goes back through LayerNorm's backward: γ₁ scales it, and the parts that would only shift a row's mean or stretch its spread are taken out, divided by the row's σ."));
            }
            if w.block.is_some() {
                note.push("The loss reads attention's own A or Y, so nothing flows back through the block's later stages (the residual sums, the feed-forward network, the norms after attention).".into());
            }
            if c.positional_encoding {
                note.push("The positions P are added constants, so ∂L/∂E = ∂L/∂X: P itself has no weights to learn.".into());
            } else {
                note.push("Without positional encoding X = E, so ∂L/∂E = ∂L/∂X.".into());
            }
            if !pattern {
                let e = if w.cross { "E_src" } else { "E" };
                note.push(format!(
                    "The task's target Y* is built from {e}, so {e} also gets a second path, through the target: Pᵀ·∂L/∂Y*, with ∂L/∂Y* = −∂L/∂Y. It is what a finite difference over {e} measures, and why the embeddings cannot learn a task: they would chase their own target."
                ));
            }
            let repeated =
                (0..trace.tokens.len()).any(|i| trace.tokens[..i].contains(&trace.tokens[i]));
            if repeated {
                note.push("A word that appears twice has one vector in the app's embedding table, so training adds the gradients of its rows.".into());
            }
        }
    }
    Some(note.join(PARAGRAPH_BREAK))
}
