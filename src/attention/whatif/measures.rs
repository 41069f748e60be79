//! Measures of a weight matrix that show what a mistake did: row and column sums, and how
//! peaked the rows are (largest weight and entropy).

use crate::attention::Matrix;

/// How peaked the rows of a weight matrix are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Saturation {
    /// Mean over rows of the row's largest weight: 1/n for n even weights, 1 for all-or-nothing.
    pub mean_max_weight: f64,
    /// Mean over rows of `−Σ w·ln w` in nats (with 0·ln 0 = 0): ln n for n even weights, 0 for
    /// all-or-nothing.
    pub mean_entropy: f64,
}

impl Saturation {
    /// The saturation of `weights`, over the rows that are not all zero (fully masked rows
    /// attend to nothing). A row holding NaN makes both numbers NaN. (rows, cols) → two numbers
    pub fn of(weights: &Matrix) -> Self {
        let rows: Vec<Vec<f64>> = weights
            .row_iter()
            .map(|r| r.iter().copied().collect::<Vec<f64>>())
            .filter(|r| r.iter().any(|w| *w != 0.0))
            .collect();
        if rows.is_empty() {
            return Self {
                mean_max_weight: 0.0,
                mean_entropy: 0.0,
            };
        }
        let n = rows.len() as f64;
        Self {
            mean_max_weight: rows.iter().map(|r| max_weight(r)).sum::<f64>() / n,
            mean_entropy: rows.iter().map(|r| entropy(r)).sum::<f64>() / n,
        }
    }
}

/// The largest entry of `row`; NaN if any entry is NaN.
pub(super) fn max_weight(row: &[f64]) -> f64 {
    if row.iter().any(|w| w.is_nan()) {
        return f64::NAN;
    }
    row.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// `−Σ w·ln w` in nats, with `0·ln 0 = 0`.
pub(super) fn entropy(row: &[f64]) -> f64 {
    -row.iter()
        .map(|&w| if w == 0.0 { 0.0 } else { w * w.ln() })
        .sum::<f64>()
}

/// The sum of each row. (rows, cols) → rows numbers
pub fn row_sums(m: &Matrix) -> Vec<f64> {
    m.row_iter().map(|r| r.sum()).collect()
}

/// The sum of each column. (rows, cols) → cols numbers
pub fn column_sums(m: &Matrix) -> Vec<f64> {
    m.column_iter().map(|c| c.sum()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::whatif::tests::close;

    #[test]
    fn saturation_is_one_over_n_and_ln_n_for_even_rows_and_one_and_zero_for_one_hot() {
        // Row 1 even over 4 keys: max 1/4, entropy ln 4. Row 2 one-hot: max 1, entropy 0.
        // Row 3 is fully masked (all zeros) and does not count. Means: 5/8 and ln 4 / 2 = ln 2.
        let w = Matrix::from_row_slice(
            3,
            4,
            &[
                0.25, 0.25, 0.25, 0.25, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            ],
        );
        let s = Saturation::of(&w);
        assert!(close(s.mean_max_weight, 0.625));
        assert!(close(s.mean_entropy, 2f64.ln()));
    }

    #[test]
    fn a_nan_row_makes_the_saturation_nan_rather_than_hiding_it() {
        let w = Matrix::from_row_slice(1, 2, &[f64::NAN, 0.0]);
        let s = Saturation::of(&w);
        assert!(s.mean_max_weight.is_nan() && s.mean_entropy.is_nan());
    }
}
