//! The tools above a decoding step and the tiles: which token is decoded (Previous, Next,
//! Play) after which prefill, and which query row is tiled in blocks of how many keys, with a
//! line that says where the view is and what it costs.

use crate::attention::{Stage, Trace};
use crate::components::context::run_context;
use crate::components::player::Player;
use crate::words::{decode_status, token_label};
use leptos::prelude::*;

/// A menu of token positions, labelled by their tokens.
fn token_options(tokens: &[String], range: std::ops::Range<usize>, selected: usize) -> AnyView {
    range
        .map(|i| {
            let label = token_label(tokens, i).unwrap_or_default();
            view! { <option value=i.to_string() selected=i == selected>{label}</option> }
        })
        .collect_view()
        .into_any()
}

/// The decoding step's and the tiles' tools, on those stages only.
#[component]
pub(super) fn RunTools(
    /// The one trace.
    trace: Memo<Trace>,
    /// The stage shown.
    stage: RwSignal<Stage>,
    /// Whether a quiz hides the stage's results: the status line counts what it asks.
    hidden: Signal<bool>,
) -> impl IntoView {
    let Some(run) = run_context() else {
        return ().into_any();
    };
    let seq_len = Memo::new(move |_| trace.with(|t| t.seq_len()));
    let tokens = Memo::new(move |_| trace.with(|t| t.tokens.clone()));
    let prefill = Memo::new(move |_| {
        run.decode
            .with(|d| d.as_ref().and_then(|d| d.as_ref().ok()).map(|d| d.prefill))
    });
    let decoded = Memo::new(move |_| prefill.get().map(|p| run.decoded_row(p, seq_len.get())));
    let last = Memo::new(move |_| seq_len.get().saturating_sub(1));
    let player = Player::new();
    let playing = player.playing;
    // A step is measured as an edit is: from the press to the heatmaps it redrew.
    let step_to = move |i: usize| {
        crate::components::perf::edit_started();
        run.row.set(Some(i));
        crate::components::perf::edit_applied();
    };
    let step_by = move |by: isize| {
        if let Some(i) = decoded.get_untracked() {
            step_to(i.saturating_add_signed(by));
            keep_focus_at_the_ends(
                decoded.get_untracked(),
                prefill.get_untracked(),
                last.get_untracked(),
            );
        }
    };
    let pick_row = move |ev| {
        if let Ok(i) = event_target_value(&ev).parse::<usize>() {
            step_to(i);
        }
    };
    let toggle_play = move |_| {
        if playing.get_untracked() {
            player.stop();
            return;
        }
        let Some(p) = prefill.get_untracked() else {
            return;
        };
        if decoded.get_untracked() == Some(last.get_untracked()) {
            step_to(p);
        }
        player.play((1500, 3000), move || match decoded.get_untracked() {
            Some(i) if i < last.get_untracked() => {
                step_to(i + 1);
                true
            }
            _ => false,
        });
    };
    // Leaving the stage stops the play.
    Effect::new(move |_| {
        if stage.get() != Stage::Decode && playing.get_untracked() {
            player.stop();
        }
    });

    let decode_tools = move || {
        let p = prefill.get()?;
        // A step changes the bar's values, not the bar: it is made again for another prefill
        // or sentence only.
        let at = decoded.get_untracked().unwrap_or(p);
        let n = seq_len.get();
        let status = move || {
            run.decode.with(|d| {
                let d = d.as_ref()?.as_ref().ok()?;
                let step = d.steps.iter().find(|s| Some(s.position) == decoded.get())?;
                let first = d.steps.first()?.position;
                Some(trace.with(|t| decode_status(t, step, d.steps.len(), first)))
            })
        };
        let set_prefill = move |ev| {
            if let Ok(p) = event_target_value(&ev).parse::<usize>() {
                run.model.update(|m| {
                    let _ = m.set_prefill(Some(p));
                });
                run.row.set(None);
            }
        };
        // On the tools' buttons, ← and → step the tokens, not the stages.
        let arrow_steps = move |ev: leptos::ev::KeyboardEvent| {
            let on_button = crate::components::keyboard::key_target(&ev)
                .is_some_and(|el| el.tag_name() == "BUTTON");
            let by = match ev.key().as_str() {
                "ArrowLeft" => -1,
                "ArrowRight" => 1,
                _ => return,
            };
            if on_button && !ev.alt_key() && !ev.ctrl_key() && !ev.meta_key() {
                ev.prevent_default();
                step_by(by);
            }
        };
        Some(view! {
            <div class="run-tools" data-testid="decode-tools" on:keydown=arrow_steps>
                <label for="decode-prefill">"Prefill P "</label>
                <select id="decode-prefill" data-testid="decode-prefill" on:change=set_prefill>
                    {(1..n.max(2)).map(|k| view! {
                        <option value=k.to_string() selected=k == p>{k.to_string()}</option>
                    }).collect_view()}
                </select>
                <button type="button" data-testid="decode-prev"
                    disabled=move || decoded.get().zip(prefill.get()).is_none_or(|(i, p)| i <= p)
                    on:click=move |_| step_by(-1)>
                    <span aria-hidden="true">"← "</span>"Previous token"
                </button>
                <label for="decode-row" class="visually-hidden">"Token decoded"</label>
                <select id="decode-row" data-testid="decode-row"
                    prop:value=move || decoded.get().map(|i| i.to_string()).unwrap_or_default()
                    on:change=pick_row>
                    {tokens.with(|t| token_options(t, p.min(n)..n, at))}
                </select>
                <button type="button" data-testid="decode-next"
                    disabled=move || decoded.get().is_none_or(|i| i >= last.get())
                    on:click=move |_| step_by(1)>
                    "Next token"<span aria-hidden="true">" →"</span>
                </button>
                <button type="button" class="play" data-testid="decode-play"
                    disabled=move || decoded.get().zip(prefill.get()).is_none_or(|(i, p)| i < p)
                    aria-pressed=move || playing.get().to_string() on:click=toggle_play>
                    {move || if playing.get() { "Pause" } else { "Play" }}
                </button>
                <p class="run-status" data-testid="decode-status" aria-live="polite"
                    hidden=move || hidden.get()>{status}</p>
            </div>
        })
    };

    let tile_tools = move || {
        let block = run.tile.get()?;
        let n = seq_len.get();
        let row = run.tiled_row(n);
        let set_block = move |ev| {
            if let Ok(b) = event_target_value(&ev).parse::<usize>() {
                run.model.update(|m| {
                    let _ = m.set_tile(Some(b));
                });
            }
        };
        let n_keys = trace.with(|t| t.n_keys());
        Some(view! {
            <div class="run-tools" data-testid="tile-tools">
                <label for="tile-row">"Query "</label>
                <select id="tile-row" data-testid="tile-row"
                    on:change=pick_row>
                    {tokens.with(|t| token_options(t, 0..n, row))}
                </select>
                <label for="tile-block">" Block of keys B "</label>
                <select id="tile-block" data-testid="tile-block" on:change=set_block>
                    {(1..=n_keys.max(block)).map(|b| view! {
                        <option value=b.to_string() selected=b == block>{b.to_string()}</option>
                    }).collect_view()}
                </select>
            </div>
        })
    };

    view! {
        {move || match stage.get() {
            Stage::Decode => decode_tools().into_any(),
            Stage::Tiles => tile_tools().into_any(),
            _ => ().into_any(),
        }}
    }
    .into_any()
}

