//! The chain rule of one gradient cell as data: for any cell of a [`BackMatrix`], the rule that
//! produced it ([`BackComputation`]), the numbers that went in, and the operand cells it read,
//! so a view can write the arithmetic out and light the operands up, as forward cells do.

use super::super::block::{row_mean_square, row_stats, Norm, NormType, LAYER_NORM_EPS};
use super::super::cells::Operand;
use super::super::config::ScaleMode;
use super::super::forward::Trace;
use super::super::matrix_id::{HeadMatrix, MatrixId};
use super::super::parameter::{key_input, query_input};
use super::super::weights::WeightName;
use super::super::Matrix;
use super::pass::{BackMatrix, BackwardPass, HeadGrad};

/// How a cell of a target or a gradient was computed, with the numbers that went in.
///
/// A sum of products keeps its factors as `(left, right)` pairs, in the order they are added.
#[derive(Debug, Clone, PartialEq)]
pub enum BackComputation {
    /// A cell of A*ₕ: set by the goal, not computed.
    TargetPattern,
    /// A cell of Y*: `Σ_j P[i, j] · E[j, c]` over the keys j that P weights.
    TaskTarget {
        /// `(j, P[i, j], E[j, c])` for every j with `P[i, j] ≠ 0`.
        terms: Vec<(usize, f64, f64)>,
    },
    /// ∂L/∂Y[i, c] = 2·(Y[i, c] − Y*[i, c]) / (n·d_model).
    DOutput {
        /// Y[i, c].
        y: f64,
        /// Y*[i, c].
        target: f64,
        /// n = seq_len.
        seq_len: usize,
        /// d_model.
        d_model: usize,
    },
    /// ∂L/∂Aₕ[i, j] of the pattern loss: `−A*[i, j] / (n_heads·n·A[i, j])`, 0 where A* = 0.
    DWeightsPattern {
        /// Aₕ[i, j].
        a: f64,
        /// A*ₕ[i, j].
        target: f64,
        /// n_heads.
        n_heads: usize,
        /// n = seq_len.
        seq_len: usize,
    },
    /// A cell the causal mask hides: the mask holds its weight at 0 whatever the scores, so
    /// nothing flows back through it.
    Hidden,
    /// A sum of products `Σ left · right`, one backward rule of a matrix product.
    Product {
        /// The factors, in the order they are added.
        terms: Vec<(f64, f64)>,
    },
    /// A cell of ∂L/∂Qₕ or ∂L/∂Kₕ with rotary positions: the turned rows' gradient turned back
    /// by the same angle (a rotation's transpose): `a·cos φ + b·sin φ` for the pair's first
    /// column, `−a·sin φ + b·cos φ` for its second, with `a` and `b` the pair's two cells of
    /// ∂L/∂Q̃ₕ (or ∂L/∂K̃ₕ).
    TurnBack {
        /// ∂L/∂Q̃ₕ or ∂L/∂K̃ₕ.
        from: BackMatrix,
        /// The pair's first column and its gradient.
        first: (usize, f64),
        /// The pair's second column and its gradient.
        second: (usize, f64),
        /// Whether this cell is the pair's first column.
        is_first: bool,
        /// Which pair, from 0.
        pair: usize,
        /// The row's 0-based position.
        position: usize,
        /// The row's angle for the pair, in radians.
        angle: f64,
    },
    /// A cell of ∂L/∂K or ∂L/∂V when query heads share key/value heads: the sum of the
    /// gradients of every query head that read this key/value head's column.
    GroupSum {
        /// ∂L/∂Kₕ or ∂L/∂Vₕ.
        grad: HeadGrad,
        /// The key/value head, from 0.
        kv_head: usize,
        /// The column within a head.
        column: usize,
        /// `(query head, its ∂L/∂Kₕ[i, column])` for every query head of the group.
        parts: Vec<(usize, f64)>,
    },
    /// A copy of one cell of another gradient: a head's columns of a whole one, or back.
    Slice {
        /// The gradient the cell is copied from.
        from: BackMatrix,
        /// The head whose columns hold it, from 0.
        head: usize,
        /// The column read in `from`.
        column: usize,
    },
    /// ∂L/∂Mₕ[i, j] of the pattern loss: `(A[i, j] − A*[i, j]) / (n_heads·n·T)`.
    DMaskedPattern {
        /// Aₕ[i, j].
        a: f64,
        /// A*ₕ[i, j].
        target: f64,
        /// n_heads.
        n_heads: usize,
        /// n = seq_len.
        seq_len: usize,
        /// T.
        temperature: f64,
    },
    /// ∂L/∂Mₕ[i, j] in general: `A[i, j] · (D[i, j] − Σ_k D[i, k]·A[i, k]) / T`, D = ∂L/∂Aₕ.
    DMaskedTask {
        /// Aₕ[i, j].
        a: f64,
        /// D[i, j].
        g: f64,
        /// `(D[i, k], A[i, k])` for every key k of the row.
        row: Vec<(f64, f64)>,
        /// `Σ_k D[i, k]·A[i, k]`.
        rowsum: f64,
        /// T.
        temperature: f64,
    },
    /// ∂L/∂Sₕ[i, j] = ∂L/∂Mₕ[i, j] / divisor: the mask passes a visible cell's gradient on
    /// unchanged, and the scale divides it as it divided the score.
    DScores {
        /// ∂L/∂Mₕ[i, j].
        d_masked: f64,
        /// What the scores were divided by.
        divisor: f64,
        /// Where the divisor came from.
        mode: ScaleMode,
        /// The number under the root: d_k, seq_len or src_len (1 when scaling is off).
        root_of: usize,
    },
    /// ∂L/∂in[i, r]: for every projection that reads `in`, `Σ_c ∂L/∂out[i, c] · W[r, c]`.
    DInput {
        /// One path for each projection that read `in`.
        paths: Vec<InputPath>,
    },
    /// LN₁'s backward in a pre-norm block: `(ĝ[c] − mean(ĝ) − n̂[c]·mean(ĝ ⊙ n̂)) / √(σ² + ε)`,
    /// with ĝ = ∂L/∂N₁[i, :] ⊙ γ₁, n̂ = (X[i, :] − μ)/√(σ² + ε) and σ² the row's variance.
    LayerNormBack {
        /// ∂L/∂N₁[i, c].
        d_norm: f64,
        /// γ₁[c].
        gamma: f64,
        /// ĝ[c] = ∂L/∂N₁[i, c] · γ₁[c].
        g_hat: f64,
        /// The mean of ĝ over the row.
        mean_g: f64,
        /// n̂[c].
        n_hat: f64,
        /// The mean of ĝ ⊙ n̂ over the row.
        mean_gn: f64,
        /// √(σ² + ε) of row i of X, σ² its variance.
        sd: f64,
    },
    /// RMSNorm₁'s backward in a pre-norm block: `(ĝ[c] − x̂[c]·mean(ĝ ⊙ x̂)) / r`, with
    /// ĝ = ∂L/∂N₁[i, :] ⊙ γ₁, r = √(mean(X[i, :]²) + ε) and x̂ = X[i, :] / r.
    RmsNormBack {
        /// ∂L/∂N₁[i, c].
        d_norm: f64,
        /// γ₁[c].
        gamma: f64,
        /// ĝ[c] = ∂L/∂N₁[i, c] · γ₁[c].
        g_hat: f64,
        /// x̂[c].
        x_hat: f64,
        /// The mean of ĝ ⊙ x̂ over the row.
        mean_gx: f64,
        /// r = √(mean(x²) + ε) of row i of X.
        rms: f64,
    },
    /// ∂L/∂E[i, c] = ∂L/∂X[i, c] (X = E + P, the positions are constants), plus the task
    /// target's path where it lands.
    DEmbeddings {
        /// ∂L/∂X[i, c] (or ∂L/∂X_src).
        along_attention: f64,
        /// (Pᵀ·∂L/∂Y*)[i, c], for a task whose target is built from these embeddings.
        via_target: Option<f64>,
    },
}

