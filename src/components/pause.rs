//! "Once edits pause": a job that runs when no call has come for a while.
//!
//! A drag or a held key calls [`Pause::restart`] on every step. Clearing and setting a browser
//! timer each time costs two calls into JavaScript and a closure per step; here one timer runs
//! per `delay`, and a timer that finds calls came since it was set waits one `delay` more. The
//! job so runs between one and two `delay`s after the last call.

use leptos::prelude::*;
use std::cell::Cell;
use std::thread::LocalKey;
use std::time::Duration;

/// One delayed job's timer.
pub struct Pause {
    /// The pause that must pass after the last call.
    delay: Duration,
    /// Whether a timer is already waiting.
    armed: Cell<bool>,
    /// Whether a call came since the waiting timer was set.
    called: Cell<bool>,
}

impl Pause {
    /// A timer for a job that waits `delay` after the last call.
    pub const fn new(delay: Duration) -> Self {
        Self {
            delay,
            armed: Cell::new(false),
            called: Cell::new(false),
        }
    }

    /// Runs `job` once no call for `key` has come for its delay. The job must cope with having
    /// nothing left to do: a caller that did the work early simply leaves it nothing.
    pub fn restart(key: &'static LocalKey<Pause>, job: fn()) {
        let waiting = key.with(|p| {
            p.called.set(true);
            p.armed.replace(true)
        });
        if !waiting {
            arm(key, job);
        }
    }
}

fn arm(key: &'static LocalKey<Pause>, job: fn()) {
    let delay = key.with(|p| {
        p.called.set(false);
        p.delay
    });
    let fire = move || {
        if key.with(|p| p.called.get()) {
            arm(key, job);
        } else {
            key.with(|p| p.armed.set(false));
            job();
        }
    };
    if set_timeout_with_handle(fire, delay).is_err() {
        key.with(|p| p.armed.set(false));
        job();
    }
}
