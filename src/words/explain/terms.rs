//! Sums of products written term by term, numbers as the heatmaps show them, and the notes a sum
//! needs when it is long or when its rounded terms miss the rounded result.

use crate::words::matrices::head_columns;
use crate::words::number::{self, format_value};

/// Decimals of the numbers in an explanation: the same as in heatmap cells.
pub(super) const DECIMALS: usize = 2;

/// Sums with more terms than this write out only the first and last few.
const MAX_WRITTEN_TERMS: usize = 8;
/// Terms written before the gap of a long sum.
const FIRST_TERMS: usize = 3;
/// Terms written after the gap of a long sum.
const LAST_TERMS: usize = 2;

/// `a × b + c × d + …`, and the notes it needs.
pub(super) fn dot(pairs: &[(f64, f64)], value: f64) -> (String, Vec<String>) {
    if pairs.is_empty() {
        return ("0".to_string(), Vec::new());
    }
    let terms: Vec<String> = pairs
        .iter()
        .enumerate()
        .map(|(n, (a, b))| {
            let a = if n == 0 { num(*a) } else { after_op(*a) };
            format!("{a} × {}", after_op(*b))
        })
        .collect();
    let mut notes = Vec::new();
    if let Some(note) = hidden_terms_note(pairs.len()) {
        notes.push(note);
    } else {
        let by_hand: f64 = pairs.iter().map(|(a, b)| rounded(*a) * rounded(*b)).sum();
        rounding_note(&mut notes, by_hand, value);
    }
    (join_terms(&terms), notes)
}

/// Terms joined by ` + `; a long sum keeps its first and last few and counts the rest.
pub(crate) fn join_terms(terms: &[String]) -> String {
    if terms.len() <= MAX_WRITTEN_TERMS {
        return terms.join(" + ");
    }
    let hidden = terms.len() - FIRST_TERMS - LAST_TERMS;
    let mut parts = terms[..FIRST_TERMS].to_vec();
    parts.push(format!("… {hidden} more terms …"));
    parts.extend_from_slice(&terms[terms.len() - LAST_TERMS..]);
    parts.join(" + ")
}

/// Whether term `index` of `count` is written out by [`join_terms`].
pub(crate) fn is_written(index: usize, count: usize) -> bool {
    count <= MAX_WRITTEN_TERMS || index < FIRST_TERMS || index >= count - LAST_TERMS
}

/// Says how many terms a long sum leaves out; `None` when it writes them all.
pub(crate) fn hidden_terms_note(count: usize) -> Option<String> {
    (count > MAX_WRITTEN_TERMS).then(|| {
        format!(
            "The sum has {count} terms; {} in the middle are left out above, but the result \
             uses all of them.",
            count - FIRST_TERMS - LAST_TERMS
        )
    })
}

/// How a note begins when the rounded numbers shown do not give the result as shown.
pub(crate) const REDONE: &str = "Redone with the rounded numbers shown";

/// The sign before an expansion's result: "≈" when one of its `notes` says that the rounded
/// numbers written before it do not give it, "=" when they do.
pub(crate) fn result_sign(notes: &[String]) -> &'static str {
    if notes.iter().any(|note| note.starts_with(REDONE)) {
        "≈"
    } else {
        "="
    }
}

/// Warns when the rounded numbers shown do not give the rounded result, saying what they give.
pub(super) fn rounding_note(notes: &mut Vec<String>, by_hand: f64, value: f64) {
    if let Some(by_hand) = number::by_hand_if_missed(by_hand, value, DECIMALS) {
        let value = num(value);
        notes.push(format!(
            "{REDONE} above, this comes to {by_hand}, but the result, {value}, is computed from \
             the exact values."
        ));
    }
}

/// A number as the heatmaps show it.
pub(super) fn num(v: f64) -> String {
    format_value(v, DECIMALS)
}

/// A number written after an operator: negative ones in brackets, `+ (−0.42)`, so a minus
/// sign never follows an operator.
pub(super) fn after_op(v: f64) -> String {
    let text = num(v);
    if text.starts_with('−') {
        format!("({text})")
    } else {
        text
    }
}

/// `v` as it is shown, the number a learner redoes the arithmetic with.
pub(super) fn rounded(v: f64) -> f64 {
    number::rounded(v, DECIMALS)
}

/// `columns d3–d4` (or `column d3`) of head `h`.
pub(crate) fn columns_text(h: usize, head_dim: usize) -> String {
    let columns = if head_dim == 1 { "column" } else { "columns" };
    format!("{columns} {}", head_columns(h, head_dim))
}

/// `text` with its first letter capitalised.
pub(super) fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_numbers_after_an_operator_are_bracketed() {
        assert_eq!(after_op(-0.424), "(−0.42)");
        assert_eq!(after_op(0.424), "0.42");
        assert_eq!(after_op(-0.001), "0.00");
    }

    #[test]
    fn an_operand_rounded_to_even_at_a_tie_is_redone_as_it_is_shown() {
        // Shown as 0.12 × 1.00 + 0.25 × 1.00 = 0.38: by hand exactly 0.37, so the note is there.
        let (_, notes) = dot(&[(0.125, 1.0), (0.25, 1.0)], 0.375);
        assert_eq!(
            notes,
            [
                "Redone with the rounded numbers shown above, this comes to 0.37, but the \
                 result, 0.38, is computed from the exact values."
            ]
        );
        // 0.13 (shown) + 0.25 = 0.38: no note needed.
        let (_, notes) = dot(&[(0.135, 1.0), (0.25, 1.0)], 0.385);
        assert!(notes.is_empty(), "{notes:?}");
        // 0.02 × 0.75 = 0.015 by hand, 0.01499… in binary: a hand may round it to 0.02, the
        // result shown, so no note says otherwise.
        let (_, notes) = dot(&[(0.02, 0.75)], 0.0151);
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn long_sums_keep_their_ends_and_count_the_middle() {
        let terms: Vec<String> = (1..=32).map(|n| n.to_string()).collect();
        assert_eq!(
            join_terms(&terms),
            "1 + 2 + 3 + … 27 more terms … + 31 + 32"
        );
        assert_eq!(join_terms(&terms[..8]), "1 + 2 + 3 + 4 + 5 + 6 + 7 + 8");
    }

    #[test]
    fn the_first_letter_is_capitalised_beyond_ascii() {
        assert_eq!(capitalised("columns d1–d2"), "Columns d1–d2");
        assert_eq!(capitalised("éléments"), "Éléments");
        assert_eq!(capitalised(""), "");
    }
}
