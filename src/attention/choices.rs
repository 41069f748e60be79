//! The block's two choices, where the LayerNorms sit and which non-linearity the feed-forward
//! network uses: plain enums with the keys scenarios, links and the CLI use, so the stage order
//! can depend on them without depending on the block's maths.

use std::fmt;
use std::str::FromStr;

/// `√(2/π)`, the constant of GELU's tanh form.
const GELU_SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;

/// Where the LayerNorms sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Norm {
    /// After each residual sum: the original Transformer.
    #[default]
    Post,
    /// Before attention and before the feed-forward network, on their inputs: GPT-2 and most
    /// models since.
    Pre,
}

/// Which normalisation the block's norms are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NormType {
    /// LayerNorm: `(x − mean(x)) / √(var(x) + ε) ⊙ γ + β`, the original Transformer's.
    #[default]
    LayerNorm,
    /// RMSNorm: `x / √(mean(x²) + ε) ⊙ γ`, no centring and no β (Llama and most models since).
    RmsNorm,
}

impl NormType {
    /// The norm by name: `LayerNorm` or `RMSNorm`.
    pub fn name(self) -> &'static str {
        match self {
            NormType::LayerNorm => "LayerNorm",
            NormType::RmsNorm => "RMSNorm",
        }
    }
}

/// The feed-forward network's non-linearity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Activation {
    /// max(x, 0).
    #[default]
    Relu,
    /// GELU in its tanh form, `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    Gelu,
    /// SwiGLU, a gated unit: `SiLU(N·W_gate) ⊙ (N·W₁ + b₁)`, SiLU(x) = x·σ(x) (Llama).
    Swiglu,
}

/// `ALL`, `key`, `from_key`, `Display` and `FromStr` for an enum whose variants have the keys
/// scenarios, links and the CLI use.
macro_rules! keyed {
    ($ty:ident, $what:literal, [$($variant:ident => $key:literal),+ $(,)?]) => {
        impl $ty {
            /// Every choice, in menu order.
            pub const ALL: &'static [$ty] = &[$(Self::$variant),+];

            /// The name used in scenarios, URLs and the CLI.
            pub fn key(self) -> &'static str {
                match self {
                    $(Self::$variant => $key),+
                }
            }

            /// The choice called `key`, if there is one.
            pub fn from_key(key: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.key() == key)
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.key())
            }
        }

        impl FromStr for $ty {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::from_key(s).ok_or_else(|| {
                    let keys: Vec<&str> = Self::ALL.iter().map(|v| v.key()).collect();
                    let keys = match keys.as_slice() {
                        [rest @ .., last] if !rest.is_empty() => {
                            format!("{} or {last}", rest.join(", "))
                        }
                        _ => keys.join(", "),
                    };
                    format!("unknown {} “{s}”: use {keys}", $what)
                })
            }
        }
    };
}
pub(crate) use keyed;

keyed!(Norm, "norm", [Post => "post", Pre => "pre"]);
keyed!(Activation, "activation", [Relu => "relu", Gelu => "gelu", Swiglu => "swiglu"]);
keyed!(NormType, "norm type", [LayerNorm => "layernorm", RmsNorm => "rmsnorm"]);

impl Activation {
    /// The activation of one number; for SwiGLU, the gate's SiLU(x) = x / (1 + e^(−x)).
    pub fn apply(self, x: f64) -> f64 {
        match self {
            Self::Relu => x.max(0.0),
            Self::Swiglu => x / (1.0 + (-x).exp()),
            Self::Gelu => {
                let inner = GELU_SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x);
                0.5 * x * (1.0 + inner.tanh())
            }
        }
    }

    /// Whether the network has a gate: a second matrix W_gate beside W₁.
    pub fn gated(self) -> bool {
        self == Self::Swiglu
    }
}
