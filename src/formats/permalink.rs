//! Share links: the whole state (model, stage, head, highlighted cell) in the URL fragment,
//! compact and versioned.
//!
//! The fragment is `key=value` pairs joined by `&`, always starting with `v=1`. Every other pair
//! is left out when it holds its default, so the default state is just `v=1`:
//!
//! | key      | value                                                        | default          |
//! |----------|--------------------------------------------------------------|------------------|
//! | `v`      | link format version                                          | `1`              |
//! | `s`      | the sentence, percent-encoded UTF-8                          | `I am hungry`    |
//! | `d`      | d_model, 2 to 16                                             | `4`              |
//! | `h`      | n_heads, 1 to 8, dividing d_model                            | `2`              |
//! | `causal` | causal mask, `0` or `1`                                      | `0`              |
//! | `pe`     | positional encoding, `0` or `1`                              | `0`              |
//! | `scale`  | `sqrt_head_dim`, `sqrt_seq_len` or `none`                    | `sqrt_head_dim`  |
//! | `t`      | softmax temperature, 0.01 to 100                             | `1`              |
//! | `seed`   | seed of the Random buttons                                   | `42`             |
//! | `wq` `wk` `wv` `wo` | d_model² numbers, row-major, comma-separated      | `Init::Default`  |
//! | `e`      | edited embeddings: `token:n,n,…` entries joined by `;`       | none             |
//! | `stage`  | a [`Stage::key`]                                             | `input`          |
//! | `head`   | the head shown, from 0                                       | `0`              |
//! | `cell`   | highlighted cell, `panel.row.col`, from 0                    | none             |
//!
//! Numbers use the shortest text that reads back as exactly the same `f64`, in plain or
//! exponent form, with a leading `0.` shortened to `.` (`-.25`, `1e-7`). Text (the sentence,
//! tokens and panel names) is percent-encoded: every byte but ASCII letters, digits and `-._~`
//! becomes `%XX`, so any Unicode survives and the fragment never holds a space, `#`, `&` or `=`
//! of its own. A `+` is a plus sign, never a space.
//!
//! [`decode`] never fails: each part that cannot be used falls back to its default and adds a
//! notice written for a learner, and the model it returns always traces.

use crate::attention::{
    tokenize, toy_embedding, AttentionError, Config, Init, MatrixId, ScaleMode, Stage, WeightName,
    Weights, D_MODEL_RANGE, TEMPERATURE_RANGE,
};
use crate::panels::panel_names;
use crate::state::{Model, Overrides};
use crate::words::stage_name;
use std::fmt::Write as _;

/// The link format version this build writes and reads.
pub const LINK_VERSION: u32 = 1;

/// The longest fragment [`decode`] reads, in bytes; longer ones are refused whole.
pub const MAX_FRAGMENT_LEN: usize = 64 * 1024;

/// The most edited embeddings a link may carry.
pub const MAX_OVERRIDES: usize = 256;

/// How many unknown keys a notice names before it only counts the rest.
const LISTED: usize = 3;

/// The most notices [`decode`] returns; further problems are summed up in one last notice.
pub const MAX_NOTICES: usize = 12;

/// Everything a share link restores.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareState {
    /// The learner's model: sentence, settings, matrices and edited embeddings.
    pub model: Model,
    /// The stage on screen.
    pub stage: Stage,
    /// The head shown at per-head stages, from 0.
    pub head: usize,
    /// The highlighted cell: panel name (as in `panel-<name>` test ids, e.g. `scores-h0`),
    /// row and column, from 0.
    pub cell: Option<(String, usize, usize)>,
}

impl Default for ShareState {
    fn default() -> Self {
        Self {
            model: Model::default(),
            stage: Stage::Input,
            head: 0,
            cell: None,
        }
    }
}

/// What [`decode`] read, and what it had to leave out.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The state: every valid part of the link, defaults for the rest.
    pub state: ShareState,
    /// One sentence per problem, for a learner; empty when the link was read in full.
    pub notices: Vec<String>,
}

/// The keys this version reads, in the order [`encode`] writes them.
const KEYS: [&str; 17] = [
    "v", "s", "d", "h", "causal", "pe", "scale", "t", "seed", "wq", "wk", "wv", "wo", "e", "stage",
    "head", "cell",
];

