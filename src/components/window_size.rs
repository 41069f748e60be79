//! The window's inner size in CSS pixels, read where a layout decision needs it.

use leptos::prelude::window;

/// The window's inner width, or 0 where the browser does not give it.
pub fn inner_width() -> f64 {
    window()
        .inner_width()
        .ok()
        .and_then(|w| w.as_f64())
        .unwrap_or(0.0)
}

/// The window's inner height, or 0 where the browser does not give it.
pub fn inner_height() -> f64 {
    window()
        .inner_height()
        .ok()
        .and_then(|h| h.as_f64())
        .unwrap_or(0.0)
}
