//! Deliberate variations of the maths, to show why attention is built the way it is.
//!
//! [`compare`] runs the same inputs twice: once with the textbook formula and once with one
//! deliberate mistake ([`WhatIf`]). Both sides are computed here, by the core, with the same
//! stage functions as [`forward`]; no view fakes a number.
//!
//! The correct side is always `softmax(QKᵀ/√d_k)V` at temperature 1, with the causal mask and
//! positional encoding as the inputs set them (the mask is forced on for
//! [`WhatIf::NoCausalMask`]). The altered side differs from it in exactly one way, so every
//! difference between the two is caused by that change. [`AlteredHead`] carries the flags that
//! point at the consequence: leaked cells, row and column sums, non-finite cells, saturation.
//!
//! Two demonstrations stand alone: [`saturation_by_head_dim`] (why the divisor is √d_k) and
//! [`temperature_sweep`] (one row of weights at many temperatures).

use super::{
    forward, softmax_rows, AttentionError, Config, HeadTrace, Inputs, Matrix, ScaleMode,
    SplitMix64, Stage, Trace, TEMPERATURE_RANGE,
};
use std::ops::RangeInclusive;

/// The temperatures the what-if lab offers, from sharp to flat.
pub const LAB_TEMPERATURE_RANGE: RangeInclusive<f64> = 0.1..=10.0;

/// What the scores are multiplied by for [`WhatIf::UnstableSoftmax`] in [`compare`]: large enough
/// that `exp` overflows for any scaled score above about 0.71.
pub const HUGE_SCORES: f64 = 1000.0;

/// The temperatures of the default sweep, 0.1 to 10.
pub const SWEEP_TEMPERATURES: [f64; 9] = [0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0];

/// Keys per query in [`saturation_by_head_dim`].
pub const SATURATION_KEYS: usize = 16;

/// Random queries averaged per head width in [`saturation_by_head_dim`].
pub const SATURATION_TRIALS: usize = 400;

/// Head widths for the saturation chart.
pub const SATURATION_HEAD_DIMS: [usize; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

/// One deliberate mistake.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WhatIf {
    /// Divide the scores by √seq_len instead of √d_k.
    ScaleBySeqLen,
    /// Do not divide the scores at all.
    NoScaling,
    /// Normalise each column (key) instead of each row (query).
    SoftmaxOverColumns,
    /// Let every token see the tokens after it.
    NoCausalMask,
    /// Divide the scaled scores by this temperature instead of 1.
    Temperature(f64),
    /// Compute `exp(z) / Σ exp(z)` without subtracting the row maximum, on huge scores.
    UnstableSoftmax,
}

impl WhatIf {
    /// The temperature a menu starts with: clearly sharper than 1.
    pub const DEFAULT_TEMPERATURE: f64 = 0.25;

    /// Every mistake, in menu order; the temperature is [`WhatIf::DEFAULT_TEMPERATURE`].
    pub const ALL: [WhatIf; 6] = [
        Self::ScaleBySeqLen,
        Self::NoScaling,
        Self::SoftmaxOverColumns,
        Self::NoCausalMask,
        Self::Temperature(Self::DEFAULT_TEMPERATURE),
        Self::UnstableSoftmax,
    ];

    /// A temperature mistake, with `t` clamped to [`LAB_TEMPERATURE_RANGE`] (NaN gives the
    /// default).
    pub fn temperature(t: f64) -> Self {
        if t.is_nan() {
            return Self::Temperature(Self::DEFAULT_TEMPERATURE);
        }
        Self::Temperature(t.clamp(*LAB_TEMPERATURE_RANGE.start(), *LAB_TEMPERATURE_RANGE.end()))
    }

