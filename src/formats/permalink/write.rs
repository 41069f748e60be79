//! Writing a share link: every part that differs from its default, in the order of
//! [`KEYS`](super::KEYS).

use super::numbers::{number, push_number};
use super::percent::percent_encode;
use super::{
    block_key, weight_key, ShareState, FIRST_QUESTION_SET, LINK_VERSION, SOURCE_OVERRIDES_KEY,
};
use crate::attention::{Block, BlockParam, Init, Matrix, Pairing, Stage, WeightName, Weights};
use crate::state::{Model, Overrides};

thread_local! {
    /// The defaults links are written against, made once: the address follows every edit.
    static DEFAULTS: Model = Model::default();
}

/// The fragment (without `#`) that restores `state`; parts equal to their defaults are left out.
pub fn encode(state: &ShareState) -> String {
    DEFAULTS.with(|defaults| encode_against(state, defaults))
}

/// [`encode`], leaving out what equals `defaults`.
fn encode_against(state: &ShareState, defaults: &Model) -> String {
    let model = &state.model;
    let config = model.config;
    let mut out = format!("v={LINK_VERSION}");
    let mut pair = |key: &str, value: &str| {
        out.push('&');
        out.push_str(key);
        out.push('=');
        out.push_str(value);
    };
    if model.sentence != defaults.sentence {
        pair("s", &percent_encode(&model.sentence));
    }
    if config.d_model != defaults.config.d_model {
        pair("d", &config.d_model.to_string());
    }
    if config.n_heads != defaults.config.n_heads {
        pair("h", &config.n_heads.to_string());
    }
    if config.causal != defaults.config.causal {
        pair("causal", flag(config.causal));
    }
    if config.positional_encoding != defaults.config.positional_encoding {
        pair("pe", flag(config.positional_encoding));
    }
    if config.scale != defaults.config.scale {
        pair("scale", config.scale.key());
    }
    if config.temperature.to_bits() != defaults.config.temperature.to_bits() {
        pair("t", &number(config.temperature));
    }
    if let Some(rope) = config.rope {
        let pairing = match rope.pairing {
            Pairing::Half => "",
            Pairing::Interleaved => ",i",
        };
        pair("rope", &format!("{}{pairing}", number(rope.theta)));
    }
    if let Some(g) = config.kv_heads {
        pair("kv", &g.to_string());
    }
    if let Some(w) = config.window {
        pair("win", &w.to_string());
    }
    if let Some(p) = model.prefill {
        pair("pf", &p.to_string());
    }
    if let Some(b) = model.tile {
        pair("tile", &b.to_string());
    }
    if model.seed != defaults.seed {
        pair("seed", &model.seed.to_string());
    }
    for name in WeightName::ALL {
        let w = model.weights.get(name);
        let (rows, cols) = Weights::shape_of(name, config.d_model, config.kv_width());
        if !same_numbers(w, &Init::Default.shaped(name, rows, cols)) {
            pair(weight_key(name), &row_major(w));
        }
    }
    if !model.embedding_overrides.is_empty() {
        pair("e", &overrides(&model.embedding_overrides));
    }
    // The source and the block are written while they are on; switched off, they are left out.
    if model.cross {
        pair("src", &percent_encode(&model.source));
        if !model.source_overrides.is_empty() {
            pair(SOURCE_OVERRIDES_KEY, &overrides(&model.source_overrides));
        }
    }
    if model.block_on {
        let block = &model.block;
        pair("blk", "1");
        if block.norm != defaults.block.norm {
            pair("norm", block.norm.key());
        }
        if block.norm_type != defaults.block.norm_type {
            pair("nt", block.norm_type.key());
        }
        if block.activation != defaults.block.activation {
            pair("act", block.activation.key());
        }
        let d_ff = block.d_ff();
        if d_ff != Block::default_d_ff(config.d_model) {
            pair("dff", &d_ff.to_string());
        }
        for p in BlockParam::ALL {
            let m = block.get(p);
            if !same_numbers(m, &p.default_values(config.d_model, d_ff)) {
                pair(block_key(p), &row_major(m));
            }
        }
    }
    super::training::write_training(model, &mut pair);
    if let Some(set) = state.quiz {
        pair("quiz", "1");
        if set != FIRST_QUESTION_SET {
            pair("qn", &set.to_string());
        }
    }
    if state.stage != Stage::Input {
        pair("stage", state.stage.key());
    }
    if state.head != 0 {
        pair("head", &state.head.to_string());
    }
    if let Some(row) = state.row {
        pair("row", &row.to_string());
    }
    if let Some((panel, row, col)) = &state.cell {
        pair("cell", &format!("{}.{row}.{col}", percent_encode(panel)));
    }
    out
}

/// Every number of `m`, row by row, comma-separated.
fn row_major(m: &Matrix) -> String {
    let mut values = String::new();
    for i in 0..m.nrows() {
        for j in 0..m.ncols() {
            push_number(&mut values, m[(i, j)]);
        }
    }
    values
}

/// Edited embeddings as `token:n,n,…` entries joined by `;`.
fn overrides(rows: &Overrides) -> String {
    let mut entries = String::new();
    for (token, vector) in rows {
        if !entries.is_empty() {
            entries.push(';');
        }
        entries.push_str(&percent_encode(token));
        entries.push(':');
        let mut values = String::new();
        for &x in vector {
            push_number(&mut values, x);
        }
        entries.push_str(&values);
    }
    entries
}

fn flag(on: bool) -> &'static str {
    if on {
        "1"
    } else {
        "0"
    }
}

/// Equal shapes and bit-for-bit equal entries, so `-0` is not mistaken for `0`.
fn same_numbers(a: &crate::attention::Matrix, b: &crate::attention::Matrix) -> bool {
    a.shape() == b.shape()
        && a.iter()
            .zip(b.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits())
}
