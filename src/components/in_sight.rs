//! Parts of the page that follow edits at once only while they are near the window.
//!
//! The what-if lab sits below the stage. While it is out of sight, an edit does not recompute
//! its comparison, words and heatmaps: it keeps what it showed and catches up once edits pause
//! (120 to 240 ms after the last one; after a training run stops, while one trains), or at once
//! when it comes within 400 px of the window.
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

/// A memo as a part near the window sees it: reading through [`Followed::with`] follows the
/// memo's changes at once while the part is near, and otherwise at the next pause in edits. No
/// copy of the value is kept: out of sight, what a reader reads for another reason is the
/// memo's latest value.
pub struct Followed<T: Send + Sync + 'static> {
    /// Flips whenever the part's readers should read the source again.
    tick: Memo<bool>,
    source: Memo<T>,
}

impl<T: Send + Sync + 'static> Clone for Followed<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Send + Sync + 'static> Copy for Followed<T> {}

impl<T: Send + Sync + 'static> Followed<T> {
    /// `source`, followed at once only while `near` holds. Out of sight, it waits while `busy`
    /// holds (a training run changes the source every frame, so the pauses between frames are
    /// no pause in edits) and catches up once `busy` ends.
    pub fn new(near: Signal<bool>, source: Memo<T>, busy: Signal<bool>) -> Self {
        // Out of sight, a change only restarts the pause.
        Effect::new(move |_| {
            source.track();
            if !near.get_untracked() && !busy.get() {
                Pause::restart(&PAUSE, catch_up);
            }
        });
        // Re-run on every change while near, and otherwise only when `near` changes or edits
        // pause; each re-run flips it, so each counts as a change.
        let tick = Memo::new(move |flip: Option<&bool>| {
            PAUSED.with(|t| t.track());
            if near.get() {
                source.track();
            }
            !flip.copied().unwrap_or_default()
        });
        Self { tick, source }
    }

    /// Subscribes the reader to the source as followed.
    pub fn track(&self) {
        // Read, not only tracked: a memo is brought up to date only when read.
        self.tick.get();
    }

    /// Applies `f` to the source's value, subscribing the reader to it as followed.
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        self.track();
        self.source.with_untracked(f)
    }
}
