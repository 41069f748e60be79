//! Cell arithmetic as data: for any cell of any matrix in a [`Trace`], the kind of computation
//! that produced it ([`Computation`]), the numbers that went in, and the operand cells it read
//! ([`Operand`]), so a view can write the arithmetic out and light the operands up.
//!
//! Matrices are named by [`MatrixId`], a plain enum; rows and columns are counted from 0.

use super::block::{
    row_mean_square, row_stats, Activation, BlockParam, Norm, NormType, LAYER_NORM_EPS,
};
use super::config::ScaleMode;
use super::embeddings::encoding_angle;
use super::forward::Trace;
use super::matrix_id::{BlockMatrix, HeadMatrix, MatrixId};
use super::parameter::{key_input, query_input};
use super::rope::Rope;
use super::weights::WeightName;
use super::Matrix;

/// Cells that one cell was computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operand {
    /// The matrix read.
    pub matrix: MatrixId,
    /// Whole rows read.
    pub rows: Vec<usize>,
    /// Whole columns read.
    pub cols: Vec<usize>,
    /// A single cell read.
    pub cell: Option<(usize, usize)>,
}

impl Operand {
    pub(crate) fn new(matrix: MatrixId) -> Self {
        Self {
            matrix,
            rows: Vec::new(),
            cols: Vec::new(),
            cell: None,
        }
    }

    pub(crate) fn row(matrix: MatrixId, r: usize) -> Self {
        Self {
            rows: vec![r],
            ..Self::new(matrix)
        }
    }

    pub(crate) fn col(matrix: MatrixId, c: usize) -> Self {
        Self {
            cols: vec![c],
            ..Self::new(matrix)
        }
    }

    pub(crate) fn cell(matrix: MatrixId, r: usize, c: usize) -> Self {
        Self {
            cell: Some((r, c)),
            ..Self::new(matrix)
        }
    }
}

/// Which of the two waves a column of the positional encoding uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wave {
    /// Even columns.
    Sin,
    /// Odd columns.
    Cos,
}

