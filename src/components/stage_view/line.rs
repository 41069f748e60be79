//! The parts a stage's picture is made of: lines (equations) of panels joined by operators,
//! as the forward and the backward stages lay them out and the body draws them.

use crate::components::heatmap::PanelData;

/// One thing on a line.
pub(super) enum Item {
    /// A heatmap the line computes.
    Panel(PanelData),
    /// A heatmap the line starts from: an operand, computed by an earlier stage. Presenter mode
    /// may draw it smaller than the line's result when both cannot be large.
    Given(PanelData),
    /// An operator between panels: `·`, `=`, `÷ √2`.
    Op(String),
    /// The attention lines of a head.
    Lines(usize),
    /// A sentence in place of pictures: what a backward stage says when the loss does not
    /// reach it.
    Text(String),
}

/// One equation, with a heading above it.
pub(super) struct Line {
    pub heading: Option<String>,
    pub items: Vec<Item>,
}

/// An operator between panels.
pub(super) fn op(s: &str) -> Item {
    Item::Op(s.to_string())
}
