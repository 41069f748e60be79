//! The correct and the altered computation of the same inputs, side by side, and the softmax
//! variants the mistakes use.

use super::measures::{column_sums, row_sums, Saturation};
use super::{WhatIf, HUGE_SCORES};
use crate::attention::{
    forward, softmax_rows, AttentionError, Config, HeadTrace, Inputs, Matrix, ScaleMode, Stage,
    Trace,
};

/// Column-wise softmax of `z / temperature`: each column sums to 1, the rows need not.
///
/// Computed as the stable row softmax of `zᵀ`, transposed back. (rows, cols) → (rows, cols)
pub fn softmax_columns(z: &Matrix, temperature: f64) -> Matrix {
    softmax_rows(&z.transpose(), temperature).0.transpose()
}

/// The largest `z` whose `exp(z)` is finite in 32-bit floats: ln(f32::MAX) ≈ 88.72.
pub fn f32_exp_overflow() -> f64 {
    f64::from(f32::MAX).ln()
}

/// The largest `z` whose `exp(z)` is finite in half precision (fp16) (largest value 65504): ≈ 11.09.
pub fn f16_exp_overflow() -> f64 {
    65504f64.ln()
}

/// Row-wise softmax straight from the definition, `exp(z/T) / Σ exp(z/T)`, with no maximum
/// subtracted and no special cases, computed in 32-bit floats (`f32`) as models compute: a row
/// with a score above about `88.72·T` (see [`f32_exp_overflow`]) overflows to `∞/∞ = NaN`, a
/// row whose scores are all below about `−104·T` underflows to `0/0 = NaN`, and a fully masked
/// row is `0/0 = NaN`; a row whose exps are finite but sum past f32's largest number is all
/// `finite/∞ = 0`; any other row comes out right, to f32 precision. Kept only to show why
/// [`softmax_rows`] is written the way it is. (rows, cols) → (rows, cols)
pub fn naive_softmax_rows(z: &Matrix, temperature: f64) -> Matrix {
    // The narrowing to f32 is the point: it is the precision the mistake is made in.
    let t = temperature as f32;
    let exps = z.map(|v| f64::from((v as f32 / t).exp()));
    let mut out = exps.clone();
    for (i, mut row) in out.row_iter_mut().enumerate() {
        let sum = exps.row(i).iter().map(|&e| e as f32).sum::<f32>();
        row.apply(|e| *e = f64::from(*e as f32 / sum));
    }
    out
}