fn weight_key(name: WeightName) -> &'static str {
    match name {
        WeightName::Q => "wq",
        WeightName::K => "wk",
        WeightName::V => "wv",
        WeightName::O => "wo",
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding

/// The fragment (without `#`) that restores `state`; parts equal to their defaults are left out.
pub fn encode(state: &ShareState) -> String {
    let model = &state.model;
    let config = model.config;
    let defaults = Model::default();
    let mut out = format!("v={LINK_VERSION}");
    let mut pair = |key: &str, value: &str| {
        out.push('&');
        out.push_str(key);
        out.push('=');
        out.push_str(value);
    };
    if model.sentence != defaults.sentence {
        pair("s", &percent_encode(&model.sentence));
    }
    if config.d_model != defaults.config.d_model {
        pair("d", &config.d_model.to_string());
    }
    if config.n_heads != defaults.config.n_heads {
        pair("h", &config.n_heads.to_string());
    }
    if config.causal != defaults.config.causal {
        pair("causal", flag(config.causal));
    }
    if config.positional_encoding != defaults.config.positional_encoding {
        pair("pe", flag(config.positional_encoding));
    }
    if config.scale != defaults.config.scale {
        pair("scale", config.scale.key());
    }
    if config.temperature.to_bits() != defaults.config.temperature.to_bits() {
        pair("t", &number(config.temperature));
    }
    if model.seed != defaults.seed {
        pair("seed", &model.seed.to_string());
    }
    for name in WeightName::ALL {
        let w = model.weights.get(name);
        if !same_numbers(w, &Init::Default.matrix(name, config.d_model)) {
            let mut values = String::new();
            for i in 0..w.nrows() {
                for j in 0..w.ncols() {
                    push_number(&mut values, w[(i, j)]);
                }
            }
            pair(weight_key(name), &values);
        }
    }
    if !model.embedding_overrides.is_empty() {
        let mut entries = String::new();
        for (token, vector) in &model.embedding_overrides {
            if !entries.is_empty() {
                entries.push(';');
            }
            entries.push_str(&percent_encode(token));
            entries.push(':');
            let mut values = String::new();
            for &x in vector {
                push_number(&mut values, x);
            }
            entries.push_str(&values);
        }
        pair("e", &entries);
    }
    if state.stage != Stage::Input {
        pair("stage", state.stage.key());
    }
    if state.head != 0 {
        pair("head", &state.head.to_string());
    }
    if let Some((panel, row, col)) = &state.cell {
        pair("cell", &format!("{}.{row}.{col}", percent_encode(panel)));
    }
    out
}

fn flag(on: bool) -> &'static str {
    if on {
        "1"
    } else {
        "0"
    }
}

