//! How a token or dimension name is written on a heatmap: with characters no drawing can show
//! replaced by visible stand-ins, and shortened to fit.
//!
//! Both the canvas and the SVG export write labels through [`label_text`]. XML 1.0 forbids most
//! control characters and the non-characters U+FFFE and U+FFFF even when escaped, so a token made
//! of one would make an exported SVG unreadable; a canvas draws them as nothing at all.

/// `label` as drawn: printable (see [`printable_char`]) and at most `max` characters, the last
/// one an ellipsis when it was shortened.
pub fn label_text(label: &str, max: usize) -> String {
    let printable = label.chars().map(printable_char);
    if label.chars().count() <= max {
        printable.collect()
    } else {
        let mut s: String = printable.take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// `c`, or a visible stand-in when `c` is a control character or a non-character: the Unicode
/// "control pictures" (␀ for U+0000 … ␟ for U+001F, ␡ for U+007F), and U+FFFD (�) for the C1
/// controls U+0080–U+009F and every non-character (U+FDD0–U+FDEF and the last two code points
/// of each plane, such as U+FFFE and U+FFFF).
pub fn printable_char(c: char) -> char {
    let code = u32::from(c);
    match code {
        0x00..=0x1F => char::from_u32(0x2400 + code).unwrap_or(char::REPLACEMENT_CHARACTER),
        0x7F => '\u{2421}',
        0x80..=0x9F | 0xFDD0..=0xFDEF => char::REPLACEMENT_CHARACTER,
        _ if code & 0xFFFE == 0xFFFE => char::REPLACEMENT_CHARACTER,
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_labels_are_shortened_with_an_ellipsis() {
        assert_eq!(label_text("extraordinary", 5), "extr…");
        assert_eq!(label_text("cat", 5), "cat");
        assert_eq!(label_text("cat", 3), "cat");
    }

    #[test]
    fn control_characters_become_their_pictures() {
        assert_eq!(label_text("\u{0}", 5), "\u{2400}");
        assert_eq!(label_text("a\u{1}b", 5), "a\u{2401}b");
        assert_eq!(label_text("\t\n\r", 5), "\u{2409}\u{240A}\u{240D}");
        assert_eq!(label_text("\u{1F}", 5), "\u{241F}");
        assert_eq!(label_text("\u{7F}", 5), "\u{2421}");
    }

    #[test]
    fn non_characters_and_c1_controls_become_the_replacement_character() {
        for c in [
            '\u{80}',
            '\u{9F}',
            '\u{FDD0}',
            '\u{FFFE}',
            '\u{FFFF}',
            '\u{10FFFF}',
        ] {
            assert_eq!(printable_char(c), '\u{FFFD}', "U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn ordinary_text_is_kept() {
        for label in [
            "sushi",
            "café",
            "👩‍👩‍👧",
            "שלום",
            "&<\"']]>",
            "\u{FFFD}",
            "\u{A0}",
        ] {
            assert_eq!(label_text(label, 10), label);
        }
    }

    #[test]
    fn a_shortened_label_is_also_made_printable() {
        assert_eq!(label_text("\u{1}\u{2}\u{3}\u{4}\u{5}\u{6}", 4), "␁␂␃…");
    }
}
