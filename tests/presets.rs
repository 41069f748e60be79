//! Every preset parses, validates, runs, and shows the pattern its caption promises.
//!
//! The general checks run every preset; then one test per preset asserts its caption on the
//! weights with the expected numbers worked out by hand from its matrices.

// Native tests: they read files and run the CLI, which the browser target cannot.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{forward, Matrix, ScaleMode, Trace};
use attention_lens::formats::scenario::Scenario;
use attention_lens::presets::{self, Claim, Preset};
use std::collections::BTreeSet;
use std::path::Path;

const TOL: f64 = 1e-6;

fn assert_close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() < TOL,
        "{what}: expected {expected}, got {actual}"
    );
}

fn preset(key: &str) -> &'static Preset {
    presets::find(key).unwrap_or_else(|| panic!("no preset {key}"))
}

fn trace(key: &str) -> Trace {
    forward(&preset(key).inputs()).unwrap()
}

fn weights(trace: &Trace, head: usize) -> &Matrix {
    &trace.heads[head].weights
}

#[test]
fn every_file_in_assets_presets_is_a_listed_preset_and_the_other_way_round() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/presets");
    let files: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".json"))
        .collect();
    let listed: BTreeSet<String> = presets::all()
        .iter()
        .map(|p| format!("{}.json", p.key))
        .collect();
    assert_eq!(files, listed);
    assert!(presets::all().len() >= 5);
}

#[test]
fn every_preset_parses_validates_and_runs_with_every_matrix_written_out() {
    for p in presets::all() {
        let (scenario, inputs) = Scenario::parse_inputs(p.json)
            .unwrap_or_else(|e| panic!("preset {} is invalid: {e}", p.key));
        assert_eq!(scenario, p.scenario());
        assert_eq!(inputs, p.inputs());
        assert!((4..=8).contains(&scenario.d_model), "{}: d_model", p.key);
        assert_eq!(scenario.scale, ScaleMode::SqrtHeadDim, "{}", p.key);
        assert_eq!(scenario.temperature, 1.0, "{}", p.key);
        for (name, matrix) in [
            ("embeddings", &scenario.embeddings),
            ("w_q", &scenario.w_q),
            ("w_k", &scenario.w_k),
            ("w_v", &scenario.w_v),
            ("w_o", &scenario.w_o),
        ] {
            assert!(matrix.is_some(), "{}: {name} is not written out", p.key);
        }
        let trace = forward(&inputs).unwrap();
        for head in &trace.heads {
            for i in 0..trace.seq_len() {
                assert_close(
                    head.weights.row(i).sum(),
                    1.0,
                    &format!("{} row sum", p.key),
                );
            }
        }
    }
}

#[test]
fn every_preset_has_a_title_a_caption_and_claims_that_hold() {
    let mut keys = BTreeSet::new();
    for p in presets::all() {
        assert!(keys.insert(p.key), "{} is listed twice", p.key);
        assert_eq!(
            Scenario::from_json(p.json).unwrap().title.as_ref(),
            Some(&p.title)
        );
        assert!(!p.title.is_empty() && p.title != p.key);
        assert!(p.caption.len() > 200, "{}: the caption is too short", p.key);
        // Only a preset to train, whose random weights promise nothing yet, claims nothing.
        assert!(
            !p.claims.is_empty() || p.scenario().training.is_some(),
            "{} claims nothing",
            p.key
        );
        assert_eq!(p.claim_holds(), Ok(()), "{}", p.key);
    }
}

#[test]
fn a_claim_that_fails_says_which_tokens_and_what_was_found() {
    let p = preset("pronoun");
    let mut inputs = p.inputs();
    inputs.weights.w_q.fill(0.0);
    let trace = forward(&inputs).unwrap();
    // With no queries every weight is 1/8, so "it" gives sushi 0.125, no more than the rest.
    let err = p.claims[0].check(&trace).unwrap_err();
    assert!(err.contains("“it”") && err.contains("“sushi”"), "{err}");
    assert!(err.contains("0.125"), "{err}");
    let missing = Claim {
        head: 5,
        query: 0,
        keys: &[0],
        at_least: 0.5,
    };
    assert!(missing.check(&trace).unwrap_err().contains("no head 6"));
}

