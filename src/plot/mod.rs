//! Heatmaps drawn with plotters, generic over the drawing backend: plotters-canvas's
//! `CanvasBackend` in the browser and plotters-svg's `SVGBackend` natively and for exports.
//!
//! Depends on [`crate::attention`] only for the matrix type and number formatting.

mod format;
mod heatmap;
mod label;
mod loss_curve;
mod palette;
mod place;

pub use format::{format_value, parse_cell, shortest_within, CellError, CELL_LIMIT};
pub use heatmap::{
    band_color, draw_heatmap, draw_heatmap_with, heatmap_svg, CellGrid, Heatmap, Highlight, Layout,
    Part, Reserve, CELL_FONT_PX,
};
pub use label::{label_text, printable_char};
pub use loss_curve::{draw_loss_curve, log_ticks, loss_curve_svg, loss_range, LOSS_CURVE_SIZE};
pub use palette::{Palette, Rgb, Theme};
pub use place::{extent, place, Line as PictureLine, Picture, Piece, Placement, Role, Room, Rule};
