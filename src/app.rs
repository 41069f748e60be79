//! The root component.
use leptos::prelude::*;

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    view! { <main><h1>"attention-lens"</h1></main> }
}
