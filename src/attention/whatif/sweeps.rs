//! Two demonstrations that stand alone: one row of weights at many temperatures, and how the
//! softmax saturates as the head width grows, with and without the √d_k divisor.

use super::measures::{entropy, max_weight};
use crate::attention::{softmax_rows, Matrix, ScaleMode, SplitMix64, Trace, TEMPERATURE_RANGE};

/// The temperatures of the default sweep, 0.1 to 10.
pub const SWEEP_TEMPERATURES: [f64; 9] = [0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0];

/// Keys per query in [`saturation_by_head_dim`].
pub const SATURATION_KEYS: usize = 16;

/// Random queries averaged per head width in [`saturation_by_head_dim`].
pub const SATURATION_TRIALS: usize = 400;

/// Head widths for the saturation chart.
pub const SATURATION_HEAD_DIMS: [usize; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
/// One row of weights at one temperature.
#[derive(Debug, Clone, PartialEq)]
pub struct TemperaturePoint {
    /// The temperature T.
    pub temperature: f64,
    /// `softmax(row / T)`, one weight per key.
    pub weights: Vec<f64>,
    /// The largest weight.
    pub max_weight: f64,
    /// `−Σ w·ln w` in nats.
    pub entropy: f64,
}

/// Softmax of one row of masked scores at each temperature, with the stable [`softmax_rows`].
///
/// `None` if a temperature is outside the core's [`TEMPERATURE_RANGE`].
pub fn temperature_sweep_row(
    masked_row: &[f64],
    temperatures: &[f64],
) -> Option<Vec<TemperaturePoint>> {
    if temperatures.iter().any(|t| !TEMPERATURE_RANGE.contains(t)) {
        return None;
    }
    let row = Matrix::from_row_slice(1, masked_row.len(), masked_row);
    Some(
        temperatures
            .iter()
            .map(|&temperature| {
                let weights: Vec<f64> = softmax_rows(&row, temperature).0.iter().copied().collect();
                TemperaturePoint {
                    temperature,
                    max_weight: max_weight(&weights),
                    entropy: entropy(&weights),
                    weights,
                }
            })
            .collect(),
    )
}

/// Row `row` of head `head`'s masked scores in `trace`, at each temperature (the trace's own
/// temperature is ignored; its scale divisor and mask are kept).
///
/// `None` if the head or row does not exist or a temperature is outside [`TEMPERATURE_RANGE`].
pub fn temperature_sweep(
    trace: &Trace,
    head: usize,
    row: usize,
    temperatures: &[f64],
) -> Option<Vec<TemperaturePoint>> {
    let masked = &trace.heads.get(head)?.masked;
    if row >= masked.nrows() {
        return None;
    }
    let values: Vec<f64> = masked.row(row).iter().copied().collect();
    temperature_sweep_row(&values, temperatures)
}

/// How saturated the softmax is for one head width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SaturationPoint {
    /// The head width d_k.
    pub head_dim: usize,
    /// What the scores were divided by on the scaled side.
    pub divisor: f64,
    /// Mean largest weight with the scores undivided.
    pub unscaled: f64,
    /// Mean largest weight with the scores divided by `divisor`.
    pub scaled: f64,
}

