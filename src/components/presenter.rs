//! Presenter mode for a lecture hall: one stage and one head per step, drawn as large as the
//! screen allows, stepped by a presentation clicker wherever the focus is.

use super::context::{
    backward_context, run_context, ui_context, BackwardContext, RunContext, UiContext,
};
use super::keyboard::{is_pressed_by_space, is_text_field, key_target};
use super::quiz::QuizContext;
use super::training_panel::TrainingButtons;
use crate::attention::Order;
use crate::attention::{BackMatrix, HeadGrad, LossKind, Stage, Wiring};
use crate::words::{
    back_label, gated_part_name, projection_part_name, stage_name_in, DECODE_OUTPUT_STEP,
};
use leptos::prelude::*;

/// How many steps `stage` takes in presenter mode, with `n_heads` heads and `wiring`, and with
/// the backward stages following `loss` (`None` where the goal's gradients cannot be computed,
/// so the backward stages say why instead): a per-head stage shows its heads one at a time
/// (each head's ∂L/∂Qₕ, then its ∂L/∂Kₕ, on the way back through the scores),
/// the projection its three products (Q, K, V), the output projection's gradients ∂L/∂W_o and
/// ∂L/∂C one at a time (the pattern loss reaches neither), the weights' gradients one weight at
/// a time (∂L/∂W_v's sentence with ∂L/∂W_k under the pattern loss, which does not reach it) and
/// the input's gradients one at a time, so that each can be drawn large. A decoding step shows
/// each head's attention, then the output beside the whole sentence's row.
pub fn presenter_parts(
    stage: Stage,
    n_heads: usize,
    wiring: Wiring,
    loss: Option<LossKind>,
) -> usize {
    match (stage, loss) {
        // A backward stage that has no gradient to show, for want of a goal or because the
        // pattern loss does not reach it, says so once rather than once per head.
        (Stage::BackWeightedSum, Some(LossKind::Pattern)) => 1,
        _ if stage.is_backward() && stage.is_per_head() && loss.is_none() => 1,
        (Stage::Decode, _) => n_heads.max(1) + 1,
        (Stage::BackScores, Some(_)) => 2 * n_heads.max(1),
        _ if stage.is_per_head_under(loss) => n_heads.max(1),
        (Stage::Projection, _) => 3,
        // SwiGLU's gating, then the gate's weights.
        (Stage::Activation, _) if wiring.order().gated => 2,
        (Stage::BackOutput | Stage::BackProjection, Some(LossKind::Task)) => {
            BackMatrix::shown_alone(stage, wiring).len()
        }
        (Stage::BackProjection, Some(LossKind::Pattern)) => 2,
        (Stage::BackInput, Some(_)) => BackMatrix::shown_alone(stage, wiring).len(),
        _ => 1,
    }
}

/// [`presenter_parts`] for the page's own heads, wiring and, from `backward`, goal; a decoding
/// stage without a step to show (`run`) says why once.
fn parts_on_screen(
    stage: Stage,
    n_heads: usize,
    wiring: Wiring,
    backward: Option<BackwardContext>,
    run: Option<RunContext>,
) -> usize {
    if stage == Stage::Decode && !has_decode_step(run) {
        return 1;
    }
    // Only these stages read the backward pass, which is computed when first read.
    let loss = backward
        .filter(|_| has_parts(stage) || stage.is_backward())
        .and_then(|b| b.pass.with(|p| p.as_ref().ok().map(|p| p.loss_kind())));
    presenter_parts(stage, n_heads, wiring, loss)
}

/// Whether `run` has a decoding step to show.
fn has_decode_step(run: Option<RunContext>) -> bool {
    run.is_some_and(|r| {
        r.decode
            .with(|d| matches!(d, Some(Ok(d)) if !d.steps.is_empty()))
    })
}

