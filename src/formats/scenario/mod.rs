//! The versioned JSON scenario: everything a user can set, as the web app imports and exports it
//! and the CLI reads it.

mod de;
mod training;

use crate::attention::{
    tokenize, toy_embeddings, Activation, AttentionError, Block, BlockParam, Config, Init, Inputs,
    Matrix, Norm, NormType, Pairing, Rope, ScaleMode, Source, WeightName, Weights, ROPE_THETA,
};
use crate::state::Model;
use de::{
    default_d_model, default_n_heads, default_temperature, json_error, matrix, message, number,
    optional_object, optional_whole_number, scale_key, vector, whole_number, ObjectOnly,
};
use serde::{Deserialize, Serialize};
pub use training::{training_field, TargetField, TrainingFields};

/// The newest scenario format version this build reads and writes. Version 2 adds `source`,
/// `source_embeddings` and `block`, version 3 adds `training`, version 4 `rope`, `n_kv_heads`,
/// `window` and the block's `norm_type`, `w_gate` and `"activation": "swiglu"`; a scenario is
/// written with the lowest version that holds its fields (1 without any of them), so earlier
/// builds read it.
pub const SCENARIO_VERSION: u32 = 4;

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
    /// Format version, 1 to [`SCENARIO_VERSION`]. Required.
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
    /// Version 4: rotary positions on queries and keys; off when absent or `null`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "optional_object"
    )]
    pub rope: Option<RopeFields>,
    /// Version 4: key/value heads, dividing n_heads; one per head when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "optional_whole_number"
    )]
    pub n_kv_heads: Option<usize>,
    /// Version 4: the sliding window under the causal mask, at least 1; off when absent or
    /// `null`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "optional_whole_number"
    )]
    pub window: Option<usize>,
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
    /// Version 2: the source sentence of cross-attention; self-attention when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Version 2: the source's token embeddings, src_len × d_model; the toy embeddings when
    /// absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "matrix"
    )]
    pub source_embeddings: Option<Vec<Vec<f64>>>,
    /// Version 2: the transformer block around attention; no block when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "optional_object"
    )]
    pub block: Option<BlockFields>,
    /// Version 3: what training aims at and how it steps; see [`Scenario::training`]. The
    /// forward pass does not read it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "optional_object"
    )]
    pub training: Option<TrainingFields>,
}

/// The `rope` object of a version 4 scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RopeFields {
    /// The base θ, greater than 1; 10000 when absent.
    #[serde(default = "default_theta", deserialize_with = "number")]
    pub theta: f64,
    /// `half` (default) or `interleaved`.
    #[serde(default = "default_pairing")]
    pub pairing: String,
}

fn default_theta() -> f64 {
    ROPE_THETA
}

fn default_pairing() -> String {
    Pairing::Half.key().to_string()
}

impl RopeFields {
    /// The fields of `rope`.
    pub fn from_rope(rope: &Rope) -> Self {
        Self {
            theta: rope.theta,
            pairing: rope.pairing.key().to_string(),
        }
    }

    /// The rotary positions these fields name.
    pub fn to_rope(&self) -> Result<Rope, ScenarioError> {
        let pairing = Pairing::from_key(&self.pairing).ok_or_else(|| {
            ScenarioError::Json(format!(
                "field `rope.pairing`: unknown pairing “{}”: use half or interleaved",
                self.pairing
            ))
        })?;
        Ok(Rope {
            theta: self.theta,
            pairing,
        })
    }
}

/// The `block` object of a version 2 scenario; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockFields {
    /// `post` (default) or `pre`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub norm: Option<String>,
    /// Version 4: `layernorm` (default) or `rmsnorm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub norm_type: Option<String>,
    /// The hidden width, 2 to 64; 4·d_model when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "optional_whole_number"
    )]
    pub d_ff: Option<usize>,
    /// `relu` (default), `gelu` or (version 4) `swiglu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation: Option<String>,
    /// Version 4: SwiGLU's gate, d_model × d_ff.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "matrix"
    )]
    pub w_gate: Option<Vec<Vec<f64>>>,
    /// d_model × d_ff.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "matrix"
    )]
    pub w_1: Option<Vec<Vec<f64>>>,
    /// d_ff numbers.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "vector"
    )]
    pub b_1: Option<Vec<f64>>,
    /// d_ff × d_model.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "matrix"
    )]
    pub w_2: Option<Vec<Vec<f64>>>,
    /// d_model numbers.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "vector"
    )]
    pub b_2: Option<Vec<f64>>,
    /// d_model numbers; ones when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "vector"
    )]
    pub ln_1_gamma: Option<Vec<f64>>,
    /// d_model numbers; zeros when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "vector"
    )]
    pub ln_1_beta: Option<Vec<f64>>,
    /// d_model numbers; ones when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "vector"
    )]
    pub ln_2_gamma: Option<Vec<f64>>,
    /// d_model numbers; zeros when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "vector"
    )]
    pub ln_2_beta: Option<Vec<f64>>,
}

