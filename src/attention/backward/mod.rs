//! The backward pass: from the loss back to the weights and the embeddings, one stage at a
//! time, keeping every intermediate gradient as the forward [`Trace`] keeps every matrix.
//!
//! ```text
//! ∂L/∂Y                                     task only: 2·(Y − Y*)/(n·d_model)
//! ∂L/∂W_o = Cᵀ·∂L/∂Y,  ∂L/∂C = ∂L/∂Y·W_oᵀ   task only
//! ∂L/∂A_h = ∂L/∂C_h·V_hᵀ  (task)  or  −A*_h/(n_heads·n·A_h)  (pattern)
//! ∂L/∂V_h = A_hᵀ·∂L/∂C_h                      task only
//! ∂L/∂M_h = A_h ⊙ (D − rowsum(D ⊙ A_h)) / T   D = ∂L/∂A_h
//!         = (A_h − A*_h)/(n_heads·n·T)        for a pattern
//! ∂L/∂Z_h = ∂L/∂M_h on visible cells, 0 on hidden ones
//! ∂L/∂S_h = ∂L/∂Z_h / divisor
//! ∂L/∂Q_h = ∂L/∂S_h·K_h,  ∂L/∂K_h = ∂L/∂S_hᵀ·Q_h
//! ∂L/∂Q, ∂L/∂K, ∂L/∂V = the heads' slices side by side
//! ∂L/∂W_q = inᵀ·∂L/∂Q,  ∂L/∂W_k = in_kvᵀ·∂L/∂K,  ∂L/∂W_v = in_kvᵀ·∂L/∂V
//! ∂L/∂in  = ∂L/∂Q·W_qᵀ (+ ∂L/∂K·W_kᵀ + ∂L/∂V·W_vᵀ without a source)
//! ∂L/∂X   = ∂L/∂in, or LayerNorm's (or RMSNorm's) backward of it in a pre-norm block
//! ∂L/∂E   = ∂L/∂X  (X = E + P)  + Pᵀ·∂L/∂Y* for a task built from E
//! ```
//!
//! `in` is what the queries read (X, or N₁ = LN₁(X) in a pre-norm block) and `in_kv` what keys
//! and values read (X_src in cross-attention, else `in`). The losses read A or Y, the attention
//! layer's own output, so with the block on the gradient never passes through its later parts.

mod cells;
mod loss;
mod pass;
mod stages;

pub use cells::{back_cell_work, BackCellWork, BackComputation};
pub use pass::{BackMatrix, BackwardPass, HeadGrad};

use super::block::{Norm, NormType};
use super::error::AttentionError;
use super::forward::{concat_columns, forward, Inputs, Trace};
use super::goal::{Goal, LossKind, Objective};
use super::weights::check_matrix;
use super::Matrix;
use stages::{
    layer_norm_backward, mask_backward, project_backward, rms_norm_backward, scale_backward,
    scores_backward, softmax_backward, weighted_sum_backward,
};

/// Every intermediate gradient of one head.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadGradients {
    /// ∂L/∂C_h, this head's slice of ∂L/∂concat; `None` for a pattern loss, which does not
    /// reach it. (seq_len, head_dim)
    pub d_context: Option<Matrix>,
    /// ∂L/∂V_h; `None` for a pattern loss. (n_keys, head_dim)
    pub d_v: Option<Matrix>,
    /// ∂L/∂A_h, the gradient of the weights; masked cells 0. (seq_len, n_keys)
    pub d_weights: Matrix,
    /// ∂L/∂M_h, through the softmax and the temperature; masked cells 0. (seq_len, n_keys)
    pub d_masked: Matrix,
    /// ∂L/∂Z_h, the scaled scores' gradient; masked cells 0. (seq_len, n_keys)
    pub d_scaled: Matrix,
    /// ∂L/∂S_h, the raw scores' gradient (before scaling); masked cells 0. (seq_len, n_keys)
    pub d_scores: Matrix,
    /// ∂L/∂Q_h after rotary positions turned it, with them. (seq_len, head_dim)
    pub d_q_rope: Option<Matrix>,
    /// ∂L/∂K_h after rotary positions turned it, with them. (n_keys, head_dim)
    pub d_k_rope: Option<Matrix>,
    /// ∂L/∂Q_h. (seq_len, head_dim)
    pub d_q: Matrix,
    /// ∂L/∂K_h through this query head: its share of its key/value head's gradient.
    /// (n_keys, head_dim)
    pub d_k: Matrix,
}

