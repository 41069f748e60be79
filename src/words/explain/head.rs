//! The explanations of a head's own computations: Kᵀ, scores, scaling, the mask, the softmax and
//! the weighted sum.

use super::terms::{
    after_op, dot, hidden_terms_note, is_written, join_terms, num, rounded, rounding_note,
    DECIMALS, REDONE,
};
use super::{Text, ONE_TOKEN_MASK, ONE_TOKEN_NO_MASK};
use crate::attention::{CellWork, Computation, HeadMatrix, MatrixId, Rope, ScaleMode, Trace};
use crate::words::matrices::{cell_name, col_label, key_token, token};
use crate::words::number::{self, equals_short, format_value, subscript};

/// The text of `computation`, a cell of head `h`; `name` is the cell's name.
pub(super) fn text(
    trace: &Trace,
    work: &CellWork,
    computation: &Computation,
    h: usize,
    name: String,
) -> Option<Text> {
    let (i, j) = (work.row, work.col);
    let s = subscript(h + 1);
    Some(match computation {
        Computation::Transposed
            if work.matrix == MatrixId::Head(h, HeadMatrix::KRopeTransposed) =>
        {
            Text {
                formula: format!("K̃{s}ᵀ[m, j] = K̃{s}[j, m]"),
                steps: format!(
                    "{name} = {}",
                    cell_name(trace, MatrixId::Head(h, HeadMatrix::KRope), j, i)
                ),
                notes: vec![
                    "K̃ᵀ is the turned keys K̃ on their side: each key token becomes a column, so \
                     Q̃·K̃ᵀ dots every turned query with every turned key."
                        .to_string(),
                ],
            }
        }
        Computation::Transposed => Text {
            formula: format!("K{s}ᵀ[m, j] = K{s}[j, m]"),
            steps: format!(
                "{name} = {}",
                cell_name(trace, MatrixId::Head(h, HeadMatrix::K), j, i)
            ),
            notes: vec![
                "Kᵀ is K turned on its side: each key token becomes a column, so Q·Kᵀ dots every \
                 query with every key."
                    .to_string(),
            ],
        },
        Computation::Rotate {
            of,
            first,
            second,
            is_first,
            pair,
            position,
            angle,
            rope,
            head_dim,
        } => rotate(
            trace,
            work,
            h,
            name,
            *of,
            (*first, *second),
            *is_first,
            (*pair, *position, *angle),
            rope,
            *head_dim,
        ),
        Computation::Score { terms } if trace.config.rope.is_some() => {
            let (sum, mut notes) = dot(terms, work.value);
            notes.push(format!(
                "With rotary positions the scores read the turned rows: Q̃{s}'s row for “{}” \
                 turned by its position p = {} (counting from 0, as the turn's formula does), \
                 K̃{s}'s row for “{}” by its position {}. Turning both keeps their lengths, and \
                 the score depends on the positions only through their difference, i − j = {} \
                 here.",
                token(trace, i),
                i,
                key_token(trace, j),
                j,
                signed(i as i64 - j as i64)
            ));
            Text {
                formula: format!("q̃_i · k̃_j = Σ_m Q̃{s}[i, m] · K̃{s}[j, m]"),
                steps: format!("q̃_{} · k̃_{} = {sum}", token(trace, i), key_token(trace, j)),
                notes,
            }
        }
        Computation::Score { terms } => {
            let (sum, notes) = dot(terms, work.value);
            Text {
                formula: format!("q_i · k_j = Σ_m Q{s}[i, m] · K{s}[j, m]"),
                steps: format!("q_{} · k_{} = {sum}", token(trace, i), key_token(trace, j)),
                notes,
            }
        }
        Computation::Scale {
            score,
            divisor,
            mode,
            root_of,
        } => scale(trace, work, h, *score, *divisor, *mode, *root_of),
        Computation::Mask {
            causal,
            window,
            hidden,
        } => mask(trace, work, h, name, *causal, *window, *hidden),
        Computation::Softmax {
            scores,
            temperature,
            max,
            exps,
            total,
        } => softmax(
            trace,
            work,
            h,
            name,
            Row {
                scores,
                t: *temperature,
                max: *max,
                exps,
                total: *total,
            },
        )?,
        Computation::WeightedSum { terms } => {
            let (sum, mut notes) = dot(terms, work.value);
            let query = token(trace, i);
            // Vₕ's columns are its key/value head's, which shared heads number apart from C's.
            let column = col_label(trace, MatrixId::Head(h, crate::attention::HeadMatrix::V), j);
            // The weights as shown may miss 1 by their rounding; a learner adding them would see.
            let shown: f64 = terms.iter().map(|(a, _)| rounded(*a)).sum();
            let fully_masked = trace
                .heads
                .get(h)
                .is_some_and(|head| head.fully_masked_rows.contains(&i));
            let adds = if fully_masked {
                "which are all 0: every key of this row is masked".to_string()
            } else if hidden_terms_note(terms.len()).is_none() && num(shown) != num(1.0) {
                format!(
                    "which sum to 1 (the weights shown add to {} because each was rounded)",
                    num(shown)
                )
            } else {
                "which sum to 1".to_string()
            };
            notes.insert(
                0,
                format!(
                    "A weighted average of the value column {column}, with the attention weights \
                     of row “{query}”, {adds}."
                ),
            );
            Text {
                formula: format!("C{s}[i, c] = Σ_j A{s}[i, j] · V{s}[j, c]"),
                steps: format!("A{s}[{query}, :] · V{s}[:, {column}] = {sum}"),
                notes,
            }
        }
        _ => return None,
    })
}

