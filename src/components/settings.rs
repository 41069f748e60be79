//! Model width, heads, mask, positions, scale mode and temperature.

use super::help::Help;
use crate::attention::{Config, ScaleMode, D_MODEL_RANGE, TEMPERATURE_RANGE};
use crate::plot::parse_cell;
use crate::state::Model;
use crate::words::{scale_mode_label, setting_help, Setting};
use leptos::prelude::*;

/// A setting's name and its "?" help, in the first column of the grid.
fn setting_name(setting: Setting, control: Option<&'static str>) -> impl IntoView {
    let name = setting.name();
    let label = match control {
        Some(id) => view! { <label for=id>{name}</label> }.into_any(),
        None => view! { <span id=format!("{}-name", setting.key())>{name}</span> }.into_any(),
    };
    view! {
        <span class="setting-name">
            {label}
            <Help id=setting.key() text=setting_help(setting) label=format!("About {name}")
                class="help-icon">"?"</Help>
        </span>
    }
}

/// The settings form. Only valid choices are offered; a bad temperature shows a message and is
/// not applied.
#[component]
pub fn Settings(
    /// The model to update.
    model: RwSignal<Model>,
) -> impl IntoView {
    let config = Memo::new(move |_| model.with(|m| m.config));
    let temperature_error = RwSignal::new(None::<String>);

    let set_d_model = move |ev| {
        if let Ok(d) = event_target_value(&ev).parse::<usize>() {
            model.update(|m| {
                let _ = m.set_d_model(d);
            });
        }
    };
    let set_heads = move |ev| {
        if let Ok(h) = event_target_value(&ev).parse::<usize>() {
            model.update(|m| {
                let _ = m.set_n_heads(h);
            });
        }
    };
    let set_scale = move |ev| {
        if let Ok(scale) = event_target_value(&ev).parse::<ScaleMode>() {
            model.update(|m| m.set_scale(scale));
        }
    };
    let set_temperature = move |ev| {
        let text = event_target_value(&ev);
        let parsed = parse_cell(&text).map_err(|e| e.to_string()).and_then(|t| {
            if TEMPERATURE_RANGE.contains(&t) {
                Ok(t)
            } else {
                Err(format!(
                    "Use a temperature between {} and {}.",
                    *TEMPERATURE_RANGE.start(),
                    *TEMPERATURE_RANGE.end()
                ))
            }
        });
        match parsed {
            Ok(t) => {
                temperature_error.set(None);
                model.update(|m| m.config.temperature = t);
            }
            Err(message) => temperature_error.set(Some(message)),
        }
    };

    view! {
        <section class="panel settings" aria-labelledby="settings-title">
            <h2 id="settings-title" class="panel-title">"Settings"</h2>
            <div class="settings-grid">
                {setting_name(Setting::DModel, Some("d-model"))}
                <select id="d-model" data-testid="d-model" on:change=set_d_model
                    aria-describedby="help-d-model"
                    prop:value=move || config.get().d_model.to_string()>
                    {D_MODEL_RANGE.map(|d| view! {
                        <option value=d.to_string() selected=move || config.get().d_model == d>{d}</option>
                    }.into_any()).collect_view()}
                </select>

                {setting_name(Setting::Heads, Some("n-heads"))}
                <select id="n-heads" data-testid="n-heads" on:change=set_heads
                    aria-describedby="help-heads"
                    prop:value=move || config.get().n_heads.to_string()>
                    {move || {
                        let c = config.get();
                        Config::valid_head_counts(c.d_model).into_iter().map(|h| view! {
                            <option value=h.to_string() selected=c.n_heads == h>
                                {format!("{h} (d_k = {})", c.d_model / h)}
                            </option>
                        }.into_any()).collect_view()
                    }}
                </select>

                {setting_name(Setting::DK, None)}
                <output data-testid="d-k" aria-labelledby="d-k-name">
                    {move || {
                        let c = config.get();
                        format!("{} (d_model ÷ heads)", c.d_model / c.n_heads.max(1))
                    }}
                </output>

                {setting_name(Setting::Scale, Some("scale-mode"))}
                <select id="scale-mode" data-testid="scale-mode" on:change=set_scale
                    aria-describedby="help-scale"
                    prop:value=move || config.get().scale.key().to_string()>
                    {ScaleMode::ALL.into_iter().map(|s| view! {
                        <option value=s.key() selected=move || config.get().scale == s>{scale_mode_label(s)}</option>
                    }.into_any()).collect_view()}
                </select>

                {setting_name(Setting::Temperature, Some("temperature"))}
                <div>
                    <input id="temperature" data-testid="temperature" type="text" inputmode="decimal"
                        prop:value=move || config.get().temperature.to_string()
                        on:change=set_temperature
                        aria-invalid=move || temperature_error.with(|e| e.is_some().to_string())
                        aria-describedby="help-temperature temperature-error" />
                    <p id="temperature-error" class="error" role="alert" data-testid="temperature-error">
                        {move || temperature_error.get()}
                    </p>
                </div>
            </div>
            <div class="toggles">
                <label class="toggle">
                    <input type="checkbox" data-testid="causal"
                        prop:checked=move || config.get().causal
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            model.update(|m| m.config.causal = on);
                        } />
                    " Causal mask"
                </label>
                <label class="toggle">
                    <input type="checkbox" data-testid="positional"
                        prop:checked=move || config.get().positional_encoding
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            model.update(|m| m.config.positional_encoding = on);
                        } />
                    " Positional encoding"
                </label>
            </div>
        </section>
    }
}
