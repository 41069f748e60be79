//! Today's attention against Hugging Face transformers: each
//! `tests/reference/hf/scenarios/<name>.json` (rotary positions in both pairings, grouped- and
//! multi-query attention, a sliding window, Llama's block) run through [`forward`] and
//! [`decode`], cell by cell against `tests/reference/hf/expected/<name>.json`, which
//! `tests/reference/hf/hf.py` wrote by running the same numbers through transformers' Llama code
//! in float64.

// Native tests: they read files, which the browser target cannot.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{decode, forward, Matrix, Trace};
use attention_lens::formats::scenario::Scenario;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

/// Largest absolute difference accepted where both sides compute in float64.
const TOLERANCE: f64 = 1e-12;

/// Largest absolute difference accepted where transformers computes in float32 whatever the
/// dtype: `LlamaRMSNorm` in the block, and the softmax of the eager path, the one path that
/// returns the weights.
const FLOAT32_TOLERANCE: f64 = 1e-5;

/// How many scenarios the reference holds.
const SCENARIO_COUNT: usize = 6;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/hf")
}

fn names() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir().join("scenarios"))
        .expect("the scenarios folder")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

fn matrix(value: &Value) -> Vec<Vec<f64>> {
    value
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| {
            row.as_array()
                .expect("a row")
                .iter()
                .map(|v| v.as_f64().expect("a number"))
                .collect()
        })
        .collect()
}

/// The largest difference between `ours` and the expected rows, which must have its shape.
fn difference(what: &str, ours: &Matrix, expected: &Value) -> f64 {
    let rows = matrix(expected);
    assert_eq!(
        (ours.nrows(), ours.ncols()),
        (rows.len(), rows[0].len()),
        "{what}: shape"
    );
    let mut worst = 0.0_f64;
    for (i, row) in rows.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            worst = worst.max((ours[(i, j)] - v).abs());
        }
    }
    worst
}

fn check(what: &str, ours: &Matrix, expected: &Value, tolerance: f64) {
    let d = difference(what, ours, expected);
    assert!(d <= tolerance, "{what}: differs by {d:e}");
}

fn run(name: &str) -> (Trace, Value) {
    let text = fs::read_to_string(dir().join("scenarios").join(name)).expect("a scenario");
    let (_, inputs) = Scenario::parse_inputs(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let expected: Value = serde_json::from_str(
        &fs::read_to_string(dir().join("expected").join(name)).expect("its expected file"),
    )
    .expect("JSON");
    (forward(&inputs).expect("a trace"), expected)
}

#[test]
fn the_reference_holds_every_scenario_and_its_expected_file() {
    assert_eq!(names().len(), SCENARIO_COUNT, "{:?}", names());
    for name in names() {
        assert!(dir().join("expected").join(&name).exists(), "{name}");
    }
}

#[test]
fn rotary_positions_shared_heads_and_the_window_match_transformers() {
    for name in names() {
        let (t, e) = run(&name);
        for (h, (head, theirs)) in t
            .heads
            .iter()
            .zip(e["heads"].as_array().unwrap())
            .enumerate()
        {
            let at = |m: &str| format!("{name}: head {h} {m}");
            assert_eq!(
                head.kv_head as u64,
                theirs["kv_head"].as_u64().unwrap(),
                "{}",
                at("kv_head")
            );
            check(&at("q_rope"), head.q_scored(), &theirs["q_rope"], TOLERANCE);
            check(&at("k_rope"), head.k_scored(), &theirs["k_rope"], TOLERANCE);
            // transformers' eager mask adds the lowest float instead of −∞: a hidden key's
            // weight is 0 all the same.
            check(
                &at("weights"),
                &head.weights,
                &theirs["weights"],
                FLOAT32_TOLERANCE,
            );
            let hidden = |w: &Value, i: usize, j: usize| w[i][j].as_f64() == Some(0.0);
            for i in 0..t.seq_len() {
                for j in 0..t.seq_len() {
                    let ours = head.weights[(i, j)] == 0.0;
                    assert_eq!(ours, hidden(&theirs["weights"], i, j), "{}", at("zeros"));
                }
            }
        }
        check(&format!("{name}: Y"), &t.output, &e["output"], TOLERANCE);
        // transformers' own rotary tables are float32; ours agree with its layout in float64.
        assert!(
            e["rope_table_float32_error"].as_f64().unwrap() < 1e-6,
            "{name}"
        );
    }
}

#[test]
fn the_llama_block_matches_the_decoder_layer() {
    let mut blocks = 0;
    for name in names() {
        let (t, e) = run(&name);
        let Some(block) = &t.block else { continue };
        blocks += 1;
        check(
            &format!("{name}: N₁"),
            &block.attention_input,
            &e["attention_input"],
            TOLERANCE,
        );
        check(
            &format!("{name}: out"),
            block.out(),
            &e["block_out"],
            FLOAT32_TOLERANCE,
        );
    }
    assert_eq!(blocks, 2);
}

#[test]
fn decoding_from_the_cache_matches_transformers_dynamic_cache() {
    let mut decoded = 0;
    for name in names() {
        let (t, e) = run(&name);
        let Some(theirs) = e.get("decode") else {
            continue;
        };
        decoded += 1;
        let prefill = theirs["prefill"].as_u64().unwrap() as usize;
        let d = decode(&t, prefill).expect("a decode");
        assert!(d.matches_full_pass, "{name}");
        let outputs = theirs["outputs"].as_array().unwrap();
        assert_eq!(outputs.len(), d.steps.len());
        for (step, row) in d.steps.iter().zip(outputs) {
            let row = Value::Array(vec![row.clone()]);
            check(
                &format!("{name}: step {}", step.position),
                &step.output,
                &row,
                TOLERANCE,
            );
        }
    }
    assert_eq!(decoded, 4);
}
