//! Quiz mode: at each stage, one question about its result while the result is hidden; then
//! right or wrong, the answer and its worked arithmetic, and a running tally. In presenter mode
//! the teacher reveals the answer once the class has guessed.

use super::context::backward_context;
use super::context::{ui_context, BackwardContext, Selection, SelectionContext};
use super::share::{copy, current_fragment};
use crate::attention::{BackwardPass, Stage, Trace};
use crate::formats::page::full_view_url;
use crate::formats::permalink::FIRST_QUESTION_SET;
use crate::panels;
use crate::plot::parse_cell;
use crate::quiz::{
    question_in_view, quiz_seed, why_unasked, Answer, InView, Outcome, Question, Response, Session,
    Slot,
};
use crate::words;
use leptos::html;
use leptos::prelude::*;

/// The quiz's state, shared by the card, the stage view and the keys.
#[derive(Clone, Copy)]
pub struct QuizContext {
    /// Quiz mode and its question set; `None` when off.
    pub set: RwSignal<Option<u64>>,
    /// What was revealed, and the tally.
    pub session: RwSignal<Session>,
    /// The current stage's question, while the quiz is on.
    pub question: Memo<Option<Question>>,
    /// Where the current question's answer is kept: one per stage, or one per step where the
    /// view steps through a stage's parts or heads.
    slot: Memo<Option<Slot>>,
    /// Whether the current stage's result is hidden, waiting for an answer.
    pub hidden: Memo<bool>,
    /// The question set to come back to when the quiz is switched on again.
    last_set: StoredValue<u64>,
    /// The first question set after the current one whose question at this stage asks
    /// something else; `None` where the stage has one question only (Scale asks for its
    /// divisor whatever the set).
    pub next_set: Memo<Option<u64>>,
}

impl QuizContext {
    /// Switches the quiz on (at the last question set) or off.
    pub fn toggle(&self) {
        let next = match self.set.get_untracked() {
            Some(n) => {
                self.last_set.set_value(n);
                None
            }
            None => Some(self.last_set.get_value()),
        };
        self.set.set(next);
    }

    /// Reveals the current stage's result without an answer, as a teacher does once the class
    /// has guessed; false when nothing was hidden.
    pub fn reveal(&self) -> bool {
        if !self.hidden.get_untracked() {
            return false;
        }
        let Some(q) = self.question.get_untracked() else {
            return false;
        };
        let Some(slot) = self.slot.get_untracked() else {
            return false;
        };
        self.session.update(|s| s.reveal(q, slot));
        true
    }

    /// Asks another question at `stage`: the next question set that asks something else, the
    /// stage hidden again. Nothing happens where no set does.
    pub fn another(&self, stage: Stage) {
        let Some(next) = self.next_set.get_untracked() else {
            return;
        };
        self.set.set(Some(next));
        self.session.update(|s| s.ask_again(stage));
    }
}

/// How many question sets "Another question" tries for one that differs from the last.
const ANOTHER_TRIES: usize = 16;

