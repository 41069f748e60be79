//! The arithmetic behind any cell of any heatmap, written out for a learner with the real
//! numbers and the display's rounding.
//!
//! [`explain`] reads the cell's [`CellWork`] from the core (which computation, which numbers,
//! which operands) and writes its title, formula, expansion and notes. Rows and columns are
//! named the way the heatmaps label them: tokens, and dimensions `d1, d2, …` counted from 1.

mod head;
pub(crate) mod terms;

use super::matrices::{cell_kind, cell_name, col_label, dim, hidden_unit, label, row_label, token};
use super::number::format_value;
use super::settings::word_order_after_switch;
use crate::attention::{
    cell_work, row_stats, Activation, BlockParam, CellWork, Computation, Matrix, MatrixId, Norm,
    Operand, Trace, Wave,
};
use terms::{
    after_op, capitalised, columns_text, dot, hidden_terms_note, num, rounded, rounding_note,
};

/// What the explanation panel says while no cell is selected.
pub const NO_CELL: &str = "Click any cell of a heatmap, or focus a heatmap with Tab and use the \
arrow keys, to see exactly how that number was computed.";

/// What the causal mask does to a sentence of one token, wherever the mask is described.
pub(crate) const ONE_TOKEN_MASK: &str =
    "With one token there is nothing above the diagonal: the mask hides nothing.";

/// The mask switched off, for a sentence of one token: switching it on would change nothing.
pub(crate) const ONE_TOKEN_NO_MASK: &str = "The causal mask is off. With one token there is \
nothing above the diagonal, so switching it on would hide nothing either.";

