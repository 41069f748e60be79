//! The native `attention-lens` command: prints a complete trace as JSON, Markdown or CSV, a
//! worksheet, the gradients of a goal's loss, or a training run and the trained scenario.
//!
//! clap reads the arguments and writes the help; [`parse_args`] turns its result into a
//! [`Command`] (and any mistake into a one-line [`CliError`]), [`execute`] turns a command into
//! the text for standard output, and [`run_with`] does both and collects the exit code and error
//! line, so tests need neither a process nor a terminal. [`run`] only adds the real streams.

mod args;
mod error;
mod input_args;
mod learn;
mod learn_args;
mod trace;

pub use args::{parse_args, usage};
pub use error::CliError;
pub use learn_args::{DEFAULT_STEPS, MAX_STEPS};
pub use trace::apply_options;

use crate::attention::{LossKind, NamedTarget, OptimizerKind, ScaleMode, Task, Trainable};
use crate::formats::scenario::Scenario;
use args::Cli;
use clap::{CommandFactory, ValueEnum};
use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read, Write};

/// Exit code for success.
pub const EXIT_OK: i32 = 0;
/// Exit code when standard output cannot be written.
pub const EXIT_OUTPUT_FAILED: i32 = 1;
/// Exit code for anything wrong with the arguments or the scenario.
pub const EXIT_BAD_INPUT: i32 = 2;

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Print this help text.
    Help(String),
    /// Print the version.
    Version,
    /// Print the default scenario.
    Scenario,
    /// Print a trace.
    Trace(TraceOptions),
    /// Print a worksheet or its answer key.
    Worksheet(WorksheetOptions),
    /// Print the loss of a goal and its gradients.
    Grad(GradOptions),
    /// Train, and print the losses and the trained scenario.
    Train(TrainOptions),
}

/// The goal options of `grad` and `train`; `None` leaves the choice to the scenario or the
/// defaults (see `attention-lens help grad`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GoalOptions {
    /// `--loss`.
    pub loss: Option<LossKind>,
    /// `--target`: one name for every head, or one per head.
    pub targets: Option<Vec<NamedTarget>>,
    /// `--task`.
    pub task: Option<Task>,
}

/// The options of `grad`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GradOptions {
    /// The scenario and the options that change it, as for `trace` (its format is not used).
    pub input: TraceOptions,
    /// What the loss measures.
    pub goal: GoalOptions,
}

/// The options of `train`; `None` keeps the scenario's setting, or the default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrainOptions {
    /// The scenario, the options that change it and the goal, as for `grad`.
    pub grad: GradOptions,
    /// `--optimizer`.
    pub optimizer: Option<OptimizerKind>,
    /// `--lr`.
    pub learning_rate: Option<f64>,
    /// `--train`: the matrices that learn.
    pub train: Option<Vec<Trainable>>,
    /// `--steps`: how many updates.
    pub steps: usize,
}

/// The options of `worksheet`.
#[derive(Debug, Clone, PartialEq)]
pub struct WorksheetOptions {
    /// The scenario and the options that change it, as for `trace` (its format is not used).
    pub input: TraceOptions,
    /// Which questions.
    pub picks: crate::formats::worksheet::Picks,
    /// Print the answer key instead of the blank sheet.
    pub answers: bool,
}

/// The options of `trace`; `None` keeps the scenario's value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TraceOptions {
    /// Where the scenario comes from.
    pub scenario: Source,
    /// A sentence replacing the scenario's.
    pub sentence: Option<String>,
    /// A new width.
    pub d_model: Option<usize>,
    /// A new number of heads.
    pub n_heads: Option<usize>,
    /// Causal mask on or off.
    pub causal: Option<bool>,
    /// Positional encoding on or off.
    pub positional: Option<bool>,
    /// A new scale mode.
    pub scale: Option<ScaleMode>,
    /// A new softmax temperature.
    pub temperature: Option<f64>,
    /// A source sentence for cross-attention.
    pub source: Option<String>,
    /// Show the transformer block around attention.
    pub block: bool,
    /// Where the block's norms sit (implies the block).
    pub norm: Option<crate::attention::Norm>,
    /// The block's hidden width (implies the block).
    pub d_ff: Option<usize>,
    /// The block's activation (implies the block).
    pub activation: Option<crate::attention::Activation>,
    /// The block's norm type (implies the block).
    pub norm_type: Option<crate::attention::NormType>,
    /// Rotary positions on or off (`--rope`, `--no-rope`).
    pub rope: Option<bool>,
    /// `--rope-theta` (implies rotary positions).
    pub rope_theta: Option<f64>,
    /// `--rope-pairing` (implies rotary positions).
    pub rope_pairing: Option<crate::attention::Pairing>,
    /// `--kv-heads`: key/value heads shared by groups of query heads.
    pub kv_heads: Option<usize>,
    /// `--window`: the sliding window under the causal mask.
    pub window: Option<usize>,
    /// How to print the trace.
    pub format: Format,
    /// `--prefill`: decode the sentence from a KV cache after this many tokens.
    pub prefill: Option<usize>,
    /// `--tile`: tile each head's softmax over blocks of this many keys.
    pub tile: Option<usize>,
}

