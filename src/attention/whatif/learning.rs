//! Why the √d_k divisor matters for learning: how large the gradient reaching the raw scores S
//! is, with and without the divisor, as the head widens.
//!
//! Each point runs the real forward and backward passes ([`forward_within`], [`backward`]) on
//! random inputs: one head of width d_k = d_model, [`GRADIENT_TOKENS`] tokens, no mask and no
//! positions, and the task loss `copy_previous`, `L = 1/(n·d_model) · Σ (Y − Y*)²`. The pattern
//! loss would not show the effect: its ∂L/∂M is `(A − A*)/(n_heads·n·T)`, which stays large when
//! the softmax saturates on a wrong key. A loss that reaches the weights only through the
//! output must go through the softmax's Jacobian, `A ⊙ (D − rowsum(D ⊙ A))`, which is close to 0
//! in every cell once a row is nearly one-hot.

use super::measures::max_weight;
use crate::attention::{
    backward, forward_within, Config, Goal, Inputs, Limits, Matrix, ScaleMode, SplitMix64, Task,
    Weights,
};

/// Tokens (queries and keys) in each random input of [`gradient_by_head_dim`]: few keys, so
/// that undivided scores saturate the softmax within the widths shown.
pub const GRADIENT_TOKENS: usize = 4;

/// Random inputs averaged per head width in [`gradient_by_head_dim`].
pub const GRADIENT_TRIALS: usize = 32;

/// Head widths of the gradient table.
pub const GRADIENT_HEAD_DIMS: [usize; 7] = [2, 4, 8, 16, 32, 64, 128];

/// The task whose loss [`gradient_by_head_dim`] differentiates.
pub const GRADIENT_TASK: Task = Task::CopyPrevious;

/// How large ∂L/∂S is at one head width, with and without the √d_k divisor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GradientPoint {
    /// The head width d_k.
    pub head_dim: usize,
    /// The typical size of ∂L/∂S, the scores divided by √d_k: the median, over every row of
    /// every trial, of the row's length ‖∂L/∂Sᵢ‖ = √(Σⱼ (∂L/∂Sᵢⱼ)²).
    pub scaled: f64,
    /// The same with the scores not divided at all.
    pub unscaled: f64,
    /// Mean largest weight of a row, divided by √d_k.
    pub scaled_max_weight: f64,
    /// Mean largest weight of a row, not divided.
    pub unscaled_max_weight: f64,
}

impl GradientPoint {
    /// How many times smaller ∂L/∂S is without the divisor (below 1: larger).
    pub fn shrink(&self) -> f64 {
        self.scaled / self.unscaled
    }
}

/// A matrix of independent draws with mean 0 and variance `variance`.
fn random(rng: &mut SplitMix64, rows: usize, cols: usize, variance: f64) -> Matrix {
    let sd = variance.sqrt();
    Matrix::from_fn(rows, cols, |_, _| sd * super::sweeps::unit_variance(rng))
}

/// The random inputs of one trial: E with unit-variance entries, and W_q, W_k, W_v, W_o with
/// variance 1/d_k, so every entry of Q, K and V has variance about 1 and each score q·k about
/// d_k.
fn trial_inputs(rng: &mut SplitMix64, head_dim: usize, scale: ScaleMode) -> Inputs {
    let d = head_dim;
    let embeddings = random(rng, GRADIENT_TOKENS, d, 1.0);
    let w = 1.0 / d as f64;
    let weights = Weights {
        w_q: random(rng, d, d, w),
        w_k: random(rng, d, d, w),
        w_v: random(rng, d, d, w),
        w_o: random(rng, d, d, w),
    };
    Inputs {
        tokens: (1..=GRADIENT_TOKENS).map(|i| format!("t{i}")).collect(),
        embeddings,
        weights,
        config: Config {
            d_model: d,
            n_heads: 1,
            causal: false,
            positional_encoding: false,
            scale,
            temperature: 1.0,
            ..Config::default()
        },
        source: None,
        block: None,
    }
}

/// Each row's length ‖∂L/∂Sᵢ‖ and largest weight, for one input, from the forward and
/// backward passes.
fn measure(inputs: &Inputs) -> Option<Vec<(f64, f64)>> {
    let trace = forward_within(inputs, &Limits::NONE).ok()?;
    let objective = Goal::Task(GRADIENT_TASK).objective(&trace).ok()?;
    let gradients = backward(&trace, &objective).ok()?;
    let d_scores = &gradients.heads.first()?.d_scores;
    let weights = &trace.heads.first()?.weights;
    Some(
        d_scores
            .row_iter()
            .zip(weights.row_iter())
            .map(|(g, w)| (g.norm(), max_weight(&w.iter().copied().collect::<Vec<_>>())))
            .collect(),
    )
}

