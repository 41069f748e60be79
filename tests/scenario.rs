//! The scenario format round trip, checked with proptest: whatever a scenario holds, its JSON
//! reads back to the same scenario, bit for bit. Then the `training` object of version 3: the
//! settings it records, the versions written with and without it, and its refusals.

// Native tests: proptest is a native dev-dependency.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{
    Goal, HeadTarget, LossKind, Matrix, NamedTarget, OptimizerKind, ScaleMode, Task, Trainable,
    Training,
};
use attention_lens::formats::scenario::{
    Scenario, ScenarioError, TargetField, TrainingFields, SCENARIO_VERSION,
};
use proptest::prelude::*;

/// Any finite `f64`: normal, subnormal and zero, of either sign. JSON has no infinities or NaN.
fn finite() -> impl Strategy<Value = f64> {
    use prop::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO
}

/// Any rows of finite numbers, ragged or empty too: the format reads them; `to_inputs` checks
/// the shape.
fn rows() -> impl Strategy<Value = Option<Vec<Vec<f64>>>> {
    prop::option::of(prop::collection::vec(
        prop::collection::vec(finite(), 0..5),
        0..5,
    ))
}

/// Any text, control characters, quotes, backslashes and emoji included.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[\"\\\\\\n\\t\u{0}-\u{1f}é€😀]{0,12}"]
}

/// Any `training` object the format reads: every field absent or any value of its type, the
/// targets named or painted with any rows.
fn training() -> impl Strategy<Value = TrainingFields> {
    let target = prop_oneof![
        prop::sample::select(NamedTarget::ALL.to_vec()).prop_map(TargetField::Named),
        rows().prop_map(|rows| TargetField::Painted(rows.unwrap_or_default())),
    ];
    (
        prop::option::of(prop::sample::select(LossKind::ALL.to_vec())),
        prop::option::of(prop::collection::vec(target, 0..4)),
        prop::option::of(prop::sample::select(Task::ALL.to_vec())),
        prop::option::of(prop::collection::vec(
            prop::sample::select(Trainable::ALL.to_vec()),
            0..7,
        )),
        prop::option::of(prop::sample::select(OptimizerKind::ALL.to_vec())),
        prop::option::of(finite()),
    )
        .prop_map(
            |(loss, targets, task, train, optimizer, learning_rate)| TrainingFields {
                loss,
                targets,
                task,
                train,
                optimizer,
                learning_rate,
            },
        )
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        (
            prop::option::of(text()),
            prop::option::of(text()),
            text(),
            any::<usize>(),
            any::<usize>(),
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(ScaleMode::ALL.to_vec()),
            finite(),
        ),
        (rows(), rows(), rows(), rows(), rows()),
        prop::option::of(training()),
    )
        .prop_map(
            |(
                (title, caption, sentence, d_model, n_heads, causal, positional, scale, temp),
                (embeddings, w_q, w_k, w_v, w_o),
                training,
            )| Scenario {
                version: SCENARIO_VERSION,
                title,
                caption,
                sentence,
                d_model,
                n_heads,
                causal,
                positional_encoding: positional,
                scale,
                temperature: temp,
                rope: None,
                n_kv_heads: None,
                window: None,
                embeddings,
                w_q,
                w_k,
                w_v,
                w_o,
                source: None,
                source_embeddings: None,
                block: None,
                training,
            },
        )
}

/// Every float of `scenario`, as bits, so that `-0.0` and `0.0` differ.
fn float_bits(scenario: &Scenario) -> Vec<u64> {
    let matrices = [
        &scenario.embeddings,
        &scenario.w_q,
        &scenario.w_k,
        &scenario.w_v,
        &scenario.w_o,
    ];
    let training = scenario.training.as_ref();
    let painted = training
        .and_then(|t| t.targets.as_ref())
        .into_iter()
        .flatten()
        .flat_map(|target| match target {
            TargetField::Painted(rows) => rows.iter().flatten().copied().collect(),
            TargetField::Named(_) => Vec::new(),
        });
    std::iter::once(scenario.temperature)
        .chain(matrices.into_iter().flatten().flatten().flatten().copied())
        .chain(training.and_then(|t| t.learning_rate))
        .chain(painted)
        .map(f64::to_bits)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_scenario_reads_back_from_its_json(scenario in scenario()) {
        let json = scenario.to_json();
        let back = Scenario::from_json(&json)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{json}")))?;
        prop_assert_eq!(&back, &scenario);
        prop_assert_eq!(float_bits(&back), float_bits(&scenario));
        prop_assert_eq!(back.to_json(), json);
    }
}

