//! Training in the page: what the learner chose to train and how, and a run of steps on the
//! learner's own model, with its losses and the model it started from.
//!
//! The maths is [`crate::attention`]'s backward pass and optimizer; this module only applies
//! them to a [`Model`], whose embeddings are a table by token text: a word that appears twice
//! has one vector, so its gradient is the sum of the gradients of its rows, and both rows move
//! together.

use crate::attention::{
    check_goal, gradients, loss_of, AttentionError, Goal, HeadTarget, Mask, Matrix, NamedTarget,
    Optimizer, Task, Trainable, Training,
};
use crate::state::{Model, Overrides};

/// The goals offered in the page, in menu order: a named pattern for every head, a target for
/// each head, or a task.
pub const GOALS: [GoalChoice; 9] = [
    GoalChoice::Pattern(NamedTarget::Previous),
    GoalChoice::Pattern(NamedTarget::SelfToken),
    GoalChoice::Pattern(NamedTarget::Next),
    GoalChoice::Pattern(NamedTarget::First),
    GoalChoice::Pattern(NamedTarget::Uniform),
    GoalChoice::PerHead,
    GoalChoice::Task(Task::CopyPrevious),
    GoalChoice::Task(Task::CopyFirst),
    GoalChoice::Task(Task::Mean),
];

/// One entry of the goal menu.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GoalChoice {
    /// The same target pattern for every head.
    Pattern(NamedTarget),
    /// A target for each head, named or painted, chosen head by head.
    PerHead,
    /// A target for the layer's output.
    Task(Task),
}

/// The key of the per-head entry of the goal menu.
const PER_HEAD: &str = "per_head";

/// The key of a painted target in a head's menu.
pub const PAINTED: &str = "painted";

impl GoalChoice {
    /// The key used in menus and tests: the target's or the task's, or `per_head`.
    pub fn key(self) -> &'static str {
        match self {
            Self::Pattern(t) => t.key(),
            Self::PerHead => PER_HEAD,
            Self::Task(t) => t.key(),
        }
    }

    /// The menu entry called `key`.
    pub fn from_key(key: &str) -> Option<Self> {
        GOALS.into_iter().find(|g| g.key() == key)
    }

    /// The entry that shows `goal`: a single named target is shared by every head; several
    /// targets, or a painted one, are chosen head by head.
    pub fn of(goal: &Goal) -> Self {
        match goal {
            Goal::Pattern(targets) => match targets.as_slice() {
                [HeadTarget::Named(t)] => Self::Pattern(*t),
                _ => Self::PerHead,
            },
            Goal::Task(t) => Self::Task(*t),
        }
    }
}

/// The settings after choosing `choice` in the goal menu, for a model with `n_heads` heads.
/// Choosing "a target for each head" starts every head on the target it had; choosing a task
/// stops the embeddings learning (a task's target is built from them) and lets W_v and W_o
/// learn, which a task needs.
pub fn choose_goal(current: &Training, choice: GoalChoice, n_heads: usize) -> Training {
    let mut next = current.clone();
    next.goal = match choice {
        GoalChoice::Pattern(t) => Goal::named(t),
        GoalChoice::Task(t) => Goal::Task(t),
        GoalChoice::PerHead => Goal::Pattern(match &current.goal {
            Goal::Pattern(targets) if targets.len() == n_heads && n_heads > 1 => targets.clone(),
            Goal::Pattern(targets) if !targets.is_empty() => vec![targets[0].clone(); n_heads],
            _ => vec![HeadTarget::Named(NamedTarget::Previous); n_heads],
        }),
    };
    if matches!(choice, GoalChoice::Task(_)) {
        next.train.retain(|t| !t.is_embeddings());
        for w in [Trainable::WV, Trainable::WO] {
            if !next.train.contains(&w) {
                next.train.push(w);
            }
        }
    }
    next
}

/// The settings after head `head`'s menu chose `target` (`None`: painted by hand). A painted
/// target starts from the head's previous pattern, every cell it used painted.
pub fn choose_head_target(model: &Model, head: usize, target: Option<NamedTarget>) -> Training {
    let mut next = model.fitted_training();
    let n_heads = model.config.n_heads;
    let Goal::Pattern(targets) = &mut next.goal else {
        return next;
    };
    if targets.len() != n_heads {
        let first = targets.first().cloned();
        *targets = vec![first.unwrap_or(HeadTarget::Named(NamedTarget::Previous)); n_heads];
    }
    let Some(slot) = targets.get_mut(head) else {
        return next;
    };
    *slot = match target {
        Some(t) => HeadTarget::Named(t),
        None => {
            let (seq_len, n_keys) = shape(model);
            let start = match slot {
                HeadTarget::Named(t) => t.pattern(seq_len, n_keys, model_mask(model)),
                HeadTarget::Painted(m) => m.clone(),
            };
            HeadTarget::Painted(start.map(|v| if v > 0.0 { 1.0 } else { 0.0 }))
        }
    };
    next
}

