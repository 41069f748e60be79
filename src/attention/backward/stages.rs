//! One small function per backward stage, each the mirror of a forward stage in
//! `forward.rs`. Every function takes ∂L/∂(the stage's output) and returns ∂L/∂(its inputs).

use super::super::block::{row_mean_square, row_stats, LAYER_NORM_EPS};
use super::super::config::Mask;
use super::super::Matrix;

/// Backward of `out = input·W`: ∂L/∂W = inputᵀ·∂L/∂out and ∂L/∂input = ∂L/∂out·Wᵀ.
///
/// (rows, d_model)ᵀ·(rows, d_model) → (d_model, d_model);
/// (rows, d_model)·(d_model, d_model)ᵀ → (rows, d_model)
pub(super) fn project_backward(input: &Matrix, w: &Matrix, d_out: &Matrix) -> (Matrix, Matrix) {
    (input.tr_mul(d_out), d_out * w.transpose())
}

/// Backward of `C_h = A_h·V_h`: ∂L/∂A_h = ∂L/∂C_h·V_hᵀ and ∂L/∂V_h = A_hᵀ·∂L/∂C_h.
///
/// (seq_len, head_dim)·(n_keys, head_dim)ᵀ → (seq_len, n_keys);
/// (seq_len, n_keys)ᵀ·(seq_len, head_dim) → (n_keys, head_dim).
/// Masked cells of ∂L/∂A_h are set to 0: the mask holds those weights at 0 whatever the
/// scores, so nothing flows through them.
pub(super) fn weighted_sum_backward(
    weights: &Matrix,
    v: &Matrix,
    d_context: &Matrix,
    mask: Mask,
) -> (Matrix, Matrix) {
    let mut d_weights = d_context * v.transpose();
    zero_masked(&mut d_weights, mask);
    (d_weights, weights.tr_mul(d_context))
}

/// Backward of `A = softmax(M / T)` per row: ∂L/∂M = A ⊙ (D − rowsum(D ⊙ A)) / T with
/// D = ∂L/∂A. (seq_len, n_keys) → (seq_len, n_keys)
///
/// Masked cells have A = 0, so they get 0.
pub(super) fn softmax_backward(weights: &Matrix, d_weights: &Matrix, temperature: f64) -> Matrix {
    let mut out = Matrix::zeros(weights.nrows(), weights.ncols());
    for i in 0..weights.nrows() {
        let dot: f64 = weights
            .row(i)
            .iter()
            .zip(d_weights.row(i).iter())
            .map(|(a, g)| a * g)
            .sum();
        for j in 0..weights.ncols() {
            out[(i, j)] = weights[(i, j)] * (d_weights[(i, j)] - dot) / temperature;
        }
    }
    out
}

/// Backward of the mask: a visible cell passes its gradient on unchanged; a hidden one was
/// replaced by −∞ whatever its scaled score, so it passes on 0. (seq_len, n_keys)
pub(super) fn mask_backward(d_masked: &Matrix, mask: Mask) -> Matrix {
    let mut d_scaled = d_masked.clone();
    zero_masked(&mut d_scaled, mask);
    d_scaled
}

/// Backward of `Z = S / divisor`: ∂L/∂S = ∂L/∂Z / divisor. (seq_len, n_keys)
pub(super) fn scale_backward(d_scaled: &Matrix, divisor: f64) -> Matrix {
    d_scaled / divisor
}

/// Backward of `S_h = Q_h·K_hᵀ`: ∂L/∂Q_h = ∂L/∂S_h·K_h and ∂L/∂K_h = ∂L/∂S_hᵀ·Q_h.
///
/// (seq_len, n_keys)·(n_keys, head_dim) → (seq_len, head_dim);
/// (seq_len, n_keys)ᵀ·(seq_len, head_dim) → (n_keys, head_dim)
pub(super) fn scores_backward(q: &Matrix, k: &Matrix, d_scores: &Matrix) -> (Matrix, Matrix) {
    (d_scores * k, d_scores.tr_mul(q))
}

/// Backward of LayerNorm `y = (x − μ)/√(σ² + ε) · γ + β` for each row, σ² the biased variance:
/// with n̂ = (x − μ)/√(σ² + ε) and ĝ = ∂L/∂y ⊙ γ,
/// `∂L/∂x = (ĝ − mean(ĝ) − n̂ · mean(ĝ ⊙ n̂)) / √(σ² + ε)`. (rows, d_model) → (rows, d_model)
///
/// γ is (1, d_model). The row statistics are taken again from x, as the forward pass did.
pub(super) fn layer_norm_backward(x: &Matrix, gamma: &Matrix, d_out: &Matrix) -> Matrix {
    let d = x.ncols();
    let mut out = Matrix::zeros(x.nrows(), d);
    for i in 0..x.nrows() {
        let (mean, var) = row_stats(x, i);
        let sd = (var + LAYER_NORM_EPS).sqrt();
        let normed = |j: usize| (x[(i, j)] - mean) / sd;
        let scaled = |j: usize| d_out[(i, j)] * gamma[(0, j)];
        let (mut mean_g, mut mean_gn) = (0.0, 0.0);
        for j in 0..d {
            mean_g += scaled(j);
            mean_gn += scaled(j) * normed(j);
        }
        mean_g /= d as f64;
        mean_gn /= d as f64;
        for j in 0..d {
            out[(i, j)] = (scaled(j) - mean_g - normed(j) * mean_gn) / sd;
        }
    }
    out
}

