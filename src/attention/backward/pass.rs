//! One backward pass as the backward stages show it: the goal made concrete for a trace, the
//! gradients of its loss, and names for every matrix the forward [`Trace`] does not hold (the
//! targets and the gradients), with access to their values by name.

use super::super::error::AttentionError;
use super::super::forward::Trace;
use super::super::goal::{Goal, LossKind, Objective};
use super::super::stage::Stage;
use super::super::{Matrix, Norm, Wiring};
use super::{backward, Gradients};

/// A goal's objective on one trace and every gradient of its loss.
#[derive(Debug, Clone, PartialEq)]
pub struct BackwardPass {
    /// The goal, as chosen.
    pub goal: Goal,
    /// The goal made concrete for the trace: the target patterns, or the task's target.
    pub objective: Objective,
    /// Every intermediate gradient.
    pub gradients: Gradients,
}

impl BackwardPass {
    /// The backward pass of `goal` on `trace`, read from the trace's own matrices.
    pub fn new(trace: &Trace, goal: &Goal) -> Result<Self, AttentionError> {
        let objective = goal.objective(trace)?;
        let gradients = backward(trace, &objective)?;
        Ok(Self {
            goal: goal.clone(),
            objective,
            gradients,
        })
    }

    /// Pattern or task.
    pub fn loss_kind(&self) -> LossKind {
        self.gradients.loss_kind
    }

    /// A*ₕ, head `h`'s target pattern; `None` for a task. (seq_len, n_keys)
    pub fn target_pattern(&self, h: usize) -> Option<&Matrix> {
        match &self.objective {
            Objective::Pattern(targets) => targets.get(h),
            Objective::Task { .. } => None,
        }
    }

    /// Y* and the mixing P it is made with; `None` for a pattern.
    pub fn task_target(&self) -> Option<(&Matrix, &Matrix)> {
        match &self.objective {
            Objective::Task { mixing, target, .. } => Some((target, mixing)),
            Objective::Pattern(_) => None,
        }
    }
}

/// One of the gradients a head's backward stages compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeadGrad {
    /// ∂L/∂Cₕ, the head's columns of ∂L/∂C (task only). (seq_len, head_dim)
    Context,
    /// ∂L/∂Vₕ (task only). (n_keys, head_dim)
    V,
    /// ∂L/∂Aₕ. (seq_len, n_keys)
    Weights,
    /// ∂L/∂Mₕ. (seq_len, n_keys)
    Masked,
    /// ∂L/∂Sₕ, the raw scores' gradient. (seq_len, n_keys)
    Scores,
    /// ∂L/∂Q̃ₕ, the turned queries' gradient, with rotary positions. (seq_len, head_dim)
    QRope,
    /// ∂L/∂K̃ₕ, the turned keys' gradient, with rotary positions. (n_keys, head_dim)
    KRope,
    /// ∂L/∂Qₕ. (seq_len, head_dim)
    Q,
    /// ∂L/∂Kₕ. (n_keys, head_dim)
    K,
}

impl HeadGrad {
    /// All of them, in the order the gradient reaches them.
    pub const ALL: [HeadGrad; 9] = [
        Self::Context,
        Self::V,
        Self::Weights,
        Self::Masked,
        Self::Scores,
        Self::QRope,
        Self::KRope,
        Self::Q,
        Self::K,
    ];

    /// The name used in panel names: `d_weights`, `d_scores`, ….
    pub fn key(self) -> &'static str {
        match self {
            Self::Context => "d_context",
            Self::V => "d_v",
            Self::Weights => "d_weights",
            Self::Masked => "d_masked",
            Self::Scores => "d_scores",
            Self::QRope => "d_q_rope",
            Self::KRope => "d_k_rope",
            Self::Q => "d_q",
            Self::K => "d_k",
        }
    }
}

