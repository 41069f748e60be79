//! Where you are among the stages, and how to move: rail, Previous/Next, Play; and where
//! the last edit changed numbers you have not seen.

use super::context::ui_context;
use crate::attention::Stage;
use crate::changes::Unseen;
use crate::components::player::Player;
use crate::words::{
    edit_note, go_to_stage, stage_progress, stage_rail_name_in, BACKWARD_GROUP, CHANGED_BY_EDIT,
};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The clickable list of stages.
#[component]
pub fn StageRail(
    /// The current stage.
    stage: RwSignal<Stage>,
    /// The last edit and the stages it changed that the learner has not seen yet.
    unseen: ReadSignal<Unseen>,
    /// Whether the backward stages are listed: once a training goal is in use.
    #[prop(into)]
    backward: Signal<bool>,
) -> impl IntoView {
    let marked = move |s: Stage| unseen.with(|u| u.is_marked(s));
    let order = ui_context().order;
    // One button per stage; the backward stages are numbered among themselves.
    let button = move |s: Stage, o: crate::attention::Order| {
        // A memo per stage: an edit that leaves a stage's mark as it was touches nothing of
        // its button.
        let marked = Memo::new(move |_| marked(s));
        let number = s.backward_position().or(s.position(o)).unwrap_or(0) + 1;
        view! {
            <li>
                <button
                    type="button"
                    data-testid=format!("stage-{}", s.key())
                    class:block=s.is_block()
                    class:backward=s.is_backward()
                    class:done={move || stage.get().position(o) > s.position(o)}
                    class:changed=move || marked.get()
                    data-changed=move || marked.get().to_string()
                    aria-current=move || (stage.get() == s).then_some("step")
                    // One stop for Tab, on the current stage; ← and → step from there.
                    tabindex=move || if stage.get() == s { "0" } else { "-1" }
                    title=rail_title(s, o)
                    on:click=move |_| stage.set(s)
                >
                    <span class="rail-number">{number}</span>
                    " "
                    <span class="visually-hidden">{stage_rail_name_in(s, o).0}</span>
                    <span class="rail-name">{stage_rail_name_in(s, o).1}</span>
                    <span class="visually-hidden">{stage_rail_name_in(s, o).2}</span>
                    {move || marked.get().then(|| view! {
                        <span class="rail-changed" aria-hidden="true"></span>
                        <span class="visually-hidden">{format!(", {CHANGED_BY_EDIT}")}</span>
                    })}
                </button>
            </li>
        }
        .into_any()
    };
    // Where a list scrolls sideways (a phone, a narrow embed), the current stage stays in it.
    let forward_list = NodeRef::<leptos::html::Ol>::new();
    let backward_list = NodeRef::<leptos::html::Ol>::new();
    // The rail is one stop for Tab: a step taken while its button has the focus hands the
    // focus on to the new stage's button.
    // Whether each list runs past its column, which the style sheet marks with a fade at the
    // end that has more stages: after a step, a change of stages or a resize.
    let resized = RwSignal::new(0u32);
    let _resize = window_event_listener(leptos::ev::resize, move |_| {
        resized.update(|n| *n = n.wrapping_add(1));
    });
    Effect::new(move |_| {
        stage.track();
        order.track();
        backward.track();
        resized.track();
        request_animation_frame(move || {
            for list in [forward_list, backward_list] {
                if let Some(list) = list.get_untracked() {
                    show_current(&list);
                    let overflows = list.scroll_width() > list.client_width();
                    let _ = list.set_attribute("data-overflow", &overflows.to_string());
                }
            }
            let lists = [forward_list, backward_list].map(|l| l.get_untracked());
            let focused = document().active_element();
            let in_rail = focused.as_ref().is_some_and(|f| {
                lists
                    .iter()
                    .flatten()
                    .any(|l| l.contains(Some(f)) && f.get_attribute("aria-current").is_none())
            });
            if in_rail {
                for list in lists.iter().flatten() {
                    if let Ok(Some(current)) = list.query_selector("[aria-current=step]") {
                        if let Ok(current) = current.dyn_into::<web_sys::HtmlElement>() {
                            let _ = current.focus();
                        }
                    }
                }
            }
        });
    });
    // How many forward stages the rail holds, counted once for its three uses.
    let forward_count = Memo::new(move |_| Stage::sequence(order.get()).len());
    view! {
        <nav class="rail" class:many=move || { forward_count.get() >= 15 }
            class:more=move || { (11..15).contains(&forward_count.get()) }
            class:most=move || { forward_count.get() >= 19 }
            style=move || {
                let n = forward_count.get();
                format!("--rail-cols: {}; --rail-cols-3: {}", n.div_ceil(2), n.div_ceil(3))
            } aria-label="Stages">
            <ol data-testid="rail-forward" node_ref=forward_list>
                {move || {
                    let o = order.get();
                    Stage::sequence(o).iter().map(|&s| button(s, o)).collect_view()
                }}
            </ol>
            <div class="rail-backward" role="group" aria-labelledby="rail-backward-label"
                hidden=move || !backward.get()>
                <span class="rail-group" id="rail-backward-label">{BACKWARD_GROUP}</span>
                <ol data-testid="rail-backward" node_ref=backward_list>
                    {move || {
                        let o = order.get();
                        backward.get().then(|| Stage::BACKWARD.iter().map(|&s| button(s, o)).collect_view())
                    }}
                </ol>
            </div>
        </nav>
    }
}