/// How one cell was computed, for a learner.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The matrix the cell belongs to.
    pub matrix: MatrixId,
    /// What the cell is, named by its row and column: `Score S₁[am, hungry]`.
    pub title: String,
    /// The rule in symbols: `q_i · k_j = Σ_m Q₁[i, m] · K₁[j, m]`.
    pub formula: String,
    /// The rule with this cell's numbers, term by term, ending in `= ` and the value as shown
    /// (`≈ ` when the rounded numbers written do not give it, as a note then says).
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
        expansion: format!(
            "{} {} {value_text}",
            text.steps,
            terms::result_sign(&text.notes)
        ),
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
        (Computation::Embedding, m) => embedding(trace, m == MatrixId::SourceEmbeddings, i, name),
        (Computation::BlockParameter, m) => Text {
            formula: match m {
                MatrixId::BlockParam(p) => block_param_formula(trace, p),
                _ => format!("{}: a parameter of the block", label(m)),
            },
            notes: vec![
                "A parameter, not computed from the sentence. In a real model training learns it; \
                 this app's training never changes the block's parameters, so here it is the \
                 default value or the one you typed or loaded."
                    .to_string(),
            ],
            steps: name,
        },
        (Computation::Sum { left, right, a, b }, _) => {
            let mut notes = Vec::new();
            rounding_note(&mut notes, rounded(*a) + rounded(*b), work.value);
            let what = if *right == MatrixId::Output {
                "attention"
            } else {
                "the feed-forward network"
            };
            notes.push(format!(
                "A residual sum: the token's own row of {} passes through unchanged, and {} \
                 (what {what} computed for the same token) is added to it.",
                label(*left),
                label(*right)
            ));
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
            let mut notes = Vec::new();
            let by_hand = (rounded(*x) - rounded(*mean)) / (rounded(*var) + eps).sqrt()
                * rounded(*gamma)
                + rounded(*beta);
            rounding_note(&mut notes, by_hand, work.value);
            notes.push(format!(
                "μᵢ = {} and σᵢ² = {} are the mean and the variance (÷ d_model = {}) of row {} \
                 (“{}”) of {src}: each token is normalised on its own, never mixed with the \
                 others.",
                format_value(*mean, STATS_DECIMALS),
                format_value(*var, STATS_DECIMALS),
                trace.config.d_model,
                i + 1,
                token(trace, i)
            ));
            if let Some(note) = row_stats_note(trace, *input, i, (*mean, *var)) {
                notes.push(note);
            }
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
                notes,
            }
        }
        (
            Computation::RmsNorm {
                input,
                which,
                x,
                mean_square,
                eps,
                gamma,
            },
            _,
        ) => {
            let src = label(*input);
            let sub = if *which == 1 { "₁" } else { "₂" };
            let mut notes = Vec::new();
            let by_hand = rounded(*x) / (rounded(*mean_square) + eps).sqrt() * rounded(*gamma);
            rounding_note(&mut notes, by_hand, work.value);
            notes.push(format!(
                "mean(xᵢ²) = {} is the mean of the squares of row {} (“{}”) of {src}, over its \
                 d_model = {} numbers. RMSNorm does not subtract the mean and has no shift β: it \
                 only rescales the row to a root mean square of about 1, then multiplies column \
                 c by γ{sub}[c].",
                format_value(*mean_square, STATS_DECIMALS),
                i + 1,
                token(trace, i),
                trace.config.d_model
            ));
            Text {
                formula: format!(
                    "{}[i, c] = {src}[i, c] / √(mean(xᵢ²) + ε) · γ{sub}[c]",
                    label(work.matrix)
                ),
                steps: format!(
                    "{} / √({} + {}) · {}",
                    num(*x),
                    num(*mean_square),
                    eps,
                    after_op(*gamma)
                ),
                notes,
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
            let (sum, _) = dot(terms, work.value - bias);
            let notes = affine_notes(terms, *bias, work.value);
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
        (
            Computation::Activate {
                activation,
                input,
                gate,
            },
            _,
        ) => {
            let h = num(*input);
            let mut notes = Vec::new();
            let (formula, steps, note) = match activation {
                Activation::Swiglu => {
                    let z = gate.unwrap_or_default();
                    let silu = |v: f64| Activation::Swiglu.apply(v);
                    rounding_note(&mut notes, silu(rounded(z)) * rounded(*input), work.value);
                    let n = if trace.norm() == Some(Norm::Pre) { "N₂" } else { "N₁" };
                    // SiLU of the gate as shown may round otherwise than the gate's own SiLU.
                    let eq = if num(silu(rounded(z))) == num(silu(z)) {
                        "="
                    } else {
                        "≈"
                    };
                    (
                        format!(
                            "G[i, c] = SiLU(Z[i, c]) · H[i, c], Z = {n}·W_gate, SiLU(z) = z/(1 + e^(−z))"
                        ),
                        format!(
                            "SiLU({}) × {} {eq} {} × {}",
                            num(z),
                            after_op(*input),
                            num(silu(z)),
                            after_op(*input)
                        ),
                        "Z[i, c], this unit's gate, is row i of the network's input times column \
                         c of W_gate, as H[i, c] is with W₁. SiLU passes a large gate almost \
                         unchanged, silences a gate near 0 and turns a negative one into a small \
                         negative factor, so the gate decides how much of H[i, c] goes on.",
                    )
                }
                Activation::Relu => (
                    "G[i, c] = max(H[i, c], 0)".to_string(),
                    format!("max({h}, 0)"),
                    if *input < 0.0 {
                        "H's cell is negative, so ReLU sets it to 0."
                    } else {
                        "H's cell is not negative, so ReLU passes it unchanged."
                    },
                ),
                Activation::Gelu => {
                    let r = rounded(*input);
                    let by_hand =
                        0.5 * r * (1.0 + (GELU_SHOWN_ROOT * (r + 0.044715 * r.powi(3))).tanh());
                    rounding_note(&mut notes, by_hand, work.value);
                    (
                        "G[i, c] = 0.5·H·(1 + tanh(√(2/π)·(H + 0.044715·H³)))".to_string(),
                        format!(
                            "0.5 × {} × (1 + tanh(0.7979 × ({h} + 0.044715 × {}³)))",
                            after_op(*input),
                            after_op(*input)
                        ),
                        "This is the tanh approximation of GELU(x) = x·Φ(x), with Φ the normal \
                         distribution's cumulative probability, as GPT-2 computes it. GELU keeps \
                         large positive numbers almost unchanged, sends large negative ones to \
                         almost 0, and bends smoothly in between.",
                    )
                }
            };
            notes.push(if gate.is_some() {
                format!(
                    "{note} Unit {} of token “{}”: the activation reads this cell of H and its gate.",
                    hidden_unit(c),
                    token(trace, i)
                )
            } else {
                format!(
                    "{note} Unit {} of token “{}”: the activation reads this one number only.",
                    hidden_unit(c),
                    token(trace, i)
                )
            });
            Text {
                formula,
                steps,
                notes,
            }
        }
        (Computation::Position { wave, pair, angle }, m) => position(
            trace,
            m == MatrixId::SourcePositional,
            i,
            (*wave, *pair, *angle),
        ),
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
                "A parameter, not computed from the sentence: training learns it; here it is \
                 the default, a preset's, the one you typed, or what training here made it. It carries input dimension {} into \
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
            let config = &trace.config;
            let shared = *whole != MatrixId::Q && config.grouped();
            if shared {
                let g = config.kv_head(h);
                let heads = config.query_heads(g);
                return Some(Text {
                        formula: format!(
                            "{symbol}ₕ[i, c] = {symbol}[i, c], for c in the columns of head h's \
                             key/value head g = ⌈h / {}⌉",
                            config.n_heads / config.n_kv_heads()
                        ),
                        steps: format!("{name} = {}", cell_name(trace, *whole, i, *column)),
                        notes: vec![format!(
                            "Query heads {}–{} share key/value head {}, which takes {} of \
                             {symbol} (d_k = {head_dim}); this cell is column {}.",
                            heads.start + 1,
                            heads.end,
                            g + 1,
                            columns_text(g, *head_dim),
                            dim(*column)
                        )],
                });
            }
            Text {
                formula: format!(
                    "{symbol}ₕ[i, c] = {symbol}[i, c], for c in the head's columns \
                     (h − 1)·d_k + 1 … h·d_k"
                ),
                steps: format!("{name} = {}", cell_name(trace, *whole, i, *column)),
                notes: vec![if trace.config.n_heads == 1 {
                    format!(
                        "With one head, head 1 takes every column of {symbol} (d_k = d_model = \
                         {head_dim}); this cell is column {}.",
                        dim(*column)
                    )
                } else {
                    format!(
                        "Head {} takes {} of {symbol} (d_k = {head_dim} per head); this cell is \
                         column {}.",
                        h + 1,
                        columns_text(h, *head_dim),
                        dim(*column)
                    )
                }],
            }
        }
        (Computation::Concat { .. }, _) if trace.config.n_heads == 1 => {
            let context = MatrixId::Head(0, crate::attention::HeadMatrix::Context);
            Text {
                formula: "C[i, c] = C₁[i, c]".to_string(),
                steps: format!("{name} = {}", cell_name(trace, context, i, c)),
                notes: vec![
                    "With one head there is nothing to place side by side: C is head 1's \
                     context C₁, copied unchanged."
                        .to_string(),
                ],
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
                    "{} of C {} from head {}; this cell is copied from it unchanged.",
                    capitalised(&columns_text(*head, trace.head_dim())),
                    if trace.head_dim() == 1 {
                        "comes"
                    } else {
                        "come"
                    },
                    head + 1
                )],
            }
        }
        (computation, MatrixId::Head(h, _)) => head::text(trace, work, computation, h, name)?,
        _ => return None,
    })
}

