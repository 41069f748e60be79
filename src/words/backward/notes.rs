//! The note under a backward stage: what the loss and the settings on screen do there, with the
//! current numbers, named by the cells the heatmaps show.

use super::super::matrices::cell_name;
use super::super::number::{ends_within, exactly, format_value};
use super::super::stages::PARAGRAPH_BREAK;
use super::{divisor_symbol, unreached_text, GoalSource};
use crate::attention::{
    BackMatrix, BackwardPass, HeadGrad, LossKind, Matrix, MatrixId, Norm, ScaleMode, Stage, Trace,
};

/// Decimals of a gradient on the heatmaps and in the notes.
pub const GRADIENT_DECIMALS: usize = 3;

/// Above this size a gradient is written with a power of ten: its digits would fill lines.
const LARGE_GRADIENT: f64 = 1e6;

/// A gradient as the heatmaps show it, or with a power of ten when it is huge (a weight that
/// all but underflowed under a low temperature).
pub(crate) fn g3(v: f64) -> String {
    if v.is_finite() && v.abs() >= LARGE_GRADIENT {
        return super::super::number::scientific(v);
    }
    format_value(v, GRADIENT_DECIMALS)
}

/// "= v" with `v` as [`g3`] writes it, or "≈ v" when that rounds it: with the gradients'
/// decimals, or with three significant digits times a power of ten for a huge one.
fn eq_g3(v: f64) -> String {
    if v.is_finite() && v.abs() >= LARGE_GRADIENT {
        let text = super::super::number::scientific(v);
        // The digits shown, read back: "=" only when they are the number itself.
        let shown = format!("{v:.2e}").parse::<f64>().unwrap_or(f64::NAN);
        let sign = if (shown - v).abs() <= 1e-12 * v.abs() {
            "="
        } else {
            "≈"
        };
        return format!("{sign} {text}");
    }
    eq_shown(v, GRADIENT_DECIMALS)
}

/// "= v" to two decimals, or "≈ v" when that rounds it.
pub(crate) fn eq_2(v: f64) -> String {
    eq_shown(v, 2)
}

/// Decimals a product of the settings (n_heads·n·T) is written exactly with, at most.
const EXACT_DECIMALS: usize = 4;

/// Significant digits a product of the settings is written with when it is not exact.
const SIGNIFICANT: i32 = 3;

/// `v` exactly when it ends within [`EXACT_DECIMALS`] places (`3`, `1.8`: a product such as
/// 2·3·0.3 is exact, whatever its float's last bit), else after "≈ " with at least
/// [`SIGNIFICANT`] significant digits (`≈ 0.0740`, `≈ 1.23`, `≈ 133`).
fn product_text(v: f64) -> String {
    exactly(v, EXACT_DECIMALS).unwrap_or_else(|| {
        let magnitude = if v == 0.0 || !v.is_finite() {
            0
        } else {
            v.abs().log10().floor() as i32
        };
        let decimals = (SIGNIFICANT - 1 - magnitude).max(0) as usize;
        format!("≈ {}", format_value(v, decimals))
    })
}

