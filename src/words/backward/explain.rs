//! The chain rule behind one cell of a target or a gradient, written out for a learner with the
//! real numbers and the display's rounding: gradients with three decimals, the forward numbers
//! they read with two, as the heatmaps show them.

use super::super::explain::terms::{
    columns_text, hidden_terms_note, join_terms, result_sign, REDONE,
};
use super::super::explain::Explanation;
use super::super::matrices::{cell_name, col_label, label, row_label};
use super::super::number::{by_hand_if_missed, format_value, rounded};
use super::notes::{eq_2, eq_shown, f2, g3, GRADIENT_DECIMALS};
use super::{back_cell_kind, back_label};
use crate::attention::{
    back_cell_work, BackComputation, BackMatrix, BackwardPass, HeadGrad, MatrixId, ScaleMode,
    Trace, WeightName,
};

/// Decimals of a root that is not whole, in the steps of the scale's backward line.
const ROOT_DECIMALS: usize = 4;

/// Decimals of n̂, a LayerNorm'd number, in the steps of LayerNorm's backward line.
const NORMALIZED_DECIMALS: usize = 3;

/// How many decimals a factor of a product shows: a gradient's or a forward number's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    Forward,
    Gradient,
}

impl Shown {
    fn decimals(self) -> usize {
        match self {
            Self::Forward => 2,
            Self::Gradient => GRADIENT_DECIMALS,
        }
    }

    fn text(self, v: f64) -> String {
        match self {
            Self::Forward => f2(v),
            Self::Gradient => g3(v),
        }
    }

    fn rounded(self, v: f64) -> f64 {
        rounded(v, self.decimals())
    }
}

/// A number after an operator: negative ones in brackets, so a minus never follows an operator.
fn after(shown: Shown, v: f64) -> String {
    bracketed(shown.text(v))
}

/// `text` in brackets when it is negative, so a minus never follows an operator.
fn bracketed(text: String) -> String {
    if text.starts_with('−') {
        format!("({text})")
    } else {
        text
    }
}

/// `a × b + c × d + …` with each factor shown as the heatmaps show it, the sum redone with
/// those rounded factors, and a note when the sum is too long to write in full.
fn product_terms(terms: &[(f64, f64)], shown: (Shown, Shown)) -> (String, f64, Option<String>) {
    if terms.is_empty() {
        return ("0".into(), 0.0, None);
    }
    let written: Vec<String> = terms
        .iter()
        .enumerate()
        .map(|(n, (a, b))| {
            let a = if n == 0 {
                shown.0.text(*a)
            } else {
                after(shown.0, *a)
            };
            format!("{a} × {}", after(shown.1, *b))
        })
        .collect();
    let by_hand = terms
        .iter()
        .map(|(a, b)| shown.0.rounded(*a) * shown.1.rounded(*b))
        .sum();
    (
        join_terms(&written),
        by_hand,
        hidden_terms_note(terms.len()),
    )
}

/// Says "≈" when the rounded numbers shown do not give the rounded result.
fn rounding_note(notes: &mut Vec<String>, by_hand: f64, value: f64) {
    if !by_hand.is_finite() {
        notes.push(format!(
            "{REDONE} above, this cannot be worked out: a number shown as 0.00 would be divided by. The result, {}, is computed from the exact values.",
            g3(value)
        ));
        return;
    }
    if let Some(by_hand) = by_hand_if_missed(by_hand, value, GRADIENT_DECIMALS) {
        let value = g3(value);
        notes.push(format!(
            "{REDONE} above, this comes to {by_hand}, but the result, {value}, is computed from the exact values."
        ));
    }
}

