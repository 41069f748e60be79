//! One heatmap: a crisp canvas drawn by `crate::plot`, and the same numbers as an HTML table.
//!
//! The canvases are painted in batches ([`queue`]) by plotters-canvas ([`draw`]); a heatmap is
//! saved as SVG or PNG by [`export`], read out as a table by [`table`], and its cells are picked
//! with the pointer or the keyboard ([`keys`]).

mod draw;
mod export;
mod keys;
mod queue;
mod table;

pub use keys::picked_by_reader;

use super::context::{ui_context, Selection, SelectionContext};
use super::help::Help;
use crate::attention::Matrix;
use crate::plot::{format_value, Heatmap, Highlight, Palette, Reserve, Theme};
use crate::words::matrix_help;
use export::ImageFormat;
use leptos::html::Canvas;
use leptos::prelude::*;

/// How many times a screen's resolution a heatmap is drawn at for printing.
const PRINT_SHARPNESS: f64 = 3.0;

/// What one panel shows; every field is reactive so the panel follows the trace.
#[derive(Clone)]
pub struct PanelData {
    /// Test-id suffix: `canvas-<name>`, `table-<name>`.
    pub name: String,
    /// Title, e.g. `Q₁`.
    pub title: String,
    /// The numbers.
    pub values: Signal<Matrix>,
    /// Row labels (tokens or dimensions).
    pub rows: Signal<Vec<String>>,
    /// Column labels.
    pub cols: Signal<Vec<String>>,
    /// What rows and columns are, e.g. ("queries", "keys").
    pub axes: (&'static str, &'static str),
    /// Colour scheme.
    pub palette: Palette,
    /// Shared colour range, so panels compare; the panel's own when absent.
    pub range: Option<Signal<f64>>,
    /// Head bands over the columns (1 for none).
    pub col_groups: usize,
    /// Show each row's sum beside the chart (softmax).
    pub row_sums: bool,
    /// Decimals of the numbers in the cells: 2, or 3 for gradients, which are small.
    pub decimals: usize,
    /// Room kept whatever the numbers are now (a decoding step's row); none when absent.
    pub reserve: Option<Signal<Reserve>>,
}

impl PanelData {
    /// Numbers of any sign, coloured around 0 on their own scale, with two decimals.
    pub fn signed(
        name: String,
        title: String,
        values: Signal<Matrix>,
        (rows, cols): (Signal<Vec<String>>, Signal<Vec<String>>),
        axes: (&'static str, &'static str),
    ) -> Self {
        Self {
            name,
            title,
            values,
            rows,
            cols,
            axes,
            palette: Palette::Diverging,
            range: None,
            col_groups: 1,
            row_sums: false,
            decimals: 2,
            reserve: None,
        }
    }

    /// Attention weights: probabilities, queries by keys, each row's sum beside it.
    pub fn attention_weights(
        name: String,
        title: String,
        values: Signal<Matrix>,
        queries: Signal<Vec<String>>,
        keys: Signal<Vec<String>>,
    ) -> Self {
        Self {
            name,
            title,
            values,
            rows: queries,
            cols: keys,
            axes: ("queries", "keys"),
            palette: Palette::Sequential,
            range: None,
            col_groups: 1,
            row_sums: true,
            decimals: 2,
            reserve: None,
        }
    }
}

