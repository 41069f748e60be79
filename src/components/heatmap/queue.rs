//! The paint queue: every canvas that changed is painted in one batch after the page changed.

#[cfg(target_arch = "wasm32")]
use leptos::prelude::queue_microtask;
use web_sys::HtmlCanvasElement;

/// Canvases waiting to be painted, each with the job that paints it.
#[cfg(target_arch = "wasm32")]
type Jobs = Vec<(HtmlCanvasElement, Job)>;

#[cfg(target_arch = "wasm32")]
thread_local! {
    static WAITING: std::cell::RefCell<Jobs> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Paints `canvas` with `job` once the effects of the current change have all run; a newer job
/// for the same canvas replaces an older one. The job sizes its canvas and returns the drawing.
///
/// Setting a font or drawing text on a canvas in the page makes the browser bring the page's
/// styles up to date first, and resizing a canvas changes its style. Painting every canvas in one
/// batch, after the other effects have changed the page, and resizing every canvas of the batch
/// before drawing any, pays for that once per change instead of once per canvas.
#[cfg(target_arch = "wasm32")]
pub fn paint_soon(canvas: HtmlCanvasElement, job: impl FnOnce() -> Draw + 'static) {
    if let Some(job) = offscreen::park(&canvas, Box::new(job)) {
        queue_job(canvas, job);
    }
}

/// A canvas's paint, waiting in the queue or parked: it sizes the canvas and returns the drawing.
#[cfg(target_arch = "wasm32")]
type Job = Box<dyn FnOnce() -> Draw>;

/// Drawing on a canvas already sized.
pub type Draw = Box<dyn FnOnce()>;

/// Queues `job` for `canvas`, in place of any job it was waiting with.
#[cfg(target_arch = "wasm32")]
fn queue_job(canvas: HtmlCanvasElement, job: Job) {
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
            crate::components::perf::heatmaps_drawing();
            let draws: Vec<Draw> = jobs.into_iter().map(|(_, job)| job()).collect();
            for draw in draws {
                draw();
            }
            crate::components::perf::heatmaps_drawn();
        });
    }
}

/// The what-if lab's heatmaps below the window: while the lab is out of sight, an edit parks
/// their paint instead of running it, and it runs once the lab comes near the window (an
/// intersection observer with a margin reports it), so an edit pays only for what can be seen.
#[cfg(target_arch = "wasm32")]
mod offscreen {
    use super::{queue_job, Job};
    use std::cell::RefCell;
    use wasm_bindgen::{closure::Closure, JsCast};
    use web_sys::{HtmlCanvasElement, IntersectionObserver, IntersectionObserverEntry};

    /// How far outside the window a canvas still counts as in sight.
    const MARGIN: &str = "400px";

    #[derive(Default)]
    struct State {
        observer: Option<IntersectionObserver>,
        /// Canvases being watched, and whether each was last reported in sight.
        watched: Vec<(HtmlCanvasElement, bool)>,
        /// The latest paint of each canvas out of sight.
        parked: Vec<(HtmlCanvasElement, Job)>,
    }

    thread_local! {
        static STATE: RefCell<State> = RefCell::new(State::default());
    }

    /// Parks `job` when `canvas` belongs to the lab and was last reported out of sight;
    /// otherwise hands it back to be painted now. A lab canvas seen for the first time is
    /// watched from now on and painted.
    pub(super) fn park(canvas: &HtmlCanvasElement, job: Job) -> Option<Job> {
        if canvas.closest(".whatif").ok().flatten().is_none() {
            return Some(job);
        }
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            s.parked.retain(|(c, _)| c != canvas);
            match s.watched.iter().find(|(c, _)| c == canvas) {
                Some((_, false)) => {
                    s.parked.push((canvas.clone(), job));
                    None
                }
                Some((_, true)) => Some(job),
                None => {
                    if let Some(observer) = observer(&mut s) {
                        observer.observe(canvas);
                    }
                    s.watched.push((canvas.clone(), true));
                    Some(job)
                }
            }
        })
    }

    fn observer(s: &mut State) -> Option<IntersectionObserver> {
        if s.observer.is_none() {
            let report = Closure::<dyn Fn(js_sys::Array)>::new(|entries: js_sys::Array| {
                let mut unparked = Vec::new();
                STATE.with(|s| {
                    let mut s = s.borrow_mut();
                    for entry in entries.iter() {
                        let Ok(entry) = entry.dyn_into::<IntersectionObserverEntry>() else {
                            continue;
                        };
                        let Ok(canvas) = entry.target().dyn_into::<HtmlCanvasElement>() else {
                            continue;
                        };
                        let seen = entry.is_intersecting();
                        s.watched.retain(|(c, _)| *c != canvas);
                        // A canvas that left the page is forgotten, with its parked paint.
                        if canvas.is_connected() {
                            s.watched.push((canvas.clone(), seen));
                        } else {
                            s.parked.retain(|(c, _)| *c != canvas);
                            if let Some(observer) = &s.observer {
                                observer.unobserve(&canvas);
                            }
                            continue;
                        }
                        if seen {
                            if let Some(at) = s.parked.iter().position(|(c, _)| *c == canvas) {
                                unparked.push(s.parked.remove(at));
                            }
                        }
                    }
                });
                for (canvas, job) in unparked {
                    queue_job(canvas, job);
                }
            });
            let options = web_sys::IntersectionObserverInit::new();
            options.set_root_margin(MARGIN);
            s.observer =
                IntersectionObserver::new_with_options(report.as_ref().unchecked_ref(), &options)
                    .ok();
            report.forget();
        }
        s.observer.clone()
    }
}

/// Natively there is no page to wait for: the job runs at once.
#[cfg(not(target_arch = "wasm32"))]
pub fn paint_soon(_canvas: HtmlCanvasElement, job: impl FnOnce() -> Draw + 'static) {
    job()();
}
