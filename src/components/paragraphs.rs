//! A text of several paragraphs, as the words module writes them: parts separated by a blank
//! line, each its own `<p>`.

use leptos::prelude::*;

/// The paragraphs of `text`, split where the words module puts a blank line.
pub fn split_paragraphs(text: &str) -> Vec<String> {
    text.split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// `text` as a `<div>` of paragraphs; `class` and `testid` go on the `<div>`.
#[component]
pub fn Paragraphs(
    /// The text, reactive.
    #[prop(into)]
    text: Signal<String>,
    /// The `<div>`'s class.
    class: &'static str,
    /// The `<div>`'s test id.
    testid: &'static str,
) -> impl IntoView {
    view! {
        <div class=class data-testid=testid>
            {move || text.with(|t| split_paragraphs(t)).into_iter().map(|p| view! { <p>{p}</p> }).collect_view()}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_split_paragraphs_and_empty_parts_are_dropped() {
        assert_eq!(
            split_paragraphs("One.\n\nTwo, still two.\n\n\n\nThree."),
            ["One.", "Two, still two.", "Three."]
        );
        assert!(split_paragraphs("").is_empty());
    }
}