/// "= v" or "≈ v" with `decimals` places: "≈" only where those places round the number, not
/// where they drop a float's last bit.
pub(crate) fn eq_shown(v: f64, decimals: usize) -> String {
    let sign = if ends_within(v, decimals) { "=" } else { "≈" };
    format!("{sign} {}", format_value(v, decimals))
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
        format!("{} {}", cell_name(trace, MatrixId::Back(m), i, j), eq_g3(v)),
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

/// How many keys row `i` of `trace` can see: every key, or under the causal mask those up to
/// its own position (the mask is the same for every head).
fn visible_keys(trace: &Trace, i: usize) -> usize {
    trace.heads.first().map_or(0, |head| {
        head.masked
            .row(i)
            .iter()
            .filter(|v| **v != f64::NEG_INFINITY)
            .count()
    })
}

/// How low the pattern loss can go with the rows on screen. Only the gaps between a row's
/// scores move its weights; a row with one visible key gives it the weight 1 whatever they are.
fn loss_floor_text(trace: &Trace) -> String {
    let s = trace.seq_len();
    let single = (0..s).filter(|&i| visible_keys(trace, i) == 1).count();
    let gaps = "A row's weights depend only on the gaps between its scores: adding the same number to every score of a row changes none of them.";
    let spread = "For a target that spreads the weight, a row's floor is the target's own entropy, e.g. log 2 ≈ 0.69 for a row split evenly over two keys.";
    if single == s {
        let why = if trace.source.is_some() {
            "the source has one token"
        } else if s > 1 {
            "the window of 1 hides every other key"
        } else {
            "the sentence has one token"
        };
        return format!(
            "Here every row has a single visible key ({why}), whose weight is exactly 1 whatever the scores, so each row's term is 0 and L = 0 for any weights."
        );
    }
    let one_key_rows = match single {
        0 => "No row here has a single visible key, so L stays above 0".to_string(),
        1 => "Here the first row sees only its own key under the causal mask: its weight is exactly 1 whatever the scores, so that row's term is 0 from the start, while the other rows' terms stay above 0".to_string(),
        _ => format!(
            "Here {single} rows see a single key: their weights are exactly 1 whatever the scores, so their terms are 0 from the start, while the other rows' terms stay above 0"
        ),
    };
    format!(
        "{gaps} For a target that puts a row's weight on one key, the row's term falls towards 0 as that key's score pulls ahead of the others, and reaches 0 only in a row with a single visible key. {one_key_rows}. {spread}"
    )
}

/// What happens to ∂L/∂Aₕ in the rows with a single visible key: A = A* = 1 there, so the cell
/// is −1/(n_heads·n), and the softmax's backward, A ⊙ (D − rowsum(D ⊙ A)), takes it back out.
/// `None` when every row sees two keys or more.
fn single_key_gradient_text(trace: &Trace) -> Option<String> {
    let s = trace.seq_len();
    let n_heads = trace.heads.len();
    let rows: Vec<(usize, usize)> = (0..s)
        .filter(|&i| visible_keys(trace, i) == 1)
        .filter_map(|i| {
            let head = trace.heads.first()?;
            let j = (0..head.masked.ncols()).find(|&j| head.masked[(i, j)] != f64::NEG_INFINITY)?;
            Some((i, j))
        })
        .collect();
    let &(i, j) = rows.first()?;
    let value = -1.0 / (n_heads * s) as f64;
    let gradient = format!("−1/(n_heads·n) = −1/{} {}", n_heads * s, eq_g3(value));
    let cell = cell_name(
        trace,
        MatrixId::Back(BackMatrix::Head(0, HeadGrad::Weights)),
        i,
        j,
    );
    Some(if rows.len() == s {
        format!("Every row here has a single visible key, whose weight is held at 1 whatever the scores, so ∂L/∂Aₕ there, {gradient} (e.g. {cell}), goes no further: the softmax's backward turns it into 0.")
    } else if rows.len() == 1 {
        format!("In a row with a single visible key the weight is held at 1 whatever the scores, so {cell} = {gradient} goes no further: the softmax's backward turns it into 0.")
    } else {
        format!("In a row with a single visible key the weight is held at 1 whatever the scores, so ∂L/∂Aₕ there, {gradient} (e.g. {cell}), goes no further: the softmax's backward turns it into 0.")
    })
}

/// Why dividing by the root of the number of keys is a mistake, and what it does to the
/// gradients; with a source (`cross`) the keys are the source's words, so only those count.
fn seq_len_mistake_text(cross: bool) -> String {
    let standard = "That divisor is the common mistake chosen under Settings in Sentence & weights; standard attention divides by √d_k. A score is a sum of d_k products, so its size grows with d_k,";
    if cross {
        format!("{standard} not with the number of keys; ÷√src_len also changes every score, and so every gradient, when a word is added to the source (a word added to your sentence leaves it alone).")
    } else {
        format!("{standard} not with the number of tokens; ÷√seq_len also changes every score, and so every gradient, when a word is added.")
    }
}

/// Which query heads share head `h`'s keys and values, and what that does to their gradients;
/// `None` where every query head has its own.
fn sharing_note(c: &crate::attention::Config, h: usize) -> Option<String> {
    let (n, g) = (c.n_heads, c.n_kv_heads());
    if g >= n {
        return None;
    }
    let kv = c.kv_head(h);
    let readers: Vec<String> = (0..n)
        .filter(|&q| c.kv_head(q) == kv)
        .map(|q| (q + 1).to_string())
        .collect();
    Some(format!(
        "Query heads {} share key/value head {}, so they read the same keys: each head's ∂L/∂K is its share, and the keys' gradient, like that of the W_k columns that made them, is the sum of the shares.",
        super::super::running::and_list(&readers),
        kv + 1
    ))
}

/// The note of backward stage `stage` for `pass`, with the current numbers, on a page whose goal
/// comes from `source`; `None` for a forward stage.
pub fn back_note(
    stage: Stage,
    trace: &Trace,
    pass: &BackwardPass,
    source: GoalSource,
) -> Option<String> {
    back_note_of_head(stage, trace, pass, source, 0)
}

/// [`back_note`] where head `head` (from 0) is the one shown: its numbers are the ones named.
pub fn back_note_of_head(
    stage: Stage,
    trace: &Trace,
    pass: &BackwardPass,
    source: GoalSource,
    head: usize,
) -> Option<String> {
    let h = head.min(trace.heads.len().saturating_sub(1));
    if !stage.is_backward() {
        return None;
    }
    let kind = pass.loss_kind();
    if let Some(text) = unreached_text(stage, kind, source) {
        return Some(text);
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
                "L {}: the cross-entropy of the weights against the targets, averaged over n_heads·n = {n_heads}·{s} = {} rows. It is smallest when every head's weights equal its target. {}",
                eq_g3(pass.gradients.loss),
                n_heads * s,
                loss_floor_text(trace)
            ));
            if let Some((text, _)) =
                largest_text(trace, pass, BackMatrix::Head(h, HeadGrad::Weights))
            {
                note.push(format!(
                    "∂L/∂Aₕ is −A*/({}·A) where the target puts weight, and 0 where it puts none. Where the target puts weight it is negative, and the less weight the head gives that key, the larger it grows in size: the more negative it is. Head {}'s largest in size is {text}.",
                    n_heads * s,
                    h + 1
                ));
            }
            if let Some(text) = single_key_gradient_text(trace) {
                note.push(text);
            }
        }
        Stage::BackLoss => {
            let d = c.d_model;
            note.push(format!(
                "L {}: the mean of the n·d_model = {s}·{d} = {} squared differences between Y and Y*.",
                eq_g3(g.loss),
                s * d
            ));
            if let Some((text, v)) = largest_text(trace, pass, BackMatrix::Output) {
                note.push(format!(
                    "∂L/∂Y = 2·(Y − Y*)/{}: each cell is the difference, scaled. The largest in size is {text}, {}.",
                    s * d,
                    sign_text(v)
                ));
            }
        }
        Stage::BackOutput => {
            if let Some((text, _)) = largest_text(trace, pass, BackMatrix::WO) {
                note.push(format!("The largest cell of ∂L/∂W_o in size is {text}."));
            }
            note.push(if n_heads == 1 {
                "With one head ∂L/∂C₁ = ∂L/∂C.".to_string()
            } else {
                format!(
                    "∂L/∂C is cut into the heads' columns, d_k = {} each: head h gets ∂L/∂Cₕ.",
                    c.head_dim()
                )
            });
        }
        Stage::BackWeightedSum => {
            if c.causal && !w.cross {
                note.push("Under the causal mask the hidden cells of ∂L/∂Aₕ are shown as 0. The product ∂L/∂Cₕ·Vₕᵀ is not 0 there, but the mask holds those weights at 0 whatever the scores, so they are constants and nothing flows through them; the softmax's backward would multiply them by A = 0 anyway.".into());
            }
            if let Some((text, v)) =
                largest_text(trace, pass, BackMatrix::Head(h, HeadGrad::Weights))
            {
                note.push(format!(
                    "Head {}'s largest gradient of an attention weight, in size, is {text}, {}.",
                    h + 1,
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
                    product_text(divisor)
                ));
            } else if t != 1.0 {
                note.push(format!(
                    "At T = {t} every cell is divided by T once more, as the scores were."
                ));
            }
            if let Some((text, v)) =
                largest_text(trace, pass, BackMatrix::Head(h, HeadGrad::Masked))
            {
                note.push(format!(
                    "Head {}'s largest in size is {text}, {}.",
                    h + 1,
                    sign_text(v)
                ));
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
                        "Every cell of ∂L/∂Mₕ is divided by {symbol} = √{root_of} {}, the divisor the forward pass used.",
                        eq_2(divisor)
                    ));
                    if mode == ScaleMode::SqrtSeqLen {
                        note.push(seq_len_mistake_text(w.cross));
                    }
                }
            }
            if c.causal && !w.cross {
                let mask = c.mask();
                let hidden = (0..s)
                    .map(|i| (0..s).filter(|&j| mask.hides(i, j)).count())
                    .sum::<usize>();
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
            if let Some((text, _)) = largest_text(trace, pass, BackMatrix::Head(h, HeadGrad::Q)) {
                note.push(format!(
                    "Head {}'s largest query gradient in size is {text}.",
                    h + 1
                ));
            }
            if let Some((text, _)) = largest_text(trace, pass, BackMatrix::Head(h, HeadGrad::K)) {
                note.push(format!("Its largest key gradient in size is {text}."));
            }
            if let Some(sharing) = sharing_note(c, h) {
                note.push(sharing);
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
                    "The largest in size is {name} {}. If W_q is ticked to learn, a plain SGD step with learning rate η would change {weight} by −η × {times}, against the gradient; Adam's step has the opposite sign of its running average of gradients, not necessarily of this one.",
                    eq_g3(v)
                ));
            }
            if pattern {
                note.push("W_v is not reached by the pattern loss: it compares only A with A*, and A is computed from Q and K alone, never from V, so ∂L/∂W_v is exactly 0.".into());
            }
        }
        _ => {
            if w.block == Some(Norm::Pre) {
                let reader = if w.cross { "the queries" } else { "attention" };
                note.push(if w.norm_type == crate::attention::NormType::RmsNorm {
                    format!("Pre-norm: {reader} read N₁ = RMSNorm₁(X), so the gradient of N₁ goes back through RMSNorm's backward: γ₁ scales it, the part that would only stretch a row's root mean square is taken out, and the rest is divided by the row's √(mean(x²) + ε), ε = 0.00001, as in the forward pass. γ₁ is not trained here.")
                } else {
                    format!("Pre-norm: {reader} read N₁ = LN₁(X), so the gradient of N₁ goes back through LayerNorm's backward: γ₁ scales it, and the parts that would only shift a row's mean or stretch its spread are taken out, divided by the row's √(σ² + ε), σ² being its variance and ε = 0.00001, as in the forward pass. γ₁ and β₁ are not trained here.")
                });
            }
            if w.block.is_some() {
                note.push("The loss reads attention's own A or Y, so nothing flows back through the block's later stages (the residual sums, the feed-forward network with its W₁, W₂ and, with SwiGLU, W_gate, the norms after attention): they get no gradient and do not train.".into());
            }
            // A task on the sentence itself adds the target's path to ∂L/∂E, said below.
            let path = if pattern || w.cross {
                ""
            } else {
                "the path through attention gives "
            };
            if c.positional_encoding {
                note.push(format!("The positions P are added constants, so {path}∂L/∂E = ∂L/∂X: P itself has no weights to learn."));
            } else {
                note.push(format!(
                    "Without positional encoding X = E, so {path}∂L/∂E = ∂L/∂X."
                ));
            }
            if !pattern {
                let e = if w.cross { "E_src" } else { "E" };
                note.push(format!(
                    "The task's target Y* = Π·{e} is built from {e} (the matrix Π mixes its rows by the task's pattern), so {e} also gets a second path, through the target: Πᵀ·∂L/∂Y*, with ∂L/∂Y* = −∂L/∂Y. It is what a finite difference over {e} measures, and why {e} cannot learn a task: it would chase its own target."
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
