//! The two losses, and their gradients with respect to what they read: the weights A for the
//! pattern loss, the output Y for the task loss.
//!
//! ```text
//! pattern   L = −1/(n_heads·n) · Σ_h Σ_i Σ_j A*_h[i,j] · log A_h[i,j]     (A* = 0 terms count 0)
//!           ∂L/∂A_h = −A*_h / (n_heads·n·A_h)
//! task      L = 1/(n·d_model) · Σ (Y − Y*)²
//!           ∂L/∂Y = 2·(Y − Y*) / (n·d_model),   ∂L/∂Y* = −∂L/∂Y
//! ```
//!
//! n is seq_len, the number of query rows.

use super::super::forward::{HeadTrace, Trace};
use super::super::goal::Objective;
use super::super::Matrix;

/// The loss of `trace` for `objective`, whose shapes have been checked against it.
pub(super) fn loss(trace: &Trace, objective: &Objective) -> f64 {
    match objective {
        Objective::Pattern(targets) => pattern_loss(trace, targets),
        Objective::Task { target, .. } => task_loss(&trace.output, target),
    }
}

/// The cross-entropy of every head's weights against its target, averaged over heads and rows.
fn pattern_loss(trace: &Trace, targets: &[Matrix]) -> f64 {
    let count = (trace.heads.len() * trace.seq_len()) as f64;
    let total: f64 = trace
        .heads
        .iter()
        .zip(targets)
        .map(|(head, target)| head_cross_entropy(head, target, trace.config.temperature))
        .sum();
    total / count
}

/// −Σ_i Σ_j A*[i,j]·log A[i,j] for one head.
///
/// log A comes from the masked scores (a log-softmax) rather than from A itself: a weight that
/// underflowed to 0 at a low temperature still has a finite logarithm, so the loss stays exact.
fn head_cross_entropy(head: &HeadTrace, target: &Matrix, temperature: f64) -> f64 {
    let mut total = 0.0;
    for (scores, wanted) in head.masked.row_iter().zip(target.row_iter()) {
        let top = scores
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(f64::NEG_INFINITY, f64::max);
        if top == f64::NEG_INFINITY {
            // Every key hidden: the row has no weights, and a checked target has none either.
            continue;
        }
        let shifted = |m: f64| (m - top) / temperature;
        let log_sum = scores
            .iter()
            .filter(|v| v.is_finite())
            .map(|&m| shifted(m).exp())
            .sum::<f64>()
            .ln();
        for (&m, &a_star) in scores.iter().zip(wanted.iter()) {
            if a_star != 0.0 {
                total -= a_star * (shifted(m) - log_sum);
            }
        }
    }
    total
}

/// The mean squared difference between the output and its target. (seq_len, d_model) each
fn task_loss(output: &Matrix, target: &Matrix) -> f64 {
    let count = output.len().max(1) as f64;
    output
        .iter()
        .zip(target.iter())
        .map(|(y, t)| (y - t) * (y - t))
        .sum::<f64>()
        / count
}

/// ∂L/∂A_h of the pattern loss: −A*/(n_heads·n·A); 0 where A* = 0. (seq_len, n_keys)
///
/// Where a weight underflowed to 0 while the target wants it, the true value lies beyond f64;
/// it is held at −f64::MAX so the matrix stays finite (its softmax backward does not use it).
pub(super) fn pattern_d_weights(weights: &Matrix, target: &Matrix, count: f64) -> Matrix {
    weights.zip_map(target, |a, a_star| {
        if a_star == 0.0 {
            0.0
        } else {
            let g = -a_star / (count * a);
            if g.is_finite() {
                g
            } else {
                -f64::MAX
            }
        }
    })
}

/// ∂L/∂M_h of the pattern loss in closed form: (A − A*)/(n_heads·n·T). (seq_len, n_keys)
///
/// This is the softmax backward `A ⊙ (D − rowsum(D ⊙ A)) / T` with D = −A*/(n_heads·n·A):
/// D ⊙ A = −A*/(n_heads·n), whose row sums are −1/(n_heads·n) since each target row sums to 1.
/// Written this way it stays exact when a weight underflows to 0. Masked cells have A = A* = 0.
pub(super) fn pattern_d_masked(
    weights: &Matrix,
    target: &Matrix,
    count: f64,
    temperature: f64,
) -> Matrix {
    let divisor = count * temperature;
    weights.zip_map(target, |a, a_star| (a - a_star) / divisor)
}

/// ∂L/∂Y of the task loss: 2·(Y − Y*)/(n·d_model). (seq_len, d_model)
pub(super) fn task_d_output(output: &Matrix, target: &Matrix) -> Matrix {
    let factor = 2.0 / output.len().max(1) as f64;
    output.zip_map(target, |y, t| factor * (y - t))
}
