//! The training panel: choose a goal and what learns, then Step, Train / Pause or Reset, with
//! the loss curve drawn live while every stage follows the new weights. While presenting, the
//! buttons sit in the presenter bar and drive the same run.

use super::outline::model_outline;
use super::TargetPainter;
use crate::attention::{
    check_goal_fits, largest_gradient, NamedTarget, OptimizerKind, Task, Trainable,
};
use crate::plot::{Theme, LOSS_CURVE_SIZE};
use crate::state::Model;
use crate::training::{checked, choose_goal, learnable, GoalChoice, Run, GOALS};
use crate::words::{
    goal_description, large_rate_note, loss_text, optimizer_label, optimizer_name, pattern_label,
    pattern_short, positions_note, positions_on_label, positions_width, sgd_note, status_text,
    task_embeddings_note, task_label, task_short, trainable_label, DIRECTION_NOTE, PER_HEAD_LABEL,
    PER_HEAD_SHORT, RUN_LENGTH_NOTE, TRAINING_INTRO,
};
use leptos::html::Canvas;
use leptos::prelude::*;

/// A run stops by itself after this many steps.
const MAX_STEPS: usize = 1000;

/// Training's pace while it runs, in steps per second: one step a frame on a 60 Hz display,
/// and more than one in a frame that came late, so a slow redraw does not slow the learning.
const STEPS_PER_SECOND: f64 = 60.0;

/// How much wider the loss curve may grow while presenting, for the back of a lecture hall.
const PRESENTED_CURVE_SCALE: f64 = 2.0;

/// How much larger the loss curve's writing is while presenting than its 12 px elsewhere.
const PRESENTED_TEXT_SCALE: f64 = 4.0 / 3.0;

/// The most steps one frame takes to catch up.
const MAX_STEPS_PER_FRAME: usize = 4;

/// The goal as the goal menu names it.
pub fn goal_text(goal: GoalChoice, cross: bool) -> String {
    match goal {
        GoalChoice::Pattern(t) => pattern_label(t, cross).to_string(),
        GoalChoice::PerHead => PER_HEAD_LABEL.to_string(),
        GoalChoice::Task(t) => task_label(t, cross),
    }
}

/// The goal as the goal menu's entry names it, short enough for a phone; [`goal_text`] says it
/// whole under the menu.
fn goal_short(goal: GoalChoice, cross: bool) -> &'static str {
    match goal {
        GoalChoice::Pattern(t) => pattern_short(t, cross),
        GoalChoice::PerHead => PER_HEAD_SHORT,
        GoalChoice::Task(t) => task_short(t, cross),
    }
}

/// Everything a frame of training reads and writes; all of it is `Copy`. One per page, provided
/// as a context, so that the panel and the presenter bar's buttons drive the same run.
#[derive(Clone, Copy)]
pub struct Trainer {
    model: RwSignal<Model>,
    run: StoredValue<Option<Run>>,
    /// The model as the run last left it: any other model means the learner changed it.
    written: StoredValue<Option<Model>>,
    losses: RwSignal<Vec<f64>>,
    running: RwSignal<bool>,
    error: RwSignal<Option<String>>,
    /// Counts the runs started, so the history can tell one run's frames from the next run's.
    run_id: StoredValue<u64>,
    /// When Train was pressed, in page milliseconds, and the steps taken since.
    pace: StoredValue<(f64, usize)>,
    ui: super::context::UiContext,
}

impl Trainer {
    /// Whether a run is training the model.
    pub(super) fn running(&self) -> Signal<bool> {
        self.running.into()
    }

    /// Whether the model on screen is the one training last wrote: its numbers changed by a step
    /// the learner asked to watch, not by an edit.
    pub(super) fn wrote_model_on_screen(&self) -> bool {
        self.model
            .with_untracked(|m| self.written.with_value(|w| w.as_ref() == Some(m)))
    }

