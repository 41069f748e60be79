//! Training in the page: what the learner chose to train and how, and a run of steps on the
//! learner's own model, with its losses and the model it started from.
//!
//! The maths is [`crate::attention`]'s backward pass and optimizer; this module only applies
//! them to a [`Model`], whose embeddings are a table by token text: a word that appears twice
//! has one vector, so its gradient is the sum of the gradients of its rows, and both rows move
//! together.

use crate::attention::{
    gradients, loss_of, AttentionError, Goal, HeadTarget, Matrix, NamedTarget, Optimizer,
    OptimizerKind, Task, Trainable,
};
use crate::state::{Model, Overrides};

/// The goals offered in the page, in menu order: a named pattern for every head, or a task.
pub const GOALS: [GoalChoice; 8] = [
    GoalChoice::Pattern(NamedTarget::Previous),
    GoalChoice::Pattern(NamedTarget::SelfToken),
    GoalChoice::Pattern(NamedTarget::Next),
    GoalChoice::Pattern(NamedTarget::First),
    GoalChoice::Pattern(NamedTarget::Uniform),
    GoalChoice::Task(Task::CopyPrevious),
    GoalChoice::Task(Task::CopyFirst),
    GoalChoice::Task(Task::Mean),
];

/// One entry of the goal menu.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GoalChoice {
    /// The same target pattern for every head.
    Pattern(NamedTarget),
    /// A target for the layer's output.
    Task(Task),
}

impl GoalChoice {
    /// The key used in menus and tests: the target's or the task's.
    pub fn key(self) -> &'static str {
        match self {
            Self::Pattern(t) => t.key(),
            Self::Task(t) => t.key(),
        }
    }

    /// The menu entry called `key`.
    pub fn from_key(key: &str) -> Option<Self> {
        GOALS.into_iter().find(|g| g.key() == key)
    }

    /// The goal itself.
    pub fn goal(self) -> Goal {
        match self {
            Self::Pattern(t) => Goal::Pattern(vec![HeadTarget::Named(t)]),
            Self::Task(t) => Goal::Task(t),
        }
    }
}

/// What the learner chose: the goal, the matrices that learn, the optimizer and its rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The goal.
    pub goal: GoalChoice,
    /// The matrices that learn, in menu order.
    pub train: Vec<Trainable>,
    /// SGD or Adam.
    pub optimizer: OptimizerKind,
    /// The learning rate.
    pub learning_rate: f64,
}

impl Default for Settings {
    /// A head learning to look one token back with Adam: the goal of the classroom preset.
    fn default() -> Self {
        Self {
            goal: GoalChoice::Pattern(NamedTarget::Previous),
            train: vec![Trainable::WQ, Trainable::WK],
            optimizer: OptimizerKind::Adam,
            learning_rate: 0.05,
        }
    }
}

/// The matrices offered as learnable, in menu order; the source's embeddings only with a
/// source.
pub fn learnable(cross: bool) -> Vec<Trainable> {
    let mut all = vec![
        Trainable::WQ,
        Trainable::WK,
        Trainable::WV,
        Trainable::WO,
        Trainable::Embeddings,
    ];
    if cross {
        all.push(Trainable::SourceEmbeddings);
    }
    all
}

/// A run of training: the optimizer's state, every loss so far and the model before the first
/// step, which Reset brings back.
#[derive(Debug, Clone)]
pub struct Run {
    settings: Settings,
    optimizer: Optimizer,
    /// `losses[k]`: the loss after k steps.
    losses: Vec<f64>,
    before: Model,
}

impl Run {
    /// A run of `settings` starting from `model`; refuses settings the model cannot train
    /// (a target on a masked key, embeddings chasing a task, a bad learning rate).
    pub fn start(settings: Settings, model: &Model) -> Result<Self, AttentionError> {
        let inputs = model.inputs();
        let goal = settings.goal.goal();
        crate::attention::check_trainable(&goal, &settings.train, &inputs)?;
        let loss = loss_of(&inputs, &goal)?;
        Ok(Self {
            optimizer: Optimizer::new(settings.optimizer, settings.learning_rate)?,
            settings,
            losses: vec![loss],
            before: model.clone(),
        })
    }

    /// The settings this run trains with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Every loss so far: before training, then after each step.
    pub fn losses(&self) -> &[f64] {
        &self.losses
    }

