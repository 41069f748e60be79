//! The native `attention-lens` command: prints a complete trace as JSON, Markdown or CSV.
//!
//! clap reads the arguments and writes the help; [`parse_args`] turns its result into a
//! [`Command`] (and any mistake into a one-line [`CliError`]), [`execute`] turns a command into
//! the text for standard output, and [`run_with`] does both and collects the exit code and error
//! line, so tests need neither a process nor a terminal. [`run`] only adds the real streams.

use crate::attention::{
    forward, tokenize, toy_embedding, AttentionError, Config, ScaleMode, D_MODEL_RANGE,
    N_HEADS_RANGE, TEMPERATURE_RANGE,
};
use crate::formats::report::{trace_csv, trace_json_pretty, trace_markdown};
use crate::formats::scenario::{Scenario, ScenarioError, DEFAULT_SENTENCE};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use std::error::Error as _;
use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read, Write};
use std::ops::RangeInclusive;

/// Exit code for success.
pub const EXIT_OK: i32 = 0;
/// Exit code when standard output cannot be written.
pub const EXIT_OUTPUT_FAILED: i32 = 1;
/// Exit code for anything wrong with the arguments or the scenario.
pub const EXIT_BAD_INPUT: i32 = 2;

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
struct Cli {
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
}

/// The options of `trace` as typed; [`TraceOptions`] is what they mean.
#[derive(Debug, Args)]
struct TraceArgs {
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
    /// How to print the trace.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

fn main_after_help() -> String {
    format!(
        "\
Examples:
  attention-lens trace --sentence \"the cat sat\" --causal --format markdown > handout.md
  attention-lens scenario > mine.json
  attention-lens trace --scenario mine.json --heads 1 --format csv

Run `attention-lens help trace` for every option of trace.

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
    /// How to print the trace.
    pub format: Format,
}

impl From<TraceArgs> for TraceOptions {
    fn from(args: TraceArgs) -> Self {
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
            format: args.format,
        }
    }
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

/// Everything that stops the command, each a one-line message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CliError {
    /// The first argument is not a command.
    #[error("unknown command `{0}`: use `trace`, `scenario` or `help`.")]
    UnknownCommand(String),
    /// An option this command does not have.
    #[error("unknown option `{0}`: run `attention-lens help trace` to see the options.")]
    UnknownOption(String),
    /// An option this command does not have, close to one it has.
    #[error("unknown option `{option}`: did you mean `{suggestion}`?")]
    MisspeltOption { option: String, suggestion: String },
    /// An argument that is not an option.
    #[error(
        "unexpected argument `{0}`: options start with `--`, and a sentence goes after \
         `--sentence`."
    )]
    UnexpectedArgument(String),
    /// An option given without its value.
    #[error("`{0}` needs a value after it.")]
    MissingValue(String),
    /// A switch given a value, like `--causal=yes`.
    #[error("`{0}` is a switch and takes no value.")]
    UnexpectedValue(String),
    /// A value that is not a number of the right kind.
    #[error("`{flag}` needs {expected}, but got `{value}`.")]
    NotANumber {
        flag: String,
        value: String,
        expected: String,
    },
    /// A value that is not one of the choices.
    #[error("`{flag}` must be {choices}, not `{value}`.")]
    BadChoice {
        flag: String,
        value: String,
        choices: String,
    },
    /// Any other mistake in the arguments, in clap's words.
    #[error("{0}")]
    Usage(String),
    /// The scenario could not be read.
    #[error("cannot read the scenario from {input}: {reason}.")]
    Unreadable { input: Source, reason: String },
    /// The scenario is not valid.
    #[error("{input}: {error}")]
    Scenario { input: Source, error: ScenarioError },
    /// An option's value makes no valid attention layer.
    #[error("`{flag} {value}`: {error}")]
    Option {
        flag: &'static str,
        value: String,
        error: AttentionError,
    },
    /// Anything else the core refuses.
    #[error(transparent)]
    Attention(AttentionError),
}

