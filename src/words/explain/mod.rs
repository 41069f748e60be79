//! The arithmetic behind any cell of any heatmap, written out for a learner with the real
//! numbers and the display's rounding.
//!
//! [`explain`] reads the cell's [`CellWork`] from the core (which computation, which numbers,
//! which operands) and writes its title, formula, expansion and notes. Rows and columns are
//! named the way the heatmaps label them: tokens, and dimensions `d1, d2, …` counted from 1.

mod head;
mod terms;

use super::matrices::{cell_kind, cell_name, col_label, dim, label, row_label, token};
use super::number::format_value;
use super::settings::word_order_text;
use crate::attention::{cell_work, CellWork, Computation, MatrixId, Operand, Trace, Wave};
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
        (Computation::Embedding, _) => embedding(trace, i, name),
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
                    token(trace, i),
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
    match p {
        Some(p) => {
            let mut notes = Vec::new();
            rounding_note(&mut notes, rounded(e) + rounded(p), work.value);
            Text {
                formula: "X[i, c] = E[i, c] + P[i, c]".to_string(),
                steps: format!("{} + {}", num(e), after_op(p)),
                notes,
            }
        }
        None => Text {
            formula: "X[i, c] = E[i, c]".to_string(),
            steps: cell_name(trace, MatrixId::Embeddings, work.row, work.col),
            notes: vec![format!(
                "X = E: positional encoding is off. {}",
                word_order_text(false, trace.config.causal)
            )],
        },
    }
}
