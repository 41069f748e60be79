//! Named scenarios whose weights were designed by hand so that a head does something
//! recognisable, each with a caption saying what to look for.
//!
//! The JSON files in `assets/presets/` are the single source: title, caption, sentence and
//! every matrix. Each preset also lists [`Claim`]s, the pattern its caption promises, stated on
//! the attention weights so it can be checked (by `tests/presets.rs`, or by the app after a
//! learner edits the numbers).

use crate::attention::{forward, HeadMatrix, Inputs, MatrixId, Stage, Trace};
use crate::formats::permalink::ShareState;
use crate::formats::scenario::Scenario;
use crate::panels::panel_name;
use crate::words;
use std::sync::OnceLock;

/// One promise about one row of one head's attention weights: the `keys` together get at least
/// `at_least` of the row's weight, and each of them more than any other key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Claim {
    /// The head, from 0.
    pub head: usize,
    /// The query token (the row), from 0.
    pub query: usize,
    /// The key tokens (columns), from 0.
    pub keys: &'static [usize],
    /// The least total weight on `keys`.
    pub at_least: f64,
}

impl Claim {
    /// The claim in words, naming tokens as in `trace`.
    pub fn describe(&self, trace: &Trace) -> String {
        words::claim_text(
            self.head,
            self.query,
            self.keys,
            self.at_least,
            (&trace.tokens, trace.key_tokens()),
        )
    }

    /// `Ok` if the claim holds in `trace`, otherwise what was found instead.
    pub fn check(&self, trace: &Trace) -> Result<(), String> {
        let weights = &trace
            .heads
            .get(self.head)
            .ok_or_else(|| format!("there is no head {}", self.head + 1))?
            .weights;
        let (seq_len, n_keys) = weights.shape();
        if self.query >= seq_len {
            return Err(format!(
                "{}: there is no token {} in a sentence of {seq_len}",
                self.describe(trace),
                self.query + 1
            ));
        }
        if let Some(missing) = self.keys.iter().copied().find(|&k| k >= n_keys) {
            return Err(format!(
                "{}: there is no key token {} among {n_keys}",
                self.describe(trace),
                missing + 1
            ));
        }
        let row = weights.row(self.query);
        let total: f64 = self.keys.iter().map(|&k| row[k]).sum();
        let weakest_key = self
            .keys
            .iter()
            .map(|&k| row[k])
            .fold(f64::INFINITY, f64::min);
        let strongest_other = (0..n_keys)
            .filter(|j| !self.keys.contains(j))
            .map(|j| row[j])
            .fold(f64::NEG_INFINITY, f64::max);
        if total >= self.at_least && weakest_key > strongest_other {
            Ok(())
        } else {
            Err(format!(
                "{}: found {:.3} in total, the smallest named weight {:.3}, the largest other {:.3}",
                self.describe(trace),
                total,
                weakest_key,
                strongest_other
            ))
        }
    }
}

/// Where a preset opens: the cell its caption talks about first, so the stage, the head and
/// the explanation of that cell are on screen when it loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opening {
    /// The matrix holding the cell.
    pub matrix: MatrixId,
    /// Row, from 0.
    pub row: usize,
    /// Column, from 0.
    pub col: usize,
}

impl Opening {
    /// The stage that shows the cell.
    pub fn stage(&self) -> Stage {
        self.matrix.stage()
    }

    /// The head of the cell; 0 for a matrix of the whole layer.
    pub fn head(&self) -> usize {
        match self.matrix {
            MatrixId::Head(h, _) => h,
            _ => 0,
        }
    }
}

/// A named scenario with its caption and the pattern it claims.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// The name used in URLs and file names.
    pub key: &'static str,
    /// A name for menus.
    pub title: String,
    /// What to look for.
    pub caption: String,
    /// The scenario JSON, as shipped in `assets/presets/`.
    pub json: &'static str,
    /// What the caption promises, checked on the weights.
    pub claims: &'static [Claim],
    /// The cell it opens on.
    pub opening: Opening,
    scenario: Scenario,
}

