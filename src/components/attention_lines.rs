//! The softmax weights as lines: queries on the left, keys on the right, each line as thick and
//! as opaque as its weight. Hovering or focusing a token keeps only its lines. In
//! cross-attention the right side is the source sentence: an alignment picture.

use crate::attention::Trace;
use crate::words::format_value;
use leptos::prelude::*;

/// Which side of the diagram a token is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A query, on the left.
    Query,
    /// A key, on the right.
    Key,
}

/// Whether the line from query `i` to key `j` stays visible while `focus` is isolated.
pub fn line_visible(focus: Option<(Side, usize)>, i: usize, j: usize) -> bool {
    match focus {
        None => true,
        Some((Side::Query, q)) => q == i,
        Some((Side::Key, k)) => k == j,
    }
}

/// Stroke width and opacity for a weight in `[0, 1]`.
pub fn line_style(weight: f64) -> (f64, f64) {
    let w = if weight.is_finite() {
        weight.clamp(0.0, 1.0)
    } else {
        0.0
    };
    (0.5 + 7.5 * w, (0.08 + 0.92 * w).min(1.0))
}

const ROW: f64 = 30.0;
const TOP: f64 = 28.0;
const LEFT: f64 = 120.0;
const RIGHT: f64 = 280.0;
const WIDTH: f64 = 400.0;

/// An SVG coordinate or length as attribute text.
fn num(x: f64) -> String {
    x.to_string()
}

fn short(label: &str) -> String {
    if label.chars().count() > 14 {
        format!("{}…", label.chars().take(13).collect::<String>())
    } else {
        label.to_string()
    }
}

