//! Model width, heads, mask, positions, scale mode and temperature.

use super::help::Help;
use super::outline::model_outline;
use crate::attention::{
    Activation, Config, Norm, ScaleMode, D_FF_RANGE, D_MODEL_RANGE, TEMPERATURE_RANGE,
};
use crate::attention::{NormType, Pairing, Rope};
use crate::plot::{parse_cell, shortest_within, CellError};
use crate::state::Model;
use crate::words::{activation_name, norm_name, scale_mode_label, setting_help, Setting};
use crate::words::{head_count_label, kv_heads_label, norm_type_name, pairing_label, pairing_note};
use crate::words::{temperature_refusal, TemperatureProblem};
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

/// The id of a setting's tooltip, which describes its control.
fn help_id(setting: Setting) -> String {
    format!("help-{}", setting.key())
}

/// The "?" help beside a switch, whose label is the switch's own.
fn switch_help(setting: Setting) -> impl IntoView {
    view! {
        <Help id=setting.key() text=setting_help(setting) label=format!("About {}", setting.name())
            class="help-icon">"?"</Help>
    }
}

/// The settings form. Only valid choices are offered; a bad temperature shows a message and is
/// not applied.
/// How many characters of θ its field shows before writing a power of ten (`1e20`).
const THETA_WIDTH: usize = 8;

