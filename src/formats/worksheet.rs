//! A worksheet for a class, and its answer key, as Markdown: the scenario's inputs in tables,
//! then questions spread over the stages, each from [`crate::quiz`], with a blank or with the
//! answer and its worked arithmetic. With a backward pass, the backward stages ask too, and the
//! sheet states the goal their gradients are for; with a goal the settings refuse, it says why
//! they ask nothing.

use super::report::{trace_matrices, write_matrix_table, write_token_table};
use crate::attention::{BackwardPass, Goal, HeadTarget, Stage, Trace};
use crate::quiz::{
    asking_stages, backward_question, question_in_view, quiz_seed, why_unasked, Answer, Question,
    RunViews,
};
use crate::words::{
    configuration, goal_description, refused_goal_line, sentences_title, stage_name, subscript,
    unreached_stages_line, Unasked,
};
use std::fmt::Write as _;

/// The most questions a worksheet holds.
pub const MAX_QUESTIONS: usize = 40;

/// Which questions a worksheet asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picks {
    /// `count` questions spread evenly over the stages shown, chosen by `seed`.
    Spread {
        /// The same seed gives the same questions.
        seed: u64,
        /// How many, at most [`MAX_QUESTIONS`].
        count: usize,
    },
    /// One question per stage: those the app's quiz asks with question set `n` (`quiz=1&qn=n`).
    QuizSet(u64),
}

/// What a worksheet's backward stages ask about.
#[derive(Debug, Clone, Copy)]
pub enum Backward<'a> {
    /// The gradients of the goal the settings allow.
    Pass(&'a BackwardPass),
    /// A refused goal, and why (the settings, or the target itself): the backward stages ask
    /// nothing, and the sheet says so.
    Refused {
        /// The goal.
        goal: &'a Goal,
        /// Why it is refused.
        reason: &'a str,
    },
}

impl<'a> Backward<'a> {
    /// From a goal and its backward pass, or the reason the goal is refused.
    pub fn new(goal: &'a Goal, pass: Result<&'a BackwardPass, &'a str>) -> Self {
        match pass {
            Ok(pass) => Backward::Pass(pass),
            Err(reason) => Backward::Refused { goal, reason },
        }
    }
}

/// The questions of the worksheet for `trace`, picked by `picks`, with decoding and the tiles
/// where `views` asks for them; the backward stages ask only
/// with a `backward` pass.
pub fn worksheet_questions(
    trace: &Trace,
    backward: Option<&BackwardPass>,
    picks: Picks,
    views: RunViews,
) -> Vec<Question> {
    let stages = asking_stages(trace, backward, views);
    let question = |stage, seed| match stage {
        Stage::Tiles | Stage::Decode => {
            let shown = views.in_view(trace, stage, seed);
            question_in_view(trace, backward, stage, seed, shown)
        }
        _ => backward_question(trace, backward, stage, seed),
    };
    match picks {
        Picks::Spread { seed, count } => spread(&stages, count.min(MAX_QUESTIONS), |stage, n| {
            question(stage, seed.wrapping_add(n))
        }),
        Picks::QuizSet(set) => stages
            .iter()
            .filter_map(|&stage| question(stage, quiz_seed(set)))
            .collect(),
    }
}

/// How many further draws a stage gets when its question repeats one the sheet already asks.
const REDRAWS: u64 = 8;

/// `count` questions spread evenly over `stages`, question `n` drawn by `draw(stage, n)`, none
/// asked twice. A stage with few questions to ask (the divisor, one head's columns) gives what
/// it has, and the stages after it in turn fill the sheet up to `count` where they can. In the
/// order of the stages.
fn spread(
    stages: &[Stage],
    count: usize,
    draw: impl Fn(Stage, u64) -> Option<Question>,
) -> Vec<Question> {
    let mut asked: Vec<(usize, Question)> = Vec::new();
    // Question `n`'s first draw is `n`, as it always was; its redraws are past every first draw.
    let ask = |at: usize, n: u64, asked: &mut Vec<(usize, Question)>| {
        let fresh = (0..=REDRAWS)
            .filter_map(|r| draw(stages[at], n + r * MAX_QUESTIONS as u64))
            .find(|q| asked.iter().all(|(_, a)| a.prompt != q.prompt));
        if let Some(q) = fresh {
            asked.push((at, q));
        }
    };
    for n in 0..count {
        ask(n * stages.len() / count.max(1), n as u64, &mut asked);
    }
    // Fill up in rounds over the stages; a round that adds nothing ends it.
    let mut n = count as u64;
    while asked.len() < count {
        let before = asked.len();
        for at in 0..stages.len() {
            if asked.len() == count {
                break;
            }
            ask(at, n, &mut asked);
            n += 1;
        }
        if asked.len() == before {
            break;
        }
    }
    asked.sort_by_key(|(at, _)| *at);
    asked.into_iter().map(|(_, q)| q).collect()
}