    /// Whether a run has a loss curve to show.
    pub(super) fn has_curve(&self) -> Memo<bool> {
        let losses = self.losses;
        Memo::new(move |_| losses.with(|l| !l.is_empty()))
    }
}

/// Writes `next` into the model and clears `error`; or, refused, shows why in `error` and, for a
/// menu's change (`ev`), puts the menu back on `kept`, the entry training keeps.
pub(super) fn apply_or_refuse<E: std::fmt::Display>(
    model: RwSignal<Model>,
    next: Result<crate::attention::Training, E>,
    error: RwSignal<Option<String>>,
    menu: Option<(&leptos::ev::Event, &str)>,
) {
    match next {
        Ok(training) => {
            error.set(None);
            model.update(|m| m.training = training);
        }
        Err(e) => {
            error.set(Some(e.to_string()));
            let select: Option<web_sys::HtmlSelectElement> = menu
                .and_then(|(ev, _)| ev.target())
                .and_then(|t| wasm_bindgen::JsCast::dyn_into(t).ok());
            if let (Some(select), Some((_, kept))) = (select, menu) {
                select.set_value(kept);
            }
        }
    }
}

fn now() -> f64 {
    window()
        .performance()
        .map_or_else(js_sys::Date::now, |p| p.now())
}

impl Trainer {
    /// Takes `steps` steps; starts a new run when the settings or the model changed since the
    /// last one. Returns whether it stepped.
    fn steps(self, steps: usize) -> bool {
        let mut model = self.model.get_untracked();
        let mut settings = model.fitted_training();
        // A matrix that is no longer offered (E_src once the source is gone) does not learn.
        let offered = learnable(model.cross);
        settings.train.retain(|t| offered.contains(t));
        let fresh = self.run.with_value(|r| {
            r.as_ref().is_none_or(|r| r.settings() != &settings)
                || self.written.with_value(|w| w.as_ref() != Some(&model))
        });
        if fresh {
            match Run::start(settings, &model) {
                Ok(run) => {
                    self.run.set_value(Some(run));
                    self.run_id.update_value(|id| *id += 1);
                }
                Err(e) => {
                    self.error.set(Some(e.to_string()));
                    self.run.set_value(None);
                    return false;
                }
            }
        }
        let mut result = Ok(());
        self.run.update_value(|r| {
            let Some(run) = r.as_mut() else { return };
            let mut taken = 0;
            loop {
                result = run.step(&mut model);
                taken += 1;
                if result.is_err() || taken >= steps || run.steps() >= MAX_STEPS {
                    break;
                }
            }
        });
        let losses = self
            .run
            .with_value(|r| r.as_ref().map(|r| r.losses().to_vec()));
        self.losses.set(losses.unwrap_or_default());
        self.written.set_value(Some(model.clone()));
        let run_id = self.run_id.get_value();
        self.ui.trained.set_value(Some((run_id, model.clone())));
        self.model.set(model);
        match result {
            Ok(()) => {
                self.error.set(None);
                true
            }
            Err(e) => {
                self.error.set(Some(e.to_string()));
                false
            }
        }
    }

    /// One frame of a running training, and the next frame's request: steps at
    /// [`STEPS_PER_SECOND`], slow enough to watch the loss fall and the heatmaps change.
    fn frame(self) {
        if !self.running.get_untracked() {
            return;
        }
        let (started, done) = self.pace.get_value();
        let due = ((now() - started) / 1000.0 * STEPS_PER_SECOND).floor() as usize;
        let steps = due.saturating_sub(done).clamp(1, MAX_STEPS_PER_FRAME);
        self.pace.set_value((started, done + steps));
        let more = self.steps(steps)
            && self
                .run
                .with_value(|r| r.as_ref().is_some_and(|r| r.steps() < MAX_STEPS));
        if more {
            request_animation_frame(move || self.frame());
        } else {
            self.running.set(false);
        }
    }

