//! The arguments of `grad` and `train` as clap reads them: the goal, the training settings,
//! their value parsers and help texts, and what they mean as options.

use super::input_args::{ComputeArgs, InputArgs};
use super::{GoalOptions, GradOptions, TrainOptions};
use crate::attention::{LossKind, NamedTarget, OptimizerKind, Task, Trainable};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{ArgAction, Args};
use std::str::FromStr;

/// The most steps `train` takes in one run: a few seconds at the largest scenario, and a bound
/// on the memory the losses take.
pub const MAX_STEPS: usize = 100_000;

/// The steps `train` takes when `--steps` is not given: enough for the default scenario's heads
/// to learn `previous` with Adam at the default learning rate.
pub const DEFAULT_STEPS: usize = 100;

/// What the loss aims at, shared by `grad` and `train`.
#[derive(Debug, Args)]
pub(super) struct GoalArgs {
    /// Which loss; inferred from --target or --task, else the scenario's, else pattern.
    #[arg(long, value_name = "LOSS", value_parser = choice::<LossKind>(&[
        ("pattern", "cross-entropy of each head's weights against its target pattern"),
        ("task", "mean squared error of the output against a target built from the embeddings"),
    ]))]
    loss: Option<LossKind>,
    /// Target patterns, comma-separated: one for every head, or one per head (pattern loss);
    /// the scenario's, else previous.
    #[arg(
        long,
        value_name = "NAME[,NAME…]",
        value_delimiter = ',',
        // Set, not append: like every other option, a repeated --target replaces the list.
        action = ArgAction::Set,
        conflicts_with = "task",
        value_parser = choice::<NamedTarget>(&[
            ("self", "each token looks at itself"),
            ("previous", "each token looks at the one before; the first at itself"),
            ("next", "each token looks at the one after; the last at itself (not with --causal)"),
            ("first", "every token looks at the first"),
            ("uniform", "equal weight on every key the mask leaves visible"),
        ])
    )]
    target: Option<Vec<NamedTarget>>,
    /// The output's target, built from the token embeddings E (task loss).
    #[arg(long, value_name = "NAME", value_parser = choice::<Task>(&[
        ("copy_previous", "each row is the E row of the token before it, the first row E's first; with --source, row i is E_src's row i−1 (its first for row 1, its last once i−1 is past its end)"),
        ("copy_first", "every row is E's first row (E_src's with --source)"),
        ("mean", "row i is the mean of the E rows the mask leaves visible to it (of every E_src row with --source)"),
    ]))]
    task: Option<Task>,
}

/// The options of `grad` as typed.
#[derive(Debug, Args)]
pub(super) struct GradArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    compute: ComputeArgs,
    #[command(flatten)]
    goal: GoalArgs,
}

/// The options of `train` as typed.
#[derive(Debug, Args)]
pub(super) struct TrainArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    compute: ComputeArgs,
    #[command(flatten)]
    goal: GoalArgs,
    /// The update rule; the scenario's, else adam.
    #[arg(long, value_name = "NAME", value_parser = choice::<OptimizerKind>(&[
        ("adam", "Adam: exponential moving averages of the gradient and its square (decay 0.9 and 0.999), ε 1e-8 outside the root, bias correction"),
        ("sgd", "plain gradient descent: no momentum, no weight decay"),
    ]))]
    optimizer: Option<OptimizerKind>,
    /// The learning rate, a positive number; the scenario's, else 0.05.
    #[arg(
        long = "lr",
        value_name = "X",
        value_parser = learning_rate,
        allow_negative_numbers = true
    )]
    lr: Option<f64>,
    #[arg(
        long,
        value_name = "N",
        default_value_t = DEFAULT_STEPS,
        help = format!("How many training steps, 0 to {MAX_STEPS}"),
        value_parser = step_count,
        allow_negative_numbers = true
    )]
    steps: usize,
    /// The matrices that learn, comma-separated; the scenario's for a goal of its loss, else
    /// w_q,w_k for a pattern and w_q,w_k,w_v,w_o for a task. Embeddings cannot learn a task.
    #[arg(
        long,
        value_name = "NAME[,NAME…]",
        value_delimiter = ',',
        action = ArgAction::Set,
        value_parser = choice::<Trainable>(&[
            ("w_q", "the query projection"),
            ("w_k", "the key projection"),
            ("w_v", "the value projection (task loss only; a pattern does not reach it)"),
            ("w_o", "the output projection (task loss only; a pattern does not reach it)"),
            ("embeddings", "the sentence's token embeddings (pattern loss only)"),
            ("source_embeddings", "the source's token embeddings (pattern loss, with --source)"),
        ])
    )]
    train: Option<Vec<Trainable>>,
}

