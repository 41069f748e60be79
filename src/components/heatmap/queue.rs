//! The paint queue: every canvas that changed is painted in one batch after the page changed.

#[cfg(target_arch = "wasm32")]
use leptos::prelude::queue_microtask;
use web_sys::HtmlCanvasElement;

/// A canvas's paint, waiting in the queue.
#[cfg(target_arch = "wasm32")]
type Job = Box<dyn FnOnce()>;

/// Canvases waiting to be painted, each with the job that paints it.
#[cfg(target_arch = "wasm32")]
type Jobs = Vec<(HtmlCanvasElement, Job)>;

#[cfg(target_arch = "wasm32")]
thread_local! {
    static WAITING: std::cell::RefCell<Jobs> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Paints `canvas` with `job` once the effects of the current change have all run; a newer job
/// for the same canvas replaces an older one.
///
/// Setting a font or drawing text on a canvas in the page makes the browser bring the page's
/// styles up to date first. Painting every canvas in one batch, after the other effects have
/// changed the page, pays for that once per change instead of once per canvas.
#[cfg(target_arch = "wasm32")]
pub fn paint_soon(canvas: HtmlCanvasElement, job: impl FnOnce() + 'static) {
    let job: Job = Box::new(job);
    let first = WAITING.with(|w| {
        let mut w = w.borrow_mut();
        let first = w.is_empty();
        w.retain(|(c, _)| *c != canvas);
        w.push((canvas, job));
        first
    });
    if first {
        queue_microtask(|| loop {
            let jobs = WAITING.with(|w| std::mem::take(&mut *w.borrow_mut()));
            if jobs.is_empty() {
                break;
            }
            for (_, job) in jobs {
                job();
            }
            crate::components::perf::heatmaps_drawn();
        });
    }
}

/// Natively there is no page to wait for: the job runs at once.
#[cfg(not(target_arch = "wasm32"))]
pub fn paint_soon(_canvas: HtmlCanvasElement, job: impl FnOnce() + 'static) {
    job();
}