/// What a block parameter's cell is, with the indices of the formula that uses it:
/// `b₁[c]: the bias added to column c of H`.
fn block_param_formula(trace: &Trace, p: BlockParam) -> String {
    let ffn_input = if trace.norm() == Some(Norm::Pre) {
        "N₂"
    } else {
        "N₁"
    };
    let rms = trace
        .block
        .as_ref()
        .is_some_and(|b| b.params.norm_type == crate::attention::NormType::RmsNorm);
    let gamma = |n: &str| {
        if rms {
            format!(
                "γ{n}[c]: RMSNorm's scale for column c: the normalised value is multiplied by it, \
                 giving N{n}[i, c]"
            )
        } else {
            format!(
                "γ{n}[c]: LayerNorm's scale for column c: the normalised value is multiplied by \
                 it, then β{n}[c] is added, giving N{n}[i, c]"
            )
        }
    };
    let beta = |n: &str| {
        format!(
            "β{n}[c]: LayerNorm's shift for column c: added after γ{n}[c] scales the normalised \
             value, giving N{n}[i, c]"
        )
    };
    match p {
        BlockParam::W1 => {
            format!("W₁[m, c]: the weight from column m of {ffn_input} to column c of H")
        }
        BlockParam::B1 => "b₁[c]: the bias added to column c of H".to_string(),
        BlockParam::WGate => format!(
            "W_gate[m, c]: the weight from column m of {ffn_input} to the gate of column c of H"
        ),
        BlockParam::W2 => "W₂[m, c]: the weight from column m of G to column c of F".to_string(),
        BlockParam::B2 => "b₂[c]: the bias added to column c of F".to_string(),
        BlockParam::Ln1Gamma => gamma("₁"),
        BlockParam::Ln1Beta => beta("₁"),
        BlockParam::Ln2Gamma => gamma("₂"),
        BlockParam::Ln2Beta => beta("₂"),
    }
}

