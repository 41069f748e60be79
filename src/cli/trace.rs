//! Carrying out `trace`: reading the scenario, applying the options to it, and naming the
//! option to blame when the result is not a valid attention layer.

use super::{CliError, Format, Source, TraceOptions};
use crate::attention::{
    check_prefill, decode, forward, tokenize, toy_embedding, AttentionError, Inputs, NormType, Rope,
};
use crate::formats::report::{trace_csv, trace_json_pretty_with, trace_markdown};
use crate::formats::scenario::{BlockFields, RopeFields, Scenario, ScenarioError};
use std::io::{self, Read};

pub(super) fn trace(options: &TraceOptions, stdin: &mut dyn Read) -> Result<String, CliError> {
    let trace = compute(options, stdin)?;
    let json_only = options
        .prefill
        .map(|_| "--prefill")
        .or(options.tile.map(|_| "--tile"));
    if let (Some(flag), Format::Markdown | Format::Csv) = (json_only, options.format) {
        return Err(CliError::Usage(format!(
            "`{flag}` adds to the JSON trace: use it with `--format json`."
        )));
    }

    Ok(match options.format {
        Format::Json => {
            let decoded = match options.prefill {
                Some(p) => Some(decode(&trace, p).map_err(|e| prefill_error(p, e))?),
                None => None,
            };
            trace_json_pretty_with(&trace, decoded.as_ref(), options.tile)
        }
        Format::Markdown => trace_markdown(&trace),
        Format::Csv => trace_csv(&trace),
    })
}

/// The refusal of `--prefill P`, naming the option.
fn prefill_error(prefill: usize, error: AttentionError) -> CliError {
    CliError::Option {
        flag: "--prefill",
        value: prefill.to_string(),
        error,
    }
}

/// The trace of the scenario the options describe.
pub(super) fn compute(
    options: &TraceOptions,
    stdin: &mut dyn Read,
) -> Result<crate::attention::Trace, CliError> {
    let (_, inputs) = load(options, stdin)?;
    forward(&inputs).map_err(CliError::Attention)
}

/// The scenario the options describe, and its checked inputs.
pub(super) fn load(
    options: &TraceOptions,
    stdin: &mut dyn Read,
) -> Result<(Scenario, Inputs), CliError> {
    let mut scenario = match &options.scenario {
        Source::Default => Scenario::default(),
        source => {
            let text = read_source(source, stdin)?;
            Scenario::from_json(&text).map_err(|error| CliError::Scenario {
                input: source.clone(),
                error,
            })?
        }
    };
    let width_changed = options.d_model.is_some_and(|d| d != scenario.d_model);
    apply_options(&mut scenario, options)?;
    let inputs = scenario
        .to_inputs()
        .map_err(|error| blame(error, options, width_changed))?;
    // Decoding changes no number: `grad` and `train` only check that it could be done.
    if let Some(prefill) = options.prefill {
        check_prefill(
            prefill,
            inputs.seq_len(),
            inputs.config.causal,
            inputs.source.is_some(),
        )
        .map_err(|e| prefill_error(prefill, e))?;
    }
    Ok((scenario, inputs))
}

fn read_source(source: &Source, stdin: &mut dyn Read) -> Result<String, CliError> {
    let result = match source {
        Source::Stdin => {
            let mut text = String::new();
            stdin.read_to_string(&mut text).map(|_| text)
        }
        Source::File(path) => std::fs::read_to_string(path),
        Source::Default => Ok(Scenario::default().to_json()),
    };
    result.map_err(|e| CliError::Unreadable {
        input: source.clone(),
        reason: match e.kind() {
            io::ErrorKind::NotFound => "there is no such file".to_string(),
            io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            io::ErrorKind::IsADirectory => "it is a directory, not a file".to_string(),
            io::ErrorKind::InvalidData => "it is not UTF-8 text".to_string(),
            _ => e.to_string(),
        },
    })
}