#[test]
fn first_look_hungry_looks_at_i_and_head_two_is_the_diagonal() {
    let t = trace("first-look");
    assert_eq!(t.tokens, ["I", "am", "hungry"]);
    // Head 1: q(hungry) = 2·(d3 → column 1) = (2, 0), k(I) = (2, 0), every other q·k is 0.
    // Row hungry: [4, 0, 0] / √2 = [2√2, 0, 0] → e^(2√2) / (e^(2√2) + 2) ≈ 0.894285.
    let h1 = weights(&t, 0);
    assert_close(h1[(2, 0)], 0.894285, "hungry → I");
    assert_close(h1[(2, 1)], (1.0 - 0.894285) / 2.0, "hungry → am");
    // I and am have zero queries in head 1: an even third each.
    for i in 0..2 {
        for j in 0..3 {
            assert_close(h1[(i, j)], 1.0 / 3.0, "even row");
        }
    }
    // Head 2: the three words are 2·(unit vectors 120° apart), q = k. Self 4, other −2 (with
    // 1.73 for √3, am·am = 1 + 1.73² = 3.9929). Row I: [4, −2, −2] / √2 →
    // 1 / (1 + 2e^(−6/√2)) ≈ 0.972064.
    let h2 = weights(&t, 1);
    assert_close(h2[(0, 0)], 0.972064, "I → I");
    for i in 0..3 {
        assert!(h2[(i, i)] > 0.97, "head 2, row {i}: {}", h2[(i, i)]);
    }
    // W_v = W_o = I: output(hungry, d1) = Σ_j head-1 weight(hungry, j) · x_j[d1] = 0.894285.
    assert_close(t.output[(2, 0)], 0.894285, "hungry's output in d1");
}

#[test]
fn pronoun_it_looks_at_sushi_me_at_i_and_happy_at_me() {
    let t = trace("pronoun");
    assert_eq!(
        t.tokens,
        ["I", "like", "sushi", "because", "it", "makes", "me", "happy"]
    );
    // Head 1: q(it)·k(sushi) = 3·3 = 9, q(me)·k(I) = 9, everything else 0; ÷ √4 = 4.5.
    // With 8 tokens: e^4.5 / (e^4.5 + 7) ≈ 0.927848.
    let h1 = weights(&t, 0);
    assert_close(h1[(4, 2)], 0.927848, "it → sushi");
    assert_close(h1[(6, 0)], 0.927848, "me → I");
    // Head 2: q(happy)·k(me) = 9 in the same way.
    let h2 = weights(&t, 1);
    assert_close(h2[(7, 6)], 0.927848, "happy → me");
    // Rows with nothing to ask stay even: 1/8.
    for (head, row) in [(0, 0), (0, 2), (0, 7), (1, 4), (1, 0)] {
        for j in 0..8 {
            assert_close(weights(&t, head)[(row, j)], 0.125, "even row");
        }
    }
    // V = X: it's output gains the thing mark d1 from sushi.
    assert_close(t.output[(4, 0)], 0.927848, "it's output in d1");
}

#[test]
fn adjective_dog_looks_at_lazy_and_jumped_at_cat_under_the_causal_mask() {
    let t = trace("adjective");
    assert!(t.config.causal);
    // Head 1: q(noun)·k(adjective) = 9, ÷ √3 = 3√3 ≈ 5.196152. dog sees 7 tokens:
    // e^(3√3) / (e^(3√3) + 6) ≈ 0.967842.
    let h1 = weights(&t, 0);
    assert_close(h1[(6, 5)], 0.967842, "dog → lazy");
    // The direction: lazy (row 5) asks nothing and cannot see dog; its row is even over 6.
    assert_eq!(h1[(5, 6)], 0.0);
    assert_close(h1[(5, 0)], 1.0 / 6.0, "lazy's row");
    // cat sees the and cat, neither an adjective: 1/2 each.
    assert_close(h1[(1, 0)], 0.5, "cat → the");
    assert_close(h1[(1, 1)], 0.5, "cat → cat");
    // Head 2: q(verb)·k(noun) = 9; jumped sees 3 tokens: e^(3√3) / (e^(3√3) + 2) ≈ 0.989046.
    assert_close(weights(&t, 1)[(2, 1)], 0.989046, "jumped → cat");
    // V = X: dog's output gains lazy's adjective mark d2.
    assert_close(t.output[(6, 1)], 0.967842, "dog's output in d2");
}