/// The settings after clicking cell (`row`, `key`) of head `head`'s painted target: an
/// unpainted cell gets weight 1, a painted one 0, and each row is divided by its sum when
/// training reads it. A cell the causal mask hides, or clearing a row's last painted cell, is
/// refused, naming the target and the mask or the row.
pub fn paint(
    model: &Model,
    head: usize,
    row: usize,
    key: usize,
) -> Result<Training, AttentionError> {
    let mut next = model.fitted_training();
    let Goal::Pattern(targets) = &mut next.goal else {
        return Ok(next);
    };
    // One painted target for every head is painted from any head's grid.
    let shared = targets.len() == 1 && model.config.n_heads > 1;
    let at = head.min(targets.len().saturating_sub(1));
    let Some(HeadTarget::Painted(m)) = targets.get_mut(at) else {
        return Ok(next);
    };
    if row >= m.nrows() || key >= m.ncols() {
        return Ok(next);
    }
    let refused = |e: AttentionError| {
        let e = named_in(model, e);
        if shared {
            e.shared()
        } else {
            e
        }
    };
    let causal = model.config.causal && !model.cross;
    if causal && key > row {
        return Err(refused(AttentionError::PaintOnMaskedKey {
            head,
            row,
            key,
            detail: Box::default(),
        }));
    }
    let painted = m[(row, key)] > 0.0;
    if painted && m.row(row).iter().filter(|v| **v > 0.0).count() == 1 {
        let visible = if causal { row + 1 } else { m.ncols() };
        return Err(refused(AttentionError::ClearLastPaintedKey {
            head,
            row,
            key,
            only: visible == 1,
            detail: Box::default(),
        }));
    }
    m[(row, key)] = if painted { 0.0 } else { 1.0 };
    Ok(next)
}

/// `error` naming the tokens of `model`'s sentence (its rows) and keys.
fn named_in(model: &Model, error: AttentionError) -> AttentionError {
    let tokens = model.tokens();
    let keys = if model.cross {
        model.source_tokens()
    } else {
        tokens.clone()
    };
    error.naming(&tokens, &keys)
}

/// The settings after choosing `choice`, refused (with the reason) when the goal does not fit
/// the model: a target on a key the causal mask hides.
pub fn checked(model: &Model, training: Training) -> Result<Training, AttentionError> {
    let (seq_len, n_keys) = shape(model);
    let goal = training.goal.fitted(model.config.n_heads, seq_len, n_keys);
    check_goal(&goal, &model.inputs())?;
    Ok(training)
}

/// The shape of a target pattern for `model`: (seq_len, n_keys).
pub fn shape(model: &Model) -> (usize, usize) {
    let seq_len = model.tokens().len();
    let n_keys = if model.cross {
        model.source_tokens().len()
    } else {
        seq_len
    };
    (seq_len, n_keys)
}

/// Head `head`'s target pattern as training reads it, rows summing to 1, or why there is none.
/// (seq_len, n_keys)
pub fn head_pattern(model: &Model, head: usize) -> Result<Matrix, AttentionError> {
    let training = model.fitted_training();
    let Goal::Pattern(targets) = &training.goal else {
        return Ok(Matrix::zeros(0, 0));
    };
    let target = &targets[head.min(targets.len().saturating_sub(1))];
    let (seq_len, n_keys) = shape(model);
    target
        .pattern(head, seq_len, n_keys, model_mask(model))
        .map_err(|e| named_in(model, e))
}

