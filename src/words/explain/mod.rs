//! The arithmetic behind any cell of any heatmap, written out for a learner with the real
//! numbers and the display's rounding.
//!
//! [`explain`] reads the cell's [`CellWork`] from the core (which computation, which numbers,
//! which operands) and writes its title, formula, expansion and notes. Rows and columns are
//! named the way the heatmaps label them: tokens, and dimensions `d1, d2, …` counted from 1.

mod head;
mod terms;

use super::matrices::{
    cell_kind, cell_name, col_label, dim, hidden_unit, key_token, label, row_label, token,
};
use super::number::format_value;
use super::settings::word_order_text;
use crate::attention::{
    cell_work, Activation, CellWork, Computation, MatrixId, Operand, Trace, Wave,
};
use terms::{after_op, capitalised, columns_text, dot, num, rounded, rounding_note};

/// What the explanation panel says while no cell is selected.
pub const NO_CELL: &str = "Click any cell of a heatmap, or focus a heatmap with Tab and use the \
arrow keys, to see exactly how that number was computed.";

/// How one cell was computed, for a learner.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The matrix the cell belongs to.
    pub matrix: MatrixId,
    /// What the cell is, named by its row and column: `Score S₁[am, hungry]`.
    pub title: String,
    /// The rule in symbols: `q_i · k_j = Σ_m Q₁[i, m] · K₁[j, m]`.
    pub formula: String,
    /// The rule with this cell's numbers, term by term, ending in `= ` and the value as shown.
    pub expansion: String,
    /// The exact value, as the trace holds it.
    pub value: f64,
    /// The value as the heatmap shows it.
    pub value_text: String,
    /// What else is worth knowing: a switch that is off, why a cell is hidden, rounding.
    pub note: Option<String>,
    /// The cells read, to light up.
    pub operands: Vec<Operand>,
}

/// The arithmetic behind cell (`row`, `col`) of `matrix`; `None` when there is no such cell.
pub fn explain(trace: &Trace, matrix: MatrixId, row: usize, col: usize) -> Option<Explanation> {
    let work = cell_work(trace, matrix, row, col)?;
    let text = text(trace, &work)?;
    let value_text = num(work.value);
    Some(Explanation {
        matrix,
        title: format!(
            "{} {}",
            cell_kind(matrix),
            cell_name(trace, matrix, row, col)
        ),
        formula: text.formula,
        expansion: format!("{} = {value_text}", text.steps),
        value: work.value,
        value_text,
        note: (!text.notes.is_empty()).then(|| text.notes.join(" ")),
        operands: work.operands,
    })
}

/// An explanation's text before its final `= value`.
struct Text {
    formula: String,
    steps: String,
    notes: Vec<String>,
}

