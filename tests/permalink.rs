//! Share links: every valid state survives a round trip through the URL fragment, and every
//! damaged, hand-edited or hostile fragment is read without a panic into a usable state, with
//! a notice for each part that had to be dropped.

// Native tests: proptest is a native-only dev-dependency.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{
    tokenize, Config, Init, Matrix, ScaleMode, Stage, WeightName, Weights,
};
use attention_lens::formats::permalink::{
    decode, encode, history_step, panel_shape, panels, Decoded, HistoryStep, ShareState,
    MAX_FRAGMENT_LEN, MAX_NOTICES,
};
use attention_lens::formats::scenario::Scenario;
use attention_lens::state::{EditTarget, Model};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// The keys of the documented format, in the order they are written.
const KEYS: [&str; 36] = [
    "v", "s", "d", "h", "causal", "pe", "scale", "t", "pf", "tile", "seed", "wq", "wk", "wv", "wo",
    "e", "src", "se", "blk", "norm", "act", "dff", "w1", "b1", "w2", "b2", "g1", "be1", "g2",
    "be2", "quiz", "qn", "stage", "head", "row", "cell",
];

/// Cases of the round-trip and damage properties.
const CASES: u32 = 384;

/// Cases of the arbitrary-bytes fuzz property run by `cargo test`.
const FUZZ_CASES: u32 = 20_000;

// ---------------------------------------------------------------------------------------------
// Helpers.

/// The first value of each key of a fragment.
fn pairs(fragment: &str) -> BTreeMap<&str, &str> {
    let mut out = BTreeMap::new();
    for part in fragment.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        out.entry(key).or_insert(value);
    }
    out
}

/// Characters allowed in a URL fragment that no browser or chat app rewrites.
fn is_fragment_safe(fragment: &str) -> bool {
    fragment
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~%&=,;:".contains(&b))
}

/// What every decoded state must satisfy, whatever the input.
fn assert_usable(decoded: &Decoded) {
    let state = &decoded.state;
    let model = &state.model;
    assert!(
        model.trace().is_ok(),
        "decoded model does not trace: {model:?}"
    );
    assert!(model.config.validate().is_ok());
    assert!(state.head < model.config.n_heads, "head {}", state.head);
    if let Some((panel, row, col)) = &state.cell {
        let (rows, cols) = panel_shape(model, panel).expect("the cell's panel exists");
        assert!(*row < rows && *col < cols);
    }
    for vector in model.embedding_overrides.values() {
        assert_eq!(vector.len(), model.config.d_model);
    }
    assert!(decoded.notices.len() <= MAX_NOTICES);
    assert!(decoded.notices.iter().all(|n| !n.is_empty()));
    // What was read is itself a link that reads back in full.
    let again = decode(&encode(state));
    assert_eq!(again.notices, Vec::<String>::new());
    assert_eq!(&again.state, state);
}

/// Decodes and checks usability.
fn read(fragment: &str) -> Decoded {
    let decoded = decode(fragment);
    assert_usable(&decoded);
    decoded
}

/// Decodes a fragment expected to give exactly one notice, and returns it.
fn one_notice(fragment: &str) -> (ShareState, String) {
    let decoded = read(fragment);
    assert_eq!(
        decoded.notices.len(),
        1,
        "{fragment}: {:?}",
        decoded.notices
    );
    (decoded.state, decoded.notices[0].clone())
}

/// A state that uses every key: d_model 6 with 3 heads, so that any prefix of its link that
/// stops before `h` still has a valid head count.
fn rich_state() -> ShareState {
    let mut model = Model::default();
    model
        .set_sentence("Le chat 🐈 a dit « שלום » & 猫+犬 = 100%!")
        .unwrap();
    model.set_d_model(6).unwrap();
    model.set_n_heads(3).unwrap();
    model.config.causal = true;
    model.config.positional_encoding = true;
    model.config.scale = ScaleMode::None;
    model.config.temperature = 0.75;
    model.seed = 7;
    let q = EditTarget::Weight(WeightName::Q);
    model.set_cell(q, 0, 0, 0.5).unwrap();
    model.set_cell(q, 5, 5, -1234.5678).unwrap();
    model.fill(EditTarget::Weight(WeightName::V), Init::Random(3));
    model
        .set_cell(EditTarget::Weight(WeightName::V), 2, 1, 1e-300)
        .unwrap();
    model
        .set_cell(EditTarget::Weight(WeightName::V), 3, 1, -0.0)
        .unwrap();
    model.fill(EditTarget::Weight(WeightName::O), Init::Identity);
    model.set_cell(EditTarget::Embeddings, 1, 2, 0.125).unwrap();
    model.set_cell(EditTarget::Embeddings, 2, 0, -3.0).unwrap();
    model.set_cell(EditTarget::Embeddings, 9, 5, 2.5).unwrap();
    model.set_prefill(Some(4)).unwrap();
    model.set_tile(Some(3)).unwrap();
    ShareState {
        model,
        stage: Stage::Softmax,
        head: 2,
        row: Some(5),
        cell: Some(("weights-h2".to_string(), 1, 3)),
        quiz: Some(3),
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies.

/// Words from many scripts, with the punctuation a URL gives meaning to.
const WORDS: &[&str] = &[
    "I",
    "am",
    "hungry",
    "the",
    "cat",
    "sat",
    "don't",
    "café",
    "nai\u{308}ve",
    "😀",
    "👨\u{200D}👩\u{200D}👧",
    "🇫🇷",
    "👍🏽",
    "שלום",
    "עולם",
    "مرحبا",
    "猫",
    "日本語",
    "한국어",
    "Привет",
    ",",
    "!",
    "?",
    "&",
    "=",
    "%",
    "%20",
    "#",
    "+",
    "a+b",
    ";",
    ":",
    ".",
    "\"",
    "<",
    "/",
    "x=y&z",
    "100%",
    "~",
    "'",
    "\\",
    "\u{FEFF}",
];

fn sentence() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(
            (
                prop::sample::select(WORDS),
                prop::sample::select(&[" ", "  ", "\t", ""][..]),
            ),
            1..8,
        ),
        any::<bool>(),
    )
        .prop_map(|(words, padded)| {
            let mut s: String = words.iter().map(|(w, sep)| format!("{w}{sep}")).collect();
            if padded {
                s = format!(" {s} ");
            }
            s
        })
        .prop_filter("tokenizes", |s| tokenize(s).is_ok())
}