/// One projection's path back to its input: `(∂L/∂out, W, [(∂L/∂out[i, c], W[r, c]) for
/// every c])`.
pub type InputPath = (BackMatrix, WeightName, Vec<(f64, f64)>);

/// One gradient cell, what it holds and how it was computed.
#[derive(Debug, Clone, PartialEq)]
pub struct BackCellWork {
    /// The matrix.
    pub matrix: BackMatrix,
    /// The row, from 0.
    pub row: usize,
    /// The column, from 0.
    pub col: usize,
    /// The exact value, as the backward pass holds it.
    pub value: f64,
    /// How it was computed.
    pub computation: BackComputation,
    /// The cells read, in the order the computation reads them.
    pub operands: Vec<Operand>,
}

type Work = (BackComputation, Vec<Operand>);

fn back(m: BackMatrix) -> MatrixId {
    MatrixId::Back(m)
}

fn at(m: &Matrix, r: usize, c: usize) -> Option<f64> {
    m.get((r, c)).copied()
}

/// `(a[i, k], b[k, j])`-style pairs: `left(k)` and `right(k)` for k in `0..n`.
fn pairs(n: usize, left: impl Fn(usize) -> f64, right: impl Fn(usize) -> f64) -> Vec<(f64, f64)> {
    (0..n).map(|k| (left(k), right(k))).collect()
}

