//! Quiz questions and worksheets, checked against the trace they are drawn from: for many
//! scenarios (self- and cross-attention, with and without the block and the mask) and seeds,
//! every stage gets a question whose expected answer is what the trace holds, the right answer
//! is accepted and a wrong one refused, and the worked arithmetic explains the same cell.

use attention_lens::attention::Stage;
use attention_lens::attention::{
    forward, Activation, Block, Config, Init, Inputs, Norm, ScaleMode, Source, SplitMix64, Trace,
    Weights,
};
use attention_lens::formats::worksheet::{worksheet_markdown, worksheet_questions, Picks};
use attention_lens::quiz::{question, quiz_seed, Answer, Response, Session};
use attention_lens::state::Model;

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
    forward(&inputs).unwrap()
}

/// Shown to two decimals, as the heatmaps show it.
fn shown(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

#[test]
fn every_stage_of_every_scenario_gets_a_question_whose_answer_is_the_trace() {
    for s in 0..60u64 {
        let trace = scenario(s);
        for &stage in trace.stages() {
            for seed in 0..4u64 {
                let q = question(&trace, stage, seed).unwrap_or_else(|| panic!("{stage:?}"));
                assert_eq!(q.stage, stage);
                let (m, r, c) = q.cell;
                let cell_value = m.value(&trace, r, c).expect("the question's cell exists");
                let worked = q.worked(&trace).expect("the cell is explained");
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
        let sheet = worksheet_markdown(&trace, picks, false);
        let key = worksheet_markdown(&trace, picks, true);
        assert_eq!(sheet, worksheet_markdown(&trace, picks, false), "same seed");
        assert!(sheet.contains("Answer: ____________"));
        assert!(!sheet.contains("**Answer:**"));
        let questions = worksheet_questions(&trace, picks);
        assert_eq!(questions.len(), 12);
        // Spread over the stages: the first and the last stage both get one.
        assert_eq!(questions[0].stage, trace.stages()[0]);
        for q in &questions {
            assert!(sheet.contains(&q.prompt));
            assert!(key.contains(&format!("**Answer:** {}", q.answer_text())));
            let worked = q.worked(&trace).unwrap();
            assert!(key.contains(&worked.expansion), "{}", worked.expansion);
        }
    }
}

#[test]
fn a_session_reveals_a_stage_once_and_keeps_the_tally_across_new_numbers() {
    let trace = Model::default().trace().unwrap();
    let mut session = Session::default();
    let q = question(&trace, Stage::Input, 7).unwrap();
    let Answer::Number { value } = q.answer else {
        panic!("the input asks for a number");
    };
    assert!(session.outcome(Stage::Input).is_none());
    assert!(!session.answer(q.clone(), &Response::Number(value + 0.5), "x".into()));
    // A second answer to a revealed stage changes nothing.
    assert!(!session.answer(q.clone(), &Response::Number(value), "y".into()));
    assert_eq!(session.answers(), &[(Stage::Input, false)]);
    assert_eq!(
        session.outcome(Stage::Input).unwrap().given.as_deref(),
        Some("x")
    );

    session.ask_again(Stage::Input);
    assert!(session.answer(q, &Response::Number(value), "ok".into()));
    assert_eq!(session.right(), 1);

    // A teacher's reveal shows the answer without counting it.
    let scores = question(&trace, Stage::Scores, 7).unwrap();
    session.reveal(scores);
    assert_eq!(session.outcome(Stage::Scores).unwrap().right, None);
    assert_eq!(session.answers().len(), 2);

    assert!(session.any_revealed());
    session.hide_all();
    assert!(!session.any_revealed());
    assert!(session.outcome(Stage::Input).is_none() && session.outcome(Stage::Scores).is_none());
    assert_eq!((session.answers().len(), session.right()), (2, 1));
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
        let questions = worksheet_questions(&trace, Picks::QuizSet(set));
        let stages: Vec<Stage> = questions.iter().map(|q| q.stage).collect();
        assert_eq!(stages, trace.stages());
        let key = worksheet_markdown(&trace, Picks::QuizSet(set), true);
        assert!(key.contains(&format!("Question set {set}")));
        for (q, &stage) in questions.iter().zip(trace.stages()) {
            assert_eq!(Some(q), question(&trace, stage, quiz_seed(set)).as_ref());
            assert!(key.contains(&format!("**Answer:** {}", q.answer_text())));
        }
    }
}
