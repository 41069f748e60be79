//! The sentence box and its token chips.

use super::context::Place;
use super::outline::model_outline;
use crate::attention::{tokenize, Init, Stage, Trace, Weights, MAX_TOKENS};
use crate::state::Model;
use crate::words::{own_sentence_text, TEACH_A_HEAD};
use leptos::prelude::*;

/// A text box whose tokens appear as chips as you type. Invalid text shows a message and the
/// last valid sentence stays in use.
#[component]
pub fn SentenceInput(
    /// The model to update.
    model: RwSignal<Model>,
    /// The stage shown, which a preset sets.
    stage: RwSignal<Stage>,
    /// The head shown, which a preset sets.
    head: RwSignal<usize>,
    /// The one trace, against which a preset's claims are checked.
    trace: Memo<Trace>,
) -> impl IntoView {
    let text = RwSignal::new(model.get_untracked().sentence);
    let error = RwSignal::new(None::<String>);
    // The sentence the weights came with: the one the page opened on, or the one a preset or a
    // link brought with its weights.
    let origin = RwSignal::new(model.get_untracked().sentence);
    // The weights and embeddings it came with: a run or an edit since makes them the learner's.
    let weights_of = |m: &Model| (m.weights.clone(), m.embedding_overrides.clone());
    let origin_weights = RwSignal::new(model.with_untracked(weights_of));
    // Loading a preset or a link replaces the sentence from outside: follow it.
    let outline = model_outline(model);
    let outside = Memo::new(move |_| outline.with(|o| o.sentence.clone()));
    Effect::new(move |prev: Option<String>| {
        let sentence = outside.get();
        if prev.is_some() && tokenize(&text.get_untracked()).ok() != tokenize(&sentence).ok() {
            text.set(sentence.clone());
            error.set(None);
            origin.set(sentence.clone());
            origin_weights.set(model.with_untracked(weights_of));
        }
        sentence
    });

    let on_input = move |ev| {
        let value = event_target_value(&ev);
        text.set(value.clone());
        let mut result = Ok(());
        model.update(|m| result = m.set_sentence(&value));
        error.set(result.err().map(|e| e.to_string()));
    };
    // A memo: the chips are rebuilt when the tokens change, not on every weight edit.
    let tokens = Memo::new(move |_| outline.with(|o| o.tokens.clone()));
    // Once the learner's own words replace the sentence the weights came with, whom the weights
    // were made for; `None` while the sentence is theirs.
    // Said only while the weights are the ones the sentence came with.
    let unchanged = Memo::new(move |_| {
        origin_weights.with(|(w, e)| model.with(|m| m.weights == *w && m.embedding_overrides == *e))
    });
    let own = Memo::new(move |_| {
        let typed = tokens.get();
        let original = origin.with(|o| tokenize(o).ok());
        (original.as_ref() != Some(&typed) && unchanged.get()).then(|| {
            let random = model.with_untracked(|m| {
                m.weights == Weights::new(Init::Default, m.config.d_model)
                    && m.embedding_overrides.is_empty()
            });
            (!random).then(|| origin.get())
        })
    });
    let ui = super::context::ui_context();

    view! {
        <section class="panel sentence" aria-labelledby="sentence-label">
            <label id="sentence-label" for="sentence-input" class="panel-title">"Sentence"</label>
            <super::preset_picker::PresetPicker model stage head trace />
            <input
                id="sentence-input"
                data-testid="sentence-input"
                type="text"
                autocomplete="off"
                spellcheck="false"
                prop:value=move || text.get()
                on:input=on_input
                aria-invalid=move || error.with(|e| e.is_some().to_string())
                aria-describedby="sentence-help sentence-error"
            />
            <p id="sentence-help" class="help">
                {format!("Words and punctuation become tokens, up to {MAX_TOKENS}.")}
            </p>
            <p id="sentence-error" class="error" data-testid="sentence-error" role="alert">
                {move || error.get()}
            </p>
            <ol class="chips" aria-label="Tokens" data-testid="tokens">
                {move || {
                    tokens
                        .get()
                        .into_iter()
                        .enumerate()
                        .map(|(i, t)| {
                            view! {
                                <li class="chip" title=format!("token {}", i + 1)>
                                    <span class="chip-index" aria-hidden="true">{i + 1}</span>
                                    <bdi data-testid="token">{t}</bdi>
                                </li>
                            }
                        })
                        .collect_view()
                }}
            </ol>
            {move || own.get().map(|made_for| view! {
                <p class="own-sentence" data-testid="own-sentence" role="status">
                    {own_sentence_text(made_for.as_deref())}
                    // An embed has no training: its full view does.
                    {(!ui.embed).then(|| view! {
                        " "
                        <button type="button" class="teach-head" data-testid="teach-head"
                            on:click=move |_| {
                                ui.open_place(Place::Train);
                                super::places::bring_into_view(Place::Train);
                            }>{TEACH_A_HEAD}</button>
                    })}
                </p>
            })}
        </section>
    }
}