/// Every intermediate gradient of one backward pass, from the loss to the embeddings.
///
/// A stage the loss does not reach is `None` (the pattern loss reads only the weights A, so it
/// reaches neither V, C nor Y, nor W_v and W_o), rather than a matrix of zeros.
#[derive(Debug, Clone, PartialEq)]
pub struct Gradients {
    /// Which loss these are the gradients of.
    pub loss_kind: LossKind,
    /// The loss itself.
    pub loss: f64,
    /// ∂L/∂Y, the layer output's gradient; task only. (seq_len, d_model)
    pub d_output: Option<Matrix>,
    /// ∂L/∂Y* = −∂L/∂Y, the task target's gradient; task only. (seq_len, d_model)
    pub d_target: Option<Matrix>,
    /// ∂L/∂W_o; task only. (d_model, d_model)
    pub d_w_o: Option<Matrix>,
    /// ∂L/∂concat; task only. (seq_len, d_model)
    pub d_concat: Option<Matrix>,
    /// One per head.
    pub heads: Vec<HeadGradients>,
    /// ∂L/∂Q. (seq_len, d_model)
    pub d_q: Matrix,
    /// ∂L/∂K: each key/value head's columns sum the query heads that read it.
    /// (n_keys, n_kv_heads·head_dim)
    pub d_k: Matrix,
    /// ∂L/∂V, summed the same way; task only. (n_keys, n_kv_heads·head_dim)
    pub d_v: Option<Matrix>,
    /// ∂L/∂W_q. (d_model, d_model)
    pub d_w_q: Matrix,
    /// ∂L/∂W_k. (d_model, n_kv_heads·head_dim)
    pub d_w_k: Matrix,
    /// ∂L/∂W_v; task only. (d_model, n_kv_heads·head_dim)
    pub d_w_v: Option<Matrix>,
    /// ∂L/∂N₁, what the queries read in a pre-norm block; `None` otherwise, where the queries
    /// read X itself. (seq_len, d_model)
    pub d_norm_1: Option<Matrix>,
    /// ∂L/∂X through attention. (seq_len, d_model)
    pub d_x: Matrix,
    /// ∂L/∂X_src through attention, in cross-attention. (src_len, d_model)
    pub d_source_x: Option<Matrix>,
    /// The part of the embeddings' gradient that flows through a task's target Y* = P·E:
    /// Pᵀ·∂L/∂Y*. It belongs to the source's embeddings in cross-attention; `None` for a
    /// pattern loss. (seq_len or src_len, d_model)
    pub d_embeddings_via_target: Option<Matrix>,
    /// ∂L/∂E, everything included: attention's path (∂L/∂X, since X = E + P) and, for a task
    /// on the sentence itself, the target's path. (seq_len, d_model)
    pub d_embeddings: Matrix,
    /// ∂L/∂E_src, everything included, in cross-attention. (src_len, d_model)
    pub d_source_embeddings: Option<Matrix>,
    /// ∂L/∂E with each row replaced by the sum of the rows of its word: the page keeps one
    /// vector per word, so this is what a step applies to each row. (seq_len, d_model)
    pub d_embedding_table: Matrix,
    /// ∂L/∂E_src tied the same way, in cross-attention. (src_len, d_model)
    pub d_source_embedding_table: Option<Matrix>,
}

impl Gradients {
    /// Whether the loss reaches the values, the weighted sum and W_o (only the task loss does).
    pub fn reaches_values(&self) -> bool {
        self.d_v.is_some()
    }
}

/// Runs the forward pass on `inputs` and the backward pass for `goal`.
pub fn gradients(inputs: &Inputs, goal: &Goal) -> Result<Gradients, AttentionError> {
    let trace = forward(inputs)?;
    backward(&trace, &goal.objective(&trace)?)
}