fn scale(
    trace: &Trace,
    work: &CellWork,
    h: usize,
    score: f64,
    divisor: f64,
    mode: ScaleMode,
    root_of: usize,
) -> Text {
    let s = subscript(h + 1);
    let mut notes = Vec::new();
    let symbol = match mode {
        ScaleMode::SqrtHeadDim => "d_k",
        ScaleMode::SqrtSeqLen if trace.source.is_some() => "src_len",
        ScaleMode::SqrtSeqLen => "seq_len",
        ScaleMode::None => {
            notes.push(
                "Scaling is off: the scores are not divided, so they pass through unchanged."
                    .to_string(),
            );
            return Text {
                formula: format!("Z{s}[i, j] = S{s}[i, j]"),
                steps: cell_name(
                    trace,
                    MatrixId::Head(h, HeadMatrix::Scores),
                    work.row,
                    work.col,
                ),
                notes,
            };
        }
    };
    if mode == ScaleMode::SqrtSeqLen {
        let length = if trace.source.is_some() {
            "the source's length src_len"
        } else {
            "the sentence's length seq_len"
        };
        notes.push(format!(
            "This divides by the square root of {length} = {root_of}, a common mistake: the \
             size of a dot product grows with the head width d_k = {}, not with the number of \
             tokens.",
            trace.head_dim()
        ));
    }
    // The divisor as the steps show it, so the check redoes exactly what is written.
    let shown = format_value(divisor, DIVISOR_DECIMALS);
    let by_hand = rounded(score) / shown.parse::<f64>().unwrap_or(divisor);
    rounding_note(&mut notes, by_hand, work.value);
    // A root that is not whole is written rounded, so it is only approximately the divisor.
    let steps = if divisor.fract() == 0.0 {
        format!("{} / √{root_of} = {} / {divisor}", num(score), num(score))
    } else {
        format!("{} / √{root_of} ≈ {} / {shown}", num(score), num(score))
    };
    if divisor == 1.0 {
        notes.push(format!(
            "Here {symbol} = 1, so dividing by √1 = 1 leaves every score as it is."
        ));
    }
    Text {
        formula: format!("Z{s}[i, j] = S{s}[i, j] / √{symbol}"),
        steps,
        notes,
    }
}

/// Decimals of the divisor in the steps of a scaled score.
const DIVISOR_DECIMALS: usize = 4;