/// How a cell was computed, with the numbers that went in.
///
/// A sum of products keeps its factors as `(left, right)` pairs, in the order they are added.
#[derive(Debug, Clone, PartialEq)]
pub enum Computation {
    /// A cell of E: looked up for the token, not computed.
    Embedding,
    /// A cell of P: `wave(pos / 10000^(pair / d_model))` with `pos` the row.
    Position {
        /// sin for even columns, cos for odd ones.
        wave: Wave,
        /// The column rounded down to even, `2k`.
        pair: usize,
        /// The argument of the wave.
        angle: f64,
    },
    /// A cell of X: `E + P`, or `E` alone when positions are off.
    Input {
        /// E's cell.
        embedding: f64,
        /// P's cell, when positional encoding is on.
        positional: Option<f64>,
    },
    /// A cell of a weight matrix: a parameter, not computed.
    Weight,
    /// A cell of Q, K, V or Y: `Σ_m source[i, m] · weight[m, c]`.
    Projection {
        /// The left factor: X, or C for the output.
        source: MatrixId,
        /// The right factor.
        weight: WeightName,
        /// `(source[i, m], weight[m, c])` for every m.
        terms: Vec<(f64, f64)>,
    },
    /// A cell of Qₕ, Kₕ or Vₕ: a copy of `whole[i, column]`.
    Split {
        /// Q, K or V.
        whole: MatrixId,
        /// The column of `whole`, `h·head_dim + c`.
        column: usize,
        /// The head width d_k.
        head_dim: usize,
    },
    /// A cell of Kₕᵀ: `Kₕ[j, m]` for cell `(m, j)`.
    Transposed,
    /// A cell of Q̃ₕ or K̃ₕ: one column of a pair of Qₕ's (or Kₕ's) row turned by the row's
    /// angle for that pair: `a·cos φ − b·sin φ` for the pair's first column, `a·sin φ + b·cos φ`
    /// for its second, with `a` and `b` the pair's first and second values.
    Rotate {
        /// Qₕ or Kₕ.
        of: MatrixId,
        /// The pair's first column and its value.
        first: (usize, f64),
        /// The pair's second column and its value.
        second: (usize, f64),
        /// Whether this cell is the pair's first column.
        is_first: bool,
        /// Which pair, from 0: it turns by `θ^(−2·pair/d_k)` a position.
        pair: usize,
        /// The row's 0-based position.
        position: usize,
        /// The turn: position · θ^(−2·pair/d_k), in radians.
        angle: f64,
        /// The rotary settings.
        rope: Rope,
        /// The head width d_k.
        head_dim: usize,
    },
    /// A cell of Sₕ: `Σ_m Qₕ[i, m] · Kₕ[j, m]`.
    Score {
        /// `(Qₕ[i, m], Kₕ[j, m])` for every m.
        terms: Vec<(f64, f64)>,
    },
    /// A cell of Zₕ: `Sₕ[i, j] / divisor`.
    Scale {
        /// The raw score `Sₕ[i, j]`.
        score: f64,
        /// What it was divided by.
        divisor: f64,
        /// Where the divisor came from.
        mode: ScaleMode,
        /// The number under the root: d_k or seq_len (1 when scaling is off).
        root_of: usize,
    },
    /// A cell of Mₕ: `Zₕ[i, j]`, or −∞ when the key comes after the query under the mask.
    Mask {
        /// Whether the causal mask is on.
        causal: bool,
        /// The sliding window, under the causal mask.
        window: Option<usize>,
        /// Whether this cell is hidden (mask on and j > i, or j ≤ i − W).
        hidden: bool,
    },
    /// A cell of Aₕ: `exp((Mₕ[i, j] − max) / T) / Σ_j′ exp((Mₕ[i, j′] − max) / T)`.
    Softmax {
        /// Row i of Mₕ, the masked scores.
        scores: Vec<f64>,
        /// The temperature T.
        temperature: f64,
        /// The row's largest score.
        max: f64,
        /// `exp((score − max) / T)` for each score; empty when `max` is not finite.
        exps: Vec<f64>,
        /// The sum of `exps`.
        total: f64,
    },
    /// A cell of Cₕ: `Σ_j Aₕ[i, j] · Vₕ[j, c]`.
    WeightedSum {
        /// `(Aₕ[i, j], Vₕ[j, c])` for every j.
        terms: Vec<(f64, f64)>,
    },
    /// A cell of C: a copy of `Cₕ[i, column]`.
    Concat {
        /// The head whose columns hold this one, from 0.
        head: usize,
        /// The column within that head.
        column: usize,
    },
    /// A residual sum `left[i, c] + right[i, c]`.
    Sum {
        /// The first matrix added.
        left: MatrixId,
        /// The second.
        right: MatrixId,
        /// `left[i, c]`.
        a: f64,
        /// `right[i, c]`.
        b: f64,
    },
    /// A cell of a LayerNorm: `(input[i, c] − mean) / √(var + ε) · γ[c] + β[c]`.
    LayerNorm {
        /// The matrix normalised.
        input: MatrixId,
        /// 1 or 2.
        which: usize,
        /// `input[i, c]`.
        x: f64,
        /// The mean of row i.
        mean: f64,
        /// The biased variance of row i.
        var: f64,
        /// ε.
        eps: f64,
        /// γ[c].
        gamma: f64,
        /// β[c].
        beta: f64,
    },
    /// A cell of an RMSNorm: `input[i, c] / √(mean of row i's squares + ε) · γ[c]`.
    RmsNorm {
        /// The matrix normalised.
        input: MatrixId,
        /// 1 or 2.
        which: usize,
        /// `input[i, c]`.
        x: f64,
        /// The mean of the squares of row i.
        mean_square: f64,
        /// ε.
        eps: f64,
        /// γ[c].
        gamma: f64,
    },
    /// A cell of H or F: `Σ_m input[i, m] · W[m, c] + b[c]`.
    Affine {
        /// The left factor.
        input: MatrixId,
        /// W₁ or W₂.
        weight: BlockParam,
        /// `(input[i, m], W[m, c])` for every m.
        terms: Vec<(f64, f64)>,
        /// b[c].
        bias: f64,
    },
    /// A cell of G: `act(H[i, c])`.
    Activate {
        /// ReLU, GELU or SwiGLU.
        activation: Activation,
        /// H[i, c].
        input: f64,
        /// With SwiGLU, the gate Z[i, c] = (N·W_gate)[i, c] whose SiLU multiplies H[i, c].
        gate: Option<f64>,
    },
    /// A cell of a block parameter: set, not computed.
    BlockParameter,
}

