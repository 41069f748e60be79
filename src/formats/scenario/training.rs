//! The `training` object of a version 3 scenario: the goal and the settings of training, and
//! the [`Training`] they stand for.
//!
//! ```json
//! "training": {
//!   "loss": "pattern",
//!   "targets": ["previous", [[1, 0, 0], [1, 1, 0], [0, 0, 1]]],
//!   "train": ["w_q", "w_k"],
//!   "optimizer": "adam",
//!   "learning_rate": 0.05
//! }
//! ```
//!
//! Every field is optional. A target is a name or painted rows (seq_len × n_keys, each row
//! divided by its sum); the list holds one for every head or one per head.

use super::de::{optional_key, optional_keys, optional_number, Number};
use super::{Scenario, ScenarioError};
use crate::attention::{
    AttentionError, Goal, HeadTarget, Inputs, LossKind, Matrix, NamedTarget, OptimizerKind, Task,
    Trainable, Training, DEFAULT_LEARNING_RATE,
};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// The `training` object; every field is optional, and absent ones take the defaults of
/// [`Training::new`] for the loss.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingFields {
    /// `pattern` or `task`; when absent, `task` if a `task` is given, else `pattern`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "optional_key"
    )]
    pub loss: Option<LossKind>,
    /// The pattern loss's targets: one for every head, or one per head; `["previous"]` when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<TargetField>>,
    /// The task loss's task: `copy_previous`, `copy_first` or `mean`; required with that loss.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "optional_key"
    )]
    pub task: Option<Task>,
    /// The matrices that learn: `w_q`, `w_k`, `w_v`, `w_o`, `embeddings`,
    /// `source_embeddings`; `w_q`, `w_k` for a pattern and all four projections for a task when
    /// absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "optional_keys"
    )]
    pub train: Option<Vec<Trainable>>,
    /// `adam` (default) or `sgd`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "optional_key"
    )]
    pub optimizer: Option<OptimizerKind>,
    /// A positive number; 0.05 when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "optional_number"
    )]
    pub learning_rate: Option<f64>,
}

/// One head's target as written: a name, or painted rows of non-negative numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum TargetField {
    /// A named pattern, such as `"previous"`.
    Named(NamedTarget),
    /// Painted weights, seq_len × n_keys; each row is divided by its sum.
    Painted(Vec<Vec<f64>>),
}

impl Serialize for TargetField {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Named(name) => serializer.collect_str(name),
            Self::Painted(rows) => rows.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for TargetField {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TargetVisitor;

        impl<'de> Visitor<'de> for TargetVisitor {
            type Value = TargetField;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a target's name, or painted rows of numbers")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<TargetField, E> {
                text.parse().map(TargetField::Named).map_err(E::custom)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<TargetField, A::Error> {
                let rows =
                    Vec::<Vec<Number>>::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
                Ok(TargetField::Painted(
                    rows.into_iter()
                        .map(|row| row.into_iter().map(|n| n.0).collect())
                        .collect(),
                ))
            }
        }

        deserializer.deserialize_any(TargetVisitor)
    }
}

impl TargetField {
    /// The field for `target`.
    fn from_target(target: &HeadTarget) -> Self {
        match target {
            HeadTarget::Named(name) => Self::Named(*name),
            HeadTarget::Painted(m) => Self::Painted(super::rows_of(m)),
        }
    }

    /// The target, its rows checked to be of one length; the shape is checked against the
    /// sentence by [`Training::validate`].
    fn to_target(&self) -> Result<HeadTarget, ScenarioError> {
        match self {
            Self::Named(name) => Ok(HeadTarget::Named(*name)),
            Self::Painted(rows) => {
                let width = rows.first().map_or(0, Vec::len);
                if let Some((row, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != width) {
                    return Err(ScenarioError::RaggedMatrix {
                        field: TARGETS,
                        row,
                        len: r.len(),
                        expected: width,
                    });
                }
                let m = Matrix::from_fn(rows.len(), width, |i, j| rows[i][j]);
                Ok(HeadTarget::Painted(m))
            }
        }
    }
}

const TARGETS: &str = "training.targets";

impl TrainingFields {
    /// Every setting of `training` written out.
    pub fn from_training(training: &Training) -> Self {
        let (targets, task) = match &training.goal {
            Goal::Pattern(targets) => (
                Some(targets.iter().map(TargetField::from_target).collect()),
                None,
            ),
            Goal::Task(task) => (None, Some(*task)),
        };
        Self {
            loss: Some(training.goal.loss_kind()),
            targets,
            task,
            train: Some(training.train.clone()),
            optimizer: Some(training.optimizer),
            learning_rate: Some(training.learning_rate),
        }
    }