fn text(trace: &Trace, work: &CellWork) -> Option<Text> {
    let name = cell_name(trace, work.matrix, work.row, work.col);
    let (i, c) = (work.row, work.col);
    Some(match (&work.computation, work.matrix) {
        (Computation::Embedding, MatrixId::SourceEmbeddings) => Text {
            formula: "E_src[i, c] = dimension c of the embedding of source token i".to_string(),
            steps: name,
            notes: vec![format!(
                "An input, not computed: the vector looked up for the source token “{}”, \
                 editable like any token's.",
                key_token(trace, i)
            )],
        },
        (Computation::Embedding, _) => embedding(trace, i, name),
        (Computation::BlockParameter, m) => Text {
            formula: format!("{}: a parameter of the block", label(m)),
            notes: vec![
                "A parameter, not computed from the sentence: training would learn it; here it \
                 is the default value or the one you typed."
                    .to_string(),
            ],
            steps: name,
        },
        (Computation::Sum { left, right, a, b }, _) => {
            let mut notes = Vec::new();
            rounding_note(&mut notes, rounded(*a) + rounded(*b), work.value);
            notes.push(
                "A residual sum: the token's own row passes through unchanged, and the \
                 sub-layer's result is added to it."
                    .to_string(),
            );
            Text {
                formula: format!(
                    "{}[i, c] = {}[i, c] + {}[i, c]",
                    label(work.matrix),
                    label(*left),
                    label(*right)
                ),
                steps: format!("{} + {}", num(*a), after_op(*b)),
                notes,
            }
        }
        (
            Computation::LayerNorm {
                input,
                which,
                x,
                mean,
                var,
                eps,
                gamma,
                beta,
            },
            _,
        ) => {
            let src = label(*input);
            let sub = if *which == 1 { "₁" } else { "₂" };
            Text {
                formula: format!(
                    "{}[i, c] = ({src}[i, c] − μᵢ) / √(σᵢ² + ε) · γ{sub}[c] + β{sub}[c]",
                    label(work.matrix)
                ),
                steps: format!(
                    "({} − {}) / √({} + {}) · {} + {}",
                    num(*x),
                    after_op(*mean),
                    num(*var),
                    eps,
                    after_op(*gamma),
                    after_op(*beta)
                ),
                notes: vec![format!(
                    "μᵢ = {} and σᵢ² = {} are the mean and the variance (÷ d_model = {}) of row \
                     {} (“{}”) of {src}: each token is normalised on its own, never mixed with \
                     the others.",
                    format_value(*mean, 3),
                    format_value(*var, 3),
                    trace.config.d_model,
                    i + 1,
                    token(trace, i)
                )],
            }
        }
        (
            Computation::Affine {
                input,
                weight,
                terms,
                bias,
            },
            _,
        ) => {
            let (sum, notes) = dot(terms, work.value - bias);
            let (src, w) = (label(*input), label(MatrixId::BlockParam(*weight)));
            let b = if w == "W₁" { "b₁" } else { "b₂" };
            let col = col_label(trace, work.matrix, c);
            Text {
                formula: format!(
                    "{}[i, c] = Σ_m {src}[i, m] · {w}[m, c] + {b}[c]",
                    label(work.matrix)
                ),
                steps: format!(
                    "{src}[{}, :] · {w}[:, {col}] + {b}[{col}] = {sum} + {}",
                    token(trace, i),
                    after_op(*bias)
                ),
                notes,
            }
        }
        (Computation::Activate { activation, input }, _) => {
            let h = num(*input);
            let (formula, steps, note) = match activation {
                Activation::Relu => (
                    "G[i, c] = max(H[i, c], 0)".to_string(),
                    format!("max({h}, 0)"),
                    if *input < 0.0 {
                        "H's cell is negative, so ReLU sets it to 0."
                    } else {
                        "H's cell is not negative, so ReLU passes it unchanged."
                    },
                ),
                Activation::Gelu => (
                    "G[i, c] = 0.5·H·(1 + tanh(√(2/π)·(H + 0.044715·H³)))".to_string(),
                    format!("0.5 × {h} × (1 + tanh(0.7979 × ({h} + 0.044715 × {h}³)))"),
                    "GELU keeps large positive numbers almost unchanged, sends large negative \
                     ones to almost 0, and bends smoothly in between.",
                ),
            };
            Text {
                formula,
                steps,
                notes: vec![format!(
                    "{note} Unit {} of token “{}”: the activation reads this one number only.",
                    hidden_unit(c),
                    token(trace, i)
                )],
            }
        }
        (Computation::Position { wave, pair, angle }, _) => {
            position(trace, i, *wave, *pair, *angle)
        }
        (
            Computation::Input {
                embedding,
                positional,
            },
            _,
        ) => input(trace, work, *embedding, *positional),
        (Computation::Weight, MatrixId::Weight(w)) => Text {
            formula: format!("{}[m, c]: a parameter of the layer", w.label()),
            notes: vec![format!(
                "A parameter, not computed from the sentence: training would learn it; here it \
                 is the default value or the one you typed. It carries input dimension {} into \
                 output dimension {}.",
                row_label(trace, work.matrix, i),
                col_label(trace, work.matrix, c)
            )],
            steps: name,
        },
        (
            Computation::Projection {
                source,
                weight,
                terms,
            },
            _,
        ) => {
            let (sum, notes) = dot(terms, work.value);
            let (result, src, wl) = (label(work.matrix), label(*source), weight.label());
            Text {
                formula: format!("{result}[i, c] = Σ_m {src}[i, m] · {wl}[m, c]"),
                steps: format!(
                    "{src}[{}, :] · {wl}[:, {}] = {sum}",
                    row_label(trace, work.matrix, i),
                    dim(c)
                ),
                notes,
            }
        }
        (
            Computation::Split {
                whole,
                column,
                head_dim,
            },
            MatrixId::Head(h, _),
        ) => {
            let symbol = label(*whole);
            Text {
                formula: format!(
                    "{symbol}ₕ[i, c] = {symbol}[i, c], for c in the head's columns \
                     (h − 1)·d_k + 1 … h·d_k"
                ),
                steps: format!("{name} = {}", cell_name(trace, *whole, i, *column)),
                notes: vec![format!(
                    "Head {} takes {} of {symbol} (d_k = {head_dim} per head); this cell is \
                     column {}.",
                    h + 1,
                    columns_text(h, *head_dim),
                    dim(*column)
                )],
            }
        }
        (Computation::Concat { head, column }, _) => {
            let context = MatrixId::Head(*head, crate::attention::HeadMatrix::Context);
            Text {
                formula: "C[i, c] = Cₕ[i, c], for the head h whose columns \
                          (h − 1)·d_k + 1 … h·d_k hold c"
                    .to_string(),
                steps: format!("{name} = {}", cell_name(trace, context, i, *column)),
                notes: vec![format!(
                    "{} of C come from head {}; this cell is copied from it unchanged.",
                    capitalised(&columns_text(*head, trace.head_dim())),
                    head + 1
                )],
            }
        }
        (computation, MatrixId::Head(h, _)) => head::text(trace, work, computation, h, name)?,
        _ => return None,
    })
}