/// The scenario "the cat sat" with two heads and `training`.
fn with_training(training: &Training) -> Scenario {
    let mut scenario = Scenario {
        sentence: "the cat sat".into(),
        embeddings: None,
        ..Scenario::default()
    };
    scenario.set_training(Some(training));
    scenario
}

#[test]
fn training_settings_survive_a_round_trip_through_json() {
    let painted = Matrix::from_row_slice(3, 3, &[1.0, 0.0, 0.0, 0.25, 0.75, 0.0, 0.0, 0.0, 3.0]);
    let settings = [
        Training::default(),
        Training {
            goal: Goal::Pattern(vec![
                HeadTarget::Named(NamedTarget::First),
                HeadTarget::Painted(painted),
            ]),
            train: vec![Trainable::Embeddings, Trainable::WQ],
            optimizer: OptimizerKind::Sgd,
            learning_rate: 0.1 + 0.2,
        },
        Training::new(Goal::Task(Task::CopyPrevious)),
    ];
    for training in settings {
        let scenario = with_training(&training);
        assert_eq!(scenario.version, 3);
        let json = scenario.to_json();
        let back = Scenario::from_json(&json).unwrap();
        assert_eq!(back, scenario);
        assert_eq!(back.to_json(), json);
        let inputs = back.to_inputs().unwrap();
        assert_eq!(back.to_training(&inputs), Ok(Some(training.clone())));
    }
    // Every setting is written out, so a reader needs no defaults to know them.
    let json = with_training(&Training::default()).to_json();
    for field in ["loss", "targets", "train", "optimizer", "learning_rate"] {
        assert!(json.contains(&format!("\"{field}\": ")), "{field}: {json}");
    }
    assert!(!json.contains("\"task\""), "{json}");
}