#[component]
pub fn Settings(
    /// The model to update.
    model: RwSignal<Model>,
) -> impl IntoView {
    let outline = model_outline(model);
    let config = Memo::new(move |_| outline.with(|o| o.config));
    let cross = Memo::new(move |_| outline.with(|o| o.cross));
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
        let parsed = parse_cell(&text)
            .map_err(|e| match e {
                CellError::Empty => TemperatureProblem::Empty,
                CellError::NotANumber => TemperatureProblem::NotANumber,
                CellError::NonAsciiDigits => TemperatureProblem::OtherDigits,
                CellError::NotFinite | CellError::TooLarge => TemperatureProblem::OutOfRange,
            })
            .and_then(|t| {
                if TEMPERATURE_RANGE.contains(&t) {
                    Ok(t)
                } else {
                    Err(TemperatureProblem::OutOfRange)
                }
            })
            .map_err(temperature_refusal);
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
                        // Rotary positions need an even d_k: a width no head count allows is not offered.
                        <option value=d.to_string() selected=move || config.get().d_model == d
                            disabled=move || config.get().rope.is_some() && Model::head_counts(d, true).is_empty()>{d}</option>
                    }.into_any()).collect_view()}
                </select>

                {setting_name(Setting::Heads, Some("n-heads"))}
                <select id="n-heads" data-testid="n-heads" on:change=set_heads
                    aria-describedby="help-heads"
                    prop:value=move || config.get().n_heads.to_string()>
                    // Every count that divides d_model; with rotary positions an odd d_k is shown
                    // refused, with why, rather than left out without a word.
                    {move || {
                        let c = config.get();
                        let rope = c.rope.is_some();
                        let offered = Model::head_counts(c.d_model, rope);
                        Config::valid_head_counts(c.d_model).into_iter().map(|h| view! {
                            <option value=h.to_string() selected=c.n_heads == h
                                disabled=!offered.contains(&h)>
                                {head_count_label(h, c.d_model / h, rope)}
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
                        <option value=s.key() selected=move || config.get().scale == s>{move || scale_mode_label(s, cross.get())}</option>
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
                        prop:disabled=move || cross.get()
                        aria-describedby="causal-reason"
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            model.update(|m| {
                                let _ = m.set_config(Config { causal: on, ..m.config });
                            });
                        } />
                    " Causal mask"
                </label>
                <p id="causal-reason" class="setting-note" data-testid="causal-reason"
                    hidden=move || !cross.get()>
                    "Off while attending to another sentence: the mask hides later tokens of the same sentence, so it belongs to self-attention."
                </p>
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
            <TodaysAttention model />
            <BeyondOneLayer model />
        </section>
    }
}

/// Rotary positions, shared key/value heads and the sliding window: the attention of today's
/// models. A setting that cannot apply is disabled with the reason beside it, and keeps its
/// value for when it can.
#[component]
fn TodaysAttention(
    /// The model to update.
    model: RwSignal<Model>,
) -> impl IntoView {
    let outline = model_outline(model);
    let config = Memo::new(move |_| outline.with(|o| o.config));
    let cross = Memo::new(move |_| outline.with(|o| o.cross));
    let rope_error = RwSignal::new(None::<String>);
    let kv_note = RwSignal::new(String::new());
    let window_error = RwSignal::new(None::<String>);
    let prefill = Memo::new(move |_| model.with(|m| m.prefill));
    let tile = Memo::new(move |_| model.with(|m| m.tile));
    let set_rope = move |rope: Option<Rope>| {
        let mut result = Ok(());
        model.update(|m| result = m.set_rope(rope));
        rope_error.set(result.err().map(|e| e.to_string()));
    };
    let set_theta = move |ev| {
        let text = event_target_value(&ev);
        // Any size: the rotation refuses what is not above 1, and says so.
        match text.trim().parse::<f64>() {
            Ok(theta) => {
                let pairing = config.get_untracked().rope.unwrap_or_default().pairing;
                set_rope(Some(Rope { theta, pairing }));
            }
            Err(_) => rope_error.set(Some(format!(
                "“{text}” is not a number: θ is a number greater than 1, like 10000."
            ))),
        }
    };
    let set_kv = move |ev| {
        if let Ok(n) = event_target_value(&ev).parse::<usize>() {
            let mut note = String::new();
            model.update(|m| {
                if let Ok(text) = m.set_kv_heads(n) {
                    note = text;
                }
            });
            kv_note.set(note);
        }
    };
    let set_window = move |ev| {
        let text = event_target_value(&ev);
        let trimmed = text.trim();
        let window = if trimmed.is_empty() || trimmed.eq_ignore_ascii_case("off") {
            Ok(None)
        } else {
            trimmed
                .parse::<usize>()
                .ok()
                .filter(|w| *w >= 1)
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "“{text}” is not a window: write a whole number of tokens, 1 or more, or leave it empty for none."
                    )
                })
        };
        match window {
            Ok(w) => {
                window_error.set(None);
                model.update(|m| {
                    let _ = m.set_window(w);
                });
            }
            Err(message) => window_error.set(Some(message)),
        }
    };
    view! {
        <div class="settings-grid todays-attention" data-testid="todays-attention">
            {setting_name(Setting::Rope, Some("rope"))}
            <div>
                <label class="toggle">
                    <input id="rope" type="checkbox" data-testid="rope"
                        prop:checked=move || config.get().rope.is_some()
                        prop:disabled=move || cross.get()
                        aria-describedby="help-rope rope-error"
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            set_rope(on.then(|| config.get_untracked().rope.unwrap_or_default()));
                        } />
                    " Turn Qₕ and Kₕ"
                </label>
                <div class="rope-options" hidden=move || config.get().rope.is_none()>
                    <label for="rope-theta">"θ "</label>
                    <input id="rope-theta" data-testid="rope-theta" type="text" inputmode="decimal" size="7"
                        aria-invalid=move || rope_error.get().is_some().then_some("true")
                        prop:value=move || config.get().rope.map(|r| shortest_within(r.theta, THETA_WIDTH)).unwrap_or_default()
                        on:change=set_theta />
                    <label for="rope-pairing">" pairing "</label>
                    <select id="rope-pairing" data-testid="rope-pairing"
                        prop:value=move || config.get().rope.unwrap_or_default().pairing.key().to_string()
                        on:change=move |ev| {
                            if let Some(pairing) = Pairing::from_key(&event_target_value(&ev)) {
                                let theta = config.get_untracked().rope.unwrap_or_default().theta;
                                set_rope(Some(Rope { theta, pairing }));
                            }
                        }>
                        {Pairing::ALL.map(|p| view! {
                            <option value=p.key() selected=move || config.get().rope.unwrap_or_default().pairing == p>
                                {pairing_label(p)}
                            </option>
                        }).collect_view()}
                    </select>
                    <p class="setting-note" data-testid="rope-pairing-note">
                        {move || config.with(|c| pairing_note(c.rope.unwrap_or_default().pairing, c.head_dim()))}
                    </p>
                </div>
                <p class="setting-note" hidden=move || !cross.get()>
                    "Resting while attending to another sentence: rotary positions compare positions within one sentence."
                </p>
                <p id="rope-error" class="error" role="alert" data-testid="rope-error">
                    {move || rope_error.get()}
                </p>
            </div>

            {setting_name(Setting::KvHeads, Some("kv-heads"))}
            <div>
                <select id="kv-heads" data-testid="kv-heads" on:change=set_kv
                    aria-describedby="help-kv-heads kv-note"
                    prop:value=move || config.get().n_kv_heads().to_string()>
                    {move || {
                        let c = config.get();
                        (1..=c.n_heads).filter(|g| c.n_heads.is_multiple_of(*g)).map(|g| view! {
                            <option value=g.to_string() selected=c.n_kv_heads() == g>
                                {kv_heads_label(g, c.n_heads)}
                            </option>
                        }).collect_view()
                    }}
                </select>
                <p id="kv-note" class="setting-note" data-testid="kv-note" aria-live="polite">
                    {move || kv_note.get()}
                </p>
            </div>

            {setting_name(Setting::Window, Some("window"))}
            <div>
                <input id="window" data-testid="window" type="text" inputmode="numeric" size="4"
                    placeholder="off"
                    prop:value=move || config.get().window.map(|w| w.to_string()).unwrap_or_default()
                    prop:disabled=move || !config.get().causal || cross.get()
                    aria-invalid=move || window_error.with(|e| e.is_some().to_string())
                    aria-describedby="help-window window-error window-reason"
                    on:change=set_window />
                <p id="window-reason" class="setting-note" hidden=move || config.get().causal && !cross.get()>
                    "Needs the causal mask: a window narrows what the mask lets a token see."
                </p>
                <p id="window-error" class="error" role="alert" data-testid="window-error">
                    {move || window_error.get()}
                </p>
            </div>

            {setting_name(Setting::Decode, Some("decode"))}
            <div>
                <label class="toggle">
                    <input id="decode" type="checkbox" data-testid="decode"
                        prop:checked=move || prefill.get().is_some()
                        prop:disabled=move || !config.get().causal || cross.get()
                        aria-describedby="help-decode decode-reason"
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            model.update(|m| {
                                // The first half of the sentence is the prompt.
                                let p = on.then(|| (m.tokens().len() / 2).max(1));
                                let _ = m.set_prefill(p);
                            });
                        } />
                    " Show decoding step by step"
                </label>
                <p id="decode-reason" class="setting-note" hidden=move || config.get().causal && !cross.get()>
                    "Needs the causal mask, and no source sentence: a decoder writes one sentence token by token."
                </p>
            </div>

            {setting_name(Setting::Tiles, Some("tiles"))}
            <div>
                <label class="toggle">
                    <input id="tiles" type="checkbox" data-testid="tiles"
                        prop:checked=move || tile.get().is_some()
                        aria-describedby="help-tiles"
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            model.update(|m| {
                                let _ = m.set_tile(on.then_some(2));
                            });
                        } />
                    " Show the softmax in tiles"
                </label>
            </div>
        </div>
    }
}

