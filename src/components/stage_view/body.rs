//! The stage's panels, line by line: the shown heads' equations, or every head compared.

use super::backward_lines::{backward_compare_line, presenter_part};
use super::line::Item;
use super::lines::{compare_line, stage_lines};
use super::panel_data::Panels;
use crate::attention::{LossKind, Stage, Trace};
use crate::components::attention_lines::AttentionLines;
use crate::components::context::backward_context;
use crate::components::context::ui_context;
use crate::components::heatmap::HeatmapView;
use crate::components::presenter::decode_part_shown;
use crate::words;
use crate::words::GoalSource;
use leptos::prelude::*;

/// The lines of the current stage.
#[component]
pub(super) fn StageBody(
    /// The one trace.
    trace: Memo<Trace>,
    /// The panels of `trace`.
    panels: Panels,
    /// The stage to show.
    stage: RwSignal<Stage>,
    /// The head shown when there are too many to show at once.
    head: RwSignal<usize>,
    /// Whether every head is shown on one colour scale.
    compare: RwSignal<bool>,
    /// Whether the stage's results are hidden behind a placeholder.
    hidden: Signal<bool>,
    /// Every head, whatever the screen (a printed handout).
    #[prop(optional)]
    every_head: bool,
) -> impl IntoView {
    let ui = ui_context();
    let backward = backward_context();
    // The printed handout's words cannot point at a panel.
    let source = move || match backward {
        _ if every_head => GoalSource::Paper,
        Some(b) => b.goal_source.get(),
        None => GoalSource::Panel,
    };
    // The loss the backward stages follow, and why there is none when the goal cannot be used.
    let loss = Memo::new(move |_| {
        backward.map(|b| {
            b.pass
                .with(|p| p.as_ref().map(|p| p.loss_kind()).map_err(Clone::clone))
        })
    });
    let body = move || {
        let s = stage.get();
        // Only a backward stage reads the backward pass, which is computed when first read.
        let kind = match s.is_backward().then(|| loss.get()) {
            None => LossKind::Pattern,
            Some(Some(Ok(kind))) => kind,
            Some(Some(Err(e))) => {
                return view! {
                    <p class="error unreached" data-testid="backward-error">{words::goal_error_text(&e, source())}</p>
                }
                .into_any();
            }
            Some(None) => return ().into_any(),
        };
        let hide = hidden.get();
        let n = panels.layout().get().n_heads;
        let selected = head.get().min(n.saturating_sub(1));
        // A lecture hall and a compact embed see one head at a time.
        // The tiles follow one query of one head.
        let one = n > 2 || ui.compact || ui.presenting.get() || s == Stage::Tiles;
        let heads: Vec<usize> = if !every_head && one {
            vec![selected]
        } else {
            (0..n).collect()
        };
        let comparing = compare.get() && !ui.presenting.get() && !every_head;
        let comparable = s.is_per_head() && !matches!(s, Stage::Tiles | Stage::Decode);
        let compared = match (comparing && comparable && n > 1, s.is_backward()) {
            (false, _) => None,
            (true, false) => Some(compare_line(&panels, s, n)),
            (true, true) => backward_compare_line(&panels, s, n, kind),
        };
        let mut shown = match compared {
            Some(line) => vec![line],
            None => stage_lines(&panels, trace, s, &heads, kind, source()),
        };
        // A lecture hall and a compact embed see the projection's three products one at a
        // time; a compact embed also splits Q, K or V alone.
        match (s, ui.shown_part(s)) {
            (Stage::Projection, Some(part)) if !every_head && !comparing => {
                let part = part.min(shown.len().saturating_sub(1));
                shown = shown.into_iter().skip(part).take(1).collect();
            }
            // SwiGLU's gating, then the gate's weights, each drawn large.
            (Stage::Activation, Some(part))
                if ui.presenting.get() && !every_head && shown.len() == 2 =>
            {
                shown = shown.into_iter().skip(part.min(1)).take(1).collect();
            }
            (Stage::BackOutput | Stage::BackProjection | Stage::BackInput, Some(part))
                if ui.presenting.get() && !every_head =>
            {
                shown = presenter_part(shown, s, part);
            }
            // Presenter mode shows a head's ∂L/∂Qₕ, then its ∂L/∂Kₕ: a line each. Alone, the
            // keys' line is written with the ∂L/∂Sₕ it reads, which the queries' line draws:
            // (∂L/∂Sₕ)ᵀ · Qₕ = ∂L/∂Kₕ.
            (Stage::BackScores, Some(half))
                if ui.presenting.get() && !every_head && shown.len() == 2 =>
            {
                let mut keys = shown.pop();
                let mut queries = shown.pop();
                if half == 0 {
                    shown.extend(queries);
                } else {
                    if let (Some(q), Some(k)) = (queries.as_mut(), keys.as_mut()) {
                        if q.items.len() > 1 && k.items.len() > 1 {
                            let d_scores = q.items.remove(0);
                            k.items.splice(1..2, [Item::Op("=".to_owned())]);
                            k.items.splice(0..0, [d_scores, Item::Op("ᵀ ·".to_owned())]);
                        }
                    }
                    shown.extend(keys);
                }
            }
            // Presenter mode shows a decoding step's head with the cache it reads, then the
            // output (the last line) on a step of its own, so that each is drawn large.
            (Stage::Decode, _) if !every_head && shown.len() > 2 => {
                match decode_part_shown(ui, s) {
                    Some(true) => shown = shown.split_off(shown.len() - 1),
                    Some(false) => {
                        shown.pop();
                    }
                    None => {}
                }
            }
            (Stage::SplitHeads, Some(part)) if ui.one_of_q_k_v(s) && !every_head && !comparing => {
                for line in &mut shown {
                    if line.items.len() == 3 {
                        line.items = vec![line.items.swap_remove(part.min(2))];
                    }
                }
            }
            _ => {}
        }
        // A compact embed keeps a backward stage to its results: the operands were the results
        // of the stages before, and at the projections and the input only the weights' and the
        // embeddings' gradients stay, so the frame keeps its height.
        if ui.compact && s.is_backward() && !every_head {
            let kept = |name: &str| match s {
                Stage::BackProjection => name.starts_with("d_w_"),
                Stage::BackInput => name.starts_with("d_embeddings"),
                _ => true,
            };
            for line in &mut shown {
                line.items.retain(|item| match item {
                    Item::Panel(data) => kept(&data.name),
                    Item::Text(_) => true,
                    _ => false,
                });
                line.heading = line.heading.take().filter(|h| h.starts_with("Head "));
            }
            shown.retain(|line| !line.items.is_empty());
        }
        shown
            .into_iter()
            .map(|line| {
                // Each item: whether it is a picture (a heatmap, or its hidden place) or an
                // operator, the operator before it if it is a picture, and its view.
                let mut items: Vec<(Unit, Option<AnyView>, AnyView)> =
                    Vec::with_capacity(line.items.len());
                // A transpose followed by more ("ᵀ ·", "ᵀ =") is two operators: "ᵀ" belongs
                // to the matrix before it, the rest to the picture after it, so that a wrapped
                // line neither starts a row with "ᵀ" nor ends one with "·".
                let split = line.items.into_iter().flat_map(|item| match item {
                    Item::Op(text) if text.starts_with('ᵀ') && text != "ᵀ" => {
                        let rest = text.trim_start_matches('ᵀ').trim_start().to_owned();
                        vec![Item::Op("ᵀ".to_owned()), Item::Op(rest)]
                    }
                    item => vec![item],
                });
                for item in split {
                    // A transpose belongs to the matrix before it: a wrapped line keeps them
                    // together rather than start a row with "ᵀ".
                    let transposes = matches!(&item, Item::Op(text) if text.starts_with('ᵀ'));
                    let unit = match &item {
                        Item::Panel(_) | Item::Given(_) => Unit::Picture,
                        // An arrow points on to the next row and may end one; "=", "·" or
                        // "÷ √2" may not.
                        Item::Op(text) if !text.ends_with('→') => Unit::Operator,
                        _ => Unit::Other,
                    };
                    let view = match item {
                        Item::Panel(data) if hide => view! {
                            <div class="hidden-result" data-testid=format!("hidden-{}", data.name)>
                                <p class="hidden-title">{data.title}</p>
                                <p class="hidden-mark" aria-hidden="true">"?"</p>
                                <p class="visually-hidden">{words::QUIZ_HIDDEN}</p>
                            </div>
                        }
                        .into_any(),
                        Item::Lines(_) if hide => ().into_any(),
                        Item::Panel(data) => view! { <HeatmapView data /> }.into_any(),
                        Item::Given(data) => {
                            view! { <div class="given"><HeatmapView data /></div> }.into_any()
                        }
                        // A product's dot is drawn: a round mark, larger than the glyph.
                        Item::Op(text) if text == "·" => view! {
                            <span class="op dot" aria-hidden="true"><span class="dot-mark"></span></span>
                        }
                        .into_any(),
                        // An arrow is drawn apart from its words, to point down where it
                        // ends a row.
                        Item::Op(text) if text.ends_with('→') => {
                            let words = text.trim_end_matches('→').to_owned();
                            view! {
                                <span class="op arrow-op" aria-hidden="true">
                                    {words}<span class="arrow">"→"</span>
                                </span>
                            }
                            .into_any()
                        }
                        Item::Op(text) => {
                            view! { <span class="op" aria-hidden="true">{text}</span> }.into_any()
                        }
                        Item::Lines(h) => view! { <AttentionLines trace head=h /> }.into_any(),
                        Item::Text(text) => view! {
                            <p class="unreached" data-testid="unreached">{text}</p>
                        }
                        .into_any(),
                    };
                    match items.pop() {
                        Some((kind, lead, matrix)) if transposes => items.push((
                            kind,
                            lead,
                            view! { <div class="glued">{matrix}{view}</div> }.into_any(),
                        )),
                        // An operator (not an arrow) goes with the picture after it: a wrapped
                        // line starts its row with "= Y" rather than end the row before with
                        // "=".
                        Some((Unit::Operator, _, op)) if unit == Unit::Picture => {
                            items.push((unit, Some(op), view))
                        }
                        last => items.extend(last.into_iter().chain([(unit, None, view)])),
                    }
                }
                let items: Vec<AnyView> = items
                    .into_iter()
                    .map(|(_, lead, view)| match lead {
                        Some(op) => view! { <div class="op-glue">{op}{view}</div> }.into_any(),
                        None => view,
                    })
                    .collect();
                let equation = NodeRef::new();
                super::arrows::turn_wrapped_arrows(equation);
                view! {
                    <div class="line">
                        {line.heading.map(|h| view! { <h3 class="line-heading">{h}</h3> }.into_any())}
                        <div class="equation" node_ref=equation>{items}</div>
                    </div>
                }
            })
            .collect_view()
            .into_any()
    };
    let goal = move || {
        let s = stage.get();
        (s.is_backward() && !every_head)
            .then(|| {
                backward.map(|b| {
                    // Each head's own target, which the goal menu's name does not list: the panel
                    // that shows them is hidden in presenter mode and absent from an embed.
                    let line = move || {
                        let cross = ui.cross.get();
                        let goal = b.goal.with(|g| words::goal_description(g, cross));
                        words::goal_line(&goal, b.goal_source.get())
                    };
                    view! { <p class="backward-goal" data-testid="backward-goal">{line}</p> }
                })
            })
            .flatten()
    };
    // A head's two gradients on the way back are two equations, which presenter mode may set
    // side by side.
    let two_results = move || matches!(stage.get(), Stage::BackScores | Stage::BackWeightedSum);
    view! { <div class="stage-body" class:two-results=two_results>{goal}{body}</div> }
}

/// What an item of a line is, to keep an operator with the picture after it.
#[derive(Clone, Copy, PartialEq)]
enum Unit {
    Picture,
    Operator,
    Other,
}