/// The mask the model's attention applies: none with a source sentence, which keeps the
/// causal switch for when the source goes.
fn model_mask(model: &Model) -> Mask {
    if model.cross {
        Mask::NONE
    } else {
        model.config.mask()
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
    settings: Training,
    optimizer: Optimizer,
    /// `losses[k]`: the loss after k steps.
    losses: Vec<f64>,
    before: Model,
}

impl Run {
    /// A run of `settings` starting from `model`; refuses settings the model cannot train
    /// (a target on a masked key, embeddings chasing a task, a bad learning rate).
    pub fn start(settings: Training, model: &Model) -> Result<Self, AttentionError> {
        let inputs = model.inputs();
        let goal = settings.goal.clone();
        crate::attention::check_trainable(&goal, &settings.train, &inputs)?;
        let loss = loss_of(&inputs, &goal)?;
        Ok(Self {
            optimizer: settings.optimizer()?,
            settings,
            losses: vec![loss],
            before: model.clone(),
        })
    }

    /// The settings this run trains with.
    pub fn settings(&self) -> &Training {
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
        let goal = self.settings.goal.clone();
        let mut grads = gradients(&inputs, &goal)?;
        // One vector per word: each row moves by its word's gradient, the sum over its rows.
        let tokens = model.tokens();
        grads.d_embeddings = grads.d_embedding_table.clone();
        grads.d_source_embeddings = grads.d_source_embedding_table.clone();
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
        let mut run = Run::start(Training::default(), &m).unwrap();
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
        let settings = Training {
            train: vec![Trainable::Embeddings],
            ..Training::default()
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
    fn the_largest_gradient_is_the_largest_move_of_an_sgd_step_over_eta_with_words_tied() {
        // "the" appears three times: its one vector moves by the sum of its rows' gradients,
        // more than any single row's gradient would move it.
        let mut m = Model::default();
        m.set_sentence("the cat saw the dog the end").unwrap();
        m.config.temperature = 20.0;
        let eta = 0.01;
        let train = vec![Trainable::WQ, Trainable::WK, Trainable::Embeddings];
        let settings = Training {
            goal: Goal::named(NamedTarget::First),
            train: train.clone(),
            optimizer: crate::attention::OptimizerKind::Sgd,
            learning_rate: eta,
        };
        let pass =
            crate::attention::BackwardPass::new(&m.trace().unwrap(), &settings.goal).unwrap();
        let largest = crate::attention::largest_gradient(&pass.gradients, &train).unwrap();
        let untied = [
            &pass.gradients.d_w_q,
            &pass.gradients.d_w_k,
            &pass.gradients.d_embeddings,
        ]
        .iter()
        .flat_map(|g| g.iter())
        .fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(largest > untied * 1.05, "{largest} vs {untied}");
        let before = m.clone();
        let mut run = Run::start(settings, &m).unwrap();
        run.step(&mut m).unwrap();
        let moved = |a: &Matrix, b: &Matrix| {
            a.iter()
                .zip(b.iter())
                .fold(0.0f64, |x, (p, q)| x.max((p - q).abs()))
        };
        let most = moved(&m.weights.w_q, &before.weights.w_q)
            .max(moved(&m.weights.w_k, &before.weights.w_k))
            .max(moved(&m.embeddings(), &before.embeddings()));
        assert!(
            (most - eta * largest).abs() <= 1e-12 * most,
            "moved {most}, η·largest {}",
            eta * largest
        );
    }

    #[test]
    fn a_target_the_mask_hides_is_refused_and_the_model_is_untouched() {
        let m = model("a b c");
        let settings = Training::new(Goal::named(NamedTarget::Next));
        let err = Run::start(settings, &m).unwrap_err().to_string();
        assert!(err.contains("next"), "{err}");
    }

    #[test]
    fn the_goal_menu_shows_a_shared_target_per_head_goals_and_tasks() {
        assert_eq!(
            GoalChoice::of(&Goal::named(NamedTarget::First)),
            GoalChoice::Pattern(NamedTarget::First)
        );
        let two = Goal::Pattern(vec![HeadTarget::Named(NamedTarget::First); 2]);
        assert_eq!(GoalChoice::of(&two), GoalChoice::PerHead);
        assert_eq!(
            GoalChoice::of(&Goal::Task(Task::Mean)),
            GoalChoice::Task(Task::Mean)
        );
        for g in GOALS {
            assert_eq!(GoalChoice::from_key(g.key()), Some(g));
        }
    }

    #[test]
    fn choosing_per_head_starts_every_head_on_the_shared_target() {
        let shared = Training::new(Goal::named(NamedTarget::First));
        let per_head = choose_goal(&shared, GoalChoice::PerHead, 2);
        assert_eq!(
            per_head.goal,
            two_heads(NamedTarget::First, NamedTarget::First)
        );
        let task = choose_goal(
            &Training {
                train: vec![Trainable::WQ, Trainable::Embeddings],
                ..shared
            },
            GoalChoice::Task(Task::CopyFirst),
            2,
        );
        assert_eq!(task.train, [Trainable::WQ, Trainable::WV, Trainable::WO]);
    }

    fn two_heads(a: NamedTarget, b: NamedTarget) -> Goal {
        Goal::Pattern(vec![HeadTarget::Named(a), HeadTarget::Named(b)])
    }

    #[test]
    fn a_painted_head_starts_from_its_pattern_and_each_click_toggles_one_cell() {
        let mut m = model("a b c");
        m.training.goal = two_heads(NamedTarget::Previous, NamedTarget::Uniform);
        m.training = choose_head_target(&m, 1, None);
        let Goal::Pattern(targets) = &m.training.goal else {
            panic!("a pattern goal")
        };
        // Uniform under the causal mask: every visible key painted.
        let expected = Matrix::from_row_slice(3, 3, &[1., 0., 0., 1., 1., 0., 1., 1., 1.]);
        assert_eq!(targets[1], HeadTarget::Painted(expected));
        m.training = paint(&m, 1, 2, 0).unwrap();
        let pattern = head_pattern(&m, 1).unwrap();
        // Row 2 keeps keys 1 and 2: 1/2 each.
        assert_eq!(
            pattern.row(2).iter().copied().collect::<Vec<_>>(),
            [0.0, 0.5, 0.5]
        );
        assert!(run_trains(&m), "training starts on the painted goal");
    }

    fn run_trains(m: &Model) -> bool {
        let mut m = m.clone();
        let mut run = Run::start(m.fitted_training(), &m).unwrap();
        for _ in 0..20 {
            run.step(&mut m).unwrap();
        }
        run.losses()[20] < run.losses()[0]
    }

    #[test]
    fn painting_a_masked_key_or_emptying_a_row_is_refused_with_the_reason() {
        let mut m = model("a b c");
        m.training = choose_head_target(&m, 0, None);
        let before = m.training.clone();
        let masked = paint(&m, 0, 0, 2).unwrap_err().to_string();
        assert!(
            masked.starts_with(
                "In head 1's painted target, key 3 (“c”) comes after row 1's token (“a”)"
            ) && masked.contains("cannot be painted"),
            "{masked}"
        );
        // Row 0 of `previous` looks only at key 0: clearing it would leave nothing to learn.
        let empty = paint(&m, 0, 0, 0).unwrap_err().to_string();
        assert!(
            empty.starts_with(
                "Row 1 (“a”) of head 1's painted target must keep its weight on key 1 (“a”): it \
                 is the only key this row can see"
            ),
            "{empty}"
        );
        // Row 2 sees two keys: its last painted one is kept, and it says how to move it.
        let row_two = paint(&m, 0, 1, 0).unwrap_err().to_string();
        assert!(
            row_two.starts_with("Row 2 (“b”) of head 1's painted target would have no weight left"),
            "{row_two}"
        );
        assert_eq!(m.training, before);
    }

    #[test]
    fn a_painted_target_every_head_shares_is_painted_from_any_heads_grid() {
        let mut m = model("a b c");
        assert_eq!(m.config.n_heads, 2);
        m.training.goal = Goal::Pattern(vec![HeadTarget::Painted(Matrix::identity(3, 3))]);
        // Head 2's grid shows the shared target, and a click there paints it.
        let next = paint(&m, 1, 2, 0).unwrap();
        let Goal::Pattern(targets) = &next.goal else {
            panic!("the goal stays a pattern");
        };
        assert_eq!(targets.len(), 1);
        let HeadTarget::Painted(p) = &targets[0] else {
            panic!("the target stays painted");
        };
        assert_eq!(p[(2, 0)], 1.0);
        let masked = paint(&m, 1, 0, 1).unwrap_err().to_string();
        assert!(
            masked.starts_with("In the painted target every head shares, key 2 (“b”)"),
            "{masked}"
        );
    }

    #[test]
    fn a_target_on_a_masked_key_is_refused_when_chosen() {
        let m = model("a b c");
        let next = choose_goal(&m.training, GoalChoice::Pattern(NamedTarget::Next), 2);
        let err = checked(&m, next).unwrap_err().to_string();
        assert!(
            err.contains("`next`") && err.contains("causal mask"),
            "{err}"
        );
        // `next` is shared by both heads: the refusal is about every head, and names the
        // tokens of the first row it cannot train.
        assert!(
            err.contains("in every head, row 1 (“a”) puts weight on key 2 (“b”), a later token"),
            "{err}"
        );
        let mut open = m.clone();
        open.config.causal = false;
        let next = choose_goal(&open.training, GoalChoice::Pattern(NamedTarget::Next), 2);
        assert!(checked(&open, next).is_ok());
    }
}
