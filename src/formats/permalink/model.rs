//! Reading the learner's model from a share link: the sentence, the settings, the weight
//! matrices and the edited embeddings, each falling back to its default with a notice.

use super::fields::{and_list, quote, shown, Fields, Notices};
use super::numbers::{parse_number, parse_numbers, NumberError};
use super::percent::percent_decode;
use super::{block_key, SOURCE_OVERRIDES_KEY};
use super::{weight_key, MAX_OVERRIDES};
use crate::attention::{
    tokenize, Activation, AttentionError, Block, BlockParam, Config, Init, Matrix, Norm, NormType,
    Pairing, Rope, ScaleMode, WeightName, Weights, D_FF_RANGE, D_MODEL_RANGE, TEMPERATURE_RANGE,
};
use crate::state::{Model, Overrides};

/// Reads rotary positions (`rope`: θ, then `,i` for the interleaved pairing), the key/value
/// heads (`kv`) and the window (`win`); each bad one is left off with a notice.
fn read_modern(
    fields: &Fields<'_>,
    d_model: usize,
    n_heads: usize,
    notices: &mut Notices,
) -> (Option<Rope>, Option<usize>, Option<usize>) {
    let rope = fields.get("rope").and_then(|raw| {
        let (theta, pairing) = match raw.split_once(',') {
            Some((theta, "i")) => (theta, Pairing::Interleaved),
            Some((theta, "h")) | Some((theta, "")) => (theta, Pairing::Half),
            Some(_) => ("", Pairing::Half),
            None => (raw, Pairing::Half),
        };
        let rope = parse_number(theta).map(|theta| Rope { theta, pairing });
        match rope.map(|r| r.check(d_model / n_heads.max(1)).map(|_| r)) {
            Some(Ok(rope)) => Some(rope),
            Some(Err(error)) => {
                notices.add(format!(
                    "The link asks for rotary positions, but {error} They are off."
                ));
                None
            }
            None => {
                notices.add(format!(
                    "The link's rotary positions {} are not θ, or θ and a pairing (`10000` or \
                     `10000,i`): they are off.",
                    shown(raw)
                ));
                None
            }
        }
    });
    let kv_heads = fields.get("kv").and_then(|raw| match raw.parse::<usize>() {
        Ok(g) if g >= 1 && n_heads.is_multiple_of(g) => (g != n_heads).then_some(g),
        _ => {
            notices.add(format!(
                "The link asks for {} key/value heads, but the number must divide the {n_heads} \
                 heads: each head has its own.",
                shown(raw)
            ));
            None
        }
    });
    let window = fields
        .get("win")
        .and_then(|raw| match raw.parse::<usize>() {
            Ok(w) if w >= 1 => Some(w),
            _ => {
                notices.add(format!(
                "The link's sliding window {} is not a whole number of tokens, 1 or more: there \
                 is no window.",
                shown(raw)
            ));
                None
            }
        });
    (rope, kv_heads, window)
}

