//! The versioned JSON scenario: everything a user can set, as the web app imports and exports it
//! and the CLI reads it.

use crate::attention::{
    tokenize, toy_embeddings, AttentionError, Config, Init, Inputs, Matrix, ScaleMode, WeightName,
    Weights,
};
use crate::state::Model;
use serde::de::{self, Deserializer, MapAccess, Unexpected, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// The scenario format version this build reads and writes.
pub const SCENARIO_VERSION: u32 = 1;

/// The sentence of the default scenario.
pub use crate::state::DEFAULT_SENTENCE;

/// The longest scenario text read, in bytes: 1 MB, far more than the largest valid scenario
/// (32 tokens, d_model 16) needs, so a huge file is refused before it is parsed.
pub const MAX_SCENARIO_BYTES: usize = 1_048_576;

/// Everything a user can set. Matrices are row-major arrays of rows.
///
/// As JSON, an object with `version` and `sentence` and any of the other fields; unknown and
/// repeated fields are refused, and `null` counts as absent for `title`, `caption` and the
/// matrices. The fields are written in the order they are declared here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Format version; this build reads version 1. Required.
    #[serde(deserialize_with = "whole_number")]
    pub version: u32,
    /// A name for menus (presets); left out of the JSON when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What to look for (presets); left out of the JSON when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    /// The sentence to tokenize. Required.
    pub sentence: String,
    /// Width of token vectors, 2 to 16; 4 when absent.
    #[serde(default = "default_d_model", deserialize_with = "whole_number")]
    pub d_model: usize,
    /// Number of heads, 1 to 8, dividing d_model; 2 when absent.
    #[serde(default = "default_n_heads", deserialize_with = "whole_number")]
    pub n_heads: usize,
    /// Causal mask on or off; off when absent.
    #[serde(default)]
    pub causal: bool,
    /// Sinusoidal positional encoding on or off; off when absent.
    #[serde(default)]
    pub positional_encoding: bool,
    /// `sqrt_head_dim` (default), `sqrt_seq_len` or `none`.
    #[serde(default, with = "scale_key")]
    pub scale: ScaleMode,
    /// Softmax temperature, 0.01 to 100; 1 when absent.
    #[serde(default = "default_temperature", deserialize_with = "number")]
    pub temperature: f64,
    /// Token embeddings, seq_len × d_model; the toy embeddings when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "matrix"
    )]
    pub embeddings: Option<Vec<Vec<f64>>>,
    /// Query projection, d_model × d_model; the defaults when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "matrix"
    )]
    pub w_q: Option<Vec<Vec<f64>>>,
    /// Key projection, d_model × d_model.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "matrix"
    )]
    pub w_k: Option<Vec<Vec<f64>>>,
    /// Value projection, d_model × d_model.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "matrix"
    )]
    pub w_v: Option<Vec<Vec<f64>>>,
    /// Output projection, d_model × d_model.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "matrix"
    )]
    pub w_o: Option<Vec<Vec<f64>>>,
}

/// The fields of scenario JSON, in the order [`Scenario::to_json`] writes them. An error is
/// inside a field when its path starts with one of these; otherwise the path is an unknown key.
const FIELDS: [&str; 15] = [
    "version",
    "title",
    "caption",
    "sentence",
    "d_model",
    "n_heads",
    "causal",
    "positional_encoding",
    "scale",
    "temperature",
    "embeddings",
    "w_q",
    "w_k",
    "w_v",
    "w_o",
];

/// The longest message of the JSON reader quoted in an error, in characters: enough for every
/// message about a real scenario, while a hostile file's megabyte-long key or string is not
/// echoed back in full.
const MAX_MESSAGE_CHARS: usize = 300;