    /// The settings these fields stand for, absent ones at their defaults; the fields must agree
    /// with each other (a task with the task loss only, targets with the pattern loss only),
    /// but are not checked against a sentence.
    pub fn to_training(&self) -> Result<Training, ScenarioError> {
        let invalid =
            |field: &str, why: &str| ScenarioError::Json(format!("field `{field}`: {why}"));
        if self.targets.is_some() && self.task.is_some() {
            return Err(invalid(
                TARGETS,
                "`targets` (the pattern loss's goal) and `task` (the task loss's goal) cannot \
                 both be set; keep one of them",
            ));
        }
        let loss = self.loss.unwrap_or(match self.task {
            Some(_) => LossKind::Task,
            None => LossKind::Pattern,
        });
        let goal = match loss {
            LossKind::Pattern => {
                if self.task.is_some() {
                    return Err(invalid(
                        "training.task",
                        "a task is the goal of the task loss, but `loss` is `pattern`; remove \
                         `task` or set \"loss\": \"task\"",
                    ));
                }
                match &self.targets {
                    Some(fields) => Goal::Pattern(
                        fields
                            .iter()
                            .map(TargetField::to_target)
                            .collect::<Result<_, _>>()?,
                    ),
                    None => Goal::named(NamedTarget::Previous),
                }
            }
            LossKind::Task => {
                if self.targets.is_some() {
                    return Err(invalid(
                        TARGETS,
                        "targets are the goal of the pattern loss, but `loss` is `task`; remove \
                         `targets` or set \"loss\": \"pattern\"",
                    ));
                }
                match self.task {
                    Some(task) => Goal::Task(task),
                    None => {
                        return Err(invalid(
                            "training.task",
                            "the task loss needs a task: copy_previous, copy_first or mean",
                        ))
                    }
                }
            }
        };
        let mut training = Training::new(goal);
        if let Some(train) = &self.train {
            training.train = train.clone();
        }
        if let Some(kind) = self.optimizer {
            training.optimizer = kind;
        }
        training.learning_rate = self.learning_rate.unwrap_or(DEFAULT_LEARNING_RATE);
        Ok(training)
    }
}

/// The field of `training` a refusal of [`Training::validate`] is about.
pub fn training_field(error: &AttentionError) -> &'static str {
    match error {
        AttentionError::TaskTrainsEmbeddings { .. } | AttentionError::NoSourceToTrain => {
            "training.train"
        }
        AttentionError::BadLearningRate { .. } => "training.learning_rate",
        _ => TARGETS,
    }
}

/// The goal and settings of training, to and from a scenario.
impl Scenario {
    /// The training settings as written, absent fields at their defaults; `None` when the
    /// scenario has no `training`. They are not checked against the sentence: see
    /// [`Scenario::to_training`].
    pub fn training(&self) -> Result<Option<Training>, ScenarioError> {
        self.training
            .as_ref()
            .map(TrainingFields::to_training)
            .transpose()
    }

    /// The training settings checked against `inputs` (those of [`Scenario::to_inputs`]), as
    /// the app keeps them: a goal only the causal mask refuses passes, as in a link. An error
    /// names the field of `training` that is wrong.
    pub fn to_training(&self, inputs: &Inputs) -> Result<Option<Training>, ScenarioError> {
        let training = self.training()?;
        if let Some(training) = &training {
            training
                .validate_but_the_mask(inputs)
                .map_err(|error| ScenarioError::Invalid {
                    field: training_field(&error),
                    error,
                })?;
        }
        Ok(training)
    }

    /// Records `training` with every setting written out, making the scenario version 3; `None`
    /// removes it, and a version 3 scenario falls back to the lowest version that holds the rest.
    pub fn set_training(&mut self, training: Option<&Training>) {
        self.training = training.map(TrainingFields::from_training);
        if self.training.is_some() {
            self.version = self.version.max(3);
        } else if self.version >= 3 {
            self.version = if self.version_2_field().is_some() {
                2
            } else {
                1
            };
        }
    }
}
