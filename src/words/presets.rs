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
/// first claim with what the numbers show now, `more` how many others broke too.
pub fn claim_broken_text(found: &str, more: usize) -> String {
    let others = match more {
        0 => String::new(),
        1 => " One more of its claims no longer holds either.".to_string(),
        n => format!(" {n} more of its claims no longer hold either."),
    };
    format!("Your edits changed what this caption describes: {found}.{others}")
}

/// What a preset's caption says once the learner's own sentence (or source) replaced the
/// preset's: said once, with how to get the preset back, and for the previous-token head, how
/// to keep it working on any sentence.
pub fn other_sentence_text(key: &str, sentence: &str, source: Option<&str>) -> String {
    let words = match source {
        Some(source) => format!("“{sentence}” attending to “{source}”"),
        None => format!("“{sentence}”"),
    };
    let mut text = format!(
        "This caption describes the preset's own sentence, {words}. Its numbers were made for \
         those words, so with yours it may no longer hold. Press Restore the preset to get it \
         back."
    );
    if key == "previous-token" {
        text.push_str(
            " To see the same head on your own sentence, click Zero on the Embeddings tab, so \
             that only the positions are left, and keep the sentence to 7 tokens or fewer.",
        );
    }
    text
}

/// Under a sentence the learner typed in place of the one the weights came with: what the
/// weights were made for, `made_for` the sentence, or `None` for the default random weights.
pub fn own_sentence_text(made_for: Option<&str>) -> String {
    match made_for {
        Some(sentence) => format!(
            "These weights came with “{sentence}”. Words from it keep their vectors, so part of \
             the pattern may survive; for your new words nothing was designed, so what they do \
             is not meant."
        ),
        None => "These weights are random numbers, made for no sentence: any pattern you see \
                 is chance."
            .to_string(),
    }
}

/// The button that offers to teach a head on the learner's sentence.
pub const TEACH_A_HEAD: &str = "Teach a head a pattern on this sentence";

#[cfg(test)]
mod tests {
    #[test]
    fn the_own_sentence_line_names_the_sentence_the_weights_were_made_for() {
        assert!(own_sentence_text(Some("I am hungry")).contains("came with “I am hungry”"));
        assert!(own_sentence_text(None).contains("random"));
    }

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