/// The median of `values` (the mean of the middle two for an even count); sorts them.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// For each width in `head_dims` (2 or more), [`GRADIENT_TRIALS`] random inputs (from a
/// [`SplitMix64`] seeded with `seed ^ (d_k · 0x9E3779B97F4A7C15)`), each run twice, with the
/// scores divided by √d_k and not divided: the median row length of ∂L/∂S and the mean largest
/// weight of each.
/// The same inputs feed both sides, so the divisor is the only difference. Widths below 2 are
/// skipped (d_model is at least 2).
pub fn gradient_by_head_dim(head_dims: &[usize], seed: u64) -> Vec<GradientPoint> {
    head_dims
        .iter()
        .filter(|&&d| d >= 2)
        .filter_map(|&head_dim| {
            let mut rng =
                SplitMix64::new(seed ^ (head_dim as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let (mut scaled_rows, mut unscaled_rows) = (Vec::new(), Vec::new());
            for _ in 0..GRADIENT_TRIALS {
                let scaled = trial_inputs(&mut rng, head_dim, ScaleMode::SqrtHeadDim);
                let unscaled = Inputs {
                    config: Config {
                        scale: ScaleMode::None,
                        ..scaled.config
                    },
                    ..scaled.clone()
                };
                scaled_rows.extend(measure(&scaled)?);
                unscaled_rows.extend(measure(&unscaled)?);
            }
            let mean_weight =
                |rows: &[(f64, f64)]| rows.iter().map(|r| r.1).sum::<f64>() / rows.len() as f64;
            let sizes =
                |rows: &[(f64, f64)]| median(&mut rows.iter().map(|r| r.0).collect::<Vec<_>>());
            Some(GradientPoint {
                head_dim,
                scaled: sizes(&scaled_rows),
                unscaled: sizes(&unscaled_rows),
                scaled_max_weight: mean_weight(&scaled_rows),
                unscaled_max_weight: mean_weight(&unscaled_rows),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::gradients;

    #[test]
    fn without_the_divisor_the_gradient_vanishes_as_the_softmax_saturates() {
        let points = gradient_by_head_dim(&GRADIENT_HEAD_DIMS, 7);
        assert_eq!(points.len(), GRADIENT_HEAD_DIMS.len());
        let (first, last) = (points[0], points[points.len() - 1]);
        // Undivided, the rows grow nearly one-hot; divided, they stay far from it.
        assert!(last.unscaled_max_weight > 0.9, "{last:?}");
        assert!(last.scaled_max_weight < 0.6, "{last:?}");
        assert!(points
            .windows(2)
            .all(|p| p[1].unscaled_max_weight > p[0].unscaled_max_weight));
        // At d_k = 2 the divisor is only √2 and the undivided gradient is the larger one; at
        // d_k = 128 the typical row's gradient through the saturated softmax is over three times
        // smaller than with the divisor.
        assert!(first.shrink() < 1.0, "{first:?}");
        assert!(last.shrink() > 3.0, "{last:?}");
    }

    #[test]
    fn each_point_is_the_backward_pass_of_its_own_random_inputs() {
        // The first trial of d_k = 4, rebuilt here and sent through `gradients`: its d_scores
        // are what `measure` averages.
        let mut rng = SplitMix64::new(3 ^ 4u64.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let inputs = trial_inputs(&mut rng, 4, ScaleMode::SqrtHeadDim);
        let g = gradients(&inputs, &Goal::Task(GRADIENT_TASK)).unwrap();
        let rows = measure(&inputs).unwrap();
        assert_eq!(rows.len(), GRADIENT_TOKENS);
        assert_eq!(rows[1].0, g.heads[0].d_scores.row(1).norm());
        assert_eq!(median(&mut [3.0, 1.0, 2.0, 10.0]), 2.5);
        // ∂L/∂S is ∂L/∂Z divided by √d_k = 2.
        assert_eq!(g.heads[0].d_scores, &g.heads[0].d_scaled / 2.0);
        assert_eq!(gradient_by_head_dim(&[4], 3), gradient_by_head_dim(&[4], 3));
        assert!(gradient_by_head_dim(&[0, 1], 3).is_empty());
    }
}
