//! The two stages that run attention another way, decoding from a KV cache and FlashAttention's
//! tiles: when they are shown, how a link carries them, and that what their words say holds for
//! the numbers they are about.

// Native tests: the browser target runs its own.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{
    decode, head_tiles, Config, Init, Rope, ScaleMode, Stage, Trace, Weights,
};
use attention_lens::formats::permalink::{decode as read_link, encode, ShareState};
use attention_lens::state::Model;
use attention_lens::words::{decode_note, decode_status, run_cell_note, tiles_note, RunCell};

const SENTENCE: &str = "the cat sat on the mat";

fn model(config: Config) -> Model {
    let mut m = Model::default();
    m.set_sentence(SENTENCE).unwrap();
    m.set_d_model(config.d_model).unwrap();
    m.set_n_heads(config.n_heads).unwrap();
    m.config = config;
    m.weights = Weights::shaped(Init::Random(7), config.d_model, config.kv_width());
    m
}

fn modern() -> Config {
    Config {
        d_model: 8,
        n_heads: 2,
        causal: true,
        rope: Some(Rope::default()),
        kv_heads: Some(1),
        window: Some(3),
        ..Config::default()
    }
}

fn trace(config: Config) -> Trace {
    model(config).trace().unwrap()
}

#[test]
fn decoding_is_shown_only_under_the_causal_mask_and_without_a_source() {
    let mut m = model(modern());
    assert!(!m.order().decode && !m.order().tiles);
    m.set_prefill(Some(2)).unwrap();
    m.set_tile(Some(2)).unwrap();
    assert!(m.order().decode && m.order().tiles);
    let walk: Vec<Stage> = Stage::walk(m.order()).collect();
    let at = |s| walk.iter().position(|x| *x == s).unwrap();
    assert_eq!(at(Stage::Tiles), at(Stage::WeightedSum) + 1);
    assert_eq!(at(Stage::Decode), at(Stage::OutputProjection) + 1);
    m.config.causal = false;
    assert!(!m.order().decode, "no decoding without the mask");
    assert!(m.order().tiles, "the tiles need no mask");
    assert!(m.set_prefill(Some(0)).is_err());
    assert!(m.set_tile(Some(0)).is_err());
    assert_eq!(
        (m.prefill, m.tile),
        (Some(2), Some(2)),
        "a refused value changes nothing"
    );
}

#[test]
fn a_link_carries_the_prefill_the_block_and_the_row() {
    let mut m = model(modern());
    m.set_prefill(Some(3)).unwrap();
    m.set_tile(Some(2)).unwrap();
    let state = ShareState {
        model: m,
        stage: Stage::Decode,
        row: Some(4),
        ..ShareState::default()
    };
    let link = encode(&state);
    assert!(link.contains("&pf=3&tile=2&"), "{link}");
    assert!(link.contains("&stage=decode&row=4"), "{link}");
    let back = read_link(&link);
    assert_eq!(back.notices, Vec::<String>::new());
    assert_eq!(back.state, state);

    // Bad values are left off with a notice each; a decoding stage without the mask opens the
    // first stage.
    let bad = read_link("v=1&s=the%20cat%20sat&pf=0&tile=x&row=9");
    assert_eq!(bad.state.model.prefill, None);
    assert_eq!(bad.state.model.tile, None);
    assert_eq!(bad.state.row, None);
    assert_eq!(bad.notices.len(), 3, "{:?}", bad.notices);
    assert!(bad.notices[0].contains("prefill"), "{:?}", bad.notices);
    let off = read_link("v=1&pf=2&stage=decode");
    assert_eq!(off.state.stage, Stage::Input);
    assert!(
        off.notices[0].contains("not switched on"),
        "{:?}",
        off.notices
    );
}

