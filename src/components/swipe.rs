//! On a touch screen, a swipe across the stage steps to the next or the previous stage, as a
//! phone's pages do; and a step taken below a stage's top opens the next stage at its top.

use super::context::ui_context;
use crate::attention::Stage;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

/// The shortest swipe, in CSS pixels, that steps.
const MIN_SWIPE: f64 = 60.0;

/// The longest swipe, in milliseconds: a slower drag is reading, not stepping.
const MAX_SWIPE_MS: f64 = 700.0;

/// The step a finger's move of (`dx`, `dy`) pixels in `ms` milliseconds asks for: `1` for the
/// next stage (a swipe to the left), `-1` for the previous one, `None` for anything that is not
/// a quick, mostly sideways swipe.
pub fn swipe_step(dx: f64, dy: f64, ms: f64) -> Option<i8> {
    let sideways = dx.abs() >= MIN_SWIPE && dx.abs() > 2.0 * dy.abs();
    (sideways && ms <= MAX_SWIPE_MS).then_some(if dx < 0.0 { 1 } else { -1 })
}

/// Whether `el` or an element around it, up to the stage, scrolls sideways and could still
/// scroll the way the finger moved: that swipe scrolls it instead.
fn scrolls_sideways(el: Option<web_sys::Element>, dx: f64) -> bool {
    let mut at = el;
    while let Some(el) = at {
        if el.get_attribute("data-testid").as_deref() == Some("stage-view") {
            return false;
        }
        let room = el.scroll_width() - el.client_width();
        if room > 1 {
            let left = el.scroll_left();
            // A finger moving left scrolls towards the right end.
            let can = if dx < 0.0 { left < room } else { left > 0 };
            if can {
                return true;
            }
        }
        at = el.parent_element();
    }
    false
}

/// Steps the stage on a swipe across the stage view, outside presenter mode (whose bar has
/// its own arrows) and never while a finger scrolls a wide picture.
pub fn step_on_swipe(stage: RwSignal<Stage>) {
    let ui = ui_context();
    let start = StoredValue::new(None::<(f64, f64, f64, Option<web_sys::Element>)>);
    let on_start = Closure::<dyn Fn(web_sys::TouchEvent)>::new(move |ev: web_sys::TouchEvent| {
        let touch = (ev.touches().length() == 1)
            .then(|| ev.touches().get(0))
            .flatten();
        let target = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
        let inside = target
            .as_ref()
            .and_then(|t| t.closest("[data-testid=stage-view]").ok().flatten())
            .is_some();
        start.set_value(touch.filter(|_| inside).map(|t| {
            (
                f64::from(t.client_x()),
                f64::from(t.client_y()),
                js_sys::Date::now(),
                target.clone(),
            )
        }));
    });
    let on_end = Closure::<dyn Fn(web_sys::TouchEvent)>::new(move |ev: web_sys::TouchEvent| {
        let Some((x, y, t, target)) = start.get_value() else {
            return;
        };
        start.set_value(None);
        let Some(touch) = ev.changed_touches().get(0) else {
            return;
        };
        let dx = f64::from(touch.client_x()) - x;
        let dy = f64::from(touch.client_y()) - y;
        if ui.presenting.get_untracked() || scrolls_sideways(target, dx) {
            return;
        }
        let order = ui.order.get_untracked();
        let now = stage.get_untracked();
        let next = match swipe_step(dx, dy, js_sys::Date::now() - t) {
            Some(1) => now.next_in(order),
            Some(_) => now.prev_in(order),
            None => None,
        };
        if let Some(next) = next {
            stage.set(next);
        }
    });
    let options = web_sys::AddEventListenerOptions::new();
    options.set_passive(true);
    for (event, handler) in [("touchstart", &on_start), ("touchend", &on_end)] {
        let _ = window().add_event_listener_with_callback_and_add_event_listener_options(
            event,
            handler.as_ref().unchecked_ref(),
            &options,
        );
    }
    // The listeners live as long as the page.
    on_start.forget();
    on_end.forget();
}

/// How much of the window's top a bar that stays there covers (a phone's places), in CSS
/// pixels.
pub(super) fn covered_top() -> f64 {
    let Ok(Some(bar)) = document().query_selector(".topbar") else {
        return 0.0;
    };
    let sticky = super::fit::computed(&bar, "position").is_some_and(|p| p == "sticky");
    if sticky {
        bar.get_bounding_client_rect().bottom().max(0.0)
    } else {
        0.0
    }
}

/// From now on, a step to another stage taken while the stage's top is scrolled above the
/// window, or under a bar that stays at its top (a phone's Next at the foot of a long stage),
/// opens the new stage at its top.
pub fn open_stages_at_their_top(stage: RwSignal<Stage>) {
    let ui = ui_context();
    Effect::watch(
        move || stage.get(),
        move |_, _, _| {
            if ui.presenting.get_untracked() {
                return;
            }
            request_animation_frame(|| {
                let Ok(Some(view)) = document().query_selector("[data-testid=stage-view]") else {
                    return;
                };
                if view.get_bounding_client_rect().top() < covered_top() {
                    let options = web_sys::ScrollIntoViewOptions::new();
                    options.set_block(web_sys::ScrollLogicalPosition::Start);
                    view.scroll_into_view_with_scroll_into_view_options(&options);
                }
            });
        },
        false,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quick_sideways_swipe_steps_and_anything_else_does_not() {
        assert_eq!(swipe_step(-120.0, 10.0, 200.0), Some(1));
        assert_eq!(swipe_step(120.0, -20.0, 200.0), Some(-1));
        // Too short, too slanted, too slow.
        assert_eq!(swipe_step(-40.0, 0.0, 100.0), None);
        assert_eq!(swipe_step(-120.0, 80.0, 200.0), None);
        assert_eq!(swipe_step(-120.0, 0.0, 1500.0), None);
    }
}