/// Equal shapes and bit-for-bit equal entries, so `-0` is not mistaken for `0`.
fn same_numbers(a: &crate::attention::Matrix, b: &crate::attention::Matrix) -> bool {
    a.shape() == b.shape()
        && a.iter()
            .zip(b.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Appends `x` to a comma-separated list.
fn push_number(list: &mut String, x: f64) {
    if !list.is_empty() {
        list.push(',');
    }
    list.push_str(&number(x));
}

/// The shortest text that parses back to exactly `x`: Rust's shortest round-trip digits, in
/// plain or exponent form, whichever is shorter, with `0.` shortened to `.`.
fn number(x: f64) -> String {
    let plain = x.to_string();
    let exponent = format!("{x:e}");
    let plain = if let Some(rest) = plain.strip_prefix("0.") {
        format!(".{rest}")
    } else if let Some(rest) = plain.strip_prefix("-0.") {
        format!("-.{rest}")
    } else {
        plain
    };
    if exponent.len() < plain.len() {
        exponent
    } else {
        plain
    }
}

/// Percent-encodes every byte of `text` except ASCII letters, digits and `-._~`.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &byte in text.as_bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// Undoes [`percent_encode`]; characters that were not encoded pass through unchanged, so a
/// link whose sentence a browser or chat app has shown decoded still reads. `None` when a `%`
/// is not followed by two hex digits or the bytes are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(
                u8::from_str_radix(hex, 16)
                    .ok()
                    .filter(|_| hex.bytes().all(|b| b.is_ascii_hexdigit()))?,
            );
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// Notices, capped at [`MAX_NOTICES`] so a garbled link gives a readable list.
#[derive(Default)]
struct Notices {
    list: Vec<String>,
    total: usize,
}

impl Notices {
    fn add(&mut self, notice: String) {
        if self.list.len() < MAX_NOTICES {
            self.list.push(notice);
        }
        self.total += 1;
    }

    fn finish(mut self) -> Vec<String> {
        if self.total > MAX_NOTICES {
            self.list.truncate(MAX_NOTICES - 1);
            self.list.push(format!(
                "{} more parts of the link could not be used and were left at their defaults.",
                self.total - self.list.len()
            ));
        }
        self.list
    }
}

/// A raw piece of the link, quoted for a notice, %-codes decoded where possible.
fn shown(raw: &str) -> String {
    quote(&percent_decode(raw).unwrap_or_else(|| raw.to_string()))
}

/// Text quoted for a notice: control characters replaced, and cut short so a garbled link does
/// not flood the screen.
fn quote(text: &str) -> String {
    const LONGEST: usize = 24;
    let mut out: String = text
        .chars()
        .take(LONGEST)
        .map(|c| if c.is_control() { '�' } else { c })
        .collect();
    if text.chars().nth(LONGEST).is_some() {
        out.push('…');
    }
    format!("“{out}”")
}

/// Joins names as English prose: `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Reads a share-link fragment (with or without its leading `#`). Never fails: unusable parts
/// fall back to their defaults, with one notice each.
pub fn decode(fragment: &str) -> Decoded {
    let mut notices = Notices::default();
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    if fragment.len() > MAX_FRAGMENT_LEN {
        notices.add(format!(
            "This link is too long to read ({} KiB; the most is {} KiB): the default example is shown.",
            fragment.len().div_ceil(1024),
            MAX_FRAGMENT_LEN / 1024
        ));
        return Decoded {
            state: ShareState::default(),
            notices: notices.finish(),
        };
    }
    let fields = Fields::split(fragment);
    let state = read_state(&fields, &mut notices);
    Decoded {
        state,
        notices: notices.finish(),
    }
}

/// Sorts `items` and drops repeats.
fn sort_unique<T: Ord>(items: &mut Vec<T>) {
    items.sort_unstable();
    items.dedup();
}

/// The pairs of a fragment: the first value of each known key, and what was left out.
struct Fields<'a> {
    /// The first value of each of [`KEYS`], by position.
    values: [Option<&'a str>; KEYS.len()],
    /// How many distinct unknown keys there are.
    unknown: usize,
    /// The first few of them, in link order, to name in the notice.
    first_unknown: Vec<&'a str>,
    repeated: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    fn split(fragment: &'a str) -> Self {
        let mut fields = Fields {
            values: [None; KEYS.len()],
            unknown: 0,
            first_unknown: Vec::new(),
            repeated: Vec::new(),
        };
        let mut unknown = Vec::new();
        for part in fragment.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            match KEYS.iter().position(|k| *k == key) {
                Some(i) => {
                    if fields.values[i].is_some() {
                        if !fields.repeated.contains(&KEYS[i]) {
                            fields.repeated.push(KEYS[i]);
                        }
                    } else {
                        fields.values[i] = Some(value);
                    }
                }
                None => {
                    if fields.first_unknown.len() < LISTED && !fields.first_unknown.contains(&key) {
                        fields.first_unknown.push(key);
                    }
                    unknown.push(key);
                }
            }
        }
        // Sorted once, so a link of thousands of stray keys is still read in a blink.
        sort_unique(&mut unknown);
        fields.unknown = unknown.len();
        fields
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        KEYS.iter()
            .position(|k| *k == key)
            .and_then(|i| self.values[i])
    }
}

