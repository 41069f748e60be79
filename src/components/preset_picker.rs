//! A menu of named scenarios whose weights make a head do something recognisable.

use crate::presets;
use crate::state::Model;
use leptos::prelude::*;

/// The preset menu and the caption of the preset last loaded.
#[component]
pub fn PresetPicker(
    /// The model a preset replaces.
    model: RwSignal<Model>,
) -> impl IntoView {
    let loaded = RwSignal::new(None::<&'static presets::Preset>);
    let error = RwSignal::new(None::<String>);
    let on_change = move |ev| {
        let key = event_target_value(&ev);
        let Some(preset) = presets::find(&key) else {
            return;
        };
        match preset.scenario().to_model() {
            Ok(m) => {
                model.set(m);
                loaded.set(Some(preset));
                error.set(None);
            }
            Err(e) => error.set(Some(e.to_string())),
        }
    };
    view! {
        <div class="presets">
            <label for="preset" class="preset-label">"Load a preset"</label>
            <select id="preset" data-testid="preset" on:change=on_change
                prop:value=move || loaded.get().map(|p| p.key).unwrap_or("")>
                <option value="" disabled=true selected=true>"Choose a scenario…"</option>
                {presets::all().iter().map(|p| view! {
                    <option value=p.key>{p.title.clone()}</option>
                }.into_any()).collect_view()}
            </select>
            <p class="error" role="alert">{move || error.get()}</p>
            {move || loaded.get().map(|p| view! {
                <div class="preset-caption" data-testid="preset-caption">
                    <p><strong>{p.title.clone()}</strong> " " {p.caption.clone()}</p>
                    <button type="button" class="explain-close" aria-label="Hide the caption"
                        on:click=move |_| loaded.set(None)>"×"</button>
                </div>
            }.into_any())}
        </div>
    }
}
