//! How numbers and head indices are written for people: on heatmaps, in tables, in the cell
//! arithmetic and in the handout, so the explanations round exactly like the display does.

/// A number for display: `decimals` places, a real minus sign, `−∞` for minus infinity, and no
/// negative zero.
/// `= 2` for a number that four decimals write exactly, else `≈ 0.0316`: an angle or a rate
/// with no trailing zeros.
pub fn equals_short(v: f64) -> String {
    let text = format_value(v, 4);
    let trimmed = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    let exact = ((v * 1e4).round() / 1e4 - v).abs() < 1e-12;
    format!("{} {trimmed}", if exact { "=" } else { "≈" })
}

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

/// `value` with three significant digits times a power of ten: `−1.05 × 10⁸¹`, `2.13 × 10⁻⁴`.
pub fn scientific(value: f64) -> String {
    let text = format!("{value:.2e}");
    let Some((mantissa, exponent)) = text.split_once('e') else {
        return text;
    };
    let superscript: String = exponent
        .chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => "⁰¹²³⁴⁵⁶⁷⁸⁹".chars().nth(d as usize).unwrap_or(c),
            None => '⁻',
        })
        .collect();
    format!("{mantissa} × 10{superscript}").replacen('-', "−", 1)
}

/// `value` as [`format_value`] shows it with `decimals` places, as a number: the one rounding
/// rule of what is shown, marked and redone by hand. Read back from the formatter rather than
/// rounded again, so an exact tie such as 0.125 is 0.12 here exactly as it is on screen (the
/// formatter rounds ties to even; `f64::round` would make it 0.13).
pub fn rounded(value: f64, decimals: usize) -> f64 {
    if !value.is_finite() {
        return value;
    }
    // Formatting a finite number always reads back; `+ 0.0` folds −0 into 0, as the display does.
    format!("{value:.decimals$}")
        .parse::<f64>()
        .unwrap_or(value)
        + 0.0
}

/// Whether `value` is a decimal that ends within `decimals` places, the float's own rounding
/// aside: 2·3·0.3 is 1.7999999999999998 as an `f64`, but the number a hand multiplies out is
/// 1.8 exactly, so it ends within one place; 1/3 ends within none. A float's error is a few
/// parts in 10¹⁶, far below the tolerance here, and far above it any digit a person could see.
/// A number with more digits than [`TRUSTED_DIGITS`] up to that place never counts: there the
/// tolerance would reach the last place itself, and every huge number would look exact.
pub fn ends_within(value: f64, decimals: usize) -> bool {
    if !value.is_finite() {
        return false;
    }
    let scaled = value * 10f64.powi(decimals as i32);
    if scaled.abs() >= 10f64.powi(TRUSTED_DIGITS) {
        return false;
    }
    (scaled - scaled.round()).abs() <= 1e-12 * scaled.abs().max(1.0)
}

/// How many digits, up to the last place asked about, [`ends_within`] can vouch for: with a
/// relative tolerance of 10⁻¹², nine digits leave it a thousandth of the last place.
const TRUSTED_DIGITS: i32 = 9;

/// `value` written exactly, with as few decimals as it needs up to `most` (`3`, `1.8`, `0.75`),
/// when it ends within `most` places; `None` when it would have to be rounded.
pub fn exactly(value: f64, most: usize) -> Option<String> {
    (0..=most)
        .find(|&d| ends_within(value, d))
        .map(|d| format_value(value, d))
}

/// A sum redone by hand from rounded numbers, as the two values a hand may round it to: its
/// exact decimal value lies a hair below or above the `f64` sum (−0.1725 may be summed as
/// −0.172499…), and at a tie people round either way. Formatted, the two agree unless the
/// sum sits on a tie at the decimals shown.
pub fn by_hand_either_way(sum: f64) -> [f64; 2] {
    if !sum.is_finite() {
        return [sum, sum];
    }
    // Sums of products of numbers shown with a few decimals end well before the ninth.
    let exact = (sum * 1e9).round() / 1e9;
    [exact - 1e-12, exact + 1e-12]
}

/// What a sum redone by hand from rounded numbers comes to, when neither way of rounding it
/// (see [`by_hand_either_way`]) gives `value` as shown with `decimals` places; `None` when one
/// does. Written `≈ 0.41`; exactly where it ends within `decimals` places (`−0.125`) or one more,
/// on a tie that a hand might round either way (`0.0675`).
pub fn by_hand_if_missed(by_hand: f64, value: f64, decimals: usize) -> Option<String> {
    let [below, above] = by_hand_either_way(by_hand).map(|v| format_value(v, decimals));
    let value = format_value(value, decimals);
    if below == value || above == value {
        return None;
    }
    let scaled = by_hand * 10f64.powi(decimals as i32);
    let exact = (scaled - scaled.round()).abs() < 1e-6;
    Some(if exact {
        below
    } else if below != above {
        format_value(by_hand, decimals + 1)
    } else {
        format!("≈ {below}")
    })
}