/// The chain rule behind cell (`row`, `col`) of `matrix`; `None` when there is no such cell or
/// the loss does not reach the matrix.
pub fn back_cell_work(
    trace: &Trace,
    pass: &BackwardPass,
    matrix: BackMatrix,
    row: usize,
    col: usize,
) -> Option<BackCellWork> {
    let value = matrix.value(pass, row, col)?;
    let (i, c) = (row, col);
    let g = &pass.gradients;
    let (computation, operands): Work = match matrix {
        BackMatrix::TargetPattern(_) => (BackComputation::TargetPattern, Vec::new()),
        BackMatrix::TaskTarget => {
            let (_, mixing) = pass.task_target()?;
            let e = task_embeddings(trace);
            let terms = (0..mixing.ncols())
                .filter(|&j| mixing[(i, j)] != 0.0)
                .map(|j| Some((j, mixing[(i, j)], at(e, j, c)?)))
                .collect::<Option<Vec<_>>>()?;
            let source = trace.source.is_some();
            let id = if source {
                MatrixId::SourceEmbeddings
            } else {
                MatrixId::Embeddings
            };
            let operands = terms
                .iter()
                .map(|(j, _, _)| Operand::cell(id, *j, c))
                .collect();
            (BackComputation::TaskTarget { terms }, operands)
        }
        BackMatrix::Output => {
            let (target, _) = pass.task_target()?;
            (
                BackComputation::DOutput {
                    y: at(&trace.output, i, c)?,
                    target: at(target, i, c)?,
                    seq_len: trace.seq_len(),
                    d_model: trace.config.d_model,
                },
                vec![
                    Operand::cell(MatrixId::Output, i, c),
                    Operand::cell(back(BackMatrix::TaskTarget), i, c),
                ],
            )
        }
        BackMatrix::WO => weight_grad(
            &trace.concat,
            MatrixId::Concat,
            g.d_output.as_ref()?,
            BackMatrix::Output,
            i,
            c,
        )?,
        BackMatrix::WQ => weight_grad(
            trace.attention_input(),
            query_input(trace.wiring()),
            &g.d_q,
            BackMatrix::Q,
            i,
            c,
        )?,
        BackMatrix::WK => weight_grad(
            trace.key_input(),
            key_input(trace.wiring()),
            &g.d_k,
            BackMatrix::K,
            i,
            c,
        )?,
        BackMatrix::WV => weight_grad(
            trace.key_input(),
            key_input(trace.wiring()),
            g.d_v.as_ref()?,
            BackMatrix::V,
            i,
            c,
        )?,
        BackMatrix::Concat => {
            let d_output = g.d_output.as_ref()?;
            let w_o = trace.weights.get(WeightName::O);
            (
                BackComputation::Product {
                    terms: pairs(d_output.ncols(), |k| d_output[(i, k)], |k| w_o[(c, k)]),
                },
                vec![
                    Operand::row(back(BackMatrix::Output), i),
                    Operand::row(MatrixId::Weight(WeightName::O), c),
                ],
            )
        }
        BackMatrix::Head(h, m) => head_cell(trace, pass, h, m, i, c)?,
        BackMatrix::K | BackMatrix::V if trace.config.grouped() => {
            let hd = trace.head_dim().max(1);
            let (kv_head, column) = (c / hd, c % hd);
            let grad = if matrix == BackMatrix::K {
                HeadGrad::K
            } else {
                HeadGrad::V
            };
            let heads = trace.config.query_heads(kv_head);
            let parts = heads
                .clone()
                .map(|h| Some((h, BackMatrix::Head(h, grad).value(pass, i, column)?)))
                .collect::<Option<Vec<_>>>()?;
            let operands = heads
                .map(|h| Operand::cell(back(BackMatrix::Head(h, grad)), i, column))
                .collect();
            (
                BackComputation::GroupSum {
                    grad,
                    kv_head,
                    column,
                    parts,
                },
                operands,
            )
        }
        BackMatrix::Q | BackMatrix::K | BackMatrix::V => {
            let hd = trace.head_dim();
            let head = c / hd.max(1);
            let m = match matrix {
                BackMatrix::Q => HeadGrad::Q,
                BackMatrix::K => HeadGrad::K,
                _ => HeadGrad::V,
            };
            let from = BackMatrix::Head(head, m);
            (
                BackComputation::Slice {
                    from,
                    head,
                    column: c - head * hd,
                },
                vec![Operand::cell(back(from), i, c - head * hd)],
            )
        }
        BackMatrix::Norm1 => d_input(trace, pass, false, i, c)?,
        BackMatrix::X => {
            if trace.norm() == Some(Norm::Pre) {
                layer_norm_cell(trace, pass, i, c)?
            } else {
                d_input(trace, pass, false, i, c)?
            }
        }
        BackMatrix::SourceX => d_input(trace, pass, true, i, c)?,
        BackMatrix::ViaTarget => {
            let (_, mixing) = pass.task_target()?;
            let d_output = g.d_output.as_ref()?;
            (
                BackComputation::Product {
                    terms: pairs(mixing.nrows(), |k| mixing[(k, i)], |k| -d_output[(k, c)]),
                },
                vec![Operand::col(back(BackMatrix::Output), c)],
            )
        }
        BackMatrix::Embeddings | BackMatrix::SourceEmbeddings => {
            let source = matrix == BackMatrix::SourceEmbeddings;
            let along = if source {
                BackMatrix::SourceX
            } else {
                BackMatrix::X
            };
            // The target's path lands on the embeddings the target is built from.
            let lands = trace.source.is_some() == source;
            let via_target = match (lands, g.d_embeddings_via_target.as_ref()) {
                (true, Some(v)) => Some(at(v, i, c)?),
                _ => None,
            };
            let mut operands = vec![Operand::cell(back(along), i, c)];
            if via_target.is_some() {
                operands.push(Operand::cell(back(BackMatrix::ViaTarget), i, c));
            }
            (
                BackComputation::DEmbeddings {
                    along_attention: along.value(pass, i, c)?,
                    via_target,
                },
                operands,
            )
        }
    };
    Some(BackCellWork {
        matrix,
        row,
        col,
        value,
        computation,
        operands,
    })
}

