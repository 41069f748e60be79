//! Reading the command line with clap: the argument structs, their value parsers and help
//! texts, and what the parsed arguments mean as a [`Command`].

use super::error::usage_error;
use super::input_args::{ComputeArgs, InputArgs};
use super::learn_args::{
    grad_after_help, grad_long_about, train_after_help, train_long_about, GradArgs, TrainArgs,
};
use super::{CliError, Command, Format, TraceOptions, WorksheetOptions};
use crate::attention::Config;
use crate::formats::scenario::DEFAULT_SENTENCE;
use crate::formats::worksheet::{Picks, MAX_QUESTIONS};
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};
use std::ffi::OsString;

const EXIT_STATUS: &str = "\
Exit status: 0 on success; 2 when an argument or the scenario is wrong, with one line
starting with `error: ` on standard error; 1 when the output cannot be written.";

/// The command line as clap reads it.
#[derive(Debug, Parser)]
#[command(
    name = "attention-lens",
    version,
    about = "Multi-head self-attention, every stage with real numbers.",
    after_help = main_after_help(),
    arg_required_else_help = true,
    // The last of a repeated option wins, so a flag can be overridden by appending it.
    args_override_self = true
)]
pub(super) struct Cli {
    #[command(subcommand)]
    command: CliCommand,
}

#[derive(Debug, Subcommand)]
enum CliCommand {
    /// Print every intermediate matrix of one attention layer.
    #[command(long_about = trace_long_about(), after_help = trace_after_help())]
    Trace(TraceArgs),
    /// Print the default scenario as JSON, ready to edit.
    Scenario,
    /// Print a Markdown worksheet of questions on the scenario, or its answer key.
    Worksheet(WorksheetArgs),
    /// Print the loss of a training goal and its gradients, as JSON.
    #[command(long_about = grad_long_about(), after_help = grad_after_help(EXIT_STATUS))]
    Grad(GradArgs),
    /// Train the chosen matrices towards a goal; print the losses and the trained scenario.
    #[command(long_about = train_long_about(), after_help = train_after_help(EXIT_STATUS))]
    Train(TrainArgs),
}

/// The options of `trace` as typed; [`TraceOptions`] is what they mean.
#[derive(Debug, Args)]
struct TraceArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    compute: ComputeArgs,
    /// How to print the trace.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// The options of `worksheet` as typed: the scenario's, and the questions'.
#[derive(Debug, Args)]
struct WorksheetArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    compute: ComputeArgs,
    /// The seed that picks the questions: the same seed gives the same sheet.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    #[arg(
        long,
        value_name = "K",
        default_value_t = 10,
        help = format!("How many questions, 1 to {MAX_QUESTIONS}, spread over the stages"),
        value_parser = question_count
    )]
    questions: usize,
    /// Ask the app's quiz questions instead: one per stage, as `quiz=1&qn=N` does.
    #[arg(long, value_name = "N", conflicts_with_all = ["seed", "questions"], value_parser = clap::value_parser!(u64).range(1..))]
    quiz_set: Option<u64>,
    /// Print the answer key: each answer with its worked arithmetic.
    #[arg(long)]
    answers: bool,
}

fn main_after_help() -> String {
    format!(
        "\
Examples:
  attention-lens trace --sentence \"the cat sat\" --causal --format markdown > handout.md
  attention-lens scenario > mine.json
  attention-lens trace --scenario mine.json --heads 1 --format csv
  attention-lens train --target previous --steps 200 > trained.json

Run `attention-lens help trace` for every option of trace, and likewise for the others.

{EXIT_STATUS}"
    )
}

fn trace_long_about() -> String {
    let config = Config::default();
    format!(
        "\
Print every intermediate matrix of one attention layer.

Without --scenario, trace starts from the default scenario ({DEFAULT_SENTENCE:?}, d_model {d}, {h} heads).
Options override the scenario's fields:
  - a --d-model that changes the width replaces every matrix that no longer fits
    (embeddings, w_q, w_k, w_v, w_o) by its default for the new width;
  - a --sentence keeps the embedding row of each token that was in the old sentence and
    gives every new token its toy embedding.",
        d = config.d_model,
        h = config.n_heads,
    )
}

fn trace_after_help() -> String {
    format!(
        "\
Examples:
  attention-lens trace --sentence \"the cat sat\" --causal --format markdown > handout.md
  attention-lens trace --scenario mine.json --heads 1 --format csv
  attention-lens scenario | attention-lens trace --scenario - --heads=4

{EXIT_STATUS}"
    )
}

/// Parses the number of questions, which no model checks: 1 to [`MAX_QUESTIONS`].
fn question_count(value: &str) -> Result<usize, String> {
    value
        .trim()
        .parse()
        .ok()
        .filter(|n| (1..=MAX_QUESTIONS).contains(n))
        .ok_or_else(|| format!("a whole number from 1 to {MAX_QUESTIONS}"))
}

impl From<TraceArgs> for TraceOptions {
    fn from(args: TraceArgs) -> Self {
        Self {
            format: args.format,
            ..args.compute.options(args.input)
        }
    }
}