pub(super) fn read_model(fields: &Fields<'_>, notices: &mut Notices) -> Model {
    let defaults = Model::default();
    let default_config = defaults.config;

    // d_model first: every matrix's size depends on it.
    let (d_model, width_ok) = match fields.get("d") {
        None => (default_config.d_model, true),
        Some(raw) => match raw.parse::<usize>() {
            Ok(d) if D_MODEL_RANGE.contains(&d) => (d, true),
            _ => {
                notices.add(format!(
                    "The link's d_model is {}, but it must be a whole number from {} to {}: \
                     d_model {} is used, with its default matrices.",
                    shown(raw),
                    D_MODEL_RANGE.start(),
                    D_MODEL_RANGE.end(),
                    default_config.d_model
                ));
                (default_config.d_model, false)
            }
        },
    };

    let valid_heads = Config::valid_head_counts(d_model);
    let nearest = |wanted: usize| {
        valid_heads
            .iter()
            .copied()
            .min_by_key(|h| h.abs_diff(wanted))
            .unwrap_or(1)
    };
    let n_heads = match fields.get("h") {
        None if valid_heads.contains(&default_config.n_heads) => default_config.n_heads,
        None => {
            let n = nearest(default_config.n_heads);
            notices.add(format!(
                "The link does not say how many heads to use, and the default {} does not \
                 divide d_model {d_model}: {} used.",
                default_config.n_heads,
                heads_are(n)
            ));
            n
        }
        Some(raw) => match raw.parse::<usize>() {
            Ok(h) if valid_heads.contains(&h) => h,
            parsed => {
                let n = nearest(parsed.unwrap_or(default_config.n_heads));
                notices.add(format!(
                    "The link asks for {} heads, but the number of heads must be a whole number \
                     from 1 to 8 that divides d_model {d_model}: {} used.",
                    shown(raw),
                    heads_are(n)
                ));
                n
            }
        },
    };

    let causal = read_flag(fields, "causal", "The causal mask", notices);
    let positional_encoding = read_flag(fields, "pe", "Positional encoding", notices);

    let scale = match fields.get("scale") {
        None => default_config.scale,
        Some(raw) => raw.parse::<ScaleMode>().unwrap_or_else(|_| {
            notices.add(format!(
                "The link's scaling {} is not one of sqrt_head_dim, sqrt_seq_len or none: \
                 the scores are divided by √d_k.",
                shown(raw)
            ));
            default_config.scale
        }),
    };

    let temperature = match fields.get("t") {
        None => default_config.temperature,
        Some(raw) => match parse_number(raw) {
            Some(t) if TEMPERATURE_RANGE.contains(&t) => t,
            _ => {
                notices.add(format!(
                    "The link's temperature {} is not a number from {} to {}: temperature {} is used.",
                    shown(raw),
                    *TEMPERATURE_RANGE.start(),
                    *TEMPERATURE_RANGE.end(),
                    default_config.temperature
                ));
                default_config.temperature
            }
        },
    };

    let seed = match fields.get("seed") {
        None => defaults.seed,
        Some(raw) => raw.parse::<u64>().unwrap_or_else(|_| {
            notices.add(format!(
                "The link's seed {} is not a whole number from 0 to {}: seed {} is used.",
                shown(raw),
                u64::MAX,
                defaults.seed
            ));
            defaults.seed
        }),
    };

    let sentence = read_text(fields, "s", "sentence", &defaults.sentence, notices);
    let source_text = fields
        .get("src")
        .map(|_| read_text(fields, "src", "source sentence", &defaults.source, notices));

    let cross = source_text.is_some();
    if cross && causal {
        notices.add(
            "The link asks for the causal mask and a source sentence, but the mask belongs to \
             self-attention: it is off."
                .to_string(),
        );
    }
    let (rope, kv_heads, window) = read_modern(fields, d_model, n_heads, notices);
    let config = Config {
        d_model,
        n_heads,
        causal: causal && !cross,
        positional_encoding,
        scale,
        temperature,
        rope,
        kv_heads,
        window,
    };
    let kv_width = config.kv_width();
    let mut weights = Weights::shaped(Init::Default, d_model, kv_width);
    let mut embedding_overrides = Overrides::new();
    let mut source_overrides = Overrides::new();

    if width_ok {
        for name in WeightName::ALL {
            let Some(raw) = fields.get(weight_key(name)) else {
                continue;
            };
            let label = name.label();
            let (rows, cols) = Weights::shape_of(name, d_model, kv_width);
            let values = percent_decode(raw)
                .ok_or(NumberError::Damaged)
                .and_then(|text| parse_numbers(&text, rows * cols));
            match values {
                Ok(values) => {
                    *weights.get_mut(name) = Matrix::from_row_slice(rows, cols, &values);
                }
                Err(error) => notices.add(format!(
                    "The link's {label} {}: {label} was reset to its default.",
                    if rows == cols {
                        error.describe(rows * cols)
                    } else {
                        error.describe_shape((rows, cols))
                    }
                )),
            }
        }
        if let Some(raw) = fields.get("e") {
            embedding_overrides = read_overrides(raw, d_model, notices);
        }
        if let Some(raw) = fields.get(SOURCE_OVERRIDES_KEY) {
            source_overrides = read_overrides(raw, d_model, notices);
        }
    } else {
        let mut ignored: Vec<String> = WeightName::ALL
            .into_iter()
            .filter(|name| fields.get(weight_key(*name)).is_some())
            .map(|name| name.label().to_string())
            .collect();
        if fields.get("e").is_some() || fields.get(SOURCE_OVERRIDES_KEY).is_some() {
            ignored.push("the edited embeddings".to_string());
        }
        if !ignored.is_empty() {
            notices.add(format!(
                "Without a usable d_model, the link's {} could not be read: the defaults are used.",
                and_list(&ignored)
            ));
        }
    }

    let block_on = read_flag(fields, "blk", "The transformer block", notices);
    let block_keys = ["norm", "act", "dff"]
        .into_iter()
        .chain(BlockParam::ALL.map(block_key))
        .filter(|k| fields.get(k).is_some())
        .collect::<Vec<_>>();
    // The block's parts count only while it is on; a link written by attention-lens never
    // has one without the other.
    let block = if block_on {
        read_block(fields, d_model, width_ok, notices)
    } else {
        if !block_keys.is_empty() {
            notices.add(format!(
                "The link sets parts of the transformer block ({}) but does not switch it on \
                 (blk=1): they were ignored.",
                and_list(
                    &block_keys
                        .iter()
                        .map(|k| format!("“{k}”"))
                        .collect::<Vec<_>>()
                )
            ));
        }
        Block::new(d_model, Block::default_d_ff(d_model))
    };
    if !cross && fields.get(SOURCE_OVERRIDES_KEY).is_some() {
        notices.add(
            "The link edits source embeddings but has no source sentence (src): they were \
             ignored."
                .to_string(),
        );
        source_overrides.clear();
    }
    Model {
        sentence,
        config,
        weights,
        embedding_overrides,
        seed,
        source: source_text.unwrap_or(defaults.source),
        cross,
        // A link holds no mask from before the source: with one, the mask stays off.
        causal_before_cross: false,
        source_overrides,
        block,
        block_on,
        training: defaults.training,
        prefill: read_count(fields, "pf", "prefill", notices),
        tile: read_count(fields, "tile", "tiled softmax's block", notices),
    }
}