/// The loss of `goal` on `inputs`.
pub fn loss_of(inputs: &Inputs, goal: &Goal) -> Result<f64, AttentionError> {
    let trace = forward(inputs)?;
    let objective = goal.objective(&trace)?;
    loss(&trace, &objective)
}

/// The loss of `trace` for `objective`.
pub fn loss(trace: &Trace, objective: &Objective) -> Result<f64, AttentionError> {
    check_objective(trace, objective)?;
    Ok(loss::loss(trace, objective))
}

/// The backward pass: every gradient from the loss of `objective` back to the embeddings,
/// reading the forward matrices from `trace`.
pub fn backward(trace: &Trace, objective: &Objective) -> Result<Gradients, AttentionError> {
    check_objective(trace, objective)?;
    let loss = loss::loss(trace, objective);
    let (seq_len, n_keys, d_model) = (trace.seq_len(), trace.n_keys(), trace.config.d_model);
    let w = &trace.weights;

    let (d_output, d_target, d_w_o, d_concat) = match objective {
        Objective::Task { target, .. } => {
            let d_output = loss::task_d_output(&trace.output, target);
            let (d_w_o, d_concat) = project_backward(&trace.concat, &w.w_o, &d_output);
            let d_target = -&d_output;
            (Some(d_output), Some(d_target), Some(d_w_o), Some(d_concat))
        }
        Objective::Pattern(_) => (None, None, None, None),
    };

    let heads: Vec<HeadGradients> = (0..trace.heads.len())
        .map(|h| head_backward(trace, h, objective, d_concat.as_ref()))
        .collect();

    // The heads' slices side by side: the backward of splitting into heads. A key/value head
    // read by several query heads gets the sum of their gradients.
    let d_q = concat_columns(heads.iter().map(|g| &g.d_q), seq_len, d_model);
    let d_k = kv_sum(trace, heads.iter().map(|g| &g.d_k), n_keys);
    let d_v = d_concat
        .is_some()
        .then(|| kv_sum(trace, heads.iter().flat_map(|g| &g.d_v), n_keys));

    let (d_w_q, d_query_input) = project_backward(trace.attention_input(), &w.w_q, &d_q);
    let (d_w_k, mut d_key_input) = project_backward(trace.key_input(), &w.w_k, &d_k);
    let d_w_v = d_v.as_ref().map(|d_v| {
        let (d_w_v, d_from_v) = project_backward(trace.key_input(), &w.w_v, d_v);
        d_key_input += d_from_v;
        d_w_v
    });

    // Without a source, queries, keys and values all read the same matrix, so its gradient
    // is the sum of the three paths.
    let (d_attention_input, d_source_x) = match trace.source {
        Some(_) => (d_query_input, Some(d_key_input)),
        None => (d_query_input + d_key_input, None),
    };
    let (d_norm_1, d_x) = match &trace.block {
        Some(block) if block.norm == Norm::Pre => {
            let gamma = &block.params.ln_1_gamma;
            let d_x = match block.params.norm_type {
                NormType::LayerNorm => layer_norm_backward(&trace.x, gamma, &d_attention_input),
                NormType::RmsNorm => rms_norm_backward(&trace.x, gamma, &d_attention_input),
            };
            (Some(d_attention_input), d_x)
        }
        _ => (None, d_attention_input),
    };

    let d_embeddings_via_target = match (objective, &d_target) {
        // (seq_len, n_keys)ᵀ·(seq_len, d_model) → (n_keys, d_model)
        (Objective::Task { mixing, .. }, Some(d_target)) => Some(mixing.tr_mul(d_target)),
        _ => None,
    };
    // X = E + P: the positions are constants, so ∂L/∂E = ∂L/∂X along attention's path.
    let mut d_embeddings = d_x.clone();
    let mut d_source_embeddings = d_source_x.clone();
    if let Some(via_target) = &d_embeddings_via_target {
        match &mut d_source_embeddings {
            Some(d_source) => *d_source += via_target,
            None => d_embeddings += via_target,
        }
    }

    let outputs = [Some(&d_w_q), Some(&d_w_k), d_w_v.as_ref(), d_w_o.as_ref()];
    let inputs = [Some(&d_embeddings), d_source_embeddings.as_ref()];
    if outputs
        .iter()
        .chain(&inputs)
        .flatten()
        .any(|m| m.iter().any(|v| !v.is_finite()))
    {
        return Err(AttentionError::GradientOverflow);
    }

    // One vector per word: the table entry's gradient is the sum over its rows.
    let d_embedding_table = tied(&trace.tokens, &d_embeddings);
    let d_source_embedding_table = trace
        .source
        .as_ref()
        .zip(d_source_embeddings.as_ref())
        .map(|(source, d)| tied(&source.tokens, d));

    Ok(Gradients {
        loss_kind: objective.loss_kind(),
        loss,
        d_output,
        d_target,
        d_w_o,
        d_concat,
        heads,
        d_q,
        d_k,
        d_v,
        d_w_q,
        d_w_k,
        d_w_v,
        d_norm_1,
        d_x,
        d_source_x,
        d_embeddings_via_target,
        d_embeddings,
        d_source_embeddings,
        d_embedding_table,
        d_source_embedding_table,
    })
}

