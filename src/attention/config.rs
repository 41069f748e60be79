use super::choices::{Activation, Norm, NormType};
use super::error::AttentionError;
use super::rope::Rope;
use super::stage::Order;
use std::fmt;
use std::ops::{Range, RangeInclusive};
use std::str::FromStr;

/// Supported model widths.
pub const D_MODEL_RANGE: RangeInclusive<usize> = 2..=16;
/// Supported head counts.
pub const N_HEADS_RANGE: RangeInclusive<usize> = 1..=8;
/// Supported softmax temperatures.
pub const TEMPERATURE_RANGE: RangeInclusive<f64> = 0.01..=100.0;

/// The largest inputs validation accepts. The app and the CLI use [`Limits::APP`]; benchmarks
/// lift them with [`Limits::NONE`] to show how the cost grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most tokens in a sentence.
    pub max_tokens: usize,
    /// Widest d_model.
    pub max_d_model: usize,
    /// Most heads.
    pub max_heads: usize,
}

impl Limits {
    /// What a learner can set: 32 tokens, d_model up to 16, 8 heads.
    pub const APP: Limits = Limits {
        max_tokens: super::tokens::MAX_TOKENS,
        max_d_model: *D_MODEL_RANGE.end(),
        max_heads: *N_HEADS_RANGE.end(),
    };

    /// No size limit: only shapes, divisibility, temperature and finiteness are checked.
    pub const NONE: Limits = Limits {
        max_tokens: usize::MAX,
        max_d_model: usize::MAX,
        max_heads: usize::MAX,
    };
}

/// What the scores are divided by before the softmax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScaleMode {
    /// Divide by √d_k, the head width: the formula of "Attention Is All You Need".
    #[default]
    SqrtHeadDim,
    /// Divide by √seq_len: a common tutorial mistake, kept to show why it is wrong.
    SqrtSeqLen,
    /// Do not scale at all.
    None,
}

impl ScaleMode {
    /// Every mode, in menu order.
    pub const ALL: [ScaleMode; 3] = [Self::SqrtHeadDim, Self::SqrtSeqLen, Self::None];

    /// The name used in scenarios, URLs and the CLI.
    pub fn key(self) -> &'static str {
        match self {
            Self::SqrtHeadDim => "sqrt_head_dim",
            Self::SqrtSeqLen => "sqrt_seq_len",
            Self::None => "none",
        }
    }

    /// The number the scores are divided by.
    pub fn divisor(self, head_dim: usize, seq_len: usize) -> f64 {
        match self {
            Self::SqrtHeadDim => (head_dim as f64).sqrt(),
            Self::SqrtSeqLen => (seq_len as f64).sqrt(),
            Self::None => 1.0,
        }
    }
}

impl fmt::Display for ScaleMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl FromStr for ScaleMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.key() == s)
            .ok_or_else(|| {
                format!("unknown scale mode “{s}”: use sqrt_head_dim, sqrt_seq_len or none")
            })
    }
}

/// The shape and switches of one attention layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Width of every token vector.
    pub d_model: usize,
    /// Number of heads; must divide `d_model`.
    pub n_heads: usize,
    /// Hide later tokens from earlier ones (a language model's mask).
    pub causal: bool,
    /// Add the sinusoidal positional encoding to the embeddings.
    pub positional_encoding: bool,
    /// What the scores are divided by.
    pub scale: ScaleMode,
    /// Softmax temperature: the scaled scores are divided by it before the softmax.
    pub temperature: f64,
    /// Rotary positions on each head's queries and keys; `None` leaves them unturned.
    pub rope: Option<Rope>,
    /// Key/value heads, shared by contiguous groups of query heads (grouped-query attention;
    /// 1 is multi-query attention); `None` gives every query head its own, as `n_heads` does.
    pub kv_heads: Option<usize>,
    /// The sliding window under the causal mask: a token sees itself and the `W − 1` tokens
    /// before it; `None` lets it see every earlier token.
    pub window: Option<usize>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            d_model: 4,
            n_heads: 2,
            causal: false,
            positional_encoding: false,
            scale: ScaleMode::SqrtHeadDim,
            temperature: 1.0,
            rope: None,
            kv_heads: None,
            window: None,
        }
    }
}

impl Config {
    /// Checks every field, so the rest of the core can rely on them.
    pub fn validate(&self) -> Result<(), AttentionError> {
        self.validate_within(&Limits::APP)
    }

