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
        };
        // Drawn 200 wide, shown 400 wide: every CSS pixel is half a drawing pixel.
        assert_eq!(
            cell_at_click(&layout, 400.0, (2.0 * 75.0, 2.0 * 45.0), (3, 4)),
            Some((1, 1))
        );
        assert_eq!(cell_at_click(&layout, 200.0, (10.0, 10.0), (3, 4)), None);
        assert_eq!(cell_at_click(&layout, 0.0, (0.0, 0.0), (3, 4)), None);
    }
}