/// Creates the quiz's state for `trace`, the `backward` pass of the goal on screen, `stage` and
/// the `head` shown, off until a link or "Quiz me" turns it on.
pub fn provide_quiz(
    trace: Memo<Trace>,
    backward: BackwardContext,
    stage: RwSignal<Stage>,
    head: RwSignal<usize>,
    picked: SelectionContext,
) -> QuizContext {
    let selection = picked.selection;
    let set = RwSignal::new(None::<u64>);
    let session = RwSignal::new(Session::default());
    let ask_set = move |n: u64| {
        let s = stage.get();
        let ask = |pass: Option<&BackwardPass>| {
            trace.with(|t| {
                let shown = in_view(s, head.get(), t.seq_len());
                question_in_view(t, pass, s, quiz_seed(n), shown)
            })
        };
        // Only a backward stage reads the backward pass, which is computed when first read.
        if s.is_backward() {
            backward.pass.with(|p| ask(p.as_ref().ok()))
        } else {
            ask(None)
        }
    };
    let question = Memo::new(move |_| ask_set(set.get()?));
    let next_set = Memo::new(move |_| {
        let prompt = question.with(|q| q.as_ref().map(|q| q.prompt.clone()))?;
        let mut n = set.get()?;
        (0..ANOTHER_TRIES).find_map(|_| {
            n = n.checked_add(1).unwrap_or(FIRST_QUESTION_SET);
            ask_set(n).is_some_and(|q| q.prompt != prompt).then_some(n)
        })
    });
    let slot = Memo::new(move |_| {
        let shown = in_view(stage.get(), head.get(), trace.with(Trace::seq_len));
        question.with(|q| q.as_ref().map(|q| Slot::of(q, shown)))
    });
    let hidden = Memo::new(move |_| {
        slot.get()
            .is_some_and(|k| session.with(|s| s.outcome(k).is_none()))
    });
    // Where one head is shown at a time, it is the head the question is about.
    Effect::new(move |_| {
        if let Some(h) = question.with(|q| q.as_ref().and_then(Question::head)) {
            if head.get_untracked() != h {
                head.set(h);
            }
        }
    });
    // New numbers or a new goal make new answers: every stage is hidden again, and the tally
    // stays. Numbers a training step wrote are watched, not predicted: a revealed answer
    // follows them (hiding it would also take away the buttons that train).
    let trainer = use_context::<super::training_panel::Trainer>();
    Effect::new(move |prev: Option<()>| {
        trace.track();
        // Read, not only tracked: a memo first computed later, when a backward stage reads the
        // pass, would count as a new goal and hide every answer.
        backward.goal.with(|_| ());
        // The model is compared only where an answer is revealed: an edit passes here.
        let trained = || trainer.is_some_and(|t| t.wrote_model_on_screen());
        if prev.is_some() && session.with_untracked(Session::any_revealed) && !trained() {
            session.update(Session::hide_all);
        }
    });
    // A picked cell of the hidden result would explain it: the pick is dropped.
    Effect::new(move |_| {
        if !hidden.get() {
            return;
        }
        let s = stage.get();
        let in_result = selection.with(|picked| {
            picked
                .as_ref()
                .and_then(|p| panels::parse(&p.panel))
                .is_some_and(|m| m.stage() == s)
        });
        if in_result {
            selection.set(None);
        }
    });
    // Presenting, the revealed answer's cell is outlined (the card has its arithmetic).
    let ui = ui_context();
    Effect::new(move |_| {
        let shown = (ui.presenting.get() && !hidden.get())
            .then(|| question.get())
            .flatten()
            .map(|q| Selection {
                panel: panels::panel_name(q.cell.0),
                row: q.cell.1,
                col: q.cell.2,
            });
        if picked.answer.get_untracked() != shown {
            picked.answer.set(shown);
        }
    });
    let ctx = QuizContext {
        set,
        session,
        question,
        slot,
        hidden,
        last_set: StoredValue::new(FIRST_QUESTION_SET),
        next_set,
    };
    provide_context(ctx);
    ctx
}

/// The quiz context, when the app provides one.
pub fn quiz_context() -> Option<QuizContext> {
    use_context::<QuizContext>()
}

/// What the learner answered, read from the form; the error to show when it cannot be read.
fn read_response(
    answer: &Answer,
    typed: &str,
    picked: &[usize],
) -> Result<(Response, String), String> {
    match answer {
        Answer::Number { .. } | Answer::Count { .. } => parse_cell(typed)
            .map(|x| (Response::Number(x), typed.trim().to_string()))
            .map_err(|_| words::not_a_number(typed)),
        Answer::Choice { choices, .. } => picked
            .first()
            .map(|&i| (Response::Choice(i), choices[i].clone()))
            .ok_or_else(|| words::PICK_ONE.to_string()),
        Answer::Set { choices, .. } => {
            let mut picked = picked.to_vec();
            picked.sort_unstable();
            let names: Vec<String> = picked.iter().map(|&i| choices[i].clone()).collect();
            Ok((Response::Set(picked), words::picked_text(&names)))
        }
    }
}