/// Attention lines for head `head`.
#[component]
pub fn AttentionLines(
    /// The one trace.
    trace: Memo<Trace>,
    /// Which head, from 0.
    head: usize,
    /// Put before its test ids where a second copy is on the page (the training view's).
    #[prop(optional)]
    prefix: &'static str,
) -> impl IntoView {
    let focus = RwSignal::new(None::<(Side, usize)>);
    // The token Tab stops at: the figure is one stop, and ↑ and ↓ move among its tokens.
    let roving = RwSignal::new((Side::Query, 0usize));
    // The figure is built again only when its tokens change; a change of weights (an edit, a
    // training step) changes each line's width, opacity and title in place, in one pass over
    // the lines rather than one reactive node per line, as a training step does 60 times a
    // second for up to 1024 lines.
    let shape = Memo::new(move |_| {
        trace.with(|t| {
            // A repeated word is told apart as the heatmaps tell it: “the (1)”, “the (5)”.
            (
                crate::words::token_labels(&t.tokens),
                crate::words::token_labels(t.key_tokens()),
                t.heads.len() > head,
                t.source.is_some(),
            )
        })
    });
    let weights = Memo::new(move |_| trace.with(|t| t.heads.get(head).map(|h| h.weights.clone())));
    let svg_ref = NodeRef::<leptos::svg::Svg>::new();
    Effect::new(move |built: Option<()>| {
        weights.track();
        // The first run finds the lines just built with these weights.
        if built.is_some() {
            if let Some(svg) = svg_ref.get_untracked() {
                weights.with_untracked(|w| restyle(&svg, w.as_ref(), &shape.get_untracked()));
            }
        }
    });

    let body = move || {
        let (tokens, keys, has_head, cross) = shape.get();
        if !has_head {
            return ().into_any();
        }
        let height = TOP + ROW * tokens.len().max(keys.len()) as f64 + 8.0;
        let y = |i: usize| TOP + ROW * i as f64 + ROW / 2.0;
        let mut lines = Vec::new();
        weights.with_untracked(|weights| {
            for (i, query) in tokens.iter().enumerate() {
                for (j, key) in keys.iter().enumerate() {
                    let w = weight_at(weights.as_ref(), i, j);
                    let (stroke, opacity) = line_style(w);
                    lines.push(view! {
                        <line
                            x1=num(LEFT + 6.0) y1=num(y(i)) x2=num(RIGHT - 6.0) y2=num(y(j))
                            class="attention-line"
                            data-query=i data-key=j data-weight=w.to_string()
                            stroke-width=num(stroke)
                            stroke-opacity=num(opacity)
                            visibility=move || if line_visible(focus.get(), i, j) { "visible" } else { "hidden" }
                        ><title>{line_title(query, key, w)}</title></line>
                    });
                }
            }
        });
        let (n_queries, n_keys) = (tokens.len(), keys.len());
        let token = move |side: Side, i: usize, label: String| {
            let (x, anchor) = match side {
                Side::Query => (LEFT - 4.0, "end"),
                Side::Key => (RIGHT + 4.0, "start"),
            };
            let role = match side {
                Side::Query => "query",
                Side::Key => "key",
            };
            view! {
                <text
                    x=num(x) y=num(y(i)) dy="0.35em" text-anchor=anchor
                    class="line-token"
                    class:active=move || focus.get() == Some((side, i))
                    tabindex=move || if roving.get() == (side, i) { "0" } else { "-1" }
                    role="button"
                    aria-label=format!("Show only the lines of {role} {label}")
                    data-testid=format!("{prefix}line-{role}-{head}-{i}")
                    on:mouseenter=move |_| focus.set(Some((side, i)))
                    on:mouseleave=move |_| focus.set(None)
                    on:focus=move |_| {
                        focus.set(Some((side, i)));
                        roving.set((side, i));
                    }
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                        let step: isize = match ev.key().as_str() {
                            "ArrowDown" => 1,
                            "ArrowUp" => -1,
                            _ => return,
                        };
                        ev.prevent_default();
                        let next = neighbour((side, i), step, n_queries, n_keys);
                        focus_token(&ev, prefix, head, next);
                    }
                    on:blur=move |_| focus.set(None)
                >{short(&label)}</text>
            }
        };
        view! {
            <svg
                node_ref=svg_ref
                class="attention-lines"
                viewBox=format!("0 0 {} {}", num(WIDTH), num(height))
                width=num(WIDTH)
                height=num(height)
                role="group"
                aria-label=format!(
                    "Attention lines of head {}: queries on the left, {} on the right, thicker lines carry more weight.",
                    head + 1,
                    if cross { "the source sentence's keys" } else { "keys" }
                )
            >
                <text x=num(LEFT - 4.0) y="14" text-anchor="end" class="line-caption">"queries"</text>
                <text x=num(RIGHT + 4.0) y="14" text-anchor="start" class="line-caption">
                    {if cross { "source keys" } else { "keys" }}
                </text>
                {lines}
                {tokens.iter().enumerate().map(|(i, t)| token(Side::Query, i, t.clone())).collect_view()}
                {keys.iter().enumerate().map(|(i, t)| token(Side::Key, i, t.clone())).collect_view()}
            </svg>
        }
        .into_any()
    };

    view! {
        <figure class="lines-figure" data-testid=format!("{prefix}lines-h{head}")>
            <figcaption>
                <span class="heatmap-title">{format!("Attention lines, head {}", head + 1)}</span>
                // Said for the pointer the reader has; paper has none.
                <span class="heatmap-shape lines-hint hint-hover">"hover or focus a token to isolate its lines"</span>
                <span class="heatmap-shape lines-hint hint-touch">"tap a token to isolate its lines"</span>
            </figcaption>
            {body}
        </figure>
    }
}

/// The weight of query `i` on key `j`, 0 where there is none.
fn weight_at(weights: Option<&crate::attention::Matrix>, i: usize, j: usize) -> f64 {
    weights.and_then(|w| w.get((i, j)).copied()).unwrap_or(0.0)
}

/// A line's tooltip: the query, the key and the weight.
fn line_title(query: &str, key: &str, weight: f64) -> String {
    format!("{query} → {key}: {}", format_value(weight, 2))
}

