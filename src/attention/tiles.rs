//! FlashAttention's tiled softmax (Dao et al. 2022): one query row's softmax and weighted sum
//! computed over blocks of keys, keeping only a running maximum `m`, a running sum `ℓ` and an
//! unnormalised output `o` between blocks, never the whole row of weights.
//!
//! For a block of keys with softmax inputs `xⱼ` (the scores divided by the scale's divisor and
//! by T, −∞ where the mask hides a key) and value rows `vⱼ`:
//!
//! ```text
//! m′ = max(m, maxⱼ xⱼ)
//! ℓ′ = ℓ·e^(m − m′) + Σⱼ e^(xⱼ − m′)
//! o′ = o·e^(m − m′) + Σⱼ e^(xⱼ − m′)·vⱼ
//! ```
//!
//! After the last block, `o / ℓ` is the row of the weighted sum: `o` and `ℓ` carry the same
//! factor e^(−m), which cancels in the quotient, so the result is the softmax's whatever the
//! order of the blocks (keeping `m` the running maximum only keeps every exponential at or
//! below 1). In floating point the two agree to rounding, about 10⁻¹⁶. A block whose keys are
//! all hidden changes nothing.

use super::forward::HeadTrace;
use nalgebra::DMatrix;

/// The running state after one block of keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Tile {
    /// The largest softmax input seen so far; −∞ while every key so far was hidden.
    pub m: f64,
    /// The sum of e^(xⱼ − m) over the keys seen so far.
    pub l: f64,
    /// The sum of e^(xⱼ − m)·vⱼ over the keys seen so far (one row, `d_k` wide).
    pub o: Vec<f64>,
}

impl Tile {
    /// The state before any key: nothing seen.
    fn empty(d_k: usize) -> Self {
        Self {
            m: f64::NEG_INFINITY,
            l: 0.0,
            o: vec![0.0; d_k],
        }
    }

    /// The weighted sum so far, `o / ℓ`; zeros while every key was hidden (the app's
    /// convention for a row with no visible key).
    pub fn output(&self) -> Vec<f64> {
        if self.l > 0.0 {
            self.o.iter().map(|o| o / self.l).collect()
        } else {
            vec![0.0; self.o.len()]
        }
    }
}

/// The factor the state before a block is rescaled by when the maximum moves from `m` to
/// `m_new`: e^(m − m_new), and 0 while nothing was seen (m = −∞).
pub fn rescale(m: f64, m_new: f64) -> f64 {
    weight(m, m_new)
}

/// e^(x − m) for an input `x` below the maximum `m`: 0 for a hidden key, and where scores
/// overflowed to +∞, 1 for each infinite one and 0 for the rest, as the whole softmax shares
/// such a row among its infinite entries.
fn weight(x: f64, m: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        0.0
    } else if m == f64::INFINITY {
        if x == f64::INFINITY {
            1.0
        } else {
            0.0
        }
    } else {
        (x - m).exp()
    }
}

/// The running state after each block of `block` keys, for one query row whose softmax inputs
/// are `inputs` (one per key) over the value rows of `v` (one per key). Every block is listed,
/// the last one possibly shorter. `block` is at least 1.
pub fn tiled_row(inputs: &[f64], v: &DMatrix<f64>, block: usize) -> Vec<Tile> {
    let (d_k, block) = (v.ncols(), block.max(1));
    let mut state = Tile::empty(d_k);
    let mut tiles = Vec::with_capacity(inputs.len().div_ceil(block));
    for (b, chunk) in inputs.chunks(block).enumerate() {
        let first = b * block;
        let m_new = chunk.iter().copied().fold(state.m, f64::max);
        if m_new != f64::NEG_INFINITY {
            let keep = rescale(state.m, m_new);
            let mut l = state.l * keep;
            let mut o: Vec<f64> = state.o.iter().map(|o| o * keep).collect();
            for (j, &x) in chunk.iter().enumerate() {
                let e = weight(x, m_new);
                l += e;
                for (c, o) in o.iter_mut().enumerate() {
                    *o += e * v[(first + j, c)];
                }
            }
            state = Tile { m: m_new, l, o };
        }
        tiles.push(state.clone());
    }
    tiles
}

/// Every query row of a head, tiled: for row `i`, [`tiled_row`] over the softmax inputs
/// (the masked scores divided by the temperature) and the head's values.
pub fn head_tiles(head: &HeadTrace, temperature: f64, block: usize) -> Vec<Vec<Tile>> {
    (0..head.masked.nrows())
        .filter_map(|i| row_tiles(head, temperature, block, i))
        .collect()
}

