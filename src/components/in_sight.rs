//! Parts of the page that follow edits at once only while they are near the window.
//!
//! The what-if lab sits below the stage. While it is out of sight, an edit does not recompute
//! its comparison, words and heatmaps: it keeps what it showed and catches up once edits pause
//! (120 to 240 ms after the last one), or at once when it comes within 400 px of the window.
//! So an edit pays only for what can be seen, and neither a scroll nor a screen reader meets
//! numbers older than that pause.

use super::pause::Pause;
use leptos::html::ElementType;
use leptos::prelude::*;
use std::time::Duration;
use wasm_bindgen::JsCast;

/// How far outside the window a part still counts as in sight.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
const MARGIN: &str = "400px";

/// How long edits must pause before parts out of sight catch up.
const CATCH_UP: Duration = Duration::from_millis(120);

thread_local! {
    static PAUSE: Pause = const { Pause::new(CATCH_UP) };
    /// Notified when edits have paused: every part out of sight catches up.
    static PAUSED: ArcTrigger = ArcTrigger::new();
}

fn catch_up() {
    PAUSED.with(|t| t.notify());
}

/// Whether the element `node` refers to is within 400 px of the window, as the browser last
/// reported; `true` until its first report, so nothing waits for one to be drawn.
pub fn near_window<E>(node: NodeRef<E>) -> Signal<bool>
where
    E: ElementType,
    E::Output: JsCast + Clone + 'static,
{
    let near = RwSignal::new(true);
    #[cfg(target_arch = "wasm32")]
    Effect::new(move |_| {
        use wasm_bindgen::closure::Closure;
        use web_sys::{IntersectionObserver, IntersectionObserverEntry, IntersectionObserverInit};

        let Some(element) = node.get() else {
            return;
        };
        let report = Closure::<dyn Fn(js_sys::Array)>::new(move |entries: js_sys::Array| {
            // The latest entry is the element's state now.
            if let Some(entry) = entries
                .iter()
                .last()
                .and_then(|e| e.dyn_into::<IntersectionObserverEntry>().ok())
            {
                near.try_set(entry.is_intersecting());
            }
        });
        let options = IntersectionObserverInit::new();
        options.set_root_margin(MARGIN);
        let Ok(observer) =
            IntersectionObserver::new_with_options(report.as_ref().unchecked_ref(), &options)
        else {
            return;
        };
        observer.observe(element.unchecked_ref());
        // The callback lives as long as the observer, which stops before the callback is dropped.
        let kept = StoredValue::new_local((observer, report));
        on_cleanup(move || kept.with_value(|(observer, _)| observer.disconnect()));
    });
    #[cfg(not(target_arch = "wasm32"))]
    let _ = node;
    near.into()
}

/// What `read` gives while `near` holds; out of sight, what it gave at the last pause in the
/// changes `track` tracks. `read` reads its source untracked.
pub fn follow<T>(
    near: Signal<bool>,
    track: impl Fn() + Clone + Send + Sync + 'static,
    read: impl Fn() -> T + Send + Sync + 'static,
) -> Memo<T>
where
    T: Send + Sync + 'static,
{
    let changed = track.clone();
    // Out of sight, a change only restarts the pause.
    Effect::new(move |_| {
        changed();
        if !near.get_untracked() {
            Pause::restart(&PAUSE, catch_up);
        }
    });
    // Re-run on every change while near, and otherwise only when `near` changes or edits pause;
    // a re-run always passes the value on, without comparing it.
    Memo::new_with_compare(
        move |_| {
            PAUSED.with(|t| t.track());
            if near.get() {
                track();
            }
            read()
        },
        |_, _| true,
    )
}