/// Reads a count of tokens, 1 or more, that shows a view when present (`pf`, `tile`); a bad
/// one leaves the view hidden, with a notice.
fn read_count(fields: &Fields<'_>, key: &str, what: &str, notices: &mut Notices) -> Option<usize> {
    let raw = fields.get(key)?;
    match raw.parse::<usize>() {
        Ok(n) if n >= 1 => Some(n),
        _ => {
            notices.add(format!(
                "The link's {what} {} is not a whole number of tokens, 1 or more: it is not \
                 shown.",
                shown(raw)
            ));
            None
        }
    }
}

/// Reads a sentence-like text field; a damaged, empty or too long one gives `default`.
fn read_text(
    fields: &Fields<'_>,
    key: &str,
    what: &str,
    default: &str,
    notices: &mut Notices,
) -> String {
    let Some(raw) = fields.get(key) else {
        return default.to_string();
    };
    let Some(text) = percent_decode(raw) else {
        notices.add(format!(
            "The {what} in the link is damaged (its %-codes are broken): the default {what} is used."
        ));
        return default.to_string();
    };
    match tokenize(&text) {
        Ok(_) => text,
        Err(error) => {
            notices.add(match error {
                AttentionError::EmptySentence => {
                    format!("The {what} in the link is empty: the default {what} is used.")
                }
                AttentionError::TooManyTokens { count, max } => format!(
                    "The {what} in the link has {count} tokens, but at most {max} fit: \
                     the default {what} is used."
                ),
                other => format!(
                    "The {what} in the link cannot be used ({other}): the default {what} is used."
                ),
            });
            default.to_string()
        }
    }
}

/// Reads a choice by its key (`post`, `gelu`, …); a bad one gives the default, called
/// `default_name`, with a notice that lists the choices.
fn read_choice<T: Choices + Default + std::str::FromStr + std::fmt::Display>(
    fields: &Fields<'_>,
    key: &str,
    what: &str,
    default_name: &str,
    notices: &mut Notices,
) -> T {
    let Some(raw) = fields.get(key) else {
        return T::default();
    };
    raw.parse::<T>().unwrap_or_else(|_| {
        let keys: Vec<String> = T::choices().iter().map(|c| c.to_string()).collect();
        notices.add(format!(
            "The link's {what} {} is not {}: {default_name} is used.",
            shown(raw),
            keys.join(" or ")
        ));
        T::default()
    })
}

/// The choices of a setting read by [`read_choice`].
trait Choices: Sized + 'static {
    fn choices() -> &'static [Self];
}

impl Choices for Norm {
    fn choices() -> &'static [Self] {
        Norm::ALL
    }
}

impl Choices for NormType {
    fn choices() -> &'static [Self] {
        NormType::ALL
    }
}

impl Choices for Activation {
    fn choices() -> &'static [Self] {
        Activation::ALL
    }
}