/// A cell of E, or of E_src when `source`.
fn embedding(trace: &Trace, source: bool, i: usize, name: String) -> Text {
    let (formula, whose, tokens) = if source {
        (
            "E_src[i, c] = dimension c of the embedding of source token i",
            "the source token",
            trace.key_tokens(),
        )
    } else {
        (
            "E[i, c] = dimension c of the embedding of token i",
            "token",
            trace.tokens.as_slice(),
        )
    };
    let word = tokens.get(i).map_or("", String::as_str);
    let mut notes = vec![format!(
        "An input, not computed: the vector looked up for {whose} {} (“{word}”). Every word has \
         a fixed toy vector unless you edit it.",
        i + 1
    )];
    let count = tokens.iter().filter(|t| *t == word).count();
    if count > 1 {
        notes.push(repeated_word_note(trace, source, word, count));
    }
    Text {
        formula: formula.to_string(),
        steps: name,
        notes,
    }
}

/// Decimals of a LayerNorm row's mean and variance in its note: as the steps and the heatmap
/// show numbers, so the note, the steps and a learner's own sum of the row agree.
const STATS_DECIMALS: usize = 2;

/// Says what the mean and variance of row `i` of `input` come to from its numbers as the
/// heatmap shows them, when that is not the exact `(mean, var)` the note gives.
fn row_stats_note(
    trace: &Trace,
    input: MatrixId,
    i: usize,
    (mean, var): (f64, f64),
) -> Option<String> {
    let m = input.get(trace)?;
    let shown: Vec<f64> = m.row(i).iter().map(|v| rounded(*v)).collect();
    let (by_hand_mean, by_hand_var) = row_stats(&Matrix::from_row_slice(1, shown.len(), &shown), 0);
    let stat = |v: f64| format_value(v, STATS_DECIMALS);
    let mean_differs = stat(by_hand_mean) != stat(mean);
    let var_differs = stat(by_hand_var) != stat(var);
    let found = match (mean_differs, var_differs) {
        (true, true) => format!(
            "the mean comes to ≈ {} and the variance to ≈ {}",
            stat(by_hand_mean),
            stat(by_hand_var)
        ),
        (true, false) => format!("the mean comes to ≈ {}", stat(by_hand_mean)),
        (false, true) => format!("the variance comes to ≈ {}", stat(by_hand_var)),
        (false, false) => return None,
    };
    Some(format!(
        "Redone from row {} of {} as the heatmap shows it, {found}: μᵢ and σᵢ² are computed \
         from the exact values.",
        i + 1,
        label(input)
    ))
}

