//! The explanations of a head's own computations: Kᵀ, scores, scaling, the mask, the softmax and
//! the weighted sum.

use super::terms::{after_op, dot, hidden_terms_note, join_terms, num, rounded, rounding_note};
use super::Text;
use crate::attention::{CellWork, Computation, HeadMatrix, MatrixId, ScaleMode, Trace};
use crate::words::matrices::{cell_name, col_label, key_token, token};
use crate::words::number::{format_value, subscript};

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
        Computation::Mask { causal, hidden } => mask(trace, work, h, name, *causal, *hidden),
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
            let column = col_label(trace, work.matrix, j);
            notes.insert(
                0,
                format!(
                    "A weighted average of the value column {column}, with the attention weights \
                     of row “{query}”, which sum to 1."
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
    let steps = if divisor.fract() == 0.0 {
        format!("{} / √{root_of} = {} / {divisor}", num(score), num(score))
    } else {
        format!("{} / √{root_of} = {} / {shown}", num(score), num(score))
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
const DIVISOR_DECIMALS: usize = 3;

fn mask(
    trace: &Trace,
    work: &CellWork,
    h: usize,
    name: String,
    causal: bool,
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
    if !causal {
        return Text {
            formula: format!("M{s}[i, j] = Z{s}[i, j]"),
            steps: format!("the causal mask is off, so {name} = {scaled_name}"),
            notes: vec![
                "The causal mask is off: every token may look at every token, later ones included."
                    .to_string(),
            ],
        };
    }
    let (qp, kp) = (i + 1, j + 1);
    let mut notes = Vec::new();
    let steps = if hidden {
        notes.push(
            "With the causal mask on, a token may not look at the tokens after it: in the \
             softmax exp(−∞) = 0, so this key gets no weight at all."
                .to_string(),
        );
        format!(
            "key “{key}” (position {kp}) comes after query “{query}” (position {qp}): j > i, so \
             {name}"
        )
    } else if j == i {
        format!("key “{key}” (position {kp}) is the query itself: j = i, so {name} = {scaled_name}")
    } else {
        format!(
            "key “{key}” (position {kp}) comes before query “{query}” (position {qp}): j < i, so \
             {name} = {scaled_name}"
        )
    };
    Text {
        formula: format!("M{s}[i, j] = −∞ if j > i, else Z{s}[i, j]"),
        steps,
        notes,
    }
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
        format!("A{s}[i, j] = exp(M{s}[i, j] − max_i) / Σ_j′ exp(M{s}[i, j′] − max_i)")
    } else {
        format!("A{s}[i, j] = exp((M{s}[i, j] − max_i) / T) / Σ_j′ exp((M{s}[i, j′] − max_i) / T)")
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
    let steps = format!(
        "{} / ({}) = {} / ({}) = {} / {}",
        call(z),
        join_terms(&calls),
        evaluated(z, numerator),
        join_terms(&values),
        evaluated(z, numerator),
        num(total)
    );
    let mut notes = vec![format!(
        "max_i = {} is the largest score in row “{query}”; subtracting it keeps exp from \
         overflowing and leaves the weights unchanged.",
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
    if let Some(note) = hidden_terms_note(scores.len()) {
        notes.push(note);
    } else {
        rounding_note(&mut notes, rounded(numerator) / rounded(total), work.value);
    }
    Some(Text {
        formula,
        steps,
        notes,
    })
}