/// Why a scenario could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// Not valid JSON, or a field of the wrong type; the message names the field.
    #[error("This is not a valid scenario: {0}.")]
    Json(String),
    /// Longer than [`MAX_SCENARIO_BYTES`].
    #[error(
        "This scenario is {bytes} bytes long; a scenario is at most 1 MB ({MAX_SCENARIO_BYTES} bytes)."
    )]
    TooLarge { bytes: usize },
    /// Written by a newer version of attention-lens.
    #[error(
        "This scenario is version {0}, made by a newer attention-lens; this one reads version {SCENARIO_VERSION}."
    )]
    UnsupportedVersion(u32),
    /// A matrix's rows have different lengths.
    #[error(
        "Field `{field}`: row {} has {len} numbers but row 1 has {expected}; every row needs the same length.",
        .row + 1
    )]
    RaggedMatrix {
        field: &'static str,
        row: usize,
        len: usize,
        expected: usize,
    },
    /// The values make no valid attention layer.
    #[error("Field `{field}`: {error}")]
    Invalid {
        field: &'static str,
        error: AttentionError,
    },
}

impl Default for Scenario {
    /// The default scenario, every matrix written out, ready to edit.
    fn default() -> Self {
        let config = Config::default();
        let weights = Weights::new(Init::Default, config.d_model);
        let inputs = Inputs::from_sentence(DEFAULT_SENTENCE, config, weights)
            // Formatting the error with Display keeps float Debug code out of the web bundle.
            .unwrap_or_else(|e| panic!("the default sentence and config are invalid: {e}"));
        Self::from_inputs(DEFAULT_SENTENCE, &inputs)
    }
}

impl Scenario {
    /// Parses scenario JSON: an object with `version` and `sentence` and any of the other
    /// fields, each of its proper type. Absent fields take their defaults and `null` counts as
    /// absent for `title`, `caption` and the matrices; unknown and repeated fields are refused,
    /// and so is a text over [`MAX_SCENARIO_BYTES`]. An error names the field that is wrong,
    /// and where in it (`w_q[1][2]`, indices from 0), with the line and column. The values
    /// themselves are checked by [`Scenario::to_inputs`].
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        if text.len() > MAX_SCENARIO_BYTES {
            return Err(ScenarioError::TooLarge { bytes: text.len() });
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let ObjectOnly(scenario) =
            serde_path_to_error::deserialize(&mut deserializer).map_err(json_error)?;
        deserializer
            .end()
            .map_err(|e| ScenarioError::Json(message(&e)))?;
        if scenario.version > SCENARIO_VERSION || scenario.version == 0 {
            return Err(ScenarioError::UnsupportedVersion(scenario.version));
        }
        Ok(scenario)
    }

    /// Parses and validates in one step.
    pub fn parse_inputs(text: &str) -> Result<(Self, Inputs), ScenarioError> {
        let scenario = Self::from_json(text)?;
        let inputs = scenario.to_inputs()?;
        Ok((scenario, inputs))
    }

