//! Splitting a sentence into tokens.
//!
//! The rule, applied left to right:
//! - white space separates tokens and is dropped;
//! - a run of letters and digits (any script) is one word token; an apostrophe between two
//!   letters stays inside the word (`don't`), and combining marks stay with the letter before
//!   them (`e` + U+0301 is one token);
//! - each CJK ideograph or kana character is a token of its own, since those scripts do not put
//!   spaces between words;
//! - every other character (punctuation, symbols, emoji) is a token of its own, keeping with it
//!   any combining marks, variation selectors, skin-tone modifiers and zero-width-joined
//!   characters that follow (so a family emoji stays one token).
//!
//! Case is kept: `I` and `i` are different tokens.

use super::error::AttentionError;

/// The most tokens a sentence may have.
pub const MAX_TOKENS: usize = 32;

/// The most characters one token may have: longer than any word of a real sentence, short
/// enough that a token's chip and the labels naming it stay readable.
pub const MAX_TOKEN_CHARS: usize = 64;

/// Splits `sentence` into tokens and checks there are between 1 and [`MAX_TOKENS`] of them,
/// none longer than [`MAX_TOKEN_CHARS`].
pub fn tokenize(sentence: &str) -> Result<Vec<String>, AttentionError> {
    let tokens = split(sentence);
    if tokens.is_empty() {
        return Err(AttentionError::EmptySentence);
    }
    if tokens.len() > MAX_TOKENS {
        return Err(AttentionError::TooManyTokens {
            count: tokens.len(),
            max: MAX_TOKENS,
        });
    }
    if let Some(long) = tokens.iter().find(|t| t.chars().count() > MAX_TOKEN_CHARS) {
        return Err(AttentionError::TokenTooLong {
            start: long.chars().take(12).collect(),
            chars: long.chars().count(),
            max: MAX_TOKEN_CHARS,
        });
    }
    Ok(tokens)
}

#[derive(PartialEq, Clone, Copy)]
enum Kind {
    Word,
    Single,
}

fn split(sentence: &str) -> Vec<String> {
    let chars: Vec<char> = sentence.chars().collect();
    let mut tokens: Vec<String> = Vec::new();
    // The kind of the token being built, if any.
    let mut open: Option<Kind> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            open = None;
        } else if is_extender(c) && open.is_some() {
            // Marks, selectors and modifiers belong to the character before them.
            push_char(&mut tokens, c);
        } else if c == '\u{200D}' {
            // A zero-width joiner glues the next character to this token.
            if open.is_some() {
                push_char(&mut tokens, c);
                if let Some(&next) = chars.get(i + 1) {
                    if !next.is_whitespace() {
                        push_char(&mut tokens, next);
                        i += 1;
                    }
                }
            }
        } else if is_cjk(c) {
            tokens.push(c.to_string());
            open = Some(Kind::Single);
        } else if c.is_alphanumeric() {
            if open == Some(Kind::Word) {
                push_char(&mut tokens, c);
            } else {
                tokens.push(c.to_string());
                open = Some(Kind::Word);
            }
        } else if is_apostrophe(c)
            && open == Some(Kind::Word)
            && i > 0
            && chars[i - 1].is_alphabetic()
            && chars
                .get(i + 1)
                .is_some_and(|n| n.is_alphabetic() && !is_cjk(*n))
        {
            push_char(&mut tokens, c);
        } else {
            tokens.push(c.to_string());
            open = Some(Kind::Single);
        }
        i += 1;
    }
    tokens
}

fn push_char(tokens: &mut [String], c: char) {
    if let Some(last) = tokens.last_mut() {
        last.push(c);
    }
}

fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}')
}

/// Characters that modify the one before them rather than standing alone.
fn is_extender(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F     // combining diacritical marks
        | 0x0483..=0x0489   // Cyrillic combining marks
        | 0x0591..=0x05BD   // Hebrew points
        | 0x0610..=0x061A | 0x064B..=0x065F | 0x0670 // Arabic marks
        | 0x0900..=0x0903 | 0x093A..=0x094F // Devanagari signs
        | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF // more combining marks
        | 0xFE00..=0xFE0F   // variation selectors
        | 0xFE20..=0xFE2F   // combining half marks
        | 0x1F3FB..=0x1F3FF // skin-tone modifiers
        | 0xE0020..=0xE007F // tag characters (flag sequences)
    )
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF     // hiragana, katakana
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xF900..=0xFAFF   // compatibility ideographs
        | 0x20000..=0x2FA1F // supplementary ideographs
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        tokenize(s).unwrap()
    }

    #[test]
    fn words_and_punctuation_are_separate_tokens() {
        assert_eq!(
            toks("I like sushi, because"),
            ["I", "like", "sushi", ",", "because"]
        );
    }

    #[test]
    fn case_and_accents_are_kept() {
        assert_eq!(toks("Café naïve"), ["Café", "naïve"]);
        // e followed by a combining acute accent stays one token.
        assert_eq!(toks("cafe\u{301}!"), ["cafe\u{301}", "!"]);
    }

    #[test]
    fn apostrophes_inside_words_stay() {
        assert_eq!(toks("don't 'quote'"), ["don't", "'", "quote", "'"]);
        assert_eq!(toks("90's"), ["90", "'", "s"]);
    }

    #[test]
    fn cjk_characters_are_their_own_tokens() {
        assert_eq!(toks("我喜欢寿司"), ["我", "喜", "欢", "寿", "司"]);
    }

    #[test]
    fn emoji_sequences_stay_whole() {
        assert_eq!(
            toks("hi 👋🏽 👩\u{200D}👩\u{200D}👧!"),
            ["hi", "👋🏽", "👩\u{200D}👩\u{200D}👧", "!"]
        );
        assert_eq!(toks("❤️ok"), ["❤️", "ok"]);
    }

    #[test]
    fn right_to_left_words_are_tokens_too() {
        assert_eq!(toks("שלום עולם"), ["שלום", "עולם"]);
    }

    #[test]
    fn an_empty_or_blank_sentence_is_an_error() {
        assert_eq!(tokenize(""), Err(AttentionError::EmptySentence));
        assert_eq!(tokenize("  \t\n"), Err(AttentionError::EmptySentence));
    }

    #[test]
    fn a_leading_combining_mark_or_joiner_does_not_panic() {
        assert_eq!(toks("\u{301}a"), ["\u{301}", "a"]);
        assert_eq!(toks("\u{200D} a"), ["a"]);
        assert_eq!(toks("a\u{200D}"), ["a\u{200D}"]);
    }

    #[test]
    fn more_than_the_maximum_is_an_error_that_says_so() {
        let long = "a ".repeat(MAX_TOKENS + 1);
        let err = tokenize(&long).unwrap_err();
        assert_eq!(err, AttentionError::TooManyTokens { count: 33, max: 32 });
        assert!(err.to_string().contains("at most 32"));
        assert_eq!(toks(&"a ".repeat(MAX_TOKENS)).len(), MAX_TOKENS);
    }

    #[test]
    fn a_token_longer_than_the_maximum_is_an_error_that_names_its_start() {
        let word = "x".repeat(MAX_TOKEN_CHARS + 1);
        let err = tokenize(&format!("a {word} b")).unwrap_err();
        assert_eq!(
            err,
            AttentionError::TokenTooLong {
                start: "x".repeat(12),
                chars: MAX_TOKEN_CHARS + 1,
                max: MAX_TOKEN_CHARS
            }
        );
        assert!(err.to_string().contains("at most 64"));
        assert_eq!(toks(&"x".repeat(MAX_TOKEN_CHARS)).len(), 1);
    }
}