impl BlockFields {
    /// The first field of version 4 in the block, if any.
    fn version_4_field(&self) -> Option<&'static str> {
        if self.norm_type.is_some() {
            Some("block.norm_type")
        } else if self.activation.as_deref() == Some(Activation::Swiglu.key()) {
            Some("block.activation")
        } else if self.w_gate.is_some() {
            Some("block.w_gate")
        } else {
            None
        }
    }

    /// The matrix fields by parameter.
    fn matrix_field(&self, p: BlockParam) -> Option<&Vec<Vec<f64>>> {
        match p {
            BlockParam::W1 => self.w_1.as_ref(),
            BlockParam::WGate => self.w_gate.as_ref(),
            BlockParam::W2 => self.w_2.as_ref(),
            _ => None,
        }
    }

    /// The vector fields by parameter.
    fn vector_field(&self, p: BlockParam) -> Option<&Vec<f64>> {
        match p {
            BlockParam::B1 => self.b_1.as_ref(),
            BlockParam::B2 => self.b_2.as_ref(),
            BlockParam::Ln1Gamma => self.ln_1_gamma.as_ref(),
            BlockParam::Ln1Beta => self.ln_1_beta.as_ref(),
            BlockParam::Ln2Gamma => self.ln_2_gamma.as_ref(),
            BlockParam::Ln2Beta => self.ln_2_beta.as_ref(),
            _ => None,
        }
    }

    /// Every field of `block` written out.
    fn from_block(block: &Block) -> Self {
        // A parameter the block does not read is left out: W_gate without SwiGLU, the β's
        // with RMSNorm.
        let used = |p: BlockParam| p.used(block.activation, block.norm_type);
        let row =
            |p: BlockParam| used(p).then(|| block.get(p).iter().copied().collect::<Vec<f64>>());
        Self {
            norm: Some(block.norm.key().into()),
            norm_type: (block.norm_type != NormType::default())
                .then(|| block.norm_type.key().into()),
            d_ff: Some(block.d_ff()),
            activation: Some(block.activation.key().into()),
            w_gate: used(BlockParam::WGate).then(|| rows_of(&block.w_gate)),
            w_1: Some(rows_of(&block.w_1)),
            b_1: row(BlockParam::B1),
            w_2: Some(rows_of(&block.w_2)),
            b_2: row(BlockParam::B2),
            ln_1_gamma: row(BlockParam::Ln1Gamma),
            ln_1_beta: row(BlockParam::Ln1Beta),
            ln_2_gamma: row(BlockParam::Ln2Gamma),
            ln_2_beta: row(BlockParam::Ln2Beta),
        }
    }

    /// The checked block for `d_model`.
    fn to_block(&self, d_model: usize) -> Result<Block, ScenarioError> {
        let invalid = |field: &'static str, error: String| {
            ScenarioError::Json(format!("field `{field}`: {error}"))
        };
        let norm = match &self.norm {
            Some(key) => key.parse::<Norm>().map_err(|e| invalid("block.norm", e))?,
            None => Norm::Post,
        };
        let norm_type = match &self.norm_type {
            Some(key) => key
                .parse::<NormType>()
                .map_err(|e| invalid("block.norm_type", e))?,
            None => NormType::LayerNorm,
        };
        if norm_type == NormType::RmsNorm {
            let beta = [
                ("block.ln_1_beta", &self.ln_1_beta),
                ("block.ln_2_beta", &self.ln_2_beta),
            ];
            if let Some((field, _)) = beta.iter().find(|(_, b)| b.is_some()) {
                return Err(ScenarioError::Json(format!(
                    "field `{field}`: RMSNorm has no shift β, so a block with \"norm_type\": \
                     \"rmsnorm\" takes no `ln_1_beta` or `ln_2_beta`; remove it or use layernorm"
                )));
            }
        }
        let activation = match &self.activation {
            Some(key) => key
                .parse::<Activation>()
                .map_err(|e| invalid("block.activation", e))?,
            None => Activation::Relu,
        };
        let d_ff = self.d_ff.unwrap_or_else(|| Block::default_d_ff(d_model));
        if !crate::attention::D_FF_RANGE.contains(&d_ff) {
            return Err(ScenarioError::Invalid {
                field: "block.d_ff",
                error: AttentionError::DffOutOfRange {
                    d_ff,
                    min: *crate::attention::D_FF_RANGE.start(),
                    max: *crate::attention::D_FF_RANGE.end(),
                },
            });
        }
        let mut block = Block::new(d_model, d_ff);
        block.norm = norm;
        block.norm_type = norm_type;
        block.activation = activation;
        for p in BlockParam::ALL {
            let shape = p.shape(d_model, d_ff);
            let field = block_field(p);
            let given = if p.is_vector() {
                self.vector_field(p)
                    .map(|v| to_matrix(field, std::slice::from_ref(v), shape))
            } else {
                self.matrix_field(p)
                    .map(|rows| to_matrix(field, rows, shape))
            };
            if let Some(m) = given {
                *block.get_mut(p) = m?;
            }
        }
        block
            .validate(d_model)
            .map_err(|error| ScenarioError::Invalid {
                field: "block",
                error,
            })?;
        Ok(block)
    }
}

