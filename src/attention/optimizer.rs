//! Training: plain SGD and Adam, and the loop forward → loss → backward → update.
//!
//! ```text
//! SGD    θ ← θ − lr·g
//! Adam   m ← β₁·m + (1 − β₁)·g      v ← β₂·v + (1 − β₂)·g²     (both start at 0)
//!        m̂ = m / (1 − β₁ᵗ)          v̂ = v / (1 − β₂ᵗ)          t counts this matrix's steps
//!        θ ← θ − lr·m̂ / (√v̂ + ε)    β₁ = 0.9, β₂ = 0.999, ε = 1e-8, as PyTorch and optax
//! ```

use super::backward::{backward, loss_of, Gradients};
use super::choices::keyed;
use super::error::AttentionError;
use super::forward::{forward, Inputs};
use super::goal::Goal;
use super::weights::WeightName;
use super::Matrix;
use std::fmt;
use std::str::FromStr;

/// Adam's decay of the first moment, β₁.
pub const ADAM_BETA_1: f64 = 0.9;
/// Adam's decay of the second moment, β₂.
pub const ADAM_BETA_2: f64 = 0.999;
/// Adam's ε, added outside the square root.
pub const ADAM_EPSILON: f64 = 1e-8;

/// A matrix training can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trainable {
    /// W_q.
    WQ,
    /// W_k.
    WK,
    /// W_v.
    WV,
    /// W_o.
    WO,
    /// The sentence's token embeddings E (pattern loss only).
    Embeddings,
    /// The source's token embeddings E_src (pattern loss, cross-attention only).
    SourceEmbeddings,
}

keyed!(Trainable, "matrix to train", [
    WQ => "w_q",
    WK => "w_k",
    WV => "w_v",
    WO => "w_o",
    Embeddings => "embeddings",
    SourceEmbeddings => "source_embeddings",
]);

impl Trainable {
    /// The projection matrix called `name`.
    pub fn weight(name: WeightName) -> Self {
        match name {
            WeightName::Q => Self::WQ,
            WeightName::K => Self::WK,
            WeightName::V => Self::WV,
            WeightName::O => Self::WO,
        }
    }

    /// Whether this is a matrix of embeddings rather than a projection.
    pub fn is_embeddings(self) -> bool {
        matches!(self, Self::Embeddings | Self::SourceEmbeddings)
    }

    fn index(self) -> usize {
        self as usize
    }

    /// This matrix in `inputs`; `None` for the source's embeddings without a source.
    fn get_mut(self, inputs: &mut Inputs) -> Option<&mut Matrix> {
        let w = &mut inputs.weights;
        match self {
            Self::WQ => Some(&mut w.w_q),
            Self::WK => Some(&mut w.w_k),
            Self::WV => Some(&mut w.w_v),
            Self::WO => Some(&mut w.w_o),
            Self::Embeddings => Some(&mut inputs.embeddings),
            Self::SourceEmbeddings => inputs.source.as_mut().map(|s| &mut s.embeddings),
        }
    }

    /// This matrix's gradient; `None` where the loss does not reach it.
    fn gradient(self, g: &Gradients) -> Option<&Matrix> {
        match self {
            Self::WQ => Some(&g.d_w_q),
            Self::WK => Some(&g.d_w_k),
            Self::WV => g.d_w_v.as_ref(),
            Self::WO => g.d_w_o.as_ref(),
            Self::Embeddings => Some(&g.d_embeddings),
            Self::SourceEmbeddings => g.d_source_embeddings.as_ref(),
        }
    }
}

/// The largest gradient entry in size among the matrices in `train` that the loss reaches, as
/// the page's step applies it: how far one SGD step of rate η moves a weight, in units of η
/// (Adam's steps are at most about η). The page keeps one vector per word, so the embeddings'
/// entries are the tied ones, each word's rows summed. `None` when the loss reaches none of them.
pub fn largest_gradient(gradients: &Gradients, train: &[Trainable]) -> Option<f64> {
    train
        .iter()
        .filter_map(|t| match t {
            Trainable::Embeddings => Some(&gradients.d_embedding_table),
            Trainable::SourceEmbeddings => gradients.d_source_embedding_table.as_ref(),
            t => t.gradient(gradients),
        })
        .map(|g| g.iter().fold(0.0f64, |m, v| m.max(v.abs())))
        .reduce(f64::max)
}

/// Checks that every matrix in `train` can learn `goal` on `inputs`: a task's target is built
/// from the embeddings, so they cannot chase it, and the source's embeddings need a source.
pub fn check_trainable(
    goal: &Goal,
    train: &[Trainable],
    inputs: &Inputs,
) -> Result<(), AttentionError> {
    for &t in train {
        if let Goal::Task(task) = goal {
            if t.is_embeddings() {
                return Err(AttentionError::TaskTrainsEmbeddings {
                    task: task.key().to_string(),
                    name: t.key().to_string(),
                });
            }
        }
        if t == Trainable::SourceEmbeddings && inputs.source.is_none() {
            return Err(AttentionError::NoSourceToTrain);
        }
    }
    Ok(())
}

