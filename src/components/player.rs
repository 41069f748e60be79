//! Play and Pause: a step taken on a timer until there is none left, as the stage controls play
//! the stages and the decoding stage plays its tokens.

use leptos::prelude::*;
use std::time::Duration;

/// A timer that takes steps, and whether it is running.
#[derive(Clone, Copy)]
pub struct Player {
    /// Whether it is playing.
    pub playing: RwSignal<bool>,
    timer: StoredValue<Option<IntervalHandle>>,
}

impl Player {
    /// A stopped player, which stops for good when its owner goes.
    pub fn new() -> Self {
        let player = Self {
            playing: RwSignal::new(false),
            timer: StoredValue::new(None),
        };
        on_cleanup(move || {
            if let Some(handle) = player.timer.get_value() {
                handle.clear();
            }
        });
        player
    }

    /// Stops playing.
    pub fn stop(self) {
        if let Some(handle) = self.timer.get_value() {
            handle.clear();
        }
        self.timer.set_value(None);
        self.playing.set(false);
    }

    /// Plays: calls `step` every `millis` milliseconds (`slow_millis` for a learner who asked
    /// for reduced motion, which leaves time to read) until it says there was no step to take.
    pub fn play(self, (millis, slow_millis): (u64, u64), step: impl Fn() -> bool + 'static) {
        let period = if super::context::ui_context().reduced_motion {
            slow_millis
        } else {
            millis
        };
        let handle = set_interval_with_handle(
            move || {
                if !step() {
                    self.stop();
                }
            },
            Duration::from_millis(period),
        );
        self.timer.set_value(handle.ok());
        self.playing.set(true);
    }
}

impl Default for Player {
    fn default() -> Self {
        Self::new()
    }
}
