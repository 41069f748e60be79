//! An arrow that ends a row points down, at the picture it leads to on the next one: straight
//! down where the arrow has a row of its own above it, down and back to the row's start where
//! it ends a row of pictures.

use leptos::html::Div;
use leptos::prelude::*;

/// Keeps each arrow of `equation` pointing at what it leads to: an arrow whose picture wrapped
/// onto the next row (a narrow box, or a phone's column, where each operator has a row of its
/// own) is marked `turns`, which the style sheet draws pointing down, and `turns-back` where it
/// points down to the next row's start. The marks are checked whenever the equation's size
/// changes, as a wrap or a new zoom changes it.
pub fn turn_wrapped_arrows(equation: NodeRef<Div>) {
    #[cfg(target_arch = "wasm32")]
    Effect::new(move |_| {
        let Some(element) = equation.get() else {
            return;
        };
        let watched: web_sys::Element = element.into();
        let marked = watched.clone();
        crate::components::resized::watch_size(&watched, move |_| mark(&marked));
    });
    #[cfg(not(target_arch = "wasm32"))]
    let _ = equation;
}

/// How far left of an arrow, in CSS pixels, the picture on the next row must start for the
/// arrow to point down and back rather than straight down.
#[cfg(target_arch = "wasm32")]
const ROW_START_SLACK: f64 = 8.0;

/// Marks the arrows of `equation` that end a row: `turns`, and `turns-back` where the picture
/// starts the next row left of the arrow.
#[cfg(target_arch = "wasm32")]
fn mark(equation: &web_sys::Element) {
    let Ok(arrows) = equation.query_selector_all(".arrow-op") else {
        return;
    };
    for i in 0..arrows.length() {
        let Some(arrow) = arrows
            .item(i)
            .and_then(|a| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(a).ok())
        else {
            continue;
        };
        let next = arrow
            .next_element_sibling()
            .or_else(|| arrow.parent_element()?.next_element_sibling());
        let (here, there) = (
            arrow.get_bounding_client_rect(),
            next.map(|next| next.get_bounding_client_rect()),
        );
        // Below the arrow's row, not beside it: its top under the arrow's foot; and back at
        // the row's start, left of the arrow, unless the arrow has a row of its own above it.
        let turns = there
            .as_ref()
            .is_some_and(|t| t.top() >= here.bottom() - 1.0);
        let back = turns && there.is_some_and(|t| t.left() < here.left() - ROW_START_SLACK);
        for (class, on) in [("turns", turns), ("turns-back", back)] {
            if arrow.class_list().contains(class) != on {
                let _ = arrow.class_list().toggle_with_force(class, on);
            }
        }
    }
}