/// The embeddings a task's target is built from: E, or E_src in cross-attention.
fn task_embeddings(trace: &Trace) -> &Matrix {
    trace
        .source
        .as_ref()
        .map_or(&trace.embeddings, |s| &s.embeddings)
}

/// ∂L/∂W[r, c] = Σ_i input[i, r] · ∂L/∂out[i, c].
fn weight_grad(
    input: &Matrix,
    input_id: MatrixId,
    d_out: &Matrix,
    d_out_id: BackMatrix,
    r: usize,
    c: usize,
) -> Option<Work> {
    if r >= input.ncols() || c >= d_out.ncols() {
        return None;
    }
    Some((
        BackComputation::Product {
            terms: pairs(input.nrows(), |k| input[(k, r)], |k| d_out[(k, c)]),
        },
        vec![Operand::col(input_id, r), Operand::col(back(d_out_id), c)],
    ))
}

/// A cell of one of head `h`'s gradients.
fn head_cell(
    trace: &Trace,
    pass: &BackwardPass,
    h: usize,
    m: HeadGrad,
    i: usize,
    c: usize,
) -> Option<Work> {
    let head = trace.heads.get(h)?;
    let grads = pass.gradients.heads.get(h)?;
    let hidden = trace.config.mask().hides(i, c);
    let fwd = |m: HeadMatrix| MatrixId::Head(h, m);
    let bk = |m: HeadGrad| back(BackMatrix::Head(h, m));
    let (n_heads, seq_len) = (trace.heads.len(), trace.seq_len());
    Some(match m {
        HeadGrad::Context => {
            let cols = trace.head_columns(h);
            (
                BackComputation::Slice {
                    from: BackMatrix::Concat,
                    head: h,
                    column: cols.start + c,
                },
                vec![Operand::cell(back(BackMatrix::Concat), i, cols.start + c)],
            )
        }
        HeadGrad::V => {
            let d_context = grads.d_context.as_ref()?;
            (
                BackComputation::Product {
                    terms: pairs(seq_len, |k| head.weights[(k, i)], |k| d_context[(k, c)]),
                },
                vec![
                    Operand::col(fwd(HeadMatrix::Weights), i),
                    Operand::col(bk(HeadGrad::Context), c),
                ],
            )
        }
        HeadGrad::Weights if hidden => (BackComputation::Hidden, Vec::new()),
        HeadGrad::Weights => match (pass.target_pattern(h), grads.d_context.as_ref()) {
            (Some(target), _) => (
                BackComputation::DWeightsPattern {
                    a: at(&head.weights, i, c)?,
                    target: at(target, i, c)?,
                    n_heads,
                    seq_len,
                },
                vec![
                    Operand::cell(fwd(HeadMatrix::Weights), i, c),
                    Operand::cell(back(BackMatrix::TargetPattern(h)), i, c),
                ],
            ),
            (None, Some(d_context)) => (
                BackComputation::Product {
                    terms: pairs(d_context.ncols(), |k| d_context[(i, k)], |k| head.v[(c, k)]),
                },
                vec![
                    Operand::row(bk(HeadGrad::Context), i),
                    Operand::row(fwd(HeadMatrix::V), c),
                ],
            ),
            (None, None) => return None,
        },
        HeadGrad::Masked if hidden => (BackComputation::Hidden, Vec::new()),
        HeadGrad::Masked => match pass.target_pattern(h) {
            Some(target) => (
                BackComputation::DMaskedPattern {
                    a: at(&head.weights, i, c)?,
                    target: at(target, i, c)?,
                    n_heads,
                    seq_len,
                    temperature: trace.config.temperature,
                },
                vec![
                    Operand::cell(fwd(HeadMatrix::Weights), i, c),
                    Operand::cell(back(BackMatrix::TargetPattern(h)), i, c),
                ],
            ),
            None => {
                let row = pairs(
                    head.weights.ncols(),
                    |k| grads.d_weights[(i, k)],
                    |k| head.weights[(i, k)],
                );
                let rowsum = row.iter().map(|(g, a)| g * a).sum();
                (
                    BackComputation::DMaskedTask {
                        a: at(&head.weights, i, c)?,
                        g: at(&grads.d_weights, i, c)?,
                        row,
                        rowsum,
                        temperature: trace.config.temperature,
                    },
                    vec![
                        Operand::row(fwd(HeadMatrix::Weights), i),
                        Operand::row(bk(HeadGrad::Weights), i),
                    ],
                )
            }
        },
        HeadGrad::Scores if hidden => (BackComputation::Hidden, Vec::new()),
        HeadGrad::Scores => {
            let config = &trace.config;
            let root_of = match config.scale {
                ScaleMode::SqrtHeadDim => config.head_dim(),
                ScaleMode::SqrtSeqLen => trace.n_keys(),
                ScaleMode::None => 1,
            };
            (
                BackComputation::DScores {
                    d_masked: at(&grads.d_masked, i, c)?,
                    divisor: trace.scale_divisor,
                    mode: config.scale,
                    root_of,
                },
                vec![Operand::cell(bk(HeadGrad::Masked), i, c)],
            )
        }
        HeadGrad::QRope | HeadGrad::KRope if trace.config.rope.is_none() => return None,
        HeadGrad::Q | HeadGrad::K if trace.config.rope.is_some() => {
            let from = if m == HeadGrad::Q {
                HeadGrad::QRope
            } else {
                HeadGrad::KRope
            };
            turn_back(trace, pass, h, from, i, c)?
        }
        HeadGrad::QRope => (
            BackComputation::Product {
                terms: pairs(
                    head.k_scored().nrows(),
                    |k| grads.d_scores[(i, k)],
                    |k| head.k_scored()[(k, c)],
                ),
            },
            vec![
                Operand::row(bk(HeadGrad::Scores), i),
                Operand::col(fwd(HeadMatrix::KRope), c),
            ],
        ),
        HeadGrad::KRope => (
            BackComputation::Product {
                terms: pairs(
                    head.q_scored().nrows(),
                    |k| grads.d_scores[(k, i)],
                    |k| head.q_scored()[(k, c)],
                ),
            },
            vec![
                Operand::col(bk(HeadGrad::Scores), i),
                Operand::col(fwd(HeadMatrix::QRope), c),
            ],
        ),
        HeadGrad::Q => (
            BackComputation::Product {
                terms: pairs(
                    head.k.nrows(),
                    |k| grads.d_scores[(i, k)],
                    |k| head.k[(k, c)],
                ),
            },
            vec![
                Operand::row(bk(HeadGrad::Scores), i),
                Operand::col(fwd(HeadMatrix::K), c),
            ],
        ),
        HeadGrad::K => (
            BackComputation::Product {
                terms: pairs(
                    head.q.nrows(),
                    |k| grads.d_scores[(k, i)],
                    |k| head.q[(k, c)],
                ),
            },
            vec![
                Operand::col(bk(HeadGrad::Scores), i),
                Operand::col(fwd(HeadMatrix::Q), c),
            ],
        ),
    })
}