/// Gives each line of `svg`, built for `shape`'s tokens and keys in order (every key of the
/// first query, then of the next), the width, opacity and title of its weight in `weights`.
fn restyle(
    svg: &web_sys::SvgElement,
    weights: Option<&crate::attention::Matrix>,
    shape: &(Vec<String>, Vec<String>, bool, bool),
) {
    use wasm_bindgen::JsCast;
    let (tokens, keys, ..) = shape;
    let Ok(lines) = svg.query_selector_all("line.attention-line") else {
        return;
    };
    for n in 0..lines.length() {
        let Some(line) = lines
            .item(n)
            .and_then(|l| l.dyn_into::<web_sys::Element>().ok())
        else {
            continue;
        };
        let (i, j) = (
            n as usize / keys.len().max(1),
            n as usize % keys.len().max(1),
        );
        let (Some(query), Some(key)) = (tokens.get(i), keys.get(j)) else {
            continue;
        };
        let w = weight_at(weights, i, j);
        let (stroke, opacity) = line_style(w);
        let _ = line.set_attribute("data-weight", &w.to_string());
        let _ = line.set_attribute("stroke-width", &num(stroke));
        let _ = line.set_attribute("stroke-opacity", &num(opacity));
        if let Some(title) = line.first_element_child() {
            title.set_text_content(Some(&line_title(query, key, w)));
        }
    }
}

/// The token `step` places after `at` (before it, for a negative step), going down the
/// queries and then the keys, and round.
fn neighbour(at: (Side, usize), step: isize, n_queries: usize, n_keys: usize) -> (Side, usize) {
    let total = (n_queries + n_keys).max(1) as isize;
    let flat = match at {
        (Side::Query, i) => i,
        (Side::Key, j) => n_queries + j,
    } as isize;
    let next = (flat + step).rem_euclid(total) as usize;
    if next < n_queries {
        (Side::Query, next)
    } else {
        (Side::Key, next - n_queries)
    }
}

/// Moves the focus to token `to` of the figure of `head` that `ev` came from.
fn focus_token(ev: &leptos::ev::KeyboardEvent, prefix: &str, head: usize, to: (Side, usize)) {
    use wasm_bindgen::JsCast;
    let role = match to.0 {
        Side::Query => "query",
        Side::Key => "key",
    };
    let svg = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|t| t.closest("svg").ok().flatten());
    let target = svg.and_then(|svg| {
        svg.query_selector(&format!(
            "[data-testid={prefix}line-{role}-{head}-{}]",
            to.1
        ))
        .ok()
        .flatten()
    });
    if let Some(target) = target.and_then(|t| t.dyn_into::<web_sys::SvgElement>().ok()) {
        let _ = target.focus();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn up_and_down_walk_the_queries_then_the_keys_and_round() {
        assert_eq!(neighbour((Side::Query, 2), 1, 3, 3), (Side::Key, 0));
        assert_eq!(neighbour((Side::Key, 2), 1, 3, 3), (Side::Query, 0));
        assert_eq!(neighbour((Side::Query, 0), -1, 3, 2), (Side::Key, 1));
        assert_eq!(neighbour((Side::Key, 0), -1, 2, 4), (Side::Query, 1));
    }

    use super::*;

    #[test]
    fn isolating_a_query_keeps_only_its_outgoing_lines() {
        assert!(line_visible(Some((Side::Query, 1)), 1, 0));
        assert!(!line_visible(Some((Side::Query, 1)), 0, 1));
        assert!(line_visible(Some((Side::Key, 2)), 0, 2));
        assert!(!line_visible(Some((Side::Key, 2)), 2, 0));
        assert!(line_visible(None, 3, 4));
    }

    #[test]
    fn heavier_weights_draw_thicker_more_opaque_lines() {
        let (w0, o0) = line_style(0.0);
        let (w1, o1) = line_style(1.0);
        assert!(w1 > w0 && o1 > o0);
        assert_eq!(line_style(f64::NAN), line_style(0.0));
        assert_eq!(o1, 1.0);
    }
}
