//! Golden tests: every stage of the Rust forward pass against an independent NumPy reference.
//!
//! Each `tests/reference/scenarios/<name>.json` is run through
//! [`Scenario::parse_inputs`] and [`forward`]; the result must match
//! `tests/reference/expected/<name>.json`, written by `tests/reference/reference.py`, cell by
//! cell to [`TOLERANCE`]. A `null` in the expected file stands for a masked −∞.

// Native tests: they read files and run the CLI, which the browser target cannot.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{forward, Matrix, Trace};
use attention_lens::formats::scenario::Scenario;
use serde_json::Value;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// Largest absolute difference accepted between the Rust and NumPy values.
const TOLERANCE: f64 = 1e-9;

/// How many scenarios the reference holds; a deleted or added file must be a deliberate change.
const SCENARIO_COUNT: usize = 19;

/// At most this many differing cells are listed per scenario.
const MAX_REPORTED: usize = 8;

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference")
}

/// The file names (`<name>.json`) in one folder of the reference, sorted.
fn json_names(folder: &str) -> Vec<String> {
    let dir = reference_dir().join(folder);
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("a readable directory entry").file_name())
        .filter_map(|name| name.to_str().map(str::to_string))
        .filter(|name| name.ends_with(".json"))
        .collect();
    names.sort();
    names
}

fn read(folder: &str, name: &str) -> String {
    let path = reference_dir().join(folder).join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

#[test]
fn the_reference_holds_the_expected_number_of_scenarios() {
    let scenarios = json_names("scenarios");
    assert_eq!(
        scenarios.len(),
        SCENARIO_COUNT,
        "scenarios found: {scenarios:?}; update SCENARIO_COUNT only when adding or removing one on purpose"
    );
}

#[test]
fn every_scenario_has_exactly_one_expected_file() {
    assert_eq!(
        json_names("scenarios"),
        json_names("expected"),
        "run `python3 tests/reference/reference.py` to regenerate tests/reference/expected"
    );
}

#[test]
fn every_stage_matches_the_numpy_reference_in_every_scenario() {
    let mut report = String::new();
    for name in json_names("scenarios") {
        let mismatches = compare_scenario(&name);
        if !mismatches.is_empty() {
            let _ = writeln!(report, "scenario {name}: {} problem(s)", mismatches.len());
            for line in mismatches.iter().take(MAX_REPORTED) {
                let _ = writeln!(report, "  {line}");
            }
        }
    }
    assert!(
        report.is_empty(),
        "the trace differs from the reference:\n{report}"
    );
}

/// Runs one scenario and lists every difference from its expected file.
fn compare_scenario(name: &str) -> Vec<String> {
    let (_, inputs) = Scenario::parse_inputs(&read("scenarios", name))
        .unwrap_or_else(|e| panic!("scenario {name} does not parse: {e}"));
    let trace = forward(&inputs).unwrap_or_else(|e| panic!("scenario {name}: forward failed: {e}"));
    let expected: Value = serde_json::from_str(&read("expected", name))
        .unwrap_or_else(|e| panic!("expected/{name} is not JSON: {e}"));
    compare_trace(&trace, &expected)
}

fn compare_trace(trace: &Trace, expected: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let tokens: Vec<&str> = field(expected, "tokens")
        .as_array()
        .expect("`tokens` is an array")
        .iter()
        .map(|t| t.as_str().expect("every token is a string"))
        .collect();
    if trace.tokens != tokens {
        out.push(format!(
            "tokens: rust {:?}, reference {tokens:?}",
            trace.tokens
        ));
        // With different tokens every matrix differs; the token list says enough.
        return out;
    }

    let whole = [
        ("x", &trace.x),
        ("q", &trace.q),
        ("k", &trace.k),
        ("v", &trace.v),
        ("concat", &trace.concat),
        ("output", &trace.output),
    ];
    for (key, actual) in whole {
        compare_matrix(key, actual, field(expected, key), &mut out);
    }

    // Cross-attention: the source's tokens and its input X_src.
    match (&trace.source, expected.get("source_tokens")) {
        (Some(source), Some(want)) => {
            let want: Vec<&str> = want
                .as_array()
                .expect("`source_tokens` is an array")
                .iter()
                .map(|t| t.as_str().expect("every source token is a string"))
                .collect();
            if source.tokens != want {
                out.push(format!(
                    "source_tokens: rust {:?}, reference {want:?}",
                    source.tokens
                ));
            }
            compare_matrix("source_x", &source.x, field(expected, "source_x"), &mut out);
        }
        (None, None) => {}
        (rust, _) => out.push(format!(
            "source: rust {}, reference {}",
            if rust.is_some() {
                "has one"
            } else {
                "has none"
            },
            if expected.get("source_tokens").is_some() {
                "has one"
            } else {
                "has none"
            }
        )),
    }

    // The block: every intermediate, and its output.
    match (&trace.block, expected.get("block")) {
        (Some(block), Some(want)) => {
            let matrices = [
                ("attention_input", &block.attention_input),
                ("sum_1", &block.sum_1),
                ("norm_1", &block.norm_1),
                ("hidden", &block.hidden),
                ("activated", &block.activated),
                ("ffn", &block.ffn),
                ("sum_2", &block.sum_2),
                ("norm_2", &block.norm_2),
                ("out", block.out()),
            ];
            for (key, actual) in matrices {
                compare_matrix(
                    &format!("block `{key}`"),
                    actual,
                    field(want, key),
                    &mut out,
                );
            }
        }
        (None, None) => {}
        (rust, _) => out.push(format!(
            "block: rust {}, reference {}",
            if rust.is_some() {
                "has one"
            } else {
                "has none"
            },
            if expected.get("block").is_some() {
                "has one"
            } else {
                "has none"
            }
        )),
    }

    let heads = field(expected, "heads")
        .as_array()
        .expect("`heads` is an array");
    if heads.len() != trace.heads.len() {
        out.push(format!(
            "heads: rust has {}, reference {}",
            trace.heads.len(),
            heads.len()
        ));
        return out;
    }
    for (h, (actual, expected)) in trace.heads.iter().zip(heads).enumerate() {
        let per_head = [
            ("q", &actual.q),
            ("k", &actual.k),
            ("v", &actual.v),
            ("scores", &actual.scores),
            ("scaled", &actual.scaled),
            ("masked", &actual.masked),
            ("weights", &actual.weights),
            ("context", &actual.context),
        ];
        for (key, matrix) in per_head {
            compare_matrix(
                &format!("head {h} `{key}`"),
                matrix,
                field(expected, key),
                &mut out,
            );
        }
    }
    out
}

fn field<'a>(value: &'a Value, key: &str) -> &'a Value {
    value
        .get(key)
        .unwrap_or_else(|| panic!("the expected file has no `{key}`"))
}

