//! Quiz questions and worksheets, checked against the trace they are drawn from: for many
//! scenarios (self- and cross-attention, with and without the block and the mask) and seeds,
//! every stage gets a question whose expected answer is what the trace holds, the right answer
//! is accepted and a wrong one refused, and the worked arithmetic explains the same cell.

use attention_lens::attention::Stage;
use attention_lens::attention::{
    forward, Activation, BackMatrix, BackwardPass, Block, Config, Goal, HeadGrad, HeadTarget, Init,
    Inputs, LossKind, Matrix, MatrixId, NamedTarget, Norm, NormType, Rope, ScaleMode, Source,
    SplitMix64, Task, Trace, Weights,
};
use attention_lens::formats::worksheet::{
    worksheet_markdown, worksheet_questions, Backward, Picks,
};
use attention_lens::plot::parse_cell;
use attention_lens::quiz::{
    backward_question, question, question_in_view, quiz_seed, why_unasked, Answer, InView,
    Response, RunViews, Session, Slot,
};
use attention_lens::state::Model;
use attention_lens::words::{format_value, Unasked};

const WORDS: [&str; 12] = [
    "the", "cat", "sat", "on", "a", "mat", "it", "was", "warm", "and", "soft", "today",
];

/// A random valid scenario from `seed`.
fn scenario(seed: u64) -> Trace {
    let mut rng = SplitMix64::new(seed);
    let mut pick = |n: u64| (rng.next_u64() % n) as usize;
    let d_model = [2, 4, 6, 8, 12, 16][pick(6)];
    let heads = Config::valid_head_counts(d_model);
    let n_heads = heads[pick(heads.len() as u64)];
    let cross = pick(3) == 0;
    let config = Config {
        d_model,
        n_heads,
        causal: !cross && pick(2) == 0,
        positional_encoding: pick(2) == 0,
        scale: ScaleMode::ALL[pick(3)],
        temperature: [1.0, 0.5, 2.0][pick(3)],
        ..Config::default()
    };
    let words = |n: usize, pick: &mut dyn FnMut(u64) -> usize| {
        (0..n)
            .map(|_| WORDS[pick(12)])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let sentence = words(1 + pick(8), &mut pick);
    let mut inputs =
        Inputs::from_sentence(&sentence, config, Weights::new(Init::Random(seed), d_model))
            .unwrap();
    if cross {
        let source = words(1 + pick(8), &mut pick);
        inputs.source = Some(Source::from_sentence(&source, d_model).unwrap());
    }
    if pick(2) == 0 {
        let mut block = Block::new(d_model, 2 + pick(20));
        block.norm = [Norm::Post, Norm::Pre][pick(2)];
        block.activation = [Activation::Relu, Activation::Gelu][pick(2)];
        inputs.block = Some(block);
    }
    // Today's attention: rotary positions, shared key/value heads, a window, Llama's block.
    let d_k = d_model / n_heads;
    if !cross && d_k.is_multiple_of(2) && pick(2) == 0 {
        inputs.config.rope = Some(Rope::default());
    }
    let groups: Vec<usize> = (1..=n_heads)
        .filter(|g| n_heads.is_multiple_of(*g))
        .collect();
    let g = groups[pick(groups.len() as u64)];
    if g != n_heads {
        inputs.config.kv_heads = Some(g);
        inputs.weights.w_k = inputs.weights.w_k.columns(0, g * d_k).into_owned();
        inputs.weights.w_v = inputs.weights.w_v.columns(0, g * d_k).into_owned();
    }
    if inputs.config.causal && pick(2) == 0 {
        inputs.config.window = Some(2 + pick(2));
    }
    if let Some(block) = &mut inputs.block {
        if pick(2) == 0 {
            block.norm_type = NormType::RmsNorm;
            block.activation = Activation::Swiglu;
        }
    }
    forward(&inputs).unwrap()
}

/// Shown to two decimals, as the heatmaps show it, read back as a typed answer is.
fn shown(v: f64) -> f64 {
    parse_cell(&format_value(v, 2)).unwrap()
}

#[test]
fn every_stage_of_every_scenario_gets_a_question_whose_answer_is_the_trace() {
    for s in 0..60u64 {
        let trace = scenario(s);
        for stage in trace.stages() {
            for seed in 0..4u64 {
                let q = question(&trace, stage, seed).unwrap_or_else(|| panic!("{stage:?}"));
                assert_eq!(q.stage, stage);
                let (m, r, c) = q.cell;
                let cell_value = m
                    .value(&trace, r, c)
                    .unwrap_or_else(|| panic!("{stage:?} {m:?} ({r}, {c}) {:?}", trace.config));
                let worked = q.worked(&trace, None).expect("the cell is explained");
                assert_eq!(worked.value.to_bits(), cell_value.to_bits());
                match &q.answer {
                    Answer::Number { value } => {
                        // The answer is the cell's value, or the divisor for the scale stage.
                        if stage != attention_lens::attention::Stage::Scale
                            && stage != attention_lens::attention::Stage::SplitHeads
                        {
                            assert_eq!(value.to_bits(), cell_value.to_bits(), "{stage:?}");
                        }
                        assert!(q.is_right(&Response::Number(shown(*value))));
                        assert!(q.is_right(&Response::Number(shown(*value) + 0.01)));
                        assert!(!q.is_right(&Response::Number(shown(*value) + 0.05)));
                        assert!(!q.is_right(&Response::Number(f64::NAN)));
                    }
                    Answer::Count { .. } => unreachable!("the shown stages ask no count"),
                    Answer::Choice { choices, accepted } => {
                        assert!(!accepted.is_empty());
                        for &a in accepted {
                            assert!(q.is_right(&Response::Choice(a)));
                        }
                        if let Some(wrong) = (0..choices.len()).find(|i| !accepted.contains(i)) {
                            assert!(!q.is_right(&Response::Choice(wrong)));
                        }
                        // A top key is the largest of its row.
                        if let attention_lens::attention::MatrixId::Head(h, hm) = m {
                            if matches!(
                                hm,
                                attention_lens::attention::HeadMatrix::Scores
                                    | attention_lens::attention::HeadMatrix::Weights
                            ) {
                                let row = m.get(&trace).unwrap().row(r).into_owned();
                                let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                                for &a in accepted {
                                    assert_eq!(row[a], top, "head {h}");
                                }
                            }
                        }
                    }
                    Answer::Set { choices, correct } => {
                        let head = match m {
                            attention_lens::attention::MatrixId::Head(h, _) => h,
                            _ => panic!("a set question is about a head"),
                        };
                        let masked = &trace.heads[head].masked;
                        let want: Vec<usize> = (0..choices.len())
                            .filter(|&j| masked[(r, j)] == f64::NEG_INFINITY)
                            .collect();
                        assert_eq!(*correct, want);
                        assert!(q.is_right(&Response::Set(correct.iter().rev().copied().collect())));
                        let mut wrong = correct.clone();
                        match (0..choices.len()).find(|j| !correct.contains(j)) {
                            Some(j) => wrong.push(j),
                            None => {
                                wrong.pop();
                            }
                        }
                        assert!(!q.is_right(&Response::Set(wrong)));
                    }
                }
                assert!(!q.prompt.is_empty() && !q.answer_text().is_empty());
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_question_and_seeds_vary_it() {
    let trace = scenario(7);
    let stage = attention_lens::attention::Stage::WeightedSum;
    assert_eq!(question(&trace, stage, 5), question(&trace, stage, 5));
    let prompts: std::collections::BTreeSet<String> = (0..20)
        .map(|s| question(&trace, stage, s).unwrap().prompt)
        .collect();
    assert!(prompts.len() > 1);
}

#[test]
fn the_answer_key_gives_each_question_its_trace_answer_and_worked_arithmetic() {
    for s in 0..12u64 {
        let trace = scenario(s);
        let picks = Picks::Spread {
            seed: s * 31 + 1,
            count: 12,
        };
        let sheet = worksheet_markdown(&trace, None, picks, RunViews::default(), false);
        let key = worksheet_markdown(&trace, None, picks, RunViews::default(), true);
        assert_eq!(
            sheet,
            worksheet_markdown(&trace, None, picks, RunViews::default(), false),
            "same seed"
        );
        assert!(sheet.contains("Answer: ____________"));
        assert!(!sheet.contains("**Answer:**"));
        let questions = worksheet_questions(&trace, None, picks, RunViews::default());
        assert_eq!(questions.len(), 12);
        // Spread over the stages: the first and the last stage both get one.
        assert_eq!(questions[0].stage, trace.stages()[0]);
        for q in &questions {
            assert!(sheet.contains(&q.prompt));
            assert!(key.contains(&format!("**Answer:** {}", q.answer_text())));
            let worked = q.worked(&trace, None).unwrap();
            assert!(key.contains(&worked.expansion), "{}", worked.expansion);
        }
    }
}

#[test]
fn a_session_reveals_a_stage_once_and_keeps_the_tally_across_new_numbers() {
    let trace = Model::default().trace().unwrap();
    let mut session = Session::default();
    let q = question(&trace, Stage::Input, 7).unwrap();
    let input = Slot::of(&q, InView::default());
    let Answer::Number { value } = q.answer else {
        panic!("the input asks for a number");
    };
    assert!(session.outcome(input).is_none());
    assert!(!session.answer(q.clone(), input, &Response::Number(value + 0.5), "x".into()));
    // A second answer to a revealed stage changes nothing.
    assert!(!session.answer(q.clone(), input, &Response::Number(value), "y".into()));
    assert_eq!(session.answers(), &[(Stage::Input, false)]);
    assert_eq!(session.outcome(input).unwrap().given.as_deref(), Some("x"));

    session.ask_again(Stage::Input);
    assert!(session.answer(q, input, &Response::Number(value), "ok".into()));
    assert_eq!(session.right(), 1);

    // A teacher's reveal shows the answer without counting it.
    let scores = question(&trace, Stage::Scores, 7).unwrap();
    let scores_slot = Slot::of(&scores, InView::default());
    session.reveal(scores, scores_slot);
    assert_eq!(session.outcome(scores_slot).unwrap().right, None);
    assert_eq!(session.answers().len(), 2);

    assert!(session.any_revealed());
    session.hide_all();
    assert!(!session.any_revealed());
    assert!(session.outcome(input).is_none() && session.outcome(scores_slot).is_none());
    assert_eq!((session.answers().len(), session.right()), (2, 1));
}

#[test]
fn a_view_that_steps_through_a_stage_keeps_an_answer_for_each_step() {
    let trace = Model::default().trace().unwrap();
    let mut session = Session::default();
    // Presenting the projection, Q, K and V are three steps, each with its own question.
    let shown = |part| InView {
        part: Some(part),
        head: Some(0),
        ..InView::default()
    };
    let ask = |part| question_in_view(&trace, None, Stage::Projection, 7, shown(part)).unwrap();
    let (q, k) = (ask(0), ask(1));
    assert_ne!(q.cell.0, k.cell.0);
    // Each step draws its own cell: in none of these sets do the three steps all ask the same
    // row and column.
    let cells = |seed| {
        let at = |part| {
            let (_, r, c) = question_in_view(&trace, None, Stage::Projection, seed, shown(part))
                .unwrap()
                .cell;
            (r, c)
        };
        [at(0), at(1), at(2)]
    };
    assert!((0..8).all(|seed| {
        let [a, b, c] = cells(seed);
        a != b || b != c
    }));
    assert!((0..8).all(|seed| cells(seed) == cells(seed)));
    session.reveal(q.clone(), Slot::of(&q, shown(0)));
    assert!(session.outcome(Slot::of(&q, shown(0))).is_some());
    // K's step is still hidden, and its answer does not replace Q's.
    assert!(session.outcome(Slot::of(&k, shown(1))).is_none());
    session.reveal(k.clone(), Slot::of(&k, shown(1)));
    assert_eq!(session.outcome(Slot::of(&q, shown(0))).unwrap().question, q);
    assert_eq!(session.outcome(Slot::of(&k, shown(1))).unwrap().question, k);
    // A stage with no heads keeps one answer, whichever head was last on show.
    let input = question(&trace, Stage::Input, 7).unwrap();
    let on = |head| InView {
        part: None,
        head: Some(head),
        ..InView::default()
    };
    assert_eq!(Slot::of(&input, on(0)), Slot::of(&input, on(1)));
    // Another question at the stage hides all its steps.
    session.ask_again(Stage::Projection);
    assert!(!session.any_revealed());
}

#[test]
fn quiz_sets_ask_the_same_questions_again_and_differ_from_each_other() {
    let trace = Model::default().trace().unwrap();
    let prompts = |seed: u64| -> Vec<String> {
        trace
            .stages()
            .iter()
            .map(|&s| question(&trace, s, seed).unwrap().prompt)
            .collect()
    };
    assert_eq!(prompts(quiz_seed(1)), prompts(quiz_seed(1)));
    assert_ne!(prompts(quiz_seed(1)), prompts(quiz_seed(2)));
    assert_ne!(prompts(quiz_seed(2)), prompts(quiz_seed(3)));
}

#[test]
fn a_quiz_set_sheet_asks_the_app_questions_one_per_stage() {
    for s in 0..12u64 {
        let trace = scenario(s + 100);
        let set = s + 1;
        let questions = worksheet_questions(&trace, None, Picks::QuizSet(set), RunViews::default());
        let stages: Vec<Stage> = questions.iter().map(|q| q.stage).collect();
        assert_eq!(stages, trace.stages());
        let key = worksheet_markdown(&trace, None, Picks::QuizSet(set), RunViews::default(), true);
        assert!(key.contains(&format!("Question set {set}")));
        for (q, stage) in questions.iter().zip(trace.stages()) {
            assert_eq!(Some(q), question(&trace, stage, quiz_seed(set)).as_ref());
            assert!(key.contains(&format!("**Answer:** {}", q.answer_text())));
        }
    }
}

/// The trace of `sentence` (and `source`) with `config`, random weights from `seed` and the
/// block when `block` is set.
fn traced(sentence: &str, source: Option<&str>, config: Config, seed: u64) -> Trace {
    let mut inputs = Inputs::from_sentence(
        sentence,
        config,
        Weights::new(Init::Random(seed), config.d_model),
    )
    .unwrap();
    inputs.source = source.map(|s| Source::from_sentence(s, config.d_model).unwrap());
    forward(&inputs).unwrap()
}

/// A configuration of `d_model` and `n_heads`, otherwise the standard one.
fn config(d_model: usize, n_heads: usize) -> Config {
    Config {
        d_model,
        n_heads,
        causal: false,
        positional_encoding: true,
        scale: ScaleMode::SqrtHeadDim,
        temperature: 1.0,
        ..Config::default()
    }
}

/// Every question `trace` asks at `stage` over the first `n` seeds.
fn asked(trace: &Trace, stage: Stage, n: u64) -> Vec<attention_lens::quiz::Question> {
    (0..n).filter_map(|s| question(trace, stage, s)).collect()
}

#[test]
fn the_answer_key_carries_every_note_of_the_worked_arithmetic() {
    let mut notes = 0;
    for s in 0..24u64 {
        let trace = scenario(s);
        for picks in [Picks::Spread { seed: s, count: 16 }, Picks::QuizSet(s + 1)] {
            let key = worksheet_markdown(&trace, None, picks, RunViews::default(), true);
            for q in worksheet_questions(&trace, None, picks, RunViews::default()) {
                if let Some(note) = q.worked(&trace, None).unwrap().note {
                    notes += 1;
                    assert!(key.contains(&note), "{note}\nmissing from\n{key}");
                }
            }
        }
    }
    assert!(notes > 100, "the scenarios exercise notes: {notes}");
}

#[test]
fn the_highest_raw_score_is_asked_before_the_mask_when_a_mask_follows() {
    let causal = Config {
        causal: true,
        ..config(4, 2)
    };
    let masked = traced("the cat sat on a mat", None, causal, 3);
    for q in asked(&masked, Stage::Scores, 8) {
        assert!(q.prompt.contains("before the mask"), "{}", q.prompt);
    }
    let unmasked = traced("the cat sat on a mat", None, config(4, 2), 3);
    for q in asked(&unmasked, Stage::Scores, 8) {
        assert!(!q.prompt.contains("mask"), "{}", q.prompt);
    }
}

#[test]
fn a_uniform_row_is_asked_and_answered_as_a_tie_of_every_key() {
    // Zero embeddings and no positions: every score is 0 and every weight 1/8 = 0.125.
    let sentence = "a b c d e f g h";
    let mut inputs = Inputs::from_sentence(
        sentence,
        Config {
            positional_encoding: false,
            ..config(4, 2)
        },
        Weights::new(Init::Random(1), 4),
    )
    .unwrap();
    inputs.embeddings.fill(0.0);
    let trace = forward(&inputs).unwrap();
    let questions = asked(&trace, Stage::Softmax, 16);
    assert!(questions
        .iter()
        .any(|q| matches!(q.answer, Answer::Number { .. })));
    assert!(questions
        .iter()
        .any(|q| matches!(q.answer, Answer::Choice { .. })));
    for q in &questions {
        assert!(
            !q.prompt.contains("gives its most weight to"),
            "{}",
            q.prompt
        );
        match &q.answer {
            Answer::Number { .. } => {
                assert!(q.prompt.contains("every key"), "{}", q.prompt);
                assert_eq!(q.answer_text(), "0.12");
                assert!(q.is_right(&Response::Number(0.11)));
            }
            Answer::Choice { accepted, .. } => {
                assert_eq!(accepted.len(), 8);
                let note = q.note.as_deref().unwrap_or_default();
                assert!(note.contains("All 8 keys tie"), "{note}");
            }
            Answer::Set { .. } | Answer::Count { .. } => {
                unreachable!("softmax asks no set or count")
            }
        }
    }
    let scores = asked(&trace, Stage::Scores, 4);
    assert!(scores.iter().all(|q| q
        .note
        .as_deref()
        .unwrap_or_default()
        .contains("All 8 keys tie")));
}

#[test]
fn a_tie_of_some_keys_names_the_tied_keys_and_never_one_of_them_alone() {
    // Without positions the two “the” have the same key, so they tie in every row.
    let no_positions = Config {
        positional_encoding: false,
        ..config(4, 1)
    };
    let mut found = 0;
    for seed in 0..40 {
        let trace = traced("the cat the", None, no_positions, seed);
        for q in asked(&trace, Stage::Softmax, 6) {
            let (m, r, _) = q.cell;
            let row = m.get(&trace).unwrap().row(r).into_owned();
            let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if row[0] != top {
                continue;
            }
            found += 1;
            assert!(
                !q.prompt.contains("gives its most weight to"),
                "{}",
                q.prompt
            );
            if let Answer::Choice { accepted, choices } = &q.answer {
                assert_eq!(accepted, &vec![0, 2]);
                let note = q.note.clone().unwrap_or_default();
                for &a in accepted {
                    assert!(note.contains(&choices[a]), "{note}");
                }
                assert!(!note.contains("All"), "{note}");
            } else {
                assert!(q.prompt.contains("tie"), "{}", q.prompt);
            }
        }
    }
    assert!(found > 4, "ties at the top were asked about: {found}");
}

#[test]
fn the_activation_question_picks_positive_cells_as_well_as_negative_ones() {
    for s in 0..40u64 {
        let trace = scenario(s);
        let Some(b) = trace.block.as_ref() else {
            continue;
        };
        let signs: std::collections::BTreeSet<bool> = asked(&trace, Stage::Activation, 40)
            .iter()
            .map(|q| b.hidden[(q.cell.1, q.cell.2)] < 0.0)
            .collect();
        let row_has_both = (0..trace.seq_len()).any(|i| {
            let row = b.hidden.row(i);
            row.iter().any(|&v| v < 0.0) && row.iter().any(|&v| v >= 0.0)
        });
        if row_has_both {
            assert_eq!(signs.len(), 2, "scenario {s} asks one sign only");
        }
    }
}

#[test]
fn the_mask_question_says_plainly_that_no_cell_may_be_the_answer() {
    let causal = Config {
        causal: true,
        ..config(4, 2)
    };
    let trace = traced("the cat sat", None, causal, 2);
    for q in asked(&trace, Stage::Mask, 8) {
        assert!(!q.prompt.contains("Check none"), "{}", q.prompt);
        assert!(q.prompt.contains("may be none"), "{}", q.prompt);
    }
}

#[test]
fn one_column_heads_are_asked_about_one_column() {
    let trace = traced("the cat sat", None, config(4, 4), 2);
    for q in asked(&trace, Stage::SplitHeads, 8) {
        assert!(q.prompt.starts_with("Which column of Q"), "{}", q.prompt);
        let Answer::Choice { choices, .. } = &q.answer else {
            panic!("the split asks for a choice");
        };
        assert_eq!(choices, &["d1", "d2", "d3", "d4"]);
    }
    let wide = traced("the cat sat", None, config(4, 2), 2);
    for q in asked(&wide, Stage::SplitHeads, 8) {
        assert!(q.prompt.starts_with("Which columns of Q"), "{}", q.prompt);
    }
}

#[test]
fn repeated_words_are_told_apart_in_every_question_choice_and_answer() {
    // The repeated words: the sentence's, then the source's.
    let sentences = [
        ("the cat saw the dog", None, "the"),
        ("a cat saw a dog", Some("the dog saw the cat"), "a"),
        ("a cat saw a dog", Some("the dog saw the cat"), "the"),
    ];
    for (sentence, source, word) in sentences {
        for causal in [false, true] {
            if causal && source.is_some() {
                continue;
            }
            let c = Config {
                causal,
                ..config(4, 2)
            };
            let trace = traced(sentence, source, c, 5);
            for stage in trace.stages() {
                for q in asked(&trace, stage, 12) {
                    for bare in [
                        format!("“{word}”"),
                        format!("[{word},"),
                        format!(", {word}]"),
                    ] {
                        assert!(!q.prompt.contains(&bare), "{}", q.prompt);
                        assert!(!q.note.clone().unwrap_or_default().contains(&bare));
                    }
                    let answer = q.answer_text();
                    assert!(
                        answer
                            .split(" or ")
                            .all(|a| a.split(", ").all(|a| a != word)),
                        "{answer}"
                    );
                    if let Answer::Choice { choices, .. } | Answer::Set { choices, .. } = &q.answer
                    {
                        let distinct: std::collections::BTreeSet<&String> =
                            choices.iter().collect();
                        assert_eq!(distinct.len(), choices.len(), "{choices:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_divisor_note_names_the_square_root_the_maths_divided_by() {
    // Cross-attention: 3 queries, 5 keys; √seq_len divides by √src_len = √5.
    let by_length = Config {
        scale: ScaleMode::SqrtSeqLen,
        ..config(4, 2)
    };
    let cross = traced("the cat sat", Some("le chat est assis là"), by_length, 1);
    assert_eq!(cross.scale_divisor, 5f64.sqrt());
    for q in asked(&cross, Stage::Scale, 4) {
        let note = q.note.unwrap();
        assert!(note.contains("√src_len = √5"), "{note}");
        assert!(!note.contains("√3"), "{note}");
        assert!(note.contains("√d_k = √2"), "{note}");
        assert!(!note.contains("head width"), "{note}");
    }
    let own = traced("the cat sat", None, by_length, 1);
    for q in asked(&own, Stage::Scale, 4) {
        let note = q.note.unwrap();
        assert!(note.contains("√seq_len = √3"), "{note}");
        assert!(note.contains("√d_k = √2"), "{note}");
    }
    let off = Config {
        scale: ScaleMode::None,
        ..config(4, 2)
    };
    for q in asked(&traced("the cat sat", None, off, 1), Stage::Scale, 4) {
        let note = q.note.unwrap();
        assert!(note.contains("√d_k = √2"), "{note}");
    }
}

#[test]
fn the_worksheet_tables_label_a_repeated_word_as_its_questions_name_it() {
    let trace = traced("the cat saw the dog", None, config(4, 2), 5);
    let key = worksheet_markdown(&trace, None, Picks::QuizSet(1), RunViews::default(), true);
    assert!(
        key.contains("| the (1) |") && key.contains("| the (4) |"),
        "{key}"
    );
    assert!(!key.contains("| the |"), "{key}");
    // The sentence itself is written as it was typed.
    assert!(
        key.starts_with("# Answer key: the cat saw the dog\n"),
        "{key}"
    );
}

#[test]
fn with_one_column_heads_leaving_the_scaling_out_is_said_to_change_nothing() {
    // d_model 4 over 4 heads: d_k = 1, and standard attention divides by √1 = 1.
    let unscaled = Config {
        scale: ScaleMode::None,
        ..config(4, 4)
    };
    let trace = traced("I am hungry", None, unscaled, 2);
    let said = "With d_k = 1 standard attention divides by √1 = 1, so leaving the scaling out \
                changes nothing here.";
    for q in asked(&trace, Stage::Scale, 4) {
        let note = q.note.unwrap();
        assert!(!note.contains("differs from standard attention"), "{note}");
        assert!(note.contains(said), "{note}");
    }
    let warning = attention_lens::words::configuration_warning(&trace, 3).unwrap();
    assert!(!warning.contains("all-or-nothing"), "{warning}");
    assert!(
        warning.contains("leaving the scaling out changes nothing here"),
        "{warning}"
    );
    let note = attention_lens::words::handout_stage_note(&trace, Stage::Scale, 3);
    assert!(note.contains(said), "{note}");
    // With wider heads it does differ, and the note says so.
    let trace = traced(
        "I am hungry",
        None,
        Config {
            n_heads: 2,
            ..unscaled
        },
        2,
    );
    for q in asked(&trace, Stage::Scale, 4) {
        assert!(q.note.unwrap().contains("differs from standard attention"));
    }
}

#[test]
fn in_cross_attention_the_mask_question_asks_what_the_masked_scores_hold() {
    let trace = traced("the cat sat", Some("le chat"), config(4, 2), 2);
    for q in asked(&trace, Stage::Mask, 8) {
        assert!(!q.prompt.contains("become −∞"), "{}", q.prompt);
        assert!(q.prompt.contains("has no causal mask"), "{}", q.prompt);
        let Answer::Number { value } = q.answer else {
            panic!("{:?}", q.answer)
        };
        // The mask hides nothing: the masked score is the scaled one.
        let (m, r, c) = q.cell;
        let attention_lens::attention::MatrixId::Head(h, _) = m else {
            panic!("{m:?}")
        };
        assert_eq!(value, trace.heads[h].scaled[(r, c)]);
        assert!(q
            .prompt
            .contains(&attention_lens::words::cell_name(&trace, m, r, c)));
    }
    // In self-attention under the mask the question is still which cells are hidden.
    let causal = Config {
        causal: true,
        ..config(4, 2)
    };
    let own = traced("the cat sat", None, causal, 2);
    for q in asked(&own, Stage::Mask, 4) {
        assert!(matches!(q.answer, Answer::Set { .. }));
    }
}

/// The goals the backward questions are asked for: two patterns and two tasks.
fn goals() -> [Goal; 4] {
    [
        Goal::named(NamedTarget::Previous),
        Goal::named(NamedTarget::Uniform),
        Goal::Task(Task::CopyPrevious),
        Goal::Task(Task::Mean),
    ]
}

#[test]
fn every_backward_stage_the_loss_reaches_asks_a_question_the_pass_answers() {
    for s in 0..40u64 {
        let trace = scenario(s);
        for goal in goals() {
            let goal = goal.fitted(trace.config.n_heads, trace.seq_len(), trace.n_keys());
            let pass = BackwardPass::new(&trace, &goal).unwrap();
            let task = pass.loss_kind() == LossKind::Task;
            for stage in Stage::BACKWARD {
                for seed in 0..4u64 {
                    let q = backward_question(&trace, Some(&pass), stage, seed);
                    let reached =
                        task || !matches!(stage, Stage::BackOutput | Stage::BackWeightedSum);
                    let Some(q) = q else {
                        // A stage reached asks nothing only when every gradient there shows
                        // as 0.000 without being 0.
                        let why = why_unasked(Some(&pass), stage);
                        assert!(!reached || why == Some(Unasked::TooSmall), "{stage:?} {s}");
                        continue;
                    };
                    assert!(
                        reached,
                        "{stage:?} asks about a stage the loss does not reach"
                    );
                    assert_eq!(q.stage, stage);
                    // Without the pass there is nothing to ask.
                    assert_eq!(backward_question(&trace, None, stage, seed), None);
                    let (MatrixId::Back(m), r, c) = q.cell else {
                        panic!("{stage:?} asks about a forward cell");
                    };
                    // ∂L/∂Aₕ is the loss's own gradient for a pattern, and is reached through
                    // the weighted sum for a task.
                    let weights_via_values = stage == Stage::BackWeightedSum
                        && matches!(m, BackMatrix::Head(_, HeadGrad::Weights));
                    assert!(
                        m.stage() == stage || weights_via_values,
                        "{m:?} at {stage:?}"
                    );
                    let v = m.value(&pass, r, c).expect("the question's cell exists");
                    if let BackMatrix::Head(
                        h,
                        HeadGrad::Weights | HeadGrad::Masked | HeadGrad::Scores,
                    ) = m
                    {
                        assert!(trace.heads[h].masked[(r, c)].is_finite(), "a masked cell");
                    }
                    let worked = q.worked(&trace, Some(&pass)).expect("explained");
                    assert_eq!(worked.value.to_bits(), v.to_bits());
                    assert_eq!(q.worked(&trace, None), None);
                    let Answer::Choice { choices, accepted } = &q.answer else {
                        // The scale's question: the divisor the forward pass used.
                        assert_eq!(stage, Stage::BackScale);
                        assert_eq!(
                            q.answer,
                            Answer::Number {
                                value: trace.scale_divisor
                            }
                        );
                        let note = q.note.as_ref().unwrap();
                        assert!(
                            note.contains("same number") || note.contains("undivided"),
                            "{note}"
                        );
                        continue;
                    };
                    assert_eq!(accepted.len(), 1);
                    let picked = choices[accepted[0]].as_str();
                    let expected = if choices[0] == "up" {
                        // A step against the gradient.
                        assert!(q.prompt.contains("plain gradient descent"), "{}", q.prompt);
                        if v > 0.0 {
                            "down"
                        } else if v < 0.0 {
                            "up"
                        } else {
                            "stay the same"
                        }
                    } else if v > 0.0 {
                        "positive"
                    } else if v < 0.0 {
                        "negative"
                    } else {
                        "0"
                    };
                    assert_eq!(picked, expected, "{} (value {v})", q.prompt);
                    // What is asked is exactly 0, or shows as non-zero at the heatmaps' three
                    // decimals and is large among its matrix's gradients.
                    let largest = m.get(&pass).unwrap().amax();
                    assert!(
                        v == 0.0 || (v.abs() >= 5e-4 && v.abs() >= 0.25 * largest),
                        "{v}"
                    );
                    for i in 0..choices.len() {
                        assert_eq!(q.is_right(&Response::Choice(i)), i == accepted[0]);
                    }
                }
            }
        }
    }
}

#[test]
fn the_pattern_loss_asks_which_weights_a_step_moves_and_a_task_asks_about_w_v_and_w_o_too() {
    let trace = traced("the cat sat on the mat", None, config(4, 2), 3);
    let of = |goal: Goal, stage| {
        let pass = BackwardPass::new(&trace, &goal).unwrap();
        (0..40)
            .filter_map(|seed| backward_question(&trace, Some(&pass), stage, seed))
            .map(|q| q.prompt)
            .collect::<Vec<_>>()
    };
    let pattern = of(Goal::named(NamedTarget::Previous), Stage::BackProjection);
    assert!(pattern.iter().any(|p| p.contains("W_q[")));
    assert!(pattern.iter().any(|p| p.contains("W_k[")));
    assert!(
        !pattern.iter().any(|p| p.contains("W_v[")),
        "W_v does not change A"
    );
    let task = of(Goal::Task(Task::CopyPrevious), Stage::BackProjection);
    assert!(task.iter().any(|p| p.contains("W_v[")));
    let output = of(Goal::Task(Task::CopyPrevious), Stage::BackOutput);
    assert!(output.iter().all(|p| p.contains("W_o[")), "{output:?}");
    assert!(of(Goal::named(NamedTarget::Previous), Stage::BackOutput).is_empty());
}

#[test]
fn a_presenter_showing_one_head_is_asked_about_that_head_on_the_way_back() {
    let trace = traced("the cat sat on the mat", None, config(8, 4), 2);
    let pass = BackwardPass::new(&trace, &Goal::named(NamedTarget::First)).unwrap();
    for stage in [
        Stage::BackLoss,
        Stage::BackSoftmax,
        Stage::BackScale,
        Stage::BackScores,
    ] {
        for seed in 0..8 {
            let in_view = InView {
                part: None,
                head: Some(2),
                ..InView::default()
            };
            let q = question_in_view(&trace, Some(&pass), stage, seed, in_view).unwrap();
            assert_eq!(q.head(), Some(2), "{stage:?}");
        }
    }
}

#[test]
fn a_presenter_showing_one_gradient_is_asked_about_that_gradient() {
    // A pre-norm block and a source: the input stage's five gradients, and a task reaches W_v.
    let config = config(4, 2);
    let mut inputs = Inputs::from_sentence(
        "the cat sat",
        config,
        Weights::new(Init::Random(3), config.d_model),
    )
    .unwrap();
    inputs.source = Some(Source::from_sentence("le chat", config.d_model).unwrap());
    inputs.block = Some({
        let mut block = Block::new(4, 8);
        block.norm = Norm::Pre;
        block
    });
    let trace = forward(&inputs).unwrap();
    let task = BackwardPass::new(&trace, &Goal::Task(Task::CopyFirst)).unwrap();
    let pattern = BackwardPass::new(&trace, &Goal::named(NamedTarget::First)).unwrap();
    let at = |pass: &BackwardPass, stage: Stage, part: usize, seed: u64| {
        let in_view = InView {
            part: Some(part),
            head: None,
            ..InView::default()
        };
        question_in_view(&trace, Some(pass), stage, seed, in_view).map(|q| q.cell.0)
    };
    let results = BackMatrix::input_results(trace.wiring());
    assert_eq!(results.len(), 5);
    for seed in 0..6 {
        for (part, m) in results.iter().enumerate() {
            assert_eq!(
                at(&task, Stage::BackInput, part, seed),
                Some(MatrixId::Back(*m))
            );
        }
        for (part, m) in BackMatrix::PROJECTION_RESULTS.into_iter().enumerate() {
            assert_eq!(
                at(&task, Stage::BackProjection, part, seed),
                Some(MatrixId::Back(m))
            );
        }
        for (part, m) in BackMatrix::OUTPUT_RESULTS.into_iter().enumerate() {
            assert_eq!(
                at(&task, Stage::BackOutput, part, seed),
                Some(MatrixId::Back(m))
            );
        }
        // The pattern loss shows W_q and W_k; W_v is not reached.
        assert_eq!(
            at(&pattern, Stage::BackProjection, 1, seed),
            Some(MatrixId::Back(BackMatrix::WK))
        );
        assert_eq!(at(&pattern, Stage::BackProjection, 2, seed), None);
        // A head's ∂L/∂Qₕ, then its ∂L/∂Kₕ, under either loss, of the head on screen.
        for pass in [&task, &pattern] {
            for (part, g) in [HeadGrad::Q, HeadGrad::K].into_iter().enumerate() {
                let in_view = InView {
                    part: Some(part),
                    head: Some(1),
                    ..InView::default()
                };
                let asked = question_in_view(&trace, Some(pass), Stage::BackScores, seed, in_view)
                    .map(|q| q.cell.0);
                assert_eq!(asked, Some(MatrixId::Back(BackMatrix::Head(1, g))));
            }
        }
    }
}

#[test]
fn the_worksheet_asks_on_the_way_back_and_states_the_goal_and_a_painted_target() {
    let trace = traced("the cat sat", None, config(4, 2), 5);
    let painted = Matrix::from_row_slice(3, 3, &[1.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.0, 1.0]);
    let goal = Goal::Pattern(vec![
        HeadTarget::Named(NamedTarget::First),
        HeadTarget::Painted(painted),
    ]);
    let pass = BackwardPass::new(&trace, &goal).unwrap();
    let key = worksheet_markdown(
        &trace,
        Some(Backward::Pass(&pass)),
        Picks::QuizSet(2),
        RunViews::default(),
        true,
    );
    assert!(
        key.contains("head 1, the first key; head 2, painted by hand"),
        "{key}"
    );
    assert!(
        key.contains(r"**A\*₂**: head 2's target pattern, painted by hand"),
        "{key}"
    );
    assert!(key.contains("| the | 1.000 | 0.000 | 0.000 |"), "{key}");
    assert!(
        !key.contains(r"**A\*₁**"),
        "a named target is described, not tabled"
    );
    let questions =
        worksheet_questions(&trace, Some(&pass), Picks::QuizSet(2), RunViews::default());
    let backward: Vec<Stage> = questions
        .iter()
        .map(|q| q.stage)
        .filter(|s| s.is_backward())
        .collect();
    assert_eq!(
        backward,
        [
            Stage::BackLoss,
            Stage::BackSoftmax,
            Stage::BackScale,
            Stage::BackScores,
            Stage::BackProjection,
            Stage::BackInput
        ]
    );
    // Every backward answer comes with its worked arithmetic.
    assert!(key.matches("Worked: Gradient ∂L/∂").count() >= 6, "{key}");
    // Without a pass the sheet is as before: no goal, no backward question.
    let forward_only =
        worksheet_markdown(&trace, None, Picks::QuizSet(2), RunViews::default(), true);
    assert!(!forward_only.contains("## Goal") && !forward_only.contains("∂L/∂"));
}

#[test]
fn the_worksheet_names_one_painted_target_for_every_head_and_a_pattern_on_the_source() {
    let trace = traced("the cat sat", None, config(4, 2), 5);
    let painted = Matrix::from_row_slice(3, 3, &[1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5]);
    let pass =
        BackwardPass::new(&trace, &Goal::Pattern(vec![HeadTarget::Painted(painted)])).unwrap();
    let key = worksheet_markdown(
        &trace,
        Some(Backward::Pass(&pass)),
        Picks::QuizSet(1),
        RunViews::default(),
        true,
    );
    assert!(
        key.contains("Pattern: one target painted by hand, the same for every head"),
        "{key}"
    );
    assert!(key.contains(r"**A\***: the target pattern painted by hand, for every head"));
    assert!(key.contains("Stages 12 and 13 ask nothing"), "{key}");
    let cross = traced("the cat sat on the mat", Some("le chat"), config(4, 2), 5);
    let pass = BackwardPass::new(&cross, &Goal::named(NamedTarget::Previous)).unwrap();
    let key = worksheet_markdown(
        &cross,
        Some(Backward::Pass(&pass)),
        Picks::QuizSet(1),
        RunViews::default(),
        true,
    );
    assert!(key.contains("query i looks at source word i−1"), "{key}");
    assert!(!key.contains("the first at itself"), "{key}");
    // A sheet that draws no backward question has no goal to state.
    let sheet = worksheet_markdown(
        &trace,
        Some(Backward::Pass(&pass)),
        Picks::Spread { seed: 1, count: 2 },
        RunViews::default(),
        false,
    );
    assert!(!sheet.contains("## Goal"), "{sheet}");
}

#[test]
fn a_worksheet_whose_goal_the_settings_refuse_says_why_it_asks_nothing_on_the_way_back() {
    let causal = Config {
        causal: true,
        ..config(4, 2)
    };
    let trace = traced("the cat sat", None, causal, 5);
    let goal = Goal::named(NamedTarget::Next);
    let reason = BackwardPass::new(&trace, &goal).unwrap_err().to_string();
    let key = worksheet_markdown(
        &trace,
        Some(Backward::Refused {
            goal: &goal,
            reason: &reason,
        }),
        Picks::QuizSet(1),
        RunViews::default(),
        true,
    );
    assert!(
        key.contains(
            "## Goal\n\nThe sheet asks nothing about the backward stages: the goal “Pattern: \
             each token looks at the key one position after it (the last at itself)” is refused"
        ),
        "{key}"
    );
    assert!(
        key.contains(&reason) && reason.contains("causal mask"),
        "{key}"
    );
    assert!(!key.contains("∂L/∂"), "no backward question: {key}");
    // The same questions as a sheet without a backward part.
    let forward_only =
        worksheet_markdown(&trace, None, Picks::QuizSet(1), RunViews::default(), true);
    let questions = |sheet: &str| sheet[sheet.find("## Questions").unwrap()..].to_string();
    assert_eq!(questions(&key), questions(&forward_only));
}

/// The trace of `sentence` with the block (ReLU, `norm`) around a head of `config`.
fn with_block(sentence: &str, config: Config, norm: Norm, seed: u64) -> Trace {
    let mut inputs = Inputs::from_sentence(
        sentence,
        config,
        Weights::new(Init::Random(seed), config.d_model),
    )
    .unwrap();
    let mut block = Block::new(config.d_model, 8);
    block.norm = norm;
    block.activation = Activation::Relu;
    inputs.block = Some(block);
    forward(&inputs).unwrap()
}

/// The symbols `text` defines as a gradient in passing: `D` in `…,  D = ∂L/∂A₁`.
fn gradient_shorthands(text: &str) -> Vec<String> {
    text.match_indices(" = ∂L/∂")
        .filter_map(|(at, _)| {
            let before = &text[..at];
            let symbol = before.rsplit([' ', '`', '(']).next()?;
            // Only a bare symbol, not a gradient or a cell being defined (`∂L/∂Y[i, c]`).
            (!symbol.is_empty() && !symbol.contains('∂') && !symbol.contains('['))
                .then(|| symbol.to_string())
        })
        .collect()
}

#[test]
fn no_symbol_in_an_answer_key_means_both_a_matrix_and_a_gradient() {
    // The block's activation output is G; the softmax's backward names ∂L/∂Aₕ with another
    // letter, so a key that asks about both gives each its own symbol.
    let trace = with_block("the cat sat on the mat", config(4, 2), Norm::Post, 3);
    let pass = BackwardPass::new(&trace, &Goal::Task(Task::CopyPrevious)).unwrap();
    let forward_symbols: std::collections::BTreeSet<String> = [
        MatrixId::Embeddings,
        MatrixId::Positional,
        MatrixId::X,
        MatrixId::Q,
        MatrixId::K,
        MatrixId::V,
        MatrixId::Concat,
        MatrixId::Output,
    ]
    .into_iter()
    .chain(
        attention_lens::attention::BlockMatrix::ALL
            .iter()
            .map(|&b| MatrixId::Block(b)),
    )
    .map(attention_lens::words::label)
    .collect();
    assert!(forward_symbols.contains("G"));
    let mut both = 0;
    for set in 1..=6 {
        let key = worksheet_markdown(
            &trace,
            Some(Backward::Pass(&pass)),
            Picks::QuizSet(set),
            RunViews::default(),
            true,
        );
        let activation = key.contains("G[i, c] = max(H[i, c], 0)");
        let softmax_back = key.contains("rowsum(");
        if activation && softmax_back {
            both += 1;
        }
        let shorthands = gradient_shorthands(&key);
        if softmax_back {
            assert!(shorthands.iter().any(|s| s == "D"), "{key}");
        }
        for symbol in shorthands {
            assert!(
                !forward_symbols.contains(&symbol),
                "{symbol} is a matrix and a gradient: {key}"
            );
        }
    }
    assert!(
        both > 0,
        "some key asks about the activation and the softmax's backward"
    );
}

#[test]
fn no_worksheet_asks_the_same_question_twice() {
    let mut sheets = 0;
    for n_heads in [1, 2, 4] {
        for causal in [false, true] {
            for block in [None, Some(Norm::Post), Some(Norm::Pre)] {
                for source in [None, Some("le chat noir")] {
                    if causal && source.is_some() {
                        continue;
                    }
                    let config = Config {
                        causal,
                        ..config(4, n_heads)
                    };
                    let mut inputs = Inputs::from_sentence(
                        "the cat sat on the mat",
                        config,
                        Weights::new(Init::Random(11), 4),
                    )
                    .unwrap();
                    inputs.source = source.map(|s| Source::from_sentence(s, 4).unwrap());
                    inputs.block = block.map(|norm| {
                        let mut b = Block::new(4, 8);
                        b.norm = norm;
                        b
                    });
                    let trace = forward(&inputs).unwrap();
                    let passes: Vec<BackwardPass> = [
                        Goal::named(NamedTarget::Previous),
                        Goal::Task(Task::CopyPrevious),
                    ]
                    .into_iter()
                    .filter_map(|g| BackwardPass::new(&trace, &g).ok())
                    .collect();
                    let backwards = std::iter::once(None).chain(passes.iter().map(Some));
                    for backward in backwards {
                        let mut picks: Vec<Picks> = (0..4)
                            .map(|seed| Picks::Spread { seed, count: 40 })
                            .collect();
                        picks.extend((1..4).map(Picks::QuizSet));
                        for picks in picks {
                            let questions =
                                worksheet_questions(&trace, backward, picks, RunViews::default());
                            let mut prompts = std::collections::BTreeSet::new();
                            for q in &questions {
                                assert!(
                                    prompts.insert(q.prompt.clone()),
                                    "{n_heads} heads, mask {causal}, {block:?}, {source:?}, \
                                     {picks:?}: asked twice: {}",
                                    q.prompt
                                );
                            }
                            // In the order of the stages, the sheet's numbering of them.
                            let positions: Vec<usize> = questions
                                .iter()
                                .map(|q| q.stage.position(trace.wiring().order()).unwrap())
                                .collect();
                            assert!(positions.windows(2).all(|w| w[0] <= w[1]));
                            sheets += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(sheets > 100);
}

#[test]
fn a_sheet_of_many_questions_still_fills_up_without_repeating_one() {
    // Two heads ask two questions about the columns of Q; the other stages make up the rest.
    let trace = traced("the cat sat on the mat", None, config(4, 2), 5);
    let questions = worksheet_questions(
        &trace,
        None,
        Picks::Spread { seed: 3, count: 40 },
        RunViews::default(),
    );
    assert_eq!(questions.len(), 40);
    let split: Vec<&str> = questions
        .iter()
        .filter(|q| q.stage == Stage::SplitHeads)
        .map(|q| q.prompt.as_str())
        .collect();
    assert_eq!(split.len(), 2, "{split:?}");
    assert_eq!(
        questions.iter().filter(|q| q.stage == Stage::Scale).count(),
        1
    );
}
