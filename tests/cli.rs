//! The `attention-lens` binary, run as a learner would run it.

// Native tests: they read files and run the CLI, which the browser target cannot.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{forward, Trace};
use attention_lens::formats::report::{trace_json_pretty, trace_matrices, CSV_HEADER};
use attention_lens::formats::scenario::Scenario;
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str]) -> Output {
    run_with_stdin(args, "")
}

fn run_with_stdin(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_attention-lens"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    // A command that does not read its input may close it first; that is fine.
    let _ = child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("the binary finishes")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&stdout(&run(args))).expect("stdout is JSON")
}

/// Asserts a failure with exit code 2 and one `error: ` line, and returns that line.
fn error_line(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    let stderr = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.ends_with('\n'));
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    stderr.trim_end().to_string()
}

fn default_trace() -> Trace {
    forward(&Scenario::default().to_inputs().unwrap()).unwrap()
}

fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("attention-lens-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

fn matrix(value: &Value) -> Vec<Vec<Option<f64>>> {
    value
        .as_array()
        .expect("a matrix is an array")
        .iter()
        .map(|row| {
            row.as_array()
                .expect("a row is an array")
                .iter()
                .map(Value::as_f64)
                .collect()
        })
        .collect()
}

#[test]
fn json_is_the_default_and_is_the_library_s_trace_export() {
    // The keys and their order are the report module's contract, tested there; the command
    // prints exactly that text, byte for byte.
    let text = stdout(&run(&["trace"]));
    assert_eq!(text, trace_json_pretty(&default_trace()));
    assert_eq!(stdout(&run(&["trace", "--format", "json"])), text);
    let value: Value = serde_json::from_str(&text).expect("stdout is JSON");
    assert_eq!(value["tokens"], serde_json::json!(["I", "am", "hungry"]));
    assert_eq!(value["positional"], Value::Null);
}

#[test]
fn json_output_is_the_forward_pass_of_the_default_scenario() {
    let value = json(&["trace"]);
    let expected = default_trace().output;
    let output = matrix(&value["output"]);
    assert_eq!(output.len(), expected.nrows());
    for (i, row) in output.iter().enumerate() {
        assert_eq!(row.len(), expected.ncols());
        for (j, v) in row.iter().enumerate() {
            let v = v.expect("a finite output");
            assert!((v - expected[(i, j)]).abs() < 1e-12, "output[{i}][{j}]");
        }
    }
}

#[test]
fn markdown_has_every_stage_and_the_tokens() {
    let md = stdout(&run(&["trace", "--format", "markdown"]));
    for stage in attention_lens::attention::Stage::ALL {
        assert!(
            md.contains(&attention_lens::words::stage_title(
                stage,
                &attention_lens::attention::Config::default(),
                attention_lens::attention::Wiring::default()
            )),
            "missing {stage:?}"
        );
    }
    for token in ["I", "am", "hungry"] {
        assert!(md.contains(&format!("| {token} |")), "missing {token}");
    }
    assert!(md.starts_with("# "));
    assert_eq!(stdout(&run(&["trace", "--format", "md"])), md);
}

#[test]
fn the_handout_says_whether_word_order_shows_for_the_switches_given() {
    let plain = stdout(&run(&["trace", "--format", "markdown"]));
    assert!(plain.contains("cannot tell word order apart"), "{plain}");
    let masked = stdout(&run(&["trace", "--format", "markdown", "--causal"]));
    assert!(masked.contains("the causal mask still makes order matter"));
    assert!(!masked.contains("cannot tell word order"));
    let positions = stdout(&run(&["trace", "--format", "markdown", "--positional"]));
    assert!(positions.contains("each row of X carries its position"));
    assert!(!positions.contains("cannot tell word order"));
}

#[test]
fn the_handout_formulas_follow_the_settings() {
    let md = stdout(&run(&["trace", "--format", "markdown", "--scale", "none"]));
    assert!(md.contains("## 5. Scale: off (no scaling)"), "{md}");
    assert!(md.contains("`Zₕ = Sₕ`"));
    assert!(!md.contains("Sₕ / √d_k"));
    assert!(md.contains("`X = E`") && md.contains("`Mₕ = Zₕ`"));
    let md = stdout(&run(&[
        "trace",
        "--format",
        "markdown",
        "--causal",
        "--positional",
    ]));
    assert!(md.contains("`X = E + P`") && md.contains("−∞ if j > i"));
    assert!(md.contains("## 5. Scale ÷√d_k"));
}

#[test]
fn csv_has_the_header_and_one_line_per_value() {
    let csv = stdout(&run(&["trace", "--format", "csv"]));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], CSV_HEADER);
    let trace = default_trace();
    let values: usize = trace_matrices(&trace)
        .iter()
        .map(|m| m.matrix.nrows() * m.matrix.ncols())
        .sum();
    assert_eq!(lines.len(), values + 1);
    // Worked out by hand for 3 tokens, d_model 4, 2 heads of width 2.
    assert_eq!(
        values,
        12 + 12 + 4 * 16 + 3 * 12 + 2 * (3 * 6 + 4 * 9 + 6) + 12 + 12
    );
    assert!(lines[1..].iter().all(|l| l.split(',').count() == 7));
}