/// The update rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OptimizerKind {
    /// Plain stochastic gradient descent: no momentum, no weight decay.
    Sgd,
    /// Adam with bias correction.
    #[default]
    Adam,
}

keyed!(OptimizerKind, "optimizer", [Sgd => "sgd", Adam => "adam"]);

/// Adam's running moments of one matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct AdamState {
    /// The first moment m, an exponential moving average of the gradient. (shape of the matrix)
    pub m: Matrix,
    /// The second moment v, an exponential moving average of the squared gradient. (shape of the matrix)
    pub v: Matrix,
    /// How many updates this matrix has had: t in the bias correction.
    pub steps: u32,
}

/// An optimizer and its state, one slot per trainable matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Optimizer {
    kind: OptimizerKind,
    learning_rate: f64,
    steps: usize,
    adam: [Option<AdamState>; 6],
}

impl Optimizer {
    /// A fresh optimizer; the learning rate must be positive and finite.
    pub fn new(kind: OptimizerKind, learning_rate: f64) -> Result<Self, AttentionError> {
        if !(learning_rate.is_finite() && learning_rate > 0.0) {
            return Err(AttentionError::BadLearningRate {
                value: learning_rate,
            });
        }
        Ok(Self {
            kind,
            learning_rate,
            steps: 0,
            adam: Default::default(),
        })
    }

    /// The update rule.
    pub fn kind(&self) -> OptimizerKind {
        self.kind
    }

    /// The learning rate.
    pub fn learning_rate(&self) -> f64 {
        self.learning_rate
    }

    /// How many training steps this optimizer has taken.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Adam's moments of `matrix`, once it has had an update.
    pub fn adam_state(&self, matrix: Trainable) -> Option<&AdamState> {
        self.adam[matrix.index()].as_ref()
    }

    /// Forgets every moment and the step count, as a new optimizer would.
    pub fn reset(&mut self) {
        self.steps = 0;
        self.adam = Default::default();
    }

    /// Updates the matrices in `train` from `gradients`. A matrix the loss does not reach is
    /// left alone, with no Adam step counted (as PyTorch skips a parameter without a gradient).
    /// If any new value is not finite, `inputs` keep the weights they had.
    pub fn update(
        &mut self,
        inputs: &mut Inputs,
        gradients: &Gradients,
        train: &[Trainable],
    ) -> Result<(), AttentionError> {
        // A step that diverges leaves no trace: the moments and the count go back as well.
        let before = (self.adam.clone(), self.steps);
        let mut staged: Vec<(Trainable, Matrix)> = Vec::with_capacity(train.len());
        for &t in Trainable::ALL.iter().filter(|t| train.contains(t)) {
            let Some(grad) = t.gradient(gradients) else {
                continue;
            };
            let Some(current) = t.get_mut(inputs) else {
                return Err(AttentionError::NoSourceToTrain);
            };
            let step = self.step_for(t, grad);
            // (shape of the matrix) each
            let next = &*current + step;
            staged.push((t, next));
        }
        if staged.iter().any(|(_, m)| m.iter().any(|v| !v.is_finite())) {
            (self.adam, self.steps) = before;
            return Err(AttentionError::TrainingDiverged {
                step: self.steps + 1,
            });
        }
        self.steps += 1;
        for (t, next) in staged {
            if let Some(current) = t.get_mut(inputs) {
                *current = next;
            }
        }
        Ok(())
    }

    /// The change to add to `matrix` for gradient `grad`, advancing its Adam moments.
    fn step_for(&mut self, matrix: Trainable, grad: &Matrix) -> Matrix {
        let lr = self.learning_rate;
        match self.kind {
            OptimizerKind::Sgd => grad * -lr,
            OptimizerKind::Adam => {
                let slot = &mut self.adam[matrix.index()];
                // A matrix whose shape changed (a new sentence, say) starts again from zero.
                if slot.as_ref().is_none_or(|s| s.m.shape() != grad.shape()) {
                    *slot = Some(AdamState {
                        m: Matrix::zeros(grad.nrows(), grad.ncols()),
                        v: Matrix::zeros(grad.nrows(), grad.ncols()),
                        steps: 0,
                    });
                }
                let Some(state) = slot.as_mut() else {
                    return Matrix::zeros(grad.nrows(), grad.ncols());
                };
                state.steps += 1;
                let t = state.steps.min(i32::MAX as u32) as i32;
                let correction_1 = 1.0 - ADAM_BETA_1.powi(t);
                let correction_2 = 1.0 - ADAM_BETA_2.powi(t);
                let mut step = Matrix::zeros(grad.nrows(), grad.ncols());
                for ((m, v), (g, s)) in state
                    .m
                    .iter_mut()
                    .zip(state.v.iter_mut())
                    .zip(grad.iter().zip(step.iter_mut()))
                {
                    *m = ADAM_BETA_1 * *m + (1.0 - ADAM_BETA_1) * g;
                    *v = ADAM_BETA_2 * *v + (1.0 - ADAM_BETA_2) * g * g;
                    let m_hat = *m / correction_1;
                    let v_hat = *v / correction_2;
                    *s = -lr * m_hat / (v_hat.sqrt() + ADAM_EPSILON);
                }
                step
            }
        }
    }
}