/// Applies the options to `scenario`, following the rules in the long help of `trace`.
pub fn apply_options(scenario: &mut Scenario, options: &TraceOptions) -> Result<(), CliError> {
    if let Some(d) = options.d_model.filter(|d| *d != scenario.d_model) {
        scenario.d_model = d;
        for w in [
            &mut scenario.w_q,
            &mut scenario.w_k,
            &mut scenario.w_v,
            &mut scenario.w_o,
        ] {
            if w.as_ref().is_some_and(|rows| !fits(rows, Some(d), d)) {
                *w = None;
            }
        }
        if let Some(rows) = &scenario.embeddings {
            if !fits(rows, None, d) {
                scenario.embeddings = None;
            }
        }
        if let Some(rows) = &scenario.source_embeddings {
            if !fits(rows, None, d) {
                scenario.source_embeddings = None;
            }
        }
        // The block's parameters are all sized by d_model: its defaults take over.
        if let Some(block) = &mut scenario.block {
            *block = BlockFields {
                norm: block.norm.take(),
                norm_type: block.norm_type.take(),
                activation: block.activation.take(),
                d_ff: block.d_ff,
                ..BlockFields::default()
            };
        }
    }
    if let Some(source) = &options.source {
        tokenize(source).map_err(|error| CliError::Option {
            flag: "--source",
            value: format!("{source:?}"),
            error,
        })?;
        if scenario.source.as_deref() != Some(source.as_str()) {
            scenario.source_embeddings = None;
        }
        scenario.source = Some(source.clone());
    }
    let wants_block = options.block
        || options.norm.is_some()
        || options.d_ff.is_some()
        || options.activation.is_some()
        || options.norm_type.is_some();
    if wants_block {
        let block = scenario.block.get_or_insert_with(BlockFields::default);
        if let Some(norm) = options.norm {
            block.norm = Some(norm.key().to_string());
        }
        if let Some(activation) = options.activation {
            block.activation = Some(activation.key().to_string());
        }
        if let Some(norm_type) = options.norm_type {
            block.norm_type = Some(norm_type.key().to_string());
            // RMSNorm has no β: a scenario's β's go.
            if norm_type == NormType::RmsNorm {
                block.ln_1_beta = None;
                block.ln_2_beta = None;
            }
        }
        if let Some(d_ff) = options.d_ff.filter(|n| block.d_ff != Some(*n)) {
            block.d_ff = Some(d_ff);
            block.w_1 = None;
            block.b_1 = None;
            block.w_2 = None;
        }
    }
    if scenario.source.is_some() || scenario.block.is_some() {
        scenario.version = scenario.version.max(2);
    }
    if let Some(n) = options.n_heads {
        scenario.n_heads = n;
    }
    if let Some(causal) = options.causal {
        scenario.causal = causal;
    }
    if let Some(positional) = options.positional {
        scenario.positional_encoding = positional;
    }
    if let Some(scale) = options.scale {
        scenario.scale = scale;
    }
    if let Some(t) = options.temperature {
        scenario.temperature = t;
    }
    apply_modern(scenario, options);
    if let Some(sentence) = &options.sentence {
        let tokens = tokenize(sentence).map_err(|error| CliError::Option {
            flag: "--sentence",
            value: format!("{sentence:?}"),
            error,
        })?;
        scenario.embeddings = carry_embeddings(scenario, &tokens);
        scenario.sentence = sentence.clone();
    }
    Ok(())
}

/// Applies `--rope`, `--rope-theta`, `--rope-pairing`, `--kv-heads` and `--window`. A new number
/// of key/value heads drops a W_k or W_v that no longer fits it, for its defaults to take over.
fn apply_modern(scenario: &mut Scenario, options: &TraceOptions) {
    // A base or a pairing implies rotary positions, as --d-ff implies the block.
    let wants_rope = options.rope_theta.is_some() || options.rope_pairing.is_some();
    if options.rope == Some(true) || wants_rope {
        let rope = scenario
            .rope
            .get_or_insert_with(|| RopeFields::from_rope(&Rope::default()));
        if let Some(theta) = options.rope_theta {
            rope.theta = theta;
        }
        if let Some(pairing) = options.rope_pairing {
            rope.pairing = pairing.key().to_string();
        }
    } else if options.rope == Some(false) {
        scenario.rope = None;
    }
    if let Some(n) = options.kv_heads {
        scenario.n_kv_heads = Some(n);
        let d_k = scenario.d_model / scenario.n_heads.max(1);
        for w in [&mut scenario.w_k, &mut scenario.w_v] {
            if w.as_ref()
                .is_some_and(|rows| !fits(rows, Some(scenario.d_model), n * d_k))
            {
                *w = None;
            }
        }
    }
    if let Some(w) = options.window {
        scenario.window = Some(w);
    }
    let newer_block = scenario.block.as_ref().is_some_and(|b| {
        b.norm_type.is_some() || b.w_gate.is_some() || b.activation.as_deref() == Some("swiglu")
    });
    if scenario.rope.is_some()
        || scenario.n_kv_heads.is_some()
        || scenario.window.is_some()
        || newer_block
    {
        scenario.version = scenario.version.max(4);
    }
}