#[test]
fn previous_token_every_token_after_the_first_looks_one_back() {
    let t = trace("previous-token");
    assert!(t.config.causal && t.config.positional_encoding);
    let w = weights(&t, 0);
    // The first token sees only itself.
    assert_eq!(w[(0, 0)], 1.0);
    // W_q rotates (sin p, cos p) back by 1 radian and scales by 4, W_k scales by 4, so
    // q_i·k_j = 16·cos(i − 1 − j), ÷ √4 = 8·cos(i − 1 − j). Row 1 sees j = 0 (8) and j = 1
    // (8·cos 1 ≈ 4.322418): 1 / (1 + e^(4.322418 − 8)) ≈ 0.975339. The entries of W_q are
    // rounded to 4 decimals, hence the looser tolerance.
    assert!((w[(1, 0)] - 0.975339).abs() < 1e-3, "{}", w[(1, 0)]);
    for i in 1..t.seq_len() {
        assert!(w[(i, i - 1)] > 0.9, "row {i}: {}", w[(i, i - 1)]);
    }
    // W_v = W_o = I: the output of token i is close to the position (sin, cos) of token i − 1.
    for i in 1..t.seq_len() {
        let p = (i - 1) as f64;
        assert!((t.output[(i, 0)] - p.sin()).abs() < 0.05, "row {i}, d1");
        assert!((t.output[(i, 1)] - p.cos()).abs() < 0.05, "row {i}, d2");
    }
}

#[test]
fn previous_token_blurs_past_seven_tokens_as_the_caption_warns() {
    let p = preset("previous-token");
    let mut scenario = p.scenario();
    scenario.sentence = "each word looks at the one just before".into();
    scenario.embeddings = Some(vec![vec![0.0; 4]; 8]);
    let t = forward(&scenario.to_inputs().unwrap()).unwrap();
    // Token 7 finds token 0 six radians back, where cos 6 ≈ 0.96 is almost as good as cos 0.
    assert!(weights(&t, 0)[(7, 6)] < 0.9);
}

#[test]
fn sink_every_word_parks_on_once_except_dragon_which_finds_small() {
    let t = trace("sink");
    assert!(t.config.causal);
    // Every q has 3 in column 1 and once's key has 3 there: score 9 ÷ √4 = 4.5 on once, 0
    // elsewhere. The second "a" (row 6) sees 7 tokens: e^4.5 / (e^4.5 + 6) ≈ 0.937511.
    let w = weights(&t, 0);
    assert_close(w[(6, 0)], 0.937511, "a → once");
    for i in 0..8 {
        assert!(w[(i, 0)] > 0.9, "row {i}: {}", w[(i, 0)]);
    }
    // dragon: once 4.5, small 4·4 ÷ 2 = 8, six others 0: e⁸ / (e⁸ + e^4.5 + 7) ≈ 0.968480.
    assert_close(w[(8, 7)], 0.968480, "dragon → small");
    // time is a noun too, but small comes after it: it falls back on once (4 tokens visible).
    let e45 = 4.5f64.exp();
    assert_close(w[(3, 0)], e45 / (e45 + 3.0), "time → once");
}

#[test]
fn same_word_copies_share_their_weight_evenly() {
    let t = trace("same-word");
    let w = weights(&t, 0);
    // Score 9 ÷ 2 = 4.5 between copies of a word, 0 otherwise.
    // A rose row: e^4.5 / (3e^4.5 + 5) ≈ 0.327274 on each rose, 0.981822 together.
    for j in [1, 4, 7] {
        assert_close(w[(4, j)], 0.327274, "rose → rose");
    }
    // An is row: e^4.5 / (2e^4.5 + 6) ≈ 0.483874 on each is, 0.967748 together.
    assert_close(w[(2, 5)], 0.483874, "is → is");
    // The first rose cannot tell itself from the last one.
    assert_eq!(w[(1, 1)], w[(1, 7)]);
    // With positional encoding on the copies no longer score alike.
    let mut scenario = preset("same-word").scenario();
    scenario.positional_encoding = true;
    let moved = forward(&scenario.to_inputs().unwrap()).unwrap();
    let m = weights(&moved, 0);
    assert!((m[(1, 1)] - m[(1, 7)]).abs() > 0.1);
}

