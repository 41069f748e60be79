//! Page-wide view state: colour theme, table visibility, reduced motion.

use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

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
}

fn media_matches(query: &str) -> bool {
    window()
        .match_media(query)
        .ok()
        .flatten()
        .is_some_and(|m| m.matches())
}

/// Creates the context, following `prefers-color-scheme` as it changes.
pub fn provide_ui_context() -> UiContext {
    let dark = RwSignal::new(media_matches("(prefers-color-scheme: dark)"));
    if let Ok(Some(list)) = window().match_media("(prefers-color-scheme: dark)") {
        let on_change = Closure::<dyn Fn(web_sys::Event)>::new(move |_| {
            dark.set(media_matches("(prefers-color-scheme: dark)"));
        });
        let _ = list.add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref());
        // The listener lives as long as the page.
        on_change.forget();
    }
    let ctx = UiContext {
        dark,
        show_tables: RwSignal::new(false),
        reduced_motion: media_matches("(prefers-reduced-motion: reduce)"),
    };
    provide_context(ctx);
    ctx
}
