//! A Leptos counter: the least a Leptos 0.8 app ships.

use leptos::prelude::*;

/// One button that counts its clicks.
#[component]
fn Counter() -> impl IntoView {
    let (count, set_count) = signal(0);
    view! {
        <button type="button" on:click=move |_| set_count.update(|n| *n += 1)>
            "Clicked " {count} " times"
        </button>
    }
}

fn main() {
    leptos::mount::mount_to_body(Counter);
}
