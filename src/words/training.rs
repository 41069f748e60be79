//! What the training panel says: the goals, the matrices that learn, and a status line that
//! names the numbers on screen.

use crate::attention::{LossKind, NamedTarget, OptimizerKind, Task, Trainable};

/// The panel's opening line.
pub const TRAINING_INTRO: &str = "Where do trained weights come from? Pick a goal and let \
gradient descent change the matrices you choose; every stage above follows the new weights.";

/// The goal menu's entry for a target pattern given to every head.
pub fn pattern_label(t: NamedTarget) -> &'static str {
    match t {
        NamedTarget::Previous => "Pattern: every token looks at the one before",
        NamedTarget::SelfToken => "Pattern: every token looks at itself",
        NamedTarget::Next => "Pattern: every token looks at the one after",
        NamedTarget::First => "Pattern: every token looks at the first",
        NamedTarget::Uniform => "Pattern: equal weight on every visible key",
    }
}

/// The goal menu's entry for a task.
pub fn task_label(t: Task) -> &'static str {
    match t {
        Task::CopyPrevious => "Task: Y copies the previous token's embedding",
        Task::CopyFirst => "Task: Y copies the first token's embedding",
        Task::Mean => "Task: Y is the mean of the visible embeddings",
    }
}

/// What a loss measures, with its formula.
pub fn loss_text(kind: LossKind) -> &'static str {
    match kind {
        LossKind::Pattern => {
            "Loss: the cross-entropy of every head's weights A against \
the target pattern A*, L = −1/(n_heads·n) · Σ A* · log A, averaged over heads and rows. It \
reads only A, so W_v and W_o get no gradient."
        }
        LossKind::Task => {
            "Loss: the mean squared error of the layer's output Y = C·W_o \
against a target built from the token embeddings E (without positions), \
L = 1/(n·d_model) · Σ (Y − Y*)²."
        }
    }
}

/// The checkbox label of a learnable matrix.
pub fn trainable_label(t: Trainable) -> &'static str {
    match t {
        Trainable::WQ => "W_q",
        Trainable::WK => "W_k",
        Trainable::WV => "W_v",
        Trainable::WO => "W_o",
        Trainable::Embeddings => "E",
        Trainable::SourceEmbeddings => "E_src",
    }
}

/// The optimizer menu's entry.
pub fn optimizer_label(kind: OptimizerKind) -> &'static str {
    match kind {
        OptimizerKind::Sgd => "SGD: W ← W − η·∂L/∂W",
        OptimizerKind::Adam => "Adam (β₁ 0.9, β₂ 0.999, ε 10⁻⁸)",
    }
}

/// A loss as the status line writes it: four decimals, or three significant digits in
/// scientific notation once four decimals would show only zeros.
fn loss_number(v: f64) -> String {
    if v.abs() >= 0.001 || v == 0.0 {
        crate::words::format_value(v, 4)
    } else {
        format!("{v:.2e}")
    }
}

/// The status line: how many steps and the loss before and now, rounded as shown.
pub fn status_text(losses: &[f64]) -> String {
    match losses {
        [] => String::new(),
        [first] => format!("Before training: loss L ≈ {}.", loss_number(*first)),
        [first, .., last] => {
            let steps = losses.len() - 1;
            format!(
                "After {steps} step{}: loss L ≈ {} (it was ≈ {} before training).",
                if steps == 1 { "" } else { "s" },
                loss_number(*last),
                loss_number(*first)
            )
        }
    }
}

/// Why the next step moves a weight against its gradient.
pub const DIRECTION_NOTE: &str = "Each step moves a weight against its gradient ∂L/∂W: a \
positive gradient means a small increase would raise the loss, so SGD lowers the weight by \
η·∂L/∂W. Adam scales each step by its running averages, so it does not follow the gradient \
exactly.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_names_the_steps_and_both_losses() {
        assert_eq!(status_text(&[1.0986]), "Before training: loss L ≈ 1.0986.");
        assert_eq!(
            status_text(&[1.0986, 0.5]),
            "After 1 step: loss L ≈ 0.5000 (it was ≈ 1.0986 before training)."
        );
        assert!(status_text(&[2.0, 1.0, 0.25]).starts_with("After 2 steps: loss L ≈ 0.2500"));
        assert!(status_text(&[2.0, 0.000213]).contains("L ≈ 2.13e-4 "));
    }

    #[test]
    fn every_goal_has_its_own_label() {
        let labels: std::collections::BTreeSet<_> = NamedTarget::ALL
            .iter()
            .map(|t| pattern_label(*t))
            .chain(Task::ALL.iter().map(|t| task_label(*t)))
            .collect();
        assert_eq!(labels.len(), NamedTarget::ALL.len() + Task::ALL.len());
    }
}