fn embedding(trace: &Trace, i: usize, name: String) -> Text {
    let t = token(trace, i);
    Text {
        formula: "E[i, c] = dimension c of the embedding of token i".to_string(),
        steps: name,
        notes: vec![format!(
            "An input, not computed: the vector looked up for “{t}”. Every word has a fixed toy \
             vector unless you edit it."
        )],
    }
}

fn position(trace: &Trace, pos: usize, wave: Wave, pair: usize, angle: f64) -> Text {
    let d_model = trace.config.d_model;
    let f = match wave {
        Wave::Sin => "sin",
        Wave::Cos => "cos",
    };
    let t = token(trace, pos);
    let (i, k) = (pos + 1, pair / 2 + 1);
    Text {
        formula: format!(
            "P[i, c] = {f}(p / 10000^(2(k − 1) / d_model)), with p = i − 1 and columns \
             d(2k − 1) (sin) and d(2k) (cos) forming pair k"
        ),
        steps: format!(
            "{f}({pos} / 10000^({pair}/{d_model})) = {f}({})",
            format_value(angle, 4)
        ),
        notes: vec![format!(
            "“{t}” is token {i}, so p = i − 1 = {pos}: the waves start at p = 0, which gives the \
             first token sin 0 = 0 and cos 0 = 1. This cell is in pair {k}; each pair of columns \
             is a slower wave than the pair before."
        )],
    }
}

fn input(trace: &Trace, work: &CellWork, e: f64, p: Option<f64>) -> Text {
    let source = work.matrix == MatrixId::SourceX;
    let (x, em, pm) = if source {
        ("X_src", MatrixId::SourceEmbeddings, "P_src")
    } else {
        ("X", MatrixId::Embeddings, "P")
    };
    let e_label = label(em);
    match p {
        Some(p) => {
            let mut notes = Vec::new();
            rounding_note(&mut notes, rounded(e) + rounded(p), work.value);
            if source {
                notes.push("The source's positions restart at its first token.".to_string());
            }
            Text {
                formula: format!("{x}[i, c] = {e_label}[i, c] + {pm}[i, c]"),
                steps: format!("{} + {}", num(e), after_op(p)),
                notes,
            }
        }
        None => Text {
            formula: format!("{x}[i, c] = {e_label}[i, c]"),
            steps: cell_name(trace, em, work.row, work.col),
            notes: vec![format!(
                "{x} = {e_label}: positional encoding is off. {}",
                word_order_text(false, trace.config.causal)
            )],
        },
    }
}