fn mask(
    trace: &Trace,
    work: &CellWork,
    h: usize,
    name: String,
    causal: bool,
    window: Option<usize>,
    hidden: bool,
) -> Text {
    let (i, j) = (work.row, work.col);
    let s = subscript(h + 1);
    let (query, key) = (token(trace, i), key_token(trace, j));
    let scaled_name = cell_name(trace, MatrixId::Head(h, HeadMatrix::Scaled), i, j);
    if trace.source.is_some() {
        return Text {
            formula: format!("M{s}[i, j] = Z{s}[i, j]"),
            steps: format!("cross-attention has no causal mask, so {name} = {scaled_name}"),
            notes: vec![
                "Cross-attention has no causal mask: the keys are the source sentence, known in \
                 full, so every query sees every source token."
                    .to_string(),
            ],
        };
    }
    let one_token = trace.seq_len() == 1;
    if !causal {
        let note = if one_token {
            ONE_TOKEN_NO_MASK
        } else {
            "The causal mask is off: every token may look at every token, later ones included."
        };
        return Text {
            formula: format!("M{s}[i, j] = Z{s}[i, j]"),
            steps: format!("the causal mask is off, so {name} = {scaled_name}"),
            notes: vec![note.to_string()],
        };
    }
    let (qp, kp) = (i + 1, j + 1);
    let mut notes = Vec::new();
    if one_token {
        notes.push(ONE_TOKEN_MASK.to_string());
    }
    if let Some(w) = window {
        return windowed(trace, work, h, name, w, hidden, notes);
    }
    let steps = if hidden {
        notes.push(
            "With the causal mask on, a token may not look at the tokens after it: in the \
             softmax exp(−∞) = 0, so this key gets no weight at all."
                .to_string(),
        );
        format!(
            "key “{key}” (token {kp}) comes after query “{query}” (token {qp}): j > i, so \
             {name}"
        )
    } else if j == i {
        format!("key “{key}” (token {kp}) is the query itself: j = i, so {name} = {scaled_name}")
    } else {
        format!(
            "key “{key}” (token {kp}) comes before query “{query}” (token {qp}): j < i, so \
             {name} = {scaled_name}"
        )
    };
    Text {
        formula: format!("M{s}[i, j] = −∞ if j > i, else Z{s}[i, j]"),
        steps,
        notes,
    }
}

/// A cell of the mask under a sliding window of `w`.
fn windowed(
    trace: &Trace,
    work: &CellWork,
    h: usize,
    name: String,
    w: usize,
    hidden: bool,
    mut notes: Vec<String>,
) -> Text {
    let (i, j) = (work.row, work.col);
    let s = subscript(h + 1);
    let (query, key) = (token(trace, i), key_token(trace, j));
    let scaled_name = cell_name(trace, MatrixId::Head(h, HeadMatrix::Scaled), i, j);
    let (qp, kp) = (i + 1, j + 1);
    let tokens = |n: usize| {
        if n == 1 {
            "1 token".to_string()
        } else {
            format!("{n} tokens")
        }
    };
    notes.push(format!(
        "The sliding window of W = {w} lets each token see {}, and nothing later (the causal \
         mask). A hidden key gets −∞, and exp(−∞) = 0 in the softmax: no weight at all.",
        crate::words::settings::window_reach(w)
    ));
    let steps = if j > i {
        format!(
            "key “{key}” (token {kp}) comes after query “{query}” (token {qp}): j > i, so \
             {name}"
        )
    } else if hidden {
        format!(
            "key “{key}” (token {kp}) is {} before query “{query}” (token {qp}): i − j = \
             {} ≥ W = {w}, outside the window, so {name}",
            tokens(i - j),
            i - j
        )
    } else if j == i {
        format!("key “{key}” (token {kp}) is the query itself: j = i, so {name} = {scaled_name}")
    } else {
        format!(
            "key “{key}” (token {kp}) is {} before query “{query}” (token {qp}): i − j = \
             {} < W = {w}, inside the window, so {name} = {scaled_name}",
            tokens(i - j),
            i - j
        )
    };
    Text {
        formula: format!("M{s}[i, j] = −∞ if j > i or i − j ≥ {w}, else Z{s}[i, j]"),
        steps,
        notes,
    }
}