/// What the tools above a decoding step or the tiles say, on paper, where they cannot be used:
/// the prefill, the token decoded and what the step costs; the query row and the block size.
#[component]
pub(super) fn RunStatus(
    /// The one trace.
    trace: Memo<Trace>,
    /// The stage printed.
    stage: Stage,
) -> impl IntoView {
    let Some(run) = run_context() else {
        return ().into_any();
    };
    let line = move || match stage {
        Stage::Decode => run.decode.with(|d| {
            let d = d.as_ref()?.as_ref().ok()?;
            let row = run.decoded_row(d.prefill, trace.with(|t| t.seq_len()));
            let step = d.steps.iter().find(|s| s.position == row)?;
            let first = d.steps.first()?.position;
            let status = trace.with(|t| decode_status(t, step, d.steps.len(), first));
            Some(format!("Prefill P = {}. {status}", d.prefill))
        }),
        Stage::Tiles => {
            let block = run.tile.get()?;
            let row = run.tiled_row(trace.with(|t| t.seq_len()));
            let token = trace.with(|t| token_label(&t.tokens, row))?;
            let n = trace.with(|t| t.n_keys());
            Some(if block >= n {
                format!("Query “{token}”, in one block of all {n} keys (B = {block}).")
            } else {
                format!("Query “{token}”, in blocks of B = {block} keys.")
            })
        }
        _ => None,
    };
    view! {
        {move || line().map(|text| view! {
            <p class="run-status" data-testid=format!("handout-{}-status", stage.key())>{text}</p>
        })}
    }
    .into_any()
}

/// A step to the first or the last token disables the button pressed, which would drop the
/// keyboard's focus to the page (where ← and → step the stages): it moves to the token menu.
fn keep_focus_at_the_ends(decoded: Option<usize>, prefill: Option<usize>, last: usize) {
    use wasm_bindgen::JsCast;
    let (Some(i), Some(p)) = (decoded, prefill) else {
        return;
    };
    if i > p && i < last {
        return;
    }
    let document = document();
    let on_button = document.active_element().is_some_and(|el| {
        matches!(
            el.get_attribute("data-testid").as_deref(),
            Some("decode-prev" | "decode-next")
        )
    });
    if let Some(menu) = document
        .get_element_by_id("decode-row")
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok())
        .filter(|_| on_button)
    {
        let _ = menu.focus();
    }
}
