//! The four projection matrices and their initialisers.

use super::error::AttentionError;
use super::rng::SplitMix64;
use super::Matrix;
use std::fmt;

/// Which projection matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WeightName {
    /// Query projection.
    Q,
    /// Key projection.
    K,
    /// Value projection.
    V,
    /// Output projection.
    O,
}

impl WeightName {
    /// All four, in the order they are used.
    pub const ALL: [WeightName; 4] = [Self::Q, Self::K, Self::V, Self::O];

    /// The name used in scenarios and code, `w_q` etc.
    pub fn key(self) -> &'static str {
        match self {
            Self::Q => "w_q",
            Self::K => "w_k",
            Self::V => "w_v",
            Self::O => "w_o",
        }
    }

    /// The name shown to people, `W_q` etc.
    pub fn label(self) -> &'static str {
        match self {
            Self::Q => "W_q",
            Self::K => "W_k",
            Self::V => "W_v",
            Self::O => "W_o",
        }
    }

    /// Half the range of this matrix's default values. Queries and keys are drawn wider so the
    /// first picture shows clear attention patterns rather than near-uniform weights.
    fn default_half_width(self) -> f64 {
        match self {
            Self::Q | Self::K => 2.0,
            Self::V | Self::O => 1.0,
        }
    }

    /// The seed of this matrix's default values.
    fn default_seed(self) -> u64 {
        match self {
            Self::Q => 11,
            Self::K => 23,
            Self::V => 37,
            Self::O => 41,
        }
    }
}

impl fmt::Display for WeightName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A way to fill a `d_model × d_model` matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Init {
    /// The default weights: fixed seeds (11, 23, 37, 41 for W_q, W_k, W_v, W_o), one decimal,
    /// uniform in `[-2, 2)` for W_q and W_k and in `[-1, 1)` for W_v and W_o.
    Default,
    /// Uniform in `[-1, 1]` with two decimals, from a seed.
    Random(u64),
    /// Ones on the diagonal: the projection passes X through unchanged.
    Identity,
    /// All zeros.
    Zero,
}

impl Init {
    /// A `d_model × d_model` matrix filled this way for `name`.
    pub fn matrix(self, name: WeightName, d_model: usize) -> Matrix {
        self.shaped(name, d_model, d_model)
    }

    /// A `rows × cols` matrix filled this way for `name`: W_k and W_v are narrower than
    /// `d_model` when key/value heads are shared. Row by row, so a square matrix's first
    /// values are the narrow one's.
    pub fn shaped(self, name: WeightName, rows: usize, cols: usize) -> Matrix {
        match self {
            Self::Default => random(
                SplitMix64::new(name.default_seed()),
                (rows, cols),
                name.default_half_width(),
                1,
            ),
            // Each matrix gets its own stream so W_q and W_k differ under one seed.
            Self::Random(seed) => random(
                SplitMix64::new(seed ^ name.default_seed().wrapping_mul(0x9E37_79B9)),
                (rows, cols),
                1.0,
                2,
            ),
            Self::Identity => Matrix::identity(rows, cols),
            Self::Zero => Matrix::zeros(rows, cols),
        }
    }
}

fn random(
    mut rng: SplitMix64,
    (rows, cols): (usize, usize),
    half_width: f64,
    decimals: i32,
) -> Matrix {
    // Filled row by row, so the listing in a scenario reads in draw order.
    let values: Vec<f64> = (0..rows * cols)
        .map(|_| rng.next_symmetric(half_width, decimals))
        .collect();
    Matrix::from_row_slice(rows, cols, &values)
}

/// The projection matrices `W_q, W_k, W_v, W_o`, each `d_model × d_model`.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    /// Query projection. (d_model, d_model)
    pub w_q: Matrix,
    /// Key projection. (d_model, d_model)
    pub w_k: Matrix,
    /// Value projection. (d_model, d_model)
    pub w_v: Matrix,
    /// Output projection. (d_model, d_model)
    pub w_o: Matrix,
}

impl Weights {
    /// All four matrices filled by `init`.
    pub fn new(init: Init, d_model: usize) -> Self {
        Self {
            w_q: init.matrix(WeightName::Q, d_model),
            w_k: init.matrix(WeightName::K, d_model),
            w_v: init.matrix(WeightName::V, d_model),
            w_o: init.matrix(WeightName::O, d_model),
        }
    }