/// One cell, what it holds and how it was computed.
#[derive(Debug, Clone, PartialEq)]
pub struct CellWork {
    /// The matrix.
    pub matrix: MatrixId,
    /// The row, from 0.
    pub row: usize,
    /// The column, from 0.
    pub col: usize,
    /// The exact value, as the trace holds it.
    pub value: f64,
    /// How it was computed.
    pub computation: Computation,
    /// The cells read, in the order the computation reads them.
    pub operands: Vec<Operand>,
}

/// The arithmetic behind cell (`row`, `col`) of `matrix`; `None` when there is no such cell.
pub fn cell_work(trace: &Trace, matrix: MatrixId, row: usize, col: usize) -> Option<CellWork> {
    let value = matrix.value(trace, row, col)?;
    let (i, c) = (row, col);
    let (computation, operands) = match matrix {
        MatrixId::Embeddings | MatrixId::SourceEmbeddings => (Computation::Embedding, Vec::new()),
        MatrixId::Positional | MatrixId::SourcePositional => (position(trace, i, c), Vec::new()),
        MatrixId::X => input(trace, i, c)?,
        MatrixId::SourceX => source_input(trace, i, c)?,
        MatrixId::Weight(_) => (Computation::Weight, Vec::new()),
        MatrixId::BlockParam(_) => (Computation::BlockParameter, Vec::new()),
        MatrixId::Q => projection(trace, query_input(trace.wiring()), WeightName::Q, i, c)?,
        MatrixId::K => projection(trace, key_input(trace.wiring()), WeightName::K, i, c)?,
        MatrixId::V => projection(trace, key_input(trace.wiring()), WeightName::V, i, c)?,
        MatrixId::Block(b) => block_cell(trace, b, i, c)?,
        MatrixId::Output => projection(trace, MatrixId::Concat, WeightName::O, i, c)?,
        MatrixId::Head(h, m) => match m {
            HeadMatrix::Q | HeadMatrix::K | HeadMatrix::V => split(trace, h, m, i, c)?,
            HeadMatrix::QRope | HeadMatrix::KRope => rotate(trace, h, m, i, c)?,
            HeadMatrix::KTransposed => (
                Computation::Transposed,
                vec![Operand::cell(MatrixId::Head(h, HeadMatrix::K), c, i)],
            ),
            HeadMatrix::KRopeTransposed => (
                Computation::Transposed,
                vec![Operand::cell(MatrixId::Head(h, HeadMatrix::KRope), c, i)],
            ),
            HeadMatrix::Scores => score(trace, h, i, c)?,
            HeadMatrix::Scaled => scale(trace, h, i, c)?,
            HeadMatrix::Masked => (
                Computation::Mask {
                    causal: trace.config.causal,
                    window: trace.config.mask().window,
                    hidden: trace.config.mask().hides(i, c),
                },
                vec![Operand::cell(MatrixId::Head(h, HeadMatrix::Scaled), i, c)],
            ),
            HeadMatrix::Weights => softmax(trace, h, i, c)?,
            HeadMatrix::Context => weighted_sum(trace, h, i, c)?,
        },
        MatrixId::Concat => concat(trace, i, c)?,
        // A gradient's cell is read from a backward pass: `back_cell_work`.
        MatrixId::Back(_) => return None,
    };
    Some(CellWork {
        matrix,
        row,
        col,
        value,
        computation,
        operands,
    })
}

/// A computation and the operands it read.
type Work = (Computation, Vec<Operand>);

fn source_input(trace: &Trace, i: usize, c: usize) -> Option<Work> {
    let source = trace.source.as_ref()?;
    sum_of_input(
        (&source.embeddings, MatrixId::SourceEmbeddings),
        source
            .positional
            .as_ref()
            .map(|p| (p, MatrixId::SourcePositional)),
        i,
        c,
    )
}

