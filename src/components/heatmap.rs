//! One heatmap: a crisp canvas drawn by `crate::plot`, and the same numbers as an HTML table.

use super::context::{Selection, SelectionContext, UiContext};
use super::download::{download_text, download_url};
use crate::attention::{move_selection, Direction, Matrix};
use crate::plot::{format_value, heatmap_svg, Heatmap, Highlight, Palette, Theme};
use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

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
}

fn join(values: &[usize]) -> String {
    values
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Draws a heatmap on a canvas, scaled for the screen's pixel ratio.
#[cfg(target_arch = "wasm32")]
fn paint(canvas: &web_sys::HtmlCanvasElement, map: &Heatmap, zoom: f64) {
    let ratio = window().device_pixel_ratio().clamp(1.0, 4.0);
    paint_at(canvas, map, ratio * zoom);
    let layout = map.layout();
    let style = web_sys::HtmlElement::style(canvas);
    let _ = style.set_property("width", &format!("{}px", f64::from(layout.width) * zoom));
}

/// Draws a heatmap with every length multiplied by `ratio`.
#[cfg(target_arch = "wasm32")]
fn paint_at(canvas: &web_sys::HtmlCanvasElement, map: &Heatmap, ratio: f64) {
    use plotters::prelude::IntoDrawingArea;
    use plotters_canvas::CanvasBackend;
    let layout = map.layout();
    canvas.set_width((f64::from(layout.width) * ratio).round() as u32);
    canvas.set_height((f64::from(layout.height) * ratio).round() as u32);
    let style = web_sys::HtmlElement::style(canvas);
    let _ = style.set_property("width", &format!("{}px", layout.width));
    let _ = style.set_property(
        "aspect-ratio",
        &format!("{} / {}", layout.width, layout.height),
    );
    if let Some(backend) = CanvasBackend::with_canvas_object(canvas.clone()) {
        let area = backend.into_drawing_area();
        if crate::plot::draw_heatmap(&area, map, ratio).is_ok() {
            let _ = canvas.set_attribute("data-drawn", "true");
            super::perf::heatmap_drawn();
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn paint(_canvas: &web_sys::HtmlCanvasElement, _map: &Heatmap, _zoom: f64) {}

#[cfg(not(target_arch = "wasm32"))]
fn paint_at(_canvas: &web_sys::HtmlCanvasElement, _map: &Heatmap, _ratio: f64) {}

/// The heatmap as a PNG `data:` URL at twice its size, drawn by the same code as the page.
fn png_at_2x(map: &Heatmap) -> Option<String> {
    let canvas = document()
        .create_element("canvas")
        .ok()?
        .dyn_into::<web_sys::HtmlCanvasElement>()
        .ok()?;
    paint_at(&canvas, map, 2.0);
    canvas.to_data_url_with_type("image/png").ok()
}

/// `text` with the characters HTML gives meaning to escaped.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The rows of a matrix's table: a header cell with the row label, then one cell per value
/// carrying its full-precision number in `data-value`, and optionally the row's sum.
pub fn table_body_html(m: &Matrix, labels: &[String], row_sums: bool) -> String {
    let mut html = String::new();
    for r in 0..m.nrows() {
        let label = labels.get(r).map(String::as_str).unwrap_or_default();
        html.push_str(&format!(
            "<tr><th scope=\"row\">{}</th>",
            escape_html(label)
        ));
        for value in m.row(r).iter() {
            html.push_str(&format!(
                "<td data-value=\"{value}\">{}</td>",
                format_value(*value, 3)
            ));
        }
        if row_sums {
            let sum: f64 = m.row(r).iter().filter(|v| v.is_finite()).sum();
            html.push_str(&format!(
                "<td class=\"sum\" data-sum=\"{sum}\">{}</td>",
                format_value(sum, 3)
            ));
        }
        html.push_str("</tr>");
    }
    html
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
    col_groups: usize,
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
            decimals: 2,
            highlight,
            theme,
        })
    };
    if tracked {
        values.with(|m| rows.with(|r| cols.with(|c| build(m, r, c))))
    } else {
        values.with_untracked(|m| rows.with_untracked(|r| cols.with_untracked(|c| build(m, r, c))))
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
    let ui = expect_context::<UiContext>();
    let picked = use_context::<SelectionContext>();
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
    } = data;

    let own_name = name.clone();
    Effect::new(move |_| {
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        let theme = if ui.dark.get() {
            Theme::DARK
        } else {
            Theme::LIGHT
        };
        let zoom = ui.zoom();
        let mut highlight = highlight.map(|h| h.get()).unwrap_or_default();
        if let Some(picked) = picked {
            for (panel, marks) in picked.operands.get() {
                if panel == own_name {
                    highlight.rows.extend(marks.rows);
                    highlight.cols.extend(marks.cols);
                    highlight.cells.extend(marks.cells);
                    highlight.cell = highlight.cell.or(marks.cell);
                }
            }
            if let Some(sel) = picked.selection.get().filter(|s| s.panel == own_name) {
                highlight.cell = Some((sel.row, sel.col));
            }
        }
        let range = range.map(|r| r.get());
        let (v, r, c) = (values, rows, cols);
        with_heatmap(
            true,
            v,
            r,
            c,
            axes,
            palette,
            range,
            col_groups,
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
                let _ = canvas.set_attribute("data-highlight", &marks);
                let l = map.layout();
                let grid = format!("{},{},{},{}", l.grid_x, l.grid_y, l.cell_w, l.cell_h);
                let _ = canvas.set_attribute("data-grid", &grid);
                paint(&canvas, map, zoom);
            },
        );
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
                let mut text = format!(
                    "Heatmap of {title}, {} rows ({}) by {} columns ({}).",
                    m.nrows(),
                    axes.0,
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
                text.push_str(" The table that follows lists every number.");
                text
            })
        }
    };

    let sums = move || {
        values.with(|m| {
            m.row_iter()
                .map(|r| format_value(r.iter().filter(|v| v.is_finite()).sum::<f64>(), 2))
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
            col_groups,
            none,
            Theme::LIGHT,
            |map| map.layout(),
        )
    };
    let export = {
        let name = name.clone();
        move |svg: bool| {
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
                col_groups,
                none,
                theme,
                |map| {
                    if svg {
                        if let Ok(text) = heatmap_svg(map) {
                            let _ = download_text(&format!("{stem}.svg"), "image/svg+xml", &text);
                        }
                    } else if let Some(url) = png_at_2x(map) {
                        let _ = download_url(&format!("{stem}.png"), &url);
                    }
                },
            );
        }
    };
    let export_png = {
        let export = export.clone();
        move |_| export(false)
    };
    let export_svg = move |_| export(true);

    // Row sums line up with the chart's rows.
    let sums_style = move || {
        let l = layout();
        format!("padding-top: {}px; line-height: {}px", l.grid_y, l.cell_h)
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
    let on_click = {
        let select = select.clone();
        move |ev: web_sys::MouseEvent| {
            let Some(canvas) = canvas_ref.get_untracked() else {
                return;
            };
            let l = layout();
            let width = f64::from(canvas.client_width().max(1));
            let scale = f64::from(l.width) / width;
            let (x, y) = (
                f64::from(ev.offset_x()) * scale,
                f64::from(ev.offset_y()) * scale,
            );
            let (r, c) = values.with_untracked(|m| m.shape());
            if let Some(cell) = l.cell_at(x, y, r, c) {
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
            let (rows, cols) = shape;
            let cell = match ev.key().as_str() {
                "Home" => Some((from.0, 0)),
                "End" => Some((from.0, cols.saturating_sub(1))),
                key => Direction::from_key(key).map(|d| move_selection(shape, from, d)),
            };
            if let Some(cell) = cell.filter(|_| rows > 0 && cols > 0) {
                ev.prevent_default();
                ev.stop_propagation();
                select(cell);
            }
        }
    };
    let on_focus = move |_| {
        let (r, c) = values.with_untracked(|m| m.shape());
        if current().is_none() && r > 0 && c > 0 {
            select((0, 0));
        }
    };

    let table_title = title.clone();
    view! {
        <figure class="heatmap" data-testid=format!("panel-{name}")>
            <figcaption>
                <span class="heatmap-title">{title.clone()}</span>
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
                    role="img"
                    tabindex="0"
                    aria-label=description
                    aria-describedby="explain-panel"
                    on:click=on_click
                    on:keydown=on_keydown
                    on:focus=on_focus
                ></canvas>
                {row_sums.then(|| view! {
                    <ol class="row-sums" aria-label="Sum of each row" data-testid=format!("sums-{name}") style=sums_style>
                        {move || sums().into_iter().map(|s| view! { <li>"Σ " {s}</li> }).collect_view()}
                    </ol>
                })}
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
                        {move || cols.get().into_iter().map(|c| view! { <th scope="col">{c}</th> }).collect_view()}
                        {row_sums.then(|| view! { <th scope="col">"row sum"</th> })}
                    </tr>
                </thead>
                // One write per change: a 32 × 32 table would otherwise run two thousand
                // small updates on every edit.
                <tbody inner_html=move || {
                    values.with(|m| rows.with(|labels| table_body_html(m, labels, row_sums)))
                }></tbody>
            </table>
            </div>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_escape_tokens_and_keep_full_precision() {
        let m = Matrix::from_row_slice(2, 2, &[0.1234567, f64::NEG_INFINITY, -2.0, 0.5]);
        let labels = vec!["<b>\"x\"</b>".to_string(), "y & z".to_string()];
        let html = table_body_html(&m, &labels, true);
        assert!(html.starts_with("<tr><th scope=\"row\">&lt;b&gt;&quot;x&quot;&lt;/b&gt;</th>"));
        assert!(html.contains("<td data-value=\"0.1234567\">0.123</td>"));
        assert!(html.contains("<td data-value=\"-inf\">−∞</td>"));
        assert!(html.contains("<th scope=\"row\">y &amp; z</th>"));
        assert!(html.contains("data-sum=\"-1.5\">−1.500</td>"));
        assert_eq!(html.matches("<tr>").count(), 2);
    }
}
