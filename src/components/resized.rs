//! Watching an element's box: a resize observer that lives as long as the reactive owner (the
//! effect or component) that started it.

/// Calls `report` with the observer's entries whenever `element`'s box changes size, and once
/// when the watch starts, until the current reactive owner is cleaned up.
#[cfg(target_arch = "wasm32")]
pub fn watch_size(element: &web_sys::Element, report: impl Fn(js_sys::Array) + 'static) {
    use leptos::prelude::*;
    use wasm_bindgen::{closure::Closure, JsCast};
    let callback = Closure::<dyn Fn(js_sys::Array)>::new(report);
    let Ok(observer) = web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()) else {
        return;
    };
    observer.observe(element);
    let kept = StoredValue::new_local((observer, callback));
    on_cleanup(move || {
        kept.try_with_value(|(observer, _)| observer.disconnect());
    });
}