/// Whether `rows` has `n_rows` rows (any number when `None`) of `width` numbers each.
fn fits(rows: &[Vec<f64>], n_rows: Option<usize>, width: usize) -> bool {
    n_rows.is_none_or(|n| rows.len() == n) && rows.iter().all(|r| r.len() == width)
}

/// The embeddings for a new sentence of `tokens`: a row is a token's vector, so the rows of
/// tokens that were already in the scenario's sentence come along and new tokens get their toy
/// embedding. A matrix that did not match the old sentence is left as it is, for
/// [`Scenario::to_inputs`] to report.
fn carry_embeddings(scenario: &Scenario, tokens: &[String]) -> Option<Vec<Vec<f64>>> {
    let rows = scenario.embeddings.as_ref()?;
    let Ok(old_tokens) = tokenize(&scenario.sentence) else {
        return None;
    };
    if !fits(rows, Some(old_tokens.len()), scenario.d_model) || old_tokens == tokens {
        return Some(rows.clone());
    }
    let mut carried = false;
    let new_rows = tokens
        .iter()
        .map(|token| match old_tokens.iter().position(|t| t == token) {
            Some(i) => {
                carried = true;
                rows[i].clone()
            }
            None => toy_embedding(token, scenario.d_model),
        })
        .collect();
    carried.then_some(new_rows)
}

