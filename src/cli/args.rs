//! Reading the command line with clap: the argument structs, their value parsers and help
//! texts, and what the parsed arguments mean as a [`Command`].

use super::error::usage_error;
use super::learn_args::{
    grad_after_help, grad_long_about, train_after_help, train_long_about, GradArgs, TrainArgs,
};
use super::{CliError, Command, Format, Source, TraceOptions, WorksheetOptions};
use crate::attention::{
    Config, ScaleMode, D_FF_RANGE, D_MODEL_RANGE, N_HEADS_RANGE, TEMPERATURE_RANGE,
};
use crate::formats::scenario::DEFAULT_SENTENCE;
use crate::formats::worksheet::{Picks, MAX_QUESTIONS};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};
use std::ffi::OsString;
use std::ops::RangeInclusive;

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
    /// How to print the trace.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// The options of `worksheet` as typed: the scenario's, and the questions'.
#[derive(Debug, Args)]
struct WorksheetArgs {
    #[command(flatten)]
    input: InputArgs,
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

/// What the scenario is and how the options change it, shared by `trace`, `worksheet`, `grad`
/// and `train`.
#[derive(Debug, Args)]
pub(super) struct InputArgs {
    /// Read a scenario JSON file; `-` reads standard input.
    #[arg(long, value_name = "FILE")]
    scenario: Option<String>,
    /// Use this sentence instead of the scenario's.
    #[arg(long, value_name = "TEXT")]
    sentence: Option<String>,
    #[arg(
        long,
        value_name = "N",
        help = format!(
            "Width of every token vector, {} to {}",
            D_MODEL_RANGE.start(),
            D_MODEL_RANGE.end()
        ),
        value_parser = whole_number(D_MODEL_RANGE),
        allow_negative_numbers = true
    )]
    d_model: Option<usize>,
    #[arg(
        long,
        value_name = "N",
        help = format!(
            "Number of heads, {} to {}; must divide d_model",
            N_HEADS_RANGE.start(),
            N_HEADS_RANGE.end()
        ),
        value_parser = whole_number(N_HEADS_RANGE),
        allow_negative_numbers = true
    )]
    heads: Option<usize>,
    /// Hide later tokens from earlier ones.
    #[arg(long, overrides_with = "no_causal")]
    causal: bool,
    /// Let every token see every other (undoes --causal).
    #[arg(long, overrides_with = "causal")]
    no_causal: bool,
    /// Add the sinusoidal positional encoding.
    #[arg(long, overrides_with = "no_positional")]
    positional: bool,
    /// Leave the positional encoding out (undoes --positional).
    #[arg(long, overrides_with = "positional")]
    no_positional: bool,
    /// What the scores are divided by before the softmax.
    #[arg(long, value_name = "MODE", value_parser = scale_parser())]
    scale: Option<ScaleMode>,
    #[arg(
        long,
        value_name = "T",
        help = format!(
            "Softmax temperature, {} to {}",
            TEMPERATURE_RANGE.start(),
            TEMPERATURE_RANGE.end()
        ),
        value_parser = number(TEMPERATURE_RANGE),
        allow_negative_numbers = true
    )]
    temperature: Option<f64>,
    /// Cross-attention: queries from the sentence, keys and values from this source sentence.
    #[arg(long, value_name = "TEXT")]
    source: Option<String>,
    /// Run the whole transformer block around attention (add & norm, feed-forward, add & norm).
    #[arg(long)]
    block: bool,
    /// Where the block's LayerNorms sit: post (the original Transformer) or pre (GPT-2); implies
    /// --block.
    #[arg(long, value_name = "NORM", value_parser = ["post", "pre"])]
    norm: Option<String>,
    #[arg(
        long = "d-ff",
        value_name = "N",
        help = format!(
            "Width of the feed-forward hidden layer, {} to {}; implies --block",
            D_FF_RANGE.start(),
            D_FF_RANGE.end()
        ),
        value_parser = whole_number(D_FF_RANGE),
        allow_negative_numbers = true
    )]
    d_ff: Option<usize>,
    /// The feed-forward activation: relu or gelu; implies --block.
    #[arg(long, value_name = "NAME", value_parser = ["relu", "gelu"])]
    activation: Option<String>,
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

/// Parses a whole number. The range only words the message: a number outside it is refused by
/// the model's own check, whose message names the option and the limit.
fn whole_number(
    range: RangeInclusive<usize>,
) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |value| {
        value
            .trim()
            .parse()
            .map_err(|_| format!("a whole number from {} to {}", range.start(), range.end()))
    }
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

/// Parses a number; as for [`whole_number`], the model checks the range.
fn number(
    range: RangeInclusive<f64>,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |value| {
        value.trim().parse().map_err(|_| {
            format!(
                "a number from {} to {}, like 0.5",
                range.start(),
                range.end()
            )
        })
    }
}

/// The scale modes by key, each with its menu label as help.
fn scale_parser() -> impl TypedValueParser<Value = ScaleMode> {
    PossibleValuesParser::new(ScaleMode::ALL.map(|mode| {
        let help = if mode == ScaleMode::default() {
            format!("{}, the default", crate::words::scale_mode_label(mode))
        } else {
            crate::words::scale_mode_label(mode).to_string()
        };
        PossibleValue::new(mode.key()).help(help)
    }))
    .try_map(|key| key.parse::<ScaleMode>())
}

impl From<TraceArgs> for TraceOptions {
    fn from(args: TraceArgs) -> Self {
        Self {
            format: args.format,
            ..args.input.into()
        }
    }
}

impl From<WorksheetArgs> for WorksheetOptions {
    fn from(args: WorksheetArgs) -> Self {
        Self {
            input: args.input.into(),
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

impl From<InputArgs> for TraceOptions {
    fn from(args: InputArgs) -> Self {
        // Of a switch and its `--no-` form, clap keeps only the one given last.
        let switch = |on: bool, off: bool| (on || off).then_some(on);
        Self {
            scenario: match args.scenario {
                None => Source::Default,
                Some(path) if path == "-" => Source::Stdin,
                Some(path) => Source::File(path),
            },
            sentence: args.sentence,
            d_model: args.d_model,
            n_heads: args.heads,
            causal: switch(args.causal, args.no_causal),
            positional: switch(args.positional, args.no_positional),
            scale: args.scale,
            temperature: args.temperature,
            source: args.source,
            block: args.block,
            norm: args.norm.and_then(|n| n.parse().ok()),
            d_ff: args.d_ff,
            activation: args.activation.and_then(|a| a.parse().ok()),
            format: Format::default(),
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
    use crate::cli::tests::{options, run_args};

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