/// `n` as an English ordinal: `1st`, `2nd`, `3rd`, `4th`, `11th`, `22nd`.
pub fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
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
    fn ordinals_take_their_suffixes() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 103].map(ordinal).to_vec();
        assert_eq!(
            got,
            ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "103rd"]
        );
    }

    #[test]
    fn a_sum_redone_by_hand_that_misses_is_written_rounded_or_on_a_tie_exactly() {
        assert_eq!(
            by_hand_if_missed(0.4076, 0.4012, 2).as_deref(),
            Some("≈ 0.41")
        );
        assert_eq!(by_hand_if_missed(0.4076, 0.4149, 2), None);
        // −0.75 / 6 is −0.125 exactly, and −1 / (2·10 × 0.01) is −5: no "≈".
        assert_eq!(
            by_hand_if_missed(-0.75 / 6.0, -0.1262, 3).as_deref(),
            Some("−0.125")
        );
        assert_eq!(
            by_hand_if_missed(-1.0 / (20.0 * 0.01), -6.521, 3).as_deref(),
            Some("−5.000")
        );
        // 0.0675 rounds to 0.067 or 0.068 by hand: neither is 0.069, and neither is written.
        assert_eq!(
            by_hand_if_missed(0.0675, 0.0694, 3).as_deref(),
            Some("0.0675")
        );
        // A tie either of whose roundings gives the value is no miss.
        assert_eq!(by_hand_if_missed(0.0675, 0.068, 3), None);
        assert_eq!(by_hand_if_missed(0.0675, 0.067, 3), None);
    }

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
    fn a_rounded_value_is_the_number_the_display_shows_at_half_cent_ties() {
        // 0.125 and 0.375 are exact in binary, so they tie and the display rounds them to even;
        // 0.135 and 0.115 are a hair above their decimal text, so they round up.
        for (value, shown) in [
            (0.125, 0.12),
            (-0.125, -0.12),
            (0.375, 0.38),
            (0.625, 0.62),
            (0.135, 0.14),
            (0.115, 0.12),
            (-0.115, -0.12),
            (0.005, 0.01),
            (1.005, 1.0),
        ] {
            assert_eq!(rounded(value, 2), shown, "{value}");
            assert_eq!(format_value(rounded(value, 2), 2), format_value(value, 2));
        }
        assert_eq!(rounded(-0.001, 2).to_bits(), 0f64.to_bits());
        assert_eq!(rounded(f64::NEG_INFINITY, 2), f64::NEG_INFINITY);
    }

    #[test]
    fn rounding_and_the_display_agree_on_every_value() {
        let mut x = 0.123_456_789_f64;
        for n in 0..10_000 {
            // Every 8th value on a 1/1000 grid, where half-cent ties live; the rest spread out.
            let value = if n % 8 == 0 {
                f64::from(n - 5_000) / 1000.0
            } else {
                x = (x * 9_301.0 + 0.497).fract();
                (x - 0.5) * 8.0
            };
            assert_eq!(
                format_value(rounded(value, 2), 2),
                format_value(value, 2),
                "{value}"
            );
            assert_eq!(
                format_value(rounded(value, 3), 3),
                format_value(value, 3),
                "{value}"
            );
        }
    }

    #[test]
    fn a_product_of_short_decimals_is_exact_though_its_float_is_not() {
        let divisor = 2.0 * 3.0 * 0.3;
        assert_ne!(divisor, 1.8, "the float is a hair off");
        assert!(ends_within(divisor, 1) && ends_within(divisor, 2));
        assert!(!ends_within(divisor, 0));
        assert_eq!(exactly(divisor, 4).as_deref(), Some("1.8"));
        assert_eq!(exactly(6.0 * 0.1, 4).as_deref(), Some("0.6"));
        assert_eq!(exactly(3.0, 4).as_deref(), Some("3"));
        assert_eq!(exactly(-0.75, 4).as_deref(), Some("−0.75"));
        assert_eq!(exactly(1.0 / 3.0, 4), None);
        assert_eq!(exactly(2.0f64.sqrt(), 4), None);
        // A value a few units off in the tenth place is not exact.
        assert!(!ends_within(0.123_000_001, 3));
    }

    #[test]
    fn a_huge_number_never_counts_as_ending_within_a_few_places() {
        // Every float this large is a whole number, but its digits past the sixteenth are the
        // float's, not the sum's: written out they would be a false "=".
        let huge = -108_392_014_304_519_362_343_757_229_850_624.0;
        assert!(!ends_within(huge, 3) && !ends_within(huge, 0));
        assert!(!ends_within(12_345_678.25, 3));
        assert_eq!(exactly(1e15, 4), None);
        // Within nine digits a whole or short number still is exact.
        assert!(ends_within(123_456.5, 3) && ends_within(99_999_999.0, 0));
    }

    #[test]
    fn subscripts_use_unicode_digits() {
        assert_eq!(subscript(1), "₁");
        assert_eq!(subscript(12), "₁₂");
    }
}