    /// Checks every field against `limits`.
    pub fn validate_within(&self, limits: &Limits) -> Result<(), AttentionError> {
        let d_min = *D_MODEL_RANGE.start();
        if !(d_min..=limits.max_d_model).contains(&self.d_model) {
            return Err(AttentionError::DModelOutOfRange {
                d_model: self.d_model,
                min: d_min,
                max: limits.max_d_model,
            });
        }
        let h_min = *N_HEADS_RANGE.start();
        if !(h_min..=limits.max_heads).contains(&self.n_heads) {
            return Err(AttentionError::HeadsOutOfRange {
                n_heads: self.n_heads,
                min: h_min,
                max: limits.max_heads,
            });
        }
        if !self.d_model.is_multiple_of(self.n_heads) {
            return Err(AttentionError::HeadsDoNotDivide {
                d_model: self.d_model,
                n_heads: self.n_heads,
            });
        }
        if !self.temperature.is_finite() || !TEMPERATURE_RANGE.contains(&self.temperature) {
            return Err(AttentionError::BadTemperature {
                value: self.temperature,
            });
        }
        if let Some(n_kv_heads) = self.kv_heads {
            if n_kv_heads == 0 || !self.n_heads.is_multiple_of(n_kv_heads) {
                return Err(AttentionError::KvHeadsDoNotDivide {
                    n_kv_heads,
                    n_heads: self.n_heads,
                });
            }
        }
        match self.window {
            Some(0) => return Err(AttentionError::WindowZero),
            Some(_) if !self.causal => return Err(AttentionError::WindowNeedsCausal),
            _ => {}
        }
        if let Some(rope) = &self.rope {
            rope.check(self.head_dim())?;
        }
        Ok(())
    }

    /// Number of key/value heads: `kv_heads`, or one per query head.
    pub fn n_kv_heads(&self) -> usize {
        self.kv_heads.unwrap_or(self.n_heads).max(1)
    }

    /// The key/value head query head `h` reads: heads are shared by contiguous groups of
    /// `n_heads / n_kv_heads` query heads, as Hugging Face's `repeat_kv` lays them out.
    pub fn kv_head(&self, h: usize) -> usize {
        kv_head_of(h, self.n_heads, self.n_kv_heads())
    }

    /// The query heads that read key/value head `g`.
    pub fn query_heads(&self, g: usize) -> Range<usize> {
        let group = group_size(self.n_heads, self.n_kv_heads());
        g * group..(g + 1) * group
    }

    /// Columns of K and V, and of W_k and W_v: `n_kv_heads · d_k`.
    pub fn kv_width(&self) -> usize {
        self.n_kv_heads() * self.head_dim()
    }

    /// Whether key/value heads are shared between query heads.
    pub fn grouped(&self) -> bool {
        self.n_kv_heads() != self.n_heads
    }

    /// The mask this configuration applies.
    pub fn mask(&self) -> Mask {
        Mask {
            causal: self.causal,
            window: self.window.filter(|_| self.causal),
        }
    }

    /// Width of one head, `d_k = d_model / n_heads`.
    pub fn head_dim(&self) -> usize {
        self.d_model / self.n_heads.max(1)
    }

    /// The head counts that divide `d_model`, within range: the only valid choices.
    pub fn valid_head_counts(d_model: usize) -> Vec<usize> {
        N_HEADS_RANGE
            .filter(|h| d_model.is_multiple_of(*h))
            .collect()
    }
}

/// How many query heads share each of `n_kv_heads` key/value heads.
fn group_size(n_heads: usize, n_kv_heads: usize) -> usize {
    (n_heads / n_kv_heads.max(1)).max(1)
}

/// The key/value head query head `h` reads, of `n_kv_heads` shared by `n_heads` query heads in
/// contiguous groups: [`Config::kv_head`] for a layout that keeps only the counts.
pub fn kv_head_of(h: usize, n_heads: usize, n_kv_heads: usize) -> usize {
    h / group_size(n_heads, n_kv_heads)
}

/// Which keys a query cannot see: none, the later ones (the causal mask), and under a sliding
/// window of `W` also those `W` or more tokens back, so query `i` sees key `j` when
/// `i − W < j ≤ i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mask {
    /// Hide later tokens.
    pub causal: bool,
    /// With `causal`, also hide keys this many or more tokens back.
    pub window: Option<usize>,
}

impl Mask {
    /// No mask: every key visible.
    pub const NONE: Mask = Mask {
        causal: false,
        window: None,
    };

    /// The causal mask alone.
    pub const CAUSAL: Mask = Mask {
        causal: true,
        window: None,
    };

