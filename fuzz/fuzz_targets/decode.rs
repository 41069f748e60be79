//! Any bytes, read as a share-link fragment: no panic, a model that traces, and a state whose
//! own link reads back in full.

#![no_main]

use attention_lens::formats::permalink::{decode, encode, panel_shape};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let decoded = decode(&text);
    let state = &decoded.state;
    let model = &state.model;
    assert!(model.trace().is_ok());
    assert!(state.head < model.config.n_heads);
    if let Some((panel, row, col)) = &state.cell {
        let (rows, cols) = panel_shape(model, panel).expect("the cell's panel exists");
        assert!(*row < rows && *col < cols);
    }
    let again = decode(&encode(state));
    assert!(again.notices.is_empty(), "{:?}", again.notices);
    assert_eq!(&again.state, state);
});