#[test]
fn sink_copies_the_first_tokens_value_into_almost_every_context_unless_w_v_drops_it() {
    let p = preset("sink");
    let t = trace("sink");
    let caption = &p.caption;
    assert!(!caption.contains("harmless to look"), "{caption}");
    assert!(caption.contains("between 0.93 and 1 for every word but dragon"));
    let context = &t.heads[0].context;
    let dragon = t.tokens.iter().position(|w| w == "dragon").unwrap();
    for i in 0..t.seq_len() {
        let d1 = context[(i, 0)];
        if i == dragon {
            assert!(d1 < 0.1, "dragon's d1 {d1}");
        } else {
            assert!(
                (0.925..=1.0 + TOL).contains(&d1),
                "{}: d1 {d1}",
                t.tokens[i]
            );
        }
    }
    // The first row of W_v zeroed: d1 of every context is 0, every other column unchanged.
    let mut inputs = p.inputs();
    inputs.weights.w_v.row_mut(0).fill(0.0);
    let quiet = forward(&inputs).unwrap();
    let quiet_context = &quiet.heads[0].context;
    for i in 0..t.seq_len() {
        assert_close(quiet_context[(i, 0)], 0.0, "d1 without the sink's value");
        for j in 1..4 {
            assert_close(quiet_context[(i, j)], context[(i, j)], "other columns");
        }
    }
}

#[test]
fn same_word_stops_being_a_same_word_head_with_positional_encoding() {
    let p = preset("same-word");
    assert!(p.caption.contains("stops being a same-word head at all"));
    assert!(p.caption.contains("about 0.9 of its weight on roses"));
    let mut inputs = p.inputs();
    inputs.config.positional_encoding = true;
    let t = forward(&inputs).unwrap();
    let w = weights(&t, 0);
    let own_word = |i: usize| -> f64 {
        (0..t.seq_len())
            .filter(|&j| t.tokens[j] == t.tokens[i])
            .map(|j| w[(i, j)])
            .sum()
    };
    // The first a now looks at roses, not at a.
    let roses: f64 = (0..t.seq_len())
        .filter(|&j| t.tokens[j] == "rose")
        .map(|j| w[(0, j)])
        .sum();
    assert!((roses - 0.9).abs() < 0.05, "{roses}");
    assert!(own_word(0) < 0.5);
    // Several rows no longer put most of their weight on their own word.
    assert!((0..t.seq_len()).filter(|&i| own_word(i) < 0.5).count() >= 3);
}

#[test]
fn pronoun_head_two_looks_at_me_but_brings_nothing_back() {
    let p = preset("pronoun");
    assert!(p.caption.contains("head 2 brings nothing back from me"));
    let t = trace("pronoun");
    let (happy, me) = (7, 6);
    assert_eq!(
        (t.tokens[happy].as_str(), t.tokens[me].as_str()),
        ("happy", "me")
    );
    assert!((weights(&t, 1)[(happy, me)] - 0.93).abs() < 0.01);
    // Head 2's slice of V (d5–d8) is all zeros for me, so happy's head-2 context is near 0.
    assert!(t.heads[1].v.row(me).iter().all(|&v| v == 0.0));
    assert!(t.heads[1].context.row(happy).iter().all(|v| v.abs() < 0.05));
}

#[test]
fn the_translation_preset_aligns_each_word_with_its_translation_across_the_reordering() {
    let p = preset("translation");
    let t = trace("translation");
    let source = t
        .source
        .as_ref()
        .expect("the preset attends to a French source");
    assert_eq!(t.tokens, ["the", "black", "cat", "sleeps"]);
    assert_eq!(source.tokens, ["le", "chat", "noir", "dort"]);
    let head = &t.heads[0];
    // "a query scores 9 with its translation and 0 with every other word"
    let translation = [0, 2, 1, 3];
    for (q, &k) in translation.iter().enumerate() {
        for j in 0..4 {
            let want = if j == k { 9.0 } else { 0.0 };
            assert_close(head.scores[(q, j)], want, "score");
        }
        // "about 0.97 on the match"
        let w = head.weights[(q, k)];
        assert!((0.965..0.975).contains(&w), "{w}");
    }
    // "the lines of black and cat cross": black's key comes after cat's.
    assert!(translation[1] > translation[2]);
    // "each English word's output is mostly its French word's vector"
    for (q, &k) in translation.iter().enumerate() {
        assert!(t.output[(q, k)] > 0.95);
    }
    assert!(p.caption.contains("0.97") && p.caption.contains("÷2"));
    assert!(p.claim_holds().is_ok());
}