    /// Whether query `i` cannot see key `j`.
    pub fn hides(self, i: usize, j: usize) -> bool {
        self.causal && (j > i || self.window.is_some_and(|w| j + w <= i))
    }

    /// Whether query `i` cannot see key `j` because of the window alone (the key is earlier
    /// than the window reaches).
    pub fn window_hides(self, i: usize, j: usize) -> bool {
        self.causal && j <= i && self.hides(i, j)
    }

    /// The keys query `i` sees, of `n_keys`.
    pub fn visible(self, i: usize, n_keys: usize) -> Range<usize> {
        if !self.causal {
            return 0..n_keys;
        }
        let end = (i + 1).min(n_keys);
        let start = self
            .window
            .map_or(0, |w| (i + 1).saturating_sub(w))
            .min(end);
        start..end
    }

    /// Whether anything is hidden.
    pub fn is_on(self) -> bool {
        self.causal
    }
}

/// What surrounds attention: whether keys and values come from a source sentence, and the
/// transformer block. It decides which stages exist and what their formulas read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Wiring {
    /// Keys and values come from a source sentence (cross-attention).
    pub cross: bool,
    /// The block around attention, by where its norms sit; `None` without a block.
    pub block: Option<Norm>,
    /// The block's non-linearity (unused without a block).
    pub activation: Activation,
    /// Rotary positions turn Qₕ and Kₕ after the split.
    pub rope: bool,
    /// The block's norms: LayerNorm or RMSNorm (unused without a block).
    pub norm_type: NormType,
}

impl Wiring {
    /// What decides the stages shown: the block's norm placement and rotary positions.
    pub fn order(&self) -> Order {
        Order {
            block: self.block,
            rope: self.rope,
            rms: self.norm_type == NormType::RmsNorm,
            gated: self.block.is_some() && self.activation == Activation::Swiglu,
            ..Order::default()
        }
    }

    /// The block's norm by name: `LayerNorm` or `RMSNorm`.
    pub fn norm_word(&self) -> &'static str {
        self.norm_type.name()
    }

    /// The queries' input symbol: `N₁` in a pre-norm block, else `X`.
    pub fn query_input(&self) -> &'static str {
        if self.block == Some(Norm::Pre) {
            "N₁"
        } else {
            "X"
        }
    }

    /// The keys' and values' input symbol: `X_src` with a source, else the queries' input.
    pub fn key_input(&self) -> &'static str {
        if self.cross {
            "X_src"
        } else {
            self.query_input()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_that_do_not_divide_d_model_are_an_error_not_a_panic() {
        let config = Config {
            d_model: 6,
            n_heads: 4,
            ..Config::default()
        };
        let err = config.validate().unwrap_err();
        assert_eq!(
            err,
            AttentionError::HeadsDoNotDivide {
                d_model: 6,
                n_heads: 4
            }
        );
        assert!(err.to_string().contains("must divide d_model"));
    }

    #[test]
    fn lifted_limits_accept_large_models_but_keep_the_other_checks() {
        let wide = Config {
            d_model: 64,
            n_heads: 8,
            ..Config::default()
        };
        assert!(wide.validate().is_err());
        assert!(wide.validate_within(&Limits::NONE).is_ok());
        let bad = Config { n_heads: 7, ..wide };
        assert!(bad.validate_within(&Limits::NONE).is_err());
    }

    #[test]
    fn valid_head_counts_divide_d_model() {
        assert_eq!(Config::valid_head_counts(12), vec![1, 2, 3, 4, 6]);
        assert_eq!(Config::valid_head_counts(7), vec![1, 7]);
    }

    #[test]
    fn scale_modes_round_trip_through_their_keys() {
        for mode in ScaleMode::ALL {
            assert_eq!(mode.key().parse::<ScaleMode>().unwrap(), mode);
        }
        assert!("sqrt".parse::<ScaleMode>().is_err());
    }

    #[test]
    fn the_default_divisor_is_the_head_width_not_the_sentence_length() {
        assert_eq!(ScaleMode::SqrtHeadDim.divisor(4, 9), 2.0);
        assert_eq!(ScaleMode::SqrtSeqLen.divisor(4, 9), 3.0);
        assert_eq!(ScaleMode::None.divisor(4, 9), 1.0);
    }

    #[test]
    fn temperature_must_be_positive_and_finite() {
        for t in [0.0, -1.0, f64::NAN, f64::INFINITY, 1000.0] {
            let config = Config {
                temperature: t,
                ..Config::default()
            };
            assert!(config.validate().is_err(), "temperature {t} accepted");
        }
    }
}
