//! The labels of the settings' menus, and what the settings mean together.

use crate::attention::ScaleMode;

/// A head count in the Heads menu: `h` heads of width `d_k`, and, where rotary positions
/// refuse it (an odd d_k leaves a column without a partner to turn with), why.
pub fn head_count_label(h: usize, d_k: usize, rope: bool) -> String {
    if rope && d_k % 2 == 1 {
        format!("{h} (d_k = {d_k}: rotary positions turn pairs, so d_k must be even)")
    } else {
        format!("{h} (d_k = {d_k})")
    }
}

/// A short label for the scale menu; `cross`: the keys come from a source sentence, so the
/// number of keys the mistake divides by is src_len.
pub fn scale_mode_label(mode: ScaleMode, cross: bool) -> &'static str {
    match mode {
        ScaleMode::SqrtHeadDim => "÷ √d_k (correct)",
        ScaleMode::SqrtSeqLen if cross => "÷ √src_len (common mistake)",
        ScaleMode::SqrtSeqLen => "÷ √seq_len (common mistake)",
        ScaleMode::None => "no scaling",
    }
}

/// What a scale mode does, for a list written before any sentence is known (the command
/// line's help): the mistake divides by the number of keys, the source's when there is one.
pub fn scale_mode_help(mode: ScaleMode) -> &'static str {
    match mode {
        ScaleMode::SqrtSeqLen => {
            "÷ √seq_len, or ÷ √src_len with a source sentence, whose tokens are the keys \
             (common mistake)"
        }
        _ => scale_mode_label(mode, false),
    }
}

/// Whether, and how, the layer can tell word order with positional encoding and the causal mask
/// switched as given. Without either, attention treats the sentence as a set: reorder the
/// tokens and the rows of every result, and the columns of the scores and weights, move with
/// them; no number changes. The causal mask alone already breaks that, since each token sees a
/// different set of tokens.
pub fn word_order_text(positional: bool, causal: bool) -> &'static str {
    match (positional, causal) {
        (false, false) => {
            "With positional encoding and the causal mask both off, attention cannot tell word order apart. Reorder the tokens and the rows of every result move with them, and so do the columns of the scores and weights: the numbers only move, and none changes."
        }
        (false, true) => {
            "Positional encoding is off, so X holds no positions, but the causal mask still makes order matter: each token sees only itself and the tokens before it, so the same word can attend differently at different places."
        }
        (true, false) => {
            "Positional encoding is on: each row of X carries its position, so the same word gets different queries, keys and values at different places."
        }
        (true, true) => {
            "Order shows twice here: positional encoding puts each token's position into its row of X, and the causal mask lets each token see only itself and the tokens before it."
        }
    }
}

/// What a window of `w` lets a token see: `only itself`, `itself and the 2 tokens before it`.
pub fn window_reach(w: usize) -> String {
    match w {
        0 | 1 => "only itself".to_string(),
        2 => "itself and the token before it".to_string(),
        w => format!("itself and up to {} tokens before it", w - 1),
    }
}

/// What a window of `w` does to what the causal mask lets a token see.
pub fn window_narrows(w: usize) -> String {
    format!(
        "The window W = {w} narrows that further: each token sees {}.",
        window_reach(w)
    )
}

/// What word order does with rotary positions on: X holds positions only when the added
/// encoding is on too, and the queries and keys are turned by their positions after the split.
pub fn rotary_word_order_text(positional: bool, causal: bool) -> &'static str {
    match (positional, causal) {
        (false, false) => {
            "Rotary positions are on: X holds no positions, but after the split each head's queries and keys are turned by their token's position, so a score depends on its two tokens' offset j − i, not on where they stand."
        }
        (false, true) => {
            "Rotary positions are on: X holds no positions, but after the split each head's queries and keys are turned by their token's position, so a score depends on its two tokens' offset j − i, not on where they stand; the causal mask lets each token see only itself and the tokens before it."
        }
        (true, false) => {
            "Order shows twice here: positional encoding adds each position to X first, and rotary positions then turn each head's queries and keys by it after the split."
        }
        (true, true) => {
            "Order shows three times here: positional encoding adds each position to X, rotary positions turn each head's queries and keys by it, and the causal mask lets each token see only itself and the tokens before it."
        }
    }
}

/// Whether word order shows in a cross-attention layer, where the causal mask is off: the
/// queries come from the sentence, the keys and values from the source.
pub fn cross_word_order_text(positional: bool) -> &'static str {
    if positional {
        "Positional encoding is on in both sentences: each row of X and of X_src carries its position, so the same word gets different queries (in your sentence) or keys and values (in the source) at different places."
    } else {
        "Positional encoding is off, so neither sentence carries its word order. Reorder your sentence and the rows of every result move with its tokens; reorder the source and the columns of the scores and weights move with its tokens. The numbers only move; none changes."
    }
}

