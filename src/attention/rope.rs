//! Rotary positions (RoPE, Su et al. 2021): each head's queries and keys are turned, two columns
//! at a time, by angles that grow with the token's position, so that a query's score with a
//! key depends on their positions only through their distance.
//!
//! In a head `d_k` wide the columns form `d_k / 2` pairs. The token at 0-based position `p`
//! turns pair `i` by `p·θ^(−2i/d_k)`:
//!
//! ```text
//! a′ = a·cos(p·ωᵢ) − b·sin(p·ωᵢ)
//! b′ = a·sin(p·ωᵢ) + b·cos(p·ωᵢ)       ωᵢ = θ^(−2i/d_k)
//! ```
//!
//! which pair holds which columns is the [`Pairing`]: column `i` with `i + d_k/2` (Hugging
//! Face's `rotate_half`) or `2i` with `2i + 1` (Meta's original Llama code). The two give the
//! same scores when the same permutation is applied to each head's columns of both W_q and
//! W_k, and, for d_k ≥ 4, different ones for the same weights (with d_k = 2 both are the one
//! pair of columns 0 and 1).

use super::error::AttentionError;
use nalgebra::DMatrix;

/// Which columns of a head turn together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pairing {
    /// Column `i` with column `i + d_k/2`: the first half with the second.
    #[default]
    Half,
    /// Column `2i` with column `2i + 1`: neighbours.
    Interleaved,
}

impl Pairing {
    /// Both pairings, in the order menus list them.
    pub const ALL: [Pairing; 2] = [Pairing::Half, Pairing::Interleaved];

    /// The name files and the command line use.
    pub fn key(self) -> &'static str {
        match self {
            Pairing::Half => "half",
            Pairing::Interleaved => "interleaved",
        }
    }

    /// The pairing named `key`, if any.
    pub fn from_key(key: &str) -> Option<Pairing> {
        Pairing::ALL.into_iter().find(|p| p.key() == key)
    }

    /// The pair that column `c` of a head `d_k` wide belongs to, if any.
    pub fn pair_of(self, c: usize, d_k: usize) -> Option<usize> {
        (0..d_k / 2).find(|&p| {
            let (a, b) = self.columns(p, d_k);
            a == c || b == c
        })
    }

    /// The two columns of pair `i` in a head `d_k` wide.
    pub fn columns(self, i: usize, d_k: usize) -> (usize, usize) {
        match self {
            Pairing::Half => (i, i + d_k / 2),
            Pairing::Interleaved => (2 * i, 2 * i + 1),
        }
    }
}

/// Rotary positions: the base θ of the angles and the pairing of the columns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rope {
    /// The base: pair `i` turns by `θ^(−2i/d_k)` radians a position.
    pub theta: f64,
    /// Which columns turn together.
    pub pairing: Pairing,
}

/// The base most models use (Llama 1 and 2, and the RoFormer paper).
pub const ROPE_THETA: f64 = 10_000.0;

impl Default for Rope {
    fn default() -> Self {
        Self {
            theta: ROPE_THETA,
            pairing: Pairing::Half,
        }
    }
}

impl Rope {
    /// Checks that heads `d_k` wide can be turned: pairs need an even width, and the angles a
    /// finite base greater than 1.
    pub fn check(&self, d_k: usize) -> Result<(), AttentionError> {
        if !(self.theta.is_finite() && self.theta > 1.0) {
            return Err(AttentionError::RopeTheta { theta: self.theta });
        }
        if !d_k.is_multiple_of(2) {
            return Err(AttentionError::RopeOddHeadWidth { d_k });
        }
        Ok(())
    }

    /// How far pair `i` of a head `d_k` wide turns from one position to the next, in radians:
    /// `θ^(−2i/d_k)`.
    pub fn frequency(&self, i: usize, d_k: usize) -> f64 {
        self.theta.powf(-2.0 * i as f64 / d_k as f64)
    }

    /// The angle pair `i` of a token at position `p` turns by, in radians.
    pub fn angle(&self, p: usize, i: usize, d_k: usize) -> f64 {
        p as f64 * self.frequency(i, d_k)
    }

    /// `m` with row `r` (the token at position `first + r`) turned by its position's angles.
    pub fn rotate(&self, m: &DMatrix<f64>, first: usize) -> DMatrix<f64> {
        self.turn(m, first, 1.0)
    }