/// The token a clicker moves the decoding stage to from its part `part` of `parts`: past the
/// output of a token with a later one to decode, the next token's first head; before the first
/// head of a token after the first decoded, the previous token's output. `None` where the step
/// leaves the token (to another part of it, or to another stage).
fn next_decoded_token(
    run: Option<RunContext>,
    forward: bool,
    part: usize,
    parts: usize,
) -> Option<usize> {
    let run = run?;
    let (first, last) = run.decode.with_untracked(|d| {
        let steps = &d.as_ref()?.as_ref().ok()?.steps;
        Some((steps.first()?.position, steps.last()?.position))
    })?;
    let row = run.row.get_untracked().unwrap_or(first).clamp(first, last);
    if forward && part + 1 == parts && row < last {
        Some(row + 1)
    } else if !forward && part == 0 && row > first {
        Some(row - 1)
    } else {
        None
    }
}

/// Whether presenter mode shows the decoding step's output (`Some(true)`) or a head's attention
/// (`Some(false)`) at `stage`; `None` where it shows the step whole (another stage, the page
/// not presenting, no step to decode).
pub(crate) fn decode_part_shown(ui: UiContext, stage: Stage) -> Option<bool> {
    (stage == Stage::Decode && ui.presenting.get() && has_decode_step(run_context()))
        .then(|| ui.part_of(stage) > 0)
}

/// Whether presenter mode steps through parts of `stage` other than its heads.
pub(crate) fn has_parts(stage: Stage) -> bool {
    matches!(
        stage,
        Stage::Projection
            | Stage::Activation
            | Stage::BackOutput
            | Stage::BackProjection
            | Stage::BackInput
    )
}

/// The step a clicker moves to from part `part` of `stage`, with `parts` giving each stage's
/// number of steps (see [`presenter_parts`]) and the stages in the order `order` walks them:
/// the next or previous part, or the next stage at its first part, or the previous stage at its
/// last. `None` past either end.
pub fn presenter_step(
    forward: bool,
    stage: Stage,
    part: usize,
    parts: &dyn Fn(Stage) -> usize,
    order: impl Into<Order>,
) -> Option<(Stage, usize)> {
    let order = order.into();
    if forward {
        if part + 1 < parts(stage) {
            return Some((stage, part + 1));
        }
        stage.next_in(order).map(|s| (s, 0))
    } else {
        if part > 0 {
            return Some((stage, part.min(parts(stage)) - 1));
        }
        stage.prev_in(order).map(|s| (s, parts(s) - 1))
    }
}

/// Whether presenter mode shows each head of `stage` in two steps, `parts` in all: a head's
/// ∂L/∂Qₕ, then its ∂L/∂Kₕ, each drawn large.
pub(crate) fn in_halves(stage: Stage, parts: usize) -> bool {
    stage == Stage::BackScores && parts > 1
}

/// Which part of `stage` is shown: one of its parts (see [`has_parts`]), the decoding step's
/// output (its last part, picked as part 1), a head's half (see [`in_halves`]), else the head.
fn presenter_part(stage: Stage, head: usize, stage_part: usize, parts: usize) -> usize {
    if has_parts(stage) {
        stage_part.min(parts.saturating_sub(1))
    } else if in_halves(stage, parts) {
        (2 * head + stage_part.min(1)).min(parts - 1)
    } else if stage == Stage::Decode && stage_part > 0 && parts > 1 {
        parts - 1
    } else {
        head
    }
}

/// Whether a clicker `key` steps forward (`Some(true)`), back (`Some(false)`) or not at all.
pub fn clicker_direction(key: &str) -> Option<bool> {
    match key {
        "ArrowRight" | " " | "PageDown" => Some(true),
        "ArrowLeft" | "PageUp" => Some(false),
        _ => None,
    }
}

/// The lecturer's zoom after `key` (`+` larger, `-` smaller, `0` fitted) from `magnify`, or
/// `None` for another key: a step at a time of a quarter, between half and three times the
/// fitted size.
pub fn magnified(key: &str, magnify: f64) -> Option<f64> {
    const STEP: f64 = 1.25;
    let to = match key {
        "+" | "=" => magnify * STEP,
        "-" | "_" => magnify / STEP,
        "0" => 1.0,
        _ => return None,
    };
    // Kept to whole percent, so that stepping up and down comes back to 100 %.
    Some(((to * 100.0).round() / 100.0).clamp(0.5, 3.0))
}

