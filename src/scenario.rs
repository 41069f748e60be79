//! The versioned JSON scenario: everything a user can set, as the web app imports and exports it
//! and the CLI reads it.

use crate::attention::{
    tokenize, toy_embeddings, AttentionError, Config, Init, Inputs, Matrix, ScaleMode, WeightName,
    Weights,
};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The scenario format version this build reads and writes.
pub const SCENARIO_VERSION: u32 = 1;

/// The sentence of the default scenario.
pub const DEFAULT_SENTENCE: &str = "I am hungry";

/// Everything a user can set. Matrices are row-major arrays of rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Format version; this build reads version 1.
    pub version: u32,
    /// A name for menus (presets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What to look for (presets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    /// The sentence to tokenize.
    pub sentence: String,
    /// Width of token vectors, 2 to 16.
    #[serde(default = "default_d_model")]
    pub d_model: usize,
    /// Number of heads, 1 to 8, dividing d_model.
    #[serde(default = "default_n_heads")]
    pub n_heads: usize,
    /// Causal mask on or off.
    #[serde(default)]
    pub causal: bool,
    /// Sinusoidal positional encoding on or off.
    #[serde(default)]
    pub positional_encoding: bool,
    /// `sqrt_head_dim` (default), `sqrt_seq_len` or `none`.
    #[serde(default, with = "scale_serde")]
    pub scale: ScaleMode,
    /// Softmax temperature, 0.01 to 100.
    #[serde(default = "default_temperature")]
    pub temperature: f64,
    /// Token embeddings, seq_len × d_model; the toy embeddings when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<Vec<Vec<f64>>>,
    /// Query projection, d_model × d_model; the defaults when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w_q: Option<Vec<Vec<f64>>>,
    /// Key projection, d_model × d_model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w_k: Option<Vec<Vec<f64>>>,
    /// Value projection, d_model × d_model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w_v: Option<Vec<Vec<f64>>>,
    /// Output projection, d_model × d_model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w_o: Option<Vec<Vec<f64>>>,
}

fn default_d_model() -> usize {
    Config::default().d_model
}
fn default_n_heads() -> usize {
    Config::default().n_heads
}
fn default_temperature() -> f64 {
    1.0
}

mod scale_serde {
    use crate::attention::ScaleMode;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(mode: &ScaleMode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(mode.key())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ScaleMode, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Why a scenario could not be used.
#[derive(Debug, Clone, PartialEq)]
pub enum ScenarioError {
    /// Not valid JSON, or a field of the wrong type; the message names the field.
    Json(String),
    /// Written by a newer version of attention-lens.
    UnsupportedVersion(u32),
    /// A matrix's rows have different lengths.
    RaggedMatrix {
        field: &'static str,
        row: usize,
        len: usize,
        expected: usize,
    },
    /// The values make no valid attention layer.
    Invalid {
        field: &'static str,
        error: AttentionError,
    },
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json(message) => write!(f, "This is not a valid scenario: {message}."),
            Self::UnsupportedVersion(v) => write!(
                f,
                "This scenario is version {v}, made by a newer attention-lens; this one reads version {SCENARIO_VERSION}."
            ),
            Self::RaggedMatrix {
                field,
                row,
                len,
                expected,
            } => write!(
                f,
                "Field `{field}`: row {} has {len} numbers but row 1 has {expected}; every row needs the same length.",
                row + 1
            ),
            Self::Invalid { field, error } => write!(f, "Field `{field}`: {error}"),
        }
    }
}

impl std::error::Error for ScenarioError {}

impl Default for Scenario {
    /// The default scenario, every matrix written out, ready to edit.
    fn default() -> Self {
        let config = Config::default();
        let weights = Weights::new(Init::Default, config.d_model);
        let inputs = Inputs::from_sentence(DEFAULT_SENTENCE, config, weights)
            .expect("the default sentence and config are valid");
        Self::from_inputs(DEFAULT_SENTENCE, &inputs)
    }
}

impl Scenario {
    /// Parses scenario JSON; every field is checked by [`Scenario::to_inputs`].
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        let scenario: Scenario = serde_json::from_str(text)
            .map_err(|e| ScenarioError::Json(name_the_field(text, e.to_string())))?;
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

    /// Pretty JSON, as exported.
    pub fn to_json(&self) -> String {
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

/// serde names a missing or unknown field but not a field of the wrong type; find that field
/// by reading each one alone into an otherwise minimal scenario.
fn name_the_field(text: &str, message: String) -> String {
    let Ok(serde_json::Value::Object(fields)) = serde_json::from_str::<serde_json::Value>(text)
    else {
        return message;
    };
    for (key, value) in &fields {
        let mut probe = serde_json::Map::new();
        probe.insert("version".into(), 1.into());
        probe.insert("sentence".into(), "a".into());
        probe.insert(key.clone(), value.clone());
        if let Err(e) = serde_json::from_value::<Scenario>(serde_json::Value::Object(probe)) {
            return format!("field `{key}`: {e}");
        }
    }
    message
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_future_version_is_refused_with_a_reason() {
        let err = Scenario::from_json(r#"{"version": 2, "sentence": "a"}"#).unwrap_err();
        assert_eq!(err, ScenarioError::UnsupportedVersion(2));
        assert!(err.to_string().contains("newer"));
    }
}
