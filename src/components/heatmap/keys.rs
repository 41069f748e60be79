//! Picking a heatmap cell with the pointer or the keyboard.

use crate::components::keyboard::{move_selection, Direction};
use crate::plot::Layout;

/// The cell that `key` moves the selection to from `from` in a `(rows, cols)` matrix: an arrow
/// moves one step, Home and End go to the ends of the row. `None` for any other key and for an
/// empty matrix.
pub fn cell_for_key(
    key: &str,
    shape: (usize, usize),
    from: (usize, usize),
) -> Option<(usize, usize)> {
    let (rows, cols) = shape;
    if rows == 0 || cols == 0 {
        return None;
    }
    // A selection left outside a matrix that shrank is brought back in first.
    let row = from.0.min(rows - 1);
    match key {
        "Home" => Some((row, 0)),
        "End" => Some((row, cols - 1)),
        key => Direction::from_key(key).map(|d| move_selection(shape, from, d)),
    }
}

/// The cell under a click at `offset` (CSS pixels from the canvas's corner) on a canvas shown
/// `shown_width` CSS pixels wide, whose drawing is `layout.width` wide (the two differ when the
/// page zooms the heatmap or squeezes it into a narrow column).
pub fn cell_at_click(
    layout: &Layout,
    shown_width: f64,
    offset: (f64, f64),
    shape: (usize, usize),
) -> Option<(usize, usize)> {
    let scale = f64::from(layout.width) / shown_width.max(1.0);
    layout.cell_at(offset.0 * scale, offset.1 * scale, shape.0, shape.1)
}

/// How far to scroll the page down so that a cell whose box spans `cell_top..cell_bottom` (CSS
/// pixels from the top of the window) shows above a sheet whose top edge is at `sheet_top`,
/// with a small margin; 0 when the cell already shows. The cell's top never goes above the
/// window's, so a cell taller than the room left is shown from its top.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn scroll_to_clear(cell_top: f64, cell_bottom: f64, sheet_top: f64) -> f64 {
    const MARGIN: f64 = 12.0;
    let covered = cell_bottom + MARGIN - sheet_top;
    if covered <= 0.0 {
        0.0
    } else {
        covered.min((cell_top - MARGIN).max(0.0))
    }
}

/// Scrolls the page so that `cell` of `canvas` (drawn to `layout`) is not hidden under the
/// explanation when that is a sheet fixed over the bottom of the window.
#[cfg(target_arch = "wasm32")]
pub fn keep_clear_of_sheet(
    canvas: &web_sys::HtmlCanvasElement,
    layout: &Layout,
    cell: (usize, usize),
) {
    use leptos::prelude::{document, window};
    let Some(sheet) = document().get_element_by_id("explain-panel") else {
        return;
    };
    let fixed = window()
        .get_computed_style(&sheet)
        .ok()
        .flatten()
        .and_then(|style| style.get_property_value("position").ok())
        .is_some_and(|p| p == "fixed");
    if !fixed {
        return;
    }
    let rect = canvas.get_bounding_client_rect();
    let scale = rect.width() / f64::from(layout.width.max(1));
    let top = rect.top() + f64::from(layout.grid_y + cell.0 as u32 * layout.cell_h) * scale;
    let bottom = top + f64::from(layout.cell_h) * scale;
    let by = scroll_to_clear(top, bottom, sheet.get_bounding_client_rect().top());
    if by > 0.0 {
        window().scroll_by_with_x_and_y(0.0, by);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_move_one_cell_and_stop_at_the_edges() {
        assert_eq!(cell_for_key("ArrowRight", (3, 4), (1, 1)), Some((1, 2)));
        assert_eq!(cell_for_key("ArrowDown", (3, 4), (2, 1)), Some((2, 1)));
        assert_eq!(cell_for_key("ArrowLeft", (3, 4), (0, 0)), Some((0, 0)));
    }

    #[test]
    fn home_and_end_go_to_the_ends_of_the_row() {
        assert_eq!(cell_for_key("Home", (3, 4), (2, 3)), Some((2, 0)));
        assert_eq!(cell_for_key("End", (3, 4), (1, 0)), Some((1, 3)));
        // After the matrix shrank, the row is brought back in.
        assert_eq!(cell_for_key("End", (2, 2), (5, 0)), Some((1, 1)));
    }

    #[test]
    fn other_keys_and_empty_matrices_pick_nothing() {
        assert_eq!(cell_for_key("a", (3, 4), (0, 0)), None);
        assert_eq!(cell_for_key("ArrowUp", (0, 0), (0, 0)), None);
        assert_eq!(cell_for_key("Home", (3, 0), (0, 0)), None);
    }

    #[test]
    fn a_click_on_a_zoomed_canvas_finds_the_cell_drawn_there() {
        let layout = Layout {
            width: 200,
            height: 100,
            grid_x: 40,
            grid_y: 20,
            cell_w: 30,
            cell_h: 20,
            show_values: true,
            label_chars: 4,
            col_label_h: 18,
            col_labels_upright: false,
        };
        // Drawn 200 wide, shown 400 wide: every CSS pixel is half a drawing pixel.
        assert_eq!(
            cell_at_click(&layout, 400.0, (2.0 * 75.0, 2.0 * 45.0), (3, 4)),
            Some((1, 1))
        );
        assert_eq!(cell_at_click(&layout, 200.0, (10.0, 10.0), (3, 4)), None);
        assert_eq!(cell_at_click(&layout, 0.0, (0.0, 0.0), (3, 4)), None);
    }

    #[test]
    fn a_cell_under_the_sheet_is_scrolled_just_above_it() {
        // Already clear of a sheet starting at 500.
        assert_eq!(scroll_to_clear(100.0, 130.0, 500.0), 0.0);
        // Its bottom 30 px under the sheet's top: scroll by that and the margin.
        assert_eq!(scroll_to_clear(500.0, 530.0, 500.0), 42.0);
        // Never so far that the cell's top leaves the window.
        assert_eq!(scroll_to_clear(40.0, 900.0, 500.0), 28.0);
    }
}