/// What tells apart the `count` occurrences of `word` (in the source when `source`): their
/// positions when the encoding is on, and in self-attention the causal mask when it is on.
fn repeated_word_note(trace: &Trace, source: bool, word: &str, count: usize) -> String {
    let (e, x, tokens) = if source {
        let s = trace.source.as_ref();
        (s.map(|s| &s.embeddings), "X_src", trace.key_tokens())
    } else {
        (Some(&trace.embeddings), "X", trace.tokens.as_slice())
    };
    let rows: Vec<usize> = (0..tokens.len()).filter(|&r| tokens[r] == word).collect();
    // A scenario file may give each row its own vector; the toy embeddings never do.
    let same_vector = e.is_some_and(|e| rows.iter().all(|&r| e.row(r) == e.row(rows[0])));
    if !same_vector {
        return format!(
            "“{word}” occurs {count} times, but here its occurrences were given different \
             vectors, so their rows of {} already differ.",
            if source { "E_src" } else { "E" }
        );
    }
    let positional = trace.config.positional_encoding;
    // The causal mask never applies to cross-attention, nor to the source's tokens.
    let masked = trace.config.causal && trace.source.is_none();
    let apart = match (positional, masked) {
        (true, false) => format!("only the positional encoding gives them different rows of {x}."),
        (true, true) => format!(
            "only the positional encoding gives them different rows of {x}, though under the \
             causal mask each still sees a different set of tokens: itself and those before it."
        ),
        (false, false) if source => format!(
            "with positional encoding off nothing tells them apart: they get the same row of \
             {x}, the same keys and values, so each query scores them alike."
        ),
        (false, false) => format!(
            "with positional encoding off and no causal mask nothing tells them apart: their \
             rows of {x} and of every result after it are the same."
        ),
        (false, true) => format!(
            "with positional encoding off their rows of {x} are the same, but under the causal \
             mask each sees a different set of tokens, itself and those before it, so their \
             results can differ."
        ),
    };
    format!("“{word}” occurs {count} times, and each occurrence looks up this same vector: {apart}")
}

/// A cell of P, or of P_src when `source`: the source's positions restart at its first token.
fn position(
    trace: &Trace,
    source: bool,
    pos: usize,
    (wave, pair, angle): (Wave, usize, f64),
) -> Text {
    let d_model = trace.config.d_model;
    let f = match wave {
        Wave::Sin => "sin",
        Wave::Cos => "cos",
    };
    let (p, whose, tokens) = if source {
        ("P_src", "source token", trace.key_tokens())
    } else {
        ("P", "token", trace.tokens.as_slice())
    };
    // The note gives the position itself, so the word needs no position of its own.
    let word = tokens.get(pos).map_or("", String::as_str);
    let (i, k) = (pos + 1, pair / 2 + 1);
    let mut notes = vec![format!(
        "“{word}” is {whose} {i}, so p = i − 1 = {pos}: the waves start at p = 0, which gives \
         the first token sin 0 = 0 and cos 0 = 1. This cell is in pair {k}; each pair of \
         columns is a slower wave than the pair before."
    )];
    if source {
        notes.push(
            "The source counts its positions from its own first token, not after the sentence's."
                .to_string(),
        );
    }
    Text {
        formula: format!(
            "{p}[i, c] = {f}(p / 10000^(2(k − 1) / d_model)), with p = i − 1 and columns \
             d(2k − 1) (sin) and d(2k) (cos) forming pair k"
        ),
        steps: format!(
            "{f}({pos} / 10000^({pair}/{d_model})) = {f}({})",
            format_value(angle, 4)
        ),
        notes,
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
                if source {
                    SOURCE_WITHOUT_POSITIONS
                } else if trace.config.rope.is_some() {
                    crate::words::settings::rotary_word_order_text(false, trace.config.causal)
                } else {
                    word_order_after_switch(false, trace.config.causal, trace.source.is_some())
                }
            )],
        },
    }
}

/// What the source's order changes when it carries no positions.
const SOURCE_WITHOUT_POSITIONS: &str = "The keys and values then carry no positions: reorder the \
source's tokens and the columns of the scores and weights are reordered the same way, while every \
query's context stays the same.";

/// `√(2/π)` as GELU's written-out form shows it.
const GELU_SHOWN_ROOT: f64 = 0.7979;

/// The notes of `Σ_m input[i, m] · W[m, c] + b[c]`: the sum shown is the products and the bias,
/// so the rounding is checked on them together.
fn affine_notes(terms: &[(f64, f64)], bias: f64, value: f64) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(note) = hidden_terms_note(terms.len()) {
        notes.push(note);
    } else {
        let products: f64 = terms.iter().map(|(a, b)| rounded(*a) * rounded(*b)).sum();
        rounding_note(&mut notes, products + rounded(bias), value);
    }
    notes
}
