//! Export the trace and the scenario, and import a scenario from a file.

use super::download::{download_text, file_stem};
use super::menu::close_menus;
use crate::attention::Trace;
use crate::formats::report::{trace_csv, trace_json_pretty, trace_markdown};
use crate::formats::scenario::{Scenario, MAX_SCENARIO_BYTES};
use crate::formats::worksheet::{worksheet_markdown, Backward, Picks};
use crate::quiz::RunViews;
use crate::state::Model;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

/// How many questions the exported worksheet holds.
pub const WORKSHEET_QUESTIONS: usize = 10;

/// The largest scenario file the page reads.
pub const MAX_IMPORT_BYTES: f64 = MAX_SCENARIO_BYTES as f64;

/// Reads scenario JSON into a model, or says what is wrong (naming the field).
pub fn import_scenario(text: &str) -> Result<Model, String> {
    let scenario = Scenario::from_json(text).map_err(|e| e.to_string())?;
    scenario.to_model().map_err(|e| e.to_string())
}

/// Why a file of `bytes` bytes is refused before it is read, if it is.
pub fn refuse_size(bytes: f64) -> Option<String> {
    (bytes > MAX_IMPORT_BYTES).then(|| {
        format!(
            "The file is {:.1} MB; a scenario file is at most 1 MB. Nothing was changed.",
            bytes / 1_048_576.0
        )
    })
}

/// Reads `file` and replaces the model if it holds a valid scenario; otherwise reports why and
/// leaves the model untouched.
pub fn import_file(file: web_sys::File, model: RwSignal<Model>, report: RwSignal<Option<String>>) {
    if let Some(message) = refuse_size(file.size()) {
        report.set(Some(message));
        return;
    }
    let Ok(reader) = web_sys::FileReader::new() else {
        report.set(Some("This browser cannot read files.".into()));
        return;
    };
    let name = file.name();
    let onload = {
        let reader = reader.clone();
        Closure::once(move |_: web_sys::Event| {
            let text = reader
                .result()
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default();
            match import_scenario(&text) {
                Ok(m) => {
                    model.set(m);
                    report.set(Some(format!("Loaded {name}.")));
                }
                Err(e) => report.set(Some(format!("{name}: {e} Nothing was changed."))),
            }
        })
    };
    reader.set_onload(Some(onload.as_ref().unchecked_ref()));
    onload.forget();
    if reader.read_as_text(&file).is_err() {
        report.set(Some(format!("{} could not be read.", file.name())));
    }
}

/// The export and import buttons.
#[component]
pub fn ExportMenu(
    /// The learner's model (scenario export and import).
    model: RwSignal<Model>,
    /// The one trace (trace exports).
    trace: Memo<Trace>,
    /// Where import results and errors are reported.
    report: RwSignal<Option<String>>,
) -> impl IntoView {
    let stem = move || model.with(|m| file_stem(&m.sentence));
    let save = move |suffix: &str, mime: &str, text: String| {
        if let Err(e) = download_text(&format!("{}{suffix}", stem()), mime, &text) {
            report.set(Some(format!("The export failed: {e}.")));
        }
        // Done with the menu: it closes, and on a phone the menu that holds it too, uncovering
        // the page under them.
        close_menus(None);
    };
    // The sheet and its key share the model's seed, so they hold the same questions; during a
    // quiz they hold the quiz's questions, one per stage.
    let quiz = super::quiz::quiz_context();
    let ui = super::context::ui_context();
    let worksheet = move |answers: bool| {
        let picks = match quiz.and_then(|q| q.set.get_untracked()) {
            Some(set) => Picks::QuizSet(set),
            None => Picks::Spread {
                seed: model.with_untracked(|m| m.seed),
                count: WORKSHEET_QUESTIONS,
            },
        };
        // Decoding and the tiles, where they are on, ask as the quiz does.
        let views = super::context::run_context().map_or_else(RunViews::default, |run| RunViews {
            prefill: run
                .decode
                .with_untracked(|d| d.as_ref().and_then(|d| d.as_ref().ok()).map(|d| d.prefill)),
            tile: run.tile.get_untracked(),
        });
        let sheet = |backward: Option<Backward>| {
            trace.with(|t| worksheet_markdown(t, backward, picks, views, answers))
        };
        match super::context::backward_context() {
            Some(b) => b.goal.with_untracked(|goal| {
                b.pass.with_untracked(|p| {
                    sheet(Some(Backward::new(
                        goal,
                        p.as_ref().map_err(String::as_str),
                    )))
                })
            }),
            None => sheet(None),
        }
    };
    let on_file = move |ev: web_sys::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(file) = input.files().and_then(|f| f.get(0)) {
            import_file(file, model, report);
        }
        input.set_value("");
    };
    view! {
        <details class="menu export-menu">
            <summary data-testid="export-menu">"Export / import"</summary>
            // Closed on the first screen, so its entries mount once the first picture is painted.
            {move || ui.settled.get().then(|| view! {
                <div class="menu-body">
                    <button type="button" data-testid="export-trace-json"
                        on:click=move |_| save("-trace.json", "application/json", trace.with(trace_json_pretty))>
                        "Trace as JSON"
                    </button>
                    <button type="button" data-testid="export-trace-csv"
                        on:click=move |_| save("-trace.csv", "text/csv", trace.with(trace_csv))>
                        "Trace as CSV"
                    </button>
                    <button type="button" data-testid="export-markdown"
                        on:click=move |_| save("-worked-example.md", "text/markdown", trace.with(trace_markdown))>
                        "Worked example (Markdown)"
                    </button>
                    <button type="button" data-testid="export-worksheet"
                        on:click=move |_| save("-worksheet.md", "text/markdown", worksheet(false))>
                        "Worksheet (Markdown)"
                    </button>
                    <button type="button" data-testid="export-answer-key"
                        on:click=move |_| save("-answer-key.md", "text/markdown", worksheet(true))>
                        "Answer key (Markdown)"
                    </button>
                    <button type="button" data-testid="export-print"
                        on:click=move |_| {
                            close_menus(None);
                            ui.handout.set(true);
                        }>
                        "Print the worked example"
                    </button>
                    <button type="button" data-testid="export-scenario"
                        on:click=move |_| save("-scenario.json", "application/json", model.with(|m| Scenario::from_model(m).to_json()))>
                        "Scenario as JSON"
                    </button>
                    <label class="import">
                        "Import a scenario… "
                        <input type="file" accept=".json,application/json" data-testid="import-file" on:change=on_file />
                    </label>
                    <p class="help">"Or drop a scenario file anywhere on the page. Heatmaps export as PNG or SVG from their own buttons."</p>
                </div>
            })}
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exported_scenario_imports_to_the_same_model() {
        let mut model = Model::default();
        model.config.causal = true;
        let back = import_scenario(&Scenario::from_model(&model).to_json()).unwrap();
        assert_eq!(back.trace().unwrap(), model.trace().unwrap());
    }

    #[test]
    fn a_broken_file_names_what_is_wrong() {
        let err =
            import_scenario(r#"{"version": 1, "sentence": "a b", "w_q": [[1]]}"#).unwrap_err();
        assert!(err.contains("w_q"), "{err}");
        assert!(import_scenario("not json")
            .unwrap_err()
            .contains("not a valid scenario"));
    }

    #[test]
    fn files_over_the_limit_are_refused_before_reading() {
        assert!(refuse_size(5.0 * 1_048_576.0).unwrap().contains("5.0 MB"));
        assert!(refuse_size(10_000.0).is_none());
    }
}