/// The stage Home (the first) or End (the last, backward) jumps to while presenting.
pub fn jump_to(key: &str, order: impl Into<Order>) -> Option<Stage> {
    let order = order.into();
    match key {
        "Home" => Some(Stage::Input),
        "End" => {
            let mut last = Stage::Input;
            while let Some(next) = last.next_in(order) {
                last = next;
            }
            Some(last)
        }
        _ => None,
    }
}

/// Asks for full screen, or leaves it.
pub fn set_fullscreen(on: bool) {
    let doc = document();
    if on {
        if let Some(root) = doc.document_element() {
            let _ = root.request_fullscreen();
        }
    } else if doc.fullscreen_element().is_some() {
        doc.exit_fullscreen();
    }
}

/// The bar above the stage while presenting: progress, the head shown, help and Leave.
#[component]
pub fn PresenterBar(
    /// The current stage.
    stage: RwSignal<Stage>,
    /// The head shown.
    head: RwSignal<usize>,
    /// Heads in the layer.
    n_heads: Signal<usize>,
    /// Whether the page trains: the bar then holds the training buttons, which would cover
    /// the step anywhere over it. While a question hides the step's result they keep their
    /// place, unseen and out of reach, so the bar does not change height under the step.
    training: Signal<bool>,
) -> impl IntoView {
    let ui = ui_context();
    let quiz = super::quiz::quiz_context();
    let concealed = move || quiz.is_some_and(|q| q.hidden.get());
    let backward = backward_context();
    let run = run_context();
    let part = move || {
        let s = stage.get();
        let parts = parts_on_screen(s, n_heads.get(), ui.steps_wiring(), backward, run);
        presenter_part(s, head.get(), ui.part_of(s), parts)
    };
    let stepper = Stepper::new(stage, head, n_heads);
    // Whether there is a step to go to; Next also reveals a hidden answer at the last step.
    let can_step = move |forward: bool| {
        let (s, n, wiring) = (stage.get(), n_heads.get(), ui.steps_wiring());
        let parts = move |x: Stage| parts_on_screen(x, n, wiring, backward, run);
        if s == Stage::Decode {
            // Read so that the arrows follow the token decoded.
            if let Some(r) = run {
                r.row.track();
            }
            if next_decoded_token(run, forward, part(), parts(s)).is_some() {
                return true;
            }
        }
        presenter_step(forward, s, part(), &parts, ui.order.get()).is_some()
    };
    let first_step = move || !can_step(false);
    let last_step = move || !can_step(true) && !quiz.is_some_and(|q| q.hidden.get());
    let part_shown = move || {
        let (s, n) = (stage.get(), n_heads.get());
        let wiring = ui.steps_wiring();
        match s {
            Stage::Projection => Some(projection_part_name(part(), wiring)),
            Stage::Activation if parts_on_screen(s, n, wiring, backward, run) > 1 => {
                Some(gated_part_name(part(), wiring))
            }
            Stage::Decode if decode_part_shown(ui, s) == Some(true) => {
                Some(DECODE_OUTPUT_STEP.to_string())
            }
            Stage::BackOutput | Stage::BackProjection | Stage::BackInput
                if parts_on_screen(s, n, wiring, backward, run) > 1 =>
            {
                let results = BackMatrix::shown_alone(s, wiring);
                let parts = parts_on_screen(s, n, wiring, backward, run);
                let at = part().min(results.len() - 1);
                Some(format!(
                    "{}: {} of {parts}",
                    back_label(results[at]),
                    at + 1
                ))
            }
            // Each head's ∂L/∂Qₕ, then its ∂L/∂Kₕ: the subscript names the head.
            Stage::BackScores if in_halves(s, parts_on_screen(s, n, wiring, backward, run)) => {
                let at = part();
                let grad = if at % 2 == 0 {
                    HeadGrad::Q
                } else {
                    HeadGrad::K
                };
                Some(format!(
                    "{}: {} of {}",
                    back_label(BackMatrix::Head(at / 2, grad)),
                    at + 1,
                    2 * n.max(1)
                ))
            }
            // A stage that says once that it is not reached shows no head.
            _ => ((s.is_per_head() || s == Stage::BackLoss)
                && n > 1
                && parts_on_screen(s, n, wiring, backward, run) > 1)
                .then(|| format!("Head {} of {n}", part().min(n - 1) + 1)),
        }
    };
    view! {
        <div class="presenter-bar" data-testid="presenter-bar"
            data-step=move || format!("{}-{}", stage.get().key(), part())>
            // The number of dots sets how narrow the progress may be: three rows of them at most.
            <ol class="presenter-progress" aria-label="Progress" data-testid="presenter-progress"
                style=move || {
                    let n = Stage::walk(ui.order.get()).count();
                    format!("--dots: {n}; --dots-row: {}", n.div_ceil(3))
                }>
                {move || {
                    let order = ui.order.get();
                    Stage::walk(order).map(|s| {
                        let at = s.position(order);
                        let done = move || stage.get().position(order) > at;
                        view! {
                            <li class:current=move || stage.get() == s class:done=done
                                class:backward=s.is_backward()
                                aria-current=move || (stage.get() == s).then_some("step")>
                                <span class="visually-hidden">{stage_name_in(s, order)}</span>
                            </li>
                        }
                    }).collect_view()
                }}
            </ol>
            <span class="presenter-head" data-testid="presenter-head">{part_shown}</span>
            // Every key where the help has room for them on two lines, fewer where it is short, so
            // that the bar keeps to the buttons' height and leaves the step its room.
            <span class="presenter-help">{move || if quiz.is_some_and(|q| q.set.get().is_some()) {
                view! {
                    <span class="keys-all">"← → Space: step · Home End: first, last · R: reveal · h: a cell's explanation on/off · + − 0: zoom · f: full screen · Esc: leave"</span>
                    <span class="keys-some">"← →: step · R: reveal · h: a cell's explanation on/off · Esc: leave"</span>
                    <span class="keys-few">"← →: step · R: reveal · Esc: leave"</span>
                }
            } else {
                view! {
                    <span class="keys-all">"← → Space: step · Home End: first, last · h: a cell's explanation on/off · + − 0: zoom · f: full screen · Esc: leave"</span>
                    <span class="keys-some">"← →: step · h: a cell's explanation on/off · Esc: leave"</span>
                    <span class="keys-few">"← →: step · Esc: leave"</span>
                }
            }}</span>
            <span class="presenter-zoom" role="group" aria-label="Zoom"
                class:zoomed=move || ui.magnify.get() != 1.0>
                <button type="button" data-testid="presenter-smaller" aria-label="Smaller"
                    on:click=move |_| ui.magnify.update(|m| *m = magnified("-", *m).unwrap_or(*m))>"−"</button>
                <button type="button" data-testid="presenter-fit" title="Fit the screen"
                    on:click=move |_| ui.magnify.set(1.0)>
                    {move || format!("{:.0} %", ui.magnify.get() * 100.0)}
                </button>
                <button type="button" data-testid="presenter-larger" aria-label="Larger"
                    on:click=move |_| ui.magnify.update(|m| *m = magnified("+", *m).unwrap_or(*m))>"+"</button>
            </span>
            // A phone or a tablet has no clicker: the bar steps too.
            <span class="presenter-arrows">
                <button type="button" data-testid="presenter-prev" aria-label="Previous step"
                    disabled=first_step
                    on:click=move |_| step_presentation(false, stepper)>"←"</button>
                <button type="button" data-testid="presenter-next" aria-label="Next step"
                    disabled=last_step
                    on:click=move |_| step_presentation(true, stepper)>"→"</button>
            </span>
            {move || training.get().then(|| view! {
                <span class="presenter-train" data-testid="presenter-training" role="group" aria-label="Training"
                    class:concealed=concealed inert=move || concealed().then_some("")>
                    <span class="presenter-train-label" aria-hidden="true">"Training"</span>
                    <TrainingButtons />
                </span>
            })}
            <button type="button" class="presenter-leave" data-testid="leave-presenter"
                on:click=move |_| { ui.presenting.set(false); set_fullscreen(false); }>"Leave"</button>
        </div>
    }
}

