//! Saving one heatmap as an SVG document or as a PNG at twice its size.

use super::draw::draw_on;
use crate::components::download::{download_text, download_url};
use crate::plot::{heatmap_svg, Heatmap, Part};
use leptos::prelude::document;
use wasm_bindgen::JsCast;

/// The two image formats a heatmap is saved in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// A PNG at twice the heatmap's CSS size, opaque, on the theme's background.
    Png,
    /// An SVG document drawn by plotters-svg.
    Svg,
}

/// Offers `map` as `<stem>.png` or `<stem>.svg`.
pub fn save(map: &Heatmap, format: ImageFormat, stem: &str) {
    match format {
        ImageFormat::Svg => {
            if let Ok(text) = heatmap_svg(map) {
                let _ = download_text(&format!("{stem}.svg"), "image/svg+xml", &text);
            }
        }
        ImageFormat::Png => {
            if let Some(url) = png_at_2x(map) {
                let _ = download_url(&format!("{stem}.png"), &url);
            }
        }
    }
}

/// The heatmap as a PNG `data:` URL at twice its size, drawn by the same code as the page on a
/// canvas of twice the layout's pixels. The plot fills the whole canvas with the theme's
/// background first, so the image is opaque.
fn png_at_2x(map: &Heatmap) -> Option<String> {
    let canvas = document()
        .create_element("canvas")
        .ok()?
        .dyn_into::<web_sys::HtmlCanvasElement>()
        .ok()?;
    draw_on(&canvas, map, &map.layout(), 2.0, Part::Whole)?;
    canvas.to_data_url_with_type("image/png").ok()
}