/// The product rule of `m` in symbols, and which factors are gradients.
fn product_formula(trace: &Trace, m: BackMatrix) -> Option<(String, (Shown, Shown))> {
    use Shown::{Forward as F, Gradient as G};
    let w = trace.wiring();
    let (q_in, k_in) = (w.query_input(), w.key_input());
    let l = back_label(m);
    Some(match m {
        BackMatrix::WO => (format!("{l}[r, c] = Σᵢ C[i, r] · ∂L/∂Y[i, c]"), (F, G)),
        BackMatrix::WQ => (format!("{l}[r, c] = Σᵢ {q_in}[i, r] · ∂L/∂Q[i, c]"), (F, G)),
        BackMatrix::WK => (format!("{l}[r, c] = Σᵢ {k_in}[i, r] · ∂L/∂K[i, c]"), (F, G)),
        BackMatrix::WV => (format!("{l}[r, c] = Σᵢ {k_in}[i, r] · ∂L/∂V[i, c]"), (F, G)),
        BackMatrix::Concat => (format!("{l}[i, r] = Σ_c ∂L/∂Y[i, c] · W_o[r, c]"), (G, F)),
        BackMatrix::ViaTarget => (
            "(Πᵀ·∂L/∂Y*)[j, c] = Σᵢ Π[i, j] · ∂L/∂Y*[i, c],  ∂L/∂Y* = −∂L/∂Y".into(),
            (F, G),
        ),
        BackMatrix::Head(h, g) => {
            let sub = |s: &str| label(MatrixId::Head(h, head_matrix(s)));
            let d = |g: HeadGrad| back_label(BackMatrix::Head(h, g));
            match g {
                HeadGrad::V => (
                    format!(
                        "{l}[j, m] = Σᵢ {}[i, j] · {}[i, m]",
                        sub("A"),
                        d(HeadGrad::Context)
                    ),
                    (F, G),
                ),
                HeadGrad::Weights => (
                    format!(
                        "{l}[i, j] = Σₘ {}[i, m] · {}[j, m]",
                        d(HeadGrad::Context),
                        sub("V")
                    ),
                    (G, F),
                ),
                HeadGrad::Q => (
                    format!(
                        "{l}[i, m] = Σⱼ {}[i, j] · {}[j, m]",
                        d(HeadGrad::Scores),
                        sub("K")
                    ),
                    (G, F),
                ),
                HeadGrad::K => (
                    format!(
                        "{l}[j, m] = Σᵢ {}[i, j] · {}[i, m]",
                        d(HeadGrad::Scores),
                        sub("Q")
                    ),
                    (G, F),
                ),
                HeadGrad::QRope => (
                    format!(
                        "{l}[i, m] = Σⱼ {}[i, j] · {}[j, m]",
                        d(HeadGrad::Scores),
                        sub("K̃")
                    ),
                    (G, F),
                ),
                HeadGrad::KRope => (
                    format!(
                        "{l}[j, m] = Σᵢ {}[i, j] · {}[i, m]",
                        d(HeadGrad::Scores),
                        sub("Q̃")
                    ),
                    (G, F),
                ),
                _ => return None,
            }
        }
        _ => return None,
    })
}

fn head_matrix(symbol: &str) -> crate::attention::HeadMatrix {
    use crate::attention::HeadMatrix as H;
    match symbol {
        "A" => H::Weights,
        "V" => H::V,
        "K" => H::K,
        "K̃" => H::KRope,
        "Q̃" => H::QRope,
        _ => H::Q,
    }
}