impl CliError {
    /// The exit code for this error.
    pub fn exit_code(&self) -> i32 {
        EXIT_BAD_INPUT
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

/// clap's error as one line: clap prints usage and tips on further lines, but the command
/// promises a single `error: ` line that says what to fix.
fn usage_error(error: &clap::Error) -> CliError {
    let text = |kind| match error.get(kind) {
        Some(ContextValue::String(text)) => Some(text.clone()),
        _ => None,
    };
    // clap names an option with its value placeholder, `--heads <N>`.
    let flag = text(ContextKind::InvalidArg).map(|arg| option_name(&arg));
    let value = text(ContextKind::InvalidValue);
    if let Some(command) = text(ContextKind::InvalidSubcommand) {
        return CliError::UnknownCommand(command);
    }
    match (error.kind(), flag, value) {
        (ErrorKind::UnknownArgument, Some(arg), _) if arg.starts_with('-') => {
            match text(ContextKind::SuggestedArg) {
                Some(suggestion) => CliError::MisspeltOption {
                    option: arg,
                    suggestion,
                },
                None => CliError::UnknownOption(arg),
            }
        }
        (ErrorKind::UnknownArgument, Some(arg), _) => CliError::UnexpectedArgument(arg),
        (ErrorKind::InvalidValue, Some(flag), Some(value)) if value.is_empty() => {
            CliError::MissingValue(flag)
        }
        (ErrorKind::InvalidValue, Some(flag), Some(value)) => CliError::BadChoice {
            flag,
            value,
            choices: match error.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(choices)) => or_list(choices),
                _ => "something else".to_string(),
            },
        },
        (ErrorKind::ValueValidation, Some(flag), Some(value)) => CliError::NotANumber {
            flag,
            value,
            expected: error
                .source()
                .map_or_else(|| "another value".to_string(), ToString::to_string),
        },
        (ErrorKind::TooManyValues, Some(flag), _) => CliError::UnexpectedValue(flag),
        _ => {
            let rendered = error.render().to_string();
            let first = rendered.lines().next().unwrap_or_default();
            CliError::Usage(first.strip_prefix("error: ").unwrap_or(first).to_string())
        }
    }
}

/// The option part of `--name=value` or `--name <VALUE>`.
fn option_name(arg: &str) -> String {
    arg.split(['=', ' ']).next().unwrap_or(arg).to_string()
}

/// `a, b or c`.
fn or_list(words: &[String]) -> String {
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => words.concat(),
    }
}

/// Carries out `command` and returns what goes to standard output. `stdin` is read only for
/// `--scenario -`.
pub fn execute(command: &Command, stdin: &mut dyn Read) -> Result<String, CliError> {
    match command {
        Command::Help(text) => Ok(text.clone()),
        Command::Version => Ok(Cli::command().render_version().to_string()),
        Command::Scenario => Ok(Scenario::default().to_json() + "\n"),
        Command::Trace(options) => trace(options, stdin),
    }
}

fn trace(options: &TraceOptions, stdin: &mut dyn Read) -> Result<String, CliError> {
    let mut scenario = match &options.scenario {
        Source::Default => Scenario::default(),
        source => {
            let text = read_source(source, stdin)?;
            Scenario::from_json(&text).map_err(|error| CliError::Scenario {
                input: source.clone(),
                error,
            })?
        }
    };
    let width_changed = options.d_model.is_some_and(|d| d != scenario.d_model);
    apply_options(&mut scenario, options)?;
    let inputs = scenario
        .to_inputs()
        .map_err(|error| blame(error, options, width_changed))?;
    let trace = forward(&inputs).map_err(CliError::Attention)?;
    Ok(match options.format {
        Format::Json => trace_json_pretty(&trace),
        Format::Markdown => trace_markdown(&trace),
        Format::Csv => trace_csv(&trace),
    })
}

