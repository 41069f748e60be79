//! Page-wide view state: colour theme, table visibility, reduced motion.

use crate::attention::Stage;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

/// Where a view stands in a page that shows several stages at once (the printed handout): a
/// prefix that keeps the ids of its elements unique.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdScope(pub String);

/// The id prefix of the current view, empty in the app itself.
pub fn id_scope() -> String {
    use_context::<IdScope>().map(|s| s.0).unwrap_or_default()
}

/// The heatmap cell a learner picked, by panel name (e.g. `scores-h0`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The panel's name.
    pub panel: String,
    /// Row, from 0.
    pub row: usize,
    /// Column, from 0.
    pub col: usize,
}

/// The selected cell and what it was computed from; provided by the app.
#[derive(Clone, Copy)]
pub struct SelectionContext {
    /// The selected cell, if any.
    pub selection: RwSignal<Option<Selection>>,
    /// Cells to light up, by the canonical name of the matrix they belong to.
    pub operands: Signal<Vec<(String, crate::plot::Highlight)>>,
    /// The cell a revealed question was about, outlined with what it was computed from while
    /// no cell is selected: presenting, the class sees which number the answer is, without a
    /// sheet over the step.
    pub answer: RwSignal<Option<Selection>>,
    /// Whether a phone's sheet is folded to its title. An explanation the reader did not ask for
    /// (the first screen's, a link's, a preset's) opens folded where it would cover its cell.
    pub folded: RwSignal<bool>,
}

/// The backward pass the backward stages show: of the one trace, for the goal chosen in the
/// training panel; provided by the app.
#[derive(Clone, Copy)]
pub struct BackwardContext {
    /// The backward pass, or why the goal cannot be used with the settings on screen.
    pub pass: Memo<Result<crate::attention::BackwardPass, String>>,
    /// The goal the pass is for, fitted to the heads and the sentence.
    pub goal: Memo<crate::attention::Goal>,
    /// The goal's name, as the training panel's menu shows it.
    pub goal_name: Signal<String>,
    /// Where the learner chooses the goal: the training panel (hidden while presenting), or in
    /// an embed (which has none) the link.
    pub goal_source: Signal<crate::words::GoalSource>,
}

/// The backward context, where the app provides one (the app's views and the printed handout).
pub fn backward_context() -> Option<BackwardContext> {
    use_context::<BackwardContext>()
}

/// Decoding from a KV cache and the tiled softmax, where the learner asked to see them.
#[derive(Clone, Copy)]
pub struct RunContext {
    /// Each decoding step after the prefill, or why there is none; `None` when decoding is not
    /// asked for.
    pub decode: Memo<Option<Result<crate::attention::Decode, String>>>,
    /// The tiled softmax's block of keys; `None` when it is not asked for.
    pub tile: Memo<Option<usize>>,
    /// The query row the two views show, from 0; `None` for each view's own.
    pub row: RwSignal<Option<usize>>,
    /// The model, whose prefill and block of keys the views' tools set.
    pub model: RwSignal<crate::state::Model>,
}

impl RunContext {
    /// The position decoded: the row asked for, kept among the decoded ones (from the prefill
    /// to the last token); the first of them by default.
    pub fn decoded_row(&self, prefill: usize, seq_len: usize) -> usize {
        let last = seq_len.saturating_sub(1);
        self.row
            .get()
            .unwrap_or(prefill)
            .clamp(prefill.min(last), last)
    }

    /// The query row tiled: the row asked for, the last one by default.
    pub fn tiled_row(&self, seq_len: usize) -> usize {
        let last = seq_len.saturating_sub(1);
        self.row.get().unwrap_or(last).min(last)
    }
}

/// The views of decoding and tiles, where the app provides them.
pub fn run_context() -> Option<RunContext> {
    use_context::<RunContext>()
}

/// A place one click from the first screen, where what is not the stage lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The sentence, the settings and the matrices.
    Inputs,
    /// Training a head.
    Train,
    /// The what-if lab.
    Lab,
    /// Links, embedding, export, presenting and the quiz.
    Share,
}

impl Place {
    /// Every place, in the order the bar shows them.
    pub const ALL: [Place; 4] = [Place::Inputs, Place::Train, Place::Lab, Place::Share];

