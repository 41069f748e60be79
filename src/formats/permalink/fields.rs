//! The pieces of a share-link fragment, and the notices about the parts that could not be used,
//! in words a learner reads.

use super::percent::percent_decode;
use super::{KEYS, MAX_NOTICES};

/// How many unknown keys a notice names before it only counts the rest.
pub(super) const LISTED: usize = 3;

/// Notices, capped at [`MAX_NOTICES`] so a garbled link gives a readable list.
#[derive(Default)]
pub(super) struct Notices {
    list: Vec<String>,
    total: usize,
}

impl Notices {
    pub(super) fn add(&mut self, notice: String) {
        if self.list.len() < MAX_NOTICES {
            self.list.push(notice);
        }
        self.total += 1;
    }

    pub(super) fn finish(mut self) -> Vec<String> {
        if self.total > MAX_NOTICES {
            self.list.truncate(MAX_NOTICES - 1);
            self.list.push(format!(
                "{} more parts of the link could not be used and were left at their defaults.",
                self.total - self.list.len()
            ));
        }
        self.list
    }
}

/// A raw piece of the link, quoted for a notice, %-codes decoded where possible.
pub(super) fn shown(raw: &str) -> String {
    quote(&percent_decode(raw).unwrap_or_else(|| raw.to_string()))
}

/// Text quoted for a notice: control characters replaced, and cut short so a garbled link does
/// not flood the screen.
pub(super) fn quote(text: &str) -> String {
    const LONGEST: usize = 24;
    let mut out: String = text
        .chars()
        .take(LONGEST)
        .map(|c| if c.is_control() { '�' } else { c })
        .collect();
    if text.chars().nth(LONGEST).is_some() {
        out.push('…');
    }
    format!("“{out}”")
}

/// Joins names as English prose: `a`, `a and b`, `a, b and c`.
pub(super) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Sorts `items` and drops repeats.
fn sort_unique<T: Ord>(items: &mut Vec<T>) {
    items.sort_unstable();
    items.dedup();
}

/// The pairs of a fragment: the first value of each known key, and what was left out.
pub(super) struct Fields<'a> {
    /// The first value of each of [`KEYS`], by position.
    values: [Option<&'a str>; KEYS.len()],
    /// How many distinct unknown keys there are.
    pub(super) unknown: usize,
    /// The first few of them, in link order, to name in the notice.
    pub(super) first_unknown: Vec<&'a str>,
    /// The known keys given more than once.
    pub(super) repeated: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    pub(super) fn split(fragment: &'a str) -> Self {
        let mut fields = Fields {
            values: [None; KEYS.len()],
            unknown: 0,
            first_unknown: Vec::new(),
            repeated: Vec::new(),
        };
        let mut unknown = Vec::new();
        for part in fragment.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            match KEYS.iter().position(|k| *k == key) {
                // The page's own option, read with its query string.
                None if crate::formats::page::FRAGMENT_OPTIONS.contains(&key) => {}
                Some(i) => {
                    if fields.values[i].is_some() {
                        if !fields.repeated.contains(&KEYS[i]) {
                            fields.repeated.push(KEYS[i]);
                        }
                    } else {
                        fields.values[i] = Some(value);
                    }
                }
                None => {
                    if fields.first_unknown.len() < LISTED && !fields.first_unknown.contains(&key) {
                        fields.first_unknown.push(key);
                    }
                    unknown.push(key);
                }
            }
        }
        // Sorted once, so a link of thousands of stray keys is still read in a blink.
        sort_unique(&mut unknown);
        fields.unknown = unknown.len();
        fields
    }

    pub(super) fn get(&self, key: &str) -> Option<&'a str> {
        KEYS.iter()
            .position(|k| *k == key)
            .and_then(|i| self.values[i])
    }
}

#[cfg(test)]
mod tests {
    use super::sort_unique;
    use crate::attention::SplitMix64;

    #[test]
    fn sort_unique_sorts_and_drops_repeats_like_the_standard_library() {
        let mut rng = SplitMix64::new(7);
        for len in [0usize, 1, 2, 3, 10, 100, 1000] {
            let items: Vec<u64> = (0..len).map(|_| rng.next_u64() % 50).collect();
            let mut ours = items.clone();
            sort_unique(&mut ours);
            let mut expected = items;
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(ours, expected, "{len} items");
        }
    }
}
