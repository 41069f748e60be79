//! The labels of the settings' menus.

use crate::attention::ScaleMode;

/// A short label for the scale menu.
pub fn scale_mode_label(mode: ScaleMode) -> &'static str {
    match mode {
        ScaleMode::SqrtHeadDim => "÷ √d_k (correct)",
        ScaleMode::SqrtSeqLen => "÷ √seq_len (common mistake)",
        ScaleMode::None => "no scaling",
    }
}