    /// Pretty JSON, as exported: the fields in a fixed order, two spaces of indent, and
    /// `title`, `caption` and the matrices left out when absent. Every number is written with
    /// the fewest digits that read back to the same `f64`; one that is not finite is `null`.
    /// No final line break.
    pub fn to_json(&self) -> String {
        // serde_json fails only on a map with keys that are not strings, or a failing
        // `Serialize` impl; a scenario has neither, so the fallback is never taken.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The configuration part.
    pub fn config(&self) -> Config {
        Config {
            d_model: self.d_model,
            n_heads: self.n_heads,
            causal: self.causal,
            positional_encoding: self.positional_encoding,
            scale: self.scale,
            temperature: self.temperature,
        }
    }

    /// Checked inputs for the forward pass; missing matrices take their defaults.
    pub fn to_inputs(&self) -> Result<Inputs, ScenarioError> {
        let config = self.config();
        config.validate().map_err(|error| ScenarioError::Invalid {
            field: config_field(&error),
            error,
        })?;
        let tokens = tokenize(&self.sentence).map_err(|error| ScenarioError::Invalid {
            field: "sentence",
            error,
        })?;
        let d = config.d_model;
        let embeddings = match &self.embeddings {
            Some(rows) => to_matrix("embeddings", rows, (tokens.len(), d))?,
            None => toy_embeddings(&tokens, d),
        };
        let mut weights = Weights::new(Init::Default, d);
        for (name, rows) in self.weight_fields() {
            if let Some(rows) = rows {
                *weights.get_mut(name) = to_matrix(name.key(), rows, (d, d))?;
            }
        }
        let inputs = Inputs {
            tokens,
            embeddings,
            weights,
            config,
        };
        inputs.validate().map_err(|error| ScenarioError::Invalid {
            field: "embeddings",
            error,
        })?;
        Ok(inputs)
    }

    /// A scenario that writes out every matrix of `inputs`.
    pub fn from_inputs(sentence: &str, inputs: &Inputs) -> Self {
        let c = inputs.config;
        let w = &inputs.weights;
        Self {
            version: SCENARIO_VERSION,
            title: None,
            caption: None,
            sentence: sentence.to_string(),
            d_model: c.d_model,
            n_heads: c.n_heads,
            causal: c.causal,
            positional_encoding: c.positional_encoding,
            scale: c.scale,
            temperature: c.temperature,
            embeddings: Some(rows_of(&inputs.embeddings)),
            w_q: Some(rows_of(&w.w_q)),
            w_k: Some(rows_of(&w.w_k)),
            w_v: Some(rows_of(&w.w_v)),
            w_o: Some(rows_of(&w.w_o)),
        }
    }

    fn weight_fields(&self) -> [(WeightName, &Option<Vec<Vec<f64>>>); 4] {
        [
            (WeightName::Q, &self.w_q),
            (WeightName::K, &self.w_k),
            (WeightName::V, &self.w_v),
            (WeightName::O, &self.w_o),
        ]
    }
}

/// A scenario from a JSON object only: serde's derived reader of a struct also takes an array
/// of the fields in order, which the format does not allow.
struct ObjectOnly(Scenario);

impl<'de> Deserialize<'de> for ObjectOnly {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;

        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = Scenario;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of named fields")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scenario, A::Error> {
                Scenario::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }

        deserializer.deserialize_map(ObjectVisitor).map(Self)
    }
}

/// The reader's error, naming the field when it is inside one: `field `w_q[1][2]`: …`.
fn json_error(error: serde_path_to_error::Error<serde_json::Error>) -> ScenarioError {
    // An unknown key is the path's first segment too, and its message already names it.
    let in_field = matches!(
        error.path().iter().next(),
        Some(serde_path_to_error::Segment::Map { key }) if FIELDS.contains(&key.as_str())
    );
    let text = message(error.inner());
    ScenarioError::Json(if in_field {
        format!("field `{}`: {text}", error.path())
    } else {
        text
    })
}

/// serde_json's message, cut to [`MAX_MESSAGE_CHARS`], then its line and column.
fn message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let location = format!(" at line {} column {}", error.line(), error.column());
    match text.strip_suffix(&location) {
        Some(what) => format!("{}{location}", shorten(what)),
        None => shorten(&text),
    }
}

/// `text`, cut to its first [`MAX_MESSAGE_CHARS`] characters and an ellipsis when longer.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((end, _)) => format!("{}…", text.get(..end).unwrap_or(text)),
        None => text.to_string(),
    }
}

fn default_d_model() -> usize {
    Config::default().d_model
}

fn default_n_heads() -> usize {
    Config::default().n_heads
}

fn default_temperature() -> f64 {
    Config::default().temperature
}

/// The whole-number types of scenario fields, with their largest value for messages.
trait WholeNumber: TryFrom<u64> {
    const MAX: u64;
}

impl WholeNumber for u32 {
    const MAX: u64 = u32::MAX as u64;
}

impl WholeNumber for usize {
    const MAX: u64 = usize::MAX as u64;
}