fn block_cell(trace: &Trace, b: BlockMatrix, i: usize, c: usize) -> Option<Work> {
    use BlockMatrix as B;
    let block = trace.block.as_ref()?;
    let pre = block.norm == Norm::Pre;
    let id = MatrixId::Block;
    let sum = |left: MatrixId, right: MatrixId| -> Option<Work> {
        let (a, b) = (left.value(trace, i, c)?, right.value(trace, i, c)?);
        Some((
            Computation::Sum { left, right, a, b },
            vec![Operand::cell(left, i, c), Operand::cell(right, i, c)],
        ))
    };
    let norm = |input: MatrixId, which: usize| -> Option<Work> {
        let m = input.stored(trace)?;
        let (gamma, beta) = if which == 1 {
            (BlockParam::Ln1Gamma, BlockParam::Ln1Beta)
        } else {
            (BlockParam::Ln2Gamma, BlockParam::Ln2Beta)
        };
        if block.params.norm_type == NormType::RmsNorm {
            return Some((
                Computation::RmsNorm {
                    input,
                    which,
                    x: at(m, i, c)?,
                    mean_square: row_mean_square(m, i),
                    eps: LAYER_NORM_EPS,
                    gamma: at(block.params.get(gamma), 0, c)?,
                },
                vec![
                    Operand::row(input, i),
                    Operand::cell(MatrixId::BlockParam(gamma), 0, c),
                ],
            ));
        }
        let (mean, var) = row_stats(m, i);
        Some((
            Computation::LayerNorm {
                input,
                which,
                x: at(m, i, c)?,
                mean,
                var,
                eps: LAYER_NORM_EPS,
                gamma: at(block.params.get(gamma), 0, c)?,
                beta: at(block.params.get(beta), 0, c)?,
            },
            vec![
                Operand::row(input, i),
                Operand::cell(MatrixId::BlockParam(gamma), 0, c),
                Operand::cell(MatrixId::BlockParam(beta), 0, c),
            ],
        ))
    };
    let affine = |input: MatrixId, weight: BlockParam, bias: BlockParam| -> Option<Work> {
        let left = input.stored(trace)?;
        let right = block.params.get(weight);
        let terms = (0..left.ncols())
            .map(|m| Some((at(left, i, m)?, at(right, m, c)?)))
            .collect::<Option<Vec<_>>>()?;
        Some((
            Computation::Affine {
                input,
                weight,
                terms,
                bias: at(block.params.get(bias), 0, c)?,
            },
            vec![
                Operand::row(input, i),
                Operand::col(MatrixId::BlockParam(weight), c),
                Operand::cell(MatrixId::BlockParam(bias), 0, c),
            ],
        ))
    };
    match b {
        B::Sum1 => sum(MatrixId::X, MatrixId::Output),
        B::Norm1 if pre => norm(MatrixId::X, 1),
        B::Norm1 => norm(id(B::Sum1), 1),
        B::Norm2 if pre => norm(id(B::Sum1), 2),
        B::Norm2 => norm(id(B::Sum2), 2),
        B::Hidden => affine(
            id(if pre { B::Norm2 } else { B::Norm1 }),
            BlockParam::W1,
            BlockParam::B1,
        ),
        B::Activated => Some((
            Computation::Activate {
                activation: block.activation,
                input: at(&block.hidden, i, c)?,
                gate: block.gate.as_ref().and_then(|g| at(g, i, c)),
            },
            vec![Operand::cell(id(B::Hidden), i, c)],
        )),
        B::Ffn => affine(id(B::Activated), BlockParam::W2, BlockParam::B2),
        B::Sum2 => sum(id(if pre { B::Sum1 } else { B::Norm1 }), id(B::Ffn)),
    }
}

fn position(trace: &Trace, pos: usize, c: usize) -> Computation {
    Computation::Position {
        wave: if c.is_multiple_of(2) {
            Wave::Sin
        } else {
            Wave::Cos
        },
        pair: (c / 2) * 2,
        angle: encoding_angle(pos, c, trace.config.d_model),
    }
}

fn input(trace: &Trace, i: usize, c: usize) -> Option<Work> {
    sum_of_input(
        (&trace.embeddings, MatrixId::Embeddings),
        trace.positional.as_ref().map(|p| (p, MatrixId::Positional)),
        i,
        c,
    )
}

/// A cell of `E (+ P)`, each given with its name.
fn sum_of_input(
    (e, e_id): (&Matrix, MatrixId),
    p: Option<(&Matrix, MatrixId)>,
    i: usize,
    c: usize,
) -> Option<Work> {
    let embedding = at(e, i, c)?;
    let mut operands = vec![Operand::cell(e_id, i, c)];
    let positional = match p {
        Some((positions, p_id)) => {
            operands.push(Operand::cell(p_id, i, c));
            Some(at(positions, i, c)?)
        }
        None => None,
    };
    Some((
        Computation::Input {
            embedding,
            positional,
        },
        operands,
    ))
}