/// What the view shows of `stage` with `head` picked, where it shows less than all of it: one of
/// Q, K and V (presenter mode and compact embeds), one head per step, one weight's or one
/// input's gradient, a head's ∂L/∂Qₕ or ∂L/∂Kₕ (presenter mode); the token decoded or the row tiled, and the block of keys.
fn in_view(stage: Stage, head: usize, seq_len: usize) -> InView {
    let ui = ui_context();
    let presenting = ui.presenting.get();
    let in_parts = match stage {
        Stage::Projection => true,
        Stage::BackOutput | Stage::BackProjection | Stage::BackInput | Stage::BackScores => {
            presenting
        }
        _ => false,
    };
    let run = super::context::run_context();
    let (row, block) = match (stage, run) {
        (Stage::Decode, Some(run)) => {
            let prefill = run
                .decode
                .with(|d| d.as_ref().and_then(|d| d.as_ref().ok()).map(|d| d.prefill));
            (prefill.map(|p| run.decoded_row(p, seq_len)), None)
        }
        (Stage::Tiles, Some(run)) => (Some(run.tiled_row(seq_len)), run.tile.get()),
        _ => (None, None),
    };
    InView {
        part: in_parts.then(|| ui.shown_part(stage)).flatten(),
        head: presenting.then_some(head),
        row,
        block,
    }
}

/// The feedback line of an outcome.
fn feedback_text(o: &Outcome) -> String {
    let answer = o.question.answer_text();
    match (&o.given, o.right) {
        (Some(given), Some(right)) => words::feedback(right, given, &answer),
        _ => words::revealed(&answer),
    }
}