/// One of `choices` by its key, each listed with its help; the key is read by the type's own
/// `FromStr`, so the names are those of the scenario format.
fn choice<T>(choices: &[(&'static str, &'static str)]) -> impl TypedValueParser<Value = T>
where
    T: FromStr<Err = String> + Clone + Send + Sync + 'static,
{
    let values: Vec<PossibleValue> = choices
        .iter()
        .map(|(key, help)| PossibleValue::new(*key).help(*help))
        .collect();
    PossibleValuesParser::new(values).try_map(|key| key.parse::<T>())
}

/// Parses a learning rate; [`crate::attention::Optimizer::new`] refuses one that is not
/// positive, with a message naming it.
fn learning_rate(value: &str) -> Result<f64, String> {
    value
        .trim()
        .parse()
        .map_err(|_| "a positive number, like 0.05".to_string())
}

/// Parses the number of steps, 0 to [`MAX_STEPS`].
fn step_count(value: &str) -> Result<usize, String> {
    value
        .trim()
        .parse()
        .ok()
        .filter(|n| *n <= MAX_STEPS)
        .ok_or_else(|| format!("a whole number from 0 to {MAX_STEPS}"))
}

impl From<GoalArgs> for GoalOptions {
    fn from(args: GoalArgs) -> Self {
        Self {
            loss: args.loss,
            targets: args.target,
            task: args.task,
        }
    }
}

impl From<GradArgs> for GradOptions {
    fn from(args: GradArgs) -> Self {
        Self {
            input: args.compute.options(args.input),
            goal: args.goal.into(),
        }
    }
}

impl From<TrainArgs> for TrainOptions {
    fn from(args: TrainArgs) -> Self {
        Self {
            grad: GradOptions {
                input: args.compute.options(args.input),
                goal: args.goal.into(),
            },
            optimizer: args.optimizer,
            learning_rate: args.lr,
            train: args.train,
            steps: args.steps,
        }
    }
}

/// The long help of `grad`.
pub(super) fn grad_long_about() -> String {
    "\
Print the loss of a training goal and its gradients, as JSON.

The input options are those of trace. The goal is the first of:
  - --target NAME[,NAME…] (the pattern loss) or --task NAME (the task loss);
  - the scenario's `training` goal, unless --loss names the other loss;
  - the target `previous` for every head (--loss task alone is refused: it needs --task).

Output:
  loss                    the loss, a number
  grad.w_q, grad.w_k      ∂L/∂W_q, ∂L/∂W_k, d_model × d_model, as arrays of rows
  grad.w_v, grad.w_o      ∂L/∂W_v, ∂L/∂W_o; the pattern loss reads only the attention
                          weights, which W_v and W_o do not change, so for it these are
                          exactly zero and printed as zeros
  grad.embeddings         ∂L/∂E, seq_len × d_model, everything included: with a task, also
                          the path through the target built from E
  grad.source_embeddings  ∂L/∂E_src, src_len × d_model, with --source only
  heads                   one object per head: d_weights (∂L/∂A) and d_scores (∂L/∂S, the raw
                          scores before scaling), seq_len × n_keys; masked cells are 0"
        .to_string()
}

/// The long help of `train`.
pub(super) fn train_long_about() -> String {
    format!(
        "\
Train the chosen matrices towards a goal, and print the losses and the trained scenario as JSON.

The input options are those of trace, and the goal is chosen as for grad. Each other setting
comes from its option, else the scenario's `training` (its matrices only for a goal of the same
loss), else its default: adam, --lr 0.05, --steps {DEFAULT_STEPS}, --train w_q,w_k for a pattern and
w_q,w_k,w_v,w_o for a task.

Output:
  losses    N + 1 numbers for --steps N: losses[k] is the loss after k steps, and losses[0]
            the loss before training
  scenario  the trained scenario, every matrix at full precision and the settings in its
            `training` field: saved to a file, `trace --scenario` reproduces the trained
            model exactly, and `grad` and `train` take up its goal and settings"
    )
}

/// The examples of `grad`.
pub(super) fn grad_after_help(exit_status: &str) -> String {
    format!(
        "\
Examples:
  attention-lens grad --target previous --causal
  attention-lens grad --target self,first --heads 2
  attention-lens grad --task mean --source \"le chat\"

{exit_status}"
    )
}

/// The examples of `train`.
pub(super) fn train_after_help(exit_status: &str) -> String {
    format!(
        "\
Examples:
  attention-lens train --target previous --steps 200 > trained.json
  attention-lens train --task copy_first --optimizer sgd --lr 0.5 --train w_v,w_o
  attention-lens train --steps 50 | jq .scenario | attention-lens trace --scenario -

{exit_status}"
    )
}