/// Steps with the clicker's keys while presenting, even when a heatmap or a button has the focus:
/// the keys are taken before anything in the page sees them. Only a text field keeps them.
pub fn step_with_clicker(stage: RwSignal<Stage>, head: RwSignal<usize>, n_heads: Signal<usize>) {
    let stepper = Stepper::new(stage, head, n_heads);
    let ui = stepper.ui;
    let presenting = ui.presenting;
    // Whether the focus last moved with a press of the pointer rather than from the keyboard.
    let pointer_pressed = StoredValue::new_local(false);
    let focused_by_pointer = StoredValue::new_local(false);
    let _pressed = window_event_listener(leptos::ev::pointerdown, move |_| {
        pointer_pressed.set_value(true);
    });
    let _moved = window_event_listener(leptos::ev::focusin, move |_| {
        focused_by_pointer.set_value(pointer_pressed.get_value());
    });
    listen_before_the_page("keydown", move |_| pointer_pressed.set_value(false));
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if !presenting.get_untracked() || ev.alt_key() || ev.ctrl_key() || ev.meta_key() {
            return;
        }
        // + and − zoom the step, 0 fits it again.
        if let Some(to) = magnified(&ev.key(), stepper.ui.magnify.get_untracked()) {
            if key_target(&ev).is_some_and(|el| is_text_field(&el)) {
                return;
            }
            ev.prevent_default();
            stepper.ui.magnify.set(to);
            return;
        }
        // Home and End jump to the first and the last step.
        if let Some(to) = jump_to(&ev.key(), stepper.ui.order.get_untracked()) {
            if key_target(&ev).is_some_and(|el| is_text_field(&el)) {
                return;
            }
            ev.prevent_default();
            ev.stop_propagation();
            // Home opens the first stage at its first step, End the last at its last.
            let parts = steps_of(stepper, to);
            let last = if ev.key() == "End" {
                parts.max(1) - 1
            } else {
                0
            };
            show_step(stepper, to, last, parts);
            return;
        }
        let Some(forward) = clicker_direction(&ev.key()) else {
            return;
        };
        // Space presses a button the keyboard reached; on one the mouse clicked (a clicker in
        // the other hand), it steps.
        let space = ev.key() == " ";
        // On the decoding tools' buttons, ← and → step the tokens (the tools take them).
        let arrow = matches!(ev.key().as_str(), "ArrowLeft" | "ArrowRight");
        // A clicker's keys step even from a menu (the decoding tools' token, which takes the
        // focus when Next token runs out); its arrows and Space stay the menu's.
        let clicker = matches!(ev.key().as_str(), "PageDown" | "PageUp");
        if key_target(&ev).is_some_and(|el| {
            (is_text_field(&el) && !(clicker && el.tag_name() == "SELECT"))
                || (space && is_pressed_by_space(&el) && !focused_by_pointer.get_value())
                || (arrow && el.closest(".run-tools button").ok().flatten().is_some())
        }) {
            return;
        }
        ev.prevent_default();
        ev.stop_propagation();
        step_presentation(forward, stepper);
    };
    listen_before_the_page("keydown", on_key);
}

