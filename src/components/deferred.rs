//! Table bodies that wait for edits to pause while nobody can see them.
//!
//! Each hidden table (the screen-reader alternative of a heatmap) is rewritten once, a moment
//! after the last edit, instead of on every step of a drag; edits that never pause (a training
//! run) still see it rewritten every [`LONGEST_WAIT`]. A waiting table carries `data-stale`
//! until it is current.

use super::pause::Pause;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// How long edits must pause before hidden tables are rewritten.
const SETTLE: Duration = Duration::from_millis(120);

/// The longest a hidden table waits, in milliseconds, however often the numbers change: a
/// screen reader reading it while a head trains hears numbers at most this old.
const LONGEST_WAIT: f64 = 1000.0;

/// Makes the body's HTML when it is finally written; `None` when its data is gone.
type Html = Rc<dyn Fn() -> Option<String>>;

thread_local! {
    static WAITING: RefCell<Vec<(web_sys::Element, Html)>> = const { RefCell::new(Vec::new()) };
    static SETTLED: Pause = const { Pause::new(SETTLE) };
    /// When the oldest waiting write was asked for, in page milliseconds.
    static WAITING_SINCE: std::cell::Cell<Option<f64>> = const { std::cell::Cell::new(None) };
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Writes `html` into `body` now, dropping any write it was waiting for.
pub fn write_now(body: web_sys::Element, html: &str) {
    WAITING.with(|w| w.borrow_mut().retain(|(b, _)| *b != body));
    body.set_inner_html(html);
    let _ = body.remove_attribute("data-stale");
}

/// Writes `body` once edits pause, with the HTML `html` makes then.
pub fn write_later(body: web_sys::Element, html: impl Fn() -> Option<String> + 'static) {
    // Setting an attribute, even to the value it has, makes the browser recompute styles.
    if !body.has_attribute("data-stale") {
        let _ = body.set_attribute("data-stale", "");
    }
    WAITING.with(|w| {
        let mut w = w.borrow_mut();
        w.retain(|(b, _)| *b != body);
        w.push((body, Rc::new(html)));
    });
    let now = now();
    let since = WAITING_SINCE.with(|s| {
        s.get().unwrap_or_else(|| {
            s.set(Some(now));
            now
        })
    });
    if now - since >= LONGEST_WAIT {
        flush();
    } else {
        Pause::restart(&SETTLED, flush);
    }
}

/// Writes every waiting table.
fn flush() {
    WAITING_SINCE.with(|s| s.set(None));
    let waiting = WAITING.with(|w| std::mem::take(&mut *w.borrow_mut()));
    for (body, html) in waiting {
        if let Some(html) = html() {
            body.set_inner_html(&html);
        }
        let _ = body.remove_attribute("data-stale");
    }
}