impl Preset {
    /// The scenario, ready for [`Scenario::to_inputs`].
    pub fn scenario(&self) -> Scenario {
        self.scenario.clone()
    }

    /// The checked inputs.
    ///
    /// # Panics
    /// If the shipped JSON is not a valid scenario, which `tests/presets.rs` rules out.
    pub fn inputs(&self) -> Inputs {
        self.scenario
            .to_inputs()
            .unwrap_or_else(|e| panic!("preset {} is invalid: {e}", self.key))
    }

    /// `Ok` if every claim holds on this preset's own numbers, otherwise the first that fails.
    pub fn claim_holds(&self) -> Result<(), String> {
        let trace = forward(&self.inputs()).map_err(|e| e.to_string())?;
        self.claims.iter().try_for_each(|c| c.check(&trace))
    }
}

/// How a loaded preset's caption stands against the numbers on screen.
#[derive(Debug, Clone, PartialEq)]
pub enum CaptionState {
    /// Every claim holds.
    Holds,
    /// The sentence (or the source) is no longer the preset's own: the claims name rows of
    /// words that are not there, so none is checked.
    OtherSentence,
    /// Edited numbers broke `first` claim (with what was found instead), and `more` others.
    Broken {
        /// The first claim that no longer holds, with the numbers found.
        first: String,
        /// How many more claims no longer hold.
        more: usize,
    },
}

impl Preset {
    /// Whether `trace` is still this preset's sentence (and source), and if so, which claims
    /// its numbers keep.
    pub fn caption_state(&self, trace: &Trace) -> CaptionState {
        let own = |text: Option<&str>| text.and_then(|t| crate::attention::tokenize(t).ok());
        let sentence = own(Some(&self.scenario.sentence));
        let source = own(self.scenario.source.as_deref());
        let same_source = match (&source, &trace.source) {
            (None, None) => true,
            (Some(s), Some(t)) => *s == t.tokens,
            _ => false,
        };
        if sentence.as_deref() != Some(trace.tokens.as_slice()) || !same_source {
            return CaptionState::OtherSentence;
        }
        let mut broken = self.claims.iter().filter_map(|c| c.check(trace).err());
        match broken.next() {
            None => CaptionState::Holds,
            Some(first) => CaptionState::Broken {
                first,
                more: broken.count(),
            },
        }
    }
}

/// Every preset, in menu order.
///
/// # Panics
/// On first use, if a shipped JSON file does not parse, which `tests/presets.rs` rules out.
pub fn all() -> &'static [Preset] {
    static PRESETS: OnceLock<Vec<Preset>> = OnceLock::new();
    PRESETS.get_or_init(|| SOURCES.iter().map(load).collect())
}

/// The preset called `key`.
pub fn find(key: &str) -> Option<&'static Preset> {
    all().iter().find(|p| p.key == key)
}

/// The preset a page opens on when its address holds no state.
pub const FIRST_SCREEN: &str = "first-look";

/// What a page whose address holds no state opens on: the first preset on the weight its
/// caption discusses first, so the first screen shows an attention pattern that means
/// something, with one cell explained.
pub fn first_screen() -> Option<ShareState> {
    // Only its own file is read: the menu's others wait until the menu is opened.
    let preset = SOURCES.iter().find(|s| s.key == FIRST_SCREEN).map(load)?;
    let model = preset.scenario().to_model().ok()?;
    let opening = preset.opening;
    Some(ShareState {
        row: None,
        model,
        stage: opening.stage(),
        head: opening.head(),
        cell: Some((panel_name(opening.matrix), opening.row, opening.col)),
        quiz: None,
    })
}

struct Source {
    key: &'static str,
    json: &'static str,
    claims: &'static [Claim],
    opening: Opening,
}

