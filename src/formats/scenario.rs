//! The versioned JSON scenario: everything a user can set, as the web app imports and exports it
//! and the CLI reads it.

use crate::attention::{
    tokenize, toy_embeddings, AttentionError, Config, Init, Inputs, Matrix, ScaleMode, WeightName,
    Weights,
};
use crate::json::{self, Value};
use crate::state::Model;
use std::fmt;

/// The scenario format version this build reads and writes.
pub const SCENARIO_VERSION: u32 = 1;

/// The sentence of the default scenario.
pub use crate::state::DEFAULT_SENTENCE;

/// Everything a user can set. Matrices are row-major arrays of rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Format version; this build reads version 1. Required.
    pub version: u32,
    /// A name for menus (presets); left out of the JSON when absent.
    pub title: Option<String>,
    /// What to look for (presets); left out of the JSON when absent.
    pub caption: Option<String>,
    /// The sentence to tokenize. Required.
    pub sentence: String,
    /// Width of token vectors, 2 to 16; 4 when absent.
    pub d_model: usize,
    /// Number of heads, 1 to 8, dividing d_model; 2 when absent.
    pub n_heads: usize,
    /// Causal mask on or off; off when absent.
    pub causal: bool,
    /// Sinusoidal positional encoding on or off; off when absent.
    pub positional_encoding: bool,
    /// `sqrt_head_dim` (default), `sqrt_seq_len` or `none`.
    pub scale: ScaleMode,
    /// Softmax temperature, 0.01 to 100; 1 when absent.
    pub temperature: f64,
    /// Token embeddings, seq_len × d_model; the toy embeddings when absent.
    pub embeddings: Option<Vec<Vec<f64>>>,
    /// Query projection, d_model × d_model; the defaults when absent.
    pub w_q: Option<Vec<Vec<f64>>>,
    /// Key projection, d_model × d_model.
    pub w_k: Option<Vec<Vec<f64>>>,
    /// Value projection, d_model × d_model.
    pub w_v: Option<Vec<Vec<f64>>>,
    /// Output projection, d_model × d_model.
    pub w_o: Option<Vec<Vec<f64>>>,
}

/// The fields of scenario JSON, in the order [`Scenario::to_json`] writes them.
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
            // Formatting the error with Display keeps float Debug code out of the web bundle.
            .unwrap_or_else(|e| panic!("the default sentence and config are invalid: {e}"));
        Self::from_inputs(DEFAULT_SENTENCE, &inputs)
    }
}