/// A matrix the backward stages show that the forward trace does not hold: a goal's target or
/// a gradient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackMatrix {
    /// A*ₕ, head `h`'s target pattern (pattern loss). (seq_len, n_keys)
    TargetPattern(usize),
    /// Y* = P·E, the task's target (task loss). (seq_len, d_model)
    TaskTarget,
    /// ∂L/∂Y (task only). (seq_len, d_model)
    Output,
    /// ∂L/∂W_o (task only). (d_model, d_model)
    WO,
    /// ∂L/∂C, the concatenation's gradient (task only). (seq_len, d_model)
    Concat,
    /// One gradient of head `h`, counted from 0.
    Head(usize, HeadGrad),
    /// ∂L/∂Q, the heads' ∂L/∂Qₕ side by side. (seq_len, d_model)
    Q,
    /// ∂L/∂K. (n_keys, d_model)
    K,
    /// ∂L/∂V (task only). (n_keys, d_model)
    V,
    /// ∂L/∂W_q. (d_model, d_model)
    WQ,
    /// ∂L/∂W_k. (d_model, d_model)
    WK,
    /// ∂L/∂W_v (task only). (d_model, d_model)
    WV,
    /// ∂L/∂N₁, what the queries read in a pre-norm block. (seq_len, d_model)
    Norm1,
    /// ∂L/∂X along attention's path. (seq_len, d_model)
    X,
    /// ∂L/∂X_src along attention's path, in cross-attention. (src_len, d_model)
    SourceX,
    /// Pᵀ·∂L/∂Y*, the embeddings' gradient through a task's target (task only).
    /// (seq_len or src_len, d_model)
    ViaTarget,
    /// ∂L/∂E, everything included. (seq_len, d_model)
    Embeddings,
    /// ∂L/∂E_src, everything included, in cross-attention. (src_len, d_model)
    SourceEmbeddings,
}

impl BackMatrix {
    /// The stage that computes it (the targets: the first stage that shows them).
    pub fn stage(self) -> Stage {
        match self {
            Self::TargetPattern(_) | Self::TaskTarget | Self::Output => Stage::BackLoss,
            Self::Head(_, HeadGrad::Weights) => Stage::BackLoss,
            Self::WO | Self::Concat => Stage::BackOutput,
            Self::Head(_, HeadGrad::Context | HeadGrad::V) => Stage::BackWeightedSum,
            Self::Head(_, HeadGrad::Masked) => Stage::BackSoftmax,
            Self::Head(_, HeadGrad::Scores) => Stage::BackScale,
            Self::Head(_, HeadGrad::Q | HeadGrad::K | HeadGrad::QRope | HeadGrad::KRope) => {
                Stage::BackScores
            }
            Self::Q | Self::K | Self::V | Self::WQ | Self::WK | Self::WV => Stage::BackProjection,
            Self::Norm1
            | Self::X
            | Self::SourceX
            | Self::ViaTarget
            | Self::Embeddings
            | Self::SourceEmbeddings => Stage::BackInput,
        }
    }

    /// The gradients the output projection's stage computes, in the order it shows them.
    pub const OUTPUT_RESULTS: [Self; 2] = [Self::WO, Self::Concat];

    /// The weights' gradients the projection stage computes, in the order it shows them.
    pub const PROJECTION_RESULTS: [Self; 3] = [Self::WQ, Self::WK, Self::WV];

    /// The gradients the input stage computes for `wiring`, in the order it computes them:
    /// ∂L/∂N₁ (pre-norm) then ∂L/∂X, ∂L/∂X_src (cross-attention), ∂L/∂E and ∂L/∂E_src
    /// (cross-attention).
    pub fn input_results(wiring: Wiring) -> Vec<Self> {
        let pre = wiring.block == Some(Norm::Pre);
        let mut results = Vec::with_capacity(5);
        if pre {
            results.push(Self::Norm1);
        }
        results.push(Self::X);
        if wiring.cross {
            results.push(Self::SourceX);
        }
        results.push(Self::Embeddings);
        if wiring.cross {
            results.push(Self::SourceEmbeddings);
        }
        results
    }

    /// The gradients `stage` computes that can each be shown alone, in the order it computes
    /// them: W_o's and C's at the output projection ([`Self::OUTPUT_RESULTS`]), the weights'
    /// at the projection ([`Self::PROJECTION_RESULTS`]), the input's at the input
    /// ([`Self::input_results`]); none at the other stages.
    pub fn shown_alone(stage: Stage, wiring: Wiring) -> Vec<Self> {
        match stage {
            Stage::BackOutput => Self::OUTPUT_RESULTS.to_vec(),
            Stage::BackProjection => Self::PROJECTION_RESULTS.to_vec(),
            Stage::BackInput => Self::input_results(wiring),
            _ => Vec::new(),
        }
    }

