//! Editable grids for the embeddings, the four projection matrices, and the source's and the block's parameters when they are on.

use super::outline::model_outline;
use crate::attention::{BlockParam, Init, Matrix, MatrixId, WeightName};
use crate::plot::{band_color, parse_cell};
use crate::state::{EditTarget, Model};
use crate::words::{bias_1_note, label, matrix_help, BUILD_A_HEAD, BUILD_A_HEAD_TITLE};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// A value as it appears in a cell: exact when it has at most four decimals.
pub fn format_edit(value: f64) -> String {
    let rounded = (value * 1e4).round() / 1e4;
    if rounded == value {
        value.to_string()
    } else {
        let text = format!("{value:.4}");
        text.trim_end_matches('0').to_string()
    }
}

/// The value after a keyboard nudge: ±0.1, or ±0.01 with Shift. Rounding to four decimals
/// removes float noise (0.1 + 0.2) and keeps what the learner typed.
pub fn nudge(value: f64, up: bool, fine: bool) -> f64 {
    let step = if fine { 0.01 } else { 0.1 };
    let next = value + if up { step } else { -step };
    let v = (next * 1e4).round() / 1e4;
    let v = v.clamp(-crate::plot::CELL_LIMIT, crate::plot::CELL_LIMIT);
    if v == 0.0 {
        0.0
    } else {
        v
    }
}

/// The value after dragging `dx` CSS pixels from `start`: 0.01 per pixel (0.001 with Shift).
pub fn scrub(start: f64, dx: f64, fine: bool) -> f64 {
    let (per_px, decimals) = if fine { (0.001, 1e3) } else { (0.01, 1e2) };
    let v = ((start + dx * per_px) * decimals).round() / decimals;
    v.clamp(-crate::plot::CELL_LIMIT, crate::plot::CELL_LIMIT)
}

fn cell_id(target: EditTarget, r: usize, c: usize) -> String {
    format!("cell-{}-{r}-{c}", target.key())
}

fn focus_cell(target: EditTarget, r: usize, c: usize) {
    if let Some(el) = document().get_element_by_id(&cell_id(target, r, c)) {
        if let Ok(input) = el.dyn_into::<web_sys::HtmlInputElement>() {
            let _ = input.focus();
            input.select();
        }
    }
}

/// The matrix an editor tab changes, as the heatmaps title it.
fn edited_matrix(target: EditTarget) -> MatrixId {
    match target {
        EditTarget::Embeddings => MatrixId::Embeddings,
        EditTarget::Weight(w) => MatrixId::Weight(w),
        EditTarget::SourceEmbeddings => MatrixId::SourceEmbeddings,
        EditTarget::Block(p) => MatrixId::BlockParam(p),
    }
}