    /// Back to the weights before the run, with its curve cleared.
    fn reset(self) {
        self.running.set(false);
        if let Some(before) = self
            .run
            .with_value(|r| r.as_ref().map(|r| r.before().clone()))
        {
            self.model.set(before);
        }
        self.run.set_value(None);
        self.written.set_value(None);
        self.losses.set(Vec::new());
        self.error.set(None);
    }
}

/// Creates the page's one trainer of `model` and provides it to the components below.
pub fn provide_trainer(model: RwSignal<Model>) -> Trainer {
    let trainer = Trainer {
        model,
        run: StoredValue::new(None),
        written: StoredValue::new(None),
        losses: RwSignal::new(Vec::new()),
        running: RwSignal::new(false),
        error: RwSignal::new(None),
        run_id: StoredValue::new(0),
        pace: StoredValue::new((0.0, 0)),
        ui: super::context::ui_context(),
    };
    provide_context(trainer);
    trainer
}

/// Step, Train / Pause and Reset, for the page's trainer; nothing where there is none.
#[component]
pub fn TrainingButtons() -> impl IntoView {
    let Some(trainer) = use_context::<Trainer>() else {
        return ().into_any();
    };
    view! {
        <div class="training-buttons" role="group" aria-label="Training">
            <button type="button" data-testid="train-step"
                prop:disabled=move || trainer.running.get()
                on:click=move |_| { trainer.steps(1); }>"Step"</button>
            <button type="button" data-testid="train-run"
                aria-pressed=move || trainer.running.get().to_string()
                on:click=move |_| {
                    if trainer.running.get_untracked() {
                        trainer.running.set(false);
                    } else {
                        trainer.running.set(true);
                        trainer.pace.set_value((now(), 0));
                        trainer.frame();
                    }
                }>
                {move || if trainer.running.get() { "Pause" } else { "Train" }}
            </button>
            <button type="button" data-testid="train-reset"
                prop:disabled=move || trainer.losses.with(Vec::is_empty)
                on:click=move |_| trainer.reset()>"Reset"</button>
        </div>
    }
    .into_any()
}

