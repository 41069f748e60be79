//! Share links: the whole state (model, stage, head, highlighted cell) in the URL fragment,
//! compact and versioned.
//!
//! The fragment is `key=value` pairs joined by `&`, always starting with `v=1`. Every other pair
//! is left out when it holds its default, so the default state is just `v=1`:
//!
//! | key      | value                                                        | default          |
//! |----------|--------------------------------------------------------------|------------------|
//! | `v`      | link format version                                          | `1`              |
//! | `s`      | the sentence, percent-encoded UTF-8                          | `I am hungry`    |
//! | `d`      | d_model, 2 to 16                                             | `4`              |
//! | `h`      | n_heads, 1 to 8, dividing d_model                            | `2`              |
//! | `causal` | causal mask, `0` or `1`                                      | `0`              |
//! | `pe`     | positional encoding, `0` or `1`                              | `0`              |
//! | `scale`  | `sqrt_head_dim`, `sqrt_seq_len` or `none`                    | `sqrt_head_dim`  |
//! | `t`      | softmax temperature, 0.01 to 100                             | `1`              |
//! | `rope`   | rotary positions: θ, and `,i` for the interleaved pairing   | none (off)       |
//! | `kv`     | key/value heads, dividing n_heads                            | n_heads          |
//! | `win`    | the sliding window, 1 or more (acts with the causal mask)   | none (off)       |
//! | `pf`     | decoding from a KV cache shown, after a prefill of 1 or more tokens | none (not shown) |
//! | `tile`   | the tiled softmax shown, with blocks of 1 or more keys      | none (not shown) |
//! | `seed`   | seed of the Random buttons                                   | `42`             |
//! | `wq` `wk` `wv` `wo` | d_model² numbers (W_k, W_v: d_model·n_kv_heads·d_k), row-major, comma-separated | `Init::Default`  |
//! | `e`      | edited embeddings: `token:n,n,…` entries joined by `;`       | none             |
//! | `src`    | the source sentence (cross-attention on), percent-encoded    | none (off)       |
//! | `se`     | edited source embeddings, like `e`                           | none             |
//! | `blk`    | the transformer block shown, `0` or `1`                      | `0`              |
//! | `norm`   | `post` or `pre`                                              | `post`           |
//! | `nt`     | the block's norms, `layernorm` or `rmsnorm`                  | `layernorm`      |
//! | `act`    | `relu`, `gelu` or `swiglu`                                   | `relu`           |
//! | `dff`    | d_ff, 2 to 64                                                | 4·d_model        |
//! | `wg` `w1` `b1` `w2` `b2` `g1` `be1` `g2` `be2` | the block's W_gate (SwiGLU), W₁, b₁, W₂, b₂, γ₁, β₁, γ₂, β₂, row-major | their defaults |
//! | `goal`   | training's goal: a task, or targets joined by `,` (one, or one per head) | `previous` |
//! | `paint`  | painted targets, seq_len × n_keys numbers each, joined by `;` | none             |
//! | `train`  | the matrices that learn, joined by `,`                        | the loss's defaults |
//! | `opt`    | `adam` or `sgd`                                              | `adam`           |
//! | `lr`     | the learning rate, above 0                                   | `0.05`           |
//! | `quiz`   | quiz mode, `0` or `1`                                        | `0`              |
//! | `qn`     | the quiz's question set, 1 or more (with `quiz=1`)           | `1`              |
//! | `stage`  | a [`Stage::key`]                                             | `input`          |
//! | `head`   | the head shown, from 0                                       | `0`              |
//! | `row`    | the query row decoded or tiled, from 0                       | the view's own   |
//! | `cell`   | highlighted cell, `panel.row.col`, from 0                    | none             |
//!
//! Numbers use the shortest text that reads back as exactly the same `f64`, in plain or
//! exponent form, with a leading `0.` shortened to `.` (`-.25`, `1e-7`). Text (the sentence,
//! tokens and panel names) is percent-encoded: every byte but ASCII letters, digits and `-._~`
//! becomes `%XX`, so any Unicode survives and the fragment never holds a space, `#`, `&` or `=`
//! of its own. A `+` is a plus sign, never a space.
//!
//! [`decode`] never fails: each part that cannot be used falls back to its default and adds a
//! notice written for a learner, and the model it returns always traces.