    /// The name used in URLs and code.
    pub fn key(self) -> &'static str {
        match self {
            Self::ScaleBySeqLen => "scale_by_seq_len",
            Self::NoScaling => "no_scaling",
            Self::SoftmaxOverColumns => "softmax_over_columns",
            Self::NoCausalMask => "no_causal_mask",
            Self::Temperature(_) => "temperature",
            Self::UnstableSoftmax => "unstable_softmax",
        }
    }

    /// The mistake whose key is `key`; a temperature gets [`WhatIf::DEFAULT_TEMPERATURE`].
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|w| w.key() == key)
    }

    /// The stage where the mistake is made.
    pub fn stage(self) -> Stage {
        match self {
            Self::ScaleBySeqLen | Self::NoScaling => Stage::Scale,
            Self::NoCausalMask => Stage::Mask,
            Self::SoftmaxOverColumns | Self::Temperature(_) | Self::UnstableSoftmax => {
                Stage::Softmax
            }
        }
    }
}

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
fn max_weight(row: &[f64]) -> f64 {
    if row.iter().any(|w| w.is_nan()) {
        return f64::NAN;
    }
    row.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// `−Σ w·ln w` in nats, with `0·ln 0 = 0`.
fn entropy(row: &[f64]) -> f64 {
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

/// Column-wise softmax of `z / temperature`: each column sums to 1, the rows need not.
///
/// Computed as the stable row softmax of `zᵀ`, transposed back. (rows, cols) → (rows, cols)
pub fn softmax_columns(z: &Matrix, temperature: f64) -> Matrix {
    softmax_rows(&z.transpose(), temperature).0.transpose()
}

/// Row-wise softmax straight from the definition, `exp(z/T) / Σ exp(z/T)`, with no maximum
/// subtracted and no special cases: a row with a score above about `709.78·T` overflows to
/// `∞/∞ = NaN`, a row whose scores are all below about `−745·T` underflows to `0/0 = NaN`, and a
/// fully masked row is `0/0 = NaN`. Kept only to show why [`softmax_rows`] is written the way it
/// is. (rows, cols) → (rows, cols)
pub fn naive_softmax_rows(z: &Matrix, temperature: f64) -> Matrix {
    let exps = z.map(|v| (v / temperature).exp());
    let mut out = exps.clone();
    for (i, mut row) in out.row_iter_mut().enumerate() {
        let sum = exps.row(i).sum();
        row /= sum;
    }
    out
}

/// One head of the altered computation, with the flags that show the consequence.
#[derive(Debug, Clone, PartialEq)]
pub struct AlteredHead {
    /// Scores after the (possibly wrong) divisor. (seq_len, seq_len)
    pub scaled: Matrix,
    /// What the softmax read: `scaled` with −∞ where the mask hides a key. (seq_len, seq_len)
    pub masked: Matrix,
    /// The altered attention weights. (seq_len, seq_len)
    pub weights: Matrix,
    /// `weights·V_h`, with the same V_h as the correct side. (seq_len, head_dim)
    pub context: Matrix,
    /// The sum of each row of `weights`; 1 for a proper softmax over rows.
    pub row_sums: Vec<f64>,
    /// The sum of each column of `weights`; 1 for a softmax over columns.
    pub column_sums: Vec<f64>,
    /// `(row, column)` cells the correct side masks (a key after its query) but the altered side
    /// gives a weight above 0: a token seeing its future. Row-major order.
    pub leaked: Vec<(usize, usize)>,
    /// `(row, column)` cells of `weights` that are NaN or infinite. Row-major order.
    pub non_finite: Vec<(usize, usize)>,
    /// How peaked the altered weights are.
    pub saturation: Saturation,
}

impl AlteredHead {
    fn new(
        scaled: Matrix,
        masked: Matrix,
        weights: Matrix,
        context: Matrix,
        correct: &HeadTrace,
    ) -> Self {
        let mut leaked = Vec::new();
        let mut non_finite = Vec::new();
        for i in 0..weights.nrows() {
            for j in 0..weights.ncols() {
                let w = weights[(i, j)];
                if correct.masked[(i, j)] == f64::NEG_INFINITY && w > 0.0 {
                    leaked.push((i, j));
                }
                if !w.is_finite() {
                    non_finite.push((i, j));
                }
            }
        }
        Self {
            row_sums: row_sums(&weights),
            column_sums: column_sums(&weights),
            saturation: Saturation::of(&weights),
            scaled,
            masked,
            weights,
            context,
            leaked,
            non_finite,
        }
    }
}

/// The layer computed with the mistake.
#[derive(Debug, Clone, PartialEq)]
pub struct AlteredTrace {
    /// The configuration of the altered side (for the softmax mistakes, the correct one).
    pub config: Config,
    /// What the scores were divided by.
    pub scale_divisor: f64,
    /// One altered head per head.
    pub heads: Vec<AlteredHead>,
    /// The heads' altered contexts side by side. (seq_len, d_model)
    pub concat: Matrix,
    /// `concat·W_o`. (seq_len, d_model)
    pub output: Matrix,
}

/// The correct and the altered computation of the same inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The mistake made.
    pub what: WhatIf,
    /// What every score was multiplied by on both sides: [`HUGE_SCORES`] (or the chosen factor)
    /// for [`WhatIf::UnstableSoftmax`], 1 otherwise.
    pub score_multiplier: f64,
    /// The textbook computation.
    pub correct: Trace,
    /// The computation with the mistake.
    pub altered: AlteredTrace,
}

impl Comparison {
    /// The stage where the mistake is made.
    pub fn stage(&self) -> Stage {
        self.what.stage()
    }

    /// Head `head`'s correct and altered weights, to show side by side.
    pub fn weights(&self, head: usize) -> Option<(&Matrix, &Matrix)> {
        let correct = self.correct.heads.get(head)?;
        let altered = self.altered.heads.get(head)?;
        Some((&correct.weights, &altered.weights))
    }

    /// Head `head`'s correct and altered matrices at [`Comparison::stage`]: the scaled scores,
    /// the masked scores or the weights.
    pub fn stage_matrices(&self, head: usize) -> Option<(&Matrix, &Matrix)> {
        let correct = self.correct.heads.get(head)?;
        let altered = self.altered.heads.get(head)?;
        Some(match self.stage() {
            Stage::Scale => (&correct.scaled, &altered.scaled),
            Stage::Mask => (&correct.masked, &altered.masked),
            _ => (&correct.weights, &altered.weights),
        })
    }

    /// Head `head`'s correct and altered saturation.
    pub fn saturation(&self, head: usize) -> Option<(Saturation, Saturation)> {
        let correct = self.correct.heads.get(head)?;
        let altered = self.altered.heads.get(head)?;
        Some((Saturation::of(&correct.weights), altered.saturation))
    }

    /// The correct and altered layer outputs. (seq_len, d_model) each
    pub fn outputs(&self) -> (&Matrix, &Matrix) {
        (&self.correct.output, &self.altered.output)
    }

    /// The largest absolute difference between the two outputs; NaN if the altered output holds
    /// a value that is not a finite number.
    pub fn max_output_change(&self) -> f64 {
        let (correct, altered) = self.outputs();
        let mut largest: f64 = 0.0;
        for (c, a) in correct.iter().zip(altered.iter()) {
            if !a.is_finite() {
                return f64::NAN;
            }
            largest = largest.max((a - c).abs());
        }
        largest
    }
}

/// Runs `inputs` with the textbook formula and with the mistake `what`, and compares them.
///
/// For [`WhatIf::UnstableSoftmax`] this is [`compare_unstable`] with [`HUGE_SCORES`].
pub fn compare(inputs: &Inputs, what: WhatIf) -> Result<Comparison, AttentionError> {
    if what == WhatIf::UnstableSoftmax {
        return compare_unstable(inputs, HUGE_SCORES);
    }
    let correct_inputs = textbook(inputs, what);
    let correct = forward(&correct_inputs)?;
    let altered = match what {
        WhatIf::SoftmaxOverColumns => reweigh(&correct, softmax_columns),
        _ => {
            let mut altered_inputs = correct_inputs;
            let config = &mut altered_inputs.config;
            match what {
                WhatIf::ScaleBySeqLen => config.scale = ScaleMode::SqrtSeqLen,
                WhatIf::NoScaling => config.scale = ScaleMode::None,
                WhatIf::NoCausalMask => config.causal = false,
                WhatIf::Temperature(t) => config.temperature = t,
                WhatIf::SoftmaxOverColumns | WhatIf::UnstableSoftmax => {}
            }
            from_trace(forward(&altered_inputs)?, &correct)
        }
    };
    Ok(Comparison {
        what,
        score_multiplier: 1.0,
        correct,
        altered,
    })
}

/// [`WhatIf::UnstableSoftmax`] with the scores multiplied by `huge_scores`.
///
/// Exactly what is computed: the textbook inputs with `W_q` multiplied by `huge_scores`, which
/// multiplies every score `Q_h·K_hᵀ` (and so every scaled and masked score) by the same factor.
/// The correct side is [`forward`] on those inputs, with the stable softmax. The altered side
/// feeds the very same masked scores to [`naive_softmax_rows`], then computes `weights·V_h`,
/// the concatenation and `·W_o` as usual, letting NaN and ∞ through. With `huge_scores = 1` the
/// two sides agree to rounding. An infinite or NaN factor is refused as a non-finite `W_q`.
pub fn compare_unstable(inputs: &Inputs, huge_scores: f64) -> Result<Comparison, AttentionError> {
    let mut big = textbook(inputs, WhatIf::UnstableSoftmax);
    big.weights.w_q *= huge_scores;
    let correct = forward(&big)?;
    let altered = reweigh(&correct, naive_softmax_rows);
    Ok(Comparison {
        what: WhatIf::UnstableSoftmax,
        score_multiplier: huge_scores,
        correct,
        altered,
    })
}

/// `inputs` with the textbook settings: √d_k, temperature 1, and the mask on when the mistake
/// is to switch it off.
fn textbook(inputs: &Inputs, what: WhatIf) -> Inputs {
    let mut textbook = inputs.clone();
    textbook.config.scale = ScaleMode::SqrtHeadDim;
    textbook.config.temperature = 1.0;
    if what == WhatIf::NoCausalMask {
        textbook.config.causal = true;
    }
    textbook
}

/// An altered trace from a whole forward pass with a changed configuration.
fn from_trace(altered: Trace, correct: &Trace) -> AlteredTrace {
    let heads = altered
        .heads
        .into_iter()
        .zip(&correct.heads)
        .map(|(h, c)| AlteredHead::new(h.scaled, h.masked, h.weights, h.context, c))
        .collect();
    AlteredTrace {
        config: altered.config,
        scale_divisor: altered.scale_divisor,
        heads,
        concat: altered.concat,
        output: altered.output,
    }
}

/// An altered trace that reads the correct side's masked scores and applies another softmax,
/// then the usual weighted sum, concatenation and output projection.
fn reweigh(correct: &Trace, softmax: impl Fn(&Matrix, f64) -> Matrix) -> AlteredTrace {
    let temperature = correct.config.temperature;
    let heads: Vec<AlteredHead> = correct
        .heads
        .iter()
        .map(|c| {
            let weights = softmax(&c.masked, temperature);
            // (seq_len, seq_len)·(seq_len, head_dim) → (seq_len, head_dim)
            let context = &weights * &c.v;
            AlteredHead::new(c.scaled.clone(), c.masked.clone(), weights, context, c)
        })
        .collect();
    let concat = concat(&heads, correct.seq_len(), correct.config.d_model);
    // (seq_len, d_model)·(d_model, d_model) → (seq_len, d_model)
    let output = &concat * &correct.weights.w_o;
    AlteredTrace {
        config: correct.config,
        scale_divisor: correct.scale_divisor,
        heads,
        concat,
        output,
    }
}

/// [C_1 | C_2 | …]. n_heads × (seq_len, head_dim) → (seq_len, d_model)
fn concat(heads: &[AlteredHead], seq_len: usize, d_model: usize) -> Matrix {
    super::forward::concat_columns(heads.iter().map(|h| &h.context), seq_len, d_model)
}

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
fn unit_variance(rng: &mut SplitMix64) -> f64 {
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

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn the_naive_softmax_overflows_where_the_stable_one_does_not() {
        let z = Matrix::from_row_slice(3, 2, &[1000.0, 0.0, -1000.0, -1000.0, 3f64.ln(), 0.0]);
        let naive = naive_softmax_rows(&z, 1.0);
        let (stable, _) = softmax_rows(&z, 1.0);
        // Row 1: exp(1000) = ∞, so ∞/∞ = NaN and 1/∞ = 0; stable: exp(0) = 1, exp(−1000) = 0.
        assert!(naive[(0, 0)].is_nan());
        assert_eq!(naive[(0, 1)], 0.0);
        assert_eq!((stable[(0, 0)], stable[(0, 1)]), (1.0, 0.0));
        // Row 2: exp(−1000) = 0 twice, 0/0 = NaN; stable: both shift to exp(0), 1/2 each.
        assert!(naive[(1, 0)].is_nan() && naive[(1, 1)].is_nan());
        assert_eq!((stable[(1, 0)], stable[(1, 1)]), (0.5, 0.5));
        // Row 3: small scores agree: exp(ln 3) = 3, exp(0) = 1, so 3/4 and 1/4.
        assert!(close(naive[(2, 0)], 0.75) && close(naive[(2, 1)], 0.25));
        assert!(close(stable[(2, 0)], 0.75) && close(stable[(2, 1)], 0.25));
    }

    #[test]
    fn softmax_over_columns_makes_columns_sum_to_one_and_not_rows() {
        // Column 1: exp(ln 3) = 3 and exp(0) = 1, so 3/4 and 1/4. Column 2: 1/2 and 1/2.
        let z = Matrix::from_row_slice(2, 2, &[3f64.ln(), 0.0, 0.0, 0.0]);
        let a = softmax_columns(&z, 1.0);
        assert!(close(a[(0, 0)], 0.75) && close(a[(1, 0)], 0.25));
        assert!(close(a[(0, 1)], 0.5) && close(a[(1, 1)], 0.5));
        // Rows: 3/4 + 1/2 = 5/4 and 1/4 + 1/2 = 3/4.
        let rows = row_sums(&a);
        assert!(close(rows[0], 1.25) && close(rows[1], 0.75));
        assert!(column_sums(&a).iter().all(|s| close(*s, 1.0)));
    }

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

    #[test]
    fn keys_round_trip() {
        for what in WhatIf::ALL {
            assert_eq!(WhatIf::from_key(what.key()), Some(what));
        }
        assert_eq!(WhatIf::from_key("typo"), None);
    }

    #[test]
    fn the_temperature_constructor_keeps_to_the_lab_range() {
        assert_eq!(WhatIf::temperature(0.01), WhatIf::Temperature(0.1));
        assert_eq!(WhatIf::temperature(50.0), WhatIf::Temperature(10.0));
        assert_eq!(WhatIf::temperature(2.0), WhatIf::Temperature(2.0));
        assert_eq!(
            WhatIf::temperature(f64::NAN),
            WhatIf::Temperature(WhatIf::DEFAULT_TEMPERATURE)
        );
    }

    #[test]
    fn each_mistake_names_the_stage_it_is_made_in() {
        assert_eq!(WhatIf::ScaleBySeqLen.stage(), Stage::Scale);
        assert_eq!(WhatIf::NoCausalMask.stage(), Stage::Mask);
        assert_eq!(WhatIf::UnstableSoftmax.stage(), Stage::Softmax);
    }
}
