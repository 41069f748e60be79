//! The versioned JSON scenario: everything a user can set, as the web app imports and exports it
//! and the CLI reads it.

mod de;

use crate::attention::{
    tokenize, toy_embeddings, AttentionError, Config, Init, Inputs, Matrix, ScaleMode, WeightName,
    Weights,
};
use crate::state::Model;
use de::{
    default_d_model, default_n_heads, default_temperature, json_error, matrix, message, number,
    scale_key, whole_number, ObjectOnly,
};
use serde::{Deserialize, Serialize};

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