#[test]
fn a_preset_caption_holds_until_its_numbers_or_its_sentence_change() {
    use attention_lens::presets::CaptionState;
    let p = preset("previous-token");
    assert_eq!(
        p.caption_state(&trace("previous-token")),
        CaptionState::Holds
    );

    // The learner's own sentence: said once, without checking rows of words that are not there.
    let mut own = p.scenario();
    own.sentence = "the cat sat".into();
    own.embeddings = None;
    let t = forward(&own.to_inputs().unwrap()).unwrap();
    assert_eq!(p.caption_state(&t), CaptionState::OtherSentence);
    let text = attention_lens::words::other_sentence_text(p.key, &p.scenario().sentence, None);
    assert!(
        text.contains("“each word looks at the one before”"),
        "{text}"
    );
    assert!(text.contains("Press Restore the preset"), "{text}");
    assert!(!text.contains("  "), "no runs of spaces: {text}");
    assert!(!text.contains("token 7"), "{text}");

    // Edited numbers: the first broken claim, and how many more.
    let mut edited = p.scenario();
    edited.w_k = Some(vec![vec![0.0; 4]; 4]);
    let t = forward(&edited.to_inputs().unwrap()).unwrap();
    match p.caption_state(&t) {
        CaptionState::Broken { first, more } => {
            assert!(first.starts_with("in head 1, the row for"), "{first}");
            let failing = p.claims.iter().filter(|c| c.check(&t).is_err()).count();
            assert!(failing > 1, "a zero W_k flattens several claimed rows");
            assert_eq!(more + 1, failing);
            let said = attention_lens::words::claim_broken_text(&first, more);
            assert_eq!(said.matches("Your edits").count(), 1, "{said}");
        }
        other => panic!("expected broken claims, got {other:?}"),
    }
}

#[test]
fn the_editors_recipe_builds_a_previous_token_head_on_any_short_sentence() {
    // The numbers the recipe in the W_q and W_k editors gives, typed with two decimals.
    let (c, s) = (2.16, 3.37);
    let scenario = Scenario {
        sentence: "you can build this head too".into(),
        d_model: 4,
        n_heads: 1,
        causal: true,
        positional_encoding: true,
        embeddings: Some(vec![vec![0.0; 4]; 6]),
        w_q: Some(vec![
            vec![c, s, 0.0, 0.0],
            vec![-s, c, 0.0, 0.0],
            vec![0.0; 4],
            vec![0.0; 4],
        ]),
        w_k: Some(vec![
            vec![4.0, 0.0, 0.0, 0.0],
            vec![0.0, 4.0, 0.0, 0.0],
            vec![0.0; 4],
            vec![0.0; 4],
        ]),
        ..Scenario::default()
    };
    let t = forward(&scenario.to_inputs().unwrap()).unwrap();
    let weights = &t.heads[0].weights;
    for i in 1..t.tokens.len() {
        let row = weights.row(i);
        let top = (0..=i).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap();
        assert_eq!(top, i - 1, "row {i} looks one back: {row}");
        assert!(row[i - 1] > 0.5, "most of row {i}'s weight: {}", row[i - 1]);
    }
}

/// Whether every row's largest weight is on the key before it (the first row on itself).
fn looks_back(trace: &Trace) -> bool {
    let w = weights(trace, 0);
    (0..w.nrows()).all(|i| w.row(i).transpose().argmax().0 == i.saturating_sub(1))
}

#[test]
fn look_back_starts_random_and_learns_to_look_one_token_back_with_its_own_settings() {
    use attention_lens::attention::{train, Goal, NamedTarget, OptimizerKind, Trainable};
    let p = preset("look-back");
    let mut inputs = p.inputs();
    let training = p.scenario().to_training(&inputs).unwrap().unwrap();
    assert_eq!(training.goal, Goal::named(NamedTarget::Previous));
    assert_eq!(training.train, [Trainable::WQ, Trainable::WK]);
    assert_eq!(training.optimizer, OptimizerKind::Adam);
    assert!(inputs.config.causal && inputs.config.positional_encoding);
    assert!(
        !looks_back(&forward(&inputs).unwrap()),
        "it looks back before training"
    );
    let mut optimizer = training.optimizer().unwrap();
    let losses = train(
        &mut inputs,
        &training.goal,
        &training.train,
        &mut optimizer,
        100,
    )
    .unwrap();
    let after = forward(&inputs).unwrap();
    assert!(looks_back(&after), "{:?}", weights(&after, 0));
    // The caption: the loss falls by orders of magnitude within a few seconds of Train.
    assert!(
        losses[100] < losses[0] / 100.0,
        "{} → {}",
        losses[0],
        losses[100]
    );
    assert!(p.caption.contains("Train the weights") && p.caption.contains("left of the diagonal"));
}
