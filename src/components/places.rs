//! The places one click from the first screen: the sentence and weights, training, the what-if
//! lab, and sharing and presenting. The first screen shows the stage; each place opens where it
//! was laid out (the inputs and the sharing beside the stage, training and the lab below it)
//! and is brought into view.

use super::context::{ui_context, Place};
use crate::words::{PLACES_LABEL, PLACE_INPUTS, PLACE_LAB, PLACE_SHARE, PLACE_TRAIN};
use leptos::prelude::*;

/// The place's name.
fn full_name(place: Place) -> &'static str {
    match place {
        Place::Inputs => PLACE_INPUTS,
        Place::Train => PLACE_TRAIN,
        Place::Lab => PLACE_LAB,
        Place::Share => PLACE_SHARE,
    }
}

/// The place's name, its first word kept on a phone and the rest only for screen readers there.
fn name(place: Place) -> (&'static str, &'static str) {
    let full = full_name(place);
    full.split_once(' ').unwrap_or((full, ""))
}

/// The id of a place's body.
pub fn body_id(place: Place) -> String {
    format!("place-{}", place.key())
}

thread_local! {
    /// Where the page was scrolled before opening a place moved it, by place: closing the
    /// place goes back there.
    static CAME_FROM: std::cell::RefCell<Vec<(Place, f64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Scrolls the page back to where it was before `place` was opened and brought into view.
fn go_back_from(place: Place) {
    let Some(y) = CAME_FROM.with(|c| {
        let mut c = c.borrow_mut();
        let at = c.iter().position(|(p, _)| *p == place)?;
        Some(c.remove(at).1)
    }) else {
        return;
    };
    request_animation_frame(move || window().scroll_to_with_x_and_y(0.0, y));
}

/// Scrolls the open place's body into view once it is laid out, where it is not in view.
pub(super) fn bring_into_view(place: Place) {
    let from = window().scroll_y().unwrap_or(0.0);
    request_animation_frame(move || {
        let Some(body) = document().get_element_by_id(&body_id(place)) else {
            return;
        };
        let options = web_sys::ScrollIntoViewOptions::new();
        options.set_block(web_sys::ScrollLogicalPosition::Nearest);
        body.scroll_into_view_with_scroll_into_view_options(&options);
        // Its top below a bar that stays at the top of the window, not under it.
        let under = super::swipe::covered_top() - body.get_bounding_client_rect().top();
        if under > 0.0 {
            window().scroll_by_with_x_and_y(0.0, -under);
        }
        if (window().scroll_y().unwrap_or(from) - from).abs() > 1.0 {
            CAME_FROM.with(|c| {
                let mut c = c.borrow_mut();
                c.retain(|(p, _)| *p != place);
                c.push((place, from));
            });
        }
    });
}

/// The bar of places: a button each, pressed while its place is open; several may be open.
#[component]
pub fn PlacesBar(
    /// The places offered, in order.
    places: Vec<Place>,
) -> impl IntoView {
    let ui = ui_context();
    view! {
        <nav class="places" aria-label=PLACES_LABEL data-testid="places">
            {places.into_iter().map(|place| {
                let (first, rest) = name(place);
                view! {
                    <button type="button" class="place-button"
                        data-testid=format!("place-{}", place.key())
                        aria-controls=body_id(place)
                        aria-expanded=move || ui.is_open(place).to_string()
                        on:click=move |_| {
                            super::close_menus(None);
                            ui.toggle_place(place);
                            if untrack(|| ui.is_open(place)) {
                                bring_into_view(place);
                            } else {
                                go_back_from(place);
                            }
                        }>
                        {first}
                        {(!rest.is_empty()).then(|| view! { <span class="place-rest">" "{rest}</span> })}
                    </button>
                }
            }).collect_view()}
        </nav>
    }
}

/// A place's body: mounted when the place is first opened, then kept, hidden while closed.
#[component]
pub fn PlaceBody(
    /// Which place.
    place: Place,
    /// What it holds.
    children: ChildrenFn,
    /// Whether it is shown whatever the place bar says (training's loss curve while presenting).
    #[prop(optional, into)]
    also: Option<Signal<bool>>,
) -> impl IntoView {
    let ui = ui_context();
    let also = move || also.is_some_and(|a| a.get());
    let visited = Memo::new(move |_| ui.visited(place) || also());
    let open = Memo::new(move |_| ui.is_open(place) || also());
    view! {
        <section id=body_id(place) class="place-body" data-testid=format!("place-body-{}", place.key())
            hidden=move || !open.get() aria-label=full_name(place)>
            <Show when=move || visited.get()>{children()}</Show>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_keeps_its_first_word_on_a_phone() {
        assert_eq!(name(Place::Inputs), ("Sentence", "& weights"));
        assert_eq!(name(Place::Train), ("Train", ""));
        assert_eq!(name(Place::Share), ("Share", "& present"));
    }
}
