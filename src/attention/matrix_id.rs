//! Names for every matrix a [`Trace`] holds, including the views' Kₕᵀ, and access to their
//! values by name.

use super::backward::BackMatrix;
use super::block::{BlockParam, BlockTrace};
use super::forward::Trace;
use super::stage::Stage;
use super::weights::WeightName;
use super::Matrix;

/// One of the matrices a head computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeadMatrix {
    /// Qₕ, the head's columns of Q. (seq_len, head_dim)
    Q,
    /// Kₕ, the head's columns of K. (seq_len, head_dim)
    K,
    /// Kₕᵀ: rows are head dimensions, columns are key tokens. (head_dim, seq_len)
    KTransposed,
    /// Q̃ₕ, Qₕ turned by rotary positions. (seq_len, head_dim)
    QRope,
    /// K̃ₕ, Kₕ turned by rotary positions. (seq_len, head_dim)
    KRope,
    /// K̃ₕᵀ, what the scores read with rotary positions. (head_dim, seq_len)
    KRopeTransposed,
    /// Vₕ, the head's columns of V. (seq_len, head_dim)
    V,
    /// Sₕ = Qₕ·Kₕᵀ. (seq_len, seq_len)
    Scores,
    /// Zₕ = Sₕ ÷ divisor. (seq_len, seq_len)
    Scaled,
    /// Mₕ, Zₕ with the causal mask applied. (seq_len, seq_len)
    Masked,
    /// Aₕ = softmax(Mₕ / T) per row. (seq_len, seq_len)
    Weights,
    /// Cₕ = Aₕ·Vₕ. (seq_len, head_dim)
    Context,
}

impl HeadMatrix {
    /// All of them, in the order the stages compute them.
    pub const ALL: [HeadMatrix; 12] = [
        Self::Q,
        Self::K,
        Self::KTransposed,
        Self::QRope,
        Self::KRope,
        Self::KRopeTransposed,
        Self::V,
        Self::Scores,
        Self::Scaled,
        Self::Masked,
        Self::Weights,
        Self::Context,
    ];
}

/// One of the matrices the transformer block computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockMatrix {
    /// R₁ = X + Y. (seq_len, d_model)
    Sum1,
    /// N₁. (seq_len, d_model)
    Norm1,
    /// H. (seq_len, d_ff)
    Hidden,
    /// G = act(H). (seq_len, d_ff)
    Activated,
    /// F. (seq_len, d_model)
    Ffn,
    /// R₂. (seq_len, d_model)
    Sum2,
    /// N₂. (seq_len, d_model)
    Norm2,
}

impl BlockMatrix {
    /// All of them, in post-norm order.
    pub const ALL: [BlockMatrix; 7] = [
        Self::Sum1,
        Self::Norm1,
        Self::Hidden,
        Self::Activated,
        Self::Ffn,
        Self::Sum2,
        Self::Norm2,
    ];

    /// The name used in trace files: `sum_1`, `norm_1`, `hidden`, ….
    pub fn key(self) -> &'static str {
        match self {
            Self::Sum1 => "sum_1",
            Self::Norm1 => "norm_1",
            Self::Hidden => "hidden",
            Self::Activated => "activated",
            Self::Ffn => "ffn",
            Self::Sum2 => "sum_2",
            Self::Norm2 => "norm_2",
        }
    }

    /// The stage that computes it.
    pub fn stage(self) -> Stage {
        match self {
            Self::Sum1 => Stage::Residual1,
            Self::Norm1 => Stage::Norm1,
            Self::Hidden => Stage::Hidden,
            Self::Activated => Stage::Activation,
            Self::Ffn => Stage::FeedForward,
            Self::Sum2 => Stage::Residual2,
            Self::Norm2 => Stage::Norm2,
        }
    }

    /// Its values in a block trace.
    pub fn of(self, b: &BlockTrace) -> &Matrix {
        match self {
            Self::Sum1 => &b.sum_1,
            Self::Norm1 => &b.norm_1,
            Self::Hidden => &b.hidden,
            Self::Activated => &b.activated,
            Self::Ffn => &b.ffn,
            Self::Sum2 => &b.sum_2,
            Self::Norm2 => &b.norm_2,
        }
    }
}