#[test]
fn the_status_and_the_note_count_what_the_core_counts() {
    let t = trace(modern());
    let d = decode(&t, 3).unwrap();
    let step = &d.steps[1];
    assert_eq!(step.position, 4);
    let status = decode_status(&t, step, d.steps.len(), 3);
    assert!(
        status.starts_with("Step 2 of 3: “the (5)”, position 4"),
        "{status}"
    );
    // d_model 8, one key/value head 4 wide, two query heads, window 3: 64 + 64 + 2·2·3·4 + 64.
    assert_eq!(step.macs.cached, 64 + 64 + 48 + 64);
    assert!(status.contains("240 with the cache"), "{status}");
    assert_eq!(step.macs.recomputed, 240 + 2 * 4 * 8 * 4);
    assert!(status.contains("496 recomputing"), "{status}");
    // Keys and values of 5 tokens for 1 key/value head, 4 wide.
    assert!(status.contains("holds 40 numbers"), "{status}");

    let note = decode_note(&t, &d, 4).join("\n");
    assert!(note.contains("So does every step."), "{note}");
    assert!(note.contains("2·5·1·4 = 40"), "{note}");
    assert!(
        note.contains("it would hold 80; sharing divides it by 2"),
        "{note}"
    );
    assert!(note.contains("W = 3"), "{note}");
    assert!(note.contains("as if it stood at position 0"), "{note}");
    assert!(note.contains("its largest score "), "{note}");
    assert!(note.contains("over the keys it can see"), "{note}");
    assert!(!note.contains(" to to "), "{note}");
    // A decoder that restarts its positions turns the new key by 0 too: the token's score with
    // itself is unchanged, the cached keys' are not.
    let mistake = note
        .lines()
        .find(|l| l.starts_with("Turning the new token's query and key"))
        .unwrap();
    let (wrong, right) = mistake.split_once(" instead of ").unwrap();
    let self_score = |list: &str| {
        list.split("“the (5)” ")
            .nth(1)
            .unwrap()
            .split([',', ' ', ':'])
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(self_score(wrong), self_score(right), "{mistake}");

    assert!(!note.contains("√seq_len"), "{note}");
}

#[test]
fn the_mistaken_scale_is_named_as_something_a_decoder_cannot_know() {
    let t = trace(Config {
        scale: ScaleMode::SqrtSeqLen,
        rope: None,
        kv_heads: None,
        window: None,
        ..modern()
    });
    let d = decode(&t, 2).unwrap();
    let note = decode_note(&t, &d, 5).join("\n");
    assert!(note.contains("√seq_len = √6"), "{note}");
    assert!(note.contains("does not know how long"), "{note}");
    assert!(!note.contains("position 0"), "{note}");
    assert!(note.contains("Sharing key/value heads"), "{note}");
}

#[test]
fn the_tiles_note_says_which_blocks_the_mask_hides_and_that_the_result_is_the_row() {
    let t = trace(modern());
    // “mat” sees “sat”, “on” and “the (5)” through the window of 3: keys 1–2 are hidden.
    let tiles = head_tiles(&t.heads[0], 1.0, 2);
    let note = tiles_note(&t, 0, 5, 2, &tiles[5]).join("\n");
    assert!(note.contains("After the last of 3 blocks"), "{note}");
    // One block of the whole sentence is the only one, not "the last of 1 block".
    let whole = head_tiles(&t.heads[0], 1.0, 8);
    let one = tiles_note(&t, 0, 5, 8, &whole[5]).join("\n");
    assert!(one.contains("After the only block, o ÷ ℓ"), "{one}");
    assert!(note.contains("block 1 (keys 1–2) is hidden"), "{note}");
    assert!(note.contains("m = −∞, ℓ = 0, o = 0"), "{note}");
    assert!(!note.contains("the first block's m"), "{note}");
    assert!(note.contains("keep 6 numbers"), "{note}");
    let last = tiles[5].last().unwrap().output();
    for (c, o) in last.iter().enumerate() {
        assert!((o - t.heads[0].context[(5, c)]).abs() < 1e-14);
    }
    // Block by block, one key at a time, the maximum moves at least once somewhere: the note
    // then gives the factor that rescales what came before.
    let t = trace(Config {
        window: None,
        ..modern()
    });
    let moved = (0..t.seq_len()).any(|row| {
        let tiles = head_tiles(&t.heads[0], 1.0, 1);
        tiles_note(&t, 0, row, 1, &tiles[row])
            .join("\n")
            .contains("raises m from")
    });
    assert!(moved);
    // Four hidden blocks: every key of them "is" hidden, one subject.
    let t = trace(Config {
        window: Some(2),
        ..modern()
    });
    let tiles = head_tiles(&t.heads[0], 1.0, 1);
    let note = tiles_note(&t, 0, 5, 1, &tiles[5]).join("\n");
    assert!(
        note.contains("block 3 (key 3) and block 4 (key 4) is hidden by the mask"),
        "{note}"
    );
    // Without a mask nothing is hidden, even where a cold softmax gives keys weights too small
    // to move ℓ or o in floating point.
    let t = trace(Config {
        d_model: 4,
        n_heads: 1,
        temperature: 0.01,
        ..Config::default()
    });
    let tiles = head_tiles(&t.heads[0], 0.01, 1);
    let row = (0..t.seq_len())
        .find(|&i| tiles[i].windows(2).any(|w| w[0] == w[1]))
        .expect("a row with a block that changes nothing, for the test to mean something");
    let note = tiles_note(&t, 0, row, 1, &tiles[row]).join("\n");
    assert!(!note.contains("hidden"), "{note}");
}

#[test]
fn a_number_the_tiles_keep_is_written_out_with_its_block() {
    use attention_lens::words::{explain_tile, TileCell};
    let t = trace(Config {
        window: None,
        ..modern()
    });
    let tiles = head_tiles(&t.heads[1], 1.0, 2);
    // Query “mat”, block 2 (“sat”, “on”).
    let sum = explain_tile(&t, (1, 5), 2, 1, TileCell::Sum).unwrap();
    assert_eq!(sum.value, tiles[5][1].l);
    assert!(
        sum.title
            .starts_with("ℓ after block 2 (“sat”, “on”), query “mat”"),
        "{}",
        sum.title
    );
    assert!(
        sum.expansion.contains(" × ") && sum.expansion.contains("e^("),
        "{}",
        sum.expansion
    );
    let o = explain_tile(&t, (1, 5), 2, 2, TileCell::Output(3)).unwrap();
    assert_eq!(o.value, tiles[5][2].o[3]);
    assert!(o.title.ends_with("column d8"), "{}", o.title);
    let first = explain_tile(&t, (1, 5), 2, 0, TileCell::Rescale).unwrap();
    assert_eq!(first.value, 0.0);
    assert!(
        first.expansion.starts_with("e^(−∞ − ")
            && first
                .expansion
                .contains(") = 0: no visible key came before this block"),
        "{}",
        first.expansion
    );
    // Under the causal mask, “cat” hides the keys after it.
    let hidden = explain_tile(&t, (1, 1), 2, 1, TileCell::Sum).unwrap();
    assert!(
        hidden.expansion.contains("“sat” hidden"),
        "{}",
        hidden.expansion
    );
    assert!(
        explain_tile(&t, (1, 5), 2, 3, TileCell::Max).is_none(),
        "no fourth block"
    );
}

#[test]
fn shifting_every_position_leaves_the_scores_and_the_mistakes_change_them() {
    use attention_lens::words::stage_note;
    let t = trace(modern());
    let note = stage_note(Stage::Rotary, &t).unwrap();
    let shift = note
        .split("\n\n")
        .find(|p| p.starts_with("What it is for"))
        .unwrap();
    // Rounding only: a power of ten, or nothing at all.
    assert!(
        shift.contains("× 10⁻") || shift.contains("change by 0:"),
        "{shift}"
    );
    let mistakes = note
        .split("\n\n")
        .find(|p| p.starts_with("Two mistakes"))
        .unwrap();
    assert!(mistakes.contains("interleaved pairing"), "{mistakes}");
    assert_eq!(mistakes.matches("by up to ≈").count(), 2, "{mistakes}");
    let off = trace(Config {
        rope: None,
        ..modern()
    });
    assert!(stage_note(Stage::Rotary, &off).is_none_or(|n| !n.contains("What it is for")));
}

#[test]
fn every_matrix_is_listed_once_and_the_turned_ones_under_the_rotary_stage() {
    use attention_lens::formats::report::trace_matrices;
    let t = trace(modern());
    let listed = trace_matrices(&t);
    let mut seen = std::collections::BTreeSet::new();
    for m in &listed {
        assert!(
            seen.insert((m.key, m.head)),
            "{} of head {:?} twice",
            m.key,
            m.head
        );
    }
    for m in listed.iter().filter(|m| m.key.ends_with("_rope")) {
        assert_eq!(m.stage, Stage::Rotary, "{}", m.key);
    }
    assert_eq!(listed.iter().filter(|m| m.key == "context").count(), 2);
}

#[test]
fn the_quiz_asks_what_the_cache_keeps_and_how_much_on_the_step_on_screen() {
    use attention_lens::quiz::{question_in_view, Answer, InView, Response};
    let grouped = trace(modern());
    let plain = trace(Config {
        kv_heads: None,
        window: None,
        ..modern()
    });
    for t in [&grouped, &plain] {
        let decoded = decode(t, 1).unwrap();
        let (mut sets, mut sizes) = (0, 0);
        for step in &decoded.steps {
            let i = step.position;
            for seed in 0..12 {
                let shown = InView {
                    row: Some(i),
                    ..InView::default()
                };
                let q = question_in_view(t, None, Stage::Decode, seed, shown).unwrap();
                assert!(
                    q.prompt.contains(&format!("“{}", t.tokens[i]))
                        && q.prompt
                            .contains(&format!("position {i} (counting from 0)")),
                    "{}",
                    q.prompt
                );
                match &q.answer {
                    Answer::Set { choices, correct } => {
                        sets += 1;
                        assert_eq!(correct, &[1, 2]);
                        assert!(choices[1].contains("keys") && choices[2].contains("values"));
                        assert!(q.is_right(&Response::Set(vec![2, 1])));
                        assert!(!q.is_right(&Response::Set(vec![0, 1, 2])));
                    }
                    Answer::Count { value } => {
                        sizes += 1;
                        // Every number the step's cache holds, counted from the cache itself.
                        let held: usize = step
                            .k_cache
                            .iter()
                            .chain(&step.v_cache)
                            .map(|m| m.len())
                            .sum();
                        assert_eq!(*value, held, "{}", q.prompt);
                        let note = q.note.as_deref().unwrap();
                        assert!(note.contains(&format!("{} tokens", i + 1)), "{note}");
                        let g = t.config.n_kv_heads();
                        assert_eq!(
                            note.contains("for each of the"),
                            g < t.config.n_heads,
                            "{note}"
                        );
                    }
                    other => panic!("{other:?}"),
                }
            }
        }
        assert!(sets > 0 && sizes > 0, "{sets} {sizes}");
    }
    let bidirectional = trace(Config {
        causal: false,
        window: None,
        ..modern()
    });
    assert!(question_in_view(&bidirectional, None, Stage::Decode, 1, Default::default()).is_none());
}

#[test]
fn the_quiz_asks_the_tiles_for_the_weighted_sum_and_for_the_blocks_the_mask_hides() {
    use attention_lens::quiz::{question_in_view, Answer, InView};
    let t = trace(Config {
        window: None,
        ..modern()
    });
    let n = t.seq_len();
    let (mut results, mut idle) = (0, 0);
    for block in 1..=4 {
        for i in 0..n {
            for seed in 0..8 {
                let shown = InView {
                    row: Some(i),
                    block: Some(block),
                    ..InView::default()
                };
                let q = question_in_view(&t, None, Stage::Tiles, seed, shown).unwrap();
                let h = q.head().unwrap();
                let value = match q.answer {
                    Answer::Number { value } => value,
                    Answer::Count { value } => value as f64,
                    _ => panic!("{:?}", q.answer),
                };
                let tiles = head_tiles(&t.heads[h], t.config.temperature, block);
                let row = &tiles[i];
                if q.prompt.contains("change nothing") {
                    idle += 1;
                    // Under the causal mask the blocks wholly after the query are hidden.
                    let blocks = n.div_ceil(block);
                    let expected = blocks - (i / block + 1);
                    assert_eq!(value, expected as f64, "{}", q.prompt);
                    assert!(q.prompt.contains(&format!("in {blocks} blocks of {block}")));
                    // A hidden block leaves m, ℓ and o as they were.
                    for b in i / block + 1..blocks {
                        assert_eq!(row[b].l, row[b - 1].l);
                        assert_eq!(row[b].o, row[b - 1].o);
                    }
                } else {
                    results += 1;
                    let (_, r, c) = q.cell;
                    assert_eq!(r, i);
                    let last = row.last().unwrap();
                    assert!((last.o[c] / last.l - value).abs() < 1e-12);
                    assert_eq!(value, t.heads[h].context[(i, c)]);
                    let column = format!("column d{}", h * t.head_dim() + c + 1);
                    assert!(q.prompt.contains(&column), "{}", q.prompt);
                }
            }
        }
    }
    assert!(results > 0 && idle > 0, "{results} {idle}");
}

#[test]
fn the_note_names_the_cached_keys_the_window_hides_as_the_scores_mark_them() {
    use attention_lens::words::cached_key_label;
    let t = trace(modern());
    let decoded = decode(&t, 1).unwrap();
    let note = |row| decode_note(&t, &decoded, row).join("\n");
    // W = 3: "sat" (position 2) sees all three cached keys; "on" loses "the"; "mat" loses three.
    assert!(!note(2).contains("⊘"), "{}", note(2));
    assert!(
        note(3).contains("The key marked ⊘, “the (1)”, is outside it"),
        "{}",
        note(3)
    );
    assert!(
        note(5).contains("could stop growing at W − 1 = 2 earlier tokens"),
        "{}",
        note(5)
    );
    assert!(!note(2).contains("stop growing"), "{}", note(2));
    assert!(
        note(5).contains("The 3 keys marked ⊘, “the (1)” to “sat”, are outside it"),
        "{}",
        note(5)
    );
    // Those keys' weights are 0 in the step, as the note says.
    let step = decoded.steps.iter().find(|s| s.position == 5).unwrap();
    for head in &step.heads {
        for j in 0..3 {
            assert_eq!(head.weights[(0, j)], 0.0);
        }
        assert!(head.weights[(0, 3)] > 0.0);
    }
    assert_eq!(cached_key_label("the (1)", true), "⊘ the (1)");
    assert_eq!(cached_key_label("cat", false), "cat");
}

/// The first question of the first 40 seeds at `stage`, with `shown` on screen, that `wanted`
/// picks.
fn question_where(
    t: &Trace,
    stage: Stage,
    shown: attention_lens::quiz::InView,
    wanted: impl Fn(&attention_lens::quiz::Question) -> bool,
) -> attention_lens::quiz::Question {
    (0..40)
        .filter_map(|seed| attention_lens::quiz::question_in_view(t, None, stage, seed, shown))
        .find(|q| wanted(q))
        .unwrap_or_else(|| panic!("no such question at {stage:?} in 40 seeds"))
}

#[test]
fn the_window_is_named_where_it_hides_blocks_or_shrinks_a_rolling_cache() {
    use attention_lens::attention::{HeadMatrix, MatrixId};
    use attention_lens::quiz::{question_in_view, Answer, InView};
    use attention_lens::words::{run_cell_note, RunCell};
    let t = trace(modern());
    // The tiles of query `row` in blocks of 2, and their question on the blocks that change
    // nothing.
    let tiles_of = |row: usize| InView {
        row: Some(row),
        block: Some(2),
        ..InView::default()
    };
    let idle_at = |row: usize| {
        question_where(&t, Stage::Tiles, tiles_of(row), |q| {
            q.prompt.contains("change nothing")
        })
    };
    let says = |q: &attention_lens::quiz::Question, prompt: &str, note: &str| {
        assert!(q.prompt.contains(prompt), "{}", q.prompt);
        let written = q.note.as_deref().unwrap_or_default();
        assert!(written.contains(note), "{written}");
    };
    // “mat” at 5 with W = 3 and blocks of 2: {the, cat} is wholly hidden, by the window alone.
    let idle = idle_at(5);
    says(
        &idle,
        "the causal mask and the window hide",
        "the causal mask and the window save",
    );
    assert_eq!(idle.answer, Answer::Count { value: 1 });
    let (m, _, j) = idle.cell;
    assert!(
        matches!(m, MatrixId::Head(_, HeadMatrix::Masked)) && j < 2,
        "{:?}",
        idle.cell
    );
    // “sat” at 2 with blocks of 2: “on” is hidden, but its block holds “sat”, which counts.
    for seed in 0..40 {
        let q = question_in_view(&t, None, Stage::Tiles, seed, tiles_of(2)).unwrap();
        if q.prompt.contains("change nothing") {
            assert_eq!(q.answer, Answer::Count { value: 1 });
            assert_eq!(q.cell.2, 4, "the first key of the block {{the (5), mat}}");
        }
    }
    // “on” at 3: the window hides “the (1)” only, in a block with “cat”; the block the mask
    // hides wholly, {the (5), mat}, is the causal mask's alone.
    says(
        &idle_at(3),
        "because the causal mask hides every key",
        "the causal mask saves work.",
    );
    // The cache question says this cache keeps every row, and what a rolling one would keep.
    let shown = InView {
        row: Some(5),
        ..InView::default()
    };
    let size = question_where(&t, Stage::Decode, shown, |q| {
        matches!(q.answer, Answer::Count { .. })
    });
    assert_eq!(size.answer, Answer::Count { value: 48 });
    assert!(
        size.prompt.contains("keeps every token's row"),
        "{}",
        size.prompt
    );
    let note = size.note.clone().unwrap();
    assert!(
        note.contains("only the last 3 rows: 2 · 3 · 1 · 4 = 24"),
        "{note}"
    );
    assert_eq!(size.answer_text(), "48");
    // A cached key of an earlier token is read, not computed, by the step.
    let read = run_cell_note(&t, RunCell::CachedEarlier(1));
    assert!(read.contains("computed when “cat” was processed"), "{read}");
    assert!(!run_cell_note(&t, RunCell::Tile).contains("temperature"));
    let warm = trace(Config {
        temperature: 0.5,
        ..modern()
    });
    assert!(run_cell_note(&warm, RunCell::TileInput).contains("T = 0.5."));
    assert!(!run_cell_note(&warm, RunCell::Tile).contains("temperature"));
}

#[test]
fn the_input_note_says_what_the_window_leaves_a_token_to_see() {
    use attention_lens::words::stage_note;
    let windowed = stage_note(Stage::Input, &trace(modern())).unwrap();
    assert!(
        windowed.contains("The window W = 3 narrows that further: each token sees itself and up to 2 tokens before it."),
        "{windowed}"
    );
    let plain = stage_note(
        Stage::Input,
        &trace(Config {
            window: None,
            ..modern()
        }),
    )
    .unwrap();
    assert!(!plain.contains("window"), "{plain}");
}

#[test]
fn a_decoded_query_is_said_to_come_from_its_own_row_not_from_the_cache() {
    let t = trace(modern());
    let query = run_cell_note(&t, RunCell::Query);
    assert!(query.contains("from its own row alone"), "{query}");
    assert!(query.contains("turned by its own position"), "{query}");
    assert!(
        !query.contains("keys") && !query.contains("cache"),
        "{query}"
    );
    // The scores, by contrast, are made from the cache's rows.
    assert!(run_cell_note(&t, RunCell::Decoded).contains("from the cache's rows"));
}