/// Where a scenario comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Source {
    /// [`Scenario::default`].
    #[default]
    Default,
    /// Standard input (`--scenario -`).
    Stdin,
    /// A file path.
    File(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => f.write_str("the default scenario"),
            Self::Stdin => f.write_str("standard input"),
            Self::File(path) => f.write_str(path),
        }
    }
}

/// How `trace` prints; the doc lines are the help of each choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    /// Every matrix as JSON, masked entries as null.
    #[default]
    Json,
    /// A worked example for a handout: formulas, explanations and tables.
    #[value(alias = "md")]
    Markdown,
    /// A tidy table with one value per line.
    Csv,
}

/// Carries out `command` and returns what goes to standard output. `stdin` is read only for
/// `--scenario -`.
pub fn execute(command: &Command, stdin: &mut dyn Read) -> Result<String, CliError> {
    match command {
        Command::Help(text) => Ok(text.clone()),
        Command::Version => Ok(Cli::command().render_version().to_string()),
        Command::Scenario => Ok(Scenario::default().to_json() + "\n"),
        Command::Trace(options) => trace::trace(options, stdin),
        Command::Grad(options) => learn::grad(options, stdin),
        Command::Train(options) => learn::train(options, stdin),
        Command::Worksheet(options) => learn::worksheet(options, stdin),
    }
}

/// What one run prints and returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Text for standard output.
    pub stdout: String,
    /// Text for standard error: empty, or one line starting with `error: `.
    pub stderr: String,
    /// The exit code.
    pub code: i32,
}

/// Runs the command with `args` (without the program name), reading `stdin` only for
/// `--scenario -`, and returns what to print.
pub fn run_with<I, T>(args: I, stdin: &mut dyn Read) -> Outcome
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match parse_args(args).and_then(|command| execute(&command, stdin)) {
        Ok(stdout) => Outcome {
            stdout,
            stderr: String::new(),
            code: EXIT_OK,
        },
        Err(error) => Outcome {
            stdout: String::new(),
            stderr: format!("error: {}\n", one_line(&error.to_string())),
            code: error.exit_code(),
        },
    }
}

/// `text` with line breaks turned into spaces, so an error is always one line.
fn one_line(text: &str) -> String {
    text.split(['\n', '\r'])
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs the command with `args` (without the program name) and returns the exit code.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let outcome = run_with(args, &mut io::stdin().lock());
    if !outcome.stderr.is_empty() {
        // Nothing sensible is left to do when standard error itself cannot be written.
        let _ = io::stderr().lock().write_all(outcome.stderr.as_bytes());
    }
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(outcome.stdout.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => outcome.code,
        // A reader that stops early, like `head`, is not an error of ours.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => outcome.code,
        Err(e) => {
            let _ = writeln!(io::stderr().lock(), "error: cannot write the output: {e}");
            EXIT_OUTPUT_FAILED
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options `trace` reads from `text`.
    pub(super) fn options(text: &[&str]) -> TraceOptions {
        let mut all = vec!["trace"];
        all.extend_from_slice(text);
        match parse_args(all) {
            Ok(Command::Trace(options)) => options,
            other => panic!("{text:?} gave {other:?}"),
        }
    }

    /// What a run with `text` and an empty standard input prints and returns.
    pub(super) fn run_args(text: &[&str]) -> Outcome {
        run_with(text, &mut io::empty())
    }

    #[test]
    fn error_text_is_always_one_line() {
        assert_eq!(one_line("a\nb\r\nc"), "a b c");
    }
}