/// The training panel.
#[component]
pub fn TrainingPanel(
    /// The learner's model, which training changes.
    model: RwSignal<Model>,
    /// The one trace, whose head is shown beside the loss curve.
    trace: Memo<crate::attention::Trace>,
) -> impl IntoView {
    let ui = super::context::ui_context();
    let trainer = use_context::<Trainer>().unwrap_or_else(|| provide_trainer(model));
    // The settings live in the model, so the link, the scenario file and Back carry them; a
    // memo keeps the panel still while training changes the weights.
    let outline = model_outline(model);
    let settings = Memo::new(move |_| outline.with(|o| o.training.clone()));
    let cross = Memo::new(move |_| outline.with(|o| o.cross));
    let n_heads = Memo::new(move |_| outline.with(|o| o.config.n_heads));
    // The largest gradient of the matrices that learn, from the pass the backward stages show:
    // whether SGD needs a larger η than Adam depends on it.
    let backward = super::context::backward_context();
    let largest = move || {
        let train = settings.with(|s| s.train.clone());
        backward?.pass.with(|p| {
            p.as_ref()
                .ok()
                .and_then(|p| largest_gradient(&p.gradients, &train))
        })
    };
    // A refused choice of goal, shown beside the menu until a choice is accepted.
    let goal_refusal = RwSignal::new(None::<String>);
    // A goal the model no longer fits (the mask switched on under `next`), said beside the menu.
    let goal_problem = Memo::new(move |_| {
        outline.with(|o| {
            check_goal_fits(&o.training.goal, &o.config, &o.tokens, o.key_tokens())
                .err()
                .map(|e| e.to_string())
        })
    });
    let canvas = NodeRef::<Canvas>::new();
    let presenting = ui.presenting;
    let curve_scale = move || {
        if presenting.get() {
            PRESENTED_CURVE_SCALE
        } else {
            1.0
        }
    };
    // The curve is drawn at the size its box is shown, so its writing keeps its size whatever
    // the box: a phone's column, the window, a presenter's column.
    let shown = box_size(canvas);
    Effect::new(move |_| {
        let losses = trainer.losses.get();
        let theme = if ui.dark.get() {
            Theme::DARK
        } else {
            Theme::LIGHT
        };
        let text = if presenting.get() {
            PRESENTED_TEXT_SCALE
        } else {
            1.0
        };
        if let Some(canvas) = canvas.get() {
            draw(&canvas, &losses, &theme, shown.get(), text);
        }
    });
    // A model changed by anything but the run (an edit, Back, a preset) ends the run: its curve
    // no longer belongs to the weights on screen.
    Effect::new(move |_| {
        let changed = model.with(|m| trainer.written.with_value(|w| w.as_ref() != Some(m)));
        if changed && !trainer.running.get_untracked() {
            trainer.run.set_value(None);
            trainer.written.set_value(None);
            // An empty curve stays as drawn: every edit passes here.
            if trainer.losses.with_untracked(|l| !l.is_empty()) {
                trainer.losses.set(Vec::new());
            }
        }
    });
    // Leaving the page's training mid-run would keep the model changing under other edits.
    on_cleanup(move || trainer.running.set(false));

    let set_training = move |f: &dyn Fn(&mut crate::attention::Training)| {
        let mut next = settings.get_untracked();
        f(&mut next);
        model.update(|m| m.training = next);
    };
    let goal_changed = move |ev: leptos::ev::Event| {
        let Some(choice) = GoalChoice::from_key(&event_target_value(&ev)) else {
            return;
        };
        let next = model.with_untracked(|m| {
            let next = choose_goal(&settings.get_untracked(), choice, m.config.n_heads);
            checked(m, next)
        });
        // Refused, the menu shows the goal training keeps.
        let kept = GoalChoice::of(&settings.get_untracked().goal).key();
        apply_or_refuse(model, next, goal_refusal, Some((&ev, kept)));
    };
    let toggle = move |t: Trainable, on: bool| {
        set_training(&|s| {
            s.train.retain(|x| *x != t);
            if on {
                s.train.push(t);
            }
        })
    };
    let rate_changed = move |ev: leptos::ev::Event| {
        match event_target_value(&ev).trim().parse::<f64>() {
            Ok(lr) if lr > 0.0 && lr.is_finite() => {
                trainer.error.set(None);
                set_training(&|s| s.learning_rate = lr);
            }
            _ => {
                let kept = settings.with_untracked(|s| s.learning_rate);
                trainer.error.set(Some(format!(
                    "Not a learning rate: η must be a number above 0. Training keeps η = {kept}."
                )));
                // The box shows the η that training uses.
                let input: Option<web_sys::HtmlInputElement> = ev
                    .target()
                    .and_then(|t| wasm_bindgen::JsCast::dyn_into(t).ok());
                if let Some(input) = input {
                    input.set_value(&kept.to_string());
                }
            }
        }
    };
    let choice = move || settings.with(|s| GoalChoice::of(&s.goal));
    let is_task = move || matches!(choice(), GoalChoice::Task(_));

    view! {
        <section class="panel training" aria-labelledby="training-title" data-testid="training"
            class:presenting=move || presenting.get()
            class:has-curve=move || !trainer.losses.with(Vec::is_empty)>
            <h2 id="training-title" class="panel-title">"Train the weights"</h2>
            <p class="help">{TRAINING_INTRO}</p>
            <div class="training-settings">
                <label>"Goal "
                    <select data-testid="train-goal" on:change=goal_changed
                        prop:value=move || choice().key()>
                        {GOALS.iter().map(|g| view! {
                            <option value=g.key()>{move || goal_short(*g, cross.get())}</option>
                        }).collect_view()}
                    </select>
                </label>
                <p class="help menu-says" data-testid="train-goal-says">
                    {move || goal_text(choice(), cross.get())}
                </p>
                <p class="error goal-error" role="alert" data-testid="train-goal-error">
                    {move || goal_refusal.get().or_else(|| goal_problem.get())}
                </p>
                {move || (choice() == GoalChoice::PerHead).then(|| view! {
                    <div class="head-targets" data-testid="train-head-targets">
                        {(0..n_heads.get()).map(|head| view! { <TargetPainter model head /> }).collect_view()}
                    </div>
                })}
                <fieldset class="train-which">
                    <legend>"Learns"</legend>
                    {move || learnable(cross.get()).into_iter().map(|t| view! {
                        <label class="toggle">
                            <input type="checkbox" data-testid=format!("train-{}", t.key())
                                prop:checked=move || settings.with(|s| s.train.contains(&t))
                                prop:disabled=move || t.is_embeddings() && is_task()
                                on:change=move |ev| toggle(t, event_target_checked(&ev)) />
                            " " {trainable_label(t)}
                        </label>
                    }).collect_view()}
                </fieldset>
                <label>"Optimizer "
                    <select data-testid="train-optimizer"
                        prop:value=move || settings.with(|s| s.optimizer.key())
                        on:change=move |ev| {
                            if let Some(k) = OptimizerKind::from_key(&event_target_value(&ev)) {
                                set_training(&|s| s.optimizer = k);
                            }
                        }>
                        {OptimizerKind::ALL.iter().map(|k| view! {
                            <option value=k.key()>{optimizer_name(*k)}</option>
                        }).collect_view()}
                    </select>
                </label>
                <p class="help menu-says" data-testid="train-optimizer-says">
                    {move || optimizer_label(settings.with(|s| s.optimizer))}
                </p>
                <label>"Learning rate η "
                    <input type="number" step="any" min="0" data-testid="train-lr"
                        prop:value=move || settings.with(|s| s.learning_rate.to_string())
                        on:change=rate_changed />
                </label>
                {move || large_rate_note(settings.with(|s| s.learning_rate)).map(|note| view! {
                    <p class="help menu-says" data-testid="train-lr-note">{note}</p>
                })}
            </div>
            <p class="help">{move || loss_text(settings.with(|s| s.goal.loss_kind()), cross.get())}</p>
            // Above Step and Train: what the goal needs, read before a run that cannot learn it.
            {move || {
                let positional_goal = !matches!(
                    choice(),
                    GoalChoice::Pattern(NamedTarget::Uniform) | GoalChoice::Task(Task::Mean)
                );
                // Rotary positions tell a head where tokens stand; the causal mask, which come
                // before.
                let order_unseen = outline.with(|o| {
                    !o.config.positional_encoding
                        && o.config.rope.is_none()
                        && (o.cross || !o.config.causal)
                });
                let (d_model, tokens) = outline.with(|o| {
                    let keys = if o.cross { o.source_tokens.len() } else { 0 };
                    (o.config.d_model, o.tokens.len().max(keys))
                });
                let wide = positions_width(tokens);
                (positional_goal && order_unseen).then(|| view! {
                    <div class="positions-note" data-testid="positions-note">
                        <p class="help">{positions_note(d_model, tokens)}</p>
                        <button type="button" class="positions-on" data-testid="positions-on"
                            on:click=move |_| model.update(|m| {
                                m.config.positional_encoding = true;
                                if m.config.d_model < wide {
                                    // It keeps the head count where the new width allows,
                                    // else takes the nearest that divides it: it cannot fail.
                                    let _ = m.set_d_model(wide);
                                }
                            })>
                            {positions_on_label(d_model, tokens)}
                        </button>
                    </div>
                })
            }}
            // While presenting they are in the presenter bar, clear of the step.
            {move || (!presenting.get()).then(|| view! { <TrainingButtons /> })}
            <p class="error" role="alert" data-testid="train-error">{move || trainer.error.get()}</p>
            // Presenting, the panel shows only the run: this line says what it trains towards.
            <p class="training-goal" data-testid="train-goal-line">
                <span class="goal-whole">
                    {move || format!("Goal: {}", settings.with(|s| goal_description(&s.goal, cross.get())))}
                </span>
                <span class="goal-short">{move || format!("Goal: {}", goal_short(choice(), cross.get()))}</span>
            </p>
            <p class="training-status" role="status" data-testid="train-status">
                {move || trainer.losses.with(|l| status_text(l))}
            </p>
            // The head beside its loss, so the pattern is seen to form as the loss falls.
            <div class="training-watch">
                {move || (!presenting.get()).then(|| view! { <super::TrainingHead trace /> })}
                <canvas node_ref=canvas class="loss-curve" data-testid="loss-curve"
                    role="img" aria-label="The loss after each training step, on a log scale"
                    style=move || format!("--w: {}", f64::from(LOSS_CURVE_SIZE.0) * curve_scale())></canvas>
            </div>
            <p class="help">{DIRECTION_NOTE}</p>
            {move || (settings.with(|s| s.optimizer) == OptimizerKind::Sgd)
                .then(|| view! { <p class="help" data-testid="sgd-note">{move || sgd_note(largest())}</p> })}
            <p class="help">{RUN_LENGTH_NOTE}</p>
            {move || is_task().then(|| view! {
                <p class="help">{move || task_embeddings_note(cross.get())}</p>
            })}
        </section>
    }
}

