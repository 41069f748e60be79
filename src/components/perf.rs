//! Performance marks the benchmarks read.
//!
//! - `al-edit` runs from a cell edit to the moment every heatmap it changed has been drawn
//!   (or, when it changed none, to the next animation frame);
//! - `al-edit-to-frame` runs from the same edit to the next animation frame, so it also holds
//!   the wait for the display's next refresh;
//! - an edit that repainted splits `al-edit` into `al-edit-apply` (writing the edit into the
//!   model, which marks what depends on it), `al-edit-effects` (the effects it woke: the forward
//!   pass, the reactive graph and the page's changes, up to the batch of paints) and
//!   `al-edit-draw` (drawing the heatmaps it changed);
//! - `al-mount-start` and `al-mounted` mark where the app starts and finishes mounting (the
//!   module has been compiled and instantiated by the first);
//! - `al-first-heatmap` marks the first heatmap drawn after navigation;
//! - `al-first-paint` marks the task after the first animation frame, once the browser has laid
//!   out and painted the first screen with its first heatmap.

use leptos::prelude::*;
use std::cell::Cell;

thread_local! {
    static FIRST_DRAWN: Cell<bool> = const { Cell::new(false) };
    /// When the edit being measured started, until its animation frame.
    static EDIT_START: Cell<Option<f64>> = const { Cell::new(None) };
    /// When heatmaps were last drawn since the edit started.
    static PAINTED_AT: Cell<Option<f64>> = const { Cell::new(None) };
    /// When the edit had been written into the model.
    static APPLIED_AT: Cell<Option<f64>> = const { Cell::new(None) };
    /// When the edit's first batch of paints started.
    static DRAW_FROM: Cell<Option<f64>> = const { Cell::new(None) };
}

thread_local! {
    /// The page's `performance`, looked up once.
    static PERFORMANCE: Option<web_sys::Performance> = window().performance();
}

fn mark(name: &str) {
    PERFORMANCE.with(|p| {
        if let Some(performance) = p {
            let _ = performance.mark(name);
        }
    });
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `performance.mark(name, options)`.
    #[wasm_bindgen(js_namespace = performance, js_name = mark, catch)]
    fn mark_with_options(
        name: &str,
        options: &js_sys::Object,
    ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>;
    /// `performance.measure(name, options)`.
    #[wasm_bindgen(js_namespace = performance, js_name = measure, catch)]
    fn measure_with_options(
        name: &str,
        options: &js_sys::Object,
    ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>;
}

/// An object with the given number fields.
fn numbers(fields: &[(&str, f64)]) -> js_sys::Object {
    let object = js_sys::Object::new();
    for (key, value) in fields {
        let _ = js_sys::Reflect::set(&object, &(*key).into(), &(*value).into());
    }
    object
}

/// A mark at `time`, made later.
fn mark_at(name: &str, time: f64) {
    let _ = mark_with_options(name, &numbers(&[("startTime", time)]));
}

/// A measure from `start` to `end`, made later.
fn measure_between(name: &str, start: f64, end: f64) {
    let _ = measure_with_options(name, &numbers(&[("start", start), ("end", end)]));
}

/// The page's clock, in milliseconds since navigation.
fn now() -> Option<f64> {
    PERFORMANCE.with(|p| p.as_ref().map(web_sys::Performance::now))
}

/// Call just before the app mounts.
pub fn mount_started() {
    mark("al-mount-start");
}

/// Call once the app has mounted.
pub fn mounted() {
    mark("al-mounted");
}

/// Call in the first task after the first animation frame.
pub fn first_painted() {
    mark("al-first-paint");
}

/// Call just before applying an edit. The edit's measures are made in the next animation
/// frame, after every effect the edit caused has run; until then the edit only reads the clock,
/// so making the marks costs the edit nothing.
pub fn edit_started() {
    let Some(start) = now() else {
        return;
    };
    EDIT_START.with(|s| s.set(Some(start)));
    PAINTED_AT.with(|p| p.set(None));
    APPLIED_AT.with(|a| a.set(None));
    DRAW_FROM.with(|d| d.set(None));
    request_animation_frame(move || {
        // A later edit in the same frame measures from its own start.
        if EDIT_START.with(|s| s.get()) != Some(start) {
            return;
        }
        EDIT_START.with(|s| s.set(None));
        let Some(frame) = now() else {
            return;
        };
        measure_between("al-edit-to-frame", start, frame);
        let end = match PAINTED_AT.with(Cell::get) {
            Some(painted) => {
                mark_at("al-edit-painted", painted);
                if let (Some(applied), Some(draw)) =
                    (APPLIED_AT.with(Cell::get), DRAW_FROM.with(Cell::get))
                {
                    measure_between("al-edit-apply", start, applied);
                    measure_between("al-edit-effects", applied, draw);
                    measure_between("al-edit-draw", draw, painted);
                }
                painted
            }
            None => frame,
        };
        measure_between("al-edit", start, end);
    });
}

/// Call once an edit has been written into the model.
pub fn edit_applied() {
    if EDIT_START.with(Cell::get).is_some() {
        APPLIED_AT.with(|a| a.set(now()));
    }
}

/// Call when a batch of heatmaps starts to be drawn.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn heatmaps_drawing() {
    if EDIT_START.with(Cell::get).is_some() && DRAW_FROM.with(Cell::get).is_none() {
        DRAW_FROM.with(|d| d.set(now()));
    }
}

/// Call after a batch of heatmaps has been drawn.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn heatmaps_drawn() {
    if !FIRST_DRAWN.with(|f| f.replace(true)) {
        mark("al-first-heatmap");
    }
    if EDIT_START.with(Cell::get).is_some() {
        PAINTED_AT.with(|p| p.set(now()));
    }
}