#[test]
fn the_scenario_command_prints_the_default_scenario_which_round_trips() {
    let text = stdout(&run(&["scenario"]));
    let scenario = Scenario::from_json(&text).expect("a valid scenario");
    assert_eq!(scenario, Scenario::default());
    assert_eq!(Scenario::from_json(&scenario.to_json()).unwrap(), scenario);

    // Fed back in, it gives the default trace.
    let path = temp_file("default.json", &text);
    let from_file = json(&["trace", "--scenario", path.to_str().unwrap()]);
    assert_eq!(from_file, json(&["trace"]));
    let from_stdin: Value = serde_json::from_str(&stdout(&run_with_stdin(
        &["trace", "--scenario", "-"],
        &text,
    )))
    .unwrap();
    assert_eq!(from_stdin, from_file);
}

#[test]
fn heads_and_causal_flags_apply() {
    let value = json(&["trace", "--heads", "4", "--causal"]);
    assert_eq!(value["config"]["n_heads"], 4);
    assert_eq!(value["config"]["head_dim"], 1);
    let heads = value["heads"].as_array().unwrap();
    assert_eq!(heads.len(), 4);
    for head in heads {
        let masked = matrix(&head["masked"]);
        for (i, row) in masked.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                // Null exactly above the diagonal, where the key comes after the query.
                assert_eq!(v.is_none(), j > i, "masked[{i}][{j}]");
            }
        }
    }
}

#[test]
fn width_sentence_and_switches_apply() {
    let value = json(&[
        "trace",
        "--sentence",
        "the cat sat down",
        "--d-model",
        "6",
        "--heads=3",
        "--positional",
        "--scale",
        "sqrt_seq_len",
        "--temperature",
        "0.5",
    ]);
    let config = &value["config"];
    assert_eq!(config["d_model"], 6);
    assert_eq!(config["n_heads"], 3);
    assert_eq!(config["positional_encoding"], true);
    assert_eq!(config["scale"], "sqrt_seq_len");
    assert_eq!(config["temperature"], 0.5);
    assert_eq!(value["scale_divisor"], 2.0);
    assert_eq!(value["tokens"].as_array().unwrap().len(), 4);
    assert_eq!(matrix(&value["x"])[0].len(), 6);
    assert_eq!(matrix(&value["positional"]).len(), 4);
}

#[test]
fn options_override_a_scenario_file() {
    let path = temp_file(
        "causal.json",
        r#"{"version": 1, "sentence": "a b c", "causal": true, "n_heads": 1}"#,
    );
    let file = path.to_str().unwrap();
    let value = json(&["trace", "--scenario", file]);
    assert_eq!(value["config"]["causal"], true);
    assert_eq!(value["heads"].as_array().unwrap().len(), 1);
    let value = json(&["trace", "--scenario", file, "--no-causal", "--heads", "2"]);
    assert_eq!(value["config"]["causal"], false);
    assert_eq!(value["heads"].as_array().unwrap().len(), 2);
}

