//! Parts of the page that follow edits at once only while they are near the window.
//!
//! The what-if lab sits below the stage. While it is out of sight, an edit does not recompute
//! its comparison, words and heatmaps: it keeps what it showed and catches up once edits pause
//! (120 to 240 ms after the last one), or at once when it comes within 400 px of the window.
//! So an edit pays only for what can be seen, and neither a scroll nor a screen reader meets
//! numbers older than that pause.

use super::pause::Pause;
use leptos::html::Section;
use leptos::prelude::*;
use leptos_use_intersection_observer::{
    use_intersection_observer_with_options, UseIntersectionObserverOptions,
};
use std::time::Duration;

/// How far outside the window a part still counts as in sight.
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
pub fn near_window(node: NodeRef<Section>) -> Signal<bool> {
    let near = RwSignal::new(true);
    use_intersection_observer_with_options(
        node,
        move |entries, _| {
            // The latest entry is the element's state now.
            if let Some(entry) = entries.last() {
                near.try_set(entry.is_intersecting());
            }
        },
        UseIntersectionObserverOptions::default().root_margin(MARGIN),
    );
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