fn read_state(fields: &Fields<'_>, notices: &mut Notices) -> ShareState {
    let newer = read_version(fields, notices);
    // A newer version's extra keys are expected; the version notice already covers them.
    if !newer && fields.unknown > 0 {
        let mut names: Vec<String> = fields.first_unknown.iter().map(|k| shown(k)).collect();
        if fields.unknown > LISTED {
            names.push(format!("{} more", fields.unknown - LISTED));
        }
        let (part, it) = if fields.unknown == 1 {
            ("a part", "it was")
        } else {
            ("parts", "they were")
        };
        notices.add(format!(
            "The link has {part} this version does not know ({}): {it} ignored.",
            and_list(&names)
        ));
    }
    if !fields.repeated.is_empty() {
        let names: Vec<String> = fields.repeated.iter().map(|k| format!("“{k}”")).collect();
        notices.add(format!(
            "The link sets {} more than once: the first value was used.",
            and_list(&names)
        ));
    }

    let mut model = read_model(fields, notices);
    if model.trace().is_err() {
        notices.add(
            "The numbers in the link's matrices are too large to compute attention with: \
             all matrices were reset to their defaults."
                .to_string(),
        );
        model.weights = Weights::new(Init::Default, model.config.d_model);
        model.embedding_overrides.clear();
        if model.trace().is_err() {
            model = Model::default();
        }
    }

    let stage = match fields.get("stage") {
        None => Stage::Input,
        Some(raw) => Stage::from_key(raw).unwrap_or_else(|| {
            notices.add(format!(
                "The link's stage {} does not exist: the first stage, {}, is shown.",
                shown(raw),
                stage_name(Stage::Input)
            ));
            Stage::Input
        }),
    };

    let n_heads = model.config.n_heads;
    let head = match fields.get("head") {
        None => 0,
        Some(raw) => match raw.parse::<usize>() {
            Ok(h) if h < n_heads => h,
            Ok(h) => {
                notices.add(format!(
                    "The link shows head {}, but this model has {n_heads} {}: head 1 is shown.",
                    h.saturating_add(1),
                    if n_heads == 1 { "head" } else { "heads" }
                ));
                0
            }
            Err(_) => {
                notices.add(format!(
                    "The link's head {} is not a head number: head 1 is shown.",
                    shown(raw)
                ));
                0
            }
        },
    };

    let cell = fields
        .get("cell")
        .and_then(|raw| read_cell(raw, &model, notices));

    ShareState {
        model,
        stage,
        head,
        cell,
    }
}

/// Reads `v`; true when the link comes from a newer version.
fn read_version(fields: &Fields<'_>, notices: &mut Notices) -> bool {
    let Some(raw) = fields.get("v") else {
        return false;
    };
    match raw.parse::<u64>() {
        Ok(v) if v == u64::from(LINK_VERSION) => false,
        Ok(v) if v > u64::from(LINK_VERSION) => {
            notices.add(format!(
                "This link was made by a newer version (v={v}); what could be read was loaded."
            ));
            true
        }
        _ => {
            notices.add(format!(
                "The link's version {} is not one this app knows; what could be read was loaded.",
                shown(raw)
            ));
            false
        }
    }
}