#[test]
fn help_and_version_succeed() {
    for args in [&[][..], &["help"], &["--help"], &["-h"]] {
        let text = stdout(&run(args));
        assert!(text.contains("Usage: attention-lens <COMMAND>"), "{args:?}");
        assert!(text.contains("\n  trace "), "{args:?}");
        assert!(text.contains("\n  scenario "), "{args:?}");
        assert!(text.contains("help trace"), "{args:?}");
    }
    for args in [
        &["trace", "--help"][..],
        &["trace", "-h"],
        &["help", "trace"],
    ] {
        let text = stdout(&run(args));
        assert!(
            text.contains("Usage: attention-lens trace [OPTIONS]"),
            "{args:?}"
        );
        for option in [
            "--scenario <FILE>",
            "--sentence <TEXT>",
            "--d-model <N>",
            "--heads <N>",
            "--causal",
            "--no-causal",
            "--positional",
            "--no-positional",
            "--scale <MODE>",
            "--temperature <T>",
            "--format <FORMAT>",
        ] {
            assert!(
                text.lines()
                    .any(|line| line.trim_start().starts_with(option)),
                "{args:?} lacks {option}"
            );
        }
    }
    let version = stdout(&run(&["--version"]));
    assert_eq!(
        version.trim_end(),
        format!("attention-lens {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn an_unknown_flag_or_command_is_refused() {
    assert!(error_line(&["trace", "--colour"]).contains("unknown option `--colour`"));
    assert!(error_line(&["draw"]).contains("unknown command `draw`"));
    assert!(error_line(&["--verbose"]).contains("unknown option"));
    let line = error_line(&["trace", "--head", "2"]);
    assert!(
        line.contains("`--head`") && line.contains("did you mean `--heads`?"),
        "{line}"
    );
}

#[test]
fn a_missing_or_wrong_value_is_refused() {
    assert!(error_line(&["trace", "--heads"]).contains("`--heads` needs a value"));
    assert!(error_line(&["trace", "--d-model", "four"]).contains("whole number"));
    assert!(error_line(&["trace", "--temperature", "hot"]).contains("a number"));
    let line = error_line(&["trace", "--format", "xml"]);
    assert!(
        line.contains("json, markdown or csv") && line.contains("xml"),
        "{line}"
    );
    assert!(error_line(&["trace", "--scale", "sqrt"]).contains("sqrt_head_dim"));
}

#[test]
fn heads_that_do_not_divide_d_model_are_explained() {
    let line = error_line(&["trace", "--heads", "3"]);
    assert!(
        line.contains("--heads 3") && line.contains("divide"),
        "{line}"
    );
}

#[test]
fn an_empty_sentence_is_refused() {
    let line = error_line(&["trace", "--sentence", ""]);
    assert!(line.contains("at least one word"), "{line}");
}

#[test]
fn a_missing_file_is_named() {
    let line = error_line(&["trace", "--scenario", "/no/such/scenario.json"]);
    assert!(line.contains("/no/such/scenario.json"), "{line}");
    assert!(line.contains("no such file"), "{line}");
}

#[test]
fn malformed_json_names_the_problem() {
    let path = temp_file("broken.json", "{\"version\": 1,\n \"sentence\": \"a\",\n}");
    let line = error_line(&["trace", "--scenario", path.to_str().unwrap()]);
    assert!(line.contains("broken.json"), "{line}");
    assert!(line.contains("not a valid scenario"), "{line}");
    assert!(line.contains("line 3"), "{line}");

    let path = temp_file("no_sentence.json", r#"{"version": 1}"#);
    let line = error_line(&["trace", "--scenario", path.to_str().unwrap()]);
    assert!(line.contains("sentence"), "{line}");

    let path = temp_file(
        "bad_shape.json",
        r#"{"version": 1, "sentence": "a", "w_q": [[1]]}"#,
    );
    let line = error_line(&["trace", "--scenario", path.to_str().unwrap()]);
    assert!(line.contains("w_q"), "{line}");
}

#[test]
fn malformed_json_on_standard_input_is_refused() {
    let out = run_with_stdin(&["trace", "--scenario", "-"], "not json");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("error: standard input: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1);
}

#[test]
fn the_block_and_a_source_appear_in_every_format_under_their_contract_names() {
    let trace = json(&[
        "trace",
        "--source",
        "le chat noir",
        "--norm",
        "pre",
        "--d-ff",
        "6",
    ]);
    assert_eq!(
        trace["source_tokens"],
        serde_json::json!(["le", "chat", "noir"])
    );
    assert_eq!(trace["source_x"].as_array().unwrap().len(), 3);
    // Keys and values have one row per source token; the weights are queries × source tokens.
    assert_eq!(trace["k"].as_array().unwrap().len(), 3);
    let weights = trace["heads"][0]["weights"].as_array().unwrap();
    assert_eq!(weights.len(), 3);
    assert_eq!(weights[0].as_array().unwrap().len(), 3);
    let block = &trace["block"];
    for key in [
        "attention_input",
        "sum_1",
        "norm_1",
        "hidden",
        "activated",
        "ffn",
        "sum_2",
        "norm_2",
        "out",
    ] {
        assert!(block[key].is_array(), "block.{key}");
    }
    assert_eq!(block["norm"], "pre");
    assert_eq!(block["hidden"][0].as_array().unwrap().len(), 6);
    // Pre-norm: the block's output is R₂, and attention read N₁.
    assert_eq!(block["out"], block["sum_2"]);
    assert_eq!(block["attention_input"], block["norm_1"]);
    // The top-level x stays E + P.
    assert_ne!(trace["x"], block["norm_1"]);

    let md = stdout(&run(&[
        "trace",
        "--block",
        "--activation",
        "gelu",
        "--format",
        "markdown",
    ]));
    for heading in [
        "Residual sum R₁",
        "LayerNorm N₁",
        "Activation: GELU",
        "LayerNorm N₂",
    ] {
        assert!(md.contains(heading), "markdown lacks {heading}");
    }
    assert!(md.contains("## 17. LayerNorm N₂"));
    let csv = stdout(&run(&["trace", "--source", "le chat", "--format", "csv"]));
    assert!(csv.contains("\nsource_x,,1,le,1,d1,"), "{}", &csv[..200]);
    assert!(csv.contains("\nweights,1,1,I,2,chat,"));
}

#[test]
fn the_causal_mask_with_a_source_is_an_error_naming_both() {
    let line = error_line(&["trace", "--source", "le chat", "--causal"]);
    assert!(
        line.contains("`causal`") && line.contains("`source`"),
        "{line}"
    );
    let line = error_line(&["trace", "--d-ff", "65"]);
    assert!(line.contains("--d-ff"), "{line}");
    let line = error_line(&["trace", "--norm", "middle"]);
    assert!(line.contains("--norm"), "{line}");
}

#[test]
fn worksheet_prints_the_same_sheet_for_a_seed_and_its_answer_key_on_request() {
    let sheet = stdout(&run(&["worksheet", "--seed", "4", "--questions", "6"]));
    assert_eq!(
        sheet,
        stdout(&run(&["worksheet", "--seed", "4", "--questions", "6"]))
    );
    assert!(sheet.starts_with("# Worksheet: I am hungry"));
    assert_eq!(sheet.matches("Answer: ____________").count(), 6);
    assert!(sheet.contains("## Inputs") && sheet.contains("**W_q**"));
    let key = stdout(&run(&[
        "worksheet",
        "--seed",
        "4",
        "--questions",
        "6",
        "--answers",
    ]));
    assert!(key.starts_with("# Answer key: I am hungry"));
    assert_eq!(key.matches("**Answer:**").count(), 6);
    assert_eq!(key.matches("Worked: ").count(), 6);
    assert_ne!(
        sheet,
        stdout(&run(&["worksheet", "--seed", "5", "--questions", "6"]))
    );
    // The trace's options apply: a source and the block give their own stages' questions.
    let cross = stdout(&run(&[
        "worksheet",
        "--source",
        "le chat",
        "--block",
        "--questions",
        "17",
    ]));
    assert!(cross.contains("source_embeddings") || cross.contains("E_src"));
    assert!(cross.contains("(Stage 17: LayerNorm N₂)"));
    let line = error_line(&["worksheet", "--questions", "0"]);
    assert!(line.contains("--questions"), "{line}");
}

#[test]
fn worksheet_quiz_set_asks_one_question_per_stage_as_the_app_does() {
    let key = stdout(&run(&["worksheet", "--quiz-set", "3", "--answers"]));
    assert!(key.contains("Question set 3"));
    // Ten forward stages, and the six backward ones the default goal's pattern loss reaches:
    // not the output projection's (12) or the weighted sum's (13).
    assert_eq!(key.matches("**Answer:**").count(), 16);
    for n in (1..=18).filter(|n| ![12, 13].contains(n)) {
        assert!(key.contains(&format!("(Stage {n}: ")), "stage {n}");
    }
    assert!(!key.contains("(Stage 12: ") && !key.contains("(Stage 13: "));
    assert!(
        key.contains("## Goal\n\nThe backward questions are about the gradients of this goal's loss: Pattern: each token looks at the key one position before it"),
        "{key}"
    );
    assert_ne!(
        key,
        stdout(&run(&["worksheet", "--quiz-set", "4", "--answers"]))
    );
    let block = stdout(&run(&["worksheet", "--quiz-set", "1", "--block"]));
    assert_eq!(block.matches("Answer: ____________").count(), 23);
    // The answer key carries the worked arithmetic's notes, as the app's explanations do: here
    // the LayerNorm's, which says what μᵢ and σᵢ² are.
    let block_key = stdout(&run(&[
        "worksheet",
        "--quiz-set",
        "1",
        "--block",
        "--answers",
    ]));
    assert_eq!(block_key.matches("the mean and the variance").count(), 2);
    for bad in [
        &["worksheet", "--quiz-set", "0"][..],
        &["worksheet", "--quiz-set", "2", "--seed", "3"][..],
        &["worksheet", "--quiz-set", "2", "--questions", "3"][..],
    ] {
        let line = error_line(bad);
        assert!(line.contains("--quiz-set"), "{line}");
    }
}

#[test]
fn worksheet_says_why_it_asks_nothing_on_the_way_back_when_the_settings_refuse_the_goal() {
    let trained = json(&["train", "--target", "next", "--steps", "1"]);
    let scenario = trained["scenario"].to_string();
    let key = stdout(&run_with_stdin(
        &[
            "worksheet",
            "--scenario",
            "-",
            "--causal",
            "--quiz-set",
            "1",
            "--answers",
        ],
        &scenario,
    ));
    assert!(
        key.contains("## Goal\n\nThe sheet asks nothing about the backward stages: the goal “Pattern: each token"),
        "{key}"
    );
    assert!(key.contains("The `next` target puts weight on a key the causal mask hides"));
    assert_eq!(key.matches("**Answer:**").count(), 10, "{key}");
}

#[test]
fn prefill_adds_the_kv_cache_s_steps_which_equal_the_full_pass() {
    let sentence = "the cat sat on the mat";
    let t = json(&[
        "trace",
        "--causal",
        "--sentence",
        sentence,
        "--prefill",
        "2",
    ]);
    let d = &t["decode"];
    assert_eq!(d["prefill"], 2);
    assert_eq!(d["matches_full_pass"], true);
    let steps = d["steps"].as_array().unwrap();
    assert_eq!(
        steps
            .iter()
            .map(|s| s["position"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [2, 3, 4, 5]
    );
    let d_model = t["config"]["d_model"].as_u64().unwrap() as usize;
    let mut recomputed_before = 0;
    for step in steps {
        let i = step["position"].as_u64().unwrap() as usize;
        // The cache holds i + 1 rows per head; each head's scores and weights have i + 1 keys.
        assert_eq!(step["k_cache"].as_array().unwrap().len(), 2);
        assert_eq!(step["v_cache"][1].as_array().unwrap().len(), i + 1);
        let head = &step["heads"][0];
        assert_eq!(head["scores"][0].as_array().unwrap().len(), i + 1);
        // The weights over the cache are the full pass's row up to the token itself.
        assert_eq!(
            head["weights"][0].as_array().unwrap()[..],
            t["heads"][0]["weights"][i].as_array().unwrap()[..=i]
        );
        // The output row is the full pass's row, to the last digit printed.
        for c in 0..d_model {
            let (a, b) = (
                step["output"][0][c].as_f64().unwrap(),
                t["output"][i][c].as_f64().unwrap(),
            );
            assert!(
                (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                "{i}, {c}: {a} against {b}"
            );
        }
        let (cached, recomputed) = (
            step["macs"]["cached"].as_u64().unwrap(),
            step["macs"]["recomputed"].as_u64().unwrap(),
        );
        assert!(cached < recomputed && recomputed > recomputed_before);
        recomputed_before = recomputed;
    }
    // Without --prefill there is no decode.
    assert!(json(&["trace", "--causal"]).get("decode").is_none());
    // grad and train accept it and change nothing.
    assert_eq!(
        json(&["grad", "--causal", "--prefill", "1"]),
        json(&["grad", "--causal"])
    );
}

#[test]
fn prefill_is_refused_without_the_mask_with_a_source_outside_the_sentence_and_off_json() {
    for (args, says) in [
        (&["trace", "--prefill", "1"][..], "needs the causal mask"),
        (
            &["trace", "--causal", "--prefill", "4"][..],
            "between 1 and 3, the sentence's length",
        ),
        (
            &["trace", "--causal", "--prefill", "0"][..],
            "between 1 and 3, the sentence's length",
        ),
        (
            &["trace", "--source", "le chat", "--prefill", "1"][..],
            "with a source sentence",
        ),
        (&["grad", "--prefill", "2"][..], "needs the causal mask"),
        (
            &["train", "--steps", "1", "--prefill", "2"][..],
            "needs the causal mask",
        ),
        (
            &[
                "trace",
                "--causal",
                "--prefill",
                "1",
                "--format",
                "markdown",
            ][..],
            "--format json",
        ),
    ] {
        let line = error_line(args);
        assert!(line.contains(says), "{args:?}: {line}");
    }
    assert!(error_line(&["trace", "--causal", "--prefill", "2x"]).contains("--prefill"));
}

#[test]
fn tile_lists_every_block_of_every_row_and_its_last_o_over_l_is_the_weighted_sum() {
    let t = json(&[
        "trace",
        "--causal",
        "--sentence",
        "a b c d e",
        "--tile",
        "2",
    ]);
    for head in t["heads"].as_array().unwrap() {
        let tiles = head["tiles"].as_array().unwrap();
        assert_eq!(tiles.len(), 5);
        for (i, row) in tiles.iter().enumerate() {
            // Blocks [0, 2), [2, 4), [4, 5): all three listed, masked ones too.
            let row = row.as_array().unwrap();
            assert_eq!(row.len(), 3);
            let last = row.last().unwrap();
            let l = last["l"].as_f64().unwrap();
            for c in 0..2 {
                let o = last["o"][c].as_f64().unwrap() / l;
                let want = head["context"][i][c].as_f64().unwrap();
                assert!((o - want).abs() < 1e-12, "row {i}: {o} against {want}");
            }
            // Under the mask, a block after the query's own changes nothing.
            if i < 2 {
                assert_eq!(row[1], row[0]);
                assert_eq!(row[2], row[0]);
            }
        }
    }
    assert!(json(&["trace"])["heads"][0].get("tiles").is_none());
    assert!(error_line(&["trace", "--tile", "0"]).contains("--tile"));
    assert!(error_line(&["trace", "--tile", "2", "--format", "csv"]).contains("--format json"));
    assert_eq!(json(&["grad", "--tile", "2"]), json(&["grad"]));
}

#[test]
fn rope_kv_heads_and_window_reach_the_trace_under_the_contract_s_names() {
    let sentence = "the cat sat on the mat";
    let t = json(&[
        "trace",
        "--sentence",
        sentence,
        "--d-model",
        "8",
        "--heads",
        "4",
        "--causal",
        "--rope",
        "--rope-theta",
        "500",
        "--rope-pairing",
        "interleaved",
        "--kv-heads",
        "2",
        "--window",
        "3",
        "--prefill",
        "2",
    ]);
    let c = &t["config"];
    assert_eq!(c["rope"]["theta"], 500.0);
    assert_eq!(c["rope"]["pairing"], "interleaved");
    assert_eq!(
        (c["n_kv_heads"].as_u64(), c["window"].as_u64()),
        (Some(2), Some(3))
    );
    // K and V are 2 key/value heads of d_k = 2 wide; W_k and W_v likewise.
    assert_eq!(t["k"][0].as_array().unwrap().len(), 4);
    assert_eq!(t["w_v"][0].as_array().unwrap().len(), 4);
    let heads = t["heads"].as_array().unwrap();
    let kv: Vec<u64> = heads
        .iter()
        .map(|h| h["kv_head"].as_u64().unwrap())
        .collect();
    assert_eq!(kv, [0, 0, 1, 1]);
    // Heads 0 and 1 read the same keys; q and k stay unturned, q_rope and k_rope are turned.
    assert_eq!(heads[0]["k"], heads[1]["k"]);
    assert_eq!(
        heads[0]["q"][0], heads[0]["q_rope"][0],
        "position 0 is not turned"
    );
    assert_ne!(heads[0]["q"][1], heads[0]["q_rope"][1]);
    assert_eq!(heads[2]["k"][1][0], t["k"][1][2]);
    // The window hides key 0 from row 3, as the causal mask hides key 4.
    assert!(heads[0]["masked"][3][0].is_null() && heads[0]["masked"][3][1].is_number());
    assert!(heads[0]["masked"][3][4].is_null());
    // Decoding with all of it equals the full pass, one cache per key/value head.
    assert_eq!(t["decode"]["matches_full_pass"], true);
    assert_eq!(
        t["decode"]["steps"][0]["k_cache"].as_array().unwrap().len(),
        2
    );
    // Without the options: rope and window null, one key/value head per head, no q_rope.
    let plain = json(&["trace"]);
    assert!(plain["config"]["rope"].is_null() && plain["config"]["window"].is_null());
    assert_eq!(plain["config"]["n_kv_heads"], 2);
    assert!(plain["heads"][1].get("q_rope").is_none());
    assert_eq!(plain["heads"][1]["kv_head"], 1);
}

#[test]
fn grad_and_train_keep_the_shapes_of_shared_key_value_heads() {
    let args = [
        "--d-model",
        "8",
        "--heads",
        "4",
        "--kv-heads",
        "1",
        "--rope",
    ];
    let g = json(&[&["grad"][..], &args[..]].concat());
    for (name, cols) in [("w_q", 8), ("w_k", 2), ("w_v", 2), ("w_o", 8)] {
        let m = g["grad"][name].as_array().unwrap();
        assert_eq!(
            (m.len(), m[0].as_array().unwrap().len()),
            (8, cols),
            "{name}"
        );
    }
    let trained = json(&[&["train", "--steps", "3"][..], &args[..]].concat());
    let scenario = &trained["scenario"];
    assert_eq!(scenario["version"], 4);
    assert_eq!(scenario["n_kv_heads"], 1);
    assert_eq!(scenario["rope"]["pairing"], "half");
    assert_eq!(scenario["w_k"][0].as_array().unwrap().len(), 2);
    // The trained scenario reads back.
    let text = serde_json::to_string(scenario).unwrap();
    assert!(Scenario::parse_inputs(&text).is_ok());
}

#[test]
fn the_new_options_refuse_what_they_cannot_do_in_one_line() {
    for (args, says) in [
        (
            &["trace", "--rope", "--d-model", "6"][..],
            "`--rope`: Rotary positions turn",
        ),
        (&["trace", "--rope-theta", "1"][..], "`--rope-theta 1`:"),
        (
            &["trace", "--rope", "--source", "le chat"][..],
            "a source sentence",
        ),
        (&["trace", "--rope-pairing", "diag"][..], "--rope-pairing"),
        (
            &["trace", "--kv-heads", "3", "--d-model", "8", "--heads", "4"][..],
            "choose one of 1, 2 or 4",
        ),
        (&["trace", "--window", "2"][..], "needs the causal mask"),
        (&["trace", "--window", "0", "--causal"][..], "`--window 0`"),
        (
            &["grad", "--causal", "--window", "1"][..],
            "the sliding window hides",
        ),
    ] {
        let line = error_line(args);
        assert!(line.contains(says), "{args:?}: {line}");
    }
    // A scenario's W_k must have n_kv_heads·d_k columns.
    let scenario = r#"{"version": 4, "sentence": "a b", "n_kv_heads": 1,
        "w_k": [[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]]}"#;
    let out = run_with_stdin(&["trace", "--scenario", "-"], scenario);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("Field `w_k`") && stderr.contains("4 rows and 2 columns"),
        "{stderr}"
    );
}

#[test]
fn the_llama_block_runs_from_the_command_line() {
    let t = json(&[
        "trace",
        "--causal",
        "--norm",
        "pre",
        "--norm-type",
        "rmsnorm",
        "--activation",
        "swiglu",
        "--d-ff",
        "6",
    ]);
    let b = &t["block"];
    assert_eq!(b["norm_type"], "rmsnorm");
    assert_eq!(b["activation"], "swiglu");
    assert_eq!(b["w_gate"].as_array().unwrap().len(), 4);
    assert_eq!(b["gate"][0].as_array().unwrap().len(), 6);
    // N₁ = RMSNorm(X) with γ = 1: each row's mean square is 1 up to ε.
    for row in b["attention_input"].as_array().unwrap() {
        let ms: f64 = row
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap().powi(2))
            .sum::<f64>()
            / 4.0;
        assert!((ms - 1.0).abs() < 1e-3, "{ms}");
    }
    // G = SiLU(gate) ⊙ H.
    let (g, h, z) = (&b["activated"][1][2], &b["hidden"][1][2], &b["gate"][1][2]);
    let z = z.as_f64().unwrap();
    let expected = z / (1.0 + (-z).exp()) * h.as_f64().unwrap();
    assert!((g.as_f64().unwrap() - expected).abs() < 1e-12);
    // Without SwiGLU there is no gate.
    assert!(json(&["trace", "--block"])["block"].get("gate").is_none());
    for (args, says) in [
        (&["trace", "--norm-type", "rms"][..], "--norm-type"),
        (
            &["train", "--train", "w_gate", "--steps", "1"][..],
            "`--train`",
        ),
    ] {
        let line = error_line(args);
        assert!(line.contains(says), "{args:?}: {line}");
    }
}

#[test]
fn the_worked_example_and_the_worksheet_explain_todays_attention() {
    let args = [
        "--causal",
        "--rope",
        "--kv-heads",
        "1",
        "--window",
        "2",
        "--d-model",
        "8",
        "--heads",
        "2",
        "--norm",
        "pre",
        "--norm-type",
        "rmsnorm",
        "--activation",
        "swiglu",
    ];
    let markdown = stdout(&run(
        &[&["trace", "--format", "markdown"][..], &args].concat()
    ));
    for part in [
        "## 5. Rotary positions Q̃ₕ, K̃ₕ",
        "**Q̃₁**: this head's queries, turned by their positions",
        "## 4. Split into heads (one shared K, V)",
        "- **1 key/value head:** the 2 query heads share it in groups of 2",
        "Causal mask, window W = 2",
        "## 2. RMSNorm N₁",
        "RMSNorm works on each row",
        "Activation: SwiGLU (Llama)",
    ] {
        assert!(markdown.contains(part), "{part}\n{markdown}");
    }
    assert!(!markdown.contains("first LayerNorm"), "{markdown}");
    let sheet = stdout(&run(&[&["worksheet", "--answers"][..], &args].concat()));
    assert!(sheet.contains("Rotary positions"), "{sheet}");
    assert!(sheet.contains("**Answer:**"), "{sheet}");
    // With decoding and the tiles, a quiz set asks at each of them too, after the stages they
    // follow, and the key explains both.
    let views = ["--prefill", "2", "--tile", "2", "--quiz-set", "2"];
    let plain = stdout(&run(
        &[&["worksheet", "--quiz-set", "2"][..], &args].concat()
    ));
    let key = stdout(&run(
        &[&["worksheet", "--answers"][..], &args, &views].concat()
    ));
    assert_eq!(
        key.matches("**Answer:**").count(),
        plain.matches("Answer: ____________").count() + 2,
        "{key}"
    );
    assert!(key.contains(": FlashAttention's tiled softmax) "), "{key}");
    assert!(key.contains(": Decoding from the KV cache) "), "{key}");
    assert!(
        key.contains("blocks of 2 keys") || key.contains("2 keys at a time"),
        "{key}"
    );
    assert!(key.contains("(counting from 0)"), "{key}");
    let line = error_line(&["worksheet", "--prefill", "2"]);
    assert!(line.contains("--prefill"), "{line}");
}
