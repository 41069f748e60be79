//! A menu of named scenarios whose weights make a head do something recognisable.

use super::context::{Selection, SelectionContext};
use crate::attention::{Stage, Trace};
use crate::panels::panel_name;
use crate::presets;
use crate::presets::CaptionState;
use crate::state::Model;
use crate::words::{claim_broken_text, other_sentence_text};
use leptos::prelude::*;

/// Captions longer than this many characters, title included, are folded to two lines with a
/// "more" button: two lines of the narrowest column hold about this much.
pub const FOLDED_CAPTION_CHARS: usize = 90;

/// Whether a caption with this title is long enough to fold.
pub fn caption_folds(title: &str, caption: &str) -> bool {
    title.chars().count() + 1 + caption.chars().count() > FOLDED_CAPTION_CHARS
}

/// The preset whose model `m` is, if any.
fn preset_of(m: &Model) -> Option<&'static presets::Preset> {
    presets::all()
        .iter()
        .find(|p| p.scenario().to_model().is_ok_and(|pm| pm == *m))
}

/// The preset menu and the caption of the preset last loaded. Loading a preset opens the stage
/// and head its caption talks about, with the cell it names selected and explained.
#[component]
pub fn PresetPicker(
    /// The model a preset replaces.
    model: RwSignal<Model>,
    /// The stage shown.
    stage: RwSignal<Stage>,
    /// The head shown.
    head: RwSignal<usize>,
    /// The one trace, against which the loaded preset's claims are checked.
    trace: Memo<Trace>,
) -> impl IntoView {
    let picked = use_context::<SelectionContext>();
    let ui = super::context::ui_context();
    // The page may open on a preset's model (a bare address opens on the first look): its
    // caption shows from the start, as when it is picked from the menu.
    let loaded = RwSignal::new(model.with_untracked(preset_of));
    let expanded = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    // The caption's claims, checked again after every edit: once, what no longer holds, with
    // the numbers found instead, or that the sentence is no longer the preset's.
    let broken = Memo::new(move |_| {
        let preset = loaded.get()?;
        match trace.with(|t| preset.caption_state(t)) {
            CaptionState::Holds => None,
            CaptionState::Broken { first, more } => Some(claim_broken_text(&first, more)),
            CaptionState::OtherSentence => {
                let scenario = preset.scenario();
                Some(other_sentence_text(
                    preset.key,
                    &scenario.sentence,
                    scenario.source.as_deref(),
                ))
            }
        }
    });
    let load = move |preset: &'static presets::Preset| match preset.scenario().to_model() {
        Ok(m) => {
            let opening = preset.opening;
            model.set(m);
            stage.set(opening.stage());
            head.set(opening.head());
            if let Some(picked) = picked {
                let panel = panel_name(opening.matrix);
                picked.selection.set(Some(Selection {
                    panel: panel.clone(),
                    row: opening.row,
                    col: opening.col,
                }));
                bring_cell_into_view(panel, opening.row);
            }
            loaded.set(Some(preset));
            expanded.set(false);
            error.set(None);
        }
        Err(e) => error.set(Some(e.to_string())),
    };
    // Back and Forward restore an address's model, not the caption shown beside it: the caption
    // follows the model, the preset's own or an edit of its sentence, else goes.
    let history = window_event_listener(leptos::ev::popstate, move |_| {
        // After the address's state is applied.
        request_animation_frame(move || {
            // Nothing to follow once the menu is gone.
            let Some(shown) = loaded.try_get_untracked() else {
                return;
            };
            let Some(now) = model.try_with_untracked(|m| {
                preset_of(m).or_else(|| shown.filter(|p| p.scenario().sentence == m.sentence))
            }) else {
                return;
            };
            if shown.map(|p| p.key) != now.map(|p| p.key) {
                loaded.set(now);
                expanded.set(false);
            }
        });
    });
    on_cleanup(move || history.remove());
    let on_change = move |ev| {
        if let Some(preset) = presets::find(&event_target_value(&ev)) {
            load(preset);
        }
    };
    view! {
        <div class="presets">
            <label for="preset" class="preset-label">"Load a preset"</label>
            <select id="preset" data-testid="preset" on:change=on_change
                prop:value=move || loaded.get().map(|p| p.key).unwrap_or("")>
                <option value="" disabled=true selected=true>"Choose a scenario…"</option>
                // Read from the presets' files once the first picture is painted.
                // Each option says whether it is the one loaded: the menu's value, set before
                // its options are there, would find none.
                {move || ui.settled.get().then(|| presets::all().iter().map(|p| view! {
                    <option value=p.key
                        prop:selected=move || loaded.get().is_some_and(|l| l.key == p.key)>
                        {p.title.clone()}
                    </option>
                }.into_any()).collect_view())}
            </select>
            <p class="error" role="alert">{move || error.get()}</p>
            {move || loaded.get().map(|p| {
                let folds = caption_folds(&p.title, &p.caption);
                view! {
                    <div class="preset-caption" data-testid="preset-caption">
                        <div class="preset-caption-body">
                            <p id="preset-caption-text" data-testid="preset-caption-text"
                                class:folded=move || folds && !expanded.get()>
                                <strong>{p.title.clone()}</strong> " " {p.caption.clone()}
                            </p>
                            {move || broken.get().map(|text| view! {
                                <p class="caption-broken" role="status" data-testid="caption-broken">
                                    {text}
                                    " "
                                    <button type="button" class="caption-restore" data-testid="caption-restore"
                                        on:click=move |_| load(p)>"Restore the preset"</button>
                                </p>
                            })}
                            {folds.then(|| view! {
                                <button type="button" class="caption-more" data-testid="caption-more"
                                    aria-expanded=move || expanded.get().to_string()
                                    aria-controls="preset-caption-text"
                                    on:click=move |_| expanded.update(|e| *e = !*e)>
                                    {move || if expanded.get() { "less" } else { "more" }}
                                </button>
                            })}
                        </div>
                        <button type="button" class="explain-close" aria-label="Hide the caption"
                            on:click=move |_| loaded.set(None)>"×"</button>
                    </div>
                }
            })}
        </div>
    }
}