#[test]
fn absent_training_fields_take_their_defaults() {
    let read = |training: &str| {
        let json = format!(r#"{{"version": 3, "sentence": "a b", "training": {training}}}"#);
        Scenario::from_json(&json)
            .unwrap()
            .training()
            .unwrap()
            .unwrap()
    };
    assert_eq!(read("{}"), Training::default());
    assert_eq!(
        read(r#"{"task": "mean"}"#),
        Training::new(Goal::Task(Task::Mean))
    );
    let sgd = read(r#"{"targets": ["self", "first"], "optimizer": "sgd", "learning_rate": 1}"#);
    assert_eq!(sgd.train, [Trainable::WQ, Trainable::WK]);
    assert_eq!(
        (sgd.optimizer, sgd.learning_rate),
        (OptimizerKind::Sgd, 1.0)
    );
    assert_eq!(
        Scenario::from_json(r#"{"version": 3, "sentence": "a"}"#)
            .unwrap()
            .training(),
        Ok(None)
    );
}

#[test]
fn files_of_versions_1_and_2_read_and_write_as_before() {
    let v1 = r#"{"version": 1, "sentence": "a b", "causal": true}"#;
    let scenario = Scenario::from_json(v1).unwrap();
    assert_eq!((scenario.version, scenario.training()), (1, Ok(None)));
    let json = scenario.to_json();
    assert!(json.starts_with("{\n  \"version\": 1,"), "{json}");
    assert!(!json.contains("training"), "{json}");
    let v2 = r#"{"version": 2, "sentence": "a b", "source": "c d"}"#;
    let scenario = Scenario::from_json(v2).unwrap();
    assert!(scenario.to_json().starts_with("{\n  \"version\": 2,"));
    // A scenario written from inputs has the lowest version that holds its fields, as before.
    let inputs = scenario.to_inputs().unwrap();
    assert_eq!(Scenario::from_inputs("a b", &inputs).version, 2);
    let plain = Scenario::default();
    assert_eq!(plain.version, 1);
    // Training makes version 3; taking it away goes back to what the rest needs.
    let mut trained = plain.clone();
    trained.set_training(Some(&Training::default()));
    assert_eq!(trained.version, 3);
    trained.set_training(None);
    assert_eq!(trained, plain);
    let mut crossed = Scenario::from_inputs_with_source("a b", Some("c d"), &inputs);
    crossed.set_training(Some(&Training::default()));
    crossed.set_training(None);
    assert_eq!(crossed.version, 2);
}

#[test]
fn training_in_an_older_version_or_an_unknown_field_in_it_is_refused_by_name() {
    for version in [1, 2] {
        let json = format!(r#"{{"version": {version}, "sentence": "a", "training": {{}}}}"#);
        let err = Scenario::from_json(&json).unwrap_err();
        assert_eq!(err, ScenarioError::NeedsVersion3("training"));
        assert!(err.to_string().contains("\"version\": 3"), "{err}");
    }
    let cases = [
        (
            r#"{"momentum": 0.9}"#,
            "field `training.momentum`: unknown field `momentum`",
        ),
        (
            r#"{"loss": "mse"}"#,
            "field `training.loss`: unknown loss “mse”",
        ),
        (
            r#"{"targets": ["before"]}"#,
            "field `training.targets[0]`: unknown target",
        ),
        (
            r#"{"targets": [[[1, "0"]]]}"#,
            "field `training.targets[0][0][1]`",
        ),
        (
            r#"{"targets": [true]}"#,
            "field `training.targets[0]`: invalid type: boolean",
        ),
        (r#"{"task": "copy"}"#, "field `training.task`: unknown task"),
        (
            r#"{"train": ["w_x"]}"#,
            "field `training.train[0]`: unknown matrix to train",
        ),
        (r#"{"optimizer": "rmsprop"}"#, "field `training.optimizer`"),
        (
            r#"{"learning_rate": "fast"}"#,
            "field `training.learning_rate`",
        ),
        (r#"[]"#, "field `training`: invalid type: sequence"),
    ];
    for (training, expected) in cases {
        let json = format!(r#"{{"version": 3, "sentence": "a", "training": {training}}}"#);
        let err = Scenario::from_json(&json).unwrap_err().to_string();
        assert!(err.contains(expected), "{training}: {err}");
    }
    // An object, as `block` must be too; `null` counts as absent.
    let json = r#"{"version": 3, "sentence": "a", "block": []}"#;
    let err = Scenario::from_json(json).unwrap_err().to_string();
    assert!(
        err.contains("field `block`: invalid type: sequence"),
        "{err}"
    );
    let json = r#"{"version": 3, "sentence": "a", "block": null, "training": null}"#;
    let scenario = Scenario::from_json(json).unwrap();
    assert_eq!((scenario.block, scenario.training), (None, None));
}

#[test]
fn training_that_does_not_fit_the_scenario_is_refused_naming_its_field() {
    let check = |training: &str, causal: bool| {
        let json = format!(
            r#"{{"version": 3, "sentence": "a b c", "causal": {causal}, "training": {training}}}"#
        );
        let scenario = Scenario::from_json(&json).unwrap();
        let inputs = scenario.to_inputs().unwrap();
        scenario.to_training(&inputs).unwrap_err()
    };
    // The app keeps `next` when the mask is switched on under it, and so does its exported
    // scenario: the backward stages say why there is no gradient.
    let json =
        r#"{"version": 3, "sentence": "a b c", "causal": true, "training": {"targets": ["next"]}}"#;
    let scenario = Scenario::from_json(json).unwrap();
    let inputs = scenario.to_inputs().unwrap();
    assert!(scenario.to_training(&inputs).unwrap().is_some());
    let model = scenario.to_model().unwrap();
    assert_eq!(model.training.goal, Goal::named(NamedTarget::Next));
    assert!(model.config.causal);
    // A goal broken in itself is refused under the mask as without it.
    let err = check(r#"{"targets": [[[0, 0, 0], [1, 0, 0], [1, 0, 0]]]}"#, true);
    assert!(
        matches!(
            err,
            ScenarioError::Invalid {
                field: "training.targets",
                ..
            }
        ),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains("no weight"), "{text}");
    let cases = [
        (
            r#"{"targets": ["self", "self", "self"]}"#,
            "training.targets",
            "3 targets for 2 heads",
        ),
        (
            r#"{"targets": [[[1, 0], [1, 0]]]}"#,
            "training.targets",
            "3 rows and 3 columns",
        ),
        (
            r#"{"targets": [[[1, 0, 0], [0]]]}"#,
            "training.targets",
            "row 2 has 1 numbers",
        ),
        (
            r#"{"task": "mean", "train": ["embeddings"]}"#,
            "training.train",
            "`mean` task",
        ),
        (
            r#"{"train": ["source_embeddings"]}"#,
            "training.train",
            "source sentence",
        ),
        (
            r#"{"learning_rate": 0}"#,
            "training.learning_rate",
            "learning rate is 0",
        ),
        (r#"{"loss": "task"}"#, "training.task", "needs a task"),
        (
            r#"{"loss": "pattern", "task": "mean"}"#,
            "training.task",
            "`loss` is `pattern`",
        ),
        (
            r#"{"task": "mean", "targets": ["self"]}"#,
            "training.targets",
            "keep one",
        ),
    ];
    for (training, field, words) in cases {
        let text = check(training, false).to_string();
        assert!(
            text.contains(&format!("ield `{field}`")) && text.contains(words),
            "{training}: {text}"
        );
    }
    // The forward pass does not read `training`: a goal that does not fit leaves it alone.
    let json =
        r#"{"version": 3, "sentence": "a b", "causal": true, "training": {"targets": ["next"]}}"#;
    assert!(Scenario::parse_inputs(json).is_ok());
}