/// A cell of Q̃ₕ or K̃ₕ: one column of a pair turned by its row's angle.
#[allow(clippy::too_many_arguments)]
fn rotate(
    trace: &Trace,
    work: &CellWork,
    h: usize,
    name: String,
    of: MatrixId,
    ((a_col, a), (b_col, b)): ((usize, f64), (usize, f64)),
    is_first: bool,
    (pair, position, angle): (usize, usize, f64),
    rope: &Rope,
    head_dim: usize,
) -> Text {
    let s = subscript(h + 1);
    let is_query = of == MatrixId::Head(h, HeadMatrix::Q);
    let (m, t) = if is_query { ("Q", "Q̃") } else { ("K", "K̃") };
    let row = if is_query {
        token(trace, work.row)
    } else {
        key_token(trace, work.row)
    };
    let (cos, sin) = (angle.cos(), angle.sin());
    let (ra, rb, rc, rs) = (rounded(a), rounded(b), rounded(cos), rounded(sin));
    let (formula, steps, by_hand) = if is_first {
        (
            format!("{t}{s}[p, a] = {m}{s}[p, a]·cos φ − {m}{s}[p, b]·sin φ"),
            format!(
                "{} × {} − {} × {}",
                num(a),
                after_op(cos),
                after_op(b),
                after_op(sin)
            ),
            ra * rc - rb * rs,
        )
    } else {
        (
            format!("{t}{s}[p, b] = {m}{s}[p, a]·sin φ + {m}{s}[p, b]·cos φ"),
            format!(
                "{} × {} + {} × {}",
                num(a),
                after_op(sin),
                after_op(b),
                after_op(cos)
            ),
            ra * rs + rb * rc,
        )
    };
    let mut notes = Vec::new();
    rounding_note(&mut notes, by_hand, work.value);
    let omega = rope.frequency(pair, head_dim);
    notes.insert(
        0,
        format!(
            "Row “{row}”, token {}, is at position p = {position} (the turn counts from 0). Its columns {} and {} \
             are pair i = {pair} ({} pairing), which turns by ω = θ^(−2i/d_k) = {}^(−{}/{head_dim}) \
             {} rad a position, so φ = p·ω {} rad here; cos φ ≈ {}, sin φ ≈ {}. The \
             pair turns like a point in the plane: its length stays √(a² + b²).",
            position + 1,
            dim_of(trace, of, a_col),
            dim_of(trace, of, b_col),
            rope.pairing.key(),
            format_value(rope.theta, 0),
            2 * pair,
            equals_short(omega),
            equals_short(angle),
            num(cos),
            num(sin)
        ),
    );
    if position == 0 {
        notes.push(
            "At position 0 the angle is 0, so the first token is not turned at all: cos 0 = 1, \
             sin 0 = 0."
                .to_string(),
        );
    }
    Text {
        formula: format!("{formula}, φ = p·θ^(−2i/d_k)"),
        steps: format!("{name} = {steps}"),
        notes,
    }
}

/// A whole number with a real minus sign: `−1`.
fn signed(n: i64) -> String {
    if n < 0 {
        format!("−{}", -n)
    } else {
        n.to_string()
    }
}

/// Column `c` of head matrix `of` as its heatmap labels it.
fn dim_of(trace: &Trace, of: MatrixId, c: usize) -> String {
    col_label(trace, of, c)
}

/// A row of masked scores and its shifted exponentials.
struct Row<'a> {
    scores: &'a [f64],
    t: f64,
    max: f64,
    exps: &'a [f64],
    total: f64,
}

