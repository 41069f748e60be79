//! The input options every command shares (`trace`, `worksheet`, `grad`, `train`): where the
//! scenario comes from and how the options change it, with their value parsers.

use super::{Format, Source, TraceOptions};
use crate::attention::{
    Pairing, ScaleMode, D_FF_RANGE, D_MODEL_RANGE, N_HEADS_RANGE, TEMPERATURE_RANGE,
};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Args;
use std::ops::RangeInclusive;

/// What the scenario is and how the options change it, shared by `trace`, `worksheet`, `grad`
/// and `train`.
#[derive(Debug, Args)]
pub(super) struct InputArgs {
    /// Read a scenario JSON file; `-` reads standard input.
    #[arg(long, value_name = "FILE")]
    scenario: Option<String>,
    /// Use this sentence instead of the scenario's.
    #[arg(long, value_name = "TEXT")]
    sentence: Option<String>,
    #[arg(
        long,
        value_name = "N",
        help = format!(
            "Width of every token vector, {} to {}",
            D_MODEL_RANGE.start(),
            D_MODEL_RANGE.end()
        ),
        value_parser = whole_number(D_MODEL_RANGE),
        allow_negative_numbers = true
    )]
    d_model: Option<usize>,
    #[arg(
        long,
        value_name = "N",
        help = format!(
            "Number of heads, {} to {}; must divide d_model",
            N_HEADS_RANGE.start(),
            N_HEADS_RANGE.end()
        ),
        value_parser = whole_number(N_HEADS_RANGE),
        allow_negative_numbers = true
    )]
    heads: Option<usize>,
    /// Hide later tokens from earlier ones.
    #[arg(long, overrides_with = "no_causal")]
    causal: bool,
    /// Let every token see every other (undoes --causal).
    #[arg(long, overrides_with = "causal")]
    no_causal: bool,
    /// Add the sinusoidal positional encoding.
    #[arg(long, overrides_with = "no_positional")]
    positional: bool,
    /// Leave the positional encoding out (undoes --positional).
    #[arg(long, overrides_with = "positional")]
    no_positional: bool,
    /// What the scores are divided by before the softmax.
    #[arg(long, value_name = "MODE", value_parser = scale_parser())]
    scale: Option<ScaleMode>,
    #[arg(
        long,
        value_name = "T",
        help = format!(
            "Softmax temperature, {} to {}",
            TEMPERATURE_RANGE.start(),
            TEMPERATURE_RANGE.end()
        ),
        value_parser = number(TEMPERATURE_RANGE),
        allow_negative_numbers = true
    )]
    temperature: Option<f64>,
    /// Cross-attention: queries from the sentence, keys and values from this source sentence.
    #[arg(long, value_name = "TEXT")]
    source: Option<String>,
    /// Run the whole transformer block around attention (add & norm, feed-forward, add & norm).
    #[arg(long)]
    block: bool,
    /// Where the block's LayerNorms sit: post (the original Transformer) or pre (GPT-2); implies
    /// --block.
    #[arg(long, value_name = "NORM", value_parser = ["post", "pre"])]
    norm: Option<String>,
    #[arg(
        long = "d-ff",
        value_name = "N",
        help = format!(
            "Width of the feed-forward hidden layer, {} to {}; implies --block",
            D_FF_RANGE.start(),
            D_FF_RANGE.end()
        ),
        value_parser = whole_number(D_FF_RANGE),
        allow_negative_numbers = true
    )]
    d_ff: Option<usize>,
    /// The feed-forward activation: relu, gelu or swiglu (gated by W_gate, as in Llama); implies
    /// --block.
    #[arg(long, value_name = "NAME", value_parser = ["relu", "gelu", "swiglu"])]
    activation: Option<String>,
    /// The block's norms: layernorm (subtract the mean, divide by the standard deviation, scale
    /// by γ, shift by β) or rmsnorm (divide by the root mean square, scale by γ; Llama); implies
    /// --block.
    #[arg(long = "norm-type", value_name = "TYPE", value_parser = ["layernorm", "rmsnorm"])]
    norm_type: Option<String>,
    /// Rotary positions (RoPE): turn each head's queries and keys by their positions.
    #[arg(long, overrides_with = "no_rope")]
    rope: bool,
    /// Leave the queries and keys unturned (undoes --rope).
    #[arg(long, overrides_with = "rope")]
    no_rope: bool,
    /// The base θ of the rotary angles, greater than 1 (default 10000); implies --rope.
    #[arg(
        long = "rope-theta",
        value_name = "X",
        value_parser = number(1.0..=f64::MAX),
        allow_negative_numbers = true
    )]
    rope_theta: Option<f64>,
    /// Which columns turn together: half (i with i + d_k/2, Hugging Face) or interleaved (2i
    /// with 2i + 1, Meta's Llama); implies --rope.
    #[arg(long = "rope-pairing", value_name = "PAIRING", value_parser = ["half", "interleaved"])]
    rope_pairing: Option<String>,
    /// Key/value heads shared by groups of query heads: a divisor of the number of heads (1 is
    /// multi-query attention; the number of heads, the default, is standard attention).
    #[arg(
        long = "kv-heads",
        value_name = "N",
        value_parser = whole_number(N_HEADS_RANGE),
        allow_negative_numbers = true
    )]
    kv_heads: Option<usize>,
    /// A sliding window under the causal mask: each token sees itself and the W − 1 tokens
    /// before it (W ≥ 1; needs --causal).
    #[arg(
        long,
        value_name = "W",
        value_parser = whole_number(1..=crate::attention::MAX_TOKENS),
        allow_negative_numbers = true
    )]
    window: Option<usize>,
}

