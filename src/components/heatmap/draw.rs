//! Drawing a heatmap on a canvas with plotters-canvas, sized for the screen's pixel ratio.

use crate::plot::{Heatmap, Layout, Part};
use web_sys::HtmlCanvasElement;

#[cfg(target_arch = "wasm32")]
use {
    crate::plot::CellGrid,
    leptos::prelude::{document, window},
    std::cell::RefCell,
    wasm_bindgen::JsCast,
    web_sys::CanvasRenderingContext2d,
};

/// Draws a heatmap on a canvas in the page, sharp at the screen's pixel ratio times `zoom`, and
/// gives the canvas its drawing's size: the style sheet shows it `--w` CSS pixels wide times the
/// page's `--zoom`, so a change of zoom resizes every canvas at once, before any repaint.
///
/// When the canvas already shows the same frame (its labels, caption and layout, at the same
/// ratio), only the body is drawn again: an edit that changes numbers leaves the labels alone.
///
/// Painting is in two steps: `size` gives the canvas its size, in pixels and in the page, and
/// `paint` draws on it. The first font set on a canvas in the page makes the browser lay the page
/// out; sizing every canvas of a batch before drawing on any makes that one layout the frame's.
#[cfg(target_arch = "wasm32")]
pub fn size(canvas: &HtmlCanvasElement, map: &Heatmap, zoom: f64) -> Sized {
    let ratio = window().device_pixel_ratio().clamp(1.0, 4.0) * zoom;
    let layout = map.layout();
    set_pixel_size(canvas, &layout, ratio);
    let style = web_sys::HtmlElement::style(canvas);
    // Only real changes touch the style, so painting never invalidates the page's layout.
    for (property, value) in [
        ("--w", layout.width.to_string()),
        (
            "aspect-ratio",
            format!("{} / {}", layout.width, layout.height),
        ),
    ] {
        if style.get_property_value(property).ok().as_deref() != Some(value.as_str()) {
            let _ = style.set_property(property, &value);
        }
    }
    set_attribute_if_changed(canvas, "data-width", &layout.width.to_string());
    Sized { layout, ratio }
}

/// A canvas's layout and pixel ratio, its size already set by `size`. Natively nothing draws.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(target_arch = "wasm32"), expect(dead_code))]
pub struct Sized {
    layout: Layout,
    ratio: f64,
}

/// Draws `map` on `canvas`, which `size` has sized for it: see `size`.
#[cfg(target_arch = "wasm32")]
pub fn paint(canvas: &HtmlCanvasElement, map: &Heatmap, sized: Sized) {
    let Sized { layout, ratio } = sized;
    let frame = format!("{:x}", map.frame(&layout, ratio));
    let part = if canvas.get_attribute("data-frame").as_deref() == Some(frame.as_str()) {
        Part::Body
    } else {
        Part::Whole
    };
    if draw_on(canvas, map, &layout, ratio, part).is_none() {
        // Whatever the canvas shows now, its frame is not known to be whole.
        let _ = canvas.remove_attribute("data-frame");
        return;
    }
    set_attribute_if_changed(canvas, "data-frame", &frame);
    set_attribute_if_changed(canvas, "data-drawn", "true");
}

/// Sets `name` to `value` unless it already has that value: writing an attribute, even with
/// its old value, can make the browser recompute the page's styles.
pub fn set_attribute_if_changed(element: &web_sys::Element, name: &str, value: &str) {
    if element.get_attribute(name).as_deref() != Some(value) {
        let _ = element.set_attribute(name, value);
    }
}

/// Natively there is no canvas to size.
#[cfg(not(target_arch = "wasm32"))]
pub fn size(_canvas: &HtmlCanvasElement, map: &Heatmap, zoom: f64) -> Sized {
    Sized {
        layout: map.layout(),
        ratio: zoom,
    }
}

/// Natively there is no canvas to paint.
#[cfg(not(target_arch = "wasm32"))]
pub fn paint(_canvas: &HtmlCanvasElement, _map: &Heatmap, _sized: Sized) {}

/// Draws `part` of a heatmap on `canvas`, whose pixel size becomes `layout`'s (the map's own)
/// times `ratio`, with every length multiplied by `ratio`; `None` when the canvas could not be
/// drawn on.
#[cfg(target_arch = "wasm32")]
pub fn draw_on(
    canvas: &HtmlCanvasElement,
    map: &Heatmap,
    layout: &Layout,
    ratio: f64,
    part: Part,
) -> Option<()> {
    use plotters::prelude::IntoDrawingArea;
    set_pixel_size(canvas, layout, ratio);
    // The backend takes its size from the canvas's width and height, set just above.
    let context = context_2d(canvas)?;
    let area =
        plotters_canvas::CanvasBackend::with_canvas_object(canvas.clone())?.into_drawing_area();
    crate::plot::draw_heatmap_with(
        &area,
        map,
        ratio,
        &mut |grid| fill_cells(&context, grid),
        part,
    )
    .ok()
}

/// Gives `canvas` the pixel size of `layout` at `ratio`.
#[cfg(target_arch = "wasm32")]
fn set_pixel_size(canvas: &HtmlCanvasElement, layout: &Layout, ratio: f64) {
    set_size(
        canvas,
        (f64::from(layout.width) * ratio).round() as u32,
        (f64::from(layout.height) * ratio).round() as u32,
    );
}

/// Natively there is no canvas to draw on.
#[cfg(not(target_arch = "wasm32"))]
pub fn draw_on(
    _canvas: &HtmlCanvasElement,
    _map: &Heatmap,
    _layout: &Layout,
    _ratio: f64,
    _part: Part,
) -> Option<()> {
    None
}

/// The 2D context of `canvas`, or `None` when it has none. It is the same object that
/// plotters-canvas draws through.
#[cfg(target_arch = "wasm32")]
fn context_2d(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas.get_context("2d").ok()??.dyn_into().ok()
}

/// The canvas kept in `slot`, made on first use; it is never added to the page.
#[cfg(target_arch = "wasm32")]
fn reuse_canvas(slot: &RefCell<Option<HtmlCanvasElement>>) -> Option<HtmlCanvasElement> {
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
fn set_size(canvas: &HtmlCanvasElement, width: u32, height: u32) {
    if canvas.width() != width {
        canvas.set_width(width);
    }
    if canvas.height() != height {
        canvas.set_height(height);
    }
}

/// Grids with fewer cells are painted a rectangle per cell: putting an image costs more.
#[cfg(target_arch = "wasm32")]
const FEW_CELLS: u32 = 128;

/// Paints the cell colours of `grid` as one image, one pixel per cell, scaled up without
/// smoothing: a handful of canvas calls instead of one rectangle per cell. The plot code draws
/// everything on top of the colours (values, hatching, grid lines, highlights) through
/// plotters-canvas as usual, and falls back to rectangles when this returns `false`.
#[cfg(target_arch = "wasm32")]
fn fill_cells(context: &CanvasRenderingContext2d, grid: &CellGrid) -> bool {
    thread_local! {
        static PIXELS: RefCell<Option<HtmlCanvasElement>> = const { RefCell::new(None) };
    }
    let (cols, rows) = (grid.cols as u32, grid.rows as u32);
    if cols * rows < FEW_CELLS {
        return false;
    }
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
    // Grown, never shrunk: the heatmaps of a stage differ in size, and resizing the scratch
    // canvas for each of them costs more than the drawing. Only its top-left corner is used.
    set_size(&pixels, pixels.width().max(cols), pixels.height().max(rows));
    let Some(pixel_context) = context_2d(&pixels) else {
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