/// Scrolls `list` sideways, where it scrolls, to bring its current stage's button into view.
fn show_current(list: &web_sys::Element) {
    let Ok(Some(current)) = list.query_selector("[aria-current=step]") else {
        return;
    };
    let (outer, inner) = (
        list.get_bounding_client_rect(),
        current.get_bounding_client_rect(),
    );
    let before = inner.left() - outer.left();
    if before < 0.0 || inner.right() > outer.right() {
        let centred = before - (outer.width() - inner.width()) / 2.0;
        list.set_scroll_left(list.scroll_left() + centred.round() as i32);
    }
}

/// Where the last edit matters, on a stage it does not change, with a button that goes there.
#[component]
pub fn EditNote(
    /// The current stage.
    stage: RwSignal<Stage>,
    /// The last edit and the stages it changed that the learner has not seen yet.
    unseen: ReadSignal<Unseen>,
) -> impl IntoView {
    let pointer = move || {
        let current = stage.get();
        unseen.with(|u| u.pointer(current).map(|(p, s)| (p, s, u.wiring)))
    };
    view! {
        <div class="edit-note-region" role="status">
            {move || pointer().map(|(edited, next, wiring)| view! {
                <p class="edit-note" data-testid="edit-note">
                    <span>{edit_note(edited, next, wiring)}</span>
                    <button type="button" data-testid="edit-note-go" on:click=move |_| stage.set(next)>
                        {go_to_stage(next, wiring.order())}
                    </button>
                </p>
            })}
        </div>
    }
}

/// Previous, Next and Play, plus "stage n of 10".
#[component]
pub fn StageControls(
    /// The current stage.
    stage: RwSignal<Stage>,
) -> impl IntoView {
    let ui = ui_context();
    let player = Player::new();
    let playing = player.playing;
    let toggle_play = move |_| {
        if playing.get_untracked() {
            player.stop();
            return;
        }
        if stage
            .get_untracked()
            .next_in(ui.order.get_untracked())
            .is_none()
        {
            stage.set(Stage::Input);
        }
        player.play((2500, 4000), move || {
            match stage.get_untracked().next_in(ui.order.get_untracked()) {
                Some(next) => {
                    stage.set(next);
                    true
                }
                None => false,
            }
        });
    };

    view! {
        <div class="stage-controls">
            <button type="button" data-testid="prev" disabled=move || stage.get().prev_in(ui.order.get()).is_none()
                on:click=move |_| { if let Some(p) = stage.get_untracked().prev_in(ui.order.get_untracked()) { stage.set(p) } }>
                <span aria-hidden="true">"←"</span><span class="step-word">" Previous"</span>
            </button>
            <span class="progress" data-testid="progress" aria-live="polite"
                class:backward=move || stage.get().is_backward()>
                // "Stage 7 of 10"; a phone shows "7 of 10" and keeps the word for screen readers,
                // and "Back 3 of 8" for "Backward 3 of 8", which would read as a forward stage
                // (the style sheet's word, out of the text a screen reader reads twice).
                {move || {
                    let text = stage_progress(stage.get(), ui.order.get());
                    match text.split_once(' ') {
                        Some((word, count)) => view! {
                            <span class="step-word">{word.to_string()}" "</span>{count.to_string()}
                        }.into_any(),
                        None => text.into_any(),
                    }
                }}
            </span>
            <button type="button" data-testid="next" disabled=move || stage.get().next_in(ui.order.get()).is_none()
                on:click=move |_| { if let Some(n) = stage.get_untracked().next_in(ui.order.get_untracked()) { stage.set(n) } }>
                <span class="step-word">"Next "</span><span aria-hidden="true">"→"</span>
            </button>
            <button type="button" class="play" data-testid="play" aria-pressed=move || playing.get().to_string()
                on:click=toggle_play>
                {move || if playing.get() { "Pause" } else { "Play" }}
            </button>
        </div>
    }
}

/// A rail button's tooltip: the stage's name as the rail spells it for `order`.
fn rail_title(stage: Stage, order: crate::attention::Order) -> String {
    let (a, b, c) = stage_rail_name_in(stage, order);
    format!("{a}{b}{c}")
}