/// `--prefill` and `--tile`, which `trace`, `grad` and `train` accept.
#[derive(Debug, Args)]
pub(super) struct ComputeArgs {
    /// Decode from a KV cache: the first P tokens at once, then each next token alone (needs
    /// --causal; not with --source). The JSON trace gains `decode`; grad and train check it
    /// and are otherwise unchanged.
    #[arg(long, value_name = "P", value_parser = whole_number(1..=crate::attention::MAX_TOKENS))]
    prefill: Option<usize>,
    /// FlashAttention's tiled softmax: each head's query rows over blocks of B keys (B ≥ 1);
    /// the JSON trace's heads gain `tiles`, the running m, l and o after each block.
    #[arg(long, value_name = "B", value_parser = block_size)]
    tile: Option<usize>,
}

impl ComputeArgs {
    /// The options `input` means, with `--prefill` and `--tile` as given.
    pub(super) fn options(self, input: InputArgs) -> TraceOptions {
        TraceOptions {
            prefill: self.prefill,
            tile: self.tile,
            ..input.into()
        }
    }
}

/// Parses `--tile`'s block size: a whole number of keys, at least 1.
fn block_size(value: &str) -> Result<usize, String> {
    value
        .trim()
        .parse()
        .ok()
        .filter(|b| *b >= 1)
        .ok_or_else(|| "a whole number of keys, 1 or more".to_string())
}

/// Parses a whole number. The range only words the message: a number outside it is refused by
/// the model's own check, whose message names the option and the limit.
pub(super) fn whole_number(
    range: RangeInclusive<usize>,
) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |value| {
        value
            .trim()
            .parse()
            .map_err(|_| format!("a whole number from {} to {}", range.start(), range.end()))
    }
}

/// Parses a number; as for [`whole_number`], the model checks the range.
fn number(
    range: RangeInclusive<f64>,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |value| {
        value.trim().parse().map_err(|_| {
            format!(
                "a number from {} to {}, like 0.5",
                range.start(),
                range.end()
            )
        })
    }
}

/// The scale modes by key, each with its menu label as help.
fn scale_parser() -> impl TypedValueParser<Value = ScaleMode> {
    PossibleValuesParser::new(ScaleMode::ALL.map(|mode| {
        let help = if mode == ScaleMode::default() {
            format!("{}, the default", crate::words::scale_mode_help(mode))
        } else {
            crate::words::scale_mode_help(mode).to_string()
        };
        PossibleValue::new(mode.key()).help(help)
    }))
    .try_map(|key| key.parse::<ScaleMode>())
}

impl From<InputArgs> for TraceOptions {
    fn from(args: InputArgs) -> Self {
        // Of a switch and its `--no-` form, clap keeps only the one given last.
        let switch = |on: bool, off: bool| (on || off).then_some(on);
        Self {
            scenario: match args.scenario {
                None => Source::Default,
                Some(path) if path == "-" => Source::Stdin,
                Some(path) => Source::File(path),
            },
            sentence: args.sentence,
            d_model: args.d_model,
            n_heads: args.heads,
            causal: switch(args.causal, args.no_causal),
            positional: switch(args.positional, args.no_positional),
            scale: args.scale,
            temperature: args.temperature,
            source: args.source,
            block: args.block,
            norm: args.norm.and_then(|n| n.parse().ok()),
            d_ff: args.d_ff,
            activation: args.activation.and_then(|a| a.parse().ok()),
            norm_type: args.norm_type.and_then(|n| n.parse().ok()),
            rope: switch(args.rope, args.no_rope),
            rope_theta: args.rope_theta,
            rope_pairing: args.rope_pairing.and_then(|p| Pairing::from_key(&p)),
            kv_heads: args.kv_heads,
            window: args.window,
            format: Format::default(),
            prefill: None,
            tile: None,
        }
    }
}