fn join(values: &[usize]) -> String {
    values
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The panel's data borrowed as one plot description for `f`. Reads are tracked when
/// `tracked`, so an effect redraws on change, and untracked for one-off exports.
#[allow(clippy::too_many_arguments)]
fn with_heatmap<R>(
    tracked: bool,
    values: Signal<Matrix>,
    rows: Signal<Vec<String>>,
    cols: Signal<Vec<String>>,
    axes: (&'static str, &'static str),
    palette: Palette,
    range: Option<f64>,
    (col_groups, decimals, reserve): (usize, usize, Reserve),
    highlight: Highlight,
    theme: Theme,
    f: impl FnOnce(&Heatmap) -> R,
) -> R {
    let build = |m: &Matrix, row_labels: &Vec<String>, col_labels: &Vec<String>| {
        f(&Heatmap {
            values: m,
            row_labels,
            col_labels,
            row_axis: axes.0,
            col_axis: axes.1,
            palette,
            range: range.unwrap_or_else(|| palette.range_for(m.iter())),
            col_groups,
            decimals,
            highlight,
            theme,
            reserve,
        })
    };
    if tracked {
        values.with(|m| rows.with(|r| cols.with(|c| build(m, r, c))))
    } else {
        values.with_untracked(|m| rows.with_untracked(|r| cols.with_untracked(|c| build(m, r, c))))
    }
}

/// What a heatmap waiting to be painted shows, owned by its paint.
struct Painting {
    values: Matrix,
    row_labels: Vec<String>,
    col_labels: Vec<String>,
    axes: (&'static str, &'static str),
    palette: Palette,
    range: f64,
    col_groups: usize,
    decimals: usize,
    highlight: Highlight,
    theme: Theme,
    reserve: Reserve,
}

impl Painting {
    fn map(&self) -> Heatmap<'_> {
        Heatmap {
            values: &self.values,
            row_labels: &self.row_labels,
            col_labels: &self.col_labels,
            row_axis: self.axes.0,
            col_axis: self.axes.1,
            palette: self.palette,
            range: self.range,
            col_groups: self.col_groups,
            decimals: self.decimals,
            highlight: self.highlight.clone(),
            theme: self.theme,
            reserve: self.reserve,
        }
    }
}