    /// How many steps have been taken.
    pub fn steps(&self) -> usize {
        self.losses.len() - 1
    }

    /// The model before the first step.
    pub fn before(&self) -> &Model {
        &self.before
    }

    /// One step on `model`: forward, loss, backward, update. Records the loss after it. On an
    /// error the model keeps its weights.
    pub fn step(&mut self, model: &mut Model) -> Result<(), AttentionError> {
        let mut inputs = model.inputs();
        let goal = self.settings.goal.goal();
        let mut grads = gradients(&inputs, &goal)?;
        // One vector per word: the table entry's gradient is the sum over its rows.
        let tokens = model.tokens();
        grads.d_embeddings = tied(&tokens, &grads.d_embeddings);
        if let Some(d) = grads.d_source_embeddings.as_mut() {
            *d = tied(&model.source_tokens(), d);
        }
        self.optimizer
            .update(&mut inputs, &grads, &self.settings.train)?;
        let loss = loss_of(&inputs, &goal)?;
        model.weights = inputs.weights;
        if self.settings.train.contains(&Trainable::Embeddings) {
            write_rows(&mut model.embedding_overrides, &tokens, &inputs.embeddings);
        }
        if let (true, Some(source)) = (
            self.settings.train.contains(&Trainable::SourceEmbeddings),
            inputs.source,
        ) {
            write_rows(
                &mut model.source_overrides,
                &source.tokens,
                &source.embeddings,
            );
        }
        self.losses.push(loss);
        Ok(())
    }
}

/// `m` with every row replaced by the sum of the rows whose token is the same.
/// (seq_len, d_model) → (seq_len, d_model)
pub fn tied(tokens: &[String], m: &Matrix) -> Matrix {
    Matrix::from_fn(m.nrows(), m.ncols(), |i, j| {
        tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| Some(*t) == tokens.get(i))
            .map(|(r, _)| m[(r, j)])
            .sum()
    })
}

/// Writes each row of `m` as the vector of its token.
fn write_rows(overrides: &mut Overrides, tokens: &[String], m: &Matrix) {
    for (i, token) in tokens.iter().enumerate() {
        overrides.insert(token.clone(), m.row(i).iter().copied().collect());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{Init, Weights};

    fn model(sentence: &str) -> Model {
        let mut m = Model::default();
        m.set_sentence(sentence).unwrap();
        m.config.causal = true;
        m.weights = Weights::new(Init::Random(7), m.config.d_model);
        m
    }

    #[test]
    fn a_run_lowers_the_loss_and_reset_has_the_model_it_started_from() {
        let mut m = model("the cat sat on the mat");
        let start = m.clone();
        let mut run = Run::start(Settings::default(), &m).unwrap();
        for _ in 0..60 {
            run.step(&mut m).unwrap();
        }
        assert_eq!(run.steps(), 60);
        let l = run.losses();
        assert!(l[60] < l[0] * 0.5, "{} → {}", l[0], l[60]);
        assert_eq!(run.before(), &start);
        assert_ne!(m.weights, start.weights);
    }

    #[test]
    fn a_repeated_word_keeps_one_vector_while_embeddings_learn() {
        let mut m = model("the cat saw the dog");
        let settings = Settings {
            train: vec![Trainable::Embeddings],
            ..Settings::default()
        };
        let mut run = Run::start(settings, &m).unwrap();
        for _ in 0..5 {
            run.step(&mut m).unwrap();
        }
        let e = m.embeddings();
        assert_eq!(e.row(0), e.row(3), "the two rows of “the” drifted apart");
        assert!(run.losses()[5] < run.losses()[0]);
    }

    #[test]
    fn a_target_the_mask_hides_is_refused_and_the_model_is_untouched() {
        let m = model("a b c");
        let settings = Settings {
            goal: GoalChoice::Pattern(NamedTarget::Next),
            ..Settings::default()
        };
        let err = Run::start(settings, &m).unwrap_err().to_string();
        assert!(err.contains("next"), "{err}");
    }

    #[test]
    fn tied_rows_sum_over_the_same_word() {
        let tokens: Vec<String> = ["a", "b", "a"].map(String::from).to_vec();
        let m = Matrix::from_row_slice(3, 1, &[1.0, 2.0, 4.0]);
        assert_eq!(
            tied(&tokens, &m),
            Matrix::from_row_slice(3, 1, &[5.0, 2.0, 5.0])
        );
    }
}
