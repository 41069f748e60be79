//! The maths core: multi-head self-attention on small matrices, with every intermediate kept.
//!
//! For each head `h` with `head_dim = d_model / n_heads` columns:
//!
//! ```text
//! X        = E + P                      (seq_len, d_model)  token embeddings (+ positions)
//! Q, K, V  = X·W_q, X·W_k, X·W_v        (seq_len, d_model)
//! Q_h      = Q[:, h*head_dim..(h+1)*head_dim]             (seq_len, head_dim), same for K_h, V_h
//! S_h      = Q_h·K_hᵀ                   (seq_len, seq_len)
//! Z_h      = S_h / √d_k                 (seq_len, seq_len)  d_k = head_dim by default
//! M_h      = Z_h with −∞ above the diagonal when the causal mask is on
//! A_h      = softmax(M_h / T) per row   (seq_len, seq_len)  T = temperature
//! C_h      = A_h·V_h                    (seq_len, head_dim)
//! concat   = [C_1 | C_2 | … ]           (seq_len, d_model)
//! output   = concat·W_o                 (seq_len, d_model)
//! ```
//!
//! that is, `softmax(QKᵀ/√d_k)V` for every head, concatenated and projected.
//! Rows are tokens (the row-vector convention). This module depends on nalgebra and std only.
//! The backward pass walks the same stages in reverse, from a goal's loss to every weight, and
//! an optimizer trains the chosen matrices with it.
//! It is the maths and only the maths: what a learner reads about it is in `crate::words`, and
//! the views decide how its matrices are named and drawn.

mod backward;
mod block;
mod cells;
mod choices;
mod config;
mod decode;
mod embeddings;
mod error;
mod forward;
mod goal;
mod matrix_id;
mod optimizer;
mod parameter;
mod rng;
mod rope;
mod stage;
mod tiles;
mod tokens;
mod training;
mod weights;
pub mod whatif;

pub use backward::{
    back_cell_work, backward, gradients, loss, loss_of, tied, BackCellWork, BackComputation,
    BackMatrix, BackwardPass, Gradients, HeadGrad, HeadGradients,
};
pub use block::{
    layer_norm, normalise, rms_norm, row_mean_square, row_stats, Activation, Block, BlockParam,
    BlockTrace, Norm, NormType, D_FF_RANGE, LAYER_NORM_EPS,
};
pub use cells::{cell_work, CellWork, Computation, Operand, Wave};
pub use config::{
    kv_head_of, Config, Limits, Mask, ScaleMode, Wiring, D_MODEL_RANGE, N_HEADS_RANGE,
    TEMPERATURE_RANGE,
};
pub use decode::{check_prefill, decode, Decode, DecodeHead, DecodeStep, Macs};
pub use embeddings::{positional_encoding, toy_embedding, toy_embeddings};
pub use error::{AttentionError, Detail};
pub use forward::{
    forward, forward_reusing, forward_within, softmax_rows, HeadTrace, Inputs, Outline, Source,
    SourceTrace, Trace,
};
pub use goal::{Goal, HeadTarget, LossKind, NamedTarget, Objective, Task};
pub use matrix_id::{BlockMatrix, HeadMatrix, MatrixId};
pub use optimizer::{
    check_trainable, largest_gradient, train, train_step, AdamState, Optimizer, OptimizerKind,
    Trainable, ADAM_BETA_1, ADAM_BETA_2, ADAM_EPSILON,
};
pub use parameter::{key_input, query_input, Parameter};
pub use rng::SplitMix64;
pub use rope::{Pairing, Rope, ROPE_THETA};
pub use stage::{Order, Stage};
pub use tiles::{head_tiles, rescale, row_tiles, tiled_row, Tile};
pub use tokens::{tokenize, MAX_TOKENS, MAX_TOKEN_CHARS};
pub use training::{check_goal, check_goal_fits, Training, DEFAULT_LEARNING_RATE};
pub use weights::{Init, WeightName, Weights};

/// A dense matrix of `f64`, rows are tokens.
pub type Matrix = nalgebra::DMatrix<f64>;