    /// The name in ids and test ids.
    pub fn key(self) -> &'static str {
        match self {
            Place::Inputs => "inputs",
            Place::Train => "train",
            Place::Lab => "lab",
            Place::Share => "share",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// Shared by every heatmap.
#[derive(Clone, Copy)]
pub struct UiContext {
    /// Whether the page is dark.
    pub dark: RwSignal<bool>,
    /// Whether the number tables are shown (they are always there for screen readers).
    pub show_tables: RwSignal<bool>,
    /// Whether the learner asked the system for reduced motion.
    pub reduced_motion: bool,
    /// Presenter mode: one stage, large type, heatmaps drawn larger.
    pub presenting: RwSignal<bool>,
    /// Where the stage's picture goes in its box, by the one layout rule
    /// ([`crate::plot::place`]): its zoom, its operands' share of it, whether its lines keep
    /// one row, and the width of its attention lines.
    pub placement: RwSignal<crate::plot::Placement>,
    /// Which part of a stage shown a part at a time is on screen, with the stage it was picked
    /// at: of the projection's products (0 Q, 1 K, 2 V) in presenter mode and a compact embed;
    /// presenting, also of the weights' gradients and of the input's gradients (see
    /// `presenter::presenter_parts`). Another stage opens at its first part (see `part_of`).
    pub stage_part: RwSignal<(Stage, usize)>,
    /// A compact embed (`?embed=1&controls=0`): one stage and one head at a time, stepped with
    /// Previous and Next.
    pub compact: bool,
    /// Inside a host page's frame (`?embed=1`): no bar of places, and no training unless the
    /// embed asks for the training view (`train=1`).
    pub embed: bool,
    /// Whether the window is narrow (phones, small tablets): one column, stage first.
    pub narrow: RwSignal<bool>,
    /// Which stages are shown, by the block's norm (`None`: attention alone).
    pub order: RwSignal<crate::attention::Order>,
    /// Whether keys and values come from a source sentence.
    pub cross: RwSignal<bool>,
    /// Whether the page is being printed: heatmaps are drawn light and sharp for paper.
    pub printing: RwSignal<bool>,
    /// How much larger than the fitted step the lecturer asked to present it (1: fitted), with
    /// the zoom keys or buttons: above 1 the step may scroll.
    pub magnify: RwSignal<f64>,
    /// Whether the whole worked example is shown as a handout to print, instead of the app.
    pub handout: RwSignal<bool>,
    /// Whether the first picture has been painted: what is not on the first screen (the
    /// editors, the what-if lab, the preset menu's entries) mounts only then, so it costs the
    /// first picture no layout and no compiling of its code.
    pub settled: RwSignal<bool>,
    /// Whether the parts below the stage (the training panel, the what-if lab) mount: from the
    /// task after the one that mounts the inputs, so that neither task holds the page long on a
    /// slow phone.
    pub settled_below: RwSignal<bool>,
    /// The training run that wrote the model last, and the model it wrote: while the model is
    /// still that one, the address bar treats a run's many frames as one history step.
    pub trained: StoredValue<Option<(u64, crate::state::Model)>>,
    /// The places open beside or below the stage, one bit each: several may be open, so the
    /// weights can be edited while a head trains.
    pub open: RwSignal<u8>,
    /// The places opened at least once, one bit each: a place mounts when first opened and
    /// then stays, hidden while closed, so a run, a half-typed value or an open editor is kept.
    pub visited: RwSignal<u8>,
}

/// The widest window, in CSS pixels, laid out as one column; the style sheet uses the same.
pub const NARROW_QUERY: &str = "(max-width: 960px)";

impl UiContext {
    /// How much larger than normal heatmaps are drawn.
    pub fn zoom(&self) -> f64 {
        self.placement.with(|p| p.zoom)
    }

    /// The wiring the stages follow (cross-attention, rotary positions and the block's norms and
    /// gate): what the stage rail, presenter mode's steps and the matrices' help depend on.
    pub fn steps_wiring(&self) -> crate::attention::Wiring {
        let order = self.order.get();
        crate::attention::Wiring {
            cross: self.cross.get(),
            block: order.block,
            rope: order.rope,
            activation: if order.gated {
                crate::attention::Activation::Swiglu
            } else {
                crate::attention::Activation::default()
            },
            norm_type: if order.rms {
                crate::attention::NormType::RmsNorm
            } else {
                crate::attention::NormType::LayerNorm
            },
        }
    }

    /// Which part of a stage is shown, where a stage shows one part at a time (presenter mode
    /// and compact embeds): for the projection, 0, 1 or 2 for Q, K or V. `None` where a stage
    /// shows all its parts. Each stage clamps it to its own number of parts.
    pub fn shown_part(&self, stage: Stage) -> Option<usize> {
        (self.presenting.get() || self.compact).then(|| self.part_of(stage))
    }

    /// Whether `stage` shows one of Q, K and V at a time, picked with the Q/K/V buttons: a
    /// compact embed does so at the projection and the split.
    pub fn one_of_q_k_v(&self, stage: Stage) -> bool {
        self.compact && matches!(stage, Stage::Projection | Stage::SplitHeads)
    }

    /// The part of `stage` picked: the one last stepped or clicked to at `stage`, and 0 at a
    /// stage reached otherwise (a link, Back, the rail). A compact embed's Q, K or V stays picked
    /// from the projection to the split and back, where both show one of the three.
    pub fn part_of(&self, stage: Stage) -> usize {
        let (picked_at, part) = self.stage_part.get();
        let same = picked_at == stage || (self.one_of_q_k_v(picked_at) && self.one_of_q_k_v(stage));
        if same {
            part
        } else {
            0
        }
    }

    /// Opens `place`, or closes it if it is open.
    pub fn toggle_place(&self, place: Place) {
        self.open.update(|o| *o ^= place.bit());
        self.visited.update(|v| *v |= place.bit());
    }

    /// Opens `place` (and keeps it open).
    pub fn open_place(&self, place: Place) {
        if !untrack(|| self.is_open(place)) {
            self.toggle_place(place);
        }
    }

    /// Whether `place` is open.
    pub fn is_open(&self, place: Place) -> bool {
        self.open.with(|o| o & place.bit() != 0)
    }

    /// Whether `place` has been opened at least once.
    pub fn visited(&self, place: Place) -> bool {
        self.visited.with(|v| v & place.bit() != 0)
    }

    /// How much larger than normal the operands of a step are drawn.
    pub fn given_zoom(&self) -> f64 {
        self.placement.with(|p| p.zoom * p.given_share)
    }

    /// How many times their normal resolution heatmaps are drawn at: the zoom while presenting,
    /// and otherwise the zoom rounded up to a half, at least 1, so that a window's small changes
    /// of zoom resize the drawings without drawing them again.
    pub fn sharpness(&self) -> f64 {
        let zoom = self.zoom();
        if self.presenting.get() {
            zoom
        } else {
            (zoom * 2.0).ceil().max(2.0) / 2.0
        }
    }
}

fn media_matches(query: &str) -> bool {
    window()
        .match_media(query)
        .ok()
        .flatten()
        .is_some_and(|m| m.matches())
}

/// Keeps `signal` equal to whether the media `query` matches, as the window changes.
fn follow_media(query: &str, signal: RwSignal<bool>) {
    let Some(list) = window().match_media(query).ok().flatten() else {
        return;
    };
    let query = query.to_string();
    let on_change = Closure::<dyn Fn(web_sys::Event)>::new(move |_| {
        signal.set(media_matches(&query));
    });
    let _ = list.add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref());
    // The listener lives as long as the page.
    on_change.forget();
}

/// Keeps `printing` true while the page is printed: from `beforeprint` to `afterprint`, and
/// whenever the print media type applies (print preview, or a test emulating print).
fn follow_printing(printing: RwSignal<bool>) {
    follow_media("print", printing);
    for (event, on) in [("beforeprint", true), ("afterprint", false)] {
        let handler = Closure::<dyn Fn(web_sys::Event)>::new(move |_| printing.set(on));
        let _ = window().add_event_listener_with_callback(event, handler.as_ref().unchecked_ref());
        // The listener lives as long as the page.
        handler.forget();
    }
}

/// The context that [`provide_ui_context`] made.
pub fn ui_context() -> UiContext {
    expect_context::<UiContext>()
}

/// Creates the context, `embed` inside a host page and `compact` for a compact embed. The theme is `forced_dark` when given (and marked on the root element
/// for the style sheet), otherwise it follows `prefers-color-scheme` as it changes.
pub fn provide_ui_context(forced_dark: Option<bool>, embed: bool, compact: bool) -> UiContext {
    if let (Some(dark), Some(root)) = (forced_dark, document().document_element()) {
        let _ = root.set_attribute("data-theme", if dark { "dark" } else { "light" });
    }
    let dark =
        RwSignal::new(forced_dark.unwrap_or_else(|| media_matches("(prefers-color-scheme: dark)")));
    if forced_dark.is_none() {
        follow_media("(prefers-color-scheme: dark)", dark);
    }
    let narrow = RwSignal::new(media_matches(NARROW_QUERY));
    follow_media(NARROW_QUERY, narrow);
    let ctx = UiContext {
        dark,
        show_tables: RwSignal::new(false),
        reduced_motion: media_matches("(prefers-reduced-motion: reduce)"),
        presenting: RwSignal::new(false),
        placement: RwSignal::new(crate::plot::Placement::NATURAL),
        stage_part: RwSignal::new((Stage::Input, 0)),
        compact,
        embed,
        narrow,
        order: RwSignal::new(crate::attention::Order::default()),
        cross: RwSignal::new(false),
        printing: RwSignal::new(false),
        magnify: RwSignal::new(1.0),
        handout: RwSignal::new(false),
        settled: RwSignal::new(false),
        settled_below: RwSignal::new(false),
        trained: StoredValue::new(None),
        open: RwSignal::new(0),
        visited: RwSignal::new(0),
    };
    follow_printing(ctx.printing);
    // The mount and the first heatmaps' drawing finish in this task; the first animation frame
    // paints them, the task after it mounts the inputs, and the task after that what sits below
    // the stage.
    let (settled, below) = (ctx.settled, ctx.settled_below);
    request_animation_frame(move || {
        set_timeout(
            move || {
                super::perf::first_painted();
                settled.set(true);
                set_timeout(move || below.set(true), std::time::Duration::ZERO);
            },
            std::time::Duration::ZERO,
        );
    });
    provide_context(ctx);
    ctx
}