/// The page's contexts a step of the presentation reads, taken where the page is built: an
/// event handler runs outside it.
#[derive(Clone, Copy)]
struct Stepper {
    stage: RwSignal<Stage>,
    head: RwSignal<usize>,
    n_heads: Signal<usize>,
    ui: UiContext,
    quiz: Option<QuizContext>,
    backward: Option<BackwardContext>,
    run: Option<RunContext>,
}

impl Stepper {
    fn new(stage: RwSignal<Stage>, head: RwSignal<usize>, n_heads: Signal<usize>) -> Self {
        Self {
            stage,
            head,
            n_heads,
            ui: ui_context(),
            quiz: super::quiz::quiz_context(),
            backward: backward_context(),
            run: run_context(),
        }
    }
}

/// One step of the presentation, forward or back, as the clicker and the bar's arrows take it.
/// In a quiz, Next first reveals the answer the class guessed.
fn step_presentation(forward: bool, stepper: Stepper) {
    let Stepper {
        stage,
        head,
        ui,
        quiz,
        ..
    } = stepper;
    if forward && quiz.is_some_and(|q| q.reveal()) {
        return;
    }
    let from = stage.get_untracked();
    let parts = move |s: Stage| steps_of(stepper, s);
    let part = presenter_part(
        from,
        head.get_untracked(),
        untrack(|| ui.part_of(from)),
        parts(from),
    );
    // A decoding stage steps through its tokens, each token's heads, then its output.
    if from == Stage::Decode {
        let n = parts(from);
        if let Some(row) = next_decoded_token(stepper.run, forward, part, n) {
            if let Some(run) = stepper.run {
                run.row.set(Some(row));
            }
            show_step(stepper, from, if forward { 0 } else { n - 1 }, n);
            return;
        }
    }
    let order = ui.order.get_untracked();
    if let Some((s, p)) = presenter_step(forward, from, part, &parts, order) {
        show_step(stepper, s, p, parts(s));
    }
}