fn read_source(source: &Source, stdin: &mut dyn Read) -> Result<String, CliError> {
    let result = match source {
        Source::Stdin => {
            let mut text = String::new();
            stdin.read_to_string(&mut text).map(|_| text)
        }
        Source::File(path) => std::fs::read_to_string(path),
        Source::Default => Ok(Scenario::default().to_json()),
    };
    result.map_err(|e| CliError::Unreadable {
        input: source.clone(),
        reason: match e.kind() {
            io::ErrorKind::NotFound => "there is no such file".to_string(),
            io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            io::ErrorKind::IsADirectory => "it is a directory, not a file".to_string(),
            io::ErrorKind::InvalidData => "it is not UTF-8 text".to_string(),
            _ => e.to_string(),
        },
    })
}

/// Applies the options to `scenario`, following the rules in the long help of `trace`.
pub fn apply_options(scenario: &mut Scenario, options: &TraceOptions) -> Result<(), CliError> {
    if let Some(d) = options.d_model.filter(|d| *d != scenario.d_model) {
        scenario.d_model = d;
        for w in [
            &mut scenario.w_q,
            &mut scenario.w_k,
            &mut scenario.w_v,
            &mut scenario.w_o,
        ] {
            if w.as_ref().is_some_and(|rows| !fits(rows, Some(d), d)) {
                *w = None;
            }
        }
        if let Some(rows) = &scenario.embeddings {
            if !fits(rows, None, d) {
                scenario.embeddings = None;
            }
        }
    }
    if let Some(n) = options.n_heads {
        scenario.n_heads = n;
    }
    if let Some(causal) = options.causal {
        scenario.causal = causal;
    }
    if let Some(positional) = options.positional {
        scenario.positional_encoding = positional;
    }
    if let Some(scale) = options.scale {
        scenario.scale = scale;
    }
    if let Some(t) = options.temperature {
        scenario.temperature = t;
    }
    if let Some(sentence) = &options.sentence {
        let tokens = tokenize(sentence).map_err(|error| CliError::Option {
            flag: "--sentence",
            value: format!("{sentence:?}"),
            error,
        })?;
        scenario.embeddings = carry_embeddings(scenario, &tokens);
        scenario.sentence = sentence.clone();
    }
    Ok(())
}

/// Whether `rows` has `n_rows` rows (any number when `None`) of `width` numbers each.
fn fits(rows: &[Vec<f64>], n_rows: Option<usize>, width: usize) -> bool {
    n_rows.is_none_or(|n| rows.len() == n) && rows.iter().all(|r| r.len() == width)
}

/// The embeddings for a new sentence of `tokens`: a row is a token's vector, so the rows of
/// tokens that were already in the scenario's sentence come along and new tokens get their toy
/// embedding. A matrix that did not match the old sentence is left as it is, for
/// [`Scenario::to_inputs`] to report.
fn carry_embeddings(scenario: &Scenario, tokens: &[String]) -> Option<Vec<Vec<f64>>> {
    let rows = scenario.embeddings.as_ref()?;
    let Ok(old_tokens) = tokenize(&scenario.sentence) else {
        return None;
    };
    if !fits(rows, Some(old_tokens.len()), scenario.d_model) || old_tokens == tokens {
        return Some(rows.clone());
    }
    let mut carried = false;
    let new_rows = tokens
        .iter()
        .map(|token| match old_tokens.iter().position(|t| t == token) {
            Some(i) => {
                carried = true;
                rows[i].clone()
            }
            None => toy_embedding(token, scenario.d_model),
        })
        .collect();
    carried.then_some(new_rows)
}

