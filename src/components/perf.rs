//! Performance marks the benchmarks read: `al-edit` measures a cell edit to the end of the
//! repaint it causes, `al-first-heatmap` marks the first heatmap drawn after navigation.

use leptos::prelude::*;
use std::cell::Cell;

thread_local! {
    static FIRST_DRAWN: Cell<bool> = const { Cell::new(false) };
}

fn mark(name: &str) {
    if let Some(performance) = window().performance() {
        let _ = performance.mark(name);
    }
}

/// Call just before applying an edit: the measure ends in the next animation frame, after
/// every effect the edit caused (each canvas redraw) has run.
pub fn edit_started() {
    mark("al-edit-start");
    request_animation_frame(|| {
        mark("al-edit-end");
        if let Some(performance) = window().performance() {
            let _ = performance.measure_with_start_mark_and_end_mark(
                "al-edit",
                "al-edit-start",
                "al-edit-end",
            );
        }
    });
}

/// Call after a heatmap is drawn; only the first call marks.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn heatmap_drawn() {
    if !FIRST_DRAWN.with(|f| f.replace(true)) {
        mark("al-first-heatmap");
    }
}