/// A cell of ∂L/∂Qₕ (or ∂L/∂Kₕ) turned back from ∂L/∂Q̃ₕ (or ∂L/∂K̃ₕ), `from`.
fn turn_back(
    trace: &Trace,
    pass: &BackwardPass,
    h: usize,
    from: HeadGrad,
    i: usize,
    c: usize,
) -> Option<Work> {
    let rope = trace.config.rope?;
    let d_k = trace.head_dim();
    let turned = BackMatrix::Head(h, from).get(pass)?;
    let pair = rope.pairing.pair_of(c, d_k)?;
    let (a, b) = rope.pairing.columns(pair, d_k);
    let from = BackMatrix::Head(h, from);
    Some((
        BackComputation::TurnBack {
            from,
            first: (a, at(turned, i, a)?),
            second: (b, at(turned, i, b)?),
            is_first: c == a,
            pair,
            position: i,
            angle: rope.angle(i, pair, d_k),
        },
        vec![
            Operand::cell(back(from), i, a),
            Operand::cell(back(from), i, b),
        ],
    ))
}

/// ∂L/∂in[i, r] for what the queries read (`source` false: X or N₁, and the keys' and values'
/// input too without a source) or for X_src (`source` true).
fn d_input(trace: &Trace, pass: &BackwardPass, source: bool, i: usize, r: usize) -> Option<Work> {
    let g = &pass.gradients;
    let mut paths: Vec<(BackMatrix, WeightName, &Matrix)> = Vec::new();
    if !source {
        paths.push((BackMatrix::Q, WeightName::Q, &g.d_q));
    }
    if source == trace.source.is_some() {
        paths.push((BackMatrix::K, WeightName::K, &g.d_k));
        if let Some(d_v) = g.d_v.as_ref() {
            paths.push((BackMatrix::V, WeightName::V, d_v));
        }
    }
    let mut operands = Vec::new();
    let mut written = Vec::new();
    for (id, w, d) in paths {
        let weight = trace.weights.get(w);
        if i >= d.nrows() || r >= weight.nrows() {
            return None;
        }
        written.push((id, w, pairs(d.ncols(), |k| d[(i, k)], |k| weight[(r, k)])));
        operands.push(Operand::row(back(id), i));
        operands.push(Operand::row(MatrixId::Weight(w), r));
    }
    Some((BackComputation::DInput { paths: written }, operands))
}