/// Any matrix a trace holds, as the views draw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatrixId {
    /// E, the token embeddings. (seq_len, d_model)
    Embeddings,
    /// P, the positional encoding; absent when it is switched off. (seq_len, d_model)
    Positional,
    /// X = E + P, the layer's input. (seq_len, d_model)
    X,
    /// A projection matrix. (d_model, d_model)
    Weight(WeightName),
    /// Q = X·W_q. (seq_len, d_model)
    Q,
    /// K = X·W_k. (seq_len, d_model)
    K,
    /// V = X·W_v. (seq_len, d_model)
    V,
    /// One matrix of head `h`, counted from 0.
    Head(usize, HeadMatrix),
    /// C = [C₁ | C₂ | …]. (seq_len, d_model)
    Concat,
    /// Y = C·W_o. (seq_len, d_model)
    Output,
    /// E_src, the source sentence's token embeddings. (src_len, d_model)
    SourceEmbeddings,
    /// P_src, the source's positional encoding. (src_len, d_model)
    SourcePositional,
    /// X_src = E_src + P_src, what keys and values read in cross-attention. (src_len, d_model)
    SourceX,
    /// A parameter of the block; vectors are one row.
    BlockParam(BlockParam),
    /// A result of the block.
    Block(BlockMatrix),
    /// A target or a gradient of the backward stages, held by a backward pass, not the trace.
    Back(BackMatrix),
}

impl MatrixId {
    /// Every matrix `trace` holds, in the order of its stages; P only when positions are
    /// switched on, the source's and the block's only when they are.
    pub fn all(trace: &Trace) -> Vec<MatrixId> {
        let mut all = vec![Self::Embeddings];
        if trace.positional.is_some() {
            all.push(Self::Positional);
        }
        all.push(Self::X);
        if let Some(source) = &trace.source {
            all.push(Self::SourceEmbeddings);
            if source.positional.is_some() {
                all.push(Self::SourcePositional);
            }
            all.push(Self::SourceX);
        }
        all.extend([
            Self::Weight(WeightName::Q),
            Self::Weight(WeightName::K),
            Self::Weight(WeightName::V),
            Self::Q,
            Self::K,
            Self::V,
        ]);
        let turned = |m: &HeadMatrix| {
            matches!(
                m,
                HeadMatrix::QRope | HeadMatrix::KRope | HeadMatrix::KRopeTransposed
            )
        };
        let rope = trace.config.rope.is_some();
        for h in 0..trace.heads.len() {
            all.extend(
                HeadMatrix::ALL
                    .iter()
                    .filter(|m| rope || !turned(m))
                    .map(|m| Self::Head(h, *m)),
            );
        }
        all.extend([Self::Concat, Self::Weight(WeightName::O), Self::Output]);
        if trace.block.is_some() {
            use BlockMatrix as B;
            use BlockParam as P;
            all.extend([
                Self::Block(B::Sum1),
                Self::BlockParam(P::Ln1Gamma),
                Self::BlockParam(P::Ln1Beta),
                Self::Block(B::Norm1),
                Self::BlockParam(P::W1),
                Self::BlockParam(P::B1),
                Self::Block(B::Hidden),
                Self::Block(B::Activated),
                Self::BlockParam(P::W2),
                Self::BlockParam(P::B2),
                Self::Block(B::Ffn),
                Self::Block(B::Sum2),
                Self::BlockParam(P::Ln2Gamma),
                Self::BlockParam(P::Ln2Beta),
                Self::Block(B::Norm2),
            ]);
            // Pre-norm moves N₁ before attention and N₂ before the feed-forward network.
            let order = trace.wiring().order();
            all.sort_by_key(|m| m.stage().position(order));
        }
        all
    }

