//! The native `attention-lens` command: prints a complete trace as JSON, Markdown or CSV.
//!
//! [`parse_args`] turns the arguments into a [`Command`], [`execute`] turns a command into the
//! text for standard output, and [`run_with`] does both and collects the exit code and error line,
//! so tests need neither a process nor a terminal. [`run`] only adds the real streams.

use crate::attention::{
    forward, tokenize, toy_embedding, AttentionError, Config, ScaleMode, D_MODEL_RANGE,
    N_HEADS_RANGE, TEMPERATURE_RANGE,
};
use crate::formats::report::{trace_csv, trace_json_pretty, trace_markdown};
use crate::formats::scenario::{Scenario, ScenarioError, DEFAULT_SENTENCE};
use std::fmt;
use std::io::{self, Read, Write};

/// Exit code for success.
pub const EXIT_OK: i32 = 0;
/// Exit code when standard output cannot be written.
pub const EXIT_OUTPUT_FAILED: i32 = 1;
/// Exit code for anything wrong with the arguments or the scenario.
pub const EXIT_BAD_INPUT: i32 = 2;

/// The help text.
pub fn usage() -> String {
    format!(
        "\
attention-lens {version}: multi-head self-attention, every stage with real numbers.

Usage:
  attention-lens trace [OPTIONS]   print every intermediate matrix of one attention layer
  attention-lens scenario          print the default scenario as JSON, ready to edit
  attention-lens help              print this help (also --help, -h)
  attention-lens --version         print the version

Options of trace:
  --scenario FILE      read a scenario JSON file; `-` reads standard input
  --sentence TEXT      use this sentence instead of the scenario's
  --d-model N          width of every token vector, {d_min} to {d_max}
  --heads N            number of heads, {h_min} to {h_max}; must divide d_model
  --causal             hide later tokens from earlier ones (--no-causal: show them)
  --positional         add the sinusoidal positional encoding (--no-positional: don't)
  --scale MODE         score divisor: {scales}
  --temperature T      softmax temperature, {t_min} to {t_max}
  --format FORMAT      json (default), markdown (or md) or csv
  Values may also be written --heads=4.

Without --scenario, trace starts from the default scenario ({default_sentence:?}, d_model {default_d},
{default_h} heads). Options override the scenario's fields:
  - a --d-model that changes the width replaces every matrix that no longer fits
    (embeddings, w_q, w_k, w_v, w_o) by its default for the new width;
  - a --sentence keeps the embedding row of each token that was in the old sentence and
    gives every new token its toy embedding.

Examples:
  attention-lens trace --sentence \"the cat sat\" --causal --format markdown > handout.md
  attention-lens scenario > mine.json
  attention-lens trace --scenario mine.json --heads 1 --format csv

Exit status: 0 on success; 2 when an argument or the scenario is wrong, with one line
starting with `error: ` on standard error; 1 when the output cannot be written.
",
        version = env!("CARGO_PKG_VERSION"),
        d_min = D_MODEL_RANGE.start(),
        d_max = D_MODEL_RANGE.end(),
        h_min = N_HEADS_RANGE.start(),
        h_max = N_HEADS_RANGE.end(),
        t_min = TEMPERATURE_RANGE.start(),
        t_max = TEMPERATURE_RANGE.end(),
        scales = scale_choices(true),
        default_sentence = DEFAULT_SENTENCE,
        default_d = Config::default().d_model,
        default_h = Config::default().n_heads,
    )
}

/// The scale modes as words, `a, b or c`, the default marked when `mark_default`.
fn scale_choices(mark_default: bool) -> String {
    let keys: Vec<String> = ScaleMode::ALL
        .iter()
        .map(|mode| {
            if mark_default && *mode == ScaleMode::default() {
                format!("{} (default)", mode.key())
            } else {
                mode.key().to_string()
            }
        })
        .collect();
    match keys.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => keys.concat(),
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Print the usage text.
    Help,
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

/// How `trace` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// [`trace_json_pretty`].
    #[default]
    Json,
    /// [`trace_markdown`].
    Markdown,
    /// [`trace_csv`].
    Csv,
}

/// Everything that stops the command, each a one-line message.
#[derive(Debug, Clone, PartialEq)]
pub enum CliError {
    /// The first argument is not a command.
    UnknownCommand(String),
    /// An option this command does not have.
    UnknownOption(String),
    /// An argument that is not an option.
    UnexpectedArgument(String),
    /// An option given without its value.
    MissingValue(&'static str),
    /// A switch given a value, like `--causal=yes`.
    UnexpectedValue(&'static str),
    /// A value that is not a number of the right kind.
    NotANumber {
        flag: &'static str,
        value: String,
        expected: String,
    },
    /// A value that is not one of the choices.
    BadChoice {
        flag: &'static str,
        value: String,
        choices: String,
    },
    /// The scenario could not be read.
    Unreadable { source: Source, reason: String },
    /// The scenario is not valid.
    Scenario {
        source: Source,
        error: ScenarioError,
    },
    /// An option's value makes no valid attention layer.
    Option {
        flag: &'static str,
        value: String,
        error: AttentionError,
    },
    /// Anything else the core refuses.
    Attention(AttentionError),
}

impl CliError {
    /// The exit code for this error.
    pub fn exit_code(&self) -> i32 {
        EXIT_BAD_INPUT
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownCommand(c) => write!(
                f,
                "unknown command `{c}`: use `trace`, `scenario` or `help`."
            ),
            Self::UnknownOption(o) => write!(
                f,
                "unknown option `{o}`: run `attention-lens help` to see the options."
            ),
            Self::UnexpectedArgument(a) => write!(
                f,
                "unexpected argument `{a}`: options start with `--`, and a sentence goes after \
                 `--sentence`."
            ),
            Self::MissingValue(flag) => write!(f, "`{flag}` needs a value after it."),
            Self::UnexpectedValue(flag) => write!(f, "`{flag}` is a switch and takes no value."),
            Self::NotANumber {
                flag,
                value,
                expected,
            } => write!(f, "`{flag}` needs {expected}, but got `{value}`."),
            Self::BadChoice {
                flag,
                value,
                choices,
            } => write!(f, "`{flag}` must be {choices}, not `{value}`."),
            Self::Unreadable { source, reason } => {
                write!(f, "cannot read the scenario from {source}: {reason}.")
            }
            Self::Scenario { source, error } => write!(f, "{source}: {error}"),
            Self::Option { flag, value, error } => write!(f, "`{flag} {value}`: {error}"),
            Self::Attention(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for CliError {}

/// Reads the command line, `args` without the program name.
pub fn parse_args(args: &[String]) -> Result<Command, CliError> {
    let Some(first) = args.first() else {
        return Ok(Command::Help);
    };
    let rest = &args[1..];
    match first.as_str() {
        "help" | "--help" | "-h" => Ok(Command::Help),
        "--version" | "-V" => Ok(Command::Version),
        "scenario" => match rest.first().map(String::as_str) {
            None => Ok(Command::Scenario),
            Some("--help" | "-h") => Ok(Command::Help),
            Some(arg) if arg.starts_with('-') => Err(CliError::UnknownOption(option_name(arg))),
            Some(arg) => Err(CliError::UnexpectedArgument(arg.to_string())),
        },
        "trace" => parse_trace(rest),
        arg if arg.starts_with('-') => Err(CliError::UnknownOption(option_name(arg))),
        arg => Err(CliError::UnknownCommand(arg.to_string())),
    }
}

/// The option part of `--name=value`.
fn option_name(arg: &str) -> String {
    arg.split_once('=')
        .map_or(arg, |(name, _)| name)
        .to_string()
}

fn parse_trace(args: &[String]) -> Result<Command, CliError> {
    let mut options = TraceOptions::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--help" || arg == "-h" {
            return Ok(Command::Help);
        }
        if !arg.starts_with("--") || arg == "--" {
            return Err(CliError::UnexpectedArgument(arg.clone()));
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (arg.as_str(), None),
        };
        let switch = |flag: &'static str, on: bool| match inline {
            Some(_) => Err(CliError::UnexpectedValue(flag)),
            None => Ok(Some(on)),
        };
        match name {
            "--causal" => options.causal = switch("--causal", true)?,
            "--no-causal" => options.causal = switch("--no-causal", false)?,
            "--positional" => options.positional = switch("--positional", true)?,
            "--no-positional" => options.positional = switch("--no-positional", false)?,
            _ => {
                let flag = value_flag(name)?;
                let value = match inline {
                    Some(value) => value,
                    // A following option means the value was forgotten; `--x=--y` passes one.
                    None => match args.next() {
                        Some(next) if !(next.starts_with("--") && next.len() > 2) => next.clone(),
                        _ => return Err(CliError::MissingValue(flag)),
                    },
                };
                set_value(&mut options, flag, value)?;
            }
        }
    }
    Ok(Command::Trace(options))
}

/// The options of `trace` that take a value, by name.
fn value_flag(name: &str) -> Result<&'static str, CliError> {
    const FLAGS: [&str; 7] = [
        "--scenario",
        "--sentence",
        "--d-model",
        "--heads",
        "--scale",
        "--temperature",
        "--format",
    ];
    FLAGS
        .into_iter()
        .find(|flag| *flag == name)
        .ok_or_else(|| CliError::UnknownOption(name.to_string()))
}

fn set_value(
    options: &mut TraceOptions,
    flag: &'static str,
    value: String,
) -> Result<(), CliError> {
    match flag {
        "--scenario" => {
            options.scenario = if value == "-" {
                Source::Stdin
            } else {
                Source::File(value)
            }
        }
        "--sentence" => options.sentence = Some(value),
        "--d-model" => options.d_model = Some(whole_number(flag, &value, &D_MODEL_RANGE)?),
        "--heads" => options.n_heads = Some(whole_number(flag, &value, &N_HEADS_RANGE)?),
        "--scale" => {
            options.scale = Some(value.parse().map_err(|_| CliError::BadChoice {
                flag,
                value: value.clone(),
                choices: scale_choices(false),
            })?)
        }
        "--temperature" => {
            options.temperature = Some(value.trim().parse().map_err(|_| CliError::NotANumber {
                flag,
                value: value.clone(),
                expected: format!(
                    "a number from {} to {}, like 0.5",
                    TEMPERATURE_RANGE.start(),
                    TEMPERATURE_RANGE.end()
                ),
            })?)
        }
        _ => {
            options.format = match value.as_str() {
                "json" => Format::Json,
                "markdown" | "md" => Format::Markdown,
                "csv" => Format::Csv,
                _ => {
                    return Err(CliError::BadChoice {
                        flag,
                        value,
                        choices: "json, markdown or csv".to_string(),
                    })
                }
            }
        }
    }
    Ok(())
}

fn whole_number(
    flag: &'static str,
    value: &str,
    range: &std::ops::RangeInclusive<usize>,
) -> Result<usize, CliError> {
    value.trim().parse().map_err(|_| CliError::NotANumber {
        flag,
        value: value.to_string(),
        expected: format!("a whole number from {} to {}", range.start(), range.end()),
    })
}

/// Carries out `command` and returns what goes to standard output. `stdin` is read only for
/// `--scenario -`.
pub fn execute(command: &Command, stdin: &mut dyn Read) -> Result<String, CliError> {
    match command {
        Command::Help => Ok(usage()),
        Command::Version => Ok(format!("attention-lens {}\n", env!("CARGO_PKG_VERSION"))),
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
                source: source.clone(),
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
        source: source.clone(),
        reason: match e.kind() {
            io::ErrorKind::NotFound => "there is no such file".to_string(),
            io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            io::ErrorKind::IsADirectory => "it is a directory, not a file".to_string(),
            io::ErrorKind::InvalidData => "it is not UTF-8 text".to_string(),
            _ => e.to_string(),
        },
    })
}

/// Applies the options to `scenario`, following the rules in [`usage`].
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
        source: options.scenario.clone(),
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
pub fn run_with(args: &[String], stdin: &mut dyn Read) -> Outcome {
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
pub fn run(args: &[String]) -> i32 {
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

    fn args(text: &[&str]) -> Vec<String> {
        text.iter().map(|s| s.to_string()).collect()
    }

    fn options(text: &[&str]) -> TraceOptions {
        let mut all = vec!["trace"];
        all.extend_from_slice(text);
        match parse_args(&args(&all)) {
            Ok(Command::Trace(options)) => options,
            other => panic!("{text:?} gave {other:?}"),
        }
    }

    fn run_args(text: &[&str]) -> Outcome {
        run_with(&args(text), &mut io::empty())
    }

    #[test]
    fn no_arguments_and_help_print_the_usage() {
        for text in [
            &[][..],
            &["help"],
            &["--help"],
            &["-h"],
            &["trace", "--help"],
        ] {
            assert_eq!(parse_args(&args(text)), Ok(Command::Help), "{text:?}");
        }
        assert!(usage().contains("--temperature T"));
        assert!(usage().contains("sqrt_head_dim (default), sqrt_seq_len or none"));
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
    }

    #[test]
    fn mistakes_in_the_arguments_are_named() {
        let cases: [(&[&str], CliError); 8] = [
            (
                &["trace", "--bogus"],
                CliError::UnknownOption("--bogus".into()),
            ),
            (
                &["trace", "--bogus=1"],
                CliError::UnknownOption("--bogus".into()),
            ),
            (&["trace", "--heads"], CliError::MissingValue("--heads")),
            (
                &["trace", "--heads", "--causal"],
                CliError::MissingValue("--heads"),
            ),
            (
                &["trace", "--causal=yes"],
                CliError::UnexpectedValue("--causal"),
            ),
            (
                &["trace", "words"],
                CliError::UnexpectedArgument("words".into()),
            ),
            (&["trace", "-x"], CliError::UnexpectedArgument("-x".into())),
            (&["draw"], CliError::UnknownCommand("draw".into())),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_args(&args(text)), Err(expected), "{text:?}");
        }
        let err = parse_args(&args(&["trace", "--heads", "two"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`--heads` needs a whole number from 1 to 8, but got `two`."
        );
        let err = parse_args(&args(&["trace", "--scale", "sqrt"])).unwrap_err();
        assert!(err
            .to_string()
            .contains("sqrt_head_dim, sqrt_seq_len or none"));
        assert!(parse_args(&args(&["scenario", "--pretty"])).is_err());
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
            &args(&["trace", "--scenario", "-", "--d-model", "4"]),
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
        let out = run_with(&args(&["trace", "--scenario", "-"]), &mut json.as_bytes());
        assert_eq!(out.code, EXIT_OK, "{}", out.stderr);
        let value = crate::json::parse(&out.stdout).unwrap();
        assert_eq!(value["tokens"], crate::json::Value::from(vec!["a", "b"]));
        assert_eq!(value["config"]["causal"], true);

        let out = run_with(&args(&["trace", "--scenario", "-"]), &mut "{".as_bytes());
        assert!(out
            .stderr
            .starts_with("error: standard input: This is not a valid scenario"));
        assert_eq!(out.stderr.lines().count(), 1);
    }

    #[test]
    fn the_default_trace_uses_the_default_configuration() {
        let out = run_args(&["trace"]);
        let value = crate::json::parse(&out.stdout).unwrap();
        assert_eq!(value["config"]["d_model"], Config::default().d_model);
        assert_eq!(out.stderr, "");
    }

    #[test]
    fn error_text_is_always_one_line() {
        assert_eq!(one_line("a\nb\r\nc"), "a b c");
    }
}