/// A block parameter's path in a scenario: `block.w_1`.
fn block_field(p: BlockParam) -> &'static str {
    match p {
        BlockParam::W1 => "block.w_1",
        BlockParam::WGate => "block.w_gate",
        BlockParam::B1 => "block.b_1",
        BlockParam::W2 => "block.w_2",
        BlockParam::B2 => "block.b_2",
        BlockParam::Ln1Gamma => "block.ln_1_gamma",
        BlockParam::Ln1Beta => "block.ln_1_beta",
        BlockParam::Ln2Gamma => "block.ln_2_gamma",
        BlockParam::Ln2Beta => "block.ln_2_beta",
    }
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
    /// A version 1 scenario with a field of version 2.
    #[error("Field `{0}` belongs to scenario version 2: set \"version\": 2 to use it.")]
    NeedsVersion2(&'static str),
    /// A version 1 or 2 scenario with a field of version 3.
    #[error("Field `{0}` belongs to scenario version 3: set \"version\": 3 to use it.")]
    NeedsVersion3(&'static str),
    /// A scenario before version 4 with a field of version 4.
    #[error("Field `{0}` belongs to scenario version 4: set \"version\": 4 to use it.")]
    NeedsVersion4(&'static str),
    /// The causal mask together with a source sentence.
    #[error(
        "Fields `causal` and `source`: the causal mask belongs to self-attention and cannot be on with a source sentence; set \"causal\": false or remove \"source\"."
    )]
    CausalWithSource,
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
        if scenario.version < 2 {
            if let Some(field) = scenario.version_2_field() {
                return Err(ScenarioError::NeedsVersion2(field));
            }
        }
        if scenario.version < 3 && scenario.training.is_some() {
            return Err(ScenarioError::NeedsVersion3("training"));
        }
        if scenario.version < 4 {
            if let Some(field) = scenario.version_4_field() {
                return Err(ScenarioError::NeedsVersion4(field));
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
    /// `title`, `caption` and the matrices left out when absent. Every number is written with
    /// the fewest digits that read back to the same `f64`; one that is not finite is `null`.
    /// No final line break.
    pub fn to_json(&self) -> String {
        // serde_json fails only on a map with keys that are not strings, or a failing
        // `Serialize` impl; a scenario has neither, so the fallback is never taken.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The first field of version 2 that is set, if any.
    fn version_2_field(&self) -> Option<&'static str> {
        if self.source.is_some() {
            Some("source")
        } else if self.source_embeddings.is_some() {
            Some("source_embeddings")
        } else if self.block.is_some() {
            Some("block")
        } else {
            None
        }
    }

    /// The first field of version 4 that is set, if any.
    fn version_4_field(&self) -> Option<&'static str> {
        if self.rope.is_some() {
            Some("rope")
        } else if self.n_kv_heads.is_some() {
            Some("n_kv_heads")
        } else if self.window.is_some() {
            Some("window")
        } else {
            self.block.as_ref().and_then(BlockFields::version_4_field)
        }
    }

    /// The configuration part; an unknown rotary pairing is an error.
    pub fn config(&self) -> Result<Config, ScenarioError> {
        Ok(Config {
            d_model: self.d_model,
            n_heads: self.n_heads,
            causal: self.causal,
            positional_encoding: self.positional_encoding,
            scale: self.scale,
            temperature: self.temperature,
            rope: self.rope.as_ref().map(RopeFields::to_rope).transpose()?,
            kv_heads: self.n_kv_heads,
            window: self.window,
        })
    }

    /// Checked inputs for the forward pass; missing matrices take their defaults.
    pub fn to_inputs(&self) -> Result<Inputs, ScenarioError> {
        let config = self.config()?;
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
        let kv_width = config.kv_width();
        let mut weights = Weights::shaped(Init::Default, d, kv_width);
        for (name, rows) in self.weight_fields() {
            if let Some(rows) = rows {
                let shape = Weights::shape_of(name, d, kv_width);
                *weights.get_mut(name) = to_matrix(name.key(), rows, shape)?;
            }
        }
        let source = match &self.source {
            Some(text) => {
                if config.causal {
                    return Err(ScenarioError::CausalWithSource);
                }
                if config.rope.is_some() {
                    return Err(ScenarioError::Invalid {
                        field: "rope",
                        error: AttentionError::RopeWithSource,
                    });
                }
                let tokens = tokenize(text).map_err(|error| ScenarioError::Invalid {
                    field: "source",
                    error,
                })?;
                let embeddings = match &self.source_embeddings {
                    Some(rows) => to_matrix("source_embeddings", rows, (tokens.len(), d))?,
                    None => toy_embeddings(&tokens, d),
                };
                Some(Source { tokens, embeddings })
            }
            None if self.source_embeddings.is_some() => {
                return Err(ScenarioError::Json(
                    "field `source_embeddings` needs a `source` sentence".into(),
                ))
            }
            None => None,
        };
        let block = match &self.block {
            Some(fields) => Some(fields.to_block(d)?),
            None => None,
        };
        let inputs = Inputs {
            tokens,
            embeddings,
            weights,
            config,
            source,
            block,
        };
        inputs.validate().map_err(|error| ScenarioError::Invalid {
            field: "embeddings",
            error,
        })?;
        Ok(inputs)
    }

    /// A scenario that writes out every matrix of `inputs`; `source` is the source's text
    /// when `inputs` has a source.
    pub fn from_inputs(sentence: &str, inputs: &Inputs) -> Self {
        Self::from_inputs_with_source(sentence, None, inputs)
    }

    /// [`Scenario::from_inputs`] with the source sentence's text.
    pub fn from_inputs_with_source(sentence: &str, source: Option<&str>, inputs: &Inputs) -> Self {
        let c = inputs.config;
        let w = &inputs.weights;
        let source_text = inputs.source.as_ref().map(|s| {
            source
                .map(str::to_string)
                .unwrap_or_else(|| s.tokens.join(" "))
        });
        let block = inputs.block.as_ref().map(BlockFields::from_block);
        let newer = c.rope.is_some()
            || c.kv_heads.is_some()
            || c.window.is_some()
            || block
                .as_ref()
                .is_some_and(|b| b.version_4_field().is_some());
        let version = if newer {
            4
        } else if source_text.is_some() || inputs.block.is_some() {
            2
        } else {
            1
        };
        Self {
            version,
            title: None,
            caption: None,
            sentence: sentence.to_string(),
            d_model: c.d_model,
            n_heads: c.n_heads,
            causal: c.causal,
            positional_encoding: c.positional_encoding,
            scale: c.scale,
            temperature: c.temperature,
            rope: c.rope.as_ref().map(RopeFields::from_rope),
            n_kv_heads: c.kv_heads,
            window: c.window,
            embeddings: Some(rows_of(&inputs.embeddings)),
            w_q: Some(rows_of(&w.w_q)),
            w_k: Some(rows_of(&w.w_k)),
            w_v: Some(rows_of(&w.w_v)),
            w_o: Some(rows_of(&w.w_o)),
            source: source_text,
            source_embeddings: inputs.source.as_ref().map(|s| rows_of(&s.embeddings)),
            block,
            training: None,
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
        AttentionError::RopeTheta { .. } | AttentionError::RopeOddHeadWidth { .. } => "rope",
        AttentionError::KvHeadsDoNotDivide { .. } => "n_kv_heads",
        AttentionError::WindowZero | AttentionError::WindowNeedsCausal => "window",
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
        let training = self.to_training(&inputs)?;
        let mut model = Model::from_inputs(
            &self.sentence,
            self.source.as_deref(),
            inputs,
            self.embeddings.is_some(),
            self.source_embeddings.is_some(),
        );
        if let Some(training) = training {
            model.training = training;
        }
        Ok(model)
    }

    /// The scenario that restores `model`; training's settings are written only when they are
    /// not the defaults, so a model that never changed them writes the version it did before.
    pub fn from_model(model: &Model) -> Self {
        let source = model.cross.then_some(model.source.as_str());
        let mut scenario = Self::from_inputs_with_source(&model.sentence, source, &model.inputs());
        let training = model.fitted_training();
        if training != crate::attention::Training::default() {
            scenario.set_training(Some(&training));
        }
        scenario
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
        let err = Scenario::from_json(r#"{"version": 5, "sentence": "a"}"#).unwrap_err();
        assert_eq!(err, ScenarioError::UnsupportedVersion(5));
        assert!(err.to_string().contains("newer"));
    }

    #[test]
    fn version_4_fields_need_version_4_and_round_trip() {
        for field in [
            r#""rope": {}"#,
            r#""n_kv_heads": 1"#,
            r#""window": 2, "causal": true"#,
        ] {
            let text = format!(r#"{{"version": 3, "sentence": "a b", {field}}}"#);
            let err = Scenario::from_json(&text).unwrap_err();
            assert!(
                matches!(err, ScenarioError::NeedsVersion4(_)),
                "{field}: {err}"
            );
        }
        let text = r#"{"version": 4, "sentence": "a b c", "d_model": 8, "n_heads": 4,
            "causal": true, "rope": {"theta": 500, "pairing": "interleaved"},
            "n_kv_heads": 2, "window": 2}"#;
        let (scenario, inputs) = Scenario::parse_inputs(text).unwrap();
        let config = inputs.config;
        assert_eq!(
            config.rope,
            Some(Rope {
                theta: 500.0,
                pairing: Pairing::Interleaved
            })
        );
        assert_eq!((config.n_kv_heads(), config.window), (2, Some(2)));
        // W_k and W_v are d_model × n_kv_heads·d_k.
        assert_eq!(inputs.weights.w_k.shape(), (8, 4));
        let written = Scenario::from_inputs(&scenario.sentence, &inputs);
        assert_eq!(written.version, 4);
        let again = Scenario::from_json(&written.to_json()).unwrap().to_inputs();
        assert_eq!(again.unwrap(), inputs);
        // Without the new fields a scenario keeps its old version.
        let plain = Scenario::from_inputs("a b", &Scenario::default().to_inputs().unwrap());
        assert_eq!(plain.version, 1);
    }

    #[test]
    fn the_llama_block_reads_and_writes_at_version_4() {
        let text = r#"{"version": 4, "sentence": "a b c", "causal": true,
            "block": {"norm": "pre", "norm_type": "rmsnorm", "activation": "swiglu", "d_ff": 6,
            "b_1": [0, 0, 0, 0, 0, 0], "b_2": [0, 0, 0, 0]}}"#;
        let (scenario, inputs) = Scenario::parse_inputs(text).unwrap();
        let block = inputs.block.clone().unwrap();
        assert_eq!(block.norm_type, NormType::RmsNorm);
        assert_eq!(block.activation, Activation::Swiglu);
        assert_eq!(block.w_gate, BlockParam::WGate.default_values(4, 6));
        let written = Scenario::from_inputs(&scenario.sentence, &inputs);
        assert_eq!(written.version, 4);
        let fields = written.block.clone().unwrap();
        assert!(fields.w_gate.is_some() && fields.ln_1_beta.is_none());
        let again = Scenario::from_json(&written.to_json()).unwrap();
        assert_eq!(again.to_inputs().unwrap(), inputs);
        // In version 3 each of them is refused; with RMSNorm a β is refused.
        for block in [
            r#"{"norm_type": "rmsnorm"}"#,
            r#"{"activation": "swiglu"}"#,
            r#"{"w_gate": [[1]]}"#,
        ] {
            let text = format!(r#"{{"version": 3, "sentence": "a", "block": {block}}}"#);
            assert!(matches!(
                Scenario::from_json(&text),
                Err(ScenarioError::NeedsVersion4(_))
            ));
        }
        let beta = r#"{"version": 4, "sentence": "a", "block": {"norm_type": "rmsnorm",
            "ln_2_beta": [0, 0, 0, 0]}}"#;
        let err = Scenario::parse_inputs(beta).unwrap_err().to_string();
        assert!(
            err.contains("block.ln_2_beta") && err.contains("no shift β"),
            "{err}"
        );
        // A ReLU block does not write W_gate, and stays at version 2.
        let relu = Scenario::parse_inputs(r#"{"version": 2, "sentence": "a", "block": {}}"#);
        let (s, i) = relu.unwrap();
        let written = Scenario::from_inputs(&s.sentence, &i);
        assert_eq!(written.version, 2);
        assert!(written.block.unwrap().w_gate.is_none());
    }

    #[test]
    fn version_4_refusals_name_their_field() {
        let cases = [
            (r#""n_kv_heads": 3"#, "n_kv_heads"),
            (r#""n_kv_heads": 0"#, "n_kv_heads"),
            (r#""window": 2"#, "window"),
            (r#""window": 0, "causal": true"#, "window"),
            (r#""rope": {"theta": 1}"#, "rope"),
            (r#""rope": {}, "d_model": 6, "n_heads": 2"#, "rope"),
            (r#""rope": {}, "source": "x y""#, "rope"),
            (
                r#""n_kv_heads": 1, "w_k": [[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1]]"#,
                "w_k",
            ),
        ];
        for (field, name) in cases {
            let text = format!(r#"{{"version": 4, "sentence": "a b", {field}}}"#);
            let err = Scenario::parse_inputs(&text).unwrap_err();
            assert!(
                err.to_string().starts_with(&format!("Field `{name}`")),
                "{field}: {err}"
            );
        }
        let err =
            Scenario::from_json(r#"{"version": 4, "sentence": "a", "rope": {"pairing": "x"}}"#)
                .unwrap()
                .to_inputs()
                .unwrap_err();
        assert!(err.to_string().contains("rope.pairing"), "{err}");
    }

    #[test]
    fn version_2_fields_need_version_2_and_causal_excludes_a_source() {
        let err =
            Scenario::from_json(r#"{"version": 1, "sentence": "a", "block": {}}"#).unwrap_err();
        assert_eq!(err, ScenarioError::NeedsVersion2("block"));
        let err = Scenario::parse_inputs(
            r#"{"version": 2, "sentence": "a b", "source": "c d", "causal": true}"#,
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("`causal`") && text.contains("`source`"),
            "{text}"
        );
        let err = Scenario::parse_inputs(
            r#"{"version": 2, "sentence": "a", "block": {"w_1": [[1, 2], [3, 4]]}}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("block.w_1"), "{err}");
        let err = Scenario::from_json(r#"{"version": 2, "sentence": "a", "block": {"norm": 1}}"#)
            .unwrap_err();
        assert!(err.to_string().contains("block.norm"), "{err}");
    }

    #[test]
    fn a_model_with_a_source_and_a_block_survives_a_scenario_round_trip() {
        let mut model = Model::default();
        model.set_source("le chat").unwrap();
        model.set_cross(true);
        model.set_block_on(true);
        model.set_norm(crate::attention::Norm::Pre);
        model.set_d_ff(6).unwrap();
        model
            .set_cell(EditTarget::Block(BlockParam::B1), 0, 5, -0.25)
            .unwrap();
        model
            .set_cell(EditTarget::SourceEmbeddings, 1, 0, 0.5)
            .unwrap();
        let scenario = Scenario::from_model(&model);
        assert_eq!(scenario.version, 2);
        let back = Scenario::from_json(&scenario.to_json())
            .unwrap()
            .to_model()
            .unwrap();
        assert_eq!(back.trace().unwrap(), model.trace().unwrap());
        assert!(back.cross && back.block_on);
        // Without the new fields a scenario is still written as version 1.
        assert_eq!(Scenario::from_model(&Model::default()).version, 1);
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