fn load(source: &Source) -> Preset {
    let scenario = Scenario::from_json(source.json)
        .unwrap_or_else(|e| panic!("preset {} does not parse: {e}", source.key));
    Preset {
        key: source.key,
        title: scenario
            .title
            .clone()
            .unwrap_or_else(|| source.key.to_string()),
        caption: scenario.caption.clone().unwrap_or_default(),
        json: source.json,
        claims: source.claims,
        opening: source.opening,
        scenario,
    }
}

const fn claim(head: usize, query: usize, keys: &'static [usize], at_least: f64) -> Claim {
    Claim {
        head,
        query,
        keys,
        at_least,
    }
}

/// The attention weight of `query` on `key` in `head`, on the softmax stage.
const fn weight(head: usize, query: usize, key: usize) -> Opening {
    Opening {
        matrix: MatrixId::Head(head, HeadMatrix::Weights),
        row: query,
        col: key,
    }
}

// Token indices, from 0, are noted beside each claim. Each preset opens on the weight its
// caption discusses first.
const SOURCES: [Source; 9] = [
    Source {
        key: "first-look",
        json: include_str!("../assets/presets/first-look.json"),
        claims: &[
            // I(0) am(1) hungry(2): hungry → I in head 1; the diagonal in head 2.
            claim(0, 2, &[0], 0.85),
            claim(1, 0, &[0], 0.95),
            claim(1, 1, &[1], 0.95),
            claim(1, 2, &[2], 0.95),
        ],
        // hungry → I, "the row for hungry puts about 0.89 of its weight on I".
        opening: weight(0, 2, 0),
    },
    Source {
        key: "pronoun",
        json: include_str!("../assets/presets/pronoun.json"),
        claims: &[
            // I(0) like(1) sushi(2) because(3) it(4) makes(5) me(6) happy(7)
            claim(0, 4, &[2], 0.9),
            claim(0, 6, &[0], 0.9),
            claim(1, 7, &[6], 0.9),
        ],
        // it → sushi, "the row for it puts about 0.93 of its weight on sushi".
        opening: weight(0, 4, 2),
    },
    Source {
        key: "adjective",
        json: include_str!("../assets/presets/adjective.json"),
        claims: &[
            // the(0) cat(1) jumped(2) over(3) the(4) lazy(5) dog(6)
            claim(0, 6, &[5], 0.95),
            claim(1, 2, &[1], 0.95),
        ],
        // dog → lazy, "read the row for dog".
        opening: weight(0, 6, 5),
    },
    Source {
        key: "previous-token",
        json: include_str!("../assets/presets/previous-token.json"),
        claims: &[
            // each(0) word(1) looks(2) at(3) the(4) one(5) before(6)
            claim(0, 0, &[0], 0.99),
            claim(0, 1, &[0], 0.9),
            claim(0, 2, &[1], 0.9),
            claim(0, 3, &[2], 0.9),
            claim(0, 4, &[3], 0.9),
            claim(0, 5, &[4], 0.9),
            claim(0, 6, &[5], 0.9),
        ],
        // looks → word: "every token from the second on puts over 0.9 … on its left neighbour".
        opening: weight(0, 2, 1),
    },
    Source {
        key: "sink",
        json: include_str!("../assets/presets/sink.json"),
        claims: &[
            // once(0) upon(1) a(2) time(3) there(4) was(5) a(6) small(7) dragon(8)
            claim(0, 0, &[0], 0.9),
            claim(0, 1, &[0], 0.9),
            claim(0, 2, &[0], 0.9),
            claim(0, 3, &[0], 0.9),
            claim(0, 4, &[0], 0.9),
            claim(0, 5, &[0], 0.9),
            claim(0, 6, &[0], 0.9),
            claim(0, 7, &[0], 0.9),
            claim(0, 8, &[7], 0.95),
        ],
        // time → once: "Even time … falls back on once".
        opening: weight(0, 3, 0),
    },
    Source {
        key: "same-word",
        json: include_str!("../assets/presets/same-word.json"),
        claims: &[
            // a(0) rose(1) is(2) a(3) rose(4) is(5) a(6) rose(7)
            claim(0, 0, &[0, 3, 6], 0.95),
            claim(0, 1, &[1, 4, 7], 0.95),
            claim(0, 2, &[2, 5], 0.95),
            claim(0, 3, &[0, 3, 6], 0.95),
            claim(0, 4, &[1, 4, 7], 0.95),
            claim(0, 5, &[2, 5], 0.95),
            claim(0, 6, &[0, 3, 6], 0.95),
            claim(0, 7, &[1, 4, 7], 0.95),
        ],
        // the second rose → the first: "the three roses … share the weight, about 0.33 each".
        opening: weight(0, 4, 1),
    },
    Source {
        key: "look-back",
        json: include_str!("../assets/presets/look-back.json"),
        // Random weights promise no pattern: the head learns one when the learner trains it
        // (`tests/presets.rs` checks that it does).
        claims: &[],
        // the(0) cat(1) sat(2): sat's row, where training moves the weight onto cat.
        opening: weight(0, 2, 1),
    },
    Source {
        key: "llama",
        json: include_str!("../assets/presets/llama.json"),
        claims: &[
            // the(0) cat(1) sat(2) on(3) the(4) mat(5) and(6) purred(7): head 1 looks one
            // back, head 2 at itself.
            claim(0, 1, &[0], 0.95),
            claim(0, 2, &[1], 0.95),
            claim(0, 3, &[2], 0.95),
            claim(0, 7, &[6], 0.95),
            claim(1, 2, &[2], 0.95),
            claim(1, 7, &[7], 0.95),
        ],
        // sat → cat in head 1.
        opening: weight(0, 2, 1),
    },
    Source {
        key: "translation",
        json: include_str!("../assets/presets/translation.json"),
        claims: &[
            // the(0) black(1) cat(2) sleeps(3) → le(0) chat(1) noir(2) dort(3)
            claim(0, 0, &[0], 0.95),
            claim(0, 1, &[2], 0.95),
            claim(0, 2, &[1], 0.95),
            claim(0, 3, &[3], 0.95),
        ],
        // black → noir, "the softmax puts about 0.97 on the match".
        opening: weight(0, 1, 2),
    },
];