/// Tabs with one editor per matrix.
#[component]
pub fn MatrixEditors(
    /// The model to edit.
    model: RwSignal<Model>,
) -> impl IntoView {
    let selected = RwSignal::new(EditTarget::Weight(WeightName::Q));
    // The tab whose help shows: under the pointer, else the focused one. The tips sit outside
    // the tab list, which may hold tabs only.
    let hovered = RwSignal::new(None::<EditTarget>);
    let focused = RwSignal::new(None::<EditTarget>);
    let tip_shown = move |t: EditTarget| hovered.get().or(focused.get()) == Some(t);
    // The source's and the block's matrices have tabs while they are switched on.
    let outline = model_outline(model);
    let wiring = Memo::new(move |_| outline.with(|o| o.wiring()));
    let targets = Memo::new(move |_| EditTarget::shown(wiring.get()));
    Effect::new(move |_| {
        if !targets.with(|ts| ts.contains(&selected.get_untracked())) {
            selected.set(EditTarget::Weight(WeightName::Q));
        }
    });
    view! {
        <section class="panel editors" aria-labelledby="editors-title">
            <h2 id="editors-title" class="panel-title">"Matrices"</h2>
            <div class="tabs" role="tablist" aria-label="Matrix to edit">
                {move || targets.get().into_iter().map(|t| view! {
                    <button
                        role="tab"
                        type="button"
                        id=format!("tab-{}", t.key())
                        data-testid=format!("editor-tab-{}", t.key())
                        aria-selected=move || (selected.get() == t).to_string()
                        aria-controls="editor-panel"
                        aria-describedby=format!("help-tab-{}", t.key())
                        tabindex=move || if selected.get() == t { "0" } else { "-1" }
                        on:click=move |_| {
                            selected.set(t);
                            // Chosen: the help has done its job (and a tap leaves no hover).
                            hovered.set(None);
                            focused.set(None);
                        }
                        on:mouseenter=move |_| hovered.set(Some(t))
                        on:mouseleave=move |_| hovered.set(None)
                        on:focus=move |_| focused.set(Some(t))
                        on:blur=move |_| focused.set(None)
                        on:keydown=move |ev: web_sys::KeyboardEvent| {
                            if ev.key() == "Escape" {
                                hovered.set(None);
                                focused.set(None);
                                return;
                            }
                            let all = targets.get_untracked();
                            let i = all.iter().position(|x| *x == t).unwrap_or(0);
                            let n = all.len();
                            let next = match ev.key().as_str() {
                                "ArrowRight" => Some((i + 1) % n),
                                "ArrowLeft" => Some((i + n - 1) % n),
                                _ => None,
                            };
                            if let Some(j) = next {
                                ev.prevent_default();
                                let target = all[j];
                                selected.set(target);
                                if let Some(el) = document().get_element_by_id(&format!("tab-{}", target.key())) {
                                    if let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() {
                                        let _ = el.focus();
                                    }
                                }
                            }
                        }
                    >
                        // "Embeddings E": the word gives way to the symbol in a narrow column.
                        {match t.label().rsplit_once(' ') {
                            Some((word, symbol)) => view! {
                                <span class="tab-word">{word}" "</span>{symbol}
                            }.into_any(),
                            None => t.label().into_any(),
                        }}
                    </button>
                }.into_any()).collect_view()}
            </div>
            <div class="tab-tips">
                {move || targets.get().into_iter().map(|t| view! {
                    <span role="tooltip" id=format!("help-tab-{}", t.key()) class="help-tip"
                        class:shown=move || tip_shown(t) data-testid=format!("tip-tab-{}", t.key())>
                        {move || matrix_help(edited_matrix(t), wiring.get())}
                    </span>
                }.into_any()).collect_view()}
            </div>
            <div id="editor-panel" role="tabpanel" aria-labelledby=move || format!("tab-{}", selected.get().key())>
                {move || {
                    let target = selected.get();
                    view! { <MatrixEditor model target /> }
                }}
            </div>
        </section>
    }
}

/// The message of each cell whose text is not a number, in row-major order.
#[derive(Debug, Clone, Default, PartialEq)]
struct CellErrors(Vec<((usize, usize), String)>);

impl CellErrors {
    fn position(&self, cell: &(usize, usize)) -> Result<usize, usize> {
        self.0.binary_search_by(|(c, _)| c.cmp(cell))
    }

    fn contains_key(&self, cell: &(usize, usize)) -> bool {
        self.position(cell).is_ok()
    }

    fn insert(&mut self, cell: (usize, usize), message: String) {
        match self.position(&cell) {
            Ok(i) => self.0[i].1 = message,
            Err(i) => self.0.insert(i, (cell, message)),
        }
    }

    fn remove(&mut self, cell: &(usize, usize)) {
        if let Ok(i) = self.position(cell) {
            self.0.remove(i);
        }
    }

    /// The first cell in reading order, with its message.
    fn first(&self) -> Option<&((usize, usize), String)> {
        self.0.first()
    }
}

#[derive(Clone, Copy)]
struct Scrub {
    pointer: i32,
    start_x: f64,
    start_value: f64,
    moved: bool,
}

