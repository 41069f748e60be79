//! Arrow keys on a heatmap: which way a key moves the selected cell, and where it lands; and
//! whether a key press goes to a field the learner types into.

/// The element a key press was aimed at, if any.
pub fn key_target(ev: &web_sys::KeyboardEvent) -> Option<web_sys::Element> {
    use wasm_bindgen::JsCast;
    ev.target().and_then(|t| t.dyn_into().ok())
}

/// Whether `el` is a field the learner types into, which keeps every key it is sent.
pub fn is_text_field(el: &web_sys::Element) -> bool {
    matches!(el.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA")
        || el.has_attribute("contenteditable")
}

/// Whether Space presses `el`: a button, a disclosure's summary, or an element with a button's
/// role.
pub fn is_pressed_by_space(el: &web_sys::Element) -> bool {
    matches!(el.tag_name().as_str(), "BUTTON" | "SUMMARY")
        || el.get_attribute("role").is_some_and(|r| {
            matches!(
                r.as_str(),
                "button" | "tab" | "switch" | "checkbox" | "radio" | "menuitem" | "option"
            )
        })
}

/// An arrow key's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// One row up.
    Up,
    /// One row down.
    Down,
    /// One column left.
    Left,
    /// One column right.
    Right,
}

impl Direction {
    /// The direction of a `KeyboardEvent.key` such as `ArrowUp`.
    pub fn from_key(key: &str) -> Option<Direction> {
        match key {
            "ArrowUp" => Some(Self::Up),
            "ArrowDown" => Some(Self::Down),
            "ArrowLeft" => Some(Self::Left),
            "ArrowRight" => Some(Self::Right),
            _ => None,
        }
    }
}

/// The cell one step from `(row, col)` in a `(rows, cols)` matrix, staying inside it; a
/// selection left outside (after the matrix shrank) is first brought back in.
pub fn move_selection(
    shape: (usize, usize),
    selection: (usize, usize),
    direction: Direction,
) -> (usize, usize) {
    let last_row = shape.0.saturating_sub(1);
    let last_col = shape.1.saturating_sub(1);
    let (row, col) = (selection.0.min(last_row), selection.1.min(last_col));
    match direction {
        Direction::Up => (row.saturating_sub(1), col),
        Direction::Down => ((row + 1).min(last_row), col),
        Direction::Left => (row, col.saturating_sub(1)),
        Direction::Right => (row, (col + 1).min(last_col)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrow_keys_move_one_cell_and_stop_at_the_edges() {
        let shape = (3, 4);
        assert_eq!(move_selection(shape, (0, 0), Direction::Up), (0, 0));
        assert_eq!(move_selection(shape, (0, 0), Direction::Left), (0, 0));
        assert_eq!(move_selection(shape, (0, 0), Direction::Down), (1, 0));
        assert_eq!(move_selection(shape, (0, 0), Direction::Right), (0, 1));
        assert_eq!(move_selection(shape, (2, 3), Direction::Down), (2, 3));
        assert_eq!(move_selection(shape, (2, 3), Direction::Right), (2, 3));
        assert_eq!(move_selection(shape, (9, 9), Direction::Up), (1, 3));
        assert_eq!(move_selection((0, 0), (5, 5), Direction::Down), (0, 0));
        assert_eq!(Direction::from_key("ArrowLeft"), Some(Direction::Left));
        assert_eq!(Direction::from_key("Enter"), None);
    }
}