/// The softmax with the mistake of a denominator that repeats the numerator's term,
/// `exp(z_ij/T) / Σ_j′ exp(z_ij/T) = exp(z_ij/T) / (n·exp(z_ij/T))`, computed as written: every
/// visible weight is `1/n` whatever the scores, with `n` the number of keys, and a masked key
/// gives `exp(−∞) / (n·exp(−∞)) = 0/0 = NaN`. (rows, cols) → (rows, cols)
pub fn repeated_denominator_rows(z: &Matrix, temperature: f64) -> Matrix {
    let n = z.ncols() as f64;
    z.map(|v| {
        let e = (v / temperature).exp();
        e / (n * e)
    })
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
    /// `(row, column)` cells at or before the diagonal that the correct side masks (a key the
    /// sliding window hides) but the altered side gives a weight above 0. Row-major order.
    pub unwindowed: Vec<(usize, usize)>,
    /// `(row, column)` cells of `weights` that are NaN or infinite. Row-major order.
    pub non_finite: Vec<(usize, usize)>,
    /// `(row, column)` cells whose weight depends on the scores of later queries, though the
    /// mask hides nothing more from them: a softmax over columns under the causal mask divides
    /// by a column total that includes later tokens. Row-major order; empty otherwise.
    pub future_dependent: Vec<(usize, usize)>,
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
        let mut unwindowed = Vec::new();
        let mut non_finite = Vec::new();
        for i in 0..weights.nrows() {
            for j in 0..weights.ncols() {
                let w = weights[(i, j)];
                if correct.masked[(i, j)] == f64::NEG_INFINITY && w > 0.0 {
                    if j > i {
                        leaked.push((i, j));
                    } else {
                        unwindowed.push((i, j));
                    }
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
            unwindowed,
            non_finite,
            future_dependent: Vec::new(),
        }
    }
}

/// The visible cells of `masked` whose column has a visible cell in a later row: normalised
/// over columns, their weight depends on a query that comes after their own.
fn depends_on_later_queries(masked: &Matrix) -> Vec<(usize, usize)> {
    let (rows, cols) = masked.shape();
    let visible = |i: usize, j: usize| masked[(i, j)] != f64::NEG_INFINITY;
    (0..rows)
        .flat_map(|i| (0..cols).map(move |j| (i, j)))
        .filter(|&(i, j)| visible(i, j) && (i + 1..rows).any(|later| visible(later, j)))
        .collect()
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
    /// For [`WhatIf::RepeatedDenominator`]: the softmax denominator of head `h`'s cell (`row`,
    /// `col`) as the mistake writes it, `n·exp(z_row,col/T)`, and as it should be,
    /// `Σ_j′ exp(z_row,j′/T)`, both from the correct side's masked scores. `None` past the
    /// matrix.
    pub fn denominators(&self, h: usize, row: usize, col: usize) -> Option<(f64, f64)> {
        let z = &self.correct.heads.get(h)?.masked;
        if row >= z.nrows() || col >= z.ncols() {
            return None;
        }
        let t = self.correct.config.temperature;
        let r = z.row(row);
        let wrong = r.len() as f64 * (r[col] / t).exp();
        let right = r.iter().map(|v| (v / t).exp()).sum();
        Some((wrong, right))
    }

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
        WhatIf::RepeatedDenominator => reweigh(&correct, repeated_denominator_rows),
        WhatIf::NoOutputProjection => {
            let mut altered = reweigh(&correct, |z, t| softmax_rows(z, t).0);
            altered.output = altered.concat.clone();
            altered
        }
        WhatIf::ScaleByHeadDim => {
            // S/d_k is the correct S/√d_k divided once more by √d_k.
            let extra = (correct.config.head_dim() as f64).sqrt();
            let mut altered = reweigh(&correct, |z, t| softmax_rows(&(z / extra), t).0);
            for head in &mut altered.heads {
                head.scaled /= extra;
                head.masked /= extra;
            }
            altered.scale_divisor = correct.scale_divisor * extra;
            altered
        }
        WhatIf::SoftmaxOverColumns => {
            let mut altered = reweigh(&correct, softmax_columns);
            if correct.config.causal {
                for (head, c) in altered.heads.iter_mut().zip(&correct.heads) {
                    head.future_dependent = depends_on_later_queries(&c.masked);
                }
            }
            altered
        }
        _ => {
            let mut altered_inputs = correct_inputs;
            let config = &mut altered_inputs.config;
            match what {
                WhatIf::ScaleBySeqLen => config.scale = ScaleMode::SqrtSeqLen,
                WhatIf::NoScaling => config.scale = ScaleMode::None,
                // The window narrows the causal mask: without the mask it goes too.
                WhatIf::NoCausalMask => {
                    config.causal = false;
                    config.window = None;
                }
                WhatIf::Temperature(t) => config.temperature = t,
                WhatIf::SoftmaxOverColumns
                | WhatIf::UnstableSoftmax
                | WhatIf::RepeatedDenominator
                | WhatIf::ScaleByHeadDim
                | WhatIf::NoOutputProjection => {}
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

/// `inputs` with the settings of standard attention: the scores divided by √d_k and the
/// softmax at temperature 1; the tokens, weights, mask and positions are the learner's.
pub fn standard_inputs(inputs: &Inputs) -> Inputs {
    let mut standard = inputs.clone();
    standard.config.scale = ScaleMode::SqrtHeadDim;
    standard.config.temperature = 1.0;
    standard
}

/// Standard attention on `inputs` (see [`standard_inputs`]): what the lab's reference side
/// shows, whatever the learner's own scale and temperature.
pub fn standard(inputs: &Inputs) -> Result<Trace, AttentionError> {
    forward(&standard_inputs(inputs))
}

/// Whether `config` computes standard attention: √d_k and temperature 1.
pub fn is_standard(config: &Config) -> bool {
    config.scale == ScaleMode::SqrtHeadDim && config.temperature == 1.0
}

/// [`standard_inputs`], with the mask on when the mistake is to switch it off.
fn textbook(inputs: &Inputs, what: WhatIf) -> Inputs {
    let mut textbook = standard_inputs(inputs);
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
    crate::attention::forward::concat_columns(heads.iter().map(|h| &h.context), seq_len, d_model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::whatif::tests::close;

    #[test]
    fn the_naive_softmax_overflows_at_the_f32_limit() {
        assert!((f32_exp_overflow() - 88.72).abs() < 0.01);
        assert!((f16_exp_overflow() - 11.09).abs() < 0.01);
        // 88 is inside f32's range, 89 past it: only the second row turns into NaN.
        let z = Matrix::from_row_slice(2, 2, &[88.0, 0.0, 89.0, 0.0]);
        let naive = naive_softmax_rows(&z, 1.0);
        assert!(close(naive[(0, 0)], 1.0) && naive[(0, 1)] < 1e-30);
        assert!(naive[(1, 0)].is_nan());
        // Below about −104 every exp rounds to 0 in f32, though not in f64.
        let z = Matrix::from_row_slice(1, 2, &[-110.0, -110.0]);
        assert!(naive_softmax_rows(&z, 1.0)[(0, 0)].is_nan());
        assert!((-110f64).exp() > 0.0);
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
        assert!((naive[(2, 0)] - 0.75).abs() < 1e-6 && (naive[(2, 1)] - 0.25).abs() < 1e-6);
        assert!(close(stable[(2, 0)], 0.75) && close(stable[(2, 1)], 0.25));
    }

    #[test]
    fn under_the_mask_a_column_softmax_makes_earlier_weights_depend_on_later_queries() {
        let n = f64::NEG_INFINITY;
        // Three tokens under the causal mask.
        let masked = Matrix::from_row_slice(3, 3, &[0.0, n, n, 0.0, 0.0, n, 0.0, 0.0, 0.0]);
        // Row 3 has no later query; (1, 1) is the last visible cell of column 2 but one.
        assert_eq!(
            depends_on_later_queries(&masked),
            vec![(0, 0), (1, 0), (1, 1)]
        );
        // Without the mask every row but the last depends on a later one.
        assert_eq!(
            depends_on_later_queries(&Matrix::zeros(2, 2)),
            vec![(0, 0), (0, 1)]
        );
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
}