/// Query row `i` of a head, tiled as [`head_tiles`] tiles every row; `None` past the last row.
pub fn row_tiles(head: &HeadTrace, temperature: f64, block: usize, i: usize) -> Option<Vec<Tile>> {
    (i < head.masked.nrows()).then(|| {
        let inputs: Vec<f64> = head.masked.row(i).iter().map(|z| z / temperature).collect();
        tiled_row(&inputs, &head.v, block)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::softmax_rows;

    fn varied(rows: usize, cols: usize, seed: f64) -> DMatrix<f64> {
        DMatrix::from_fn(rows, cols, |r, c| {
            ((r * 5 + c * 11) as f64 * 0.29 + seed).sin() * 2.1
        })
    }

    /// The weighted sum's row, softmax(x)·V, computed whole.
    fn whole(inputs: &[f64], v: &DMatrix<f64>) -> Vec<f64> {
        let (weights, _) = softmax_rows(&DMatrix::from_row_slice(1, inputs.len(), inputs), 1.0);
        (&weights * v).row(0).iter().copied().collect()
    }

    #[test]
    fn the_last_tile_equals_the_weighted_sum_for_every_block_size() {
        let v = varied(7, 3, 0.3);
        let inputs: Vec<f64> = (0..7).map(|j| (j as f64 * 1.7).cos() * 3.0).collect();
        let expected = whole(&inputs, &v);
        for block in 1..=8 {
            let tiles = tiled_row(&inputs, &v, block);
            assert_eq!(tiles.len(), 7usize.div_ceil(block));
            let got = tiles.last().unwrap().output();
            for (g, e) in got.iter().zip(&expected) {
                assert!(
                    (g - e).abs() < 1e-14,
                    "B = {block}: {got:?} against {expected:?}"
                );
            }
            // The last maximum is the row's.
            assert_eq!(
                tiles.last().unwrap().m,
                inputs.iter().copied().fold(f64::MIN, f64::max)
            );
        }
    }

    #[test]
    fn a_block_of_hidden_keys_changes_nothing() {
        // Under the causal mask, query 2 of 6 sees keys 0..=2: the blocks after it are hidden.
        let v = varied(6, 2, 1.0);
        let hidden = f64::NEG_INFINITY;
        let inputs = [0.4, -1.2, 2.0, hidden, hidden, hidden];
        let tiles = tiled_row(&inputs, &v, 2);
        assert_eq!(tiles[1], tiles[2]);
        let expected = whole(&inputs, &v);
        for (g, e) in tiles[2].output().iter().zip(&expected) {
            assert!((g - e).abs() < 1e-14);
        }
        // Hidden first: m stays −∞ and nothing is summed until a visible key.
        let tiles = tiled_row(&[hidden, hidden, 1.0], &v.rows(0, 3).into_owned(), 1);
        assert_eq!(tiles[0].m, f64::NEG_INFINITY);
        assert_eq!(tiles[1], tiles[0]);
        assert_eq!(tiles[2].m, 1.0);
        assert_eq!(tiles[2].l, 1.0);
        // Every key hidden: ℓ = 0, and the output is the app's row of zeros.
        let none = tiled_row(&[hidden, hidden], &v.rows(0, 2).into_owned(), 1);
        assert_eq!(none[1].l, 0.0);
        assert_eq!(none[1].output(), vec![0.0, 0.0]);
    }

    #[test]
    fn a_new_maximum_rescales_what_came_before() {
        // Block 1 holds 1.0, block 2 holds 3.0: ℓ after block 2 is e^(1 − 3) + 1.
        let v = DMatrix::from_row_slice(2, 1, &[10.0, 20.0]);
        let tiles = tiled_row(&[1.0, 3.0], &v, 1);
        assert_eq!((tiles[0].m, tiles[0].l, tiles[0].o[0]), (1.0, 1.0, 10.0));
        let keep = rescale(1.0, 3.0);
        assert!((keep - (-2f64).exp()).abs() < 1e-16);
        assert!((tiles[1].l - (keep + 1.0)).abs() < 1e-15);
        assert!((tiles[1].o[0] - (10.0 * keep + 20.0)).abs() < 1e-13);
        assert_eq!(rescale(f64::NEG_INFINITY, 2.0), 0.0);
    }

    #[test]
    fn every_row_of_a_head_tiles_to_its_weighted_sum() {
        use crate::attention::{forward, Config, Init, Inputs, Weights};
        let config = Config {
            causal: true,
            temperature: 0.6,
            ..Config::default()
        };
        let inputs = Inputs::from_sentence(
            "the cat sat on the mat",
            config,
            Weights::new(Init::Random(4), 4),
        )
        .unwrap();
        let trace = forward(&inputs).unwrap();
        for head in &trace.heads {
            for (i, row) in head_tiles(head, 0.6, 4).iter().enumerate() {
                assert_eq!(row.len(), 2);
                let out = row.last().unwrap().output();
                for (c, o) in out.iter().enumerate() {
                    assert!((o - head.context[(i, c)]).abs() < 1e-13, "row {i}");
                }
            }
        }
    }

    #[test]
    fn overflowed_scores_share_the_row_as_the_whole_softmax_does() {
        let v = DMatrix::from_row_slice(3, 1, &[1.0, 2.0, 4.0]);
        let inputs = [5.0, f64::INFINITY, f64::INFINITY];
        let got = tiled_row(&inputs, &v, 2).last().unwrap().output();
        assert_eq!(got, whole(&inputs, &v));
        assert_eq!(got, vec![3.0]);
    }
}