fn softmax(trace: &Trace, work: &CellWork, h: usize, name: String, row: Row) -> Option<Text> {
    let Row {
        scores,
        t,
        max,
        exps,
        total,
    } = row;
    let s = subscript(h + 1);
    let formula = if t == 1.0 {
        format!("A{s}[i, j] = exp(M{s}[i, j] − m_i) / Σ_j′ exp(M{s}[i, j′] − m_i)")
    } else {
        format!("A{s}[i, j] = exp((M{s}[i, j] − m_i) / T) / Σ_j′ exp((M{s}[i, j′] − m_i) / T)")
    };
    let query = token(trace, work.row);
    if !max.is_finite() {
        let (steps, note) = if max == f64::NEG_INFINITY {
            (
                format!("every key of query “{query}” is masked, so {name}"),
                "With no key left to attend to, the row's weights are set to zero: a convention, \
                 not a result of the formula, which gives 0/0 here (PyTorch, for one, returns NaN). \
                 The causal mask alone never does this, since every token sees itself.",
            )
        } else {
            (
                name,
                "This row has an infinite score: the infinite entries share the weight equally.",
            )
        };
        return Some(Text {
            formula,
            steps,
            notes: vec![note.to_string()],
        });
    }
    let call = |v: f64| {
        if v == f64::NEG_INFINITY {
            "exp(−∞)".to_string()
        } else if t == 1.0 {
            format!("exp({} − {})", num(v), after_op(max))
        } else {
            format!("exp(({} − {}) / {})", num(v), after_op(max), t)
        }
    };
    let evaluated = |v: f64, e: f64| {
        if v == f64::NEG_INFINITY {
            "0".to_string()
        } else {
            num(e)
        }
    };
    let calls: Vec<String> = scores.iter().map(|v| call(*v)).collect();
    let values: Vec<String> = scores
        .iter()
        .zip(exps)
        .map(|(v, e)| evaluated(*v, *e))
        .collect();
    let z = *scores.get(work.col)?;
    let numerator = *exps.get(work.col)?;
    // What the exponentials add to as shown: a learner adds these, not the exact ones.
    let shown_total: f64 = exps.iter().map(|e| rounded(*e)).sum();
    let all_shown = hidden_terms_note(scores.len()).is_none();
    let total_differs = all_shown && num(shown_total) != num(total);
    // An exponential written whose rounded numbers give another value than the one shown, which
    // comes from the exact scores: the first, as (its key, its call, by hand, shown).
    let exp_missed = scores.iter().zip(exps).enumerate().find_map(|(j, (v, e))| {
        if !v.is_finite() || !is_written(j, scores.len()) {
            return None;
        }
        let by_hand = ((rounded(*v) - rounded(max)) / t).exp();
        number::by_hand_if_missed(by_hand, *e, DECIMALS)
            .map(|text| (key_token(trace, j), call(*v), text, num(*e)))
    });
    let steps = format!(
        "{} / ({}) {} {} / ({}) {} {} / {}",
        call(z),
        join_terms(&calls),
        if exp_missed.is_some() { "≈" } else { "=" },
        evaluated(z, numerator),
        join_terms(&values),
        if total_differs { "≈" } else { "=" },
        evaluated(z, numerator),
        num(total)
    );
    let mut notes = vec![format!(
        "m_i = {}, the largest score in row “{query}”: subtracting it keeps exp from \
         overflowing and changes no weight.",
        num(max)
    )];
    if t != 1.0 {
        notes.push(format!(
            "Temperature T = {t}: below 1 it sharpens the row, above 1 it flattens it."
        ));
    }
    if scores.contains(&f64::NEG_INFINITY) {
        notes.push("Masked keys add exp(−∞) = 0.".to_string());
    }
    if let Some((key, call, by_hand, shown)) = exp_missed {
        let magnified = if t < 1.0 {
            format!(" (dividing by T = {t} magnifies the scores' rounding)")
        } else {
            String::new()
        };
        notes.push(format!(
            "Each exponential is computed from the exact scores, so it can differ from exp of \
             the rounded numbers written{magnified}: for key “{key}”, {call} comes to {by_hand}, \
             shown as {shown}."
        ));
    }
    if let Some(note) = hidden_terms_note(scores.len()) {
        notes.push(note);
    } else if total_differs {
        notes.push(format!(
            "The exponentials shown add to {}, not {}, because each was rounded: {} is the sum \
             of the exact values, and the weight is computed from those.",
            num(shown_total),
            num(total),
            num(total)
        ));
    }
    // The last step written, redone: the numerator shown over the total shown (a total of
    // rounded exponentials that misses it has its own note above).
    let (n_shown, total_shown) = (evaluated(z, numerator), num(total));
    if let Some(by_hand) =
        number::by_hand_if_missed(rounded(numerator) / rounded(total), work.value, DECIMALS)
    {
        notes.push(format!(
            "{REDONE}, {n_shown} / {total_shown} comes to {by_hand}, but the weight, {}, is \
             computed from the exact values.",
            num(work.value)
        ));
    }
    Some(Text {
        formula,
        steps,
        notes,
    })
}
