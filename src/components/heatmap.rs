//! One heatmap: a crisp canvas drawn by `crate::plot`, and the same numbers as an HTML table.

use super::context::{ui_context, Selection, SelectionContext};
use super::download::{download_text, download_url};
use super::keyboard::{move_selection, Direction};
use crate::attention::Matrix;
use crate::plot::{format_value, Heatmap, Highlight, Palette, Theme};
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

/// Canvases waiting to be painted, each with the job that paints it.
#[cfg(target_arch = "wasm32")]
type Jobs = Vec<(web_sys::HtmlCanvasElement, Box<dyn FnOnce()>)>;

#[cfg(target_arch = "wasm32")]
thread_local! {
    static WAITING: std::cell::RefCell<Jobs> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Paints `canvas` with `job` once the effects of the current change have all run.
///
/// Setting a font or drawing text on a canvas in the page makes the browser bring the page's
/// styles up to date first. Painting every canvas in one batch, after the other effects have
/// changed the page, pays for that once per change instead of once per canvas.
#[cfg(target_arch = "wasm32")]
fn paint_soon(canvas: web_sys::HtmlCanvasElement, job: impl FnOnce() + 'static) {
    let first = WAITING.with(|w| {
        let mut w = w.borrow_mut();
        let first = w.is_empty();
        w.retain(|(c, _)| *c != canvas);
        w.push((canvas, Box::new(job)));
        first
    });
    if first {
        queue_microtask(|| loop {
            let jobs = WAITING.with(|w| std::mem::take(&mut *w.borrow_mut()));
            if jobs.is_empty() {
                break;
            }
            for (_, job) in jobs {
                job();
            }
            super::perf::heatmaps_drawn();
        });
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn paint_soon(_canvas: web_sys::HtmlCanvasElement, job: impl FnOnce() + 'static) {
    job();
}

/// Draws a heatmap on a canvas, scaled for the screen's pixel ratio.
#[cfg(target_arch = "wasm32")]
fn paint(canvas: &web_sys::HtmlCanvasElement, map: &Heatmap, zoom: f64) {
    let ratio = window().device_pixel_ratio().clamp(1.0, 4.0) * zoom;
    let Some(layout) = draw_on(canvas, map, ratio) else {
        return;
    };
    let style = web_sys::HtmlElement::style(canvas);
    // Only real changes touch the style, so painting never invalidates the page's layout.
    for (property, value) in [
        ("width", format!("{}px", f64::from(layout.width) * zoom)),
        (
            "aspect-ratio",
            format!("{} / {}", layout.width, layout.height),
        ),
    ] {
        if style.get_property_value(property).ok().as_deref() != Some(value.as_str()) {
            let _ = style.set_property(property, &value);
        }
    }
    if canvas.get_attribute("data-drawn").is_none() {
        let _ = canvas.set_attribute("data-drawn", "true");
    }
}

/// The canvas kept in `slot`, made on first use; it is never added to the page.
#[cfg(target_arch = "wasm32")]
fn reuse_canvas(
    slot: &std::cell::RefCell<Option<web_sys::HtmlCanvasElement>>,
) -> Option<web_sys::HtmlCanvasElement> {
    let mut slot = slot.borrow_mut();
    if slot.is_none() {
        *slot = document()
            .create_element("canvas")
            .ok()
            .and_then(|c| c.dyn_into().ok());
    }
    slot.clone()
}

/// Resizes `canvas` only when its size differs: every resize reallocates and clears it.
#[cfg(target_arch = "wasm32")]
fn set_size(canvas: &web_sys::HtmlCanvasElement, width: u32, height: u32) {
    if canvas.width() != width {
        canvas.set_width(width);
    }
    if canvas.height() != height {
        canvas.set_height(height);
    }
}

/// Draws a heatmap on `canvas`, sized to fit, with every length multiplied by `ratio`; the
/// layout it used, or `None` when the canvas could not be drawn on.
#[cfg(target_arch = "wasm32")]
fn draw_on(
    canvas: &web_sys::HtmlCanvasElement,
    map: &Heatmap,
    ratio: f64,
) -> Option<crate::plot::Layout> {
    use plotters::prelude::IntoDrawingArea;
    let layout = map.layout();
    set_size(
        canvas,
        (f64::from(layout.width) * ratio).round() as u32,
        (f64::from(layout.height) * ratio).round() as u32,
    );
    let backend = super::canvas::CachedCanvas::new(canvas.clone())?;
    let context = backend.context().clone();
    let area = super::canvas::Surface::Canvas(backend).into_drawing_area();
    crate::plot::draw_heatmap_with(&area, map, ratio, &mut |grid| fill_cells(&context, grid))
        .ok()
        .map(|()| layout)
}

/// Paints the cell colours of `grid` as one image, one pixel per cell, scaled up without
/// smoothing: a handful of canvas calls instead of two per cell.
#[cfg(target_arch = "wasm32")]
fn fill_cells(context: &web_sys::CanvasRenderingContext2d, grid: &crate::plot::CellGrid) -> bool {
    use std::cell::RefCell;
    thread_local! {
        static PIXELS: RefCell<Option<web_sys::HtmlCanvasElement>> = const { RefCell::new(None) };
    }
    let (cols, rows) = (grid.cols as u32, grid.rows as u32);
    let rgba: Vec<u8> = grid
        .colors
        .iter()
        .flat_map(|c| [c.0, c.1, c.2, 255])
        .collect();
    let Ok(image) = web_sys::ImageData::new_with_u8_clamped_array_and_sh(
        wasm_bindgen::Clamped(&rgba),
        cols,
        rows,
    ) else {
        return false;
    };
    let Some(pixels) = PIXELS.with(reuse_canvas) else {
        return false;
    };
    set_size(&pixels, cols, rows);
    let Some(pixel_context) = super::canvas::context_2d(&pixels) else {
        return false;
    };
    if pixel_context.put_image_data(&image, 0.0, 0.0).is_err() {
        return false;
    }
    // Whole pixels at both ends, as the rectangles would have had.
    let (x0, y0) = (grid.x.round(), grid.y.round());
    let x1 = (grid.x + grid.cell_w * f64::from(cols)).round();
    let y1 = (grid.y + grid.cell_h * f64::from(rows)).round();
    context.set_image_smoothing_enabled(false);
    let drawn = context
        .draw_image_with_html_canvas_element_and_sw_and_sh_and_dx_and_dy_and_dw_and_dh(
            &pixels,
            0.0,
            0.0,
            f64::from(cols),
            f64::from(rows),
            x0,
            y0,
            x1 - x0,
            y1 - y0,
        )
        .is_ok();
    context.set_image_smoothing_enabled(true);
    drawn
}

#[cfg(not(target_arch = "wasm32"))]
fn paint(_canvas: &web_sys::HtmlCanvasElement, _map: &Heatmap, _zoom: f64) {}

#[cfg(not(target_arch = "wasm32"))]
fn draw_on(
    _canvas: &web_sys::HtmlCanvasElement,
    _map: &Heatmap,
    _ratio: f64,
) -> Option<crate::plot::Layout> {
    None
}

/// The heatmap as an SVG document, through the same [`super::canvas::Surface`] as the page's
/// canvases (see [`crate::plot::heatmap_svg`] for the same document elsewhere).
#[cfg(target_arch = "wasm32")]
fn svg_of(map: &Heatmap) -> Option<String> {
    use plotters::prelude::IntoDrawingArea;
    let layout = map.layout();
    let mut svg = String::new();
    {
        let backend = crate::plot::SvgBackend::new(&mut svg, (layout.width, layout.height));
        let area = super::canvas::Surface::Svg(backend).into_drawing_area();
        crate::plot::draw_heatmap_svg(&area, map).ok()?;
    }
    Some(svg)
}

#[cfg(not(target_arch = "wasm32"))]
fn svg_of(map: &Heatmap) -> Option<String> {
    crate::plot::heatmap_svg(map).ok()
}

/// The heatmap as a PNG `data:` URL at twice its size, drawn by the same code as the page.
fn png_at_2x(map: &Heatmap) -> Option<String> {
    let canvas = document()
        .create_element("canvas")
        .ok()?
        .dyn_into::<web_sys::HtmlCanvasElement>()
        .ok()?;
    draw_on(&canvas, map, 2.0)?;
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
                "<td data-value=\"{}\">{}</td>",
                *value,
                format_value(*value, 3)
            ));
        }
        if row_sums {
            let sum: f64 = m.row(r).iter().filter(|v| v.is_finite()).sum();
            html.push_str(&format!(
                "<td class=\"sum\" data-sum=\"{}\">{}</td>",
                sum,
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
    let ui = ui_context();
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
        let painting = with_heatmap(
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
        paint_soon(canvas, move || {
            let map = Heatmap {
                values: &values,
                row_labels: &row_labels,
                col_labels: &col_labels,
                row_axis: axes.0,
                col_axis: axes.1,
                palette,
                range,
                col_groups,
                decimals: 2,
                highlight,
                theme,
            };
            paint(&target, &map, zoom);
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
                        if let Some(text) = svg_of(map) {
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

    // One write per change: a 32 × 32 table would otherwise run two thousand small updates
    // on every edit. A hidden table catches up once edits pause, so dragging a value redraws
    // the heatmaps without rebuilding and laying out tables nobody is looking at.
    let body_ref = NodeRef::<leptos::html::Tbody>::new();
    Effect::new(move |drawn_before: Option<bool>| {
        let Some(body) = body_ref.get() else {
            return false;
        };
        let html = move || {
            values
                .try_with_untracked(|m| {
                    rows.try_with_untracked(|labels| table_body_html(m, labels, row_sums))
                })
                .flatten()
        };
        values.track();
        rows.track();
        if drawn_before.unwrap_or(false) && !ui.show_tables.get() {
            super::deferred::write_later(body.into(), html);
        } else if let Some(html) = html() {
            super::deferred::write_now(body.into(), &html);
        }
        true
    });

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
