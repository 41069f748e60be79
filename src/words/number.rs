//! How numbers and head indices are written for people: on heatmaps, in tables, in the cell
//! arithmetic and in the handout, so the explanations round exactly like the display does.

/// A number for display: `decimals` places, a real minus sign, `−∞` for minus infinity, and no
/// negative zero.
pub fn format_value(value: f64, decimals: usize) -> String {
    if value == f64::NEG_INFINITY {
        return "−∞".to_string();
    }
    if value == f64::INFINITY {
        return "∞".to_string();
    }
    if value.is_nan() {
        return "NaN".to_string();
    }
    let text = format!("{value:.decimals$}");
    // "-0.00" rounds to zero: show it without a sign.
    if let Some(magnitude) = text.strip_prefix('-') {
        if magnitude.chars().all(|c| c == '0' || c == '.') {
            return magnitude.to_string();
        }
    }
    text.replacen('-', "−", 1)
}

/// `n` in subscript digits, as in `S₁₂`; heads are counted from 1 where people read them.
pub fn subscript(n: usize) -> String {
    n.to_string()
        .chars()
        .map(|c| {
            c.to_digit(10)
                .and_then(|d| char::from_u32(0x2080 + d))
                .unwrap_or(c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_with_a_real_minus_and_no_negative_zero() {
        assert_eq!(format_value(-0.456, 2), "−0.46");
        assert_eq!(format_value(0.456, 2), "0.46");
        assert_eq!(format_value(-0.001, 2), "0.00");
        assert_eq!(format_value(f64::NEG_INFINITY, 2), "−∞");
        assert_eq!(format_value(12.0, 0), "12");
        assert_eq!(format_value(1.2345, 3), "1.234");
    }

    #[test]
    fn subscripts_use_unicode_digits() {
        assert_eq!(subscript(1), "₁");
        assert_eq!(subscript(12), "₁₂");
    }
}