/// The quiz card above the stage's pictures: the question, the answer form (or, presenting,
/// the reveal), the feedback with the worked arithmetic, another question and the tally.
#[component]
pub fn QuizCard(
    /// The one trace.
    trace: Memo<Trace>,
    /// The stage on screen.
    stage: RwSignal<Stage>,
) -> impl IntoView {
    let Some(quiz) = quiz_context() else {
        return ().into_any();
    };
    let ui = ui_context();
    let picked_cell = use_context::<SelectionContext>();
    let typed = RwSignal::new(String::new());
    let picked = RwSignal::new(Vec::<usize>::new());
    let error = RwSignal::new(None::<String>);
    let status = RwSignal::new(String::new());
    let fallback = RwSignal::new(None::<String>);
    let another_ref = NodeRef::<html::Button>::new();
    let feedback_ref = NodeRef::<html::P>::new();
    let number_ref = NodeRef::<html::Input>::new();

    // Each question starts blank, without the last one's "Result copied."
    Effect::new(move |_| {
        quiz.question.track();
        typed.set(String::new());
        picked.set(Vec::new());
        error.set(None);
        status.set(String::new());
        fallback.set(None);
    });

    // The outcome of the question on screen: of this step, where the view steps through the
    // stage's parts or heads. Training moves the numbers under a revealed answer: the card
    // then shows the question on the numbers on screen, with its answer.
    let outcome = Memo::new(move |_| {
        let slot = quiz.slot.get()?;
        let kept = quiz.session.with(|s| s.outcome(slot).cloned())?;
        Some(match quiz.question.get() {
            Some(question) if question != kept.question => Outcome {
                question,
                given: None,
                right: None,
            },
            _ => kept,
        })
    });
    // A backward stage the loss does not reach, or a goal the settings refuse, asks nothing:
    // the card says why instead of standing empty.
    let prompt = move || {
        outcome
            .get()
            .map(|o| o.question.prompt)
            .or_else(|| quiz.question.get().map(|q| q.prompt))
            .unwrap_or_else(|| {
                let why = backward_context()
                    .and_then(|b| b.pass.with(|p| why_unasked(p.as_ref().ok(), stage.get())));
                why.map(words::nothing_to_ask)
                    .unwrap_or_default()
                    .to_string()
            })
    };

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let (Some(q), Some(slot)) = (quiz.question.get_untracked(), quiz.slot.get_untracked())
        else {
            return;
        };
        let read =
            picked.with_untracked(|p| typed.with_untracked(|t| read_response(&q.answer, t, p)));
        match read {
            Ok((response, given)) => {
                error.set(None);
                let (matrix, row, col) = q.cell;
                quiz.session.update(|s| {
                    s.answer(q, slot, &response, given);
                });
                // Beside the pictures, the cell lights up with what it was computed from; on a
                // phone the card's arithmetic is enough, without a sheet over the stage.
                if !ui.narrow.get_untracked() && !ui.compact {
                    if let Some(picked) = picked_cell {
                        picked.selection.set(Some(Selection {
                            panel: panels::panel_name(matrix),
                            row,
                            col,
                        }));
                    }
                }
                // The form gives way to the feedback: the focus goes on to the next question,
                // without scrolling, so the verdict stays where the form was (in an embed, a
                // scroll would move the reader's page and take the verdict out of sight).
                // Where there is no other question, the verdict takes the focus instead.
                request_animation_frame(move || {
                    let options = web_sys::FocusOptions::new();
                    options.set_prevent_scroll(true);
                    let next = quiz.next_set.try_get_untracked().flatten();
                    let _ = match (next, another_ref.try_get_untracked().flatten()) {
                        (Some(_), Some(button)) => button.focus_with_options(&options),
                        _ => feedback_ref
                            .try_get_untracked()
                            .flatten()
                            .map_or(Ok(()), |p| p.focus_with_options(&options)),
                    };
                });
            }
            Err(message) => {
                error.set(Some(message));
                if let Some(input) = number_ref.get_untracked() {
                    let _ = input.focus();
                }
            }
        }
    };

    let choice_inputs = move |choices: Vec<String>, several: bool| {
        choices
            .into_iter()
            .enumerate()
            .map(|(i, name)| {
                let toggle = move |ev: leptos::ev::Event| {
                    let on = event_target_checked(&ev);
                    picked.update(|p| {
                        if !several {
                            p.clear();
                        }
                        p.retain(|&j| j != i);
                        if on {
                            p.push(i);
                        }
                    });
                };
                view! {
                    <label class="quiz-choice">
                        <input type=if several { "checkbox" } else { "radio" } name="quiz-choice"
                            data-testid=format!("quiz-choice-{i}")
                            prop:checked=move || picked.with(|p| p.contains(&i))
                            on:change=toggle />
                        " " {name}
                    </label>
                }
            })
            .collect_view()
    };

    let asking = move |q: Question| {
        if ui.presenting.get() {
            let options = match q.answer {
                Answer::Number { .. } | Answer::Count { .. } => None,
                Answer::Choice { choices, .. } | Answer::Set { choices, .. } => Some(choices),
            };
            return view! {
                {options.map(|c| view! {
                    <ul class="quiz-options">{c.into_iter().map(|c| view! { <li>{c}</li> }).collect_view()}</ul>
                })}
                <p class="quiz-hint">{words::QUIZ_PRESENTER_HINT}</p>
                <button type="button" data-testid="quiz-reveal" on:click=move |_| { quiz.reveal(); }>
                    "Reveal (R)"
                </button>
            }
            .into_any();
        }
        let several = matches!(q.answer, Answer::Set { .. });
        let hint = match q.answer {
            Answer::Count { .. } => words::QUIZ_WHOLE_NUMBER,
            _ => words::QUIZ_TOLERANCE,
        };
        let field = match q.answer {
            Answer::Number { .. } | Answer::Count { .. } => view! {
                <label class="quiz-number">
                    "Your answer "
                    <input type="text" inputmode="decimal" autocomplete="off" spellcheck="false"
                        data-testid="quiz-number" node_ref=number_ref
                        aria-describedby="quiz-prompt quiz-error"
                        prop:value=move || typed.get()
                        on:input=move |ev| typed.set(event_target_value(&ev)) />
                </label>
                <span class="quiz-hint">{hint}</span>
            }
            .into_any(),
            Answer::Choice { choices, .. } | Answer::Set { choices, .. } => {
                let legend = if several {
                    "Your answer: check every one that applies, or none"
                } else {
                    "Your answer"
                };
                view! {
                    <fieldset class="quiz-choices" aria-describedby="quiz-error">
                        <legend class="visually-hidden">{legend}</legend>
                        {choice_inputs(choices, several)}
                    </fieldset>
                }
                .into_any()
            }
        };
        view! {
            <form class="quiz-form" data-testid="quiz-form" on:submit=submit novalidate>
                {field}
                <button type="submit" data-testid="quiz-check">"Check"</button>
            </form>
            <p class="error" id="quiz-error" data-testid="quiz-error">{move || error.get()}</p>
        }
        .into_any()
    };

    let answered = move |o: Outcome| {
        let worked = trace.with(|t| match backward_context() {
            Some(b) if o.question.stage.is_backward() => {
                b.pass.with(|p| o.question.worked(t, p.as_ref().ok()))
            }
            _ => o.question.worked(t, None),
        });
        view! {
            {o.question.note.clone().map(|n| view! { <p class="quiz-note" data-testid="quiz-note">{n}</p> })}
            {worked.map(|e| {
                // Presenting, a long sum scrolls within its box rather than push the step's
                // pictures off the screen: the keyboard reaches it too. The title then carries
                // the value, which the sum's end may be scrolled out of sight with, and the box
                // says while there is more below.
                let boxed = NodeRef::<html::Div>::new();
                let more = RwSignal::new(false);
                // Run a frame later, by when the card may have gone (another step, the quiz
                // switched off): then it does nothing.
                let measure = move || {
                    if let Some(Some(b)) = boxed.try_get_untracked() {
                        let _ = more.try_set(b.scroll_top() + b.client_height() + 1 < b.scroll_height());
                    }
                };
                Effect::new(move |_| {
                    ui.presenting.track();
                    request_animation_frame(measure);
                });
                // The sign the sum ends with: ≈ where the rounded numbers do not give it.
                let sign = if e.expansion.contains(&format!("≈ {}", e.value_text)) { "≈" } else { "=" };
                let value = format!(" {sign} {}", e.value_text);
                view! {
                <div class="quiz-worked" data-testid="quiz-worked" node_ref=boxed
                    class:more=move || more.get()
                    on:scroll=move |_| measure()
                    tabindex=move || ui.presenting.get().then_some("0")>
                    <h4>{e.title}<span class="worked-value">{value}</span></h4>
                    <p class="explain-formula">{e.formula}</p>
                    <p class="explain-expansion">{e.expansion}</p>
                    {e.note.map(|n| view! { <p class="explain-note">{n}</p> })}
                    <p class="worked-more" aria-hidden="true">"more below ↓"</p>
                </div>
                }
            })}
            <button type="button" data-testid="quiz-another" node_ref=another_ref
                hidden=move || quiz.next_set.with(Option::is_none)
                on:click=move |_| quiz.another(stage.get_untracked())>"Another question"</button>
        }
    };

    let body = move || {
        let q = quiz.question.get()?;
        Some(match outcome.get() {
            None => asking(q),
            Some(o) => answered(o).into_any(),
        })
    };
    let feedback = move || outcome.get().map(|o| feedback_text(&o)).unwrap_or_default();
    let verdict = move || match outcome.get().and_then(|o| o.right) {
        Some(true) => "right",
        Some(false) => "wrong",
        None => "",
    };
    let tally = move || {
        quiz.session
            .with(|s| words::tally_text(s.answers().len(), s.right()))
    };
    let copy_result = move |_| {
        let answers: Vec<(&str, bool)> = quiz.session.with_untracked(|s| {
            s.answers()
                .iter()
                .map(|&(st, r)| (words::stage_rail_name(st).1, r))
                .collect()
        });
        let sentence = trace.with_untracked(|t| t.tokens.join(" "));
        let href = window().location().href().unwrap_or_default();
        let link = full_view_url(&href, &current_fragment());
        copy(
            words::result_line(&sentence, &answers, &link),
            "Result copied.",
            status,
            fallback,
        );
    };

    view! {
        {move || quiz.set.get().is_some().then(|| view! {
            <section class="quiz" data-testid="quiz" aria-labelledby="quiz-heading">
                <div class="quiz-top">
                    <h3 id="quiz-heading">{words::QUIZ_HEADING}</h3>
                    <span class="quiz-tally" data-testid="quiz-tally">{tally}</span>
                    <button type="button" class="quiz-copy" data-testid="quiz-copy" on:click=copy_result>"Copy my result"</button>
                </div>
                <p class="quiz-prompt" id="quiz-prompt" data-testid="quiz-prompt" aria-live="polite">{prompt}</p>
                {move || (quiz.hidden.get() && !ui.presenting.get()).then(|| view! {
                    <p class="quiz-hidden-note">{words::QUIZ_HIDDEN}</p>
                })}
                <p class="quiz-feedback" role="status" data-testid="quiz-feedback"
                    node_ref=feedback_ref tabindex="-1" data-verdict=verdict>{feedback}</p>
                {body}
                <div class="quiz-foot">
                    <span class="share-status" role="status" data-testid="quiz-copy-status">{move || status.get()}</span>
                    {move || fallback.get().map(|text| view! {
                        <textarea class="copy-fallback" readonly rows="3" aria-label="My result">{text}</textarea>
                    })}
                </div>
            </section>
        })}
    }
    .into_any()
}