/// Any finite `f64` below 2²¹ in size, subnormals included, with all 52 bits of mantissa.
fn finite_up_to_a_million() -> impl Strategy<Value = f64> {
    (any::<bool>(), 0u64..=1043, any::<u64>()).prop_map(|(negative, exponent, mantissa)| {
        f64::from_bits(
            (u64::from(negative) << 63) | (exponent << 52) | (mantissa & ((1 << 52) - 1)),
        )
    })
}

/// Any finite `f64` at all.
fn any_finite() -> impl Strategy<Value = f64> {
    any::<f64>().prop_filter("finite", |x| x.is_finite())
}

/// Values as learners type them (−1e6 to 1e6 with up to 4 decimals), and arbitrary ones.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (-10_000_000_000i64..=10_000_000_000).prop_map(|n| n as f64 / 1e4),
        2 => (-100i64..=100).prop_map(|n| n as f64 / 10.0),
        1 => finite_up_to_a_million(),
        1 => prop::sample::select(vec![0.0, -0.0, 1.0, -1.0, 0.1, 1e-7, 123456.789]),
    ]
}

fn temperature() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(1.0),
        prop::sample::select(vec![0.01, 0.1, 0.5, 2.0, 100.0]),
        0.01f64..=100.0,
    ]
}

/// A matrix: the default, or `d × d` generated values.
fn matrix(d: usize) -> impl Strategy<Value = Option<Vec<f64>>> {
    prop_oneof![
        Just(None),
        prop::collection::vec(value(), d * d).prop_map(Some),
    ]
}

fn model() -> impl Strategy<Value = Model> {
    (2usize..=16)
        .prop_flat_map(|d| {
            (
                Just(d),
                prop::sample::select(Config::valid_head_counts(d)),
                sentence(),
            )
        })
        .prop_flat_map(|(d, n_heads, sentence)| {
            let mut tokens = tokenize(&sentence).unwrap();
            tokens.extend(["dog", "🙂", "&=%"].map(String::from));
            (
                (
                    Just(sentence),
                    Just(d),
                    Just(n_heads),
                    any::<bool>(),
                    any::<bool>(),
                    prop::sample::select(ScaleMode::ALL.to_vec()),
                    temperature(),
                    prop_oneof![Just(42u64), any::<u64>()],
                ),
                [matrix(d), matrix(d), matrix(d), matrix(d)],
                prop::collection::btree_map(
                    prop::sample::select(tokens),
                    prop::collection::vec(value(), d),
                    0..4,
                ),
            )
        })
        .prop_map(
            |((sentence, d, n_heads, causal, pe, scale, temperature, seed), ws, overrides)| {
                let mut weights = Weights::new(Init::Default, d);
                for (name, values) in WeightName::ALL.into_iter().zip(ws) {
                    if let Some(values) = values {
                        *weights.get_mut(name) = Matrix::from_row_slice(d, d, &values);
                    }
                }
                Model {
                    sentence,
                    config: Config {
                        d_model: d,
                        n_heads,
                        causal,
                        positional_encoding: pe,
                        scale,
                        temperature,
                        ..Config::default()
                    },
                    weights,
                    embedding_overrides: overrides.into_iter().collect(),
                    seed,
                    // Switched off, the block is not in the link: its defaults for this width.
                    block: attention_lens::attention::Block::new(
                        d,
                        attention_lens::attention::Block::default_d_ff(d),
                    ),
                    ..Model::default()
                }
            },
        )
}

/// A share state around `model`: any stage, any head, and a cell of a panel it shows, or none.
fn state_for(model: Model) -> impl Strategy<Value = ShareState> {
    let n_heads = model.config.n_heads;
    let panels = panels(&model);
    (
        Just(model),
        prop::sample::select(Stage::ALL.to_vec()),
        0..n_heads,
        prop::option::of((prop::sample::select(panels), any::<usize>(), any::<usize>())),
        prop::option::of(1..u64::MAX),
    )
        .prop_map(|(model, stage, head, cell, quiz)| ShareState {
            model,
            stage,
            head,
            row: None,
            cell: cell.map(|((name, (rows, cols)), r, c)| (name, r % rows, c % cols)),
            quiz,
        })
}

fn state() -> impl Strategy<Value = ShareState> {
    model()
        .prop_filter("traces", |m| m.trace().is_ok())
        .prop_flat_map(state_for)
}

