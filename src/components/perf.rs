//! Performance marks the benchmarks read.
//!
//! - `al-edit` runs from a cell edit to the moment every heatmap it changed has been drawn
//!   (or, when it changed none, to the next animation frame);
//! - `al-edit-to-frame` runs from the same edit to the next animation frame, so it also holds
//!   the wait for the display's next refresh;
//! - `al-mount-start` and `al-mounted` mark where the app starts and finishes mounting (the
//!   module has been compiled and instantiated by the first);
//! - `al-first-heatmap` marks the first heatmap drawn after navigation;
//! - `al-first-paint` marks the task after the first animation frame, once the browser has laid
//!   out and painted the first screen with its first heatmap.

use leptos::prelude::*;
use std::cell::Cell;

thread_local! {
    static FIRST_DRAWN: Cell<bool> = const { Cell::new(false) };
    /// An edit is being measured: between `edit_started` and its animation frame.
    static EDIT_OPEN: Cell<bool> = const { Cell::new(false) };
    /// Heatmaps were drawn since the edit started.
    static PAINTED: Cell<bool> = const { Cell::new(false) };
}

thread_local! {
    /// The page's `performance`, looked up once: every edit makes two marks.
    static PERFORMANCE: Option<web_sys::Performance> = window().performance();
}

fn mark(name: &str) {
    PERFORMANCE.with(|p| {
        if let Some(performance) = p {
            let _ = performance.mark(name);
        }
    });
}

fn measure(name: &str, start: &str, end: &str) {
    PERFORMANCE.with(|p| {
        if let Some(performance) = p {
            let _ = performance.measure_with_start_mark_and_end_mark(name, start, end);
        }
    });
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

/// Call just before applying an edit. The measures are taken in the next animation frame,
/// after every effect the edit caused has run.
pub fn edit_started() {
    mark("al-edit-start");
    EDIT_OPEN.with(|o| o.set(true));
    PAINTED.with(|p| p.set(false));
    request_animation_frame(|| {
        EDIT_OPEN.with(|o| o.set(false));
        mark("al-edit-frame");
        measure("al-edit-to-frame", "al-edit-start", "al-edit-frame");
        let end = if PAINTED.with(Cell::get) {
            "al-edit-painted"
        } else {
            "al-edit-frame"
        };
        measure("al-edit", "al-edit-start", end);
    });
}

/// Call after a batch of heatmaps has been drawn.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn heatmaps_drawn() {
    if !FIRST_DRAWN.with(|f| f.replace(true)) {
        mark("al-first-heatmap");
    }
    if EDIT_OPEN.with(Cell::get) {
        mark("al-edit-painted");
        PAINTED.with(|p| p.set(true));
    }
}