/// The query heads' gradients of their K_h (or V_h) summed into their key/value heads'
/// columns. n_heads × (n_keys, head_dim) → (n_keys, n_kv_heads·head_dim)
fn kv_sum<'a>(trace: &Trace, per_head: impl Iterator<Item = &'a Matrix>, n_keys: usize) -> Matrix {
    let mut out = Matrix::zeros(n_keys, trace.config.kv_width());
    for (h, d) in per_head.enumerate() {
        let cols = trace.kv_columns(h);
        let mut part = out.columns_mut(cols.start, cols.len());
        part += d;
    }
    out
}

/// `m` with every row replaced by the sum of the rows whose token is the same.
/// (seq_len, d_model) → (seq_len, d_model)
pub fn tied(tokens: &[String], m: &Matrix) -> Matrix {
    Matrix::from_fn(m.nrows(), m.ncols(), |i, j| {
        tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| Some(*t) == tokens.get(i))
            .map(|(r, _)| m[(r, j)])
            .sum()
    })
}

/// Head `h`'s stages, from ∂L/∂C_h (task) or the target (pattern) back to ∂L/∂Q_h, ∂L/∂K_h.
fn head_backward(
    trace: &Trace,
    h: usize,
    objective: &Objective,
    d_concat: Option<&Matrix>,
) -> HeadGradients {
    let head = &trace.heads[h];
    let (mask, temperature) = (trace.config.mask(), trace.config.temperature);
    let (d_context, d_v, d_weights, d_masked) = match (objective, d_concat) {
        (Objective::Pattern(targets), _) => {
            let count = (trace.heads.len() * trace.seq_len()) as f64;
            let target = &targets[h];
            let d_weights = loss::pattern_d_weights(&head.weights, target, count);
            let d_masked = loss::pattern_d_masked(&head.weights, target, count, temperature);
            (None, None, d_weights, d_masked)
        }
        (Objective::Task { .. }, Some(d_concat)) => {
            let cols = trace.head_columns(h);
            // (seq_len, d_model) → (seq_len, head_dim)
            let d_context = d_concat.columns(cols.start, cols.len()).into_owned();
            let (d_weights, d_v) = weighted_sum_backward(&head.weights, &head.v, &d_context, mask);
            let d_masked = softmax_backward(&head.weights, &d_weights, temperature);
            (Some(d_context), Some(d_v), d_weights, d_masked)
        }
        // `backward` computes ∂L/∂concat for every task, so this arm is never taken.
        (Objective::Task { .. }, None) => {
            let zeros = Matrix::zeros(head.weights.nrows(), head.weights.ncols());
            (None, None, zeros.clone(), zeros)
        }
    };
    let d_scaled = mask_backward(&d_masked, mask);
    let d_scores = scale_backward(&d_scaled, trace.scale_divisor);
    let (d_q_scored, d_k_scored) = scores_backward(head.q_scored(), head.k_scored(), &d_scores);
    // A rotation's transpose turns back: the gradient of the unturned rows is the turned
    // rows' gradient turned back by the same angles.
    let (d_q_rope, d_k_rope, d_q, d_k) = match trace.config.rope {
        Some(rope) => {
            let (d_q, d_k) = (
                rope.rotate_back(&d_q_scored, 0),
                rope.rotate_back(&d_k_scored, 0),
            );
            (Some(d_q_scored), Some(d_k_scored), d_q, d_k)
        }
        None => (None, None, d_q_scored, d_k_scored),
    };
    HeadGradients {
        d_context,
        d_v,
        d_weights,
        d_masked,
        d_scaled,
        d_scores,
        d_q_rope,
        d_k_rope,
        d_q,
        d_k,
    }
}