fn read_model(fields: &Fields<'_>, notices: &mut Notices) -> Model {
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

    let sentence = match fields.get("s") {
        None => defaults.sentence.clone(),
        Some(raw) => match percent_decode(raw) {
            None => {
                notices.add(
                    "The sentence in the link is damaged (its %-codes are broken): \
                     the default sentence is used."
                        .to_string(),
                );
                defaults.sentence.clone()
            }
            Some(text) => match tokenize(&text) {
                Ok(_) => text,
                Err(error) => {
                    notices.add(match error {
                        AttentionError::EmptySentence => {
                            "The sentence in the link is empty: the default sentence is used."
                                .to_string()
                        }
                        AttentionError::TooManyTokens { count, max } => format!(
                            "The sentence in the link has {count} tokens, but at most {max} fit: \
                             the default sentence is used."
                        ),
                        other => format!(
                            "The sentence in the link cannot be used ({other}): \
                             the default sentence is used."
                        ),
                    });
                    defaults.sentence.clone()
                }
            },
        },
    };

    let config = Config {
        d_model,
        n_heads,
        causal,
        positional_encoding,
        scale,
        temperature,
    };
    let mut weights = Weights::new(Init::Default, d_model);
    let mut embedding_overrides = Overrides::new();

    if width_ok {
        for name in WeightName::ALL {
            let Some(raw) = fields.get(weight_key(name)) else {
                continue;
            };
            let label = name.label();
            let values = percent_decode(raw)
                .ok_or(NumberError::Damaged)
                .and_then(|text| parse_numbers(&text, d_model * d_model));
            match values {
                Ok(values) => {
                    *weights.get_mut(name) =
                        crate::attention::Matrix::from_row_slice(d_model, d_model, &values);
                }
                Err(error) => notices.add(format!(
                    "The link's {label} {}: {label} was reset to its default.",
                    error.describe(d_model * d_model)
                )),
            }
        }
        if let Some(raw) = fields.get("e") {
            embedding_overrides = read_overrides(raw, d_model, notices);
        }
    } else {
        let mut ignored: Vec<String> = WeightName::ALL
            .into_iter()
            .filter(|name| fields.get(weight_key(*name)).is_some())
            .map(|name| name.label().to_string())
            .collect();
        if fields.get("e").is_some() {
            ignored.push("the edited embeddings".to_string());
        }
        if !ignored.is_empty() {
            notices.add(format!(
                "Without a usable d_model, the link's {} could not be read: the defaults are used.",
                and_list(&ignored)
            ));
        }
    }

    Model {
        sentence,
        config,
        weights,
        embedding_overrides,
        seed,
    }
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

/// Why a list of numbers was refused.
enum NumberError {
    /// The text has broken %-codes.
    Damaged,
    /// Not the expected count.
    Count(usize),
    /// An entry that is not a number.
    NotANumber(String),
    /// An entry that is NaN or infinite (or overflows to infinity).
    NotFinite(String),
}

impl NumberError {
    /// The end of a sentence starting "The link's W_q …".
    fn describe(&self, expected: usize) -> String {
        match self {
            Self::Damaged => "is damaged (its %-codes are broken)".to_string(),
            Self::Count(found) => format!(
                "has {found} {}, but d_model {} needs {expected}",
                if *found == 1 { "number" } else { "numbers" },
                expected.isqrt()
            ),
            Self::NotANumber(raw) => format!("has {}, which is not a number", shown(raw)),
            Self::NotFinite(raw) => format!("has {}, which is not a finite number", shown(raw)),
        }
    }
}

/// A finite decimal number (so also `.5` and `1e-7`); `None` otherwise, including for `inf`,
/// `nan` and values too large for an `f64`.
fn parse_number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// `inf`, `infinity` or `nan` in any case, with or without a sign.
fn names_non_finite(text: &str) -> bool {
    let word = text.trim_start_matches(['+', '-']).to_ascii_lowercase();
    matches!(word.as_str(), "inf" | "infinity" | "nan")
}

/// Exactly `expected` finite numbers separated by commas.
fn parse_numbers(text: &str, expected: usize) -> Result<Vec<f64>, NumberError> {
    let found = if text.is_empty() {
        0
    } else {
        text.split(',').count()
    };
    if found != expected {
        return Err(NumberError::Count(found));
    }
    text.split(',')
        .map(|raw| match raw.parse::<f64>().ok() {
            Some(x) if x.is_finite() => Ok(x),
            None if !names_non_finite(raw) => Err(NumberError::NotANumber(raw.to_string())),
            _ => Err(NumberError::NotFinite(raw.to_string())),
        })
        .collect()
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

impl NumberError {
    /// Like [`NumberError::describe`], for one embedding row of `d_model` numbers.
    fn describe_row(&self, d_model: usize) -> String {
        match self {
            Self::Count(found) => format!(
                "has {found} {}, but d_model {d_model} needs {d_model}",
                if *found == 1 { "number" } else { "numbers" }
            ),
            other => other.describe(d_model * d_model),
        }
    }
}

/// Reads `panel.row.col` and checks it against the panels `model` shows.
fn read_cell(raw: &str, model: &Model, notices: &mut Notices) -> Option<(String, usize, usize)> {
    let mut parts = raw.rsplitn(3, '.');
    let (col, row, panel) = (parts.next(), parts.next(), parts.next());
    let parsed = match (panel.and_then(percent_decode), row, col) {
        (Some(panel), Some(row), Some(col)) => row
            .parse::<usize>()
            .ok()
            .zip(col.parse::<usize>().ok())
            .map(|(row, col)| (panel, row, col)),
        _ => None,
    };
    let Some((panel, row, col)) = parsed else {
        notices.add(format!(
            "The link's highlighted cell {} should read panel.row.column: no cell is highlighted.",
            shown(raw)
        ));
        return None;
    };
    let Some((rows, cols)) = panel_shape(model, &panel) else {
        notices.add(format!(
            "The link highlights a cell of {}, which this model does not show: \
             no cell is highlighted.",
            quote(&panel)
        ));
        return None;
    };
    if row >= rows || col >= cols {
        notices.add(format!(
            "The link highlights row {}, column {} of {}, which has {rows} rows and {cols} \
             columns: no cell is highlighted.",
            row.saturating_add(1),
            col.saturating_add(1),
            quote(&panel)
        ));
        return None;
    }
    Some((panel, row, col))
}

// ---------------------------------------------------------------------------------------------
// Panels

/// Every heatmap panel the stage view can show for `model`, by name, with its (rows, columns).
///
/// The names are the ones the stage view gives its panels (`panel-<name>` test ids); a cell in a
/// link must name one of them.
pub fn panels(model: &Model) -> Vec<(String, (usize, usize))> {
    // The explanation module names every matrix the views draw; one list serves both.
    let Ok(trace) = model.trace() else {
        return Vec::new();
    };
    MatrixId::all(&trace)
        .into_iter()
        .filter_map(|m| m.shape(&trace).map(|shape| (m, shape)))
        .flat_map(|(m, shape)| panel_names(m).into_iter().map(move |n| (n, shape)))
        .collect()
}

/// The (rows, columns) of the panel called `name`, if `model` shows one.
pub fn panel_shape(model: &Model, name: &str) -> Option<(usize, usize)> {
    panels(model)
        .into_iter()
        .find(|(panel, _)| panel == name)
        .map(|(_, shape)| shape)
}

// ---------------------------------------------------------------------------------------------
// History

/// What a change of state should do to the browser history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryStep {
    /// A new entry: Back returns to the previous state.
    Push,
    /// Rewrite the current entry: the link stays current without flooding Back.
    Replace,
    /// Nothing changed; leave the history alone.
    Keep,
}

/// How to record the move from `previous` to `next` in the browser history.
///
/// The rule: a step a learner would want Back to undo gets its own entry, a fine adjustment
/// does not.
/// - [`HistoryStep::Push`] when the stage, the sentence, d_model, the number of heads, the
///   causal mask, positional encoding or the scaling changes, or when two or more matrix
///   numbers change at once (loading a preset or a file, filling or resetting a matrix).
/// - [`HistoryStep::Replace`] when at most one matrix number changes (editing a cell, dragging
///   a value) together with any change of temperature, seed, head or highlighted cell: these
///   come in bursts while scrubbing, and one entry per frame would make Back useless.
/// - [`HistoryStep::Keep`] when the two states are equal.
pub fn history_step(previous: &ShareState, next: &ShareState) -> HistoryStep {
    if previous == next {
        return HistoryStep::Keep;
    }
    let (a, b) = (&previous.model, &next.model);
    let structural = previous.stage != next.stage
        || a.sentence != b.sentence
        || a.config.d_model != b.config.d_model
        || a.config.n_heads != b.config.n_heads
        || a.config.causal != b.config.causal
        || a.config.positional_encoding != b.config.positional_encoding
        || a.config.scale != b.config.scale;
    if structural || changed_numbers(a, b) >= 2 {
        HistoryStep::Push
    } else {
        HistoryStep::Replace
    }
}

/// How many matrix entries differ between two models of the same d_model, counting an edited
/// embedding against the toy embedding it replaced.
fn changed_numbers(a: &Model, b: &Model) -> usize {
    let differ = |x: &[f64], y: &[f64]| {
        x.len().abs_diff(y.len())
            + x.iter()
                .zip(y)
                .filter(|(p, q)| p.to_bits() != q.to_bits())
                .count()
    };
    let weights: usize = WeightName::ALL
        .into_iter()
        .map(|name| {
            differ(
                a.weights.get(name).as_slice(),
                b.weights.get(name).as_slice(),
            )
        })
        .sum();
    let d = b.config.d_model;
    let vector = |m: &Model, token: &str| {
        m.embedding_overrides
            .get(token)
            .cloned()
            .unwrap_or_else(|| toy_embedding(token, d))
    };
    let only_in_b = b
        .embedding_overrides
        .keys()
        .filter(|t| !a.embedding_overrides.contains_key(*t));
    let embeddings: usize = a
        .embedding_overrides
        .keys()
        .chain(only_in_b)
        .map(|t| differ(&vector(a, t), &vector(b, t)))
        .sum();
    weights + embeddings
}

#[cfg(test)]
mod tests {
    use super::sort_unique;
    use crate::attention::SplitMix64;

    #[test]
    fn sort_unique_sorts_and_drops_repeats_like_the_standard_library() {
        let mut rng = SplitMix64::new(7);
        for len in [0usize, 1, 2, 3, 10, 100, 1000] {
            let items: Vec<u64> = (0..len).map(|_| rng.next_u64() % 50).collect();
            let mut ours = items.clone();
            sort_unique(&mut ours);
            let mut expected = items;
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(ours, expected, "{len} items");
        }
    }
}