/// One training step on `inputs`: forward, loss, backward, then `optimizer` updates the
/// matrices in `train`. Returns the loss before the update.
pub fn train_step(
    inputs: &mut Inputs,
    goal: &Goal,
    train: &[Trainable],
    optimizer: &mut Optimizer,
) -> Result<f64, AttentionError> {
    check_trainable(goal, train, inputs)?;
    step_unchecked(inputs, goal, train, optimizer)
}

/// `steps` training steps. Returns `steps + 1` losses: before training, then after each step.
/// On an error, `inputs` keep the weights of the last good step.
pub fn train(
    inputs: &mut Inputs,
    goal: &Goal,
    train: &[Trainable],
    optimizer: &mut Optimizer,
    steps: usize,
) -> Result<Vec<f64>, AttentionError> {
    check_trainable(goal, train, inputs)?;
    let mut losses = Vec::with_capacity(steps + 1);
    for _ in 0..steps {
        losses.push(step_unchecked(inputs, goal, train, optimizer)?);
    }
    losses.push(loss_of(inputs, goal)?);
    Ok(losses)
}

fn step_unchecked(
    inputs: &mut Inputs,
    goal: &Goal,
    train: &[Trainable],
    optimizer: &mut Optimizer,
) -> Result<f64, AttentionError> {
    let trace = forward(inputs)?;
    let objective = goal.objective(&trace)?;
    let gradients = backward(&trace, &objective)?;
    optimizer.update(inputs, &gradients, train)?;
    Ok(gradients.loss)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{Config, Init, NamedTarget, Task, Weights};

    fn inputs() -> Inputs {
        let config = Config::default();
        Inputs::from_sentence(
            "a head learns to look back",
            config,
            Weights::new(Init::Random(3), config.d_model),
        )
        .unwrap()
    }

    #[test]
    fn a_task_refuses_to_train_the_embeddings() {
        let mut inputs = inputs();
        let mut adam = Optimizer::new(OptimizerKind::Adam, 0.01).unwrap();
        let goal = Goal::Task(Task::CopyPrevious);
        let err = train_step(&mut inputs, &goal, &[Trainable::Embeddings], &mut adam).unwrap_err();
        assert!(err.to_string().contains("`copy_previous`"), "{err}");
    }

    #[test]
    fn learning_rates_must_be_positive_and_finite() {
        for lr in [0.0, -0.1, f64::NAN, f64::INFINITY] {
            assert!(Optimizer::new(OptimizerKind::Sgd, lr).is_err());
        }
    }

    #[test]
    fn a_diverging_step_keeps_the_last_good_weights() {
        let mut inputs = inputs();
        let before = inputs.weights.clone();
        let goal = Goal::named(NamedTarget::Previous);
        let mut gradients = crate::attention::gradients(&inputs, &goal).unwrap();
        // W_k's step stays finite and W_q's overflows: neither may be applied.
        gradients.d_w_q *= 1e10;
        let mut sgd = Optimizer::new(OptimizerKind::Sgd, f64::MAX / 1e5).unwrap();
        let train = [Trainable::WQ, Trainable::WK];
        let err = sgd.update(&mut inputs, &gradients, &train).unwrap_err();
        assert_eq!(err, AttentionError::TrainingDiverged { step: 1 });
        assert_eq!(inputs.weights, before);
    }

    #[test]
    fn training_records_the_loss_before_and_after_every_step() {
        let mut inputs = inputs();
        let mut adam = Optimizer::new(OptimizerKind::Adam, 0.05).unwrap();
        let goal = Goal::named(NamedTarget::Previous);
        let losses = train(
            &mut inputs,
            &goal,
            &[Trainable::WQ, Trainable::WK],
            &mut adam,
            20,
        )
        .unwrap();
        assert_eq!(losses.len(), 21);
        assert!(losses[20] < losses[0], "{losses:?}");
        assert_eq!(adam.adam_state(Trainable::WQ).unwrap().steps, 20);
        // The pattern loss does not reach W_v, so Adam keeps no state for it.
        assert!(adam.adam_state(Trainable::WV).is_none());
    }
}