/// Reads the block's settings and parameters; each bad part keeps its default with a notice.
fn read_block(fields: &Fields<'_>, d_model: usize, width_ok: bool, notices: &mut Notices) -> Block {
    let norm = read_choice(fields, "norm", "norm", "post-norm", notices);
    let norm_type = read_choice(fields, "nt", "norm type", "LayerNorm", notices);
    let activation = read_choice(fields, "act", "activation", "ReLU", notices);
    let default_d_ff = Block::default_d_ff(d_model);
    let d_ff = match fields.get("dff") {
        None => default_d_ff,
        Some(raw) => match raw.parse::<usize>() {
            Ok(n) if D_FF_RANGE.contains(&n) => n,
            _ => {
                notices.add(format!(
                    "The link's d_ff is {}, but it must be a whole number from {} to {}: d_ff \
                     {default_d_ff} is used.",
                    shown(raw),
                    D_FF_RANGE.start(),
                    D_FF_RANGE.end()
                ));
                default_d_ff
            }
        },
    };
    let mut block = Block::new(d_model, d_ff);
    block.norm = norm;
    block.norm_type = norm_type;
    block.activation = activation;
    for p in BlockParam::ALL {
        let Some(raw) = fields.get(block_key(p)) else {
            continue;
        };
        let label = p.label();
        if !width_ok {
            notices.add(format!(
                "Without a usable d_model, the link's {label} could not be read: its defaults are used."
            ));
            continue;
        }
        let (rows, cols) = p.shape(d_model, d_ff);
        let values = percent_decode(raw)
            .ok_or(NumberError::Damaged)
            .and_then(|text| parse_numbers(&text, rows * cols));
        match values {
            Ok(values) => *block.get_mut(p) = Matrix::from_row_slice(rows, cols, &values),
            Err(error) => notices.add(format!(
                "The link's {label} {}: {label} was reset to its default.",
                error.describe_shape((rows, cols))
            )),
        }
    }
    block
}

fn heads_are(n: usize) -> String {
    if n == 1 {
        "1 head is".to_string()
    } else {
        format!("{n} heads are")
    }
}

fn read_flag(fields: &Fields<'_>, key: &str, what: &str, notices: &mut Notices) -> bool {
    match fields.get(key) {
        None | Some("0") => false,
        Some("1") => true,
        Some(raw) => {
            notices.add(format!(
                "The link's “{key}” should be 0 or 1, not {}: {what} is off.",
                shown(raw)
            ));
            false
        }
    }
}

/// Reads `token:n,n,…;token:…` entries; a bad entry leaves its token at its toy embedding.
fn read_overrides(raw: &str, d_model: usize, notices: &mut Notices) -> Overrides {
    let mut overrides = Overrides::new();
    let mut repeated: Vec<String> = Vec::new();
    let mut dropped = 0usize;
    for entry in raw.split(';').filter(|e| !e.is_empty()) {
        if overrides.len() == MAX_OVERRIDES {
            dropped += 1;
            continue;
        }
        let Some((token_raw, values_raw)) = entry.split_once(':') else {
            notices.add(format!(
                "The link's edited embedding {} has no “:” between the token and its numbers: \
                 it was ignored.",
                shown(entry)
            ));
            continue;
        };
        let Some(token) = percent_decode(token_raw).filter(|t| !t.trim().is_empty()) else {
            notices.add(format!(
                "The link's edited embedding for {} does not name a token: it was ignored.",
                shown(token_raw)
            ));
            continue;
        };
        if overrides.contains_key(&token) {
            if !repeated.contains(&token) {
                repeated.push(token);
            }
            continue;
        }
        match parse_numbers(values_raw, d_model) {
            Ok(values) => {
                overrides.insert(token, values);
            }
            Err(error) => notices.add(format!(
                "The link's embedding for {} {}: {} keeps its toy embedding.",
                quote(&token),
                error.describe_row(d_model),
                quote(&token)
            )),
        }
    }
    if !repeated.is_empty() {
        let names: Vec<String> = repeated.iter().take(3).map(|t| quote(t)).collect();
        notices.add(format!(
            "The link edits the embedding of {} more than once: the first one was used.",
            and_list(&names)
        ));
    }
    if dropped > 0 {
        notices.add(format!(
            "The link edits more than {MAX_OVERRIDES} embeddings: the last {dropped} were ignored."
        ));
    }
    overrides
}