/// The mean largest softmax weight for random queries and keys of each width in `head_dims`,
/// undivided and divided by `scale`'s divisor (with [`SATURATION_KEYS`] as seq_len).
///
/// For each width d_k: [`SATURATION_TRIALS`] times, one query and [`SATURATION_KEYS`] keys are
/// drawn with d_k independent entries each, uniform in `[−√3, √3)` (mean 0, variance 1), from a
/// [`SplitMix64`] seeded with `seed ^ (d_k · 0x9E3779B97F4A7C15)`. Each score `q·k` then has
/// variance d_k. The largest weight of `softmax(scores)` and of `softmax(scores / divisor)` are
/// averaged over the trials. Undivided, the mean climbs towards 1 as d_k grows (the softmax
/// saturates: about 0.17 at d_k = 1, 0.89 at d_k = 128). Divided by √d_k it stays level near
/// 1/4, the value for 16 keys with unit-variance scores (a little lower at d_k = 1 and 2, where
/// the length of a single query varies most). A width of 0 is skipped.
pub fn saturation_by_head_dim(
    head_dims: &[usize],
    seed: u64,
    scale: ScaleMode,
) -> Vec<SaturationPoint> {
    head_dims
        .iter()
        .filter(|&&d| d > 0)
        .map(|&head_dim| {
            let divisor = scale.divisor(head_dim, SATURATION_KEYS);
            let mut rng =
                SplitMix64::new(seed ^ (head_dim as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let (mut unscaled, mut scaled) = (0.0, 0.0);
            for _ in 0..SATURATION_TRIALS {
                let q: Vec<f64> = (0..head_dim).map(|_| unit_variance(&mut rng)).collect();
                let scores: Vec<f64> = (0..SATURATION_KEYS)
                    .map(|_| q.iter().map(|qi| qi * unit_variance(&mut rng)).sum())
                    .collect();
                unscaled += max_softmax_weight(&scores, 1.0);
                scaled += max_softmax_weight(&scores, divisor);
            }
            let trials = SATURATION_TRIALS as f64;
            SaturationPoint {
                head_dim,
                divisor,
                unscaled: unscaled / trials,
                scaled: scaled / trials,
            }
        })
        .collect()
}

/// A draw uniform in `[−√3, √3)`: mean 0, variance 1.
pub(super) fn unit_variance(rng: &mut SplitMix64) -> f64 {
    // The top 53 bits make an exact f64 in [0, 1).
    let unit = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    3f64.sqrt() * (2.0 * unit - 1.0)
}

/// The largest weight of `softmax(scores / divisor)`: `1 / Σ exp((s − max) / divisor)`.
fn max_softmax_weight(scores: &[f64], divisor: f64) -> f64 {
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    1.0 / scores
        .iter()
        .map(|s| ((s - max) / divisor).exp())
        .sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::whatif::tests::close;

    #[test]
    fn a_row_at_temperature_one_half_doubles_its_score_gaps() {
        // Scores [ln 2, 0]: at T = 1 the weights are 2/3, 1/3; at T = 1/2 the gap doubles to
        // ln 4, so 4/5, 1/5; at T = 2 it halves to ln √2, so √2/(√2 + 1) = 2 − √2.
        let sweep = temperature_sweep_row(&[2f64.ln(), 0.0], &[1.0, 0.5, 2.0]).unwrap();
        assert!(close(sweep[0].weights[0], 2.0 / 3.0));
        assert!(close(sweep[1].weights[0], 0.8) && close(sweep[1].weights[1], 0.2));
        assert!(close(sweep[2].weights[0], 2.0 - 2f64.sqrt()));
        assert!(sweep[1].entropy < sweep[0].entropy && sweep[0].entropy < sweep[2].entropy);
        assert_eq!(sweep[1].max_weight, sweep[1].weights[0]);
    }

    #[test]
    fn a_sweep_refuses_temperatures_the_core_refuses() {
        assert!(temperature_sweep_row(&[0.0, 1.0], &[1.0, 0.0]).is_none());
        assert!(temperature_sweep_row(&[0.0, 1.0], &[f64::NAN]).is_none());
    }

    #[test]
    fn the_largest_softmax_weight_is_one_over_the_sum_of_shifted_exponentials() {
        // Scores [2, 0, 0] undivided: 1 / (1 + 2e⁻²) = e² / (e² + 2) ≈ 0.786986.
        let e2 = 2f64.exp();
        assert!(close(
            max_softmax_weight(&[2.0, 0.0, 0.0], 1.0),
            e2 / (e2 + 2.0)
        ));
        // Divided by 2: [1, 0, 0], so e / (e + 2).
        let e = 1f64.exp();
        assert!(close(
            max_softmax_weight(&[2.0, 0.0, 0.0], 2.0),
            e / (e + 2.0)
        ));
    }
}
