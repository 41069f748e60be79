//! One head's target in the training panel: a menu of named targets or "painted by hand", and
//! for a painted target a grid of the target weights whose cells a click paints or clears.

use super::outline::model_outline;
use super::training_panel::apply_or_refuse;
use crate::attention::{Goal, HeadTarget, NamedTarget};
use crate::state::Model;
use crate::training::{checked, choose_head_target, head_pattern, paint, PAINTED};
use crate::words::{
    format_value, head_target_label, head_target_menu, paint_cell_label, paint_help, token_labels,
    PAINT_MASK_NOTE,
};
use leptos::prelude::*;

/// What the grid shows: the query and key tokens, the target weights (rows summing to 1) and
/// whether the causal mask hides the keys after each query.
#[derive(Debug, Clone, PartialEq)]
struct Grid {
    queries: Vec<String>,
    keys: Vec<String>,
    weights: Vec<Vec<f64>>,
    masked: bool,
}

/// A cell's classes: hatched when masked, with light text on a dark fill.
fn cell_class(masked: bool, weight: f64) -> &'static str {
    if masked {
        "paint-cell masked"
    } else if weight > 0.6 {
        "paint-cell strong"
    } else {
        "paint-cell"
    }
}

/// Head `head`'s own target: a menu, and the grid to paint when it is painted by hand.
#[component]
pub fn TargetPainter(
    /// The learner's model, whose training goal this changes.
    model: RwSignal<Model>,
    /// The head, from 0.
    head: usize,
) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let outline = model_outline(model);
    let target = Memo::new(move |_| {
        outline.with(|o| match &o.training.goal {
            Goal::Pattern(targets) => targets.get(head).or(targets.first()).cloned(),
            Goal::Task(_) => None,
        })
    });
    let painted = move || matches!(target.get(), Some(HeadTarget::Painted(_)));
    let key = move || match target.get() {
        Some(HeadTarget::Named(t)) => t.key(),
        _ => PAINTED,
    };
    let grid = Memo::new(move |_| {
        if !painted() {
            return None;
        }
        model.with(|m| {
            let weights = head_pattern(m, head).ok()?;
            // Named as the heatmaps name them: a repeated word with its position.
            let queries = token_labels(&m.tokens());
            let keys = if m.cross {
                token_labels(&m.source_tokens())
            } else {
                queries.clone()
            };
            Some(Grid {
                queries,
                keys,
                weights: weights
                    .row_iter()
                    .map(|r| r.iter().copied().collect())
                    .collect(),
                masked: m.config.causal && !m.cross,
            })
        })
    });
    let cross = move || model.with(|m| m.cross);
    let changed = move |ev: leptos::ev::Event| {
        let value = event_target_value(&ev);
        let choice = NamedTarget::from_key(&value);
        if choice.is_none() && value != PAINTED {
            return;
        }
        let next = model.with_untracked(|m| {
            let next = choose_head_target(m, head, choice);
            checked(m, next)
        });
        // Refused, the menu shows the target training keeps.
        apply_or_refuse(model, next, error, Some((&ev, key())));
    };
    let click = move |row: usize, col: usize| {
        let next = model.with_untracked(|m| paint(m, head, row, col));
        apply_or_refuse(model, next, error, None);
    };
    let h = head + 1;

    view! {
        <div class="head-target" data-testid=format!("train-head-{head}")>
            <label>{move || head_target_menu(head, cross())} " "
                <select data-testid=format!("train-goal-h{head}") prop:value=key on:change=changed>
                    {NamedTarget::ALL.iter().map(|t| view! {
                        <option value=t.key()>{move || head_target_label(Some(*t), cross())}</option>
                    }).collect_view()}
                    <option value=PAINTED>{head_target_label(None, false)}</option>
                </select>
            </label>
            <p class="error" role="alert" data-testid=format!("train-goal-error-h{head}")>
                {move || error.get()}
            </p>
            {move || grid.get().map(|g| {
                let masked = g.masked;
                view! {
                    <p class="help">{paint_help(head)}</p>
                    <div class="paint-scroll">
                        <table class="paint-grid" data-testid=format!("paint-h{head}")>
                            <caption class="visually-hidden">{format!("Head {h}'s painted target")}</caption>
                            <thead><tr>
                                <th scope="col"></th>
                                {g.keys.iter().map(|k| view! { <th scope="col">{k.clone()}</th> }).collect_view()}
                            </tr></thead>
                            <tbody>
                                {g.weights.iter().enumerate().map(|(i, row)| {
                                    let query = g.queries.get(i).cloned().unwrap_or_default();
                                    view! {
                                        <tr>
                                            <th scope="row">{query.clone()}</th>
                                            {row.iter().enumerate().map(|(j, w)| {
                                                let hidden = masked && j > i;
                                                let text = if hidden { "—".to_string() } else { format_value(*w, 2) };
                                                let label = paint_cell_label(
                                                    &query,
                                                    g.keys.get(j).map_or("", String::as_str),
                                                    &text,
                                                    hidden,
                                                );
                                                view! {
                                                    <td>
                                                        <button type="button"
                                                            class=cell_class(hidden, *w)
                                                            data-testid=format!("paint-h{head}-{i}-{j}")
                                                            aria-pressed=(*w > 0.0).to_string()
                                                            aria-disabled=hidden.then_some("true")
                                                            aria-label=label
                                                            style=format!("--w: {w:.3}")
                                                            on:click=move |_| click(i, j)>{text}</button>
                                                    </td>
                                                }
                                            }).collect_view()}
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                    {masked.then(|| view! { <p class="help" data-testid=format!("paint-mask-note-h{head}")>{PAINT_MASK_NOTE}</p> })}
                }
            })}
        </div>
    }
}