    /// The stage that computes it (inputs and weights: the first stage that reads them).
    pub fn stage(&self) -> Stage {
        match self {
            Self::Embeddings | Self::Positional | Self::X => Stage::Input,
            Self::Weight(WeightName::O) | Self::Output => Stage::OutputProjection,
            Self::Weight(_) | Self::Q | Self::K | Self::V => Stage::Projection,
            Self::Head(_, m) => match m {
                HeadMatrix::Q | HeadMatrix::K | HeadMatrix::V => Stage::SplitHeads,
                HeadMatrix::QRope | HeadMatrix::KRope => Stage::Rotary,
                HeadMatrix::KTransposed | HeadMatrix::KRopeTransposed | HeadMatrix::Scores => {
                    Stage::Scores
                }
                HeadMatrix::Scaled => Stage::Scale,
                HeadMatrix::Masked => Stage::Mask,
                HeadMatrix::Weights => Stage::Softmax,
                HeadMatrix::Context => Stage::WeightedSum,
            },
            Self::Concat => Stage::Concat,
            Self::SourceEmbeddings | Self::SourcePositional | Self::SourceX => Stage::Input,
            Self::BlockParam(p) => match p {
                BlockParam::W1 | BlockParam::B1 | BlockParam::WGate => Stage::Hidden,
                BlockParam::W2 | BlockParam::B2 => Stage::FeedForward,
                BlockParam::Ln1Gamma | BlockParam::Ln1Beta => Stage::Norm1,
                BlockParam::Ln2Gamma | BlockParam::Ln2Beta => Stage::Norm2,
            },
            Self::Block(b) => b.stage(),
            Self::Back(b) => b.stage(),
        }
    }

    /// Its values in `trace`; `None` for a head that does not exist or P when it is off.
    pub fn get(&self, trace: &Trace) -> Option<Matrix> {
        let stored = self.stored(trace)?;
        Some(if self.is_transposed() {
            stored.transpose()
        } else {
            stored.clone()
        })
    }

    /// (rows, columns), without copying the values.
    pub fn shape(&self, trace: &Trace) -> Option<(usize, usize)> {
        let stored = self.stored(trace)?;
        Some(if self.is_transposed() {
            (stored.ncols(), stored.nrows())
        } else {
            (stored.nrows(), stored.ncols())
        })
    }

    /// One value, without copying the matrix; `None` out of range.
    pub fn value(&self, trace: &Trace, row: usize, col: usize) -> Option<f64> {
        let stored = self.stored(trace)?;
        if self.is_transposed() {
            at(stored, col, row)
        } else {
            at(stored, row, col)
        }
    }

    /// The matrix as the trace keeps it (Kₕᵀ is kept as Kₕ, K̃ₕᵀ as K̃ₕ).
    pub(super) fn stored<'t>(&self, trace: &'t Trace) -> Option<&'t Matrix> {
        Some(match self {
            Self::Embeddings => &trace.embeddings,
            Self::Positional => trace.positional.as_ref()?,
            Self::X => &trace.x,
            Self::Weight(w) => trace.weights.get(*w),
            Self::Q => &trace.q,
            Self::K => &trace.k,
            Self::V => &trace.v,
            Self::Head(h, m) => {
                let head = trace.heads.get(*h)?;
                match m {
                    HeadMatrix::Q => &head.q,
                    HeadMatrix::K | HeadMatrix::KTransposed => &head.k,
                    HeadMatrix::QRope => head.q_rope.as_ref()?,
                    HeadMatrix::KRope | HeadMatrix::KRopeTransposed => head.k_rope.as_ref()?,
                    HeadMatrix::V => &head.v,
                    HeadMatrix::Scores => &head.scores,
                    HeadMatrix::Scaled => &head.scaled,
                    HeadMatrix::Masked => &head.masked,
                    HeadMatrix::Weights => &head.weights,
                    HeadMatrix::Context => &head.context,
                }
            }
            Self::Concat => &trace.concat,
            Self::Output => &trace.output,
            Self::SourceEmbeddings => &trace.source.as_ref()?.embeddings,
            Self::SourcePositional => trace.source.as_ref()?.positional.as_ref()?,
            Self::SourceX => &trace.source.as_ref()?.x,
            Self::BlockParam(p) => trace.block.as_ref()?.params.get(*p),
            Self::Block(b) => b.of(trace.block.as_ref()?),
            Self::Back(_) => return None,
        })
    }

    fn is_transposed(&self) -> bool {
        matches!(
            self,
            Self::Head(_, HeadMatrix::KTransposed | HeadMatrix::KRopeTransposed)
        )
    }
}

fn at(m: &Matrix, r: usize, c: usize) -> Option<f64> {
    m.get((r, c)).copied()
}