/// Text that looks like a fragment: known keys, stray keys and damaged values.
fn fragment_like() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        4 => prop::sample::select(KEYS.to_vec()).prop_map(String::from),
        1 => "[a-z]{0,6}",
    ];
    let value = prop_oneof![
        "[0-9]{0,3}",
        "-?[0-9]{0,4}\\.?[0-9]{0,3}(e-?[0-9]{1,3})?",
        "([0-9.e-]{0,6},){0,20}[0-9.e-]{0,6}",
        "[a-z_]{0,12}",
        "[%0-9A-Fa-f]{0,9}",
        "([a-z%0-9]{0,4}:([0-9.-]{0,4},){0,5}[0-9.-]{0,4};?){0,4}",
        "[a-z_]{0,8}-h[0-9]\\.[0-9]{1,2}\\.[0-9]{1,2}",
        prop::sample::select(vec![
            "inf",
            "NaN",
            "-infinity",
            "1e999",
            "",
            "=",
            "%",
            "%F0%9F"
        ])
        .prop_map(String::from),
        ".{0,12}",
    ];
    prop::collection::vec((key, prop::option::of(value)), 0..24).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(k, v)| match v {
                Some(v) => format!("{k}={v}"),
                None => k,
            })
            .collect::<Vec<_>>()
            .join("&")
    })
}

// ---------------------------------------------------------------------------------------------
// Round trips.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn every_valid_state_survives_a_round_trip(state in state()) {
        let fragment = encode(&state);
        prop_assert!(is_fragment_safe(&fragment), "{fragment}");
        prop_assert!(fragment.starts_with("v=1"));
        let decoded = decode(&fragment);
        prop_assert_eq!(decoded.notices, Vec::<String>::new());
        prop_assert_eq!(&decoded.state, &state);
        let with_hash = decode(&format!("#{fragment}"));
        prop_assert_eq!(with_hash.state, state);
    }

    #[test]
    fn numbers_of_any_size_survive_a_round_trip(
        model in model(),
        values in prop::collection::vec(any_finite(), 4),
    ) {
        // W_v may hold huge values: they reach the output but never a softmax.
        let mut model = model;
        model.weights.w_o = Init::Default.matrix(WeightName::O, model.config.d_model);
        let d = model.config.d_model;
        for (k, x) in values.into_iter().enumerate() {
            model.weights.w_v[(k % d, (k * 7) % d)] = x;
        }
        prop_assume!(model.trace().is_ok());
        let state = ShareState { model, ..ShareState::default() };
        let decoded = decode(&encode(&state));
        prop_assert_eq!(decoded.notices, Vec::<String>::new());
        prop_assert_eq!(decoded.state, state);
    }

    #[test]
    fn random_damage_to_a_link_is_read_safely(
        mutations in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let mut bytes = encode(&rich_state()).into_bytes();
        for (at, byte) in mutations {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        let fragment = String::from_utf8_lossy(&bytes);
        let decoded = read(&fragment);
        assert_dropped_parts_are_reported(&fragment, &decoded);
    }

    #[test]
    fn arbitrary_text_is_read_safely(text in ".{0,300}") {
        read(&text);
    }

    #[test]
    fn fragment_like_text_is_read_safely(fragment in fragment_like()) {
        let decoded = read(&fragment);
        assert_dropped_parts_are_reported(&fragment, &decoded);
    }

    #[test]
    fn a_link_from_a_newer_version_loads_what_it_can(
        state in state(),
        version in 2u32..1000,
        extra in "x[a-z]{1,8}=[a-z0-9]{0,8}",
    ) {
        let current = encode(&state);
        let fragment = format!(
            "{}&{extra}",
            current.replacen("v=1", &format!("v={version}"), 1)
        );
        let decoded = read(&fragment);
        let expected = format!(
            "This link was made by a newer version (v={version}); what could be read was loaded."
        );
        prop_assert_eq!(decoded.notices, vec![expected]);
        prop_assert_eq!(decoded.state, state);
    }
}

