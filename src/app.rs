//! The root component: owns the input signals and the one `Memo<Trace>` every view reads.

use crate::attention::{Stage, Trace};
use crate::components::{
    provide_selection, provide_ui_context, ExplainPanel, MatrixEditors, Model, SentenceInput,
    Settings, StageControls, StageRail, StageView, WhatIfLab,
};
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Whether a key press belongs to a form field rather than to the page.
fn typing_into_field(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| {
            matches!(
                el.tag_name().as_str(),
                "INPUT" | "SELECT" | "TEXTAREA" | "CANVAS"
            )
                || el.has_attribute("contenteditable")
                || el.get_attribute("role").as_deref() == Some("tab")
        })
}

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let ui = provide_ui_context();
    let model = RwSignal::new(Model::default());
    let result = Memo::new(move |_| model.with(|m| m.trace()));
    // The last trace that worked stays on screen while an error is shown.
    let trace = Memo::new(move |prev: Option<&Trace>| match result.get() {
        Ok(t) => t,
        Err(_) => prev.cloned().unwrap_or_else(|| {
            Model::default()
                .trace()
                .expect("the default model is valid")
        }),
    });
    let error = move || result.with(|r| r.as_ref().err().map(|e| e.to_string()));
    let stage = RwSignal::new(Stage::Input);
    let (picked, explanation) = provide_selection(trace);

    let _keys = window_event_listener(ev::keydown, move |ev| {
        if typing_into_field(&ev) || ev.alt_key() || ev.ctrl_key() || ev.meta_key() {
            return;
        }
        let next = match ev.key().as_str() {
            "ArrowRight" => stage.get_untracked().next(),
            "ArrowLeft" => stage.get_untracked().prev(),
            _ => None,
        };
        if let Some(s) = next {
            ev.prevent_default();
            stage.set(s);
        }
    });

    view! {
        <div class="app">
            <header class="topbar">
                <div class="brand">
                    <h1>"attention-lens"</h1>
                    <p class="tagline">"Multi-head self-attention, one stage at a time, with every number."</p>
                </div>
                <label class="toggle tables-toggle">
                    <input type="checkbox" data-testid="show-tables"
                        prop:checked=move || ui.show_tables.get()
                        on:change=move |ev| ui.show_tables.set(event_target_checked(&ev)) />
                    " Show numbers as tables"
                </label>
            </header>
            <div class="layout">
                <aside class="controls" aria-label="Inputs">
                    <SentenceInput model />
                    <Settings model />
                    <MatrixEditors model />
                </aside>
                <main class="stage-area">
                    <StageRail stage />
                    <StageControls stage />
                    <p class="error global-error" role="alert" data-testid="trace-error">{error}</p>
                    <StageView trace stage />
                    <ExplainPanel explanation selection=picked.selection />
                    <p class="hint">"Tip: ← and → step through the stages."</p>
                    <WhatIfLab model trace />
                </main>
            </div>
        </div>
    }
}