mod fields;
mod history;
mod model;
mod numbers;
mod panels;
mod percent;
mod read;
mod training;
mod write;

pub use history::{history_step, HistoryStep};
pub use panels::{panel_shape, panels};
pub use read::{cell_off_stage, decode};
pub use write::encode;

use crate::attention::{BlockParam, Stage, WeightName};
use crate::state::Model;

/// The link format version this build writes and reads.
pub const LINK_VERSION: u32 = 1;

/// The longest fragment [`decode`] reads, in bytes; longer ones are refused whole.
pub const MAX_FRAGMENT_LEN: usize = 64 * 1024;

/// The most edited embeddings a link may carry.
pub const MAX_OVERRIDES: usize = 256;

/// The most notices [`decode`] returns; further problems are summed up in one last notice.
pub const MAX_NOTICES: usize = 12;

/// Everything a share link restores.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareState {
    /// The learner's model: sentence, settings, matrices and edited embeddings.
    pub model: Model,
    /// The stage on screen.
    pub stage: Stage,
    /// The head shown at per-head stages, from 0.
    pub head: usize,
    /// The query row decoding and the tiles show, from 0; `None` for each view's own (the
    /// first token decoded, the last row tiled).
    pub row: Option<usize>,
    /// The highlighted cell: panel name (as in `panel-<name>` test ids, e.g. `scores-h0`),
    /// row and column, from 0.
    pub cell: Option<(String, usize, usize)>,
    /// Quiz mode and its question set (see [`crate::quiz::quiz_seed`]); `None` when off.
    pub quiz: Option<u64>,
}

impl Default for ShareState {
    fn default() -> Self {
        Self {
            model: Model::default(),
            stage: Stage::Input,
            head: 0,
            row: None,
            cell: None,
            quiz: None,
        }
    }
}

/// What [`decode`] read, and what it had to leave out.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The state: every valid part of the link, defaults for the rest.
    pub state: ShareState,
    /// One sentence per problem, for a learner; empty when the link was read in full.
    pub notices: Vec<String>,
}

/// The keys this version reads, in the order [`encode`] writes them.
const KEYS: [&str; 46] = [
    "v", "s", "d", "h", "causal", "pe", "scale", "t", "rope", "kv", "win", "pf", "tile", "seed",
    "wq", "wk", "wv", "wo", "e", "src", "se", "blk", "norm", "nt", "act", "dff", "wg", "w1", "b1",
    "w2", "b2", "g1", "be1", "g2", "be2", "goal", "paint", "train", "opt", "lr", "quiz", "qn",
    "stage", "head", "row", "cell",
];

/// The first question set of a quiz.
pub const FIRST_QUESTION_SET: u64 = 1;

/// The key of the edited source embeddings.
const SOURCE_OVERRIDES_KEY: &str = "se";

fn block_key(p: BlockParam) -> &'static str {
    match p {
        BlockParam::W1 => "w1",
        BlockParam::WGate => "wg",
        BlockParam::B1 => "b1",
        BlockParam::W2 => "w2",
        BlockParam::B2 => "b2",
        BlockParam::Ln1Gamma => "g1",
        BlockParam::Ln1Beta => "be1",
        BlockParam::Ln2Gamma => "g2",
        BlockParam::Ln2Beta => "be2",
    }
}

fn weight_key(name: WeightName) -> &'static str {
    match name {
        WeightName::Q => "wq",
        WeightName::K => "wk",
        WeightName::V => "wv",
        WeightName::O => "wo",
    }
}