/// Unknown keys, repeated keys and a version other than 1 must each leave a notice.
fn assert_dropped_parts_are_reported(fragment: &str, decoded: &Decoded) {
    let mut seen: Vec<&str> = Vec::new();
    let mut dropped = false;
    let mut newer = false;
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    for part in fragment.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        if key == "v" && !seen.contains(&"v") {
            newer = value.parse::<u64>().is_ok_and(|v| v > 1);
            dropped |= value != "1";
        }
        dropped |= seen.contains(&key) && KEYS.contains(&key);
        dropped |= !KEYS.contains(&key) && !newer;
        seen.push(key);
    }
    if dropped {
        assert!(
            !decoded.notices.is_empty(),
            "{fragment:?} lost parts without a notice"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Fuzzing with arbitrary bytes, bounded so it runs with every `cargo test`.

proptest! {
    #![proptest_config(ProptestConfig {
        cases: FUZZ_CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_break_the_link_or_scenario_readers(
        bytes in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let text = String::from_utf8_lossy(&bytes);
        let decoded = decode(&text);
        prop_assert!(decoded.state.model.trace().is_ok());
        prop_assert!(decoded.state.head < decoded.state.model.config.n_heads);
        if let Ok(scenario) = Scenario::from_json(&text) {
            let _ = scenario.to_inputs();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Truncation.

#[test]
fn every_truncation_of_a_real_link_is_read_safely_and_keeps_its_complete_parts() {
    let state = rich_state();
    let full = encode(&state);
    assert!(full.is_ascii());
    for cut in 0..=full.len() {
        let prefix = &full[..cut];
        let decoded = read(prefix);
        let (complete, partial) = match prefix.rfind('&') {
            Some(i) => (&prefix[..i], &prefix[i + 1..]),
            None => ("", prefix),
        };
        let partial_key = partial.split('=').next().unwrap_or_default();
        let reread = encode(&decoded.state);
        let got = pairs(&reread);
        for (key, value) in pairs(complete) {
            if key != partial_key && key != "v" {
                assert_eq!(got.get(key), Some(&value), "cut at {cut}: {key} was lost");
            }
        }
        if partial.is_empty() || cut == full.len() {
            assert_eq!(decoded.notices, Vec::<String>::new(), "cut at {cut}");
        }
        let original = pairs(&full);
        let counted = |s: &str| s.matches(',').count();
        if ["wq", "wk", "wv", "wo"].contains(&partial_key) {
            let cut_value = partial.split_once('=').map_or("", |(_, v)| v);
            if counted(cut_value) < counted(original[partial_key]) {
                assert!(!decoded.notices.is_empty(), "cut at {cut}: silent");
                assert!(!got.contains_key(partial_key), "cut at {cut}");
            }
        }
    }
    assert_eq!(decode(&full).state, state);
}

// ---------------------------------------------------------------------------------------------
// Compactness.

#[test]
fn the_default_state_is_just_the_version() {
    assert_eq!(encode(&ShareState::default()), "v=1");
}

#[test]
fn an_empty_fragment_gives_the_default_state_and_no_notices() {
    for fragment in ["", "#", "v=1", "#v=1", "&&", "v=1&"] {
        let decoded = read(fragment);
        assert_eq!(decoded.state, ShareState::default(), "{fragment:?}");
        assert_eq!(decoded.notices, Vec::<String>::new(), "{fragment:?}");
    }
}

#[test]
fn only_parts_that_differ_from_the_defaults_are_written() {
    let mut state = ShareState::default();
    state.model.set_sentence("the cat").unwrap();
    state.model.config.causal = true;
    state.stage = Stage::Scores;
    state.head = 1;
    state.cell = Some(("scores-h1".into(), 0, 1));
    assert_eq!(
        encode(&state),
        "v=1&s=the%20cat&causal=1&stage=scores&head=1&cell=scores-h1.0.1"
    );
}

#[test]
fn one_edited_cell_writes_one_matrix_with_short_numbers() {
    let mut state = ShareState::default();
    let default_q = Init::Default.matrix(WeightName::Q, 4);
    state.model.weights.w_q[(0, 0)] = 0.5;
    state.model.weights.w_q[(0, 1)] = -0.25;
    state.model.weights.w_q[(0, 2)] = 1e-7;
    state.model.weights.w_q[(0, 3)] = 2e21;
    state.model.weights.w_q[(1, 0)] = 3.0;
    let fragment = encode(&state);
    let values: Vec<&str> = fragment
        .strip_prefix("v=1&wq=")
        .expect("only W_q is written")
        .split(',')
        .collect();
    assert_eq!(values.len(), 16);
    assert_eq!(values[..5], [".5", "-.25", "1e-7", "2e21", "3"]);
    // Row-major: the second row starts at the fifth number.
    assert_eq!(values[5].parse::<f64>().unwrap(), default_q[(1, 1)]);
    assert_eq!(decode(&fragment).state, state);
}

#[test]
fn text_is_percent_encoded_so_any_unicode_survives() {
    let mut state = ShareState::default();
    state.model.set_sentence("猫 & 犬 = 😀 #1 50% a+b").unwrap();
    let fragment = encode(&state);
    assert!(is_fragment_safe(&fragment));
    assert!(fragment.contains("%26") && fragment.contains("%2B") && fragment.contains("%25"));
    assert_eq!(decode(&fragment).state, state);
}

#[test]
fn a_plus_sign_is_a_plus_and_raw_unicode_is_accepted() {
    let decoded = read("s=a+b&x");
    assert_eq!(decoded.state.model.sentence, "a+b");
    let decoded = read("s=猫%20が好き");
    assert_eq!(decoded.state.model.sentence, "猫 が好き");
}

// ---------------------------------------------------------------------------------------------
// One notice per problem.

#[test]
fn a_matrix_with_the_wrong_count_is_reset_with_a_notice() {
    let fifteen = vec!["1"; 15].join(",");
    let (state, notice) = one_notice(&format!("v=1&wq={fifteen}"));
    assert_eq!(
        notice,
        "The link's W_q has 15 numbers, but d_model 4 needs 16: W_q was reset to its default."
    );
    assert_eq!(state.model.weights, Weights::new(Init::Default, 4));
}

#[test]
fn matrices_with_words_or_infinities_are_reset_with_a_notice() {
    let with = |bad: &str| format!("v=1&wk={bad}{}", ",1".repeat(15));
    let (_, notice) = one_notice(&with("abc"));
    assert_eq!(
        notice,
        "The link's W_k has “abc”, which is not a number: W_k was reset to its default."
    );
    for bad in ["inf", "NaN", "1e999", "-infinity"] {
        let (state, notice) = one_notice(&with(bad));
        assert!(notice.contains("not a finite number"), "{notice}");
        assert_eq!(
            state.model.weights.w_k,
            Init::Default.matrix(WeightName::K, 4)
        );
    }
    let (_, notice) = one_notice("wv=1,%zz");
    assert!(notice.contains("W_v is damaged"), "{notice}");
    let (_, notice) = one_notice(&format!("wo={}", ",".repeat(60_000)));
    assert!(notice.contains("60001 numbers"), "{notice}");
}

#[test]
fn a_link_from_a_newer_version_says_so() {
    let (state, notice) = one_notice("v=2&s=hello%20world&colour=red");
    assert_eq!(
        notice,
        "This link was made by a newer version (v=2); what could be read was loaded."
    );
    assert_eq!(state.model.sentence, "hello world");
    for v in ["0", "one", "-1", ""] {
        let (_, notice) = one_notice(&format!("v={v}"));
        assert!(notice.contains("is not one this app knows"), "{notice}");
    }
}

#[test]
fn unusable_sentences_fall_back_to_the_default_with_a_notice() {
    let (state, notice) = one_notice("s=");
    assert_eq!(
        notice,
        "The sentence in the link is empty: the default sentence is used."
    );
    assert_eq!(state.model.sentence, "I am hungry");
    let (_, notice) = one_notice("s=%20%20");
    assert!(notice.contains("is empty"));
    let (_, notice) = one_notice(&format!("s={}", "w%20".repeat(40)));
    assert_eq!(
        notice,
        "The sentence in the link has 40 tokens, but at most 32 fit: the default sentence is used."
    );
    for broken in ["s=%E2%28%A1", "s=50%", "s=%zzhello", "s=%F0%9F"] {
        let (state, notice) = one_notice(broken);
        assert!(notice.contains("damaged"), "{broken}: {notice}");
        assert_eq!(state.model.sentence, "I am hungry");
    }
}

#[test]
fn unknown_and_repeated_keys_are_ignored_with_a_notice() {
    let (state, notice) = one_notice("v=1&colour=red&s=hi");
    assert_eq!(
        notice,
        "The link has a part this version does not know (“colour”): it was ignored."
    );
    assert_eq!(state.model.sentence, "hi");
    let decoded = read("a=1&b=2&c=3&d2=4&e2=5&a=6");
    assert_eq!(
        decoded.notices,
        ["The link has parts this version does not know (“a”, “b”, “c” and 2 more): they were ignored."]
    );
    let (state, notice) = one_notice("s=first&d=6&s=second&d=8");
    assert_eq!(
        notice,
        "The link sets “s” and “d” more than once: the first value was used."
    );
    assert_eq!(state.model.sentence, "first");
    assert_eq!(state.model.config.d_model, 6);
}

#[test]
fn the_page_options_people_write_into_a_link_pass_without_a_notice() {
    let decoded = read("v=1&s=hi&present=1&theme=dark&embed=1&controls=0");
    assert_eq!(decoded.notices, Vec::<String>::new());
    assert_eq!(decoded.state.model.sentence, "hi");
}

#[test]
fn a_bad_d_model_falls_back_to_the_default_width_and_its_matrices() {
    for bad in ["40", "1", "0", "-4", "four", "", "99999999999999999999999"] {
        let (state, notice) = one_notice(&format!("d={bad}"));
        assert!(notice.starts_with("The link's d_model is"), "{notice}");
        assert_eq!(state.model.config.d_model, 4);
    }
    let sixteen = vec!["1"; 16].join(",");
    let decoded = read(&format!("d=40&h=4&wq={sixteen}&e=cat:1,2,3,4"));
    assert_eq!(decoded.notices.len(), 2, "{:?}", decoded.notices);
    assert_eq!(
        decoded.notices[1],
        "Without a usable d_model, the link's W_q and the edited embeddings could not be read: \
         the defaults are used."
    );
    let model = &decoded.state.model;
    assert_eq!((model.config.d_model, model.config.n_heads), (4, 4));
    assert_eq!(model.weights, Weights::new(Init::Default, 4));
    assert!(model.embedding_overrides.is_empty());
}

#[test]
fn a_head_count_that_does_not_divide_d_model_becomes_the_nearest_valid_one() {
    let (state, notice) = one_notice("d=6&h=4");
    assert_eq!(
        notice,
        "The link asks for “4” heads, but the number of heads must be a whole number from 1 to 8 \
         that divides d_model 6: 3 heads are used."
    );
    assert_eq!(state.model.config.n_heads, 3);
    let (state, _) = one_notice("d=16&h=99");
    assert_eq!(state.model.config.n_heads, 8);
    let (state, _) = one_notice("h=x");
    assert_eq!(state.model.config.n_heads, 2);
    let (state, notice) = one_notice("d=5");
    assert!(notice.contains("does not say how many heads"), "{notice}");
    assert_eq!(state.model.config.n_heads, 1);
}

#[test]
fn bad_switches_scale_temperature_and_seed_each_give_a_notice() {
    let cases = [
        ("causal=yes", "“causal” should be 0 or 1"),
        ("pe=2", "“pe” should be 0 or 1"),
        ("scale=sqrt", "scaling “sqrt” is not one of"),
        ("t=0", "temperature “0” is not a number from 0.01 to 100"),
        ("t=1000", "temperature"),
        ("t=nan", "temperature"),
        ("t=", "temperature"),
        ("seed=-1", "seed “-1” is not a whole number"),
    ];
    for (fragment, expected) in cases {
        let (state, notice) = one_notice(fragment);
        assert!(notice.contains(expected), "{fragment}: {notice}");
        assert_eq!(state, ShareState::default(), "{fragment}");
    }
}

#[test]
fn bad_embedding_entries_keep_their_toy_embedding() {
    let (state, notice) = one_notice("e=cat:1,2,3;dog:1,2,3,4");
    assert_eq!(
        notice,
        "The link's embedding for “cat” has 3 numbers, but d_model 4 needs 4: “cat” keeps its toy \
         embedding."
    );
    assert_eq!(state.model.embedding_overrides.len(), 1);
    assert_eq!(state.model.embedding_overrides["dog"], [1.0, 2.0, 3.0, 4.0]);
    let (_, notice) = one_notice("e=cat1,2,3,4");
    assert!(notice.contains("has no “:”"), "{notice}");
    let (_, notice) = one_notice("e=%20:1,2,3,4");
    assert!(notice.contains("does not name a token"), "{notice}");
    let (state, notice) = one_notice("e=cat:1,2,3,4;cat:5,6,7,8");
    assert!(notice.contains("more than once"), "{notice}");
    assert_eq!(state.model.embedding_overrides["cat"], [1.0, 2.0, 3.0, 4.0]);
    let many: Vec<String> = (0..300).map(|i| format!("t{i}:0,0,0,0")).collect();
    let (state, notice) = one_notice(&format!("e={}", many.join(";")));
    assert!(notice.contains("the last 44 were ignored"), "{notice}");
    assert_eq!(state.model.embedding_overrides.len(), 256);
}

#[test]
fn matrices_too_large_to_compute_with_are_all_reset() {
    let huge = vec!["1e300"; 16].join(",");
    let (state, notice) = one_notice(&format!("wq={huge}&wk={huge}&e=am:1e300,1,1,1"));
    assert!(
        notice.contains("too large to compute attention"),
        "{notice}"
    );
    assert_eq!(state.model.weights, Weights::new(Init::Default, 4));
    assert!(state.model.embedding_overrides.is_empty());
}

#[test]
fn a_missing_stage_head_or_cell_falls_back_with_a_notice() {
    let (state, notice) = one_notice("stage=attention");
    assert_eq!(
        notice,
        "The link's stage “attention” does not exist: the first stage, Input X, is shown."
    );
    assert_eq!(state.stage, Stage::Input);
    let (state, notice) = one_notice("stage=softmax&head=2");
    assert_eq!(
        notice,
        "The link shows head 3, but this model has 2 heads: head 1 is shown."
    );
    assert_eq!((state.stage, state.head), (Stage::Softmax, 0));
    let (_, notice) = one_notice("head=-1");
    assert!(notice.contains("is not a head number"), "{notice}");
    let (_, notice) = one_notice(&format!("head={}", usize::MAX));
    assert!(notice.contains("this model has 2 heads"), "{notice}");

    let (state, notice) = one_notice("cell=scores-h2.0.0");
    assert!(
        notice.contains("a cell of S₃, which this model does not show"),
        "{notice}"
    );
    assert_eq!(state.cell, None);
    let (_, notice) = one_notice("cell=positional.0.0");
    assert!(notice.contains("does not show"), "{notice}");
    let (_, notice) = one_notice("cell=scores-h1.3.0");
    assert_eq!(
        notice,
        "The link highlights row 4, column 1 of S₂, which has 3 rows and 3 columns: \
         no cell is highlighted."
    );
    for bad in [
        "scores-h1",
        "scores-h1.0",
        "1.2",
        "..",
        "scores-h1.a.0",
        "%zz.0.0",
    ] {
        let (state, notice) = one_notice(&format!("cell={bad}"));
        assert!(
            notice.contains("should read panel.row.column"),
            "{bad}: {notice}"
        );
        assert_eq!(state.cell, None);
    }
    let state = read("pe=1&cell=positional.2.3").state;
    assert_eq!(state.cell, Some(("positional".to_string(), 2, 3)));
}

#[test]
fn a_link_that_is_too_long_is_refused_whole() {
    let fragment = format!("v=1&s=hi&x={}", "a".repeat(MAX_FRAGMENT_LEN));
    let (state, notice) = one_notice(&fragment);
    assert!(
        notice.starts_with("This link is too long to read"),
        "{notice}"
    );
    assert_eq!(state, ShareState::default());
}

#[test]
fn hostile_links_at_the_length_limit_are_read_without_trouble() {
    let room = MAX_FRAGMENT_LEN - 16;
    let stray_keys: Vec<String> = (0..room / 7).map(|i| format!("k{i:04}")).collect();
    let hostile = [
        stray_keys.join("&"),
        "&".repeat(room),
        "=".repeat(room),
        format!("s={}", "a%20".repeat(room / 5)),
        format!("s={}", "%".repeat(room)),
        format!("e={}", "x;".repeat(room / 2)),
        format!("e={}", "x:1,2,3,4;".repeat(room / 10)),
        format!("cell={}", ".".repeat(room)),
        format!("wq={}", "9".repeat(room)),
        format!("t=.{}1", "0".repeat(room)),
    ];
    for fragment in hostile {
        let decoded = read(&fragment);
        assert!(!decoded.notices.is_empty() || fragment.starts_with('&'));
    }
}

#[test]
fn a_garbled_link_gives_a_short_list_of_notices() {
    let fragment = "v=9&s=&d=1&causal=x&pe=x&scale=x&t=x&seed=x&wq=1&wk=1&wv=1&wo=1&e=x\
                    &stage=x&head=x&cell=x&v=2";
    let decoded = read(fragment);
    assert_eq!(decoded.notices.len(), MAX_NOTICES);
    assert!(decoded
        .notices
        .last()
        .unwrap()
        .contains("more parts of the link"));
    assert_eq!(decoded.state, ShareState::default());
}

#[test]
fn notices_quote_hostile_text_briefly() {
    let (_, notice) = one_notice(&format!("stage={}%0A%1B", "x".repeat(500)));
    assert!(notice.chars().count() < 120, "{notice}");
    assert!(!notice.chars().any(char::is_control), "{notice}");
}

// ---------------------------------------------------------------------------------------------
// History.

#[test]
fn stages_sentences_and_presets_push_while_edits_and_scrubs_replace() {
    let before = ShareState::default();
    assert_eq!(history_step(&before, &before.clone()), HistoryStep::Keep);

    let mut next = before.clone();
    next.stage = Stage::Scores;
    assert_eq!(history_step(&before, &next), HistoryStep::Push);

    let mut next = before.clone();
    next.model.set_sentence("the cat sat").unwrap();
    assert_eq!(history_step(&before, &next), HistoryStep::Push);

    let mut next = before.clone();
    next.model.config.causal = true;
    assert_eq!(history_step(&before, &next), HistoryStep::Push);

    // A preset or a fill changes many numbers at once.
    let mut next = before.clone();
    next.model
        .fill(EditTarget::Weight(WeightName::K), Init::Identity);
    assert_eq!(history_step(&before, &next), HistoryStep::Push);
    let scenario = Scenario {
        w_q: Some(vec![vec![0.0, 1.0, 0.0, 0.0]; 4]),
        ..Scenario::default()
    };
    let preset = scenario.to_model().unwrap();
    let next = ShareState {
        model: preset,
        ..before.clone()
    };
    assert_eq!(history_step(&before, &next), HistoryStep::Push);

    // One cell, and every further step of dragging it, replaces.
    let mut edited = before.clone();
    edited
        .model
        .set_cell(EditTarget::Weight(WeightName::V), 1, 2, 0.37)
        .unwrap();
    assert_eq!(history_step(&before, &edited), HistoryStep::Replace);
    let mut dragged = edited.clone();
    dragged
        .model
        .set_cell(EditTarget::Weight(WeightName::V), 1, 2, 0.47)
        .unwrap();
    assert_eq!(history_step(&edited, &dragged), HistoryStep::Replace);

    // The first edit of an embedding is one number, though it creates a whole edited row.
    let mut embedded = before.clone();
    embedded
        .model
        .set_cell(EditTarget::Embeddings, 0, 0, 0.9)
        .unwrap();
    assert_eq!(history_step(&before, &embedded), HistoryStep::Replace);

    let mut next = before.clone();
    next.model.config.temperature = 2.5;
    next.head = 1;
    next.cell = Some(("scores-h1".into(), 0, 0));
    assert_eq!(history_step(&before, &next), HistoryStep::Replace);

    // Turning the quiz on is a step; another question set only refreshes the link.
    let mut quiz = before.clone();
    quiz.quiz = Some(1);
    assert_eq!(history_step(&before, &quiz), HistoryStep::Push);
    let mut another = quiz.clone();
    another.quiz = Some(2);
    assert_eq!(history_step(&quiz, &another), HistoryStep::Replace);
}

#[test]
fn the_quiz_and_its_question_set_round_trip_and_bad_values_are_named() {
    let state = |quiz| ShareState {
        quiz,
        ..ShareState::default()
    };
    assert_eq!(encode(&state(Some(1))), "v=1&quiz=1");
    assert_eq!(encode(&state(Some(12))), "v=1&quiz=1&qn=12");
    assert_eq!(decode("v=1&quiz=1&qn=12").state.quiz, Some(12));
    assert_eq!(decode("v=1&quiz=1").state.quiz, Some(1));
    assert_eq!(decode("v=1&quiz=0").state.quiz, None);
    for (fragment, words) in [
        ("v=1&quiz=maybe", "neither 0 nor 1"),
        ("v=1&quiz=1&qn=0", "question set"),
        ("v=1&quiz=1&qn=-3", "question set"),
        ("v=1&qn=4", "the quiz is off"),
    ] {
        let decoded = decode(fragment);
        assert!(
            decoded.notices.iter().any(|n| n.contains(words)),
            "{fragment}: {:?}",
            decoded.notices
        );
    }
    assert_eq!(decode("v=1&quiz=1&qn=0").state.quiz, Some(1));
    assert_eq!(decode("v=1&qn=4").state.quiz, None);
}

#[test]
fn the_source_and_the_block_survive_a_round_trip_and_bad_parts_are_named() {
    let mut model = Model::default();
    model.set_source("le chat 🐈 noir").unwrap();
    model.set_cross(true);
    model.set_block_on(true);
    model.set_norm(attention_lens::attention::Norm::Pre);
    model.set_activation(attention_lens::attention::Activation::Gelu);
    model.set_d_ff(5).unwrap();
    model
        .set_cell(
            EditTarget::Block(attention_lens::attention::BlockParam::W2),
            4,
            3,
            -2.5,
        )
        .unwrap();
    model
        .set_cell(EditTarget::SourceEmbeddings, 2, 1, 0.75)
        .unwrap();
    let state = ShareState {
        model,
        stage: Stage::Norm1,
        head: 0,
        row: None,
        cell: Some(("norm_1".to_string(), 1, 2)),
        quiz: None,
    };
    let link = encode(&state);
    for key in [
        "src=",
        "se=",
        "blk=1",
        "norm=pre",
        "act=gelu",
        "dff=5",
        "w2=",
        "stage=norm-1",
    ] {
        assert!(link.contains(key), "{key} missing from {link}");
    }
    let decoded = decode(&link);
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    assert_eq!(decoded.state, state);
    // Off, the block's stage is refused with a notice naming it.
    let refused = decode("v=1&stage=ffn-hidden");
    assert_eq!(refused.state.stage, Stage::Input);
    assert!(refused.notices[0].contains("belongs to the transformer block"));
    // A source with the causal mask: the mask gives way, with a notice.
    let both = decode("v=1&causal=1&src=a%20b");
    assert!(both.state.model.cross && !both.state.model.config.causal);
    assert!(both.notices[0].contains("belongs to"));
}

#[test]
fn block_parts_without_the_block_and_source_rows_without_a_source_are_ignored_with_a_notice() {
    // Found by fuzzing: `dff=2` alone was read into the hidden block, which no link writes.
    let d = decode("s=t&dff=2&se=a:1,2,3,4");
    assert!(!d.state.model.block_on && !d.state.model.cross);
    assert_eq!(d.state.model.block.d_ff(), 16);
    assert!(d.state.model.source_overrides.is_empty());
    assert!(d
        .notices
        .iter()
        .any(|n| n.contains("“dff”") && n.contains("blk=1")));
    assert!(d.notices.iter().any(|n| n.contains("no source sentence")));
    let again = decode(&encode(&d.state));
    assert!(again.notices.is_empty());
    assert_eq!(again.state, d.state);
}

#[test]
fn switching_the_source_or_the_block_and_its_menus_is_a_back_step() {
    let before = ShareState::default();
    let mut cross = before.clone();
    cross.model.cross = true;
    assert_eq!(history_step(&before, &cross), HistoryStep::Push);
    let mut other_source = cross.clone();
    other_source.model.source = "la souris".into();
    assert_eq!(history_step(&cross, &other_source), HistoryStep::Push);

    let mut block = before.clone();
    block.model.block_on = true;
    assert_eq!(history_step(&before, &block), HistoryStep::Push);
    let mut pre = block.clone();
    pre.model.block.norm = attention_lens::attention::Norm::Pre;
    assert_eq!(history_step(&block, &pre), HistoryStep::Push);
    let mut gelu = block.clone();
    gelu.model.block.activation = attention_lens::attention::Activation::Gelu;
    assert_eq!(history_step(&block, &gelu), HistoryStep::Push);

    // One number of the block scrubbed is a fine adjustment; a filled block matrix is a step.
    let mut nudged = block.clone();
    nudged
        .model
        .set_cell(
            EditTarget::Block(attention_lens::attention::BlockParam::W1),
            0,
            0,
            0.25,
        )
        .unwrap();
    assert_eq!(history_step(&block, &nudged), HistoryStep::Replace);
    let mut filled = block.clone();
    filled.model.fill(
        EditTarget::Block(attention_lens::attention::BlockParam::W1),
        Init::Zero,
    );
    assert_eq!(history_step(&block, &filled), HistoryStep::Push);
}

#[test]
fn rotary_positions_shared_heads_and_the_window_survive_a_round_trip() {
    let mut model = Model::default();
    model.set_d_model(8).unwrap();
    model.set_n_heads(4).unwrap();
    model
        .set_config(Config {
            causal: true,
            ..model.config
        })
        .unwrap();
    model
        .set_rope(Some(attention_lens::attention::Rope {
            theta: 500.0,
            pairing: attention_lens::attention::Pairing::Interleaved,
        }))
        .unwrap();
    let note = model.set_kv_heads(2).unwrap();
    assert!(note.contains("W_k and W_v are now 8 × 4"), "{note}");
    model.set_window(Some(3)).unwrap();
    model.weights.w_k[(1, 3)] = 0.25;
    let state = ShareState {
        model,
        ..ShareState::default()
    };
    let fragment = encode(&state);
    assert!(fragment.contains("&rope=500,i&kv=2&win=3"), "{fragment}");
    let decoded = decode(&fragment);
    assert_eq!(decoded.notices, Vec::<String>::new());
    assert_eq!(decoded.state, state);
    // A link that asks for what cannot be keeps the rest, with a notice each.
    let bad = decode("v=1&d=6&h=2&rope=10000&kv=4&win=0");
    assert_eq!(bad.notices.len(), 3, "{:?}", bad.notices);
    assert!(
        bad.notices[0].contains("d_k must be even"),
        "{:?}",
        bad.notices
    );
    assert_eq!(bad.state.model.config.rope, None);
}

#[test]
fn the_llama_preset_s_block_survives_a_round_trip() {
    let preset = attention_lens::presets::find("llama").unwrap();
    let state = ShareState {
        model: preset.scenario().to_model().unwrap(),
        ..ShareState::default()
    };
    let fragment = encode(&state);
    assert!(fragment.contains("&nt=rmsnorm&act=swiglu"), "{fragment}");
    let decoded = decode(&fragment);
    assert_eq!(decoded.notices, Vec::<String>::new());
    assert_eq!(decoded.state, state);
}

#[test]
fn a_cell_the_stage_does_not_draw_is_named_by_its_symbol() {
    use attention_lens::formats::permalink::cell_off_stage;
    let notice = cell_off_stage("weights-h0", false);
    assert!(
        notice.contains("a cell of A₁, which this stage does not draw"),
        "{notice}"
    );
    assert!(!notice.contains("weights-h0"), "{notice}");
    // An embed's reader followed no link: the embed's view of the stage leaves the cell out.
    let embed = cell_off_stage("d_q", true);
    assert!(
        embed.starts_with("This embed's address highlights a cell of ∂L/∂Q"),
        "{embed}"
    );
    // A name the app does not know is quoted as the link wrote it.
    assert!(cell_off_stage("nonsense", false).contains("“nonsense”"));
}
