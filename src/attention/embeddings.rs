//! Toy token embeddings and the sinusoidal positional encoding.
//!
//! A token's toy embedding is drawn from [`SplitMix64`] seeded with the 64-bit FNV-1a hash of
//! the token's UTF-8 bytes: `d_model` draws, each uniform in `[-1, 1)` and rounded to two
//! decimals. Integer arithmetic makes it identical on every platform and in every browser, the
//! same word always gets the same vector, and a wider model only appends columns.

use super::rng::SplitMix64;
use super::Matrix;

/// The toy embedding of one token: `d_model` numbers in `[-1, 1]`.
pub fn toy_embedding(token: &str, d_model: usize) -> Vec<f64> {
    let mut rng = SplitMix64::from_text(token);
    (0..d_model).map(|_| rng.next_signed(2)).collect()
}

/// Toy embeddings of every token, one row each. (seq_len, d_model)
pub fn toy_embeddings(tokens: &[String], d_model: usize) -> Matrix {
    let rows: Vec<Vec<f64>> = tokens.iter().map(|t| toy_embedding(t, d_model)).collect();
    Matrix::from_fn(tokens.len(), d_model, |i, j| rows[i][j])
}

/// The sinusoidal positional encoding of "Attention Is All You Need". (seq_len, d_model)
///
/// `PE[pos, 2i] = sin(pos / 10000^(2i / d_model))`, `PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))`,
/// with positions counted from 0.
pub fn positional_encoding(seq_len: usize, d_model: usize) -> Matrix {
    Matrix::from_fn(seq_len, d_model, |pos, col| {
        let (sin, cos) = encoding_angle(pos, col, d_model).sin_cos();
        if col % 2 == 0 {
            sin
        } else {
            cos
        }
    })
}

/// The angle `pos / 10000^(2i / d_model)` of column `col` (of the pair `2i`, `2i + 1`).
pub fn encoding_angle(pos: usize, col: usize, d_model: usize) -> f64 {
    let pair = (col / 2) * 2;
    pos as f64 / 10000f64.powf(pair as f64 / d_model as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_word_always_gets_the_same_vector() {
        let tokens: Vec<String> = ["the", "cat", "the"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let x = toy_embeddings(&tokens, 6);
        assert_eq!(x.row(0), x.row(2));
        assert_ne!(x.row(0), x.row(1));
    }

    #[test]
    fn a_wider_model_only_appends_columns() {
        let narrow = toy_embedding("sushi", 4);
        let wide = toy_embedding("sushi", 8);
        assert_eq!(narrow[..], wide[..4]);
    }

    #[test]
    fn toy_embeddings_are_pinned_so_every_platform_agrees() {
        // If this changes, every saved scenario without explicit embeddings changes too.
        assert_eq!(toy_embedding("I", 4), PINNED_I);
    }

    const PINNED_I: [f64; 4] = [0.18, 0.63, -0.85, 0.42];

    #[test]
    fn positional_encoding_follows_the_sine_cosine_formula() {
        let pe = positional_encoding(3, 4);
        // Position 0: sin 0 = 0, cos 0 = 1.
        assert_eq!(
            pe.row(0).iter().copied().collect::<Vec<_>>(),
            [0.0, 1.0, 0.0, 1.0]
        );
        // Position 1, columns 2 and 3 use 1 / 10000^(2/4) = 0.01.
        assert!((pe[(1, 0)] - 1f64.sin()).abs() < 1e-15);
        assert!((pe[(1, 1)] - 1f64.cos()).abs() < 1e-15);
        assert!((pe[(1, 2)] - 0.01f64.sin()).abs() < 1e-15);
        assert!((pe[(2, 3)] - 0.02f64.cos()).abs() < 1e-15);
    }
}