/// Compares a matrix with a JSON array of rows, where `null` means −∞.
fn compare_matrix(label: &str, actual: &Matrix, expected: &Value, out: &mut Vec<String>) {
    let rows = expected
        .as_array()
        .unwrap_or_else(|| panic!("{label}: expected an array of rows"));
    let width = rows.first().and_then(Value::as_array).map_or(0, Vec::len);
    if actual.shape() != (rows.len(), width) {
        out.push(format!(
            "{label}: shape {:?}, reference {:?}",
            actual.shape(),
            (rows.len(), width)
        ));
        return;
    }
    for (i, row) in rows.iter().enumerate() {
        let row = row
            .as_array()
            .unwrap_or_else(|| panic!("{label}: row {i} is not an array"));
        assert_eq!(row.len(), width, "{label}: reference row {i} is ragged");
        for (j, cell) in row.iter().enumerate() {
            let got = actual[(i, j)];
            let problem = match cell {
                Value::Null if got == f64::NEG_INFINITY => None,
                Value::Null => Some(format!("rust {got:e}, reference −∞ (null)")),
                _ => {
                    let want = cell
                        .as_f64()
                        .unwrap_or_else(|| panic!("{label}: cell ({i}, {j}) is not a number"));
                    let diff = (got - want).abs();
                    // A NaN or a stray −∞ gives a NaN or infinite difference: never within.
                    let within = diff.is_finite() && diff <= TOLERANCE;
                    (!within)
                        .then(|| format!("rust {got:e}, reference {want:e}, difference {diff:e}"))
                }
            };
            if let Some(problem) = problem {
                out.push(format!("{label}, cell (row {i}, column {j}): {problem}"));
            }
        }
    }
}

#[test]
fn a_tampered_expected_value_is_reported_with_its_matrix_head_and_cell() {
    // The comparison itself must be able to fail, and say where.
    let name = "identity_weights.json";
    let (_, inputs) = Scenario::parse_inputs(&read("scenarios", name)).unwrap();
    let trace = forward(&inputs).unwrap();
    let mut expected: Value = serde_json::from_str(&read("expected", name)).unwrap();
    expected["heads"][1]["weights"][2][0] = Value::from(0.5);
    expected["heads"][0]["masked"][1][1] = Value::Null;
    let problems = compare_trace(&trace, &expected);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    // The block's matrices are compared too.
    let name = "block_pre_gelu.json";
    let (_, inputs) = Scenario::parse_inputs(&read("scenarios", name)).unwrap();
    let block_trace = forward(&inputs).unwrap();
    let mut block_expected: Value = serde_json::from_str(&read("expected", name)).unwrap();
    block_expected["block"]["activated"][0][1] = Value::from(99.0);
    let block_problems = compare_trace(&block_trace, &block_expected);
    assert_eq!(block_problems.len(), 1, "{block_problems:#?}");
    assert!(block_problems[0].starts_with("block `activated`, cell (row 0, column 1)"));
    assert!(
        problems[0].starts_with("head 0 `masked`, cell (row 1, column 1)"),
        "{}",
        problems[0]
    );
    assert!(
        problems[1].starts_with("head 1 `weights`, cell (row 2, column 0)"),
        "{}",
        problems[1]
    );
}

/// An exported scenario imports as the same matrices: numbers are written with the fewest
/// digits that name each f64 and read back with correct rounding, so even 16–17 significant
/// digits come back bit for bit.
#[test]
fn an_exported_scenario_reads_back_bit_for_bit() {
    let values = [
        -1.1893854837400641,
        -13.743062455009403,
        0.029906013495763186,
        -48.868747193397596,
        -0.9903112628350041,
        1.1710920203840547,
    ];
    let mut scenario = Scenario::default();
    let w_q = scenario
        .w_q
        .as_mut()
        .expect("the default scenario lists w_q");
    for (cell, value) in w_q.iter_mut().flatten().zip(values) {
        *cell = value;
    }
    let back = Scenario::from_json(&scenario.to_json()).unwrap();
    let read: Vec<f64> = back.w_q.unwrap().into_iter().flatten().take(6).collect();
    assert_eq!(read, values, "written {values:?}, read {read:?}");
}