/// The chain rule behind cell (`row`, `col`) of `m`; `None` when there is no such cell or the
/// loss does not reach the matrix.
pub fn explain_back(
    trace: &Trace,
    pass: &BackwardPass,
    m: BackMatrix,
    row: usize,
    col: usize,
) -> Option<Explanation> {
    let work = back_cell_work(trace, pass, m, row, col)?;
    let id = MatrixId::Back(m);
    let name = cell_name(trace, id, row, col);
    let l = back_label(m);
    let value = work.value;
    let value_shown = if m.is_gradient() {
        Shown::Gradient
    } else {
        Shown::Forward
    };
    let mut notes: Vec<String> = Vec::new();
    let (formula, steps) = match &work.computation {
        BackComputation::TargetPattern => {
            notes.push("Set by the goal, not computed: the weight this head should give the key. Each row of the target sums to 1.".into());
            (format!("{l}[i, j]: the goal's target"), name.clone())
        }
        BackComputation::TaskTarget { terms } => {
            let e = if trace.source.is_some() { "E_src" } else { "E" };
            let pairs: Vec<(f64, f64)> = terms.iter().map(|(_, p, v)| (*p, *v)).collect();
            let (text, by_hand, long) = product_terms(&pairs, (Shown::Forward, Shown::Forward));
            notes.extend(long);
            if let Some(by_hand) = by_hand_if_missed(by_hand, value, 2) {
                notes.push(format!("{REDONE}, this comes to {by_hand}."));
            }
            notes.push(format!(
                "Π mixes the rows of {e} (the embeddings without positions) with the task's pattern; only the keys it weights are written."
            ));
            (format!("Y*[i, c] = Σⱼ Π[i, j] · {e}[j, c]"), text)
        }
        BackComputation::DOutput {
            y,
            target,
            seq_len,
            d_model,
        } => {
            let by_hand = 2.0 * (rounded(*y, 2) - rounded(*target, 2)) / (seq_len * d_model) as f64;
            rounding_note(&mut notes, by_hand, value);
            notes.push(format!(
                "n·d_model = {seq_len}·{d_model} = {}: the loss is the mean over that many squared differences, so each one's gradient is divided by it.",
                seq_len * d_model
            ));
            (
                "∂L/∂Y[i, c] = 2·(Y[i, c] − Y*[i, c]) / (n·d_model)".into(),
                format!(
                    "2 × ({} − {}) / ({seq_len}·{d_model})",
                    f2(*y),
                    after(Shown::Forward, *target)
                ),
            )
        }
        BackComputation::DWeightsPattern {
            a,
            target,
            n_heads,
            seq_len,
        } => {
            if *target == 0.0 {
                notes.push("The target puts no weight on this key, so the loss does not read this weight: its gradient is 0.".into());
            } else if *a == 0.0 {
                notes.push("This weight underflowed to 0 while the target wants it: the gradient is larger than any number a computer holds, and the next stage, which needs only A − A*, stays exact.".into());
            } else {
                let by_hand = -rounded(*target, 2) / ((n_heads * seq_len) as f64 * rounded(*a, 2));
                rounding_note(&mut notes, by_hand, value);
                notes.push("The smaller the weight on a key the target wants, the larger this gradient in size.".into());
            }
            // With A* = 0 the term is 0 whatever A is: written out, a weight shown as 0.00
            // would read as 0 / 0.
            let steps = if *target == 0.0 {
                "0".to_string()
            } else {
                format!("−{} / ({n_heads}·{seq_len} × {})", f2(*target), f2(*a))
            };
            (
                format!("{l}[i, j] = −A*[i, j] / (n_heads·n·A[i, j])"),
                steps,
            )
        }
        BackComputation::Hidden => {
            let window = trace.config.window;
            if col > row {
                notes.push("This key comes after the query, so the causal mask hid it: the mask holds its weight at 0 whatever the scores, and no gradient flows through it.".into());
            } else {
                notes.push(format!(
                    "This key is {} tokens before the query, outside the sliding window of W = {}, so the mask hid it: the mask holds its weight at 0 whatever the scores, and no gradient flows through it.",
                    row - col,
                    window.unwrap_or_default()
                ));
            }
            let beyond = window
                .map(|w| format!(" or i − j ≥ {w}"))
                .unwrap_or_default();
            (format!("{l}[i, j] = 0 where j > i{beyond}"), "0".into())
        }
        BackComputation::Product { terms } => {
            let (formula, shown) = product_formula(trace, m)?;
            let (text, by_hand, long) = product_terms(terms, shown);
            match long {
                Some(long) => notes.push(long),
                None => rounding_note(&mut notes, by_hand, value),
            }
            if matches!(
                m,
                BackMatrix::WQ | BackMatrix::WK | BackMatrix::WV | BackMatrix::WO
            ) {
                let weight = match m {
                    BackMatrix::WQ => WeightName::Q,
                    BackMatrix::WK => WeightName::K,
                    BackMatrix::WV => WeightName::V,
                    _ => WeightName::O,
                };
                let cell = cell_name(trace, MatrixId::Weight(weight), row, col);
                notes.push(direction_note(&cell, value));
            }
            (formula, text)
        }
        BackComputation::TurnBack {
            from,
            first: (a_col, a),
            second: (b_col, b),
            is_first,
            pair,
            position,
            angle,
        } => {
            let from_label = back_label(*from);
            let (cos, sin) = (angle.cos(), angle.sin());
            // A negative factor after an operator goes in brackets.
            let g = |v: f64| {
                let t = g3(v);
                if v < 0.0 {
                    format!("({t})")
                } else {
                    t
                }
            };
            let f = |v: f64| {
                let t = f2(v);
                if v < 0.0 {
                    format!("({t})")
                } else {
                    t
                }
            };
            let (formula, text) = if *is_first {
                (
                    format!("{l}[p, a] = {from_label}[p, a]·cos φ + {from_label}[p, b]·sin φ"),
                    format!("{} × {} + {} × {}", g3(*a), f(cos), g(*b), f(sin)),
                )
            } else {
                (
                    format!("{l}[p, b] = −{from_label}[p, a]·sin φ + {from_label}[p, b]·cos φ"),
                    format!("−{} × {} + {} × {}", g(*a), f(sin), g(*b), f(cos)),
                )
            };
            notes.push(format!(
                "The forward pass turned this row's pair {pair} (columns {} and {}) by φ = p·θ^(−2i/d_k) {} rad, p = {position}. A turn's transpose is the turn by −φ, the turn back, so the gradient of the unturned row is {from_label}'s row turned back: cos φ ≈ {}, sin φ ≈ {}.",
                col_label(trace, MatrixId::Back(*from), *a_col),
                col_label(trace, MatrixId::Back(*from), *b_col),
                super::super::number::equals_short(*angle),
                f2(cos),
                f2(sin)
            ));
            (formula, text)
        }
        BackComputation::GroupSum {
            grad,
            kv_head,
            parts,
            ..
        } => {
            let letter = if *grad == HeadGrad::K { "K" } else { "V" };
            let terms: Vec<String> = parts
                .iter()
                .enumerate()
                .map(|(n, (_, v))| {
                    if n > 0 && *v < 0.0 {
                        format!("({})", g3(*v))
                    } else {
                        g3(*v)
                    }
                })
                .collect();
            let heads: Vec<String> = parts.iter().map(|(h, _)| (h + 1).to_string()).collect();
            notes.push(format!(
                "Key/value head {} is read by query heads {}: each used this column of {letter}, so its gradient is the sum of theirs. Without sharing, each head's slice would just be copied.",
                kv_head + 1,
                heads.join(", ")
            ));
            (
                format!(
                    "{l}[i, c] = Σ over the query heads h that read key/value head {} of ∂L/∂{letter}ₕ[i, c]",
                    kv_head + 1
                ),
                terms.join(" + "),
            )
        }
        BackComputation::Slice { from, head, column } => {
            let from_label = back_label(*from);
            let source = cell_name(trace, MatrixId::Back(*from), row, *column);
            let formula = match m {
                BackMatrix::Head(..) => {
                    notes.push(format!(
                        "Head {}'s columns of {from_label} are its slice: the backward of cutting into heads.",
                        head + 1
                    ));
                    format!(
                        "{l}[i, c] = {from_label}[i, c], for c in head {}'s {}",
                        head + 1,
                        columns_text(*head, trace.head_dim())
                    )
                }
                _ => {
                    notes.push(format!(
                        "The heads' gradients side by side: column {} belongs to head {}.",
                        col_label(trace, id, col),
                        head + 1
                    ));
                    format!(
                        "{l}[i, c] = {from_label}[i, c], for c in head {}'s {}",
                        head + 1,
                        columns_text(*head, trace.head_dim())
                    )
                }
            };
            (formula, source)
        }
        BackComputation::DMaskedPattern {
            a,
            target,
            n_heads,
            seq_len,
            temperature,
        } => {
            let t = *temperature;
            let divisor = (n_heads * seq_len) as f64 * t;
            let by_hand = (rounded(*a, 2) - rounded(*target, 2)) / divisor;
            rounding_note(&mut notes, by_hand, value);
            notes.push(format!(
                "The softmax's backward, A ⊙ (D − rowsum(D ⊙ A))/T with D = {}, collapses to this for the pattern loss, because each row of the target sums to 1.",
                back_label(BackMatrix::Head(head_of(m), HeadGrad::Weights))
            ));
            let (t_sym, t_num) = if t != 1.0 {
                ("·T".to_string(), format!("·{t}"))
            } else {
                (String::new(), String::new())
            };
            (
                format!("{l}[i, j] = (A[i, j] − A*[i, j]) / (n_heads·n{t_sym})"),
                format!(
                    "({} − {}) / ({n_heads}·{seq_len}{t_num})",
                    f2(*a),
                    after(Shown::Forward, *target)
                ),
            )
        }
        BackComputation::DMaskedTask {
            a,
            g,
            row: pairs,
            rowsum,
            temperature,
        } => {
            let t = *temperature;
            let (sum_text, sum_by_hand, _) =
                product_terms(pairs, (Shown::Gradient, Shown::Forward));
            // The rounded terms shown may not add up to the shown sum exactly.
            let sum_sign = if by_hand_if_missed(sum_by_hand, *rowsum, GRADIENT_DECIMALS).is_some() {
                "≈"
            } else {
                "="
            };
            // Redone from the numbers the line writes: the rowsum as shown, not its terms. Its
            // note comes first, where "this" is the line above.
            let by_hand = rounded(*a, 2)
                * (rounded(*g, GRADIENT_DECIMALS) - rounded(*rowsum, GRADIENT_DECIMALS))
                / t;
            rounding_note(&mut notes, by_hand, value);
            notes.push(format!(
                "rowsum(D ⊙ A) for this row = {sum_text} {sum_sign} {}.",
                g3(*rowsum)
            ));
            let (t_sym, t_num) = if t != 1.0 {
                (" / T".to_string(), format!(" / {t}"))
            } else {
                (String::new(), String::new())
            };
            let gl = back_label(BackMatrix::Head(head_of(m), HeadGrad::Weights));
            (
                format!("{l}[i, j] = A[i, j] · (D[i, j] − Σₖ D[i, k]·A[i, k]){t_sym},  D = {gl}"),
                format!(
                    "{} × ({} − {}){t_num}",
                    f2(*a),
                    g3(*g),
                    after(Shown::Gradient, *rowsum)
                ),
            )
        }
        BackComputation::DScores {
            d_masked,
            divisor,
            mode,
            root_of,
        } => {
            let dm = back_label(BackMatrix::Head(head_of(m), HeadGrad::Masked));
            if trace.config.causal && trace.source.is_none() {
                notes.push("The mask passed this visible cell's gradient on unchanged.".into());
            }
            match mode {
                ScaleMode::None => {
                    notes.push("Scaling is off: the forward pass did not divide this score, so its gradient is not divided either.".into());
                    (format!("{l}[i, j] = {dm}[i, j]"), g3(*d_masked))
                }
                _ => {
                    // A root that is not whole is written with four decimals, as the forward
                    // line writes it, and redone with the number written.
                    let whole = divisor.fract() == 0.0;
                    let shown = format_value(*divisor, ROOT_DECIMALS);
                    let written = if whole {
                        *divisor
                    } else {
                        rounded(*divisor, ROOT_DECIMALS)
                    };
                    let by_hand = rounded(*d_masked, GRADIENT_DECIMALS) / written;
                    rounding_note(&mut notes, by_hand, value);
                    let symbol = match mode {
                        ScaleMode::SqrtHeadDim => "√d_k",
                        _ if trace.source.is_some() => "√src_len",
                        _ => "√seq_len",
                    };
                    notes.push(format!(
                        "The forward pass divided the score by {symbol} = √{root_of} {}, so its gradient is divided by the same number.",
                        eq_2(*divisor)
                    ));
                    (
                        format!("{l}[i, j] = {dm}[i, j] / {symbol}"),
                        if whole {
                            format!(
                                "{} / √{root_of} = {} / {divisor}",
                                g3(*d_masked),
                                g3(*d_masked)
                            )
                        } else {
                            format!(
                                "{} / √{root_of} ≈ {} / {shown}",
                                g3(*d_masked),
                                g3(*d_masked)
                            )
                        },
                    )
                }
            }
        }
        BackComputation::DInput { paths } => {
            let mut parts = Vec::new();
            let mut texts = Vec::new();
            let mut by_hand = 0.0;
            let mut long = None;
            for (grad, weight, terms) in paths {
                parts.push(format!(
                    "Σ_c {}[i, c]·{}[r, c]",
                    back_label(*grad),
                    weight.label()
                ));
                let (text, sum, note) = product_terms(terms, (Shown::Gradient, Shown::Forward));
                texts.push(if paths.len() > 1 {
                    format!("({text})")
                } else {
                    text
                });
                by_hand += sum;
                long = long.or(note);
            }
            match long {
                Some(long) => notes.push(long),
                None => rounding_note(&mut notes, by_hand, value),
            }
            if paths.len() > 1 {
                notes.push("Every projection that read this row sends its gradient back to it, and the paths add up.".into());
            }
            (
                format!("{l}[i, r] = {}", parts.join(" + ")),
                texts.join(" + "),
            )
        }
        BackComputation::LayerNormBack {
            d_norm,
            gamma,
            g_hat,
            mean_g,
            n_hat,
            mean_gn,
            sd,
        } => {
            // n̂ and the root are written with more places than a forward number: a root near
            // 0.2 rounded to two places would put the sum redone by hand several percent off.
            notes.push(format!(
                "ĝ[c] = ∂L/∂N₁[{}, {}] × γ₁[{}] = {} × {} = {}; n̂[c] = (X − μ)/√(σ² + ε) for this cell {}; over the row, mean(ĝ) = {} and mean(ĝ ⊙ n̂) = {}; √(σ² + ε) {}, the number the forward pass divided the row by (σ² is its variance, ε = 0.00001).",
                row_label(trace, id, row),
                col_label(trace, id, col),
                col_label(trace, id, col),
                g3(*d_norm),
                after(Shown::Forward, *gamma),
                g3(*g_hat),
                eq_shown(*n_hat, NORMALIZED_DECIMALS),
                g3(*mean_g),
                g3(*mean_gn),
                eq_shown(*sd, ROOT_DECIMALS)
            ));
            let by_hand = (rounded(*g_hat, 3)
                - rounded(*mean_g, 3)
                - rounded(*n_hat, NORMALIZED_DECIMALS) * rounded(*mean_gn, 3))
                / rounded(*sd, ROOT_DECIMALS);
            rounding_note(&mut notes, by_hand, value);
            (
                format!(
                    "{l}[i, c] = (ĝ[c] − mean(ĝ) − n̂[c]·mean(ĝ ⊙ n̂)) / √(σ² + ε),  ĝ = ∂L/∂N₁[i, :] ⊙ γ₁"
                ),
                format!(
                    "({} − {} − {} × {}) / {}",
                    g3(*g_hat),
                    after(Shown::Gradient, *mean_g),
                    bracketed(format_value(*n_hat, NORMALIZED_DECIMALS)),
                    after(Shown::Gradient, *mean_gn),
                    format_value(*sd, ROOT_DECIMALS)
                ),
            )
        }
        BackComputation::RmsNormBack {
            d_norm,
            gamma,
            g_hat,
            x_hat,
            mean_gx,
            rms,
        } => {
            notes.push(format!(
                "ĝ[c] = ∂L/∂N₁[{}, {}] × γ₁[{}] = {} × {} = {}; x̂[c] = X / r for this cell {}; over the row, mean(ĝ ⊙ x̂) = {}; r = √(mean(x²) + ε) {}, the number the forward pass divided the row by (ε = 0.00001). RMSNorm subtracts no mean, so unlike LayerNorm's backward no mean(ĝ) is taken out.",
                row_label(trace, id, row),
                col_label(trace, id, col),
                col_label(trace, id, col),
                g3(*d_norm),
                after(Shown::Forward, *gamma),
                g3(*g_hat),
                eq_shown(*x_hat, NORMALIZED_DECIMALS),
                g3(*mean_gx),
                eq_shown(*rms, ROOT_DECIMALS)
            ));
            let by_hand = (rounded(*g_hat, 3)
                - rounded(*x_hat, NORMALIZED_DECIMALS) * rounded(*mean_gx, 3))
                / rounded(*rms, ROOT_DECIMALS);
            rounding_note(&mut notes, by_hand, value);
            (
                format!("{l}[i, c] = (ĝ[c] − x̂[c]·mean(ĝ ⊙ x̂)) / r,  ĝ = ∂L/∂N₁[i, :] ⊙ γ₁"),
                format!(
                    "({} − {} × {}) / {}",
                    g3(*g_hat),
                    bracketed(format_value(*x_hat, NORMALIZED_DECIMALS)),
                    after(Shown::Gradient, *mean_gx),
                    format_value(*rms, ROOT_DECIMALS)
                ),
            )
        }
        BackComputation::DEmbeddings {
            along_attention,
            via_target,
        } => {
            let x = if m == BackMatrix::SourceEmbeddings {
                "∂L/∂X_src"
            } else {
                "∂L/∂X"
            };
            if trace.config.positional_encoding {
                notes.push(if m == BackMatrix::SourceEmbeddings {
                    "X_src = E_src + P_src and the positions are constants, so the path through attention gives the embeddings X_src's gradient.".into()
                } else {
                    "X = E + P and the positions are constants, so the path through attention gives the embeddings X's gradient.".into()
                });
            }
            match via_target {
                Some(v) => {
                    let by_hand = rounded(*along_attention, 3) + rounded(*v, 3);
                    rounding_note(&mut notes, by_hand, value);
                    notes.push("The second term is the path through the task's target, which is built from these embeddings.".into());
                    (
                        format!("{l}[i, c] = {x}[i, c] + (Πᵀ·∂L/∂Y*)[i, c]"),
                        format!("{} + {}", g3(*along_attention), after(Shown::Gradient, *v)),
                    )
                }
                None => (format!("{l}[i, c] = {x}[i, c]"), g3(*along_attention)),
            }
        }
    };
    let value_text = value_shown.text(value);
    Some(Explanation {
        matrix: id,
        title: format!("{} {name}", back_cell_kind(m)),
        formula,
        expansion: format!("{steps} {} {value_text}", result_sign(&notes)),
        value,
        value_text,
        note: (!notes.is_empty()).then(|| notes.join(" ")),
        operands: work.operands,
    })
}

fn head_of(m: BackMatrix) -> usize {
    match m {
        BackMatrix::Head(h, _) | BackMatrix::TargetPattern(h) => h,
        _ => 0,
    }
}

/// What a weight's gradient says about the next step, without calling it the step.
fn direction_note(weight: &str, g: f64) -> String {
    let sign = if g > 0.0 {
        "positive, so L rises as the weight rises: a plain SGD step lowers it"
    } else if g < 0.0 {
        "negative, so L falls as the weight rises: a plain SGD step raises it"
    } else {
        "0, so a plain SGD step leaves it as it is"
    };
    let adam = if g == 0.0 {
        ""
    } else {
        " Adam's first step would go the same way, by about η; its later steps follow moving averages of the gradients, so they need not."
    };
    format!(
        "Gradient descent moves {weight} against this gradient, by η × {} with SGD: the gradient is {sign}.{adam}",
        g3(g.abs())
    )
}