impl From<WorksheetArgs> for WorksheetOptions {
    fn from(args: WorksheetArgs) -> Self {
        Self {
            input: args.compute.options(args.input),
            picks: match args.quiz_set {
                Some(set) => Picks::QuizSet(set),
                None => Picks::Spread {
                    seed: args.seed,
                    count: args.questions,
                },
            },
            answers: args.answers,
        }
    }
}

/// The top-level help text.
pub fn usage() -> String {
    Cli::command().render_help().to_string()
}

/// Reads the command line, `args` without the program name.
pub fn parse_args<I, T>(args: I) -> Result<Command, CliError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let argv =
        std::iter::once(OsString::from("attention-lens")).chain(args.into_iter().map(Into::into));
    match Cli::try_parse_from(argv) {
        Ok(cli) => Ok(match cli.command {
            CliCommand::Trace(args) => Command::Trace(args.into()),
            CliCommand::Scenario => Command::Scenario,
            CliCommand::Worksheet(args) => Command::Worksheet(args.into()),
            CliCommand::Grad(args) => Command::Grad(args.into()),
            CliCommand::Train(args) => Command::Train(args.into()),
        }),
        Err(error) => match error.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                Ok(Command::Help(error.render().to_string()))
            }
            ErrorKind::DisplayVersion => Ok(Command::Version),
            _ => Err(usage_error(&error)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::ScaleMode;
    use crate::cli::tests::{options, run_args};
    use crate::cli::Source;

    fn help(text: &[&str]) -> String {
        match parse_args(text) {
            Ok(Command::Help(help)) => help,
            other => panic!("{text:?} gave {other:?}"),
        }
    }

    #[test]
    fn no_arguments_and_help_print_the_usage() {
        for text in [&[][..], &["help"], &["--help"], &["-h"]] {
            let help = help(text);
            assert!(help.contains("Usage: attention-lens <COMMAND>"), "{text:?}");
            let listed = |name: &str, what: &str| {
                help.lines()
                    .any(|l| l.trim_start().starts_with(name) && l.contains(what))
            };
            assert!(listed("trace ", "Print every"), "{text:?}");
            assert!(listed("worksheet ", "worksheet of questions"), "{text:?}");
            assert!(help.contains("Exit status: 0 on success"), "{text:?}");
            assert_eq!(help, usage(), "{text:?}");
        }
        for text in [&["trace", "--help"][..], &["help", "trace"]] {
            let help = help(text);
            assert!(help.contains("Usage: attention-lens trace [OPTIONS]"));
            assert!(help.contains("--temperature <T>\n          Softmax temperature, 0.01 to 100"));
            assert!(help.contains("--heads <N>\n          Number of heads, 1 to 8; must divide"));
            assert!(help.contains("- sqrt_head_dim: ÷ √d_k (correct), the default"));
            assert!(help.contains("- sqrt_seq_len:"));
            assert!(help.contains("keeps the embedding row of each token"));
        }
        let summary = help(&["trace", "-h"]);
        assert!(summary.contains("[possible values: sqrt_head_dim, sqrt_seq_len, none]"));
        assert!(summary.contains("[default: json] [possible values: json, markdown, csv]"));
    }

    #[test]
    fn the_version_is_the_package_version() {
        for text in [["--version"], ["-V"]] {
            assert_eq!(parse_args(text), Ok(Command::Version));
        }
        let out = run_args(&["--version"]);
        assert_eq!(
            out.stdout,
            format!("attention-lens {}\n", env!("CARGO_PKG_VERSION"))
        );
    }

    #[test]
    fn options_take_values_after_a_space_or_an_equals_sign() {
        let o = options(&[
            "--heads",
            "4",
            "--d-model=8",
            "--causal",
            "--scale",
            "none",
            "--temperature=0.5",
            "--format",
            "csv",
            "--sentence=--dashes--",
            "--scenario",
            "-",
        ]);
        assert_eq!(o.n_heads, Some(4));
        assert_eq!(o.d_model, Some(8));
        assert_eq!(o.causal, Some(true));
        assert_eq!(o.positional, None);
        assert_eq!(o.scale, Some(ScaleMode::None));
        assert_eq!(o.temperature, Some(0.5));
        assert_eq!(o.format, Format::Csv);
        assert_eq!(o.sentence.as_deref(), Some("--dashes--"));
        assert_eq!(o.scenario, Source::Stdin);
    }

    #[test]
    fn the_last_of_a_repeated_option_wins() {
        let o = options(&["--causal", "--no-causal", "--heads", "1", "--heads", "2"]);
        assert_eq!(o.causal, Some(false));
        assert_eq!(o.n_heads, Some(2));
        let o = options(&["--no-positional", "--positional", "--positional"]);
        assert_eq!(o.positional, Some(true));
        let o = options(&[
            "--format",
            "csv",
            "--format=md",
            "--scale",
            "none",
            "--scale=sqrt_seq_len",
        ]);
        assert_eq!(o.format, Format::Markdown);
        assert_eq!(o.scale, Some(ScaleMode::SqrtSeqLen));
    }

    #[test]
    fn options_not_given_keep_the_scenario_values() {
        assert_eq!(options(&[]), TraceOptions::default());
    }
}