    /// Whether it is a gradient (the targets are not).
    pub fn is_gradient(self) -> bool {
        !matches!(self, Self::TargetPattern(_) | Self::TaskTarget)
    }

    /// Its values in `pass`; `None` where the loss does not reach it or the wiring lacks it.
    pub fn get(self, pass: &BackwardPass) -> Option<&Matrix> {
        let g = &pass.gradients;
        match self {
            Self::TargetPattern(h) => pass.target_pattern(h),
            Self::TaskTarget => pass.task_target().map(|(t, _)| t),
            Self::Output => g.d_output.as_ref(),
            Self::WO => g.d_w_o.as_ref(),
            Self::Concat => g.d_concat.as_ref(),
            Self::Head(h, m) => {
                let head = g.heads.get(h)?;
                match m {
                    HeadGrad::Context => head.d_context.as_ref(),
                    HeadGrad::V => head.d_v.as_ref(),
                    HeadGrad::Weights => Some(&head.d_weights),
                    HeadGrad::Masked => Some(&head.d_masked),
                    HeadGrad::Scores => Some(&head.d_scores),
                    HeadGrad::QRope => head.d_q_rope.as_ref(),
                    HeadGrad::KRope => head.d_k_rope.as_ref(),
                    HeadGrad::Q => Some(&head.d_q),
                    HeadGrad::K => Some(&head.d_k),
                }
            }
            Self::Q => Some(&g.d_q),
            Self::K => Some(&g.d_k),
            Self::V => g.d_v.as_ref(),
            Self::WQ => Some(&g.d_w_q),
            Self::WK => Some(&g.d_w_k),
            Self::WV => g.d_w_v.as_ref(),
            Self::Norm1 => g.d_norm_1.as_ref(),
            Self::X => Some(&g.d_x),
            Self::SourceX => g.d_source_x.as_ref(),
            Self::ViaTarget => g.d_embeddings_via_target.as_ref(),
            Self::Embeddings => Some(&g.d_embeddings),
            Self::SourceEmbeddings => g.d_source_embeddings.as_ref(),
        }
    }

    /// (rows, columns) for `trace` whichever the loss, or `None` where the wiring has no such
    /// matrix (a head that does not exist, N₁ outside pre-norm, the source's without one).
    pub fn shape(self, trace: &Trace) -> Option<(usize, usize)> {
        let (s, n, d) = (trace.seq_len(), trace.n_keys(), trace.config.d_model);
        let (hd, kv) = (trace.head_dim(), trace.config.kv_width());
        let rope = trace.config.rope.is_some();
        let heads = trace.heads.len();
        Some(match self {
            Self::TargetPattern(h) | Self::Head(h, _) if h >= heads => return None,
            Self::TargetPattern(_)
            | Self::Head(_, HeadGrad::Weights | HeadGrad::Masked | HeadGrad::Scores) => (s, n),
            Self::Head(_, HeadGrad::QRope | HeadGrad::KRope) if !rope => return None,
            Self::Head(_, HeadGrad::Context | HeadGrad::Q | HeadGrad::QRope) => (s, hd),
            Self::Head(_, HeadGrad::V | HeadGrad::K | HeadGrad::KRope) => (n, hd),
            Self::WO | Self::WQ => (d, d),
            Self::WK | Self::WV => (d, kv),
            Self::K | Self::V => (n, kv),
            Self::ViaTarget => (n, d),
            Self::Norm1 if trace.norm() != Some(super::super::block::Norm::Pre) => return None,
            Self::SourceX | Self::SourceEmbeddings => (trace.source.as_ref()?.x.nrows(), d),
            Self::TaskTarget
            | Self::Output
            | Self::Concat
            | Self::Q
            | Self::Norm1
            | Self::X
            | Self::Embeddings => (s, d),
        })
    }

    /// One value; `None` out of range or where the matrix is absent.
    pub fn value(self, pass: &BackwardPass, row: usize, col: usize) -> Option<f64> {
        self.get(pass)?.get((row, col)).copied()
    }
}
