//! The per-head stages' tools: compare every head at once, or pick the one head to show when
//! there are too many to show side by side.

use crate::attention::Stage;
use leptos::prelude::*;

/// The compare toggle and the head picker.
#[component]
pub(super) fn HeadTools(
    /// Heads in the layer.
    n_heads: Signal<usize>,
    /// The stage shown; only per-head stages have tools.
    stage: RwSignal<Stage>,
    /// The head shown when there are too many to show at once.
    head: RwSignal<usize>,
    /// Whether every head is shown on one colour scale.
    compare: RwSignal<bool>,
) -> impl IntoView {
    let ui = crate::components::context::ui_context();
    let presenting = ui.presenting;
    let backward = crate::components::context::backward_context();
    // Where one head is shown at a time, the picker offers the others.
    let picker_from = if ui.compact { 2 } else { 3 };
    move || {
        if presenting.get() {
            // The presenter bar says which head is shown; the clicker picks the next.
            return view! { <div class="head-tools"></div> }.into_any();
        }
        let n = n_heads.get();
        let s = stage.get();
        // The loss is per head under the pattern goal; its pass is read there only.
        let loss = (s == Stage::BackLoss)
            .then(|| backward.and_then(|b| b.pass.with(|p| p.as_ref().ok().map(|p| p.loss_kind()))))
            .flatten();
        // A backward stage the loss does not reach shows one sentence in place of any head's
        // pictures: there is no head to compare or to pick.
        let unreached = s.is_backward()
            && backward.is_some_and(|b| {
                let source = b.goal_source.get();
                b.pass.with(|p| {
                    p.as_ref().is_ok_and(|p| {
                        crate::words::unreached_text(s, p.loss_kind(), source).is_some()
                    })
                })
            });
        let per_head_stage = s.is_per_head_under(loss) && !unreached;
        // Decoding and the tiles draw no matrix every head has at once.
        let runs = matches!(s, Stage::Tiles | Stage::Decode);
        // The loss draws no matrix every head has on one scale.
        let compare_toggle = (s.is_per_head() && !runs && n > 1 && !unreached).then(|| {
            view! {
                <button type="button" class="compare-toggle" data-testid="compare-heads"
                    aria-pressed=move || compare.get().to_string()
                    on:click=move |_| compare.update(|c| *c = !*c)>
                    "Compare all heads"
                </button>
            }
        });
        // The tiles show one head, whatever the number.
        let picker_from = if s == Stage::Tiles { 2 } else { picker_from };
        let compared = compare.get() && s.is_per_head();
        let buttons = (n >= picker_from && per_head_stage && (runs || !compared)).then(|| {
            view! {
                <div class="head-picker" role="group" aria-label="Head to show">
                    {(0..n).map(|h| view! {
                        <button type="button" data-testid=format!("head-{h}")
                            aria-pressed=move || (head.get() == h).to_string()
                            on:click=move |_| head.set(h)>
                            {format!("Head {}", h + 1)}
                        </button>
                    }.into_any()).collect_view()}
                </div>
            }
        });
        // A compact embed shows one of Q, K and V at a time where a stage has all three.
        let parts = (ui.one_of_q_k_v(stage.get()) && !compare.get()).then(|| {
            let at = stage.get_untracked();
            view! {
                <div class="head-picker part-picker" role="group" aria-label="Matrix to show">
                    {["Q", "K", "V"].into_iter().enumerate().map(|(i, name)| view! {
                        <button type="button" data-testid=format!("part-{}", name.to_lowercase())
                            aria-pressed=move || (ui.part_of(at) == i).to_string()
                            on:click=move |_| ui.stage_part.set((at, i))>
                            {name}
                        </button>
                    }).collect_view()}
                </div>
            }
        });
        view! { <div class="head-tools">{compare_toggle}{parts}{buttons}</div> }.into_any()
    }
}