/// One matrix as a grid of number cells.
#[component]
pub fn MatrixEditor(
    /// The model to edit.
    model: RwSignal<Model>,
    /// Which matrix.
    target: EditTarget,
) -> impl IntoView {
    let matrix = Memo::new(move |_| model.with(|m| m.matrix(target)));
    let outline = model_outline(model);
    let shape = Memo::new(move |_| {
        outline.with(|m| {
            let d = m.config.d_model;
            let f = m.d_ff;
            let dims = |n: usize| (1..=n).map(|i| format!("d{i}")).collect::<Vec<_>>();
            let units = |n: usize| (1..=n).map(|i| format!("f{i}")).collect::<Vec<_>>();
            let (rows, cols) = match target {
                EditTarget::Embeddings => (m.tokens.clone(), dims(d)),
                EditTarget::SourceEmbeddings => (m.source_tokens.clone(), dims(d)),
                EditTarget::Weight(w) => (
                    dims(d),
                    dims(crate::attention::Weights::shape_of(w, d, m.config.kv_width()).1),
                ),
                EditTarget::Block(BlockParam::W1 | BlockParam::WGate) => (dims(d), units(f)),
                EditTarget::Block(BlockParam::W2) => (units(f), dims(d)),
                EditTarget::Block(p) => {
                    let cols = if p == BlockParam::B1 {
                        units(f)
                    } else {
                        dims(d)
                    };
                    (vec![label(MatrixId::BlockParam(p))], cols)
                }
            };
            (rows, cols, m.config.n_heads)
        })
    });
    let errors = RwSignal::new(CellErrors::default());
    let scrubbing = StoredValue::new(None::<Scrub>);
    let seed_text = RwSignal::new(model.get_untracked().seed.to_string());
    let key = target.key();

    let apply = move |r: usize, c: usize, v: f64| {
        super::perf::edit_started();
        model.update(|m| {
            let _ = m.set_cell(target, r, c, v);
        });
        super::perf::edit_applied();
    };
    let fill = move |init: Init| {
        errors.set(CellErrors::default());
        model.update(|m| m.fill(target, init));
    };

    // `number` holds the cell's value, set only when it changes, so an edit wakes the cells
    // whose numbers it changed rather than every cell of the grid.
    let cell = move |r: usize, c: usize, number: RwSignal<f64>| {
        let editing = RwSignal::new(None::<String>);
        let value = move || number.get();
        // Every cell's invalid marks read `errors`: it is written only when this cell had an
        // error, so an edit does not wake every cell of the grid.
        let clear_error = move || {
            if errors.with_untracked(|e| e.contains_key(&(r, c))) {
                errors.update(|e| e.remove(&(r, c)));
            }
        };
        // A memo, so an edit rewrites only the inputs whose text changes, not all of them.
        let shown = Memo::new(move |_| editing.get().unwrap_or_else(|| format_edit(value())));
        let input_ref = NodeRef::<leptos::html::Input>::new();
        // Writing a focused input's value makes the browser lay out the page there and then;
        // handlers write the new text before they apply an edit, so this rarely has to.
        Effect::new(move |_| {
            let text = shown.get();
            if let Some(input) = input_ref.get() {
                if input.value() != text {
                    input.set_value(&text);
                }
            }
        });
        let show_now = move |input: Option<&web_sys::HtmlInputElement>, v: f64| {
            if let Some(input) = input {
                input.set_value(&format_edit(v));
            }
        };
        let on_input = move |ev| {
            let text = event_target_value(&ev);
            editing.set(Some(text.clone()));
            match parse_cell(&text) {
                Ok(v) => {
                    clear_error();
                    apply(r, c, v);
                }
                Err(err) => errors.update(|e| {
                    e.insert((r, c), err.to_string());
                }),
            }
        };
        let on_blur = move |_| {
            if !errors.with(|e| e.contains_key(&(r, c))) {
                editing.set(None);
            }
        };
        let on_keydown = move |ev: web_sys::KeyboardEvent| {
            let (rows, cols) = matrix.with(|m| m.shape());
            let input: Option<web_sys::HtmlInputElement> =
                ev.target().and_then(|t| t.dyn_into().ok());
            let (start, end, len) = input
                .as_ref()
                .map(|i| {
                    (
                        i.selection_start().ok().flatten().unwrap_or(0),
                        i.selection_end().ok().flatten().unwrap_or(0),
                        i.value().encode_utf16().count() as u32,
                    )
                })
                .unwrap_or((0, 0, 0));
            let all = start == 0 && end == len;
            let modifier = ev.alt_key() || ev.ctrl_key() || ev.meta_key();
            let go = |r2: usize, c2: usize| focus_cell(target, r2, c2);
            match ev.key().as_str() {
                "ArrowUp" | "ArrowDown" if modifier => {
                    ev.prevent_default();
                    let v = nudge(value(), ev.key() == "ArrowUp", ev.shift_key());
                    clear_error();
                    editing.set(None);
                    show_now(input.as_ref(), v);
                    apply(r, c, v);
                }
                "ArrowUp" if r > 0 => {
                    ev.prevent_default();
                    go(r - 1, c);
                }
                "ArrowDown" | "Enter" if r + 1 < rows => {
                    ev.prevent_default();
                    go(r + 1, c);
                }
                "ArrowLeft" if c > 0 && (end == 0 || all) => {
                    ev.prevent_default();
                    go(r, c - 1);
                }
                "ArrowRight" if c + 1 < cols && (start == len || all) => {
                    ev.prevent_default();
                    go(r, c + 1);
                }
                "Escape" => {
                    clear_error();
                    editing.set(None);
                    if let Some(i) = input {
                        i.set_value(&format_edit(value()));
                        i.select();
                    }
                }
                _ => {}
            }
        };
        let on_pointerdown = move |ev: web_sys::PointerEvent| {
            let Some(input) = ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            else {
                return;
            };
            let focused = document()
                .active_element()
                .is_some_and(|a| a == *input.unchecked_ref::<web_sys::Element>());
            if focused || ev.button() != 0 {
                return;
            }
            // Not focused yet: a drag scrubs the value, a click starts typing.
            ev.prevent_default();
            let _ = input.set_pointer_capture(ev.pointer_id());
            scrubbing.set_value(Some(Scrub {
                pointer: ev.pointer_id(),
                start_x: f64::from(ev.client_x()),
                start_value: value(),
                moved: false,
            }));
        };
        let on_pointermove = move |ev: web_sys::PointerEvent| {
            let Some(mut s) = scrubbing.get_value() else {
                return;
            };
            if s.pointer != ev.pointer_id() {
                return;
            }
            let dx = f64::from(ev.client_x()) - s.start_x;
            if dx.abs() > 3.0 || s.moved {
                s.moved = true;
                scrubbing.set_value(Some(s));
                clear_error();
                editing.set(None);
                let v = scrub(s.start_value, dx, ev.shift_key());
                let input = ev.target().and_then(|t| t.dyn_into().ok());
                show_now(input.as_ref(), v);
                apply(r, c, v);
            }
        };
        let on_pointerup = move |ev: web_sys::PointerEvent| {
            if let Some(s) = scrubbing.get_value() {
                scrubbing.set_value(None);
                if !s.moved {
                    focus_cell(target, r, c);
                }
            }
            let _ = ev;
        };
        view! {
            <input
                class="cell"
                class:invalid=move || errors.with(|e| e.contains_key(&(r, c)))
                id=cell_id(target, r, c)
                data-testid=format!("cell-{key}-{r}-{c}")
                type="text"
                inputmode="decimal"
                autocomplete="off"
                spellcheck="false"
                aria-label=move || {
                    let labels = shape.with(|s| s.0.clone());
                    format!("{} row {} ({}), column d{}", target.label(), r + 1, labels.get(r).cloned().unwrap_or_default(), c + 1)
                }
                aria-invalid=move || errors.with(|e| e.contains_key(&(r, c))).to_string()
                aria-describedby=format!("editor-error-{key}")
                node_ref=input_ref
                prop:value=shown.get_untracked()
                on:input=on_input
                on:blur=on_blur
                on:keydown=on_keydown
                on:pointerdown=on_pointerdown
                on:pointermove=on_pointermove
                on:pointerup=on_pointerup
                on:pointercancel=move |_| scrubbing.set_value(None)
            />
        }
    };

    let grid = move || {
        let (rows, cols, n_heads) = shape.get();
        let d = cols.len();
        let at = |m: &Matrix, r: usize, c: usize| {
            if r < m.nrows() && c < m.ncols() {
                m[(r, c)]
            } else {
                0.0
            }
        };
        // One signal per cell, kept in step with the matrix by one effect that sets only those
        // whose value changed.
        let numbers: Vec<Vec<RwSignal<f64>>> = matrix.with_untracked(|m| {
            (0..rows.len())
                .map(|r| (0..d).map(|c| RwSignal::new(at(m, r, c))).collect())
                .collect()
        });
        let followed = numbers.clone();
        Effect::new(move |_| {
            matrix.with(|m| {
                for (r, row) in followed.iter().enumerate() {
                    for (c, number) in row.iter().enumerate() {
                        let v = at(m, r, c);
                        if number.get_untracked() != v {
                            number.set(v);
                        }
                    }
                }
            })
        });
        let head_dim = d / n_heads.max(1);
        let band = move |i: usize| {
            let color = band_color(i / head_dim.max(1)).hex();
            format!("border-color: {color}")
        };
        let col_bands =
            matches!(target, EditTarget::Weight(w) if w != WeightName::O) && n_heads > 1;
        let row_bands = target == EditTarget::Weight(WeightName::O) && n_heads > 1;
        view! {
            <table class="editor-grid" style=format!("--cols: {d}")>
                <thead>
                    <tr>
                        <th></th>
                        {cols.into_iter().enumerate().map(|(c, name)| view! {
                            <th scope="col" class:band=col_bands style=if col_bands { band(c) } else { String::new() }>
                                {name}
                            </th>
                        }.into_any()).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {rows.into_iter().zip(numbers).enumerate().map(|(r, (label, row))| {
                        view! {
                            <tr>
                                <th scope="row" class:band=row_bands style=if row_bands { band(r) } else { String::new() }>
                                    <bdi>{label}</bdi>
                                </th>
                                {row.into_iter().enumerate().map(|(c, number)| view! { <td>{cell(r, c, number)}</td> }).collect_view()}
                            </tr>
                        }
                    }.into_any()).collect_view()}
                </tbody>
            </table>
        }
    };

    let note = move || {
        match target {
            EditTarget::Embeddings => "One row per token. Editing a word's row changes every copy of that word.",
            EditTarget::SourceEmbeddings => "One row per source token. Editing a word's row changes every copy of it in the source.",
            EditTarget::Block(BlockParam::W1 | BlockParam::WGate) => "Rows are model dimensions, columns the d_ff hidden units f1, f2, ….",
            EditTarget::Block(BlockParam::W2) => "Rows are the d_ff hidden units, columns model dimensions.",
            EditTarget::Block(BlockParam::B1) => bias_1_note(outline.with(|o| o.wiring())),
            EditTarget::Block(BlockParam::B2) => "One number per model dimension, added to every token's row of G·W₂.",
            EditTarget::Block(BlockParam::Ln1Gamma | BlockParam::Ln2Gamma) => "One scale per column, multiplying every normalised row. Identity sets them to 1.",
            EditTarget::Block(_) => "One shift per column, added to every normalised row. Identity sets them to 0.",
            EditTarget::Weight(WeightName::O) => "Rows are the concatenated head columns (coloured by head); columns are output dimensions.",
            EditTarget::Weight(_) => "Column bands show which columns belong to which head.",
        }
    };

    view! {
        <div class="editor" data-testid=format!("editor-{key}")>
            <p class="help">{note} " Drag a cell sideways to scrub it; Alt+↑/↓ nudges by 0.1 (with Shift 0.01)."</p>
            <div class="editor-scroll">{grid}</div>
            <p class="error" role="alert" id=format!("editor-error-{key}") data-testid=format!("editor-error-{key}")>
                {move || errors.with(|e| e.first().map(|((r, c), msg)| {
                    format!("Row {}, column {}: {msg} The last valid value is still used.", r + 1, c + 1)
                }))}
            </p>
            <div class="editor-actions">
                <button type="button" data-testid=format!("fill-reset-{key}") on:click=move |_| fill(Init::Default)>"Reset"</button>
                <button type="button" data-testid=format!("fill-identity-{key}") on:click=move |_| fill(Init::Identity)>"Identity"</button>
                <button type="button" data-testid=format!("fill-zero-{key}") on:click=move |_| fill(Init::Zero)>"Zero"</button>
                <span class="random">
                    <button type="button" data-testid=format!("fill-random-{key}") on:click=move |_| {
                        let seed = model.with_untracked(|m| m.seed);
                        fill(Init::Random(seed));
                    }>"Random"</button>
                    <label for=format!("seed-{key}")>"seed"</label>
                    <input id=format!("seed-{key}") class="seed" data-testid=format!("seed-{key}") type="text" inputmode="numeric"
                        prop:value=move || seed_text.get()
                        on:input=move |ev| {
                            let text = event_target_value(&ev);
                            seed_text.set(text.clone());
                            if let Ok(seed) = text.trim().parse::<u64>() {
                                model.update(|m| m.seed = seed);
                            }
                        } />
                </span>
            </div>
            // After the grid and its fills, so Tab goes from the tab straight to the cells.
            {matches!(target, EditTarget::Weight(WeightName::Q | WeightName::K)).then(|| view! {
                <details class="recipe" data-testid=format!("recipe-{key}")>
                    <summary data-testid=format!("recipe-summary-{key}")>{BUILD_A_HEAD_TITLE}</summary>
                    <p>{BUILD_A_HEAD}</p>
                </details>
            })}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_show_short_values_exactly_and_long_ones_rounded() {
        assert_eq!(format_edit(0.5), "0.5");
        assert_eq!(format_edit(-1.25), "-1.25");
        assert_eq!(format_edit(0.123456), "0.1235");
        assert_eq!(format_edit(2.0), "2");
    }

    #[test]
    fn nudges_step_cleanly_without_float_noise() {
        assert_eq!(nudge(0.3, true, false), 0.4);
        assert_eq!(nudge(0.1, false, false), 0.0);
        assert_eq!(nudge(0.25, true, true), 0.26);
        assert_eq!(nudge(-0.05, false, false), -0.15);
        assert_eq!(nudge(0.1 + 0.2, true, false), 0.4);
    }

    #[test]
    fn cell_errors_keep_one_message_per_cell_in_reading_order() {
        let mut errors = CellErrors::default();
        errors.insert((2, 0), "c".into());
        errors.insert((0, 3), "a".into());
        errors.insert((1, 1), "b".into());
        errors.insert((0, 3), "a2".into());
        assert_eq!(errors.first(), Some(&((0, 3), "a2".to_string())));
        assert!(errors.contains_key(&(1, 1)));
        errors.remove(&(0, 3));
        errors.remove(&(5, 5));
        assert_eq!(errors.first(), Some(&((1, 1), "b".to_string())));
        assert!(!errors.contains_key(&(0, 3)));
    }

    #[test]
    fn scrubbing_moves_a_hundredth_per_pixel() {
        assert_eq!(scrub(0.5, 10.0, false), 0.6);
        assert_eq!(scrub(0.5, -30.0, false), 0.2);
        assert_eq!(scrub(0.5, 10.0, true), 0.51);
    }
}