/// A heatmap with its accessible table.
#[component]
pub fn HeatmapView(
    /// What to show.
    data: PanelData,
    /// Cells to mark.
    #[prop(optional, into)]
    highlight: Option<Signal<Highlight>>,
) -> impl IntoView {
    let ui = ui_context();
    let picked = use_context::<SelectionContext>();
    let scope = super::context::id_scope();
    let canvas_ref = NodeRef::<Canvas>::new();
    let PanelData {
        name,
        title,
        values,
        rows,
        cols,
        axes,
        palette,
        range,
        col_groups,
        row_sums,
        decimals,
        reserve,
    } = data;
    // Paper shows one step: it keeps no room for the others. Read as `with_heatmap` reads the
    // rest: tracked by the effects that draw, untracked for a one-off export.
    let reserve_in = move |tracked: bool| -> Reserve {
        let paper = if tracked {
            ui.printing.get() || ui.handout.get()
        } else {
            ui.printing.get_untracked() || ui.handout.get_untracked()
        };
        match reserve {
            Some(r) if !paper && tracked => r.get(),
            Some(r) if !paper => r.get_untracked(),
            _ => Reserve::default(),
        }
    };

    let own_name = name.clone();
    Effect::new(move |_| {
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        // Paper is light, and is printed at several times a screen's resolution.
        let printing = ui.printing.get();
        let theme = if ui.dark.get() && !printing {
            Theme::DARK
        } else {
            Theme::LIGHT
        };
        let zoom = if printing {
            PRINT_SHARPNESS
        } else {
            ui.sharpness()
        };
        let mut highlight = highlight.map(|h| h.get()).unwrap_or_default();
        // The handout prints the worked example, not the cell picked on screen, whose
        // explanation it does not print.
        if let Some(picked) = picked.filter(|_| !ui.handout.get()) {
            for (panel, marks) in picked.operands.get() {
                if panel == own_name {
                    highlight.rows.extend(marks.rows);
                    highlight.cols.extend(marks.cols);
                    highlight.cells.extend(marks.cells);
                    highlight.cell = highlight.cell.or(marks.cell);
                }
            }
            let shown = picked.selection.get().or_else(|| picked.answer.get());
            if let Some(sel) = shown.filter(|s| s.panel == own_name) {
                highlight.cell = Some((sel.row, sel.col));
            }
        }
        let range = range.map(|r| r.get());
        let (v, r, c) = (values, rows, cols);
        let painting = with_heatmap(
            true,
            v,
            r,
            c,
            axes,
            palette,
            range,
            (col_groups, decimals, reserve_in(true)),
            highlight,
            theme,
            |map| {
                let marks = format!(
                    "cell:{};rows:{};cols:{};cells:{}",
                    map.highlight
                        .cell
                        .map(|(r, c)| format!("{r},{c}"))
                        .unwrap_or_default(),
                    join(&map.highlight.rows),
                    join(&map.highlight.cols),
                    map.highlight
                        .cells
                        .iter()
                        .map(|(r, c)| format!("{r}.{c}"))
                        .collect::<Vec<_>>()
                        .join(",")
                );
                draw::set_attribute_if_changed(&canvas, "data-highlight", &marks);
                let l = map.layout();
                let grid = format!("{},{},{},{}", l.grid_x, l.grid_y, l.cell_w, l.cell_h);
                draw::set_attribute_if_changed(&canvas, "data-grid", &grid);
                // The colour bar's end, for tests that check the scale a learner reads.
                draw::set_attribute_if_changed(&canvas, "data-range", &map.scale_end().to_string());
                (
                    map.values.clone(),
                    map.row_labels.to_vec(),
                    map.col_labels.to_vec(),
                    map.range,
                    map.highlight.clone(),
                )
            },
        );
        let (values, row_labels, col_labels, range, highlight) = painting;
        let target = canvas.clone();
        let painting = Painting {
            values,
            row_labels,
            col_labels,
            axes,
            palette,
            range,
            col_groups,
            decimals,
            highlight,
            theme,
            reserve: reserve_in(true),
        };
        queue::paint_soon(canvas, move || {
            let sized = draw::size(&target, &painting.map(), zoom);
            Box::new(move || draw::paint(&target, &painting.map(), sized))
        });
    });

    let dims = Memo::new(move |_| values.with(|m| m.shape()));
    let shape = move || {
        let (r, c) = dims.get();
        format!("{r} × {c}")
    };
    let description = {
        let title = title.clone();
        move || {
            values.with(|m| {
                let finite = m.iter().filter(|v| v.is_finite());
                let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(*v), hi.max(*v))
                });
                let masked = m.iter().filter(|v| **v == f64::NEG_INFINITY).count();
                // A bias, γ or β is one row: said as such.
                let rows = if m.nrows() == 1 {
                    "one row".to_string()
                } else {
                    format!("{} rows ({})", m.nrows(), axes.0)
                };
                let mut text = format!(
                    "Heatmap of {title}, {rows} by {} columns ({}).",
                    m.ncols(),
                    axes.1
                );
                if lo.is_finite() {
                    text.push_str(&format!(
                        " Values from {} to {}.",
                        format_value(lo, 2),
                        format_value(hi, 2)
                    ));
                }
                if masked > 0 {
                    text.push_str(&format!(" {masked} cells are masked (−∞)."));
                }
                let nan = m.iter().filter(|v| v.is_nan()).count();
                if nan > 0 {
                    text.push_str(&format!(
                        " {nan} {} NaN, not a number.",
                        if nan == 1 { "cell is" } else { "cells are" }
                    ));
                }
                text.push_str(" The table that follows lists every number.");
                text
            })
        }
    };

    let sums = move || {
        values.with(|m| {
            m.row_iter()
                // A masked −∞ adds nothing; a NaN makes the sum NaN, as it is.
                .map(|r| format_value(r.iter().filter(|v| !v.is_infinite()).sum::<f64>(), 2))
                .collect::<Vec<_>>()
        })
    };

    let layout = move || {
        let (v, r, c, none) = (values, rows, cols, Highlight::default());
        with_heatmap(
            true,
            v,
            r,
            c,
            axes,
            palette,
            Some(1.0),
            (col_groups, decimals, reserve_in(true)),
            none,
            Theme::LIGHT,
            |map| map.layout(),
        )
    };
    let export = {
        let name = name.clone();
        move |format: ImageFormat| {
            let theme = if ui.dark.get_untracked() {
                Theme::DARK
            } else {
                Theme::LIGHT
            };
            let range = range.map(|r| r.get_untracked());
            let stem = format!("heatmap-{name}");
            let (v, r, c, none) = (values, rows, cols, Highlight::default());
            with_heatmap(
                false,
                v,
                r,
                c,
                axes,
                palette,
                range,
                (col_groups, decimals, reserve_in(false)),
                none,
                theme,
                |map| export::save(map, format, &stem),
            );
        }
    };
    let export_png = {
        let export = export.clone();
        move |_| export(ImageFormat::Png)
    };
    let export_svg = move |_| export(ImageFormat::Svg);

    // Row sums line up with the chart's rows at whatever size the drawing is shown: the list
    // stretches to the drawing's height, and its tracks split that height as the drawing's
    // layout does (the strip above the grid, one track per row, the rest below).
    let sums_style = move || {
        let l = layout();
        let n = values.with(|m| m.nrows()) as u32;
        let below = l.height.saturating_sub(l.grid_y + n * l.cell_h);
        format!(
            "grid-template-rows: minmax(0, {}fr) repeat({n}, minmax(0, {}fr)) minmax(0, {below}fr)",
            l.grid_y, l.cell_h
        )
    };

    let select = {
        let name = name.clone();
        move |cell: (usize, usize)| {
            if let Some(picked) = picked {
                picked.selection.set(Some(Selection {
                    panel: name.clone(),
                    row: cell.0,
                    col: cell.1,
                }));
            }
        }
    };
    // The reader asked for a cell's explanation: a folded sheet opens.
    let reader_picks = move || {
        keys::picked_by_reader();
        if let Some(picked) = picked {
            picked.folded.set(false);
        }
    };
    let on_click = {
        let select = select.clone();
        move |ev: web_sys::MouseEvent| {
            let Some(canvas) = canvas_ref.get_untracked() else {
                return;
            };
            let offset = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
            let shape = values.with_untracked(|m| m.shape());
            let shown_width = f64::from(canvas.client_width());
            if let Some(cell) = keys::cell_at_click(&layout(), shown_width, offset, shape) {
                reader_picks();
                select(cell);
            }
        }
    };
    let current = {
        let name = name.clone();
        move || {
            picked
                .and_then(|p| p.selection.get_untracked())
                .filter(|s| s.panel == name)
                .map(|s| (s.row, s.col))
        }
    };
    let on_keydown = {
        let select = select.clone();
        let current = current.clone();
        move |ev: web_sys::KeyboardEvent| {
            let shape = values.with_untracked(|m| m.shape());
            let from = current().unwrap_or((0, 0));
            if let Some(cell) = keys::cell_for_key(&ev.key(), shape, from) {
                ev.prevent_default();
                ev.stop_propagation();
                reader_picks();
                select(cell);
            }
        }
    };
    // A press of the pointer focuses the canvas before its click picks the cell under it, so
    // only focus that did not come from the pointer starts at the first cell.
    let pressed = StoredValue::new(false);
    let on_pointerdown = move |_| pressed.set_value(true);
    let on_focus = move |_| {
        if pressed.get_value() {
            pressed.set_value(false);
            return;
        }
        let (r, c) = values.with_untracked(|m| m.shape());
        if current().is_none() && r > 0 && c > 0 {
            select((0, 0));
        }
    };
    let on_blur = move |_| pressed.set_value(false);

    // A picked cell of this heatmap stays in sight when its explanation opens as a sheet.
    #[cfg(target_arch = "wasm32")]
    {
        let own_name = name.clone();
        // An embed's explanation floats beside its cell: placed again when the frame changes
        // width (the host page's column, a phone turned) and once the picture is laid out
        // again for it.
        let resized = RwSignal::new(0u32);
        if ui.embed {
            // Only the width: the frame's height follows the content, and room made for the
            // explanation changes it.
            let width = crate::components::window_size::inner_width;
            let last = StoredValue::new(width());
            let listener = window_event_listener(leptos::ev::resize, move |_| {
                let now = width();
                if now != last.get_value() {
                    last.set_value(now);
                    resized.update(|n| *n = n.wrapping_add(1));
                }
            });
            on_cleanup(move || listener.remove());
        }
        Effect::new(move |_| {
            resized.track();
            if ui.embed {
                ui.placement.track();
            }
            // A phone's sheet is there from the first picture, and keeps the cell clear before
            // it is painted; elsewhere the explanation mounts after it, and a cell a link picked
            // is kept in sight once it is there.
            let sheet_from_start = ui.narrow.get() && !ui.embed;
            if !(ui.settled.get() || sheet_from_start) {
                return;
            }
            let Some(picked) = picked else {
                return;
            };
            // A sheet the reader opens again keeps its cell in sight.
            if picked.folded.get() {
                return;
            }
            let Some(sel) = picked.selection.get().filter(|s| s.panel == own_name) else {
                return;
            };
            let Some(canvas) = canvas_ref.get_untracked() else {
                return;
            };
            let layout = untrack(layout);
            let fold = move || picked.folded.set(true);
            request_animation_frame(move || {
                keys::keep_clear_of_sheet(&canvas, &layout, (sel.row, sel.col), fold);
            });
        });
    }

    // The drawing's size from the start, as painting sets it: the page's first layout, which
    // the first canvas font forces, is then already the final one.
    let first_size = untrack(|| {
        let l = layout();
        format!("--w: {}; aspect-ratio: {} / {}", l.width, l.width, l.height)
    });

    let body_ref = NodeRef::<leptos::html::Tbody>::new();
    table::follow_values(body_ref, values, rows, row_sums, ui.show_tables);

    let table_title = title.clone();
    view! {
        <figure class="heatmap" data-testid=format!("panel-{name}")>
            <figcaption>
                {match crate::panels::parse(&name) {
                    Some(matrix) => {
                        let (shown, id) = (title.clone(), format!("panel-{scope}{name}"));
                        // The help names the inputs of the wiring on screen (N₁, X_src).
                        (move || {
                            let wiring = ui.steps_wiring();
                            let (shown, id) = (shown.clone(), id.clone());
                            view! {
                                <Help id text=matrix_help(matrix, wiring) class="heatmap-title">{shown}</Help>
                            }
                        }).into_any()
                    }
                    None => view! { <span class="heatmap-title">{title.clone()}</span> }.into_any(),
                }}
                <span class="heatmap-shape">{shape}</span>
                <span class="heatmap-export">
                    <button type="button" data-testid=format!("export-png-{name}") on:click=export_png
                        aria-label=format!("Save {title} as PNG")>"PNG"</button>
                    <button type="button" data-testid=format!("export-svg-{name}") on:click=export_svg
                        aria-label=format!("Save {title} as SVG")>"SVG"</button>
                </span>
            </figcaption>
            <div class="heatmap-body">
                <canvas
                    node_ref=canvas_ref
                    data-testid=format!("canvas-{name}")
                    style=first_size
                    role="img"
                    tabindex="0"
                    aria-label=description
                    aria-describedby="explain-panel"
                    on:click=on_click
                    on:keydown=on_keydown
                    on:pointerdown=on_pointerdown
                    on:focus=on_focus
                    on:blur=on_blur
                ></canvas>
                {row_sums.then(|| view! {
                    <ol class="row-sums" aria-label="Sum of each row" data-testid=format!("sums-{name}") style=sums_style>
                        {move || sums().into_iter().map(|s| view! { <li>"Σ " {s}</li> }).collect_view()}
                    </ol>
                }.into_any())}
            </div>
            // A shown table may be wider than the screen: keyboard users scroll it once focused.
            <div class="table-wrap" data-testid=format!("tablewrap-{name}")
                role="group" aria-label=format!("{title} as a table")
                tabindex=move || ui.show_tables.get().then_some("0")
                class:visually-hidden=move || !ui.show_tables.get()>
            <table data-testid=format!("table-{name}") class="matrix-table">
                <caption>{table_title} " (" {shape} ")"</caption>
                <thead>
                    <tr>
                        <th scope="col">{format!("{} \\ {}", axes.0, axes.1)}</th>
                        {move || cols.get().into_iter().map(|c| view! { <th scope="col">{c}</th> }.into_any()).collect_view()}
                        {row_sums.then(|| view! { <th scope="col">"row sum"</th> }.into_any())}
                    </tr>
                </thead>
                <tbody node_ref=body_ref></tbody>
            </table>
            </div>
        </figure>
    }
}