/// Names the option that caused a scenario error, when an option set that field; a head count
/// that does not divide the width is blamed on `--d-model` only if it changed the width.
fn blame(error: ScenarioError, options: &TraceOptions, width_changed: bool) -> CliError {
    if let ScenarioError::Invalid { field, error } = &error {
        let culprit = match *field {
            "d_model" => options.d_model.map(|d| ("--d-model", d.to_string())),
            "temperature" => options
                .temperature
                .map(|t| ("--temperature", t.to_string())),
            "block.d_ff" => options.d_ff.map(|n| ("--d-ff", n.to_string())),
            "rope" => options
                .rope_theta
                .map(|t| ("--rope-theta", t.to_string()))
                .or(options
                    .rope
                    .filter(|on| *on)
                    .map(|_| ("--rope", String::new()))),
            "n_kv_heads" => options.kv_heads.map(|n| ("--kv-heads", n.to_string())),
            "window" => options.window.map(|w| ("--window", w.to_string())),
            "source" => options
                .source
                .as_ref()
                .map(|s| ("--source", format!("{s:?}"))),
            "n_heads" => options
                .n_heads
                .map(|n| ("--heads", n.to_string()))
                .or_else(|| {
                    options
                        .d_model
                        .filter(|_| width_changed)
                        .map(|d| ("--d-model", d.to_string()))
                }),
            _ => None,
        };
        if let Some((flag, value)) = culprit {
            return CliError::Option {
                flag,
                value,
                error: error.clone(),
            };
        }
    }
    CliError::Scenario {
        input: options.scenario.clone(),
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::Config;
    use crate::cli::tests::{options, run_args};
    use crate::cli::{run_with, EXIT_BAD_INPUT, EXIT_OK};

    #[test]
    fn a_new_width_replaces_only_the_matrices_that_no_longer_fit() {
        // A hand-made 8×8 W_q already fits the new width and stays.
        let mut scenario = Scenario {
            w_q: Some(vec![vec![0.5; 8]; 8]),
            ..Scenario::default()
        };
        apply_options(&mut scenario, &options(&["--d-model", "8"])).unwrap();
        assert_eq!(scenario.d_model, 8);
        assert_eq!(scenario.w_q, Some(vec![vec![0.5; 8]; 8]));
        assert_eq!((scenario.w_k.clone(), scenario.w_o.clone()), (None, None));
        assert_eq!(scenario.embeddings, None);
        assert_eq!(scenario.to_inputs().unwrap().embeddings.shape(), (3, 8));
    }

    #[test]
    fn the_same_width_keeps_every_matrix_even_a_wrong_one() {
        let mut scenario = Scenario {
            w_v: Some(vec![vec![1.0; 3]; 3]),
            ..Scenario::default()
        };
        apply_options(&mut scenario, &options(&["--d-model", "4"])).unwrap();
        assert_eq!(scenario.w_v, Some(vec![vec![1.0; 3]; 3]));
        assert!(scenario.to_inputs().is_err());
    }

    #[test]
    fn a_new_sentence_keeps_the_rows_of_tokens_it_shares_with_the_old_one() {
        let mut scenario = Scenario::default();
        let hungry = vec![9.0, 8.0, 7.0, 6.0];
        scenario.embeddings.as_mut().unwrap()[2] = hungry.clone();
        apply_options(
            &mut scenario,
            &options(&["--sentence", "you are hungry too"]),
        )
        .unwrap();
        let rows = scenario.embeddings.clone().unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[2], hungry);
        assert_eq!(rows[0], toy_embedding("you", 4));
        assert_eq!(scenario.to_inputs().unwrap().tokens.len(), 4);
    }

    #[test]
    fn a_new_sentence_of_the_same_length_does_not_inherit_other_words_rows() {
        let mut scenario = Scenario::default();
        apply_options(&mut scenario, &options(&["--sentence", "we were cold"])).unwrap();
        // No token is shared, so every row is a toy embedding and none is written out.
        assert_eq!(scenario.embeddings, None);
    }

    #[test]
    fn errors_caused_by_an_option_name_the_option() {
        let out = run_args(&["trace", "--heads", "3"]);
        assert_eq!(out.code, EXIT_BAD_INPUT);
        assert_eq!(
            out.stderr,
            "error: `--heads 3`: 3 heads cannot split d_model = 4 into equal parts: the number \
             of heads must divide d_model.\n"
        );
        let out = run_args(&["trace", "--d-model", "5"]);
        assert!(
            out.stderr.starts_with("error: `--d-model 5`: 2 heads"),
            "{}",
            out.stderr
        );
        let json = r#"{"version": 1, "sentence": "a", "n_heads": 3}"#;
        let out = run_with(
            ["trace", "--scenario", "-", "--d-model", "4"],
            &mut json.as_bytes(),
        );
        assert!(
            out.stderr
                .starts_with("error: standard input: Field `n_heads`: 3 heads"),
            "{}",
            out.stderr
        );
        let out = run_args(&["trace", "--temperature", "0"]);
        assert!(out
            .stderr
            .starts_with("error: `--temperature 0`: The temperature is 0"));
        let out = run_args(&["trace", "--sentence", " "]);
        assert!(out
            .stderr
            .starts_with("error: `--sentence \" \"`: Type at least one word"));
    }

    #[test]
    fn a_scenario_on_standard_input_is_read() {
        let json = r#"{"version": 1, "sentence": "a b", "causal": true}"#;
        let out = run_with(["trace", "--scenario", "-"], &mut json.as_bytes());
        assert_eq!(out.code, EXIT_OK, "{}", out.stderr);
        let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(value["tokens"], serde_json::json!(["a", "b"]));
        assert_eq!(value["config"]["causal"], true);

        let out = run_with(["trace", "--scenario", "-"], &mut "{".as_bytes());
        assert!(out
            .stderr
            .starts_with("error: standard input: This is not a valid scenario"));
        assert_eq!(out.stderr.lines().count(), 1);
    }

    #[test]
    fn the_default_trace_uses_the_default_configuration() {
        let out = run_args(&["trace"]);
        let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(value["config"]["d_model"], Config::default().d_model);
        assert_eq!(out.stderr, "");
    }
}