/// A whole number that fits `T`. serde's own messages name the Rust type (`u32`, `usize`),
/// which means nothing to the author of a scenario; these say what is expected in words.
fn whole_number<'de, D: Deserializer<'de>, T: WholeNumber>(deserializer: D) -> Result<T, D::Error> {
    struct WholeNumberVisitor<T>(PhantomData<T>);

    impl<T: WholeNumber> Visitor<'_> for WholeNumberVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a whole number")
        }

        fn visit_u64<E: de::Error>(self, n: u64) -> Result<T, E> {
            T::try_from(n).map_err(|_| {
                let expected = format!("a whole number up to {}", T::MAX);
                E::invalid_value(Unexpected::Unsigned(n), &expected.as_str())
            })
        }

        fn visit_i64<E: de::Error>(self, n: i64) -> Result<T, E> {
            match u64::try_from(n) {
                Ok(n) => self.visit_u64(n),
                Err(_) => Err(E::invalid_value(
                    Unexpected::Signed(n),
                    &"a whole number of 0 or more",
                )),
            }
        }
    }

    deserializer.deserialize_u64(WholeNumberVisitor(PhantomData))
}

/// A number, whole or not, as an `f64`; serde's own message would call it `f64`.
struct Number(f64);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NumberVisitor;

        impl Visitor<'_> for NumberVisitor {
            type Value = f64;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
                Ok(v)
            }

            // A whole number beyond 2^53 becomes the nearest f64, as it does written with a
            // fraction.
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
                Ok(v as f64)
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
                Ok(v as f64)
            }
        }

        deserializer.deserialize_f64(NumberVisitor).map(Self)
    }
}

fn number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Number::deserialize(deserializer).map(|n| n.0)
}

/// A matrix field: `null` for absent, otherwise an array of rows, each an array of numbers.
/// Rows of different lengths are refused later, by [`Scenario::to_inputs`].
fn matrix<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<Vec<f64>>>, D::Error> {
    let rows = Option::<Vec<Vec<Number>>>::deserialize(deserializer)?;
    Ok(rows.map(|rows| {
        rows.into_iter()
            .map(|row| row.into_iter().map(|n| n.0).collect())
            .collect()
    }))
}

/// [`ScaleMode`] as its key, such as `"sqrt_head_dim"`. The attention core knows nothing of
/// file formats, so the mapping lives here rather than in a derive on the enum.
mod scale_key {
    use super::{de, fmt, Deserializer, ScaleMode, Serializer, Visitor};

    pub fn serialize<S: Serializer>(scale: &ScaleMode, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(scale.key())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ScaleMode, D::Error> {
        struct KeyVisitor;

        impl Visitor<'_> for KeyVisitor {
            type Value = ScaleMode;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let keys: Vec<String> = ScaleMode::ALL
                    .iter()
                    .map(|mode| format!("`{}`", mode.key()))
                    .collect();
                write!(f, "one of {}", keys.join(", "))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<ScaleMode, E> {
                text.parse().map_err(E::custom)
            }
        }

        deserializer.deserialize_str(KeyVisitor)
    }
}

fn config_field(error: &AttentionError) -> &'static str {
    match error {
        AttentionError::DModelOutOfRange { .. } => "d_model",
        AttentionError::BadTemperature { .. } => "temperature",
        _ => "n_heads",
    }
}

/// The rows of a matrix, as nested vectors.
pub fn rows_of(m: &Matrix) -> Vec<Vec<f64>> {
    m.row_iter().map(|r| r.iter().copied().collect()).collect()
}