/// Names the option that caused a scenario error, when an option set that field; a head count
/// that does not divide the width is blamed on `--d-model` only if it changed the width.
fn blame(error: ScenarioError, options: &TraceOptions, width_changed: bool) -> CliError {
    if let ScenarioError::Invalid { field, error } = &error {
        let culprit = match *field {
            "d_model" => options.d_model.map(|d| ("--d-model", d.to_string())),
            "temperature" => options
                .temperature
                .map(|t| ("--temperature", t.to_string())),
            "n_heads" => options
                .n_heads
                .map(|n| ("--heads", n.to_string()))
                .or_else(|| {
                    options
                        .d_model
                        .filter(|_| width_changed)
                        .map(|d| ("--d-model", d.to_string()))
                }),
            _ => None,
        };
        if let Some((flag, value)) = culprit {
            return CliError::Option {
                flag,
                value,
                error: error.clone(),
            };
        }
    }
    CliError::Scenario {
        input: options.scenario.clone(),
        error,
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

    fn options(text: &[&str]) -> TraceOptions {
        let mut all = vec!["trace"];
        all.extend_from_slice(text);
        match parse_args(all) {
            Ok(Command::Trace(options)) => options,
            other => panic!("{text:?} gave {other:?}"),
        }
    }

    fn run_args(text: &[&str]) -> Outcome {
        run_with(text, &mut io::empty())
    }

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
            assert!(help.contains("trace     Print every"), "{text:?}");
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

    #[test]
    fn mistakes_in_the_arguments_are_named() {
        let cases: [(&[&str], CliError); 10] = [
            (
                &["trace", "--bogus"],
                CliError::UnknownOption("--bogus".into()),
            ),
            (
                &["trace", "--bogus=1"],
                CliError::UnknownOption("--bogus".into()),
            ),
            (
                &["trace", "--heads"],
                CliError::MissingValue("--heads".into()),
            ),
            (
                &["trace", "--heads", "--causal"],
                CliError::MissingValue("--heads".into()),
            ),
            (
                &["trace", "--causal=yes"],
                CliError::UnexpectedValue("--causal".into()),
            ),
            (
                &["trace", "--head", "2"],
                CliError::MisspeltOption {
                    option: "--head".into(),
                    suggestion: "--heads".into(),
                },
            ),
            (
                &["trace", "words"],
                CliError::UnexpectedArgument("words".into()),
            ),
            (&["trace", "-x"], CliError::UnknownOption("-x".into())),
            (&["draw"], CliError::UnknownCommand("draw".into())),
            (&["help", "draw"], CliError::UnknownCommand("draw".into())),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_args(text), Err(expected), "{text:?}");
        }
        let err = parse_args(["trace", "--heads", "two"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`--heads` needs a whole number from 1 to 8, but got `two`."
        );
        let err = parse_args(["trace", "--scale", "sqrt"]).unwrap_err();
        assert!(err
            .to_string()
            .contains("sqrt_head_dim, sqrt_seq_len or none"));
        let err = parse_args(["trace", "--format", "xml"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`--format` must be json, markdown or csv, not `xml`."
        );
        assert!(parse_args(["scenario", "--pretty"]).is_err());
    }

    #[test]
    fn every_mistake_in_the_arguments_is_one_error_line() {
        for text in [
            &["trace", "--bogus"][..],
            &["trace", "--heads"],
            &["trace", "--format", "xml"],
            &["trace", "--temperature", "hot"],
            &["scenario", "extra"],
            &["draw"],
        ] {
            let out = run_args(text);
            assert_eq!(out.code, EXIT_BAD_INPUT, "{text:?}");
            assert_eq!(out.stdout, "", "{text:?}");
            assert!(
                out.stderr.starts_with("error: "),
                "{text:?}: {}",
                out.stderr
            );
            assert_eq!(out.stderr.lines().count(), 1, "{text:?}: {}", out.stderr);
        }
    }

    #[cfg(unix)]
    #[test]
    fn an_argument_that_is_not_utf8_is_refused_in_one_line() {
        use std::os::unix::ffi::OsStringExt;
        let bytes = OsString::from_vec(vec![b't', 0xff]);
        let out = run_with(
            [OsString::from("trace"), OsString::from("--sentence"), bytes],
            &mut io::empty(),
        );
        assert_eq!(out.code, EXIT_BAD_INPUT);
        assert!(out.stderr.contains("UTF-8"), "{}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1);
    }

    #[test]
    fn a_new_width_replaces_only_the_matrices_that_no_longer_fit() {
        // A hand-made 8×8 W_q already fits the new width and stays.
        let mut scenario = Scenario {
            w_q: Some(vec![vec![0.5; 8]; 8]),
            ..Scenario::default()
        };
        apply_options(&mut scenario, &options(&["--d-model", "8"])).unwrap();
        assert_eq!(scenario.d_model, 8);
        assert_eq!(scenario.w_q, Some(vec![vec![0.5; 8]; 8]));
        assert_eq!((scenario.w_k.clone(), scenario.w_o.clone()), (None, None));
        assert_eq!(scenario.embeddings, None);
        assert_eq!(scenario.to_inputs().unwrap().embeddings.shape(), (3, 8));
    }

    #[test]
    fn the_same_width_keeps_every_matrix_even_a_wrong_one() {
        let mut scenario = Scenario {
            w_v: Some(vec![vec![1.0; 3]; 3]),
            ..Scenario::default()
        };
        apply_options(&mut scenario, &options(&["--d-model", "4"])).unwrap();
        assert_eq!(scenario.w_v, Some(vec![vec![1.0; 3]; 3]));
        assert!(scenario.to_inputs().is_err());
    }

    #[test]
    fn a_new_sentence_keeps_the_rows_of_tokens_it_shares_with_the_old_one() {
        let mut scenario = Scenario::default();
        let hungry = vec![9.0, 8.0, 7.0, 6.0];
        scenario.embeddings.as_mut().unwrap()[2] = hungry.clone();
        apply_options(
            &mut scenario,
            &options(&["--sentence", "you are hungry too"]),
        )
        .unwrap();
        let rows = scenario.embeddings.clone().unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[2], hungry);
        assert_eq!(rows[0], toy_embedding("you", 4));
        assert_eq!(scenario.to_inputs().unwrap().tokens.len(), 4);
    }

    #[test]
    fn a_new_sentence_of_the_same_length_does_not_inherit_other_words_rows() {
        let mut scenario = Scenario::default();
        apply_options(&mut scenario, &options(&["--sentence", "we were cold"])).unwrap();
        // No token is shared, so every row is a toy embedding and none is written out.
        assert_eq!(scenario.embeddings, None);
    }

    #[test]
    fn errors_caused_by_an_option_name_the_option() {
        let out = run_args(&["trace", "--heads", "3"]);
        assert_eq!(out.code, EXIT_BAD_INPUT);
        assert_eq!(
            out.stderr,
            "error: `--heads 3`: 3 heads cannot split d_model = 4 into equal parts: the number \
             of heads must divide d_model.\n"
        );
        let out = run_args(&["trace", "--d-model", "5"]);
        assert!(
            out.stderr.starts_with("error: `--d-model 5`: 2 heads"),
            "{}",
            out.stderr
        );
        let json = r#"{"version": 1, "sentence": "a", "n_heads": 3}"#;
        let out = run_with(
            ["trace", "--scenario", "-", "--d-model", "4"],
            &mut json.as_bytes(),
        );
        assert!(
            out.stderr
                .starts_with("error: standard input: Field `n_heads`: 3 heads"),
            "{}",
            out.stderr
        );
        let out = run_args(&["trace", "--temperature", "0"]);
        assert!(out
            .stderr
            .starts_with("error: `--temperature 0`: The temperature is 0"));
        let out = run_args(&["trace", "--sentence", " "]);
        assert!(out
            .stderr
            .starts_with("error: `--sentence \" \"`: Type at least one word"));
    }

    #[test]
    fn a_scenario_on_standard_input_is_read() {
        let json = r#"{"version": 1, "sentence": "a b", "causal": true}"#;
        let out = run_with(["trace", "--scenario", "-"], &mut json.as_bytes());
        assert_eq!(out.code, EXIT_OK, "{}", out.stderr);
        let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(value["tokens"], serde_json::json!(["a", "b"]));
        assert_eq!(value["config"]["causal"], true);

        let out = run_with(["trace", "--scenario", "-"], &mut "{".as_bytes());
        assert!(out
            .stderr
            .starts_with("error: standard input: This is not a valid scenario"));
        assert_eq!(out.stderr.lines().count(), 1);
    }

    #[test]
    fn the_default_trace_uses_the_default_configuration() {
        let out = run_args(&["trace"]);
        let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(value["config"]["d_model"], Config::default().d_model);
        assert_eq!(out.stderr, "");
    }

    #[test]
    fn error_text_is_always_one_line() {
        assert_eq!(one_line("a\nb\r\nc"), "a b c");
    }
}