/// `result[i, c] = Σ_m source[i, m] · W[m, c]`.
fn projection(
    trace: &Trace,
    source: MatrixId,
    weight: WeightName,
    i: usize,
    c: usize,
) -> Option<Work> {
    let left = source.stored(trace)?;
    let right = trace.weights.get(weight);
    let terms = (0..left.ncols())
        .map(|m| Some((at(left, i, m)?, at(right, m, c)?)))
        .collect::<Option<Vec<_>>>()?;
    Some((
        Computation::Projection {
            source,
            weight,
            terms,
        },
        vec![
            Operand::row(source, i),
            Operand::col(MatrixId::Weight(weight), c),
        ],
    ))
}

fn split(trace: &Trace, h: usize, m: HeadMatrix, i: usize, c: usize) -> Option<Work> {
    let whole = match m {
        HeadMatrix::Q => MatrixId::Q,
        HeadMatrix::K => MatrixId::K,
        HeadMatrix::V => MatrixId::V,
        _ => return None,
    };
    let head_dim = trace.head_dim();
    // Keys and values are the columns of the head's key/value head.
    let owner = match m {
        HeadMatrix::Q => h,
        _ => trace.config.kv_head(h),
    };
    let column = owner * head_dim + c;
    whole.value(trace, i, column)?;
    Some((
        Computation::Split {
            whole,
            column,
            head_dim,
        },
        vec![Operand::cell(whole, i, column)],
    ))
}

fn rotate(trace: &Trace, h: usize, m: HeadMatrix, i: usize, c: usize) -> Option<Work> {
    let rope = trace.config.rope?;
    let head = trace.heads.get(h)?;
    let (of, unturned) = match m {
        HeadMatrix::QRope => (HeadMatrix::Q, &head.q),
        _ => (HeadMatrix::K, &head.k),
    };
    let d_k = unturned.ncols();
    let pair = rope.pairing.pair_of(c, d_k)?;
    let (a, b) = rope.pairing.columns(pair, d_k);
    let of = MatrixId::Head(h, of);
    Some((
        Computation::Rotate {
            of,
            first: (a, at(unturned, i, a)?),
            second: (b, at(unturned, i, b)?),
            is_first: c == a,
            pair,
            position: i,
            angle: rope.angle(i, pair, d_k),
            rope,
            head_dim: d_k,
        },
        vec![Operand::cell(of, i, a), Operand::cell(of, i, b)],
    ))
}

fn score(trace: &Trace, h: usize, i: usize, j: usize) -> Option<Work> {
    let head = trace.heads.get(h)?;
    let (q, k) = (head.q_scored(), head.k_scored());
    // With rotary positions the scores read the turned rows.
    let (q_read, k_read, kt_read) = match trace.config.rope {
        Some(_) => (
            HeadMatrix::QRope,
            HeadMatrix::KRope,
            HeadMatrix::KRopeTransposed,
        ),
        None => (HeadMatrix::Q, HeadMatrix::K, HeadMatrix::KTransposed),
    };
    let terms = (0..q.ncols())
        .map(|m| Some((at(q, i, m)?, at(k, j, m)?)))
        .collect::<Option<Vec<_>>>()?;
    Some((
        Computation::Score { terms },
        vec![
            Operand::row(MatrixId::Head(h, q_read), i),
            Operand::row(MatrixId::Head(h, k_read), j),
            Operand::col(MatrixId::Head(h, kt_read), j),
        ],
    ))
}

fn scale(trace: &Trace, h: usize, i: usize, j: usize) -> Option<Work> {
    let score = at(&trace.heads.get(h)?.scores, i, j)?;
    let mode = trace.config.scale;
    let root_of = match mode {
        ScaleMode::SqrtHeadDim => trace.head_dim(),
        ScaleMode::SqrtSeqLen => trace.n_keys(),
        ScaleMode::None => 1,
    };
    Some((
        Computation::Scale {
            score,
            divisor: trace.scale_divisor,
            mode,
            root_of,
        },
        vec![Operand::cell(MatrixId::Head(h, HeadMatrix::Scores), i, j)],
    ))
}