/// The switches of cross-attention and of the transformer block, with their own settings.
#[component]
fn BeyondOneLayer(
    /// The model to update.
    model: RwSignal<Model>,
) -> impl IntoView {
    let outline = model_outline(model);
    let cross = Memo::new(move |_| outline.with(|o| o.cross));
    let block_on = Memo::new(move |_| outline.with(|o| o.block_on));
    let norm = Memo::new(move |_| outline.with(|o| o.norm));
    let norm_type = Memo::new(move |_| outline.with(|o| o.norm_type));
    let activation = Memo::new(move |_| outline.with(|o| o.activation));
    let d_ff = Memo::new(move |_| outline.with(|o| o.d_ff));
    // A memo, so an edit elsewhere does not write the box's value again.
    let source = Memo::new(move |_| outline.with(|o| o.source.clone()));
    let source_error = RwSignal::new(None::<String>);
    let d_ff_error = RwSignal::new(None::<String>);
    let set_source = move |ev| {
        let text = event_target_value(&ev);
        model.update(|m| match m.set_source(&text) {
            Ok(()) => source_error.set(None),
            Err(e) => source_error.set(Some(e.to_string())),
        });
    };
    let set_d_ff = move |ev| {
        let text = event_target_value(&ev);
        match text.trim().parse::<usize>() {
            Ok(n) if D_FF_RANGE.contains(&n) => {
                d_ff_error.set(None);
                model.update(|m| {
                    let _ = m.set_d_ff(n);
                });
            }
            _ => d_ff_error.set(Some(format!(
                "Use a whole number from {} to {}; d_ff stays {}.",
                D_FF_RANGE.start(),
                D_FF_RANGE.end(),
                d_ff.get_untracked()
            ))),
        }
    };
    view! {
        <div class="beyond" data-testid="beyond">
            <span class="setting-name">
                <label class="toggle">
                    <input type="checkbox" data-testid="cross"
                        prop:checked=move || cross.get()
                        aria-describedby=help_id(Setting::Cross)
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            model.update(|m| m.set_cross(on));
                        } />
                    " " {Setting::Cross.name()}
                </label>
                {switch_help(Setting::Cross)}
            </span>
            <div class="beyond-fields" hidden=move || !cross.get()>
                <label for="source">"Source sentence (keys and values)"</label>
                <input id="source" data-testid="source" type="text" maxlength="10000"
                    prop:value=move || source.get()
                    on:input=set_source
                    aria-invalid=move || source_error.with(|e| e.is_some().to_string())
                    aria-describedby="source-error" />
                <p id="source-error" class="error" role="alert" data-testid="source-error">
                    {move || source_error.get()}
                </p>
            </div>
            <span class="setting-name">
                <label class="toggle">
                    <input type="checkbox" data-testid="block"
                        prop:checked=move || block_on.get()
                        aria-describedby=help_id(Setting::Block)
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            model.update(|m| m.set_block_on(on));
                        } />
                    " " {Setting::Block.name()}
                </label>
                {switch_help(Setting::Block)}
            </span>
            <div class="beyond-fields settings-grid" hidden=move || !block_on.get()>
                <label for="norm">"Norm"</label>
                <select id="norm" data-testid="norm"
                    prop:value=move || norm.get().key().to_string()
                    on:change=move |ev| {
                        if let Ok(n) = event_target_value(&ev).parse::<Norm>() {
                            model.update(|m| m.set_norm(n));
                        }
                    }>
                    {Norm::ALL.iter().map(|&n| view! {
                        <option value=n.key() selected=move || norm.get() == n>{norm_name(n)}</option>
                    }).collect_view()}
                </select>
                <label for="norm-type">"Norm type"</label>
                <select id="norm-type" data-testid="norm-type"
                    prop:value=move || norm_type.get().key().to_string()
                    on:change=move |ev| {
                        if let Ok(t) = event_target_value(&ev).parse::<NormType>() {
                            model.update(|m| m.block.norm_type = t);
                        }
                    }>
                    {NormType::ALL.iter().map(|&t| view! {
                        <option value=t.key() selected=move || norm_type.get() == t>{norm_type_name(t)}</option>
                    }).collect_view()}
                </select>
                <label for="activation">"Activation"</label>
                <select id="activation" data-testid="activation"
                    prop:value=move || activation.get().key().to_string()
                    on:change=move |ev| {
                        if let Ok(a) = event_target_value(&ev).parse::<Activation>() {
                            model.update(|m| m.set_activation(a));
                        }
                    }>
                    {Activation::ALL.iter().map(|&a| view! {
                        <option value=a.key() selected=move || activation.get() == a>{activation_name(a)}</option>
                    }).collect_view()}
                </select>
                <label for="d-ff">"d_ff"</label>
                <div>
                    <input id="d-ff" data-testid="d-ff" type="text" inputmode="numeric"
                        prop:value=move || d_ff.get().to_string()
                        on:change=set_d_ff
                        aria-invalid=move || d_ff_error.with(|e| e.is_some().to_string())
                        aria-describedby="d-ff-error" />
                    <p id="d-ff-error" class="error" role="alert" data-testid="d-ff-error">
                        {move || d_ff_error.get()}
                    </p>
                </div>
            </div>
        </div>
    }
}