/// Draws the loss curve on `canvas`, sharp at the screen's pixel ratio, filling `shown` (its box
/// in CSS pixels; [`LOSS_CURVE_SIZE`] until the box is known), its writing `text` times 12 px.
#[cfg(target_arch = "wasm32")]
fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    losses: &[f64],
    theme: &Theme,
    shown: Option<(f64, f64)>,
    text: f64,
) {
    use plotters::prelude::IntoDrawingArea;
    let ratio = window().device_pixel_ratio().clamp(1.0, 4.0);
    let (w, h) = shown.unwrap_or((f64::from(LOSS_CURVE_SIZE.0), f64::from(LOSS_CURVE_SIZE.1)));
    let (w, h) = ((w * ratio).round() as u32, (h * ratio).round() as u32);
    if canvas.width() != w {
        canvas.set_width(w);
    }
    if canvas.height() != h {
        canvas.set_height(h);
    }
    if let Some(backend) = plotters_canvas::CanvasBackend::with_canvas_object(canvas.clone()) {
        let area = backend.into_drawing_area();
        let _ = crate::plot::draw_loss_curve(&area, losses, theme, ratio * text, 1.0);
    }
}

/// Natively there is no canvas to draw on.
#[cfg(not(target_arch = "wasm32"))]
fn draw(
    _canvas: &web_sys::HtmlCanvasElement,
    _losses: &[f64],
    _theme: &Theme,
    _shown: Option<(f64, f64)>,
    _text: f64,
) {
}

/// The size of `canvas`'s box in CSS pixels, kept up to date by a resize observer; `None`
/// until it is laid out, and while it is not shown.
fn box_size(canvas: NodeRef<Canvas>) -> Signal<Option<(f64, f64)>> {
    let size = RwSignal::new(None::<(f64, f64)>);
    #[cfg(target_arch = "wasm32")]
    Effect::new(move |_| {
        use wasm_bindgen::JsCast;
        let Some(element) = canvas.get() else {
            return;
        };
        super::resized::watch_size(&element, move |entries: js_sys::Array| {
            let Ok(entry) = entries.get(0).dyn_into::<web_sys::ResizeObserverEntry>() else {
                return;
            };
            let rect = entry.content_rect();
            let next = (rect.width() >= 1.0 && rect.height() >= 1.0)
                .then(|| (rect.width(), rect.height()));
            if size.get_untracked() != next {
                size.set(next);
            }
        });
    });
    #[cfg(not(target_arch = "wasm32"))]
    let _ = canvas;
    size.into()
}
