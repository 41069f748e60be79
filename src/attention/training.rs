//! What training is set to do: the goal, which matrices learn, the update rule and its rate.
//! Plain data, so the page, the scenario file and the command line all hold the same thing.
//!
//! ```text
//! goal            previous for every head, unless chosen
//! train           w_q, w_k for a pattern; w_q, w_k, w_v, w_o for a task
//! optimizer       Adam (β₁ 0.9, β₂ 0.999, ε 1e-8)
//! learning_rate   0.05
//! ```

use super::config::Config;
use super::error::AttentionError;
use super::forward::Inputs;
use super::goal::{head_patterns, Goal, LossKind, NamedTarget};
use super::optimizer::{check_trainable, Optimizer, OptimizerKind, Trainable};

/// The learning rate when none is chosen: large enough that Adam shows a head learning within
/// a few dozen steps, small enough that it does not overshoot on the toy scenarios.
pub const DEFAULT_LEARNING_RATE: f64 = 0.05;

/// The goal and settings of training.
#[derive(Debug, Clone, PartialEq)]
pub struct Training {
    /// What the head should learn.
    pub goal: Goal,
    /// The matrices that learn; the others stay as they are.
    pub train: Vec<Trainable>,
    /// The update rule.
    pub optimizer: OptimizerKind,
    /// The step size; positive and finite.
    pub learning_rate: f64,
}

impl Default for Training {
    /// Every head learns to look at the previous token, with the defaults of a pattern goal.
    fn default() -> Self {
        Self::new(Goal::named(NamedTarget::Previous))
    }
}

impl Training {
    /// Training towards `goal` with the default matrices for its loss, Adam and
    /// [`DEFAULT_LEARNING_RATE`].
    pub fn new(goal: Goal) -> Self {
        Self {
            train: Self::default_train(goal.loss_kind()),
            goal,
            optimizer: OptimizerKind::default(),
            learning_rate: DEFAULT_LEARNING_RATE,
        }
    }

    /// The matrices that learn by default: W_q and W_k for a pattern, which reaches only them
    /// (and E), and all four projections for a task.
    pub fn default_train(loss: LossKind) -> Vec<Trainable> {
        match loss {
            LossKind::Pattern => vec![Trainable::WQ, Trainable::WK],
            LossKind::Task => vec![Trainable::WQ, Trainable::WK, Trainable::WV, Trainable::WO],
        }
    }

    /// A fresh optimizer with these settings.
    pub fn optimizer(&self) -> Result<Optimizer, AttentionError> {
        Optimizer::new(self.optimizer, self.learning_rate)
    }

    /// Checks these settings against `inputs`: the matrices can learn the goal, the learning
    /// rate is usable, and the goal fits the sentence, the source and the mask (a target count
    /// that is neither 1 nor n_heads, a target on a masked key, a painted target of the wrong
    /// shape are refused).
    pub fn validate(&self, inputs: &Inputs) -> Result<(), AttentionError> {
        check_trainable(&self.goal, &self.train, inputs)?;
        self.optimizer()?;
        check_goal(&self.goal, inputs)
    }

    /// [`Training::validate`], except that a goal refused only because the causal mask hides
    /// keys its targets need passes: the app keeps such a goal when the mask is switched on
    /// under it, and its backward stages say why there is no gradient.
    pub fn validate_but_the_mask(&self, inputs: &Inputs) -> Result<(), AttentionError> {
        match self.validate(inputs) {
            Err(AttentionError::TargetOnMaskedKey { .. }) => {
                let mut open = inputs.clone();
                open.config.causal = false;
                self.validate(&open)
            }
            checked => checked,
        }
    }
}

/// Resolves every head's target as [`Goal::objective`] does, without a forward pass: a goal
/// depends only on the number of heads, the sentence's and source's lengths and the mask, so
/// settings can be checked while the weights are being edited.
pub fn check_goal(goal: &Goal, inputs: &Inputs) -> Result<(), AttentionError> {
    let keys = inputs.source.as_ref().map_or(&inputs.tokens, |s| &s.tokens);
    check_goal_fits(goal, &inputs.config, &inputs.tokens, keys)
}

/// [`check_goal`] for a model of configuration `config` whose sentence is `tokens` and whose
/// keys are `keys` (the source's tokens in cross-attention): a refusal names the tokens of the
/// cell it is about.
pub fn check_goal_fits(
    goal: &Goal,
    config: &Config,
    tokens: &[String],
    keys: &[String],
) -> Result<(), AttentionError> {
    let Goal::Pattern(targets) = goal else {
        return Ok(());
    };
    let n_heads = config.n_heads;
    head_patterns(targets, n_heads, tokens, keys, config.mask()).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{forward, Config, HeadTarget, Init, Matrix, Task, Weights};

    fn inputs(causal: bool) -> Inputs {
        let config = Config {
            causal,
            ..Config::default()
        };
        Inputs::from_sentence("the cat sat", config, Weights::new(Init::Default, 4)).unwrap()
    }

    #[test]
    fn defaults_follow_the_loss() {
        let pattern = Training::default();
        assert_eq!(pattern.goal, Goal::named(NamedTarget::Previous));
        assert_eq!(pattern.train, [Trainable::WQ, Trainable::WK]);
        assert_eq!(pattern.optimizer, OptimizerKind::Adam);
        assert_eq!(pattern.learning_rate, 0.05);
        let task = Training::new(Goal::Task(Task::Mean));
        assert_eq!(task.train.len(), 4);
        assert!(task.validate(&inputs(true)).is_ok());
    }

    #[test]
    fn validation_refuses_each_kind_of_bad_setting() {
        let next = Training::new(Goal::named(NamedTarget::Next));
        assert!(next.validate(&inputs(false)).is_ok());
        assert!(matches!(
            next.validate(&inputs(true)),
            Err(AttentionError::TargetOnMaskedKey { .. })
        ));
        let three = Training::new(Goal::Pattern(vec![
            HeadTarget::Named(NamedTarget::First);
            3
        ]));
        assert_eq!(
            three.validate(&inputs(false)),
            Err(AttentionError::TargetCount {
                count: 3,
                n_heads: 2
            })
        );
        let none = Training::new(Goal::Pattern(Vec::new()));
        assert!(none.validate(&inputs(false)).is_err());
        let slow = Training {
            learning_rate: 0.0,
            ..Training::default()
        };
        assert_eq!(
            slow.validate(&inputs(false)),
            Err(AttentionError::BadLearningRate { value: 0.0 })
        );
        let task = Training {
            train: vec![Trainable::Embeddings],
            ..Training::new(Goal::Task(Task::Mean))
        };
        assert!(matches!(
            task.validate(&inputs(false)),
            Err(AttentionError::TaskTrainsEmbeddings { .. })
        ));
    }

    #[test]
    fn validation_agrees_with_the_goal_s_own_resolution() {
        // A painted target of the wrong shape, per head: both checks refuse it the same way.
        let inputs = inputs(false);
        let trace = forward(&inputs).unwrap();
        let goal = Goal::Pattern(vec![
            HeadTarget::Named(NamedTarget::SelfToken),
            HeadTarget::Painted(Matrix::from_element(2, 3, 1.0)),
        ]);
        let expected = goal.objective(&trace).unwrap_err();
        assert_eq!(Training::new(goal).validate(&inputs), Err(expected));
    }
}
