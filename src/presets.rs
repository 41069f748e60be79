//! Named scenarios whose weights were designed by hand so that a head does something
//! recognisable, each with a caption saying what to look for.
//!
//! The JSON files in `assets/presets/` are the single source: title, caption, sentence and
//! every matrix. Each preset also lists [`Claim`]s, the pattern its caption promises, stated on
//! the attention weights so it can be checked (by `tests/presets.rs`, or by the app after a
//! learner edits the numbers).

use crate::attention::{forward, Inputs, Trace};
use crate::formats::scenario::Scenario;
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
            &trace.tokens,
        )
    }

    /// `Ok` if the claim holds in `trace`, otherwise what was found instead.
    pub fn check(&self, trace: &Trace) -> Result<(), String> {
        let weights = &trace
            .heads
            .get(self.head)
            .ok_or_else(|| format!("there is no head {}", self.head + 1))?
            .weights;
        let seq_len = weights.nrows();
        if let Some(missing) = std::iter::once(self.query)
            .chain(self.keys.iter().copied())
            .find(|&i| i >= seq_len)
        {
            return Err(format!(
                "{}: there is no token {} in a sentence of {seq_len}",
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
        let strongest_other = (0..seq_len)
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

struct Source {
    key: &'static str,
    json: &'static str,
    claims: &'static [Claim],
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

// Token indices, from 0, are noted beside each claim.
const SOURCES: [Source; 6] = [
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
    },
    Source {
        key: "adjective",
        json: include_str!("../assets/presets/adjective.json"),
        claims: &[
            // the(0) cat(1) jumped(2) over(3) the(4) lazy(5) dog(6)
            claim(0, 6, &[5], 0.95),
            claim(1, 2, &[1], 0.95),
        ],
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
    },
];
