//! Carrying out `grad`, `train` and `worksheet`: the goal and settings from the options, the
//! scenario's `training` and the defaults, in that order; then the gradients, or the training
//! run and the trained scenario, as JSON, or the worksheet with its backward questions.

use super::trace::load;
use super::{CliError, GoalOptions, GradOptions, Source, TrainOptions, WorksheetOptions};
use crate::attention::{
    forward, gradients, train as train_steps, AttentionError, BackwardPass, Goal, HeadTarget,
    Inputs, LossKind, Matrix, NamedTarget, Trainable, Training,
};
use crate::formats::scenario::{rows_of, training_field, Scenario, ScenarioError};
use crate::formats::worksheet::{worksheet_markdown, Backward};
use crate::quiz::RunViews;
use serde::Serialize;
use std::io::Read;

/// Where a setting came from, so that a refusal names what to change.
#[derive(Debug, Clone, PartialEq)]
enum Origin {
    /// An option and its value as typed.
    Flag(&'static str, String),
    /// The scenario's `training`.
    Scenario,
    /// A default, which never fails on its own.
    Default,
}

/// The settings of a run, and where the ones that can be refused came from.
struct Settings {
    training: Training,
    goal: Origin,
    train: Origin,
    learning_rate: Origin,
}

/// The worksheet of the scenario, its backward questions about the scenario's goal (the app's
/// default goal without one); a goal that does not fit the settings leaves them out, as the
/// app's quiz does, and the sheet says why.
pub(super) fn worksheet(
    options: &WorksheetOptions,
    stdin: &mut dyn Read,
) -> Result<String, CliError> {
    let (scenario, inputs) = load(&options.input, stdin)?;
    let saved = saved_training(&scenario, &options.input.scenario)?;
    let trace = forward(&inputs).map_err(CliError::Attention)?;
    let goal = saved.unwrap_or_default().goal.fitted(
        trace.config.n_heads,
        trace.seq_len(),
        trace.n_keys(),
    );
    let pass = BackwardPass::new(&trace, &goal).map_err(|e| e.to_string());
    let backward = Backward::new(&goal, pass.as_ref().map_err(String::as_str));
    // The sheet ends in one line break, as the trace's Markdown does.
    let views = RunViews {
        prefill: options.input.prefill,
        tile: options.input.tile,
    };
    Ok(worksheet_markdown(
        &trace,
        Some(backward),
        options.picks,
        views,
        options.answers,
    ))
}

pub(super) fn grad(options: &GradOptions, stdin: &mut dyn Read) -> Result<String, CliError> {
    let (scenario, inputs) = load(&options.input, stdin)?;
    let saved = saved_training(&scenario, &options.input.scenario)?;
    let (goal, origin) = resolve_goal(&options.goal, saved.as_ref())?;
    // The matrices that learn and the learning rate play no part in a gradient, so only the
    // goal is checked: the defaults for the rest never fail.
    let settings = Settings {
        training: Training::new(goal),
        goal: origin,
        train: Origin::Default,
        learning_rate: Origin::Default,
    };
    check(&settings, &inputs, &options.input.scenario)?;
    let g = gradients(&inputs, &settings.training.goal).map_err(CliError::Attention)?;
    // The pattern loss reads only the weights A, so W_v and W_o do not change it at all: their
    // derivative is exactly zero, in each matrix's own shape.
    let zeros = |m: &Matrix| rows_of(&Matrix::zeros(m.nrows(), m.ncols()));
    let w = &inputs.weights;
    let json = GradJson {
        loss: g.loss,
        grad: GradMatrices {
            w_q: rows_of(&g.d_w_q),
            w_k: rows_of(&g.d_w_k),
            w_v: g.d_w_v.as_ref().map_or_else(|| zeros(&w.w_v), rows_of),
            w_o: g.d_w_o.as_ref().map_or_else(|| zeros(&w.w_o), rows_of),
            embeddings: rows_of(&g.d_embeddings),
            source_embeddings: g.d_source_embeddings.as_ref().map(rows_of),
        },
        heads: g
            .heads
            .iter()
            .map(|h| HeadJson {
                d_weights: rows_of(&h.d_weights),
                d_scores: rows_of(&h.d_scores),
            })
            .collect(),
    };
    Ok(pretty(&json))
}

pub(super) fn train(options: &TrainOptions, stdin: &mut dyn Read) -> Result<String, CliError> {
    let input = &options.grad.input;
    let (scenario, mut inputs) = load(input, stdin)?;
    let saved = saved_training(&scenario, &input.scenario)?;
    let settings = resolve(options, saved.as_ref())?;
    check(&settings, &inputs, &input.scenario)?;
    let training = settings.training;
    let mut optimizer = training.optimizer().map_err(CliError::Attention)?;
    let losses = train_steps(
        &mut inputs,
        &training.goal,
        &training.train,
        &mut optimizer,
        options.steps,
    )
    .map_err(CliError::Attention)?;
    let mut trained =
        Scenario::from_inputs_with_source(&scenario.sentence, scenario.source.as_deref(), &inputs);
    trained.title = scenario.title;
    trained.caption = scenario.caption;
    trained.set_training(Some(&training));
    Ok(pretty(&TrainJson {
        losses,
        scenario: trained,
    }))
}

/// The scenario's `training`, read but not yet checked against the sentence: the options may
/// replace the parts that would not fit.
fn saved_training(scenario: &Scenario, input: &Source) -> Result<Option<Training>, CliError> {
    scenario.training().map_err(|error| CliError::Scenario {
        input: input.clone(),
        error,
    })
}

/// The goal: `--target` or `--task`; else the scenario's, unless `--loss` names the other loss;
/// else `previous` for every head (`--loss task` alone has no default task).
fn resolve_goal(
    options: &GoalOptions,
    saved: Option<&Training>,
) -> Result<(Goal, Origin), CliError> {
    match (options.loss, &options.targets, options.task) {
        (Some(LossKind::Task), Some(_), _) => Err(CliError::WrongLoss {
            flag: "--target",
            belongs: LossKind::Pattern,
            loss: LossKind::Task,
        }),
        (Some(LossKind::Pattern), _, Some(_)) => Err(CliError::WrongLoss {
            flag: "--task",
            belongs: LossKind::Task,
            loss: LossKind::Pattern,
        }),
        (_, Some(targets), _) => {
            let keys: Vec<&str> = targets.iter().map(|t| t.key()).collect();
            Ok((
                Goal::Pattern(targets.iter().map(|t| HeadTarget::Named(*t)).collect()),
                Origin::Flag("--target", keys.join(",")),
            ))
        }
        (_, None, Some(task)) => Ok((
            Goal::Task(task),
            Origin::Flag("--task", task.key().to_string()),
        )),
        (loss, None, None) => match saved {
            Some(saved) if loss.is_none_or(|l| l == saved.goal.loss_kind()) => {
                Ok((saved.goal.clone(), Origin::Scenario))
            }
            _ if loss == Some(LossKind::Task) => Err(CliError::TaskMissing),
            _ => Ok((Goal::named(NamedTarget::Previous), Origin::Default)),
        },
    }
}

/// Every setting of `train`: each option, else the scenario's setting, else the default. The
/// scenario's matrices are kept only with a goal of the same loss, for which they were chosen.
fn resolve(options: &TrainOptions, saved: Option<&Training>) -> Result<Settings, CliError> {
    let (goal, goal_origin) = resolve_goal(&options.grad.goal, saved)?;
    let mut training = Training::new(goal);
    let same_loss = saved.filter(|s| s.goal.loss_kind() == training.goal.loss_kind());
    let train = match (&options.train, same_loss) {
        (Some(list), _) => {
            let mut unique: Vec<Trainable> = Vec::with_capacity(list.len());
            for t in list {
                if !unique.contains(t) {
                    unique.push(*t);
                }
            }
            let keys: Vec<&str> = unique.iter().map(|t| t.key()).collect();
            let origin = Origin::Flag("--train", keys.join(","));
            training.train = unique;
            origin
        }
        (None, Some(saved)) => {
            training.train = saved.train.clone();
            Origin::Scenario
        }
        (None, None) => Origin::Default,
    };
    if let Some(kind) = options.optimizer.or(saved.map(|s| s.optimizer)) {
        training.optimizer = kind;
    }
    let learning_rate = match (options.learning_rate, saved) {
        (Some(lr), _) => {
            training.learning_rate = lr;
            Origin::Flag("--lr", lr.to_string())
        }
        (None, Some(saved)) => {
            training.learning_rate = saved.learning_rate;
            Origin::Scenario
        }
        (None, None) => Origin::Default,
    };
    Ok(Settings {
        training,
        goal: goal_origin,
        train,
        learning_rate,
    })
}

/// Checks the settings against the inputs, blaming the option or the scenario field that set
/// the part refused.
fn check(settings: &Settings, inputs: &Inputs, input: &Source) -> Result<(), CliError> {
    let Err(error) = settings.training.validate(inputs) else {
        return Ok(());
    };
    let field = training_field(&error);
    let origin = match field {
        "training.train" => &settings.train,
        "training.learning_rate" => &settings.learning_rate,
        _ => &settings.goal,
    };
    Err(blame(error, field, origin, input))
}

fn blame(error: AttentionError, field: &'static str, origin: &Origin, input: &Source) -> CliError {
    match origin {
        Origin::Flag(flag, value) => CliError::Option {
            flag,
            value: value.clone(),
            error,
        },
        Origin::Scenario => CliError::Scenario {
            input: input.clone(),
            error: ScenarioError::Invalid { field, error },
        },
        Origin::Default => CliError::Attention(error),
    }
}

/// `value` as indented JSON ending in a newline; every number has the fewest digits that read
/// back to the same `f64`, so the output is exact.
fn pretty<T: Serialize>(value: &T) -> String {
    // serde_json fails only on a map with keys that are not strings, or a failing `Serialize`
    // impl; these outputs have neither, so the fallback is never taken.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// What `grad` prints.
#[derive(Serialize)]
struct GradJson {
    loss: f64,
    grad: GradMatrices,
    heads: Vec<HeadJson>,
}

/// ∂L/∂ of every matrix training can change.
#[derive(Serialize)]
struct GradMatrices {
    /// (d_model, d_model) each.
    w_q: Vec<Vec<f64>>,
    w_k: Vec<Vec<f64>>,
    w_v: Vec<Vec<f64>>,
    w_o: Vec<Vec<f64>>,
    /// (seq_len, d_model)
    embeddings: Vec<Vec<f64>>,
    /// (src_len, d_model), with a source only.
    #[serde(skip_serializing_if = "Option::is_none")]
    source_embeddings: Option<Vec<Vec<f64>>>,
}

/// One head's gradients at the softmax, the stages a learner checks by hand.
#[derive(Serialize)]
struct HeadJson {
    /// ∂L/∂A. (seq_len, n_keys)
    d_weights: Vec<Vec<f64>>,
    /// ∂L/∂S, the raw scores before scaling. (seq_len, n_keys)
    d_scores: Vec<Vec<f64>>,
}

/// What `train` prints.
#[derive(Serialize)]
struct TrainJson {
    /// The loss after k steps at index k.
    losses: Vec<f64>,
    scenario: Scenario,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{OptimizerKind, Task};

    fn saved(goal: Goal) -> Training {
        Training {
            train: vec![Trainable::WO],
            optimizer: OptimizerKind::Sgd,
            learning_rate: 0.5,
            ..Training::new(goal)
        }
    }

    fn train_options(goal: GoalOptions) -> TrainOptions {
        TrainOptions {
            grad: GradOptions {
                goal,
                ..GradOptions::default()
            },
            ..TrainOptions::default()
        }
    }

    #[test]
    fn the_goal_comes_from_the_options_then_the_scenario_then_the_default() {
        let first = saved(Goal::named(NamedTarget::First));
        let none = GoalOptions::default();
        assert_eq!(
            resolve_goal(&none, None).unwrap(),
            (Goal::named(NamedTarget::Previous), Origin::Default)
        );
        assert_eq!(
            resolve_goal(&none, Some(&first)).unwrap(),
            (first.goal.clone(), Origin::Scenario)
        );
        let task = GoalOptions {
            task: Some(Task::Mean),
            ..GoalOptions::default()
        };
        assert_eq!(
            resolve_goal(&task, Some(&first)).unwrap().0,
            Goal::Task(Task::Mean)
        );
        // `--loss task` does not take the scenario's pattern, and has no task of its own.
        let loss_task = GoalOptions {
            loss: Some(LossKind::Task),
            ..GoalOptions::default()
        };
        assert_eq!(
            resolve_goal(&loss_task, Some(&first)),
            Err(CliError::TaskMissing)
        );
        let copy = saved(Goal::Task(Task::CopyFirst));
        assert_eq!(resolve_goal(&loss_task, Some(&copy)).unwrap().0, copy.goal);
    }

    #[test]
    fn the_scenario_s_matrices_are_kept_only_for_a_goal_of_their_loss() {
        let first = saved(Goal::named(NamedTarget::First));
        let same = resolve(&train_options(GoalOptions::default()), Some(&first)).unwrap();
        assert_eq!(same.training, first);
        let task = GoalOptions {
            task: Some(Task::Mean),
            ..GoalOptions::default()
        };
        let other = resolve(&train_options(task), Some(&first)).unwrap();
        assert_eq!(
            other.training.train,
            Training::default_train(LossKind::Task)
        );
        assert_eq!(other.train, Origin::Default);
        // The optimizer and the learning rate carry over whatever the goal.
        assert_eq!(other.training.optimizer, OptimizerKind::Sgd);
        assert_eq!(other.training.learning_rate, 0.5);
    }

    #[test]
    fn a_repeated_matrix_is_trained_once() {
        let options = TrainOptions {
            train: Some(vec![Trainable::WK, Trainable::WQ, Trainable::WK]),
            ..TrainOptions::default()
        };
        let settings = resolve(&options, None).unwrap();
        assert_eq!(settings.training.train, [Trainable::WK, Trainable::WQ]);
        assert_eq!(settings.train, Origin::Flag("--train", "w_k,w_q".into()));
    }
}