/// A cell of ∂L/∂X through LN₁ in a pre-norm block.
fn layer_norm_cell(trace: &Trace, pass: &BackwardPass, i: usize, c: usize) -> Option<Work> {
    let block = trace.block.as_ref()?;
    let d_norm = pass.gradients.d_norm_1.as_ref()?;
    let gamma = &block.params.ln_1_gamma;
    let x = &trace.x;
    if i >= x.nrows() || c >= x.ncols() {
        return None;
    }
    let d = x.ncols();
    if block.params.norm_type == NormType::RmsNorm {
        let rms = (row_mean_square(x, i) + LAYER_NORM_EPS).sqrt();
        let x_hat = |k: usize| x[(i, k)] / rms;
        let g_hat = |k: usize| d_norm[(i, k)] * gamma[(0, k)];
        let mean_gx = (0..d).map(|k| g_hat(k) * x_hat(k)).sum::<f64>() / d as f64;
        return Some((
            BackComputation::RmsNormBack {
                d_norm: d_norm[(i, c)],
                gamma: gamma[(0, c)],
                g_hat: g_hat(c),
                x_hat: x_hat(c),
                mean_gx,
                rms,
            },
            vec![
                Operand::row(back(BackMatrix::Norm1), i),
                Operand::row(MatrixId::X, i),
            ],
        ));
    }
    let (mean, var) = row_stats(x, i);
    let sd = (var + LAYER_NORM_EPS).sqrt();
    let n_hat = |k: usize| (x[(i, k)] - mean) / sd;
    let g_hat = |k: usize| d_norm[(i, k)] * gamma[(0, k)];
    let mean_g = (0..d).map(g_hat).sum::<f64>() / d as f64;
    let mean_gn = (0..d).map(|k| g_hat(k) * n_hat(k)).sum::<f64>() / d as f64;
    Some((
        BackComputation::LayerNormBack {
            d_norm: d_norm[(i, c)],
            gamma: gamma[(0, c)],
            g_hat: g_hat(c),
            mean_g,
            n_hat: n_hat(c),
            mean_gn,
            sd,
        },
        vec![
            Operand::row(back(BackMatrix::Norm1), i),
            Operand::row(MatrixId::X, i),
        ],
    ))
}
