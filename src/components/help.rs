//! One line of help on a term, shown on hover and on keyboard focus.
//!
//! The help is in the page as a `role="tooltip"` element that describes its trigger (so a screen
//! reader reads it with the trigger), shown by the style sheet while the pointer is over the
//! term or focus is inside it, and hidden by Escape until the pointer or focus leaves.

use leptos::prelude::*;

/// A focusable term and its tooltip.
#[component]
pub fn Help(
    /// Makes the ids unique: the tooltip is `help-<id>`, the test ids `help-<id>` and `tip-<id>`.
    #[prop(into)]
    id: String,
    /// The one line of help.
    #[prop(into)]
    text: String,
    /// The trigger's accessible name when its content does not say it (a "?" icon).
    #[prop(optional, into)]
    label: Option<String>,
    /// Extra classes for the trigger.
    #[prop(optional)]
    class: &'static str,
    /// What the trigger shows.
    children: Children,
) -> impl IntoView {
    let dismissed = RwSignal::new(false);
    let tip = format!("help-{id}");
    view! {
        <span class="help" class:dismissed=move || dismissed.get()
            on:mouseleave=move |_| dismissed.set(false)
            on:focusout=move |_| dismissed.set(false)>
            <button type="button" class=format!("help-trigger {class}")
                aria-label=label aria-describedby=tip.clone() data-testid=format!("help-{id}")
                on:keydown=move |ev: web_sys::KeyboardEvent| {
                    if ev.key() == "Escape" {
                        dismissed.set(true);
                    }
                }>
                {children()}
            </button>
            <span role="tooltip" id=tip class="help-tip" data-testid=format!("tip-{id}")>{text}</span>
        </span>
    }
}