/// "Quiz me": hides each stage's result behind a question, or shows it again.
#[component]
pub fn QuizToggle() -> impl IntoView {
    quiz_context().map(|quiz| view! {
        <button type="button" class="quiz-toggle" data-testid="quiz-me"
            aria-pressed=move || quiz.set.get().is_some().to_string()
            on:click=move |_| {
                quiz.toggle();
                // The button may be far from the card: the question comes into view.
                if quiz.set.get_untracked().is_some() {
                    request_animation_frame(|| {
                        if let Some(card) = document().query_selector("[data-testid=quiz]").ok().flatten() {
                            let options = web_sys::ScrollIntoViewOptions::new();
                            options.set_block(web_sys::ScrollLogicalPosition::Start);
                            card.scroll_into_view_with_scroll_into_view_options(&options);
                        }
                    });
                }
            }>"Quiz me"</button>
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_numbers_picks_and_empty_sets_are_read() {
        let number = Answer::Number { value: 0.5 };
        assert_eq!(
            read_response(&number, " −0,25 ", &[]),
            Ok((Response::Number(-0.25), "−0,25".to_string()))
        );
        assert!(read_response(&number, "", &[])
            .unwrap_err()
            .contains("Type a number"));
        assert!(read_response(&number, "abc", &[])
            .unwrap_err()
            .contains("not a number"));
        let choice = Answer::Choice {
            choices: vec!["I".into(), "am".into()],
            accepted: vec![1],
        };
        assert_eq!(
            read_response(&choice, "", &[1]),
            Ok((Response::Choice(1), "am".to_string()))
        );
        assert_eq!(read_response(&choice, "", &[]), Err(words::PICK_ONE.into()));
        let set = Answer::Set {
            choices: vec!["I".into(), "am".into(), "hungry".into()],
            correct: vec![],
        };
        assert_eq!(
            read_response(&set, "", &[2, 0]),
            Ok((Response::Set(vec![0, 2]), "I, hungry".to_string()))
        );
        assert_eq!(
            read_response(&set, "", &[]),
            Ok((Response::Set(vec![]), "none".to_string()))
        );
    }
}