/// A matrix from rows, checked to be rectangular and of the `expected` shape.
fn to_matrix(
    field: &'static str,
    rows: &[Vec<f64>],
    expected: (usize, usize),
) -> Result<Matrix, ScenarioError> {
    let width = rows.first().map_or(0, Vec::len);
    if let Some((row, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != width) {
        return Err(ScenarioError::RaggedMatrix {
            field,
            row,
            len: r.len(),
            expected: width,
        });
    }
    if (rows.len(), width) != expected {
        return Err(ScenarioError::Invalid {
            field,
            error: AttentionError::WrongShape {
                name: field.to_string(),
                expected,
                found: (rows.len(), width),
            },
        });
    }
    Ok(Matrix::from_fn(expected.0, expected.1, |i, j| rows[i][j]))
}

/// The scenario file of the app's model, and back.
impl Scenario {
    /// The model this scenario describes; explicit embeddings become edited rows.
    pub fn to_model(&self) -> Result<Model, ScenarioError> {
        let inputs = self.to_inputs()?;
        Ok(Model::from_inputs(
            &self.sentence,
            inputs,
            self.embeddings.is_some(),
        ))
    }

    /// The scenario that restores `model`.
    pub fn from_model(model: &Model) -> Self {
        Self::from_inputs(&model.sentence, &model.inputs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::EditTarget;

    #[test]
    fn the_default_scenario_round_trips_through_json() {
        let scenario = Scenario::default();
        let back = Scenario::from_json(&scenario.to_json()).unwrap();
        assert_eq!(back, scenario);
        assert_eq!(back.to_inputs().unwrap().tokens, ["I", "am", "hungry"]);
    }

    #[test]
    fn missing_optional_fields_take_defaults() {
        let (scenario, inputs) =
            Scenario::parse_inputs(r#"{"version": 1, "sentence": "the cat sat"}"#).unwrap();
        assert_eq!(scenario.d_model, 4);
        assert_eq!(scenario.scale, ScaleMode::SqrtHeadDim);
        assert_eq!(inputs.weights, Weights::new(Init::Default, 4));
        assert_eq!(inputs.embeddings.shape(), (3, 4));
    }

    #[test]
    fn errors_name_the_field_that_is_wrong() {
        let cases = [
            (
                r#"{"version": 1, "sentence": "a b", "d_model": 6, "n_heads": 4}"#,
                "n_heads",
            ),
            (
                r#"{"version": 1, "sentence": "a b", "d_model": 40}"#,
                "d_model",
            ),
            (r#"{"version": 1, "sentence": "   "}"#, "sentence"),
            (
                r#"{"version": 1, "sentence": "a", "scale": "sqrt"}"#,
                "scale mode",
            ),
            (
                r#"{"version": 1, "sentence": "a", "w_q": [[1, 2], [3]]}"#,
                "w_q",
            ),
            (
                r#"{"version": 1, "sentence": "a", "w_k": [[1, 2], [3, 4]]}"#,
                "w_k",
            ),
            (
                r#"{"version": 1, "sentence": "a", "embeddings": [[1, 2, 3, 4], [1, 2, 3, 4]]}"#,
                "embeddings",
            ),
            (
                r#"{"version": 1, "sentence": "a", "colour": "red"}"#,
                "colour",
            ),
            (
                r#"{"version": 1, "sentence": "a", "temperature": 0}"#,
                "temperature",
            ),
            (r#"{"version": 1, "sentence": "a", "w_v": "oops"}"#, "w_v"),
            (r#"{"version": 1, "sentence": "a", "causal": 3}"#, "causal"),
            (r#"{"version": "1", "sentence": "a"}"#, "version"),
        ];
        for (json, field) in cases {
            let err = Scenario::parse_inputs(json).unwrap_err().to_string();
            assert!(err.contains(field), "{json}: {err}");
        }
    }

    #[test]
    fn wrong_types_say_which_field_what_was_expected_and_what_was_found() {
        let cases = [
            (
                r#"{"version": 1, "sentence": "a", "causal": 3}"#,
                "field `causal`: invalid type: integer `3`, expected a boolean at line 1 column 43",
            ),
            (
                r#"{"version": 1, "sentence": "a", "d_model": 4.0}"#,
                "field `d_model`: invalid type: floating point `4.0`, expected a whole number at line 1 column 46",
            ),
            (
                r#"{"version": 1, "sentence": "a", "n_heads": -1}"#,
                "field `n_heads`: invalid value: integer `-1`, expected a whole number of 0 or more at line 1 column 45",
            ),
            (
                r#"{"version": 5000000000, "sentence": "a"}"#,
                "field `version`: invalid value: integer `5000000000`, expected a whole number up to 4294967295 at line 1 column 22",
            ),
            (
                r#"{"version": 1, "sentence": ["a"]}"#,
                "field `sentence`: invalid type: sequence, expected a string at line 1 column 27",
            ),
            (
                r#"{"version": 1, "sentence": "a", "title": {}}"#,
                "field `title`: invalid type: map, expected a string at line 1 column 41",
            ),
            (
                r#"{"version": 1, "sentence": "a", "temperature": null}"#,
                "field `temperature`: invalid type: null, expected a number at line 1 column 51",
            ),
            (
                r#"{"version": 1, "sentence": "a", "scale": true}"#,
                "field `scale`: invalid type: boolean `true`, expected one of `sqrt_head_dim`, `sqrt_seq_len`, `none` at line 1 column 45",
            ),
            (
                r#"{"version": 1, "sentence": "a", "scale": "sqrt"}"#,
                "field `scale`: unknown scale mode “sqrt”: use sqrt_head_dim, sqrt_seq_len or none at line 1 column 47",
            ),
            (
                r#"{"version": 1, "sentence": "a", "w_o": [[1], 2]}"#,
                "field `w_o[1]`: invalid type: integer `2`, expected a sequence at line 1 column 46",
            ),
            (
                r#"{"version": 1, "sentence": "a", "embeddings": [[1, null]]}"#,
                "field `embeddings[0][1]`: invalid type: null, expected a number at line 1 column 55",
            ),
            (
                r#"{"version": 1, "sentence": "a", "version": 1}"#,
                "duplicate field `version` at line 1 column 41",
            ),
            (r#"{"version": 1}"#, "missing field `sentence` at line 1 column 14"),
            (r#"{"sentence": "a"}"#, "missing field `version` at line 1 column 17"),
            (
                r#"[1, "a"]"#,
                "invalid type: sequence, expected an object of named fields at line 1 column 0",
            ),
            (
                "{\"version\": 1,\n \"sentence\": \"a\",\n}",
                "trailing comma at line 3 column 1",
            ),
            (
                r#"{"version": 1, "sentence": "a"} {}"#,
                "trailing characters at line 1 column 33",
            ),
        ];
        for (json, message) in cases {
            let err = Scenario::from_json(json).unwrap_err();
            assert_eq!(
                err,
                ScenarioError::Json(message.to_string()),
                "{json}: {err}"
            );
        }
        let err = Scenario::from_json(r#"{"version": 1, "sentence": "a", "colour": 1}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("This is not a valid scenario: unknown field `colour`, expected one of `version`, `title`,"),
            "{err}"
        );
    }

    #[test]
    fn a_wrong_type_deep_in_a_matrix_is_named_by_its_path() {
        let json = r#"{"version": 1, "sentence": "a b", "d_model": 4,
            "w_q": [[1, 2, 3, 4], [5, 6, "7", 8], [0, 0, 0, 0], [0, 0, 0, 0]]}"#;
        let err = Scenario::from_json(json).unwrap_err().to_string();
        assert!(
            err.starts_with(
                r#"This is not a valid scenario: field `w_q[1][2]`: invalid type: string "7", expected a number at line 2"#
            ),
            "{err}"
        );
    }

    #[test]
    fn a_repeated_field_is_refused_wherever_it_is() {
        for (json, field) in [
            (
                r#"{"version": 1, "version": 1, "sentence": "a"}"#,
                "version",
            ),
            (
                r#"{"version": 1, "sentence": "a", "title": "x", "title": null}"#,
                "title",
            ),
            (
                r#"{"version": 1, "sentence": "a", "w_q": null, "w_q": [[1]]}"#,
                "w_q",
            ),
        ] {
            let err = Scenario::from_json(json).unwrap_err().to_string();
            assert!(
                err.contains(&format!("duplicate field `{field}`")),
                "{json}: {err}"
            );
        }
    }

    #[test]
    fn a_text_over_one_megabyte_is_refused_before_it_is_read() {
        let scenario = r#"{"version": 1, "sentence": "a"}"#;
        let padded = |len: usize| format!("{scenario}{}", " ".repeat(len - scenario.len()));
        assert!(Scenario::from_json(&padded(MAX_SCENARIO_BYTES)).is_ok());
        let err = Scenario::from_json(&padded(MAX_SCENARIO_BYTES + 1)).unwrap_err();
        assert_eq!(err, ScenarioError::TooLarge { bytes: 1_048_577 });
        assert_eq!(
            err.to_string(),
            "This scenario is 1048577 bytes long; a scenario is at most 1 MB (1048576 bytes)."
        );
        // Even when the text is not JSON at all.
        let err = Scenario::from_json(&"[".repeat(MAX_SCENARIO_BYTES + 1)).unwrap_err();
        assert!(matches!(err, ScenarioError::TooLarge { .. }), "{err}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(10_000);
        let objects = r#"{"a":"#.repeat(10_000);
        for json in [
            deep.clone(),
            objects.clone(),
            format!(r#"{{"version": 1, "sentence": "a", "w_q": {deep}"#),
            format!(r#"{{"version": 1, "sentence": {deep}"#),
            format!(r#"{{"version": 1, "sentence": "a", "extra": {objects}"#),
            format!(r#"{{"version": 1, "sentence": "a", "title": {objects}"#),
        ] {
            assert!(
                matches!(Scenario::from_json(&json), Err(ScenarioError::Json(_))),
                "{}",
                &json[..60]
            );
        }
    }

    #[test]
    fn a_long_hostile_key_or_string_is_not_echoed_in_full() {
        let long = "x".repeat(100_000);
        for json in [
            format!(r#"{{"version": 1, "sentence": "a", "{long}": 1}}"#),
            format!(r#"{{"version": "{long}", "sentence": "a"}}"#),
            format!(r#"{{"version": 1, "sentence": "a", "scale": "{long}"}}"#),
        ] {
            let err = Scenario::from_json(&json).unwrap_err().to_string();
            assert!(err.chars().count() < 400, "{} characters", err.len());
            assert!(
                err.contains("…") && err.contains(" at line 1 column "),
                "{err}"
            );
        }
    }

    #[test]
    fn floats_read_back_bit_for_bit() {
        let awkward = [
            5e-324,
            -5e-324,
            2.2250738585072014e-308,
            1.7976931348623157e308,
            -1.7976931348623157e308,
            1e300,
            0.1 + 0.2,
            1.0 / 3.0,
            std::f64::consts::PI,
            123456789012345680.0,
            -1.1893854837400641,
            0.0,
            -0.0,
        ];
        // And many bit patterns, spread over the whole range.
        let mut bits: u64 = 0x9E37_79B9_7F4A_7C15;
        let spread = std::iter::repeat_with(|| {
            bits = bits
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            f64::from_bits(bits)
        })
        .filter(|v| v.is_finite())
        .take(20_000);
        let values: Vec<f64> = awkward.into_iter().chain(spread).collect();
        let scenario = Scenario {
            temperature: -0.0,
            embeddings: Some(values.chunks(100).map(<[f64]>::to_vec).collect()),
            ..Scenario::default()
        };
        let back = Scenario::from_json(&scenario.to_json()).unwrap();
        assert!(back.temperature.is_sign_negative());
        let read: Vec<f64> = back.embeddings.unwrap().into_iter().flatten().collect();
        assert_eq!(read.len(), values.len());
        for (r, v) in read.iter().zip(&values) {
            assert_eq!(r.to_bits(), v.to_bits(), "{v:?} read back as {r:?}");
        }
        // Whole numbers are read as floats too, and a huge one as the nearest float.
        let json = r#"{"version": 1, "sentence": "a", "w_q": [[-0, 7, 123456789012345678901234]]}"#;
        let row = &Scenario::from_json(json).unwrap().w_q.unwrap()[0];
        assert!(row[0] == 0.0 && row[0].is_sign_negative());
        assert_eq!(row[1..], [7.0, 123456789012345678901234.0]);
    }

    #[test]
    fn numbers_that_are_not_finite_are_written_as_null_and_not_read_back() {
        let scenario = Scenario {
            temperature: f64::INFINITY,
            w_q: Some(vec![vec![f64::NAN, f64::NEG_INFINITY]]),
            ..Scenario::default()
        };
        let json = scenario.to_json();
        assert!(json.contains("\"temperature\": null"), "{json}");
        assert!(json.contains("[\n      null,\n      null\n    ]"), "{json}");
        assert!(Scenario::from_json(&json).is_err());
    }

    #[test]
    fn the_field_list_is_the_order_fields_are_written_in() {
        let scenario = Scenario {
            title: Some("t".into()),
            caption: Some("c".into()),
            ..Scenario::default()
        };
        let json = scenario.to_json();
        let at: Vec<usize> = FIELDS
            .iter()
            .map(|f| json.find(&format!("\n  \"{f}\": ")).unwrap_or(usize::MAX))
            .collect();
        assert!(at.iter().all(|&i| i < json.len()), "{json}");
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
        assert_eq!(json.matches("\n  \"").count(), FIELDS.len());
    }

    #[test]
    fn null_leaves_an_optional_field_out_and_whole_numbers_count_as_floats() {
        let json = r#"{"version": 1, "sentence": "a b", "title": null, "w_q": null,
            "temperature": 2, "embeddings": [[1, 2, 3, 4], [0.5, -1, 1e-3, 0]]}"#;
        let scenario = Scenario::from_json(json).unwrap();
        assert_eq!((scenario.title, scenario.w_q), (None, None));
        assert_eq!(scenario.temperature, 2.0);
        assert_eq!(scenario.embeddings.unwrap()[1], [0.5, -1.0, 0.001, 0.0]);
    }

    #[test]
    fn the_json_lists_fields_in_order_and_leaves_out_absent_ones() {
        let scenario = Scenario {
            title: Some("T \"q\"".into()),
            embeddings: None,
            w_k: None,
            w_v: None,
            w_o: None,
            w_q: Some(vec![vec![1.0, -0.5], vec![0.0, 2.0]]),
            d_model: 2,
            n_heads: 1,
            ..Scenario::default()
        };
        let expected = r#"{
  "version": 1,
  "title": "T \"q\"",
  "sentence": "I am hungry",
  "d_model": 2,
  "n_heads": 1,
  "causal": false,
  "positional_encoding": false,
  "scale": "sqrt_head_dim",
  "temperature": 1.0,
  "w_q": [
    [
      1.0,
      -0.5
    ],
    [
      0.0,
      2.0
    ]
  ]
}"#;
        assert_eq!(scenario.to_json(), expected);
        assert_eq!(Scenario::from_json(expected).unwrap(), scenario);
    }

    #[test]
    fn a_future_version_is_refused_with_a_reason() {
        let err = Scenario::from_json(r#"{"version": 2, "sentence": "a"}"#).unwrap_err();
        assert_eq!(err, ScenarioError::UnsupportedVersion(2));
        assert!(err.to_string().contains("newer"));
    }

    #[test]
    fn a_model_survives_a_scenario_round_trip() {
        let mut model = Model::default();
        model.set_cell(EditTarget::Embeddings, 2, 3, -0.5).unwrap();
        model.config.causal = true;
        let back = Scenario::from_model(&model).to_model().unwrap();
        assert_eq!(back.trace().unwrap(), model.trace().unwrap());
    }
}
