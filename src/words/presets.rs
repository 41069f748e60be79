//! What the preset scenarios promise, in words. Their titles and captions are data: they stay
//! with their numbers in `assets/presets/*.json`.

/// A preset's claim about one row of one head's attention weights, naming tokens from `tokens`:
/// in head `head`, the row of token `query` puts at least `at_least` of its weight on `keys`.
pub fn claim_text(
    head: usize,
    query: usize,
    keys: &[usize],
    at_least: f64,
    (tokens, key_tokens): (&[String], &[String]),
) -> String {
    // A word that occurs twice is named with its position too, so the claim says which.
    let name = |tokens: &[String], i: usize| match tokens.get(i) {
        None => format!("token {}", i + 1),
        Some(t) if tokens.iter().filter(|u| *u == t).count() > 1 => {
            format!("“{t}” (token {})", i + 1)
        }
        Some(t) => format!("“{t}”"),
    };
    let keys: Vec<String> = keys.iter().map(|&k| name(key_tokens, k)).collect();
    format!(
        "in head {}, the row for {} puts at least {} of its weight on {}, more than on any other token",
        head + 1,
        name(tokens, query),
        at_least,
        keys.join(" + ")
    )
}

/// What a preset's caption says once an edit has broken one of its claims; `found` is the
/// claim with what the numbers show now.
pub fn claim_broken_text(found: &str) -> String {
    format!("Your edits changed what this caption describes: {found}.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_names_its_tokens_and_counts_heads_from_one() {
        let tokens = ["the", "cat", "sat"].map(String::from);
        assert_eq!(
            claim_text(1, 2, &[0, 1], 0.5, (&tokens, &tokens)),
            "in head 2, the row for “sat” puts at least 0.5 of its weight on “the” + “cat”, \
             more than on any other token"
        );
        assert!(claim_text(0, 7, &[0], 0.5, (&tokens, &tokens)).contains("the row for token 8"));
    }

    #[test]
    fn a_claim_names_a_repeated_word_with_its_position() {
        let tokens = ["the", "cat", "saw", "the", "dog"].map(String::from);
        assert_eq!(
            claim_text(0, 4, &[3], 0.5, (&tokens, &tokens)),
            "in head 1, the row for “dog” puts at least 0.5 of its weight on “the” (token 4), \
             more than on any other token"
        );
    }
}
