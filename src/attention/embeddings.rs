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
        let (sin, cos) = sin_cos(encoding_angle(pos, col, d_model));
        if col % 2 == 0 {
            sin
        } else {
            cos
        }
    })
}

/// The angle `pos / 10000^(2i / d_model)` of column `col` (of the pair `2i`, `2i + 1`).
///
/// The power is `exp(2i / d_model · ln 10000)`. This and [`sin_cos`] keep the general `pow`,
/// `sin` and `cos` of the maths library (about 9 kB) out of the web bundle; the results agree
/// with them to within a couple of units in the last place.
pub fn encoding_angle(pos: usize, col: usize, d_model: usize) -> f64 {
    const LN_10000: f64 = 9.210_340_371_976_184;
    let pair = (col / 2) * 2;
    pos as f64 / (pair as f64 / d_model as f64 * LN_10000).exp()
}

/// `(sin x, cos x)` for angles up to about a million: `x` is reduced by whole quarter turns,
/// with π/2 split in two so that the reduction is exact enough, and the Taylor series of both
/// on `[−π/4, π/4]` runs until its next term is below half a unit in the last place.
pub fn sin_cos(x: f64) -> (f64, f64) {
    // π/2 = PIO2_HI + PIO2_LO, where PIO2_HI has 33 significant bits, so `k * PIO2_HI` is exact
    // for every quarter-turn count k below 2^20.
    const PIO2_HI: f64 = 1.570_796_326_734_125_6;
    const PIO2_LO: f64 = 6.077_100_506_506_192e-11;
    // 1/n! for odd and even n.
    const SIN: [f64; 8] = [
        -0.166_666_666_666_666_66,
        0.008_333_333_333_333_333,
        -0.000_198_412_698_412_698_4,
        2.755_731_922_398_589_3e-6,
        -2.505_210_838_544_172e-8,
        1.605_904_383_682_161_3e-10,
        -7.647_163_731_819_816e-13,
        2.811_457_254_345_520_6e-15,
    ];
    const COS: [f64; 9] = [
        -0.5,
        0.041_666_666_666_666_664,
        -0.001_388_888_888_888_889,
        2.480_158_730_158_73e-5,
        -2.755_731_922_398_589e-7,
        2.087_675_698_786_81e-9,
        -1.147_074_559_772_972_5e-11,
        4.779_477_332_387_385e-14,
        -1.561_920_696_858_622_5e-16,
    ];
    let k = (x * std::f64::consts::FRAC_2_PI).round();
    let r = (x - k * PIO2_HI) - k * PIO2_LO;
    let r2 = r * r;
    let horner = |coefficients: &[f64]| coefficients.iter().rev().fold(0.0, |acc, c| c + r2 * acc);
    let sin = r + r * r2 * horner(&SIN);
    let cos = 1.0 + r2 * horner(&COS);
    match (k as i64).rem_euclid(4) {
        0 => (sin, cos),
        1 => (cos, -sin),
        2 => (-sin, -cos),
        _ => (-cos, sin),
    }
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

    #[test]
    fn sin_cos_agree_with_the_maths_library() {
        let ulp = |v: f64| f64::EPSILON * v.abs().max(f64::MIN_POSITIVE);
        for i in 0..200_000 {
            let x = f64::from(i) * 0.005 - 500.0;
            let (s, c) = sin_cos(x);
            assert!(
                (s - x.sin()).abs() <= 2.0 * ulp(x.sin()).max(1e-17),
                "sin {x}"
            );
            assert!(
                (c - x.cos()).abs() <= 2.0 * ulp(x.cos()).max(1e-17),
                "cos {x}"
            );
        }
        for pos in 0..32 {
            let x = pos as f64;
            assert!(
                (sin_cos(x).0 - x.sin()).abs() <= 2.0 * ulp(x.sin()),
                "sin {pos}"
            );
            assert!(
                (sin_cos(x).1 - x.cos()).abs() <= 2.0 * ulp(x.cos()),
                "cos {pos}"
            );
        }
    }

    #[test]
    fn encoding_angles_agree_with_the_power() {
        assert_eq!(9.210_340_371_976_184, 10000f64.ln());
        for d in [4, 6, 8, 16] {
            for col in 0..d {
                for pos in 0..32 {
                    let pair = (col / 2) * 2;
                    let want = pos as f64 / 10000f64.powf(pair as f64 / d as f64);
                    let got = encoding_angle(pos, col, d);
                    assert!(
                        (got - want).abs() <= 8.0 * f64::EPSILON * want.abs(),
                        "{pos} {col} {d}"
                    );
                }
            }
        }
    }
}