    /// The turn undone: row `r` turned back by its position's angles. The turn is a rotation,
    /// so this is also its transpose, which carries a gradient back through it:
    /// ∂L/∂Qₕ = `rotate_back`(∂L/∂Qₕ rotated).
    pub fn rotate_back(&self, m: &DMatrix<f64>, first: usize) -> DMatrix<f64> {
        self.turn(m, first, -1.0)
    }

    fn turn(&self, m: &DMatrix<f64>, first: usize, sign: f64) -> DMatrix<f64> {
        let d_k = m.ncols();
        let mut out = m.clone();
        for r in 0..m.nrows() {
            for i in 0..d_k / 2 {
                let (a, b) = self.pairing.columns(i, d_k);
                let (sin, cos) = (sign * self.angle(first + r, i, d_k)).sin_cos();
                out[(r, a)] = m[(r, a)] * cos - m[(r, b)] * sin;
                out[(r, b)] = m[(r, a)] * sin + m[(r, b)] * cos;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &DMatrix<f64>, b: &DMatrix<f64>, tol: f64) -> bool {
        a.shape() == b.shape() && a.iter().zip(b.iter()).all(|(x, y)| (x - y).abs() <= tol)
    }

    /// A matrix of `rows × cols` numbers that are neither round nor alike.
    fn varied(rows: usize, cols: usize, seed: f64) -> DMatrix<f64> {
        DMatrix::from_fn(rows, cols, |r, c| {
            ((r * 7 + c * 3) as f64 * 0.37 + seed).sin() * 1.3
        })
    }

    #[test]
    fn a_pair_turns_by_its_position_times_its_frequency() {
        // d_k = 2: one pair, frequency θ⁰ = 1, so the token at position p turns by p radians.
        let rope = Rope::default();
        let q = DMatrix::from_row_slice(3, 2, &[1.0, 0.0, 1.0, 0.0, 0.0, 2.0]);
        let turned = rope.rotate(&q, 0);
        let expected = DMatrix::from_row_slice(
            3,
            2,
            &[
                1.0,
                0.0,
                1f64.cos(),
                1f64.sin(),
                -2.0 * 2f64.sin(),
                2.0 * 2f64.cos(),
            ],
        );
        assert!(close(&turned, &expected, 1e-15), "{turned}");
    }

    #[test]
    fn the_pairings_turn_the_columns_the_issue_names() {
        // d_k = 4, θ = 100: pair 0 turns by p, pair 1 by p/10 (100^(−2/4) = 0.1).
        let rope = Rope {
            theta: 100.0,
            pairing: Pairing::Half,
        };
        assert!((rope.frequency(1, 4) - 0.1).abs() < 1e-15);
        let x = DMatrix::from_row_slice(1, 4, &[1.0, 2.0, 3.0, 4.0]);
        // Position 1. Half: (1, 3) by 1 rad and (2, 4) by 0.1 rad.
        let (s1, c1) = 1f64.sin_cos();
        let (s2, c2) = 0.1f64.sin_cos();
        let half = rope.rotate(&x, 1);
        let expected = DMatrix::from_row_slice(
            1,
            4,
            &[
                c1 - 3.0 * s1,
                2.0 * c2 - 4.0 * s2,
                s1 + 3.0 * c1,
                2.0 * s2 + 4.0 * c2,
            ],
        );
        assert!(close(&half, &expected, 1e-15), "{half}");
        // Interleaved: (1, 2) by 1 rad and (3, 4) by 0.1 rad.
        let interleaved = Rope {
            pairing: Pairing::Interleaved,
            ..rope
        }
        .rotate(&x, 1);
        let expected = DMatrix::from_row_slice(
            1,
            4,
            &[
                c1 - 2.0 * s1,
                s1 + 2.0 * c1,
                3.0 * c2 - 4.0 * s2,
                3.0 * s2 + 4.0 * c2,
            ],
        );
        assert!(close(&interleaved, &expected, 1e-15), "{interleaved}");
    }

    #[test]
    fn the_pairings_give_the_same_scores_once_the_weights_columns_are_permuted() {
        // Interleaved pair i holds columns 2i, 2i+1; half pair i holds i, i + d_k/2. Moving
        // column 2i of W_q and W_k to i and 2i+1 to i + d_k/2 makes half pairing turn exactly
        // what interleaved turned, so the scores agree; the same weights give other scores.
        let (t, d_model, d_k) = (5, 6, 6);
        let x = varied(t, d_model, 0.2);
        let (w_q, w_k) = (varied(d_model, d_k, 1.1), varied(d_model, d_k, 2.3));
        let half = Rope::default();
        let interleaved = Rope {
            pairing: Pairing::Interleaved,
            ..half
        };
        let to_half = |w: &DMatrix<f64>| {
            DMatrix::from_fn(w.nrows(), d_k, |r, c| {
                let from = if c < d_k / 2 {
                    2 * c
                } else {
                    2 * (c - d_k / 2) + 1
                };
                w[(r, from)]
            })
        };
        let scores = |rope: &Rope, w_q: &DMatrix<f64>, w_k: &DMatrix<f64>| {
            rope.rotate(&(&x * w_q), 0) * rope.rotate(&(&x * w_k), 0).transpose()
        };
        let meta = scores(&interleaved, &w_q, &w_k);
        let hugging_face = scores(&half, &to_half(&w_q), &to_half(&w_k));
        assert!(close(&meta, &hugging_face, 1e-12));
        assert!(!close(&meta, &scores(&half, &w_q, &w_k), 1e-3));
    }

    #[test]
    fn shifting_every_position_leaves_the_scores_unchanged() {
        for pairing in Pairing::ALL {
            let rope = Rope {
                theta: 10_000.0,
                pairing,
            };
            let (q, k) = (varied(4, 8, 0.5), varied(4, 8, 1.7));
            let scores = |first: usize| rope.rotate(&q, first) * rope.rotate(&k, first).transpose();
            assert!(close(&scores(0), &scores(7), 1e-12), "{pairing:?}");
            // Unturned, the scores differ: the rotation is what depends on i − j.
            assert!(!close(&scores(0), &(&q * k.transpose()), 1e-3));
        }
    }

    #[test]
    fn turning_back_is_the_transpose_and_undoes_the_turn() {
        let rope = Rope {
            theta: 500.0,
            pairing: Pairing::Interleaved,
        };
        let (x, y) = (varied(3, 4, 0.9), varied(3, 4, 2.2));
        assert!(close(&rope.rotate_back(&rope.rotate(&x, 2), 2), &x, 1e-14));
        // ⟨R x, y⟩ = ⟨x, Rᵀ y⟩, row by row: what carries a gradient back.
        let lhs = rope.rotate(&x, 2).component_mul(&y).sum();
        let rhs = x.component_mul(&rope.rotate_back(&y, 2)).sum();
        assert!((lhs - rhs).abs() < 1e-13);
    }

    #[test]
    fn the_gradient_through_the_turn_agrees_with_central_differences() {
        // L = Σ G ⊙ rotate(Q): ∂L/∂Q = rotate_back(G).
        let rope = Rope::default();
        let (q, g) = (varied(3, 4, 0.4), varied(3, 4, 1.9));
        let loss = |q: &DMatrix<f64>| rope.rotate(q, 1).component_mul(&g).sum();
        let analytic = rope.rotate_back(&g, 1);
        let h = 1e-6;
        for r in 0..3 {
            for c in 0..4 {
                let (mut up, mut down) = (q.clone(), q.clone());
                up[(r, c)] += h;
                down[(r, c)] -= h;
                let numeric = (loss(&up) - loss(&down)) / (2.0 * h);
                let err = (numeric - analytic[(r, c)]).abs() / analytic[(r, c)].abs().max(1e-3);
                assert!(
                    err < 1e-6,
                    "({r}, {c}): {numeric} against {}",
                    analytic[(r, c)]
                );
            }
        }
    }

    #[test]
    fn an_odd_head_width_and_a_base_of_one_or_less_are_refused() {
        let rope = Rope::default();
        assert_eq!(
            rope.check(3),
            Err(AttentionError::RopeOddHeadWidth { d_k: 3 })
        );
        assert!(rope.check(4).is_ok());
        for theta in [1.0, 0.5, f64::NAN, f64::INFINITY] {
            let err = Rope { theta, ..rope }.check(4).unwrap_err();
            assert!(matches!(err, AttentionError::RopeTheta { .. }), "{theta}");
        }
        assert_eq!(Pairing::from_key("interleaved"), Some(Pairing::Interleaved));
        assert_eq!(Pairing::from_key("half"), Some(Pairing::Half));
        assert_eq!(Pairing::from_key("rotate_half"), None);
    }
}
