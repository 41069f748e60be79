//! Everything that stops the command, each a one-line message, and clap's errors turned into
//! one of them.

use super::{Source, EXIT_BAD_INPUT};
use crate::attention::{AttentionError, LossKind};
use crate::formats::scenario::ScenarioError;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::error::Error as _;

/// Everything that stops the command, each a one-line message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CliError {
    /// The first argument is not a command.
    #[error(
        "unknown command `{0}`: use `trace`, `grad`, `train`, `worksheet`, `scenario` or `help`."
    )]
    UnknownCommand(String),
    /// An option this command does not have.
    #[error("unknown option `{0}`: run `attention-lens help COMMAND` to see its options.")]
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
    /// An option's value makes no valid attention layer; a switch has no value.
    #[error("`{}`: {error}", [*flag, value.as_str()].join(" ").trim_end())]
    Option {
        flag: &'static str,
        value: String,
        error: AttentionError,
    },
    /// `--loss task` with nothing to aim at.
    #[error("`--loss task` needs `--task NAME`: copy_previous, copy_first or mean.")]
    TaskMissing,
    /// A goal of one loss given together with `--loss` naming the other.
    #[error(
        "`{flag}` sets a goal of the {belongs} loss, but `--loss {loss}` was given: drop one of \
         them."
    )]
    WrongLoss {
        flag: &'static str,
        belongs: LossKind,
        loss: LossKind,
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

/// clap's error as one line: clap prints usage and tips on further lines, but the command
/// promises a single `error: ` line that says what to fix.
pub(super) fn usage_error(error: &clap::Error) -> CliError {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tests::run_args;
    use crate::cli::{parse_args, run_with};
    use std::ffi::OsString;
    use std::io;

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
}