impl Scenario {
    /// Parses scenario JSON: an object with `version` and `sentence` and any of the other
    /// fields, each of its proper type. Absent fields take their defaults and `null` counts as
    /// absent for `title`, `caption` and the matrices; unknown and repeated fields are refused.
    /// An error names the field that is wrong, or the line and column of a syntax error. The
    /// values themselves are checked by [`Scenario::to_inputs`].
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        let value = json::parse(text).map_err(|e| ScenarioError::Json(e.to_string()))?;
        let scenario = Self::from_value(&value).map_err(ScenarioError::Json)?;
        if scenario.version > SCENARIO_VERSION || scenario.version == 0 {
            return Err(ScenarioError::UnsupportedVersion(scenario.version));
        }
        Ok(scenario)
    }

    /// Reads the fields of a parsed scenario; the error message names the field.
    fn from_value(value: &Value) -> Result<Self, String> {
        let Some(members) = value.as_object() else {
            return Err(format!(
                "expected an object of named fields, found {}",
                describe(value)
            ));
        };
        let config = Config::default();
        let mut scenario = Self {
            version: 0,
            title: None,
            caption: None,
            sentence: String::new(),
            d_model: config.d_model,
            n_heads: config.n_heads,
            causal: false,
            positional_encoding: false,
            scale: ScaleMode::default(),
            temperature: 1.0,
            embeddings: None,
            w_q: None,
            w_k: None,
            w_v: None,
            w_o: None,
        };
        let mut seen: Vec<&str> = Vec::new();
        for (key, value) in members {
            let Some(&field) = FIELDS.iter().find(|f| *f == key) else {
                return Err(format!(
                    "unknown field `{}`, expected one of {}",
                    shorten(key),
                    FIELDS.map(|f| format!("`{f}`")).join(", ")
                ));
            };
            if seen.contains(&field) {
                return Err(format!("duplicate field `{field}`"));
            }
            seen.push(field);
            match field {
                "version" => scenario.version = whole_number(field, value, u32::MAX.into())?,
                "title" => scenario.title = optional_string(field, value)?,
                "caption" => scenario.caption = optional_string(field, value)?,
                "sentence" => scenario.sentence = string(field, value)?,
                "d_model" => scenario.d_model = whole_number(field, value, usize::MAX as u64)?,
                "n_heads" => scenario.n_heads = whole_number(field, value, usize::MAX as u64)?,
                "causal" => scenario.causal = boolean(field, value)?,
                "positional_encoding" => scenario.positional_encoding = boolean(field, value)?,
                "scale" => scenario.scale = scale(field, value)?,
                "temperature" => scenario.temperature = number(field, value)?,
                "embeddings" => scenario.embeddings = matrix(field, value)?,
                "w_q" => scenario.w_q = matrix(field, value)?,
                "w_k" => scenario.w_k = matrix(field, value)?,
                "w_v" => scenario.w_v = matrix(field, value)?,
                _ => scenario.w_o = matrix(field, value)?,
            }
        }
        for required in ["version", "sentence"] {
            if !seen.contains(&required) {
                return Err(format!("missing field `{required}`"));
            }
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
    /// `title`, `caption` and the matrices left out when absent. No final line break.
    pub fn to_json(&self) -> String {
        json::to_string_pretty(&self.to_value())
    }

    /// The scenario as a JSON object, its fields in the order of [`FIELDS`].
    fn to_value(&self) -> Value {
        let mut members: Vec<(&str, Value)> = vec![("version", self.version.into())];
        if let Some(title) = &self.title {
            members.push(("title", title.as_str().into()));
        }
        if let Some(caption) = &self.caption {
            members.push(("caption", caption.as_str().into()));
        }
        members.extend([
            ("sentence", self.sentence.as_str().into()),
            ("d_model", self.d_model.into()),
            ("n_heads", self.n_heads.into()),
            ("causal", self.causal.into()),
            ("positional_encoding", self.positional_encoding.into()),
            ("scale", self.scale.key().into()),
            ("temperature", self.temperature.into()),
        ]);
        let matrices = [
            ("embeddings", &self.embeddings),
            ("w_q", &self.w_q),
            ("w_k", &self.w_k),
            ("w_v", &self.w_v),
            ("w_o", &self.w_o),
        ];
        for (name, rows) in matrices {
            if let Some(rows) = rows {
                members.push((name, rows_value(rows)));
            }
        }
        Value::object(members)
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

/// A matrix as a JSON array of rows of numbers.
fn rows_value(rows: &[Vec<f64>]) -> Value {
    rows.iter()
        .map(|row| row.iter().copied().collect::<Value>())
        .collect()
}

/// What a JSON value is, for an error message: the value itself when short, its kind otherwise.
fn describe(value: &Value) -> String {
    match value {
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
        Value::String(text) => json::to_string(&Value::String(shorten(text))),
        other => json::to_string(other),
    }
}

/// `text`, cut to its first 40 characters and an ellipsis when longer.
fn shorten(text: &str) -> String {
    const MAX_CHARS: usize = 40;
    match text.char_indices().nth(MAX_CHARS) {
        Some((end, _)) => format!("{}…", text.get(..end).unwrap_or(text)),
        None => text.to_string(),
    }
}

/// "field `x`: expected …, found …".
fn wrong_type(field: &str, expected: &str, found: &Value) -> String {
    mismatch(&format!("field `{field}`"), expected, found)
}

/// "`place`: expected …, found …", where `place` says which field, and where in it.
fn mismatch(place: &str, expected: &str, found: &Value) -> String {
    format!("{place}: expected {expected}, found {}", describe(found))
}

/// A whole number from 0 to `max`, the largest value of `T`.
fn whole_number<T: TryFrom<i64>>(field: &str, value: &Value, max: u64) -> Result<T, String> {
    let Some(n) = value.as_i64() else {
        return Err(wrong_type(field, "a whole number", value));
    };
    T::try_from(n).map_err(|_| {
        if n < 0 {
            wrong_type(field, "a whole number of 0 or more", value)
        } else {
            wrong_type(field, &format!("a whole number up to {max}"), value)
        }
    })
}

fn boolean(field: &str, value: &Value) -> Result<bool, String> {
    value
        .as_bool()
        .ok_or_else(|| wrong_type(field, "true or false", value))
}

fn number(field: &str, value: &Value) -> Result<f64, String> {
    value
        .as_f64()
        .ok_or_else(|| wrong_type(field, "a number", value))
}

fn string(field: &str, value: &Value) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| wrong_type(field, "a string", value))
}

fn optional_string(field: &str, value: &Value) -> Result<Option<String>, String> {
    match value {
        Value::Null => Ok(None),
        _ => string(field, value).map(Some),
    }
}

fn scale(field: &str, value: &Value) -> Result<ScaleMode, String> {
    let Some(text) = value.as_str() else {
        return Err(wrong_type(
            field,
            "\"sqrt_head_dim\", \"sqrt_seq_len\" or \"none\"",
            value,
        ));
    };
    text.parse().map_err(|e| format!("field `{field}`: {e}"))
}

/// A matrix field: `null` for absent, otherwise an array of rows, each an array of numbers.
/// Rows of different lengths are refused later, by [`Scenario::to_inputs`].
fn matrix(field: &str, value: &Value) -> Result<Option<Vec<Vec<f64>>>, String> {
    let rows = match value {
        Value::Null => return Ok(None),
        Value::Array(rows) => rows,
        other => return Err(wrong_type(field, "an array of rows of numbers", other)),
    };
    let read_row = |(i, row): (usize, &Value)| -> Result<Vec<f64>, String> {
        let Some(cells) = row.as_array() else {
            return Err(mismatch(
                &format!("field `{field}`, row {}", i + 1),
                "an array of numbers",
                row,
            ));
        };
        cells
            .iter()
            .enumerate()
            .map(|(j, cell)| {
                cell.as_f64().ok_or_else(|| {
                    mismatch(
                        &format!("field `{field}`, row {}, column {}", i + 1, j + 1),
                        "a number",
                        cell,
                    )
                })
            })
            .collect()
    };
    rows.iter()
        .enumerate()
        .map(read_row)
        .collect::<Result<_, _>>()
        .map(Some)
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
                "field `causal`: expected true or false, found 3",
            ),
            (
                r#"{"version": 1, "sentence": "a", "d_model": 4.0}"#,
                "field `d_model`: expected a whole number, found 4.0",
            ),
            (
                r#"{"version": 1, "sentence": "a", "n_heads": -1}"#,
                "field `n_heads`: expected a whole number of 0 or more, found -1",
            ),
            (
                r#"{"version": 5000000000, "sentence": "a"}"#,
                "field `version`: expected a whole number up to 4294967295, found 5000000000",
            ),
            (
                r#"{"version": 1, "sentence": ["a"]}"#,
                "field `sentence`: expected a string, found an array",
            ),
            (
                r#"{"version": 1, "sentence": "a", "title": {}}"#,
                "field `title`: expected a string, found an object",
            ),
            (
                r#"{"version": 1, "sentence": "a", "temperature": null}"#,
                "field `temperature`: expected a number, found null",
            ),
            (
                r#"{"version": 1, "sentence": "a", "scale": true}"#,
                r#"field `scale`: expected "sqrt_head_dim", "sqrt_seq_len" or "none", found true"#,
            ),
            (
                r#"{"version": 1, "sentence": "a", "w_o": [[1], 2]}"#,
                "field `w_o`, row 2: expected an array of numbers, found 2",
            ),
            (
                r#"{"version": 1, "sentence": "a", "embeddings": [[1, null]]}"#,
                "field `embeddings`, row 1, column 2: expected a number, found null",
            ),
            (
                r#"{"version": 1, "sentence": "a", "version": 1}"#,
                "duplicate field `version`",
            ),
            (r#"{"version": 1}"#, "missing field `sentence`"),
            (r#"{"sentence": "a"}"#, "missing field `version`"),
            (
                r#"[1, "a"]"#,
                "expected an object of named fields, found an array",
            ),
            (
                "{\"version\": 1,\n \"sentence\": \"a\",\n}",
                "trailing comma before `}` at line 3, column 1",
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