/// Backward of RMSNorm `y = x / r · γ` for each row, r = √(mean(x²) + ε): with ĝ = ∂L/∂y ⊙ γ,
/// `∂L/∂x = ĝ / r − x · mean(ĝ ⊙ x) / r³`. (rows, d_model) → (rows, d_model)
pub(super) fn rms_norm_backward(x: &Matrix, gamma: &Matrix, d_out: &Matrix) -> Matrix {
    let d = x.ncols();
    let mut out = Matrix::zeros(x.nrows(), d);
    for i in 0..x.nrows() {
        let r = (row_mean_square(x, i) + LAYER_NORM_EPS).sqrt();
        let scaled = |j: usize| d_out[(i, j)] * gamma[(0, j)];
        let mean_gx = (0..d).map(|j| scaled(j) * x[(i, j)]).sum::<f64>() / d as f64;
        for j in 0..d {
            out[(i, j)] = scaled(j) / r - x[(i, j)] * mean_gx / (r * r * r);
        }
    }
    out
}

/// Sets the cells the mask hides to 0: keys after the query, and before a sliding window.
fn zero_masked(m: &mut Matrix, mask: Mask) {
    if mask.is_on() {
        for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                if mask.hides(i, j) {
                    m[(i, j)] = 0.0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::layer_norm;

    #[test]
    fn softmax_backward_of_a_two_key_row_is_worked_by_hand() {
        // A = [0.25, 0.75], D = [1, 0], T = 1: rowsum(D ⊙ A) = 0.25, so
        // ∂L/∂M = [0.25·(1 − 0.25), 0.75·(0 − 0.25)] = [0.1875, −0.1875]; T = 2 halves it.
        let a = Matrix::from_row_slice(1, 2, &[0.25, 0.75]);
        let g = Matrix::from_row_slice(1, 2, &[1.0, 0.0]);
        assert_eq!(
            softmax_backward(&a, &g, 1.0),
            Matrix::from_row_slice(1, 2, &[0.1875, -0.1875])
        );
        assert_eq!(softmax_backward(&a, &g, 2.0)[(0, 0)], 0.09375);
    }

    #[test]
    fn layer_norm_backward_matches_a_finite_difference() {
        let x = Matrix::from_row_slice(2, 3, &[0.3, -1.2, 2.0, 1.0, 1.5, -0.5]);
        let gamma = Matrix::from_row_slice(1, 3, &[1.5, -0.7, 0.4]);
        let beta = Matrix::from_row_slice(1, 3, &[0.1, 0.2, -0.3]);
        let d_out = Matrix::from_row_slice(2, 3, &[0.9, -0.4, 0.25, -1.1, 0.6, 0.05]);
        // L = Σ d_out ⊙ LN(x), so ∂L/∂x is the backward of d_out.
        let loss = |x: &Matrix| layer_norm(x, &gamma, &beta).component_mul(&d_out).sum();
        let grad = layer_norm_backward(&x, &gamma, &d_out);
        let h = 1e-6;
        for i in 0..2 {
            for j in 0..3 {
                let (mut up, mut down) = (x.clone(), x.clone());
                up[(i, j)] += h;
                down[(i, j)] -= h;
                let numeric = (loss(&up) - loss(&down)) / (2.0 * h);
                assert!((numeric - grad[(i, j)]).abs() < 1e-8, "({i}, {j})");
            }
        }
    }

    #[test]
    fn rms_norm_backward_matches_a_finite_difference() {
        let x = Matrix::from_row_slice(2, 4, &[0.3, -1.2, 2.0, 0.1, 1.0, 1.5, -0.5, -2.0]);
        let gamma = Matrix::from_row_slice(1, 4, &[1.5, -0.7, 0.4, 1.1]);
        let d_out = Matrix::from_row_slice(2, 4, &[0.9, -0.4, 0.25, 0.3, -1.1, 0.6, 0.05, 0.7]);
        let loss = |x: &Matrix| {
            crate::attention::rms_norm(x, &gamma)
                .component_mul(&d_out)
                .sum()
        };
        let grad = rms_norm_backward(&x, &gamma, &d_out);
        let h = 1e-6;
        for i in 0..2 {
            for j in 0..4 {
                let (mut up, mut down) = (x.clone(), x.clone());
                up[(i, j)] += h;
                down[(i, j)] -= h;
                let numeric = (loss(&up) - loss(&down)) / (2.0 * h);
                assert!((numeric - grad[(i, j)]).abs() < 1e-8, "({i}, {j})");
            }
        }
    }

    #[test]
    fn the_mask_passes_nothing_back_through_hidden_cells() {
        let d = Matrix::from_element(3, 3, 1.0);
        let masked = mask_backward(&d, Mask::CAUSAL);
        assert_eq!(masked.sum(), 6.0);
        assert_eq!(masked[(0, 2)], 0.0);
        assert_eq!(mask_backward(&d, Mask::NONE), d);
    }
}