    /// All four matrices filled by `init`, W_k and W_v `kv_width` columns wide.
    pub fn shaped(init: Init, d_model: usize, kv_width: usize) -> Self {
        Self {
            w_q: init.matrix(WeightName::Q, d_model),
            w_k: init.shaped(WeightName::K, d_model, kv_width),
            w_v: init.shaped(WeightName::V, d_model, kv_width),
            w_o: init.matrix(WeightName::O, d_model),
        }
    }

    /// The shape of matrix `name`: W_k and W_v are `d_model × kv_width`, the others square.
    pub fn shape_of(name: WeightName, d_model: usize, kv_width: usize) -> (usize, usize) {
        match name {
            WeightName::K | WeightName::V => (d_model, kv_width),
            WeightName::Q | WeightName::O => (d_model, d_model),
        }
    }

    /// The matrix called `name`.
    pub fn get(&self, name: WeightName) -> &Matrix {
        match name {
            WeightName::Q => &self.w_q,
            WeightName::K => &self.w_k,
            WeightName::V => &self.w_v,
            WeightName::O => &self.w_o,
        }
    }

    /// The matrix called `name`, to change.
    pub fn get_mut(&mut self, name: WeightName) -> &mut Matrix {
        match name {
            WeightName::Q => &mut self.w_q,
            WeightName::K => &mut self.w_k,
            WeightName::V => &mut self.w_v,
            WeightName::O => &mut self.w_o,
        }
    }

    /// Checks that every matrix is `d_model × d_model` and finite.
    pub fn validate(&self, d_model: usize) -> Result<(), AttentionError> {
        self.validate_shaped(d_model, d_model)
    }

    /// Checks that every matrix is finite and has its shape, W_k and W_v `kv_width` columns
    /// wide.
    pub fn validate_shaped(&self, d_model: usize, kv_width: usize) -> Result<(), AttentionError> {
        for name in WeightName::ALL {
            check_matrix(
                name.label(),
                self.get(name),
                Self::shape_of(name, d_model, kv_width),
            )?;
        }
        Ok(())
    }
}

/// Checks a matrix's shape and that every entry is finite.
pub(crate) fn check_matrix(
    name: &str,
    m: &Matrix,
    expected: (usize, usize),
) -> Result<(), AttentionError> {
    if m.shape() != expected {
        return Err(AttentionError::WrongShape {
            name: name.to_string(),
            expected,
            found: m.shape(),
        });
    }
    for row in 0..m.nrows() {
        for col in 0..m.ncols() {
            if !m[(row, col)].is_finite() {
                return Err(AttentionError::NotFinite {
                    name: name.to_string(),
                    row,
                    col,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialisers_fill_square_matrices() {
        for init in [Init::Default, Init::Random(5), Init::Identity, Init::Zero] {
            let w = Weights::new(init, 6);
            assert!(w.validate(6).is_ok());
        }
        assert_eq!(Weights::new(Init::Identity, 3).w_k, Matrix::identity(3, 3));
        assert_eq!(Weights::new(Init::Zero, 3).w_o.sum(), 0.0);
    }

    #[test]
    fn one_seed_gives_different_matrices_and_the_same_seed_the_same_ones() {
        let a = Weights::new(Init::Random(99), 4);
        let b = Weights::new(Init::Random(99), 4);
        assert_eq!(a, b);
        assert_ne!(a.w_q, a.w_k);
        assert_ne!(a, Weights::new(Init::Random(100), 4));
    }

    #[test]
    fn wrong_shapes_and_non_finite_values_are_named() {
        let mut w = Weights::new(Init::Default, 4);
        assert_eq!(
            w.validate(5),
            Err(AttentionError::WrongShape {
                name: "W_q".into(),
                expected: (5, 5),
                found: (4, 4)
            })
        );
        w.w_v[(1, 2)] = f64::NAN;
        let err = w.validate(4).unwrap_err();
        assert_eq!(
            err.to_string(),
            "W_v has a value that is not a finite number at row 2, column 3."
        );
    }
}