fn softmax(trace: &Trace, h: usize, i: usize, j: usize) -> Option<Work> {
    let head = trace.heads.get(h)?;
    let scores = (0..head.masked.ncols())
        .map(|k| at(&head.masked, i, k))
        .collect::<Option<Vec<_>>>()?;
    scores.get(j)?;
    let temperature = trace.config.temperature;
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // Subtracting the row maximum keeps exp from overflowing; a row without a finite maximum
    // (all masked, or an infinite score) has no such terms.
    let exps: Vec<f64> = if max.is_finite() {
        scores
            .iter()
            .map(|v| ((v - max) / temperature).exp())
            .collect()
    } else {
        Vec::new()
    };
    let total = exps.iter().sum();
    Some((
        Computation::Softmax {
            scores,
            temperature,
            max,
            exps,
            total,
        },
        vec![
            Operand::row(MatrixId::Head(h, HeadMatrix::Masked), i),
            Operand::row(MatrixId::Head(h, HeadMatrix::Weights), i),
        ],
    ))
}

fn weighted_sum(trace: &Trace, h: usize, i: usize, c: usize) -> Option<Work> {
    let head = trace.heads.get(h)?;
    let terms = (0..head.weights.ncols())
        .map(|j| Some((at(&head.weights, i, j)?, at(&head.v, j, c)?)))
        .collect::<Option<Vec<_>>>()?;
    Some((
        Computation::WeightedSum { terms },
        vec![
            Operand::row(MatrixId::Head(h, HeadMatrix::Weights), i),
            Operand::col(MatrixId::Head(h, HeadMatrix::V), c),
        ],
    ))
}

fn concat(trace: &Trace, i: usize, c: usize) -> Option<Work> {
    let head_dim = trace.head_dim();
    if head_dim == 0 {
        return None;
    }
    let (head, column) = (c / head_dim, c % head_dim);
    let context = MatrixId::Head(head, HeadMatrix::Context);
    context.value(trace, i, column)?;
    Some((
        Computation::Concat { head, column },
        vec![Operand::cell(context, i, column)],
    ))
}

fn at(m: &Matrix, r: usize, c: usize) -> Option<f64> {
    m.get((r, c)).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{forward, Config, Init, Inputs, Weights};

    fn trace() -> Trace {
        let config = Config {
            d_model: 4,
            n_heads: 2,
            causal: true,
            ..Config::default()
        };
        let inputs =
            Inputs::from_sentence("a b c", config, Weights::new(Init::Default, 4)).unwrap();
        forward(&inputs).unwrap()
    }

    #[test]
    fn a_transposed_key_cell_reads_the_mirrored_key_cell() {
        let t = trace();
        let w = cell_work(&t, MatrixId::Head(1, HeadMatrix::KTransposed), 0, 2).unwrap();
        assert_eq!(w.value, t.heads[1].k[(2, 0)]);
        assert_eq!(
            w.operands,
            [Operand::cell(MatrixId::Head(1, HeadMatrix::K), 2, 0)]
        );
    }

    #[test]
    fn a_softmax_row_keeps_its_shifted_exponentials_and_their_sum() {
        let t = trace();
        let w = cell_work(&t, MatrixId::Head(0, HeadMatrix::Weights), 1, 0).unwrap();
        let Computation::Softmax {
            exps, total, max, ..
        } = w.computation
        else {
            panic!("not a softmax: {:?}", w.computation);
        };
        // Row 1 under the causal mask: two visible keys, one exp(−∞) = 0, and the largest
        // score shifts to exp(0) = 1.
        assert_eq!(exps.len(), 3);
        assert_eq!(exps[2], 0.0);
        assert!(exps.contains(&1.0));
        assert!(max.is_finite());
        assert!((exps[0] / total - w.value).abs() < 1e-12);
    }

    #[test]
    fn a_concat_cell_names_the_head_and_column_it_copies() {
        let t = trace();
        let w = cell_work(&t, MatrixId::Concat, 2, 3).unwrap();
        assert_eq!(w.computation, Computation::Concat { head: 1, column: 1 });
        assert_eq!(w.value, t.heads[1].context[(2, 1)]);
    }

    #[test]
    fn masked_cells_are_hidden_only_after_the_query_with_the_mask_on() {
        let t = trace();
        let hidden = |r, c| match cell_work(&t, MatrixId::Head(0, HeadMatrix::Masked), r, c)
            .unwrap()
            .computation
        {
            Computation::Mask { hidden, .. } => hidden,
            other => panic!("not a mask: {other:?}"),
        };
        assert!(hidden(0, 1));
        assert!(!hidden(1, 1));
        assert!(!hidden(2, 0));
    }
}