#[cfg(test)]
mod tests {
    #[test]
    fn a_page_without_state_opens_on_an_attention_pattern_with_a_cell_explained() {
        let first = first_screen().unwrap();
        assert_eq!(first.stage, Stage::Softmax);
        let (panel, row, col) = first.cell.clone().unwrap();
        assert_eq!(panel, panel_name(MatrixId::Head(0, HeadMatrix::Weights)));
        let trace = first.model.trace().unwrap();
        assert_eq!(trace.tokens[row], "hungry");
        assert_eq!(trace.tokens[col], "I");
        // The pattern means something: hungry looks at I far more than at anything else.
        assert!(trace.heads[0].weights[(row, col)] > 0.85);
    }

    use super::*;

    #[test]
    fn every_preset_opens_on_a_weight_its_claims_check() {
        for preset in all() {
            let o = preset.opening;
            assert_eq!(o.stage(), Stage::Softmax, "{}", preset.key);
            let claimed = preset
                .claims
                .iter()
                .any(|c| c.head == o.head() && c.query == o.row && c.keys.contains(&o.col));
            // A preset to train claims nothing before it is trained.
            let trains = preset.claims.is_empty() && preset.scenario.training.is_some();
            assert!(
                claimed || trains,
                "{} opens on a cell no claim checks",
                preset.key
            );
            let trace = forward(&preset.inputs()).unwrap();
            assert!(
                o.matrix.value(&trace, o.row, o.col).is_some(),
                "{}",
                preset.key
            );
        }
    }

    #[test]
    fn a_preset_opens_on_the_row_its_caption_names() {
        let first = find("first-look").unwrap();
        let trace = forward(&first.inputs()).unwrap();
        assert_eq!(trace.tokens[first.opening.row], "hungry");
        assert_eq!(trace.tokens[first.opening.col], "I");
        assert!(first.caption.contains("the row for hungry"));
    }
}
