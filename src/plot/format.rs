//! How numbers are written on heatmaps and tables, and how typed cell text is read.

use std::fmt;

/// The largest magnitude a typed cell may hold: bigger numbers teach nothing and overflow later
/// stages.
pub const CELL_LIMIT: f64 = 1_000_000.0;

// The display rounding lives with the learner's words, so cell explanations round exactly like
// the heatmaps.
pub use crate::words::format_value;

/// `v` in the shortest form that reads back exactly ("0.02", "10000"), or with its power of ten
/// written out ("1e20", "2e-5") where that form would take more than `width` characters.
pub fn shortest_within(v: f64, width: usize) -> String {
    let plain = v.to_string();
    if plain.len() <= width {
        plain
    } else {
        format!("{v:e}")
    }
}

/// Why a cell's text is not a usable number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellError {
    /// Nothing typed.
    Empty,
    /// Digits from another script, such as Arabic-Indic `١٢`.
    NonAsciiDigits,
    /// `NaN` or an infinity.
    NotFinite,
    /// Larger than [`CELL_LIMIT`].
    TooLarge,
    /// Not a number at all.
    NotANumber,
}

impl fmt::Display for CellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("Type a number."),
            Self::NonAsciiDigits => f.write_str("Use the digits 0–9, like 0.5 or -1.25."),
            Self::NotFinite => f.write_str("Use a finite number: NaN and infinity cannot be used."),
            Self::TooLarge => f.write_str("Keep values between −1,000,000 and 1,000,000."),
            Self::NotANumber => f.write_str("Not a number: type something like 0.5 or -1.25."),
        }
    }
}

impl std::error::Error for CellError {}

/// Reads a typed cell: decimal numbers with an optional sign, exponent (`1e-3`), Unicode minus
/// `−` or a decimal comma (`0,5`). `-0` becomes `0`.
pub fn parse_cell(text: &str) -> Result<f64, CellError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(CellError::Empty);
    }
    if trimmed
        .chars()
        .any(|c| c.is_numeric() && !c.is_ascii_digit())
    {
        return Err(CellError::NonAsciiDigits);
    }
    let normalised: String = trimmed
        .chars()
        .map(|c| match c {
            '−' | '–' => '-',
            ',' => '.',
            c => c,
        })
        .collect();
    // Rust would accept "inf", "NaN" and "infinity"; a learner's cell should not.
    let lower = normalised.to_ascii_lowercase();
    if lower
        .as_bytes()
        .windows(3)
        .any(|w| w == b"inf" || w == b"nan")
    {
        return Err(CellError::NotFinite);
    }
    let value = normalised
        .parse::<f64>()
        .map_err(|_| CellError::NotANumber)?;
    if !value.is_finite() {
        return Err(CellError::NotFinite);
    }
    if value.abs() > CELL_LIMIT {
        return Err(CellError::TooLarge);
    }
    Ok(if value == 0.0 { 0.0 } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_numbers_are_accepted() {
        assert_eq!(parse_cell("0.5"), Ok(0.5));
        assert_eq!(parse_cell(" -1.25 "), Ok(-1.25));
        assert_eq!(parse_cell(".5"), Ok(0.5));
        assert_eq!(parse_cell("1e-3"), Ok(0.001));
        assert_eq!(parse_cell("−2"), Ok(-2.0));
        assert_eq!(parse_cell("0,75"), Ok(0.75));
        assert_eq!(parse_cell("+3"), Ok(3.0));
    }

    #[test]
    fn negative_zero_becomes_zero() {
        let v = parse_cell("-0").unwrap();
        assert_eq!(v, 0.0);
        assert!(v.is_sign_positive());
    }

    #[test]
    fn bad_text_is_refused_with_a_reason() {
        assert_eq!(parse_cell(""), Err(CellError::Empty));
        assert_eq!(parse_cell("abc"), Err(CellError::NotANumber));
        assert_eq!(parse_cell("NaN"), Err(CellError::NotFinite));
        assert_eq!(parse_cell("inf"), Err(CellError::NotFinite));
        assert_eq!(parse_cell("-Infinity"), Err(CellError::NotFinite));
        assert_eq!(parse_cell("1e999"), Err(CellError::NotFinite));
        assert_eq!(parse_cell("1e308"), Err(CellError::TooLarge));
        assert_eq!(parse_cell("١٢"), Err(CellError::NonAsciiDigits));
        assert_eq!(parse_cell("1.2.3"), Err(CellError::NotANumber));
        assert_eq!(parse_cell("0x10"), Err(CellError::NotANumber));
        assert!(CellError::TooLarge.to_string().contains("1,000,000"));
    }
}