/// The worksheet as Markdown; with `answers`, the answer key. With a `backward` pass the
/// backward stages ask too; with a refused goal the sheet says why they ask nothing. `views` adds
/// decoding and the tiles.
pub fn worksheet_markdown(
    trace: &Trace,
    backward: Option<Backward<'_>>,
    picks: Picks,
    views: RunViews,
    answers: bool,
) -> String {
    let (backward, refused) = match backward {
        Some(Backward::Pass(pass)) => (Some(pass), None),
        Some(Backward::Refused { goal, reason }) => (None, Some((goal, reason))),
        None => (None, None),
    };
    let mut out = String::new();
    let source = trace.source.as_ref().map(|s| s.tokens.as_slice());
    let sentences = sentences_title(&trace.tokens, source);
    let kind = if answers { "Answer key" } else { "Worksheet" };
    let _ = writeln!(out, "# {kind}: {sentences}\n");
    let source = match picks {
        Picks::Spread { seed, .. } => {
            format!("Seed {seed}: the same seed and settings give the same questions.")
        }
        Picks::QuizSet(set) => format!(
            "Question set {set}: the questions the app's quiz asks at each stage with these \
             settings and question set {set}."
        ),
    };
    let _ = writeln!(
        out,
        "{source} Give numbers to two decimals; an answer within 0.01 of the value shown to two \
         decimals counts as right.\n"
    );
    let _ = writeln!(out, "## Settings\n");
    for line in configuration(trace, &trace.tokens, 2) {
        let _ = writeln!(out, "- **{}:** {}", line.label, line.text);
    }
    let _ = writeln!(out, "\n## Inputs\n");
    for m in trace_matrices(trace).iter().filter(|m| is_input(m.key)) {
        write_matrix_table(&mut out, trace, m);
    }
    let questions = worksheet_questions(trace, backward, picks, views);
    if let Some(pass) = backward.filter(|_| questions.iter().any(|q| q.stage.is_backward())) {
        write_goal(&mut out, trace, pass);
    }
    if let Some((goal, reason)) = refused {
        let goal = goal_description(goal, trace.source.is_some());
        let _ = writeln!(out, "## Goal\n\n{}\n", refused_goal_line(&goal, reason));
    }
    let _ = writeln!(out, "## Questions\n");
    for (n, q) in questions.iter().enumerate() {
        let position = q.stage.position(views.order(trace)).unwrap_or(0) + 1;
        let _ = writeln!(
            out,
            "**{}.** (Stage {position}: {}) {}\n",
            n + 1,
            stage_name(q.stage),
            q.prompt
        );
        match &q.answer {
            Answer::Choice { choices, .. } => {
                let _ = writeln!(out, "Choose one: {}\n", choices.join(" · "));
            }
            Answer::Set { choices, .. } => {
                let _ = writeln!(out, "Choose any (or none): {}\n", choices.join(" · "));
            }
            Answer::Number { .. } | Answer::Count { .. } => {}
        }
        if answers {
            let _ = writeln!(out, "**Answer:** {}\n", q.answer_text());
            if let Some(note) = &q.note {
                let _ = writeln!(out, "{note}\n");
            }
            if let Some(e) = q.worked(trace, backward) {
                let _ = writeln!(out, "Worked: {}  ", e.title);
                let _ = writeln!(out, "`{}`  ", e.formula);
                let _ = writeln!(out, "`{}`\n", e.expansion);
                // The rounding note, above all, must follow the arithmetic it corrects.
                if let Some(note) = &e.note {
                    let _ = writeln!(out, "{note}\n");
                }
            }
        } else {
            let _ = writeln!(out, "Answer: ____________\n");
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// The goal the backward questions' gradients are for, the stages its loss does not reach, and
/// a target painted by hand, which no name describes.
fn write_goal(out: &mut String, trace: &Trace, pass: &BackwardPass) {
    let _ = writeln!(out, "## Goal\n");
    let _ = writeln!(
        out,
        "The backward questions are about the gradients of this goal's loss: {}.\n",
        goal_description(&pass.goal, trace.source.is_some())
    );
    let unreached: Vec<String> = Stage::BACKWARD
        .iter()
        .filter(|&&s| why_unasked(Some(pass), s).is_some_and(|w| w != Unasked::TooSmall))
        .filter_map(|s| {
            s.position(trace.wiring().order())
                .map(|p| (p + 1).to_string())
        })
        .collect();
    if !unreached.is_empty() {
        let _ = writeln!(out, "{}\n", unreached_stages_line(&unreached));
    }
    let Goal::Pattern(targets) = &pass.goal else {
        return;
    };
    for (h, target) in targets.iter().enumerate() {
        if let (HeadTarget::Painted(_), Some(pattern)) = (target, pass.target_pattern(h)) {
            let heading = if targets.len() == 1 {
                "**A\\***: the target pattern painted by hand, for every head (each row sums to 1)"
                    .to_string()
            } else {
                format!(
                    "**A\\*{}**: head {}'s target pattern, painted by hand (each row sums to 1)",
                    subscript(h + 1),
                    h + 1
                )
            };
            write_token_table(out, trace, &heading, pattern);
        }
    }
}

/// Whether the matrix called `key` is an input the questions start from: the embeddings, the
/// positions, the weights and the block's parameters, not a result.
fn is_input(key: &str) -> bool {
    matches!(
        key,
        "embeddings"
            | "positional"
            | "source_embeddings"
            | "source_positional"
            | "w_q"
            | "w_k"
            | "w_v"
            | "w_o"
            | "w_1"
            | "b_1"
            | "w_2"
            | "b_2"
            | "ln_1_gamma"
            | "ln_1_beta"
            | "ln_2_gamma"
            | "ln_2_beta"
    )
}