/// Checks that `objective` was made for a trace of `trace`'s shape, so no product can fail.
fn check_objective(trace: &Trace, objective: &Objective) -> Result<(), AttentionError> {
    let (seq_len, n_keys) = (trace.seq_len(), trace.n_keys());
    match objective {
        Objective::Pattern(targets) => {
            if targets.len() != trace.heads.len() {
                return Err(AttentionError::TargetCount {
                    count: targets.len(),
                    n_heads: trace.heads.len(),
                });
            }
            for (h, target) in targets.iter().enumerate() {
                check_matrix(
                    &format!("Head {}'s target", h + 1),
                    target,
                    (seq_len, n_keys),
                )?;
            }
        }
        Objective::Task { mixing, target, .. } => {
            check_matrix("The task's mixing matrix", mixing, (seq_len, n_keys))?;
            check_matrix("The task's target", target, trace.output.shape())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{Config, Init, NamedTarget, Task, Weights};

    #[test]
    fn tied_rows_sum_over_the_same_word() {
        let tokens: Vec<String> = ["a", "b", "a"].map(String::from).to_vec();
        let m = Matrix::from_row_slice(3, 1, &[1.0, 2.0, 4.0]);
        assert_eq!(
            tied(&tokens, &m),
            Matrix::from_row_slice(3, 1, &[5.0, 2.0, 5.0])
        );
    }

    fn inputs(causal: bool) -> Inputs {
        let config = Config {
            causal,
            temperature: 0.8,
            ..Config::default()
        };
        Inputs::from_sentence(
            "the cat sat down",
            config,
            Weights::new(Init::Default, config.d_model),
        )
        .unwrap()
    }

    #[test]
    fn the_pattern_loss_reaches_neither_the_values_nor_w_o() {
        let g = gradients(&inputs(true), &Goal::named(NamedTarget::Previous)).unwrap();
        assert!(!g.reaches_values());
        assert!(g.d_w_o.is_none() && g.d_w_v.is_none() && g.d_output.is_none());
        assert!(g.heads.iter().all(|h| h.d_v.is_none()));
        let g = gradients(&inputs(true), &Goal::Task(Task::Mean)).unwrap();
        assert!(g.reaches_values() && g.d_w_o.is_some());
    }

    #[test]
    fn the_closed_form_of_the_pattern_loss_is_the_softmax_backward() {
        let trace = forward(&inputs(true)).unwrap();
        let objective = Goal::named(NamedTarget::Uniform).objective(&trace).unwrap();
        let g = backward(&trace, &objective).unwrap();
        for (head, grads) in trace.heads.iter().zip(&g.heads) {
            let general = softmax_backward(&head.weights, &grads.d_weights, 0.8);
            assert!((general - &grads.d_masked).amax() < 1e-15);
        }
    }

    #[test]
    fn an_objective_for_another_sentence_is_an_error_not_a_panic() {
        let short = forward(&inputs(false)).unwrap();
        let mut longer = inputs(false);
        longer.tokens.push("again".into());
        longer.embeddings = longer.embeddings.insert_row(4, 0.5);
        let objective = Goal::Task(Task::CopyFirst)
            .objective(&forward(&longer).unwrap())
            .unwrap();
        assert!(matches!(
            backward(&short, &objective),
            Err(AttentionError::WrongShape { .. })
        ));
    }
}