/// How long a loaded preset's stage takes to be laid out in its box, at most: the rule places
/// it over a few frames.
const LAID_OUT: std::time::Duration = std::time::Duration::from_millis(300);

/// Scrolls the window, once the preset's stage is laid out, so that row `row` of `panel`'s
/// heatmap (the cell its caption names) is above the window's foot and the explanation's sheet,
/// where the stage is in the window at all: a place beside a narrower stage may leave the
/// cell below the fold. A phone's place, which covers the stage, keeps the window where it is.
fn bring_cell_into_view(panel: String, row: usize) {
    set_timeout(
        move || {
            let doc = document();
            let (Some(canvas), Some(stage)) = (
                doc.query_selector(&format!("[data-testid='canvas-{panel}']"))
                    .ok()
                    .flatten(),
                doc.query_selector("[data-testid=stage-view]")
                    .ok()
                    .flatten(),
            ) else {
                return;
            };
            let height = super::window_size::inner_height();
            let s = stage.get_bounding_client_rect();
            if s.bottom() <= 0.0 || s.top() >= height {
                return;
            }
            let number = |name: &str| -> Vec<f64> {
                canvas
                    .get_attribute(name)
                    .unwrap_or_default()
                    .split(',')
                    .filter_map(|v| v.parse().ok())
                    .collect()
            };
            let (grid, width) = (number("data-grid"), number("data-width"));
            let (Some(&top), Some(&cell), Some(&units)) = (grid.get(1), grid.get(3), width.first())
            else {
                return;
            };
            let r = canvas.get_bounding_client_rect();
            let k = r.width() / units.max(1.0);
            let bottom = r.top() + (top + (row as f64 + 1.0) * cell) * k;
            let foot = doc
                .query_selector("#explain-panel.active.sheet")
                .ok()
                .flatten()
                .map_or(height, |sheet| sheet.get_bounding_client_rect().top());
            if bottom > foot - 8.0 {
                window().scroll_by_with_x_and_y(0.0, bottom - foot + 8.0 + cell * k);
            }
        },
        LAID_OUT,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_caption_folds_and_a_short_one_does_not() {
        for p in presets::all() {
            assert!(caption_folds(&p.title, &p.caption), "{}", p.key);
        }
        assert!(!caption_folds("Short", "A caption of one line."));
    }
}