/// Shows part `p` of `s`'s `parts` steps.
fn show_step(stepper: Stepper, s: Stage, p: usize, parts: usize) {
    let Stepper {
        stage, head, ui, ..
    } = stepper;
    // The part stepped to belongs to its stage; a stage of heads leaves none, so a stage
    // reached later by a link or Back opens at its first part.
    if has_parts(s) {
        ui.stage_part.set((s, p));
    } else if in_halves(s, parts) {
        ui.stage_part.set((s, p % 2));
        head.set(p / 2);
    } else if s == Stage::Decode && p > 0 && p + 1 == parts {
        // The decoding step's output, after its heads: the head stays as it was.
        ui.stage_part.set((s, 1));
    } else {
        ui.stage_part.set((s, 0));
        head.set(p);
    }
    stage.set(s);
}

/// The number of steps `s` takes on the presenter's screen now.
fn steps_of(stepper: Stepper, s: Stage) -> usize {
    let n = stepper.n_heads.get_untracked();
    let wiring = untrack(|| stepper.ui.steps_wiring());
    untrack(|| parts_on_screen(s, n, wiring, stepper.backward, stepper.run))
}

/// Listens for `event` on the window in the capture phase, before any element's own listeners,
/// for as long as the page lives.
fn listen_before_the_page(event: &str, f: impl Fn(web_sys::KeyboardEvent) + 'static) {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    let handler = Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(f);
    let _ = window().add_event_listener_with_callback_and_bool(
        event,
        handler.as_ref().unchecked_ref(),
        true,
    );
    handler.forget();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{Activation, Norm};

    #[test]
    fn the_zoom_keys_step_by_a_quarter_and_come_back_to_the_fitted_size() {
        assert_eq!(magnified("+", 1.0), Some(1.25));
        assert_eq!(magnified("-", 1.25), Some(1.0));
        assert_eq!(magnified("-", 1.0), Some(0.8));
        assert_eq!(magnified("+", 0.8), Some(1.0));
        assert_eq!(magnified("0", 2.44), Some(1.0));
        assert_eq!(magnified("+", 3.0), Some(3.0));
        assert_eq!(magnified("-", 0.5), Some(0.5));
        assert_eq!(magnified("a", 1.0), None);
    }

    #[test]
    fn home_and_end_jump_to_the_first_and_the_last_step() {
        assert_eq!(jump_to("Home", None), Some(Stage::Input));
        assert_eq!(jump_to("End", None), Some(Stage::BackInput));
        assert_eq!(jump_to("End", Some(Norm::Pre)), Some(Stage::BackInput));
        assert_eq!(jump_to("a", None), None);
    }

    /// Each stage's steps with `n_heads` heads, attention alone and a task as the goal.
    fn parts(n_heads: usize) -> impl Fn(Stage) -> usize {
        move |s| presenter_parts(s, n_heads, Wiring::default(), Some(LossKind::Task))
    }

    #[test]
    fn a_per_head_stage_steps_through_its_heads_first() {
        assert_eq!(
            presenter_step(true, Stage::Scores, 0, &parts(2), None),
            Some((Stage::Scores, 1))
        );
        assert_eq!(
            presenter_step(true, Stage::Scores, 1, &parts(2), None),
            Some((Stage::Scale, 0))
        );
        assert_eq!(
            presenter_step(true, Stage::Input, 0, &parts(2), None),
            Some((Stage::Projection, 0))
        );
        // The projection shows Q, K and V one at a time.
        assert_eq!(
            presenter_step(true, Stage::Projection, 1, &parts(2), None),
            Some((Stage::Projection, 2))
        );
        assert_eq!(
            presenter_step(true, Stage::Projection, 2, &parts(2), None),
            Some((Stage::SplitHeads, 0))
        );
        assert_eq!(
            presenter_step(true, Stage::OutputProjection, 0, &parts(2), None),
            Some((Stage::BackLoss, 0))
        );
        assert_eq!(
            presenter_step(true, Stage::BackInput, 1, &parts(2), None),
            None
        );
    }

    #[test]
    fn each_heads_query_and_key_gradients_take_a_step_each() {
        let plain = Wiring::default();
        for loss in [Some(LossKind::Pattern), Some(LossKind::Task)] {
            assert_eq!(presenter_parts(Stage::BackScores, 2, plain, loss), 4);
            assert_eq!(presenter_parts(Stage::BackScores, 1, plain, loss), 2);
        }
        // Without gradients the stage only says why, once.
        assert_eq!(presenter_parts(Stage::BackScores, 2, plain, None), 1);
        // Part 2h is head h's ∂L/∂Qₕ, part 2h + 1 its ∂L/∂Kₕ.
        assert!(in_halves(Stage::BackScores, 4));
        assert!(!in_halves(Stage::BackScores, 1));
        assert!(!in_halves(Stage::Scores, 2));
        assert_eq!(presenter_part(Stage::BackScores, 0, 0, 4), 0);
        assert_eq!(presenter_part(Stage::BackScores, 0, 1, 4), 1);
        assert_eq!(presenter_part(Stage::BackScores, 1, 0, 4), 2);
        assert_eq!(presenter_part(Stage::BackScores, 1, 1, 4), 3);
        // Back from the weights' gradients, the last head's ∂L/∂Kₕ.
        let steps = |s| presenter_parts(s, 2, plain, Some(LossKind::Task));
        assert_eq!(
            presenter_step(false, Stage::BackProjection, 0, &steps, None),
            Some((Stage::BackScores, 3))
        );
        assert_eq!(
            presenter_step(true, Stage::BackScores, 3, &steps, None),
            Some((Stage::BackProjection, 0))
        );
    }

    #[test]
    fn swiglu_shows_its_gating_then_the_gates_weights_and_other_activations_one_step() {
        let gated = Wiring {
            block: Some(Norm::Pre),
            activation: Activation::Swiglu,
            ..Wiring::default()
        };
        assert_eq!(presenter_parts(Stage::Activation, 2, gated, None), 2);
        for activation in [Activation::Relu, Activation::Gelu] {
            let w = Wiring {
                activation,
                ..gated
            };
            assert_eq!(presenter_parts(Stage::Activation, 2, w, None), 1);
        }
        let order = gated.order();
        assert!(order.gated);
        let steps = |s| presenter_parts(s, 2, gated, None);
        assert_eq!(
            presenter_step(true, Stage::Activation, 0, &steps, order),
            Some((Stage::Activation, 1))
        );
        assert_eq!(
            presenter_step(true, Stage::Activation, 1, &steps, order),
            Some((Stage::FeedForward, 0))
        );
        assert_eq!(
            crate::words::gated_part_name(0, gated),
            "Gating: G = SiLU(N₂·W_gate) ⊙ H"
        );
    }

    #[test]
    fn the_outputs_the_weights_and_the_inputs_gradients_are_shown_one_at_a_time() {
        let task = Some(LossKind::Task);
        let pattern = Some(LossKind::Pattern);
        let plain = Wiring::default();
        let cross_pre = Wiring {
            cross: true,
            block: Some(Norm::Pre),
            ..Wiring::default()
        };
        // The pattern loss is one ∂L/∂Aₕ per head, the task loss one ∂L/∂Y.
        assert_eq!(presenter_parts(Stage::BackLoss, 2, plain, pattern), 2);
        assert_eq!(presenter_parts(Stage::BackLoss, 2, plain, task), 1);
        // ∂L/∂W_o, then ∂L/∂C; the pattern loss reaches neither, and the stage says so once.
        assert_eq!(presenter_parts(Stage::BackOutput, 2, plain, task), 2);
        assert_eq!(presenter_parts(Stage::BackOutput, 2, plain, pattern), 1);
        // ∂L/∂W_q, ∂L/∂W_k and ∂L/∂W_v; under the pattern loss ∂L/∂W_v's sentence goes with
        // ∂L/∂W_k.
        assert_eq!(presenter_parts(Stage::BackProjection, 2, plain, task), 3);
        assert_eq!(presenter_parts(Stage::BackProjection, 2, plain, pattern), 2);
        // ∂L/∂X and ∂L/∂E; with a pre-norm block and a source, ∂L/∂N₁, ∂L/∂X, ∂L/∂X_src, ∂L/∂E
        // and ∂L/∂E_src.
        assert_eq!(presenter_parts(Stage::BackInput, 2, plain, pattern), 2);
        assert_eq!(presenter_parts(Stage::BackInput, 2, cross_pre, task), 5);
        // A per-head stage the pattern loss does not reach says so once, not once per head;
        // one it reaches steps through the heads.
        assert_eq!(
            presenter_parts(Stage::BackWeightedSum, 2, plain, pattern),
            1
        );
        assert_eq!(presenter_parts(Stage::BackWeightedSum, 2, plain, task), 2);
        assert_eq!(presenter_parts(Stage::BackSoftmax, 2, plain, pattern), 2);
        assert_eq!(presenter_parts(Stage::BackSoftmax, 2, plain, None), 1);
        // Without gradients the stages only say why: one step each.
        assert_eq!(presenter_parts(Stage::BackProjection, 2, plain, None), 1);
        assert_eq!(presenter_parts(Stage::BackInput, 2, cross_pre, None), 1);
        let steps = |s| presenter_parts(s, 2, cross_pre, task);
        assert_eq!(
            presenter_step(true, Stage::BackProjection, 2, &steps, Some(Norm::Pre)),
            Some((Stage::BackInput, 0))
        );
        assert_eq!(
            presenter_step(false, Stage::BackInput, 0, &steps, Some(Norm::Pre)),
            Some((Stage::BackProjection, 2))
        );
        assert_eq!(
            presenter_step(true, Stage::BackInput, 3, &steps, Some(Norm::Pre)),
            Some((Stage::BackInput, 4))
        );
        assert_eq!(
            presenter_step(true, Stage::BackInput, 4, &steps, Some(Norm::Pre)),
            None
        );
    }

    #[test]
    fn stepping_back_enters_a_per_head_stage_at_its_last_head() {
        assert_eq!(
            presenter_step(false, Stage::Scale, 1, &parts(4), None),
            Some((Stage::Scale, 0))
        );
        assert_eq!(
            presenter_step(false, Stage::Scale, 0, &parts(4), None),
            Some((Stage::Scores, 3))
        );
        assert_eq!(
            presenter_step(false, Stage::SplitHeads, 0, &parts(4), None),
            Some((Stage::Projection, 2))
        );
        assert_eq!(
            presenter_step(false, Stage::Projection, 0, &parts(4), None),
            Some((Stage::Input, 0))
        );
        assert_eq!(
            presenter_step(false, Stage::Input, 0, &parts(4), None),
            None
        );
        // One head: one step per stage.
        assert_eq!(
            presenter_step(true, Stage::Scores, 0, &parts(1), None),
            Some((Stage::Scale, 0))
        );
    }

    #[test]
    fn a_decoding_step_shows_each_head_then_its_output() {
        assert_eq!(parts(2)(Stage::Decode), 3);
        assert_eq!(parts(1)(Stage::Decode), 2);
        // Part 1 picked is the output, after however many heads; else the head.
        assert_eq!(presenter_part(Stage::Decode, 1, 0, 3), 1);
        assert_eq!(presenter_part(Stage::Decode, 1, 1, 3), 2);
        assert_eq!(presenter_part(Stage::Decode, 0, 1, 2), 1);
        // Without a step to decode, the stage is one step: the head is shown.
        assert_eq!(presenter_part(Stage::Decode, 0, 1, 1), 0);
    }

    #[test]
    fn clicker_keys_go_forward_or_back() {
        for key in ["ArrowRight", " ", "PageDown"] {
            assert_eq!(clicker_direction(key), Some(true), "{key}");
        }
        for key in ["ArrowLeft", "PageUp"] {
            assert_eq!(clicker_direction(key), Some(false), "{key}");
        }
        assert_eq!(clicker_direction("Enter"), None);
    }
}
