//! Deliberate variations of the maths, to show why attention is built the way it is.
//!
//! [`compare`] runs the same inputs twice: once with the textbook formula and once with one
//! deliberate mistake ([`WhatIf`]). Both sides are computed here, by the core, with the same
//! stage functions as [`forward`](fn@super::forward); no view fakes a number.
//!
//! The correct side is always `softmax(QKᵀ/√d_k)V` at temperature 1, with the causal mask and
//! positional encoding as the inputs set them (the mask is forced on for
//! [`WhatIf::NoCausalMask`]). The altered side differs from it in exactly one way, so every
//! difference between the two is caused by that change. [`AlteredHead`] carries the flags that
//! point at the consequence: leaked cells, row and column sums, non-finite cells, saturation.
//!
//! Three demonstrations stand alone: [`saturation_by_head_dim`] (why the divisor is √d_k),
//! [`gradient_by_head_dim`] (why it matters for learning: the gradient through a saturated
//! softmax vanishes) and [`temperature_sweep`] (one row of weights at many temperatures).

mod comparison;
mod learning;
mod measures;
mod sweeps;

pub use comparison::{
    compare, compare_unstable, f16_exp_overflow, f32_exp_overflow, is_standard, naive_softmax_rows,
    softmax_columns, standard, standard_inputs, AlteredHead, AlteredTrace, Comparison,
};
pub use learning::{
    gradient_by_head_dim, GradientPoint, GRADIENT_HEAD_DIMS, GRADIENT_TASK, GRADIENT_TOKENS,
    GRADIENT_TRIALS,
};
pub use measures::{column_sums, row_sums, Saturation};
pub use sweeps::{
    saturation_by_head_dim, temperature_sweep, temperature_sweep_row, SaturationPoint,
    TemperaturePoint, SATURATION_HEAD_DIMS, SATURATION_KEYS, SATURATION_TRIALS, SWEEP_TEMPERATURES,
};

use super::Stage;
use std::ops::RangeInclusive;

/// The temperatures the what-if lab offers, from sharp to flat.
pub const LAB_TEMPERATURE_RANGE: RangeInclusive<f64> = 0.1..=10.0;

/// What the scores are multiplied by for [`WhatIf::UnstableSoftmax`] in [`compare`]: large enough
/// that `exp` overflows in f32 for any scaled score above about 0.89, small enough that the rows
/// whose scores stay well below that come out right, so both outcomes show.
pub const HUGE_SCORES: f64 = 100.0;

/// One deliberate mistake.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WhatIf {
    /// Divide the scores by √seq_len instead of √d_k.
    ScaleBySeqLen,
    /// Do not divide the scores at all.
    NoScaling,
    /// Divide the scores by d_k, with no square root.
    ScaleByHeadDim,
    /// Normalise each column (key) instead of each row (query).
    SoftmaxOverColumns,
    /// Let every token see the tokens after it.
    NoCausalMask,
    /// Divide the scaled scores by this temperature instead of 1.
    Temperature(f64),
    /// Compute `exp(z) / Σ exp(z)` without subtracting the row maximum, on huge scores.
    UnstableSoftmax,
    /// A softmax whose denominator repeats the numerator's term, `exp(z_ij) / Σ_j′ exp(z_ij)`,
    /// instead of summing over every key.
    RepeatedDenominator,
    /// End the layer with the concatenated heads, leaving out the output projection W_o.
    NoOutputProjection,
}

impl WhatIf {
    /// The temperature a menu starts with: clearly sharper than 1.
    pub const DEFAULT_TEMPERATURE: f64 = 0.25;

    /// Every mistake, in menu order; the temperature is [`WhatIf::DEFAULT_TEMPERATURE`].
    pub const ALL: [WhatIf; 9] = [
        Self::ScaleBySeqLen,
        Self::NoScaling,
        Self::ScaleByHeadDim,
        Self::SoftmaxOverColumns,
        Self::RepeatedDenominator,
        Self::NoCausalMask,
        Self::Temperature(Self::DEFAULT_TEMPERATURE),
        Self::UnstableSoftmax,
        Self::NoOutputProjection,
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
            Self::ScaleByHeadDim => "scale_by_head_dim",
            Self::SoftmaxOverColumns => "softmax_over_columns",
            Self::NoCausalMask => "no_causal_mask",
            Self::Temperature(_) => "temperature",
            Self::UnstableSoftmax => "unstable_softmax",
            Self::RepeatedDenominator => "repeated_denominator",
            Self::NoOutputProjection => "no_output_projection",
        }
    }

    /// The mistake whose key is `key`; a temperature gets [`WhatIf::DEFAULT_TEMPERATURE`].
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|w| w.key() == key)
    }

    /// The stage where the mistake is made.
    pub fn stage(self) -> Stage {
        match self {
            Self::ScaleBySeqLen | Self::NoScaling | Self::ScaleByHeadDim => Stage::Scale,
            Self::NoCausalMask => Stage::Mask,
            Self::SoftmaxOverColumns
            | Self::Temperature(_)
            | Self::UnstableSoftmax
            | Self::RepeatedDenominator => Stage::Softmax,
            Self::NoOutputProjection => Stage::OutputProjection,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal to within 1e-12.
    pub(super) fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
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
