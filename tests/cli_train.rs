//! `attention-lens grad` and `attention-lens train`, run as a learner would run them: the
//! printed numbers against the library's backward pass and training loop, the gradient against
//! central finite differences of the printed loss, and every refusal as one `error:` line.

// Native tests: they write files and run the CLI, which the browser target cannot.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{
    forward, gradients, train, Goal, HeadTarget, Inputs, Matrix, NamedTarget, Optimizer,
    OptimizerKind, Task, Trainable, Training,
};
use attention_lens::cli::DEFAULT_STEPS;
use attention_lens::formats::report::trace_json_pretty;
use attention_lens::formats::scenario::{rows_of, Scenario};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_attention-lens"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: exit {:?}, stderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "{args:?}");
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&stdout(args)).expect("stdout is JSON")
}

/// Asserts a failure with exit code 2, nothing on stdout and one `error: ` line; returns it.
fn error_line(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    let stderr = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    stderr.trim_end().to_string()
}

fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("attention-lens-train-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// A JSON matrix as rows of numbers; panics on anything else, which fails the test.
fn rows(value: &Value) -> Vec<Vec<f64>> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a matrix: {value}"))
        .iter()
        .map(|row| {
            row.as_array()
                .unwrap_or_else(|| panic!("not a row: {row}"))
                .iter()
                .map(|v| v.as_f64().unwrap_or_else(|| panic!("not a number: {v}")))
                .collect()
        })
        .collect()
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

fn default_inputs() -> Inputs {
    Scenario::default().to_inputs().unwrap()
}

/// Checks that `grad`'s output is, number for number, the library's gradients for `goal`.
fn assert_same_gradients(printed: &Value, inputs: &Inputs, goal: &Goal) {
    let g = gradients(inputs, goal).unwrap();
    let d = inputs.config.d_model;
    let zeros = Matrix::zeros(d, d);
    assert_eq!(printed["loss"].as_f64(), Some(g.loss));
    let grad = &printed["grad"];
    assert_eq!(rows(&grad["w_q"]), rows_of(&g.d_w_q));
    assert_eq!(rows(&grad["w_k"]), rows_of(&g.d_w_k));
    assert_eq!(
        rows(&grad["w_v"]),
        rows_of(g.d_w_v.as_ref().unwrap_or(&zeros))
    );
    assert_eq!(
        rows(&grad["w_o"]),
        rows_of(g.d_w_o.as_ref().unwrap_or(&zeros))
    );
    assert_eq!(rows(&grad["embeddings"]), rows_of(&g.d_embeddings));
    match &g.d_source_embeddings {
        Some(m) => assert_eq!(rows(&grad["source_embeddings"]), rows_of(m)),
        None => assert!(grad.get("source_embeddings").is_none()),
    }
    let heads = printed["heads"].as_array().expect("heads is an array");
    assert_eq!(heads.len(), g.heads.len());
    for (printed, head) in heads.iter().zip(&g.heads) {
        assert_eq!(keys(printed), ["d_scores", "d_weights"]);
        assert_eq!(rows(&printed["d_weights"]), rows_of(&head.d_weights));
        assert_eq!(rows(&printed["d_scores"]), rows_of(&head.d_scores));
    }
}

#[test]
fn grad_prints_the_library_s_gradients_with_zeros_where_the_pattern_loss_does_not_reach() {
    let printed = json(&["grad"]);
    assert_eq!(keys(&printed), ["grad", "heads", "loss"]);
    assert_eq!(
        keys(&printed["grad"]),
        ["embeddings", "w_k", "w_o", "w_q", "w_v"]
    );
    // The default goal is `previous` for every head.
    assert_same_gradients(
        &printed,
        &default_inputs(),
        &Goal::named(NamedTarget::Previous),
    );
    for name in ["w_v", "w_o"] {
        let m = rows(&printed["grad"][name]);
        assert_eq!(m.len(), 4, "{name}");
        assert!(m.iter().flatten().all(|v| *v == 0.0), "{name}: {m:?}");
    }
    // The shapes: d_model × d_model, seq_len × d_model, seq_len × n_keys.
    assert_eq!(rows(&printed["grad"]["w_q"]).len(), 4);
    assert_eq!(rows(&printed["grad"]["embeddings"]).len(), 3);
    assert_eq!(rows(&printed["heads"][1]["d_scores"])[2].len(), 3);
}

#[test]
fn grad_follows_per_head_targets_and_tasks_with_a_source() {
    let printed = json(&["grad", "--target", "first,uniform", "--positional"]);
    let inputs = Scenario {
        positional_encoding: true,
        ..Scenario::default()
    }
    .to_inputs()
    .unwrap();
    let goal = Goal::Pattern(vec![
        HeadTarget::Named(NamedTarget::First),
        HeadTarget::Named(NamedTarget::Uniform),
    ]);
    assert_same_gradients(&printed, &inputs, &goal);

    let printed = json(&["grad", "--task", "copy_first", "--source", "le chat noir"]);
    let inputs = Scenario {
        version: 2,
        source: Some("le chat noir".into()),
        ..Scenario::default()
    }
    .to_inputs()
    .unwrap();
    assert_same_gradients(&printed, &inputs, &Goal::Task(Task::CopyFirst));
    assert_eq!(rows(&printed["grad"]["source_embeddings"]).len(), 3);
    // A task reaches W_v and W_o.
    assert!(rows(&printed["grad"]["w_v"])
        .iter()
        .flatten()
        .any(|v| *v != 0.0));
    // `--loss task` with `--task` says the same thing twice.
    assert_eq!(
        json(&[
            "grad",
            "--loss",
            "task",
            "--task",
            "copy_first",
            "--source",
            "le chat noir"
        ]),
        printed
    );
}

/// The loss `grad` prints for `scenario` with `goal_args`.
fn printed_loss(scenario: &Scenario, goal_args: &[&str], name: &str) -> f64 {
    let path = temp_file(name, &scenario.to_json());
    let mut args = vec!["grad", "--scenario", path.to_str().unwrap()];
    args.extend_from_slice(goal_args);
    json(&args)["loss"].as_f64().expect("a loss")
}

/// Compares `grad`'s entry with a central difference of the printed loss, moving `entry` of the
/// scenario by ±h.
fn check_central_difference(
    scenario: &Scenario,
    goal_args: &[&str],
    field: &str,
    entry: fn(&mut Scenario) -> &mut f64,
    (i, j): (usize, usize),
) {
    const H: f64 = 1e-5;
    let path = temp_file("fd-base.json", &scenario.to_json());
    let mut args = vec!["grad", "--scenario", path.to_str().unwrap()];
    args.extend_from_slice(goal_args);
    let analytic = rows(&json(&args)["grad"][field])[i][j];
    let nudged = |delta: f64, name: &str| {
        let mut s = scenario.clone();
        *entry(&mut s) += delta;
        printed_loss(&s, goal_args, name)
    };
    let numeric = (nudged(H, "fd-up.json") - nudged(-H, "fd-down.json")) / (2.0 * H);
    let scale = analytic.abs().max(numeric.abs()).max(1e-3);
    assert!(
        (analytic - numeric).abs() / scale < 1e-6,
        "{goal_args:?} {field}[{i}][{j}]: analytic {analytic}, numeric {numeric}"
    );
    assert!(analytic != 0.0, "a zero entry checks nothing");
}

#[test]
fn grad_agrees_with_central_differences_of_the_printed_loss() {
    // Every matrix written out, so that the nudged files differ in one number only.
    let base = Scenario {
        sentence: "the cat sat down".into(),
        embeddings: None,
        causal: true,
        positional_encoding: true,
        temperature: 0.7,
        ..Scenario::default()
    };
    let scenario = Scenario::from_inputs(&base.sentence, &base.to_inputs().unwrap());
    check_central_difference(
        &scenario,
        &["--target", "previous,first"],
        "w_q",
        |s| &mut s.w_q.as_mut().unwrap()[1][2],
        (1, 2),
    );
    check_central_difference(
        &scenario,
        &["--target", "uniform"],
        "embeddings",
        |s| &mut s.embeddings.as_mut().unwrap()[2][0],
        (2, 0),
    );
    // With a task, E moves the output and the target built from it: both paths count.
    check_central_difference(
        &scenario,
        &["--task", "copy_previous"],
        "embeddings",
        |s| &mut s.embeddings.as_mut().unwrap()[0][1],
        (0, 1),
    );
    check_central_difference(
        &scenario,
        &["--task", "mean"],
        "w_o",
        |s| &mut s.w_o.as_mut().unwrap()[3][0],
        (3, 0),
    );
}

#[test]
fn masked_cells_of_the_weights_and_scores_gradients_are_zero() {
    for goal in [&["--target", "uniform"][..], &["--task", "mean"]] {
        let mut args = vec!["grad", "--causal", "--sentence", "one two three four"];
        args.extend_from_slice(goal);
        let printed = json(&args);
        for head in printed["heads"].as_array().unwrap() {
            for key in ["d_weights", "d_scores"] {
                let m = rows(&head[key]);
                assert_eq!(m.len(), 4);
                for (i, row) in m.iter().enumerate() {
                    for (j, v) in row.iter().enumerate() {
                        if j > i {
                            assert_eq!(*v, 0.0, "{goal:?} {key}[{i}][{j}]");
                        }
                    }
                }
                // And the visible cells carry a gradient, or the check above proves nothing.
                assert!(m[3].iter().any(|v| *v != 0.0), "{goal:?} {key}");
            }
        }
    }
}

#[test]
fn every_wrong_goal_or_setting_exits_2_with_one_line_that_names_it() {
    let cases: [(&[&str], &[&str]); 15] = [
        (
            &["grad", "--target", "self,first,first"],
            &["3 targets for 2 heads"],
        ),
        (
            &["grad", "--heads", "4", "--target", "self,first"],
            &["2 targets for 4 heads"],
        ),
        (
            &["grad", "--causal", "--target", "next"],
            &["`next`", "causal mask"],
        ),
        (
            &["train", "--causal", "--target", "self,next"],
            &["`next`", "causal mask"],
        ),
        (&["grad", "--loss", "task"], &["--loss task", "--task"]),
        (
            &["grad", "--loss", "task", "--target", "previous"],
            &["--target", "--loss task"],
        ),
        (
            &["grad", "--loss", "pattern", "--task", "mean"],
            &["--task", "--loss pattern"],
        ),
        (
            &["grad", "--target", "previous", "--task", "mean"],
            &["--target", "--task"],
        ),
        (
            &["grad", "--target", "before"],
            &["--target", "previous", "before"],
        ),
        (&["grad", "--task", "copy"], &["--task", "copy_previous"]),
        (&["grad", "--loss", "mse"], &["--loss", "pattern or task"]),
        (&["train", "--lr", "0"], &["--lr 0", "learning rate"]),
        (
            &["train", "--optimizer", "rmsprop"],
            &["--optimizer", "adam or sgd"],
        ),
        (&["train", "--steps", "many"], &["--steps", "whole number"]),
        (
            &["train", "--train", "source_embeddings"],
            &["source_embeddings", "source sentence"],
        ),
    ];
    for (args, words) in cases {
        let line = error_line(args);
        for word in words {
            assert!(line.contains(word), "{args:?}: {line}");
        }
    }
}

#[test]
fn a_task_refuses_to_train_the_embeddings() {
    for train in ["embeddings", "w_q,embeddings"] {
        let line = error_line(&["train", "--train", train, "--task", "mean"]);
        assert!(
            line.contains("`--train") && line.contains("`mean`") && line.contains("`embeddings`"),
            "{line}"
        );
    }
    let line = error_line(&[
        "train",
        "--source",
        "le chat",
        "--train",
        "source_embeddings",
        "--task",
        "copy_first",
    ]);
    assert!(line.contains("`source_embeddings`"), "{line}");
    // With a pattern both may learn.
    let printed = json(&[
        "train",
        "--source",
        "le chat",
        "--train",
        "embeddings,source_embeddings",
        "--steps",
        "1",
    ]);
    assert_eq!(printed["losses"].as_array().unwrap().len(), 2);
}

#[test]
fn train_prints_one_loss_more_than_its_steps_and_the_loss_falls() {
    let printed = json(&["train"]);
    assert_eq!(keys(&printed), ["losses", "scenario"]);
    let losses: Vec<f64> = printed["losses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(losses.len(), DEFAULT_STEPS + 1);
    assert_eq!(losses[0], json(&["grad"])["loss"].as_f64().unwrap());

    let printed = json(&[
        "train",
        "--target",
        "previous",
        "--optimizer",
        "adam",
        "--steps",
        "30",
    ]);
    let losses = printed["losses"].as_array().unwrap();
    assert_eq!(losses.len(), 31);
    let (first, last) = (losses[0].as_f64().unwrap(), losses[30].as_f64().unwrap());
    assert!(last < first / 2.0, "{first} → {last}");
}

#[test]
fn zero_steps_print_the_loss_before_training_and_the_scenario_unchanged() {
    let printed = json(&["train", "--steps", "0", "--task", "mean"]);
    let losses = printed["losses"].as_array().unwrap();
    assert_eq!(losses.len(), 1);
    assert_eq!(
        losses[0].as_f64(),
        json(&["grad", "--task", "mean"])["loss"].as_f64()
    );
    let scenario = Scenario::from_json(&printed["scenario"].to_string()).unwrap();
    assert_eq!(scenario.to_inputs().unwrap(), default_inputs());
}

#[test]
fn train_is_the_library_s_loop_and_its_scenario_traces_to_the_trained_model_exactly() {
    let args = [
        "train",
        "--sentence",
        "a head learns to look back",
        "--causal",
        "--optimizer",
        "sgd",
        "--lr",
        "0.3",
        "--steps",
        "12",
        "--target",
        "previous",
        "--train",
        "w_q,w_k,embeddings",
    ];
    let printed = json(&args);

    let mut inputs = Scenario {
        sentence: "a head learns to look back".into(),
        embeddings: None,
        causal: true,
        ..Scenario::default()
    }
    .to_inputs()
    .unwrap();
    let goal = Goal::named(NamedTarget::Previous);
    let trained = [Trainable::WQ, Trainable::WK, Trainable::Embeddings];
    let mut sgd = Optimizer::new(OptimizerKind::Sgd, 0.3).unwrap();
    let losses = train(&mut inputs, &goal, &trained, &mut sgd, 12).unwrap();
    let printed_losses: Vec<f64> = printed["losses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(printed_losses, losses);

    // The scenario, saved and traced, is the trained model to the last bit.
    let path = temp_file("trained.json", &printed["scenario"].to_string());
    let traced = stdout(&["trace", "--scenario", path.to_str().unwrap()]);
    assert_eq!(traced, trace_json_pretty(&forward(&inputs).unwrap()));
    assert_ne!(
        traced,
        stdout(&[
            "trace",
            "--sentence",
            "a head learns to look back",
            "--causal"
        ])
    );

    // And it records the settings, which the next run takes up.
    let scenario = Scenario::from_json(&printed["scenario"].to_string()).unwrap();
    assert_eq!(scenario.version, 3);
    let training = scenario
        .to_training(&scenario.to_inputs().unwrap())
        .unwrap();
    assert_eq!(
        training,
        Some(Training {
            goal,
            train: trained.to_vec(),
            optimizer: OptimizerKind::Sgd,
            learning_rate: 0.3,
        })
    );
    let again = json(&[
        "train",
        "--scenario",
        path.to_str().unwrap(),
        "--steps",
        "1",
    ]);
    let mut sgd = Optimizer::new(OptimizerKind::Sgd, 0.3).unwrap();
    let next = train(
        &mut inputs,
        &Goal::named(NamedTarget::Previous),
        &trained,
        &mut sgd,
        1,
    );
    let next: Vec<Value> = next.unwrap().into_iter().map(Value::from).collect();
    assert_eq!(again["losses"], Value::Array(next));
}

#[test]
fn the_options_override_the_scenario_s_goal_and_a_bad_saved_goal_is_named() {
    let trained = json(&["train", "--target", "first", "--steps", "2"]);
    let path = temp_file("first.json", &trained["scenario"].to_string());
    let path = path.to_str().unwrap();
    // The saved goal, `first`, is what `grad` measures unless told otherwise.
    let saved = json(&["grad", "--scenario", path]);
    assert_eq!(saved["loss"], trained["losses"][2]);
    let other = json(&["grad", "--scenario", path, "--target", "self"]);
    assert_ne!(other["loss"], saved["loss"]);
    // `--loss task` leaves the saved pattern aside, so it needs a task of its own.
    let line = error_line(&["grad", "--scenario", path, "--loss", "task"]);
    assert!(line.contains("--task"), "{line}");

    let next = trained["scenario"]
        .to_string()
        .replace("\"first\"", "\"next\"")
        .replace("\"causal\":false", "\"causal\":true");
    let path = temp_file("next.json", &next);
    let line = error_line(&["grad", "--scenario", path.to_str().unwrap()]);
    assert!(
        line.contains("`training.targets`") && line.contains("`next`") && line.contains("causal"),
        "{line}"
    );
    // Replacing the goal replaces the refusal.
    json(&[
        "grad",
        "--scenario",
        path.to_str().unwrap(),
        "--target",
        "self",
    ]);
}

#[test]
fn the_help_of_grad_and_train_lists_the_contract_s_options_and_defaults() {
    let grad = stdout(&["help", "grad"]);
    for words in [
        "--loss <LOSS>",
        "--target <NAME[,NAME…]>",
        "--task <NAME>",
        "--sentence",
    ] {
        assert!(grad.contains(words), "grad help lacks {words}");
    }
    assert!(grad.contains("exactly zero"), "{grad}");
    let train = stdout(&["train", "--help"]);
    for words in [
        "--optimizer <NAME>",
        "--lr <X>",
        "--steps <N>",
        "--train <NAME[,NAME…]>",
        "--lr 0.05",
        "[default: 100]",
        "losses[k]",
    ] {
        assert!(train.contains(words), "train help lacks {words}");
    }
    let top = stdout(&["help"]);
    assert!(
        top.contains("\n  grad ") && top.contains("\n  train "),
        "{top}"
    );
}
