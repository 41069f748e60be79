//! Numbers in a share link: the shortest text that reads back as the same `f64`, and reading
//! comma-separated lists of them back, with the reason a list was refused.

use super::fields::shown;

/// Appends `x` to a comma-separated list.
pub(super) fn push_number(list: &mut String, x: f64) {
    if !list.is_empty() {
        list.push(',');
    }
    list.push_str(&number(x));
}

/// The shortest text that parses back to exactly `x`: Rust's shortest round-trip digits, in
/// plain or exponent form, whichever is shorter, with `0.` shortened to `.`.
pub(super) fn number(x: f64) -> String {
    let plain = x.to_string();
    let exponent = format!("{x:e}");
    let plain = if let Some(rest) = plain.strip_prefix("0.") {
        format!(".{rest}")
    } else if let Some(rest) = plain.strip_prefix("-0.") {
        format!("-.{rest}")
    } else {
        plain
    };
    if exponent.len() < plain.len() {
        exponent
    } else {
        plain
    }
}

/// Why a list of numbers was refused.
pub(super) enum NumberError {
    /// The text has broken %-codes.
    Damaged,
    /// Not the expected count.
    Count(usize),
    /// An entry that is not a number.
    NotANumber(String),
    /// An entry that is NaN or infinite (or overflows to infinity).
    NotFinite(String),
}

impl NumberError {
    /// The end of a sentence starting "The link's W_q …".
    pub(super) fn describe(&self, expected: usize) -> String {
        match self {
            Self::Damaged => "is damaged (its %-codes are broken)".to_string(),
            Self::Count(found) => format!(
                "has {found} {}, but d_model {} needs {expected}",
                if *found == 1 { "number" } else { "numbers" },
                expected.isqrt()
            ),
            Self::NotANumber(raw) => format!("has {}, which is not a number", shown(raw)),
            Self::NotFinite(raw) => format!("has {}, which is not a finite number", shown(raw)),
        }
    }

    /// Like [`NumberError::describe`], for a block parameter of `shape` (rows, columns).
    pub(super) fn describe_shape(&self, shape: (usize, usize)) -> String {
        match self {
            Self::Count(found) => format!(
                "has {found} {}, but it needs {} ({} × {})",
                if *found == 1 { "number" } else { "numbers" },
                shape.0 * shape.1,
                shape.0,
                shape.1
            ),
            other => other.describe(shape.0 * shape.1),
        }
    }

    /// Like [`NumberError::describe`], for one embedding row of `d_model` numbers.
    pub(super) fn describe_row(&self, d_model: usize) -> String {
        match self {
            Self::Count(found) => format!(
                "has {found} {}, but d_model {d_model} needs {d_model}",
                if *found == 1 { "number" } else { "numbers" }
            ),
            other => other.describe(d_model * d_model),
        }
    }
}

/// A finite decimal number (so also `.5` and `1e-7`); `None` otherwise, including for `inf`,
/// `nan` and values too large for an `f64`.
pub(super) fn parse_number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// `inf`, `infinity` or `nan` in any case, with or without a sign.
fn names_non_finite(text: &str) -> bool {
    let word = text.trim_start_matches(['+', '-']).to_ascii_lowercase();
    matches!(word.as_str(), "inf" | "infinity" | "nan")
}

/// Exactly `expected` finite numbers separated by commas.
pub(super) fn parse_numbers(text: &str, expected: usize) -> Result<Vec<f64>, NumberError> {
    let found = if text.is_empty() {
        0
    } else {
        text.split(',').count()
    };
    if found != expected {
        return Err(NumberError::Count(found));
    }
    text.split(',')
        .map(|raw| match raw.parse::<f64>().ok() {
            Some(x) if x.is_finite() => Ok(x),
            None if !names_non_finite(raw) => Err(NumberError::NotANumber(raw.to_string())),
            _ => Err(NumberError::NotFinite(raw.to_string())),
        })
        .collect()
}
