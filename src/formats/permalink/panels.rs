//! The heatmap panels a share link's highlighted cell may name.

use crate::attention::MatrixId;
use crate::panels::panel_names;
use crate::state::Model;

/// Every heatmap panel the stage view can show for `model`, by name, with its (rows, columns).
///
/// The names are the ones the stage view gives its panels (`panel-<name>` test ids); a cell in a
/// link must name one of them.
pub fn panels(model: &Model) -> Vec<(String, (usize, usize))> {
    // The explanation module names every matrix the views draw; one list serves both.
    let Ok(trace) = model.trace() else {
        return Vec::new();
    };
    MatrixId::all(&trace)
        .into_iter()
        .filter_map(|m| m.shape(&trace).map(|shape| (m, shape)))
        .flat_map(|(m, shape)| panel_names(m).into_iter().map(move |n| (n, shape)))
        .collect()
}

/// The (rows, columns) of the panel called `name`, if `model` shows one.
pub fn panel_shape(model: &Model, name: &str) -> Option<(usize, usize)> {
    // A gradient's panel, on a backward stage: shaped like the matrix it is the gradient of.
    if let Some(MatrixId::Back(m)) = crate::panels::parse(name) {
        return m.shape(&model.trace().ok()?);
    }
    panels(model)
        .into_iter()
        .find(|(panel, _)| panel == name)
        .map(|(_, shape)| shape)
}