/// What word order does, said right after a line that already says whether positional
/// encoding is on or off (the handout's configuration, a cell of X), so the switch is not named
/// twice; `cross`: the keys and values come from a source sentence, and the mask is off.
pub fn word_order_after_switch(positional: bool, causal: bool, cross: bool) -> &'static str {
    match (cross, positional, causal) {
        (true, true, _) => {
            "Each row of X and of X_src carries its position, so the same word gets different queries (in your sentence) or keys and values (in the source) at different places."
        }
        (true, false, _) => {
            "Neither sentence carries its word order. Reorder your sentence and the rows of every result move with its tokens; reorder the source and the columns of the scores and weights move with its tokens. The numbers only move; none changes."
        }
        (false, false, false) => {
            "With the causal mask off too, attention cannot tell word order apart. Reorder the tokens and the rows of every result move with them, and so do the columns of the scores and weights: the numbers only move, and none changes."
        }
        (false, false, true) => {
            "X holds no positions, but the causal mask still makes order matter: each token sees only itself and the tokens before it, so the same word can attend differently at different places."
        }
        (false, true, false) => {
            "Word order shows: each row of X carries its position, so the same word gets different queries, keys and values at different places."
        }
        (false, true, true) => {
            "Order shows twice here: each row of X carries its position, and the causal mask lets each token see only itself and the tokens before it."
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_count_says_why_rotary_positions_refuse_an_odd_d_k() {
        assert_eq!(head_count_label(2, 2, true), "2 (d_k = 2)");
        assert_eq!(head_count_label(4, 1, false), "4 (d_k = 1)");
        assert!(head_count_label(4, 1, true).contains("d_k must be even"));
    }

    #[test]
    fn the_scale_menu_names_the_number_of_keys_the_mistake_divides_by() {
        assert_eq!(
            scale_mode_label(ScaleMode::SqrtSeqLen, false),
            "÷ √seq_len (common mistake)"
        );
        assert_eq!(
            scale_mode_label(ScaleMode::SqrtSeqLen, true),
            "÷ √src_len (common mistake)"
        );
        for cross in [false, true] {
            assert_eq!(
                scale_mode_label(ScaleMode::SqrtHeadDim, cross),
                "÷ √d_k (correct)"
            );
        }
        let help = scale_mode_help(ScaleMode::SqrtSeqLen);
        assert!(
            help.contains("√seq_len") && help.contains("√src_len"),
            "{help}"
        );
    }

    #[test]
    fn word_order_is_invisible_only_without_positions_and_without_the_mask() {
        assert!(word_order_text(false, false).contains("cannot tell word order"));
        for (p, c) in [(false, true), (true, false), (true, true)] {
            let text = word_order_text(p, c);
            assert!(!text.contains("cannot"), "{p} {c}: {text}");
        }
        assert!(word_order_text(false, true).contains("causal mask still makes order matter"));
    }

    #[test]
    fn reordering_the_tokens_moves_the_columns_of_the_scores_as_well_as_the_rows() {
        let text = word_order_text(false, false);
        assert!(text.contains("the rows of every result move"), "{text}");
        assert!(
            text.contains("the columns of the scores and weights"),
            "{text}"
        );
    }

    #[test]
    fn after_a_line_that_names_the_switch_the_word_order_text_does_not_name_it_again() {
        for cross in [false, true] {
            for positional in [false, true] {
                for causal in [false, true] {
                    let text = word_order_after_switch(positional, causal, cross);
                    assert!(!text.contains("Positional encoding is"), "{text}");
                    assert!(!text.contains("positional encoding"), "{text}");
                }
            }
        }
    }

    #[test]
    fn in_cross_attention_word_order_moves_the_sources_columns_not_your_sentences() {
        for text in [
            cross_word_order_text(false),
            word_order_after_switch(false, false, true),
        ] {
            assert!(
                text.contains("reorder the source and the columns"),
                "{text}"
            );
            assert!(!text.contains("Reorder the tokens and the rows"), "{text}");
        }
        for text in [
            cross_word_order_text(true),
            word_order_after_switch(true, false, true),
        ] {
            assert!(text.contains("keys and values (in the source)"), "{text}");
            assert!(!text.contains("queries, keys and values"), "{text}");
        }
    }
}

/// Why a typed temperature cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemperatureProblem {
    /// Nothing typed.
    Empty,
    /// Not a number at all.
    NotANumber,
    /// Digits from another script, such as full-width `２`.
    OtherDigits,
    /// A number, but outside [`crate::attention::TEMPERATURE_RANGE`] (or not finite).
    OutOfRange,
}

/// What a temperature that cannot be used gets told: the range it must lie in, with examples
/// from that range (a matrix cell's "like 0.5 or -1.25" would suggest a negative temperature).
pub fn temperature_refusal(problem: TemperatureProblem) -> String {
    let (low, high) = (
        *crate::attention::TEMPERATURE_RANGE.start(),
        *crate::attention::TEMPERATURE_RANGE.end(),
    );
    match problem {
        TemperatureProblem::Empty => {
            format!("Type a temperature between {low} and {high}, like 0.5 or 2.")
        }
        TemperatureProblem::NotANumber => {
            format!("Not a number: type a temperature between {low} and {high}, like 0.5 or 2.")
        }
        TemperatureProblem::OtherDigits => {
            format!(
                "Use the digits 0–9: type a temperature between {low} and {high}, like 0.5 or 2."
            )
        }
        TemperatureProblem::OutOfRange => format!("Use a temperature between {low} and {high}."),
    }
}
