//! Renderings of a [`Trace`] as JSON, a Markdown worked example and tidy CSV.
//!
//! Plain functions returning values or strings, with no I/O, so the CLI prints them and the web
//! app's export buttons can offer them as downloads.
//!
//! Every rendering lists the same matrices in the same order: the order of the trace's stages
//! ([`Trace::stages`]), and within a per-head stage head 1 first.
//!
//! | matrix              | head | stage             | rows         | columns     |
//! |---------------------|------|-------------------|--------------|-------------|
//! | `embeddings`        |      | Input             | tokens       | d1..d_model |
//! | `positional`        |      | Input (when on)   | tokens       | d1..d_model |
//! | `x`                 |      | Input             | tokens       | d1..d_model |
//! | `w_q`, `w_k`, `w_v` |      | Projection        | d1..d_model  | d1..d_model |
//! | `q`, `k`, `v`       |      | Projection        | tokens       | d1..d_model |
//! | `q`, `k`, `v`       | h    | Split into heads  | tokens       | head's d…   |
//! | `scores`            | h    | Scores            | query tokens | key tokens  |
//! | `scaled`            | h    | Scale             | query tokens | key tokens  |
//! | `masked`            | h    | Causal mask       | query tokens | key tokens  |
//! | `weights`           | h    | Softmax           | query tokens | key tokens  |
//! | `context`           | h    | Weighted sum      | tokens       | head's d…   |
//! | `concat`            |      | Concatenate heads | tokens       | d1..d_model |
//! | `w_o`               |      | Output projection | d1..d_model  | d1..d_model |
//! | `output`            |      | Output projection | tokens       | d1..d_model |
//!
//! With a source sentence (cross-attention), `source_embeddings`, `source_positional` (when on)
//! and `source_x` follow `x`, with source tokens as rows; `k`, `v` and each head's `k`, `v` have
//! one row per source token, and the query × key matrices one column per source token.
//!
//! With the block, its matrices follow in the order of its stages (pre-norm moves `ln_1_gamma`,
//! `ln_1_beta` and `norm_1` before the projections): `sum_1`; `ln_1_gamma`, `ln_1_beta`,
//! `norm_1`; `w_1`, `b_1`, `hidden`; `activated`; `w_2`, `b_2`, `ffn`; `sum_2`; `ln_2_gamma`,
//! `ln_2_beta`, `norm_2`. `hidden`, `activated`, the columns of `w_1` and `b_1` and the rows of
//! `w_2` are named `f1..f_dff`; biases, γ and β are one row.
//!
//! A head's own columns keep their names in the whole layer, as on the app's heatmaps: head h
//! of width d_k has d((h−1)·d_k + 1) … d(h·d_k).

use crate::attention::{
    head_tiles, BlockParam, BlockTrace, Decode, HeadTrace, Matrix, Stage, Tile, Trace,
};
use crate::words::{
    self, configuration, configuration_warning, dim, format_value, handout_stage_note,
    handout_title, head_heading, hidden_unit, key_token, matrix_caption, matrix_symbol,
    rounding_remark, stage_explanation_in, stage_formula, stage_title, CONFIGURATION, FORMULA,
    FULLY_MASKED, NOTE, ROW_SUM,
};
use serde::{Serialize, Serializer};
use std::fmt::Write as _;

/// Decimal places of the numbers in [`trace_markdown`]: enough to check a product by hand,
/// few enough for a table to fit on a page.
pub const MARKDOWN_DECIMALS: usize = 3;

/// The header line of [`trace_csv`].
pub const CSV_HEADER: &str = "matrix,head,row,row_token,col,col_label,value";

/// What the rows or the columns of a matrix stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// One per token (queries, when the columns are keys).
    Tokens,
    /// One per model dimension, `d1..d_model`.
    Dims,
    /// One per column of a head's slice, named as in the whole layer: head h (from 0) of width
    /// d_k has `d(h·d_k + 1)..d((h + 1)·d_k)`.
    HeadDims,
    /// One per key token: the source's tokens in cross-attention, else the sentence's.
    KeyTokens,
    /// One per unit of the feed-forward network's hidden layer, `f1..f_dff`.
    Hidden,
    /// The single row of a vector (a bias, γ or β).
    Single,
}

/// One matrix of a trace, with what its rows and columns mean.
#[derive(Debug, Clone, Copy)]
pub struct TraceMatrix<'a> {
    /// The stage that produces or uses it.
    pub stage: Stage,
    /// Its name in JSON and CSV: `q`, `scores`, `w_o`, …
    pub key: &'static str,
    /// The head it belongs to, from 0; `None` for whole-layer matrices.
    pub head: Option<usize>,
    /// The matrix itself.
    pub matrix: &'a Matrix,
    /// What the rows stand for.
    pub rows: Axis,
    /// What the columns stand for.
    pub cols: Axis,
}

/// Every matrix of `trace`, in stage order and head order.
pub fn trace_matrices(trace: &Trace) -> Vec<TraceMatrix<'_>> {
    let mut out = Vec::new();
    let whole = |stage, key, matrix, rows| TraceMatrix {
        stage,
        key,
        head: None,
        matrix,
        rows,
        cols: Axis::Dims,
    };
    for stage in trace.stages() {
        match stage {
            Stage::Input => {
                out.push(whole(stage, "embeddings", &trace.embeddings, Axis::Tokens));
                if let Some(p) = &trace.positional {
                    out.push(whole(stage, "positional", p, Axis::Tokens));
                }
                out.push(whole(stage, "x", &trace.x, Axis::Tokens));
                if let Some(src) = &trace.source {
                    let rows = Axis::KeyTokens;
                    out.push(whole(stage, "source_embeddings", &src.embeddings, rows));
                    if let Some(p) = &src.positional {
                        out.push(whole(stage, "source_positional", p, rows));
                    }
                    out.push(whole(stage, "source_x", &src.x, rows));
                }
            }
            Stage::Projection => {
                let w = &trace.weights;
                out.push(whole(stage, "w_q", &w.w_q, Axis::Dims));
                out.push(whole(stage, "w_k", &w.w_k, Axis::Dims));
                out.push(whole(stage, "w_v", &w.w_v, Axis::Dims));
                out.push(whole(stage, "q", &trace.q, Axis::Tokens));
                out.push(whole(stage, "k", &trace.k, Axis::KeyTokens));
                out.push(whole(stage, "v", &trace.v, Axis::KeyTokens));
            }
            Stage::Concat => out.push(whole(stage, "concat", &trace.concat, Axis::Tokens)),
            Stage::OutputProjection => {
                out.push(whole(stage, "w_o", &trace.weights.w_o, Axis::Dims));
                out.push(whole(stage, "output", &trace.output, Axis::Tokens));
            }
            s if s.is_block() => {
                if let Some(b) = &trace.block {
                    out.extend(block_matrices(stage, b));
                }
            }
            _ => {
                for (h, head) in trace.heads.iter().enumerate() {
                    let keys = Axis::KeyTokens;
                    let per_head: Vec<(&'static str, &Matrix, Axis, Axis)> = match stage {
                        Stage::SplitHeads => vec![
                            ("q", &head.q, Axis::Tokens, Axis::HeadDims),
                            ("k", &head.k, keys, Axis::HeadDims),
                            ("v", &head.v, keys, Axis::HeadDims),
                        ],
                        Stage::Rotary => match (&head.q_rope, &head.k_rope) {
                            (Some(q), Some(k)) => vec![
                                ("q_rope", q, Axis::Tokens, Axis::HeadDims),
                                ("k_rope", k, keys, Axis::HeadDims),
                            ],
                            _ => Vec::new(),
                        },
                        Stage::Scores => vec![("scores", &head.scores, Axis::Tokens, keys)],
                        Stage::Scale => vec![("scaled", &head.scaled, Axis::Tokens, keys)],
                        Stage::Mask => vec![("masked", &head.masked, Axis::Tokens, keys)],
                        Stage::Softmax => vec![("weights", &head.weights, Axis::Tokens, keys)],
                        Stage::WeightedSum => {
                            vec![("context", &head.context, Axis::Tokens, Axis::HeadDims)]
                        }
                        _ => Vec::new(),
                    };
                    for (key, matrix, rows, cols) in per_head {
                        out.push(TraceMatrix {
                            stage,
                            key,
                            head: Some(h),
                            matrix,
                            rows,
                            cols,
                        });
                    }
                }
            }
        }
    }
    out
}

/// The block's parameters and results at `stage`.
fn block_matrices(stage: Stage, b: &BlockTrace) -> Vec<TraceMatrix<'_>> {
    let m = |key, matrix, rows, cols| TraceMatrix {
        stage,
        key,
        head: None,
        matrix,
        rows,
        cols,
    };
    let param = |p: BlockParam, rows, cols| m(p.key(), b.params.get(p), rows, cols);
    use Axis::{Dims, Hidden, Single, Tokens};
    match stage {
        Stage::Residual1 => vec![m("sum_1", &b.sum_1, Tokens, Dims)],
        Stage::Norm1 => vec![
            param(BlockParam::Ln1Gamma, Single, Dims),
            param(BlockParam::Ln1Beta, Single, Dims),
            m("norm_1", &b.norm_1, Tokens, Dims),
        ],
        Stage::Hidden => vec![
            param(BlockParam::W1, Dims, Hidden),
            param(BlockParam::B1, Single, Hidden),
            m("hidden", &b.hidden, Tokens, Hidden),
        ],
        Stage::Activation => vec![m("activated", &b.activated, Tokens, Hidden)],
        Stage::FeedForward => vec![
            param(BlockParam::W2, Hidden, Dims),
            param(BlockParam::B2, Single, Dims),
            m("ffn", &b.ffn, Tokens, Dims),
        ],
        Stage::Residual2 => vec![m("sum_2", &b.sum_2, Tokens, Dims)],
        Stage::Norm2 => vec![
            param(BlockParam::Ln2Gamma, Single, Dims),
            param(BlockParam::Ln2Beta, Single, Dims),
            m("norm_2", &b.norm_2, Tokens, Dims),
        ],
        _ => Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// JSON

/// The whole trace as JSON: serialise it with serde_json, or use [`trace_json_pretty`].
///
/// Keys, in this order: `tokens`, `config` (`d_model`, `n_heads`, `head_dim`, `causal`,
/// `positional_encoding`, `scale` as its key such as `"sqrt_head_dim"`, `temperature`, `rope`
/// as `{"theta", "pairing"}` or null, `n_kv_heads`, `window` or null), `embeddings`,
/// `positional` (a matrix, or null when off), `x`, `w_q`, `w_k`, `w_v`, `q`, `k`, `v` (K and V
/// are `n_kv_heads·head_dim` wide), `scale_divisor`, `heads` (one object per head with
/// `kv_head`, `q`, `k`, `v` (the unturned split; `k` and `v` are its key/value head's columns),
/// `q_rope` and `k_rope` with rotary positions, `scores`, `scaled`, `masked`, `weights`,
/// `context` and `fully_masked_rows`, row indices from 0), `concat`,
/// `w_o`, `output`. Matrices are arrays of rows; a value that is not finite (the −∞ of
/// `masked`) is `null`, since JSON has no infinities.
///
/// With a source sentence, `source_tokens` and `source_x` follow `tokens`, `k` and `v` (and each
/// head's) have one row per source token and `scores` … `weights` one column per source token.
/// With the block, a `block` object ends the trace: `norm`, `norm_type` (`layernorm` or
/// `rmsnorm`), `activation`, `d_ff`, `attention_input` (X for post-norm, N₁ for pre-norm),
/// `sum_1`, `norm_1`, `hidden`, `gate` (N·W_gate, with SwiGLU only), `activated`, `ffn`,
/// `sum_2`, `norm_2`, `out` (the block's output), then its parameters `w_gate` (with SwiGLU
/// only), `w_1`, `b_1`, `w_2`, `b_2`, `ln_1_gamma`, `ln_1_beta`, `ln_2_gamma`, `ln_2_beta`
/// (vectors as plain arrays; the β's are zeros RMSNorm does not read). `x` stays E + P.
pub fn trace_json(trace: &Trace) -> TraceJson<'_> {
    let c = &trace.config;
    let w = &trace.weights;
    TraceJson {
        tokens: &trace.tokens,
        source_tokens: trace.source.as_ref().map(|s| s.tokens.as_slice()),
        source_x: trace.source.as_ref().map(|s| Rows(&s.x)),
        config: ConfigJson {
            d_model: c.d_model,
            n_heads: c.n_heads,
            head_dim: c.head_dim(),
            causal: c.causal,
            positional_encoding: c.positional_encoding,
            scale: c.scale.key(),
            temperature: finite(c.temperature),
            rope: c.rope.map(|r| RopeJson {
                theta: finite(r.theta),
                pairing: r.pairing.key(),
            }),
            n_kv_heads: c.n_kv_heads(),
            window: c.window,
        },
        embeddings: Rows(&trace.embeddings),
        positional: trace.positional.as_ref().map(Rows),
        x: Rows(&trace.x),
        w_q: Rows(&w.w_q),
        w_k: Rows(&w.w_k),
        w_v: Rows(&w.w_v),
        q: Rows(&trace.q),
        k: Rows(&trace.k),
        v: Rows(&trace.v),
        scale_divisor: finite(trace.scale_divisor),
        heads: trace.heads.iter().map(HeadJson::new).collect(),
        concat: Rows(&trace.concat),
        w_o: Rows(&w.w_o),
        output: Rows(&trace.output),
        block: trace.block.as_ref().map(BlockJson::new),
        decode: None,
    }
}

/// [`trace_json`] as indented text ending in a newline, keys in stage order. Each number has
/// the fewest digits that read back to the same `f64`.
pub fn trace_json_pretty(trace: &Trace) -> String {
    json_pretty(&trace_json(trace))
}

/// [`trace_json_pretty`] with the steps of decoding from a KV cache, as `decode`, and each
/// head's rows tiled over blocks of `tile` keys, as its `tiles`, where given.
pub fn trace_json_pretty_with(
    trace: &Trace,
    decode: Option<&Decode>,
    tile: Option<usize>,
) -> String {
    let mut json = trace_json(trace);
    if let Some(d) = decode {
        json = json.with_decode(d);
    }
    if let Some(b) = tile {
        json = json.with_tiles(trace, b);
    }
    json_pretty(&json)
}

fn json_pretty(json: &TraceJson<'_>) -> String {
    // serde_json fails only on a map with keys that are not strings, or a failing `Serialize`
    // impl; the trace has neither, so the fallback is never taken.
    let mut text = serde_json::to_string_pretty(json).unwrap_or_default();
    text.push('\n');
    text
}

/// The JSON export of a [`Trace`]: see [`trace_json`]. The fields are in stage order, the order
/// serde writes them in.
#[derive(Serialize)]
pub struct TraceJson<'a> {
    tokens: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    source_tokens: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_x: Option<Rows<'a>>,
    config: ConfigJson,
    embeddings: Rows<'a>,
    positional: Option<Rows<'a>>,
    x: Rows<'a>,
    w_q: Rows<'a>,
    w_k: Rows<'a>,
    w_v: Rows<'a>,
    q: Rows<'a>,
    k: Rows<'a>,
    v: Rows<'a>,
    scale_divisor: Option<f64>,
    heads: Vec<HeadJson<'a>>,
    concat: Rows<'a>,
    w_o: Rows<'a>,
    output: Rows<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    block: Option<BlockJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decode: Option<DecodeJson<'a>>,
}

impl<'a> TraceJson<'a> {
    /// The export with every head's query rows tiled over blocks of `block` keys.
    pub fn with_tiles(mut self, trace: &Trace, block: usize) -> Self {
        let t = trace.config.temperature;
        for (json, head) in self.heads.iter_mut().zip(&trace.heads) {
            json.tiles = Some(
                head_tiles(head, t, block)
                    .iter()
                    .map(|row| row.iter().map(TileJson::from).collect())
                    .collect(),
            );
        }
        self
    }

    /// The export with the steps of decoding the sentence from a KV cache.
    pub fn with_decode(self, decode: &'a Decode) -> Self {
        Self {
            decode: Some(DecodeJson::new(decode)),
            ..self
        }
    }
}

/// The `decode` object of [`TraceJson`].
#[derive(Serialize)]
struct DecodeJson<'a> {
    prefill: usize,
    steps: Vec<DecodeStepJson<'a>>,
    matches_full_pass: bool,
}

/// One element of `decode.steps`.
#[derive(Serialize)]
struct DecodeStepJson<'a> {
    position: usize,
    k_cache: Vec<Rows<'a>>,
    v_cache: Vec<Rows<'a>>,
    heads: Vec<DecodeHeadJson<'a>>,
    output: Rows<'a>,
    macs: MacsJson,
}

/// One element of a step's `heads`.
#[derive(Serialize)]
struct DecodeHeadJson<'a> {
    q: Rows<'a>,
    scores: Rows<'a>,
    weights: Rows<'a>,
    context: Rows<'a>,
}

/// A step's `macs`.
#[derive(Serialize)]
struct MacsJson {
    cached: usize,
    recomputed: usize,
}

impl<'a> DecodeJson<'a> {
    fn new(d: &'a Decode) -> Self {
        Self {
            prefill: d.prefill,
            steps: d
                .steps
                .iter()
                .map(|s| DecodeStepJson {
                    position: s.position,
                    k_cache: s.k_cache.iter().map(Rows).collect(),
                    v_cache: s.v_cache.iter().map(Rows).collect(),
                    heads: s
                        .heads
                        .iter()
                        .map(|h| DecodeHeadJson {
                            q: Rows(&h.q),
                            scores: Rows(&h.scores),
                            weights: Rows(&h.weights),
                            context: Rows(&h.context),
                        })
                        .collect(),
                    output: Rows(&s.output),
                    macs: MacsJson {
                        cached: s.macs.cached,
                        recomputed: s.macs.recomputed,
                    },
                })
                .collect(),
            matches_full_pass: d.matches_full_pass,
        }
    }
}

/// The `block` object of [`TraceJson`].
#[derive(Serialize)]
struct BlockJson<'a> {
    norm: &'static str,
    norm_type: &'static str,
    activation: &'static str,
    d_ff: usize,
    attention_input: Rows<'a>,
    sum_1: Rows<'a>,
    norm_1: Rows<'a>,
    hidden: Rows<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gate: Option<Rows<'a>>,
    activated: Rows<'a>,
    ffn: Rows<'a>,
    sum_2: Rows<'a>,
    norm_2: Rows<'a>,
    out: Rows<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    w_gate: Option<Rows<'a>>,
    w_1: Rows<'a>,
    b_1: Vector<'a>,
    w_2: Rows<'a>,
    b_2: Vector<'a>,
    ln_1_gamma: Vector<'a>,
    ln_1_beta: Vector<'a>,
    ln_2_gamma: Vector<'a>,
    ln_2_beta: Vector<'a>,
}

impl<'a> BlockJson<'a> {
    fn new(b: &'a BlockTrace) -> Self {
        let p = &b.params;
        Self {
            norm: b.norm.key(),
            norm_type: p.norm_type.key(),
            activation: b.activation.key(),
            d_ff: p.d_ff(),
            attention_input: Rows(&b.attention_input),
            sum_1: Rows(&b.sum_1),
            norm_1: Rows(&b.norm_1),
            hidden: Rows(&b.hidden),
            gate: b.gate.as_ref().map(Rows),
            activated: Rows(&b.activated),
            ffn: Rows(&b.ffn),
            sum_2: Rows(&b.sum_2),
            norm_2: Rows(&b.norm_2),
            out: Rows(b.out()),
            w_gate: b.activation.gated().then_some(Rows(&p.w_gate)),
            w_1: Rows(&p.w_1),
            b_1: Vector(&p.b_1),
            w_2: Rows(&p.w_2),
            b_2: Vector(&p.b_2),
            ln_1_gamma: Vector(&p.ln_1_gamma),
            ln_1_beta: Vector(&p.ln_1_beta),
            ln_2_gamma: Vector(&p.ln_2_gamma),
            ln_2_beta: Vector(&p.ln_2_beta),
        }
    }
}

/// A one-row matrix as a plain array.
struct Vector<'a>(&'a Matrix);

impl Serialize for Vector<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|v| finite(*v)))
    }
}

/// The `config` object of [`TraceJson`].
#[derive(Serialize)]
struct ConfigJson {
    d_model: usize,
    n_heads: usize,
    head_dim: usize,
    causal: bool,
    positional_encoding: bool,
    scale: &'static str,
    temperature: Option<f64>,
    rope: Option<RopeJson>,
    n_kv_heads: usize,
    window: Option<usize>,
}

/// `config.rope` in [`TraceJson`], as a scenario writes it.
#[derive(Serialize)]
struct RopeJson {
    theta: Option<f64>,
    pairing: &'static str,
}

/// One element of `heads` in [`TraceJson`].
#[derive(Serialize)]
struct HeadJson<'a> {
    kv_head: usize,
    q: Rows<'a>,
    k: Rows<'a>,
    v: Rows<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    q_rope: Option<Rows<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    k_rope: Option<Rows<'a>>,
    scores: Rows<'a>,
    scaled: Rows<'a>,
    masked: Rows<'a>,
    weights: Rows<'a>,
    context: Rows<'a>,
    fully_masked_rows: &'a [usize],
    #[serde(skip_serializing_if = "Option::is_none")]
    tiles: Option<Vec<Vec<TileJson>>>,
}

/// One entry of a head's `tiles`: the running state after a block of keys.
#[derive(Serialize)]
struct TileJson {
    m: Option<f64>,
    l: Option<f64>,
    o: Vec<Option<f64>>,
}

impl From<&Tile> for TileJson {
    fn from(t: &Tile) -> Self {
        Self {
            m: finite(t.m),
            l: finite(t.l),
            o: t.o.iter().map(|o| finite(*o)).collect(),
        }
    }
}

impl<'a> HeadJson<'a> {
    fn new(h: &'a HeadTrace) -> Self {
        Self {
            tiles: None,
            kv_head: h.kv_head,
            q: Rows(&h.q),
            k: Rows(&h.k),
            v: Rows(&h.v),
            q_rope: h.q_rope.as_ref().map(Rows),
            k_rope: h.k_rope.as_ref().map(Rows),
            scores: Rows(&h.scores),
            scaled: Rows(&h.scaled),
            masked: Rows(&h.masked),
            weights: Rows(&h.weights),
            context: Rows(&h.context),
            fully_masked_rows: &h.fully_masked_rows,
        }
    }
}

/// A matrix as an array of rows; a value that is not finite is null.
struct Rows<'a>(&'a Matrix);

impl Serialize for Rows<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(
            self.0
                .row_iter()
                .map(|row| row.iter().map(|v| finite(*v)).collect::<Vec<_>>()),
        )
    }
}

/// The number, or `None` (null) when it is not finite.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

// ---------------------------------------------------------------------------------------------
// Markdown

/// A worked example for a handout: the configuration in words, then every stage shown with its
/// formula, explanation and matrices as tables.
///
/// Numbers have [`MARKDOWN_DECIMALS`] decimals and a real minus sign (`−0.250`), as in the
/// app; a value that rounds to zero is shown without a sign, and −∞ as `−∞`. Rows are labelled
/// with tokens, a repeated word with its position (`the (4)`); query × key matrices also label
/// their columns with tokens, other columns are `d1…` (model dimensions, a head's keeping their
/// place in the layer) or `f1…` (hidden units). Tokens are escaped so that Markdown shows them
/// literally.
pub fn trace_markdown(trace: &Trace) -> String {
    let mut out = String::new();
    let tokens: Vec<String> = trace.tokens.iter().map(|t| escape_markdown(t)).collect();
    // Writing to a String cannot fail; the results are ignored for that reason.
    let source: Option<Vec<String>> = trace
        .source
        .as_ref()
        .map(|s| s.tokens.iter().map(|t| escape_markdown(t)).collect());
    let _ = writeln!(out, "# {}\n", handout_title(&tokens, source.as_deref()));
    write_configuration(&mut out, trace, &tokens);

    let matrices = trace_matrices(trace);
    let labels = token_labels(trace);
    let wiring = trace.wiring();
    for (i, &stage) in trace.stages().iter().enumerate() {
        let title = stage_title(stage, &trace.config, wiring);
        let _ = writeln!(out, "## {}. {title}\n", i + 1);
        let _ = writeln!(
            out,
            "{FORMULA}: `{}`\n",
            stage_formula(stage, &trace.config, wiring)
        );
        let _ = writeln!(out, "{}\n", stage_explanation_in(stage, wiring.order()));
        let note = handout_stage_note(trace, stage, MARKDOWN_DECIMALS);
        let _ = writeln!(out, "{note}\n");
        let mut current_head = None;
        for m in matrices.iter().filter(|m| m.stage == stage) {
            if let Some(h) = m.head.filter(|h| current_head != Some(*h)) {
                current_head = Some(h);
                let _ = writeln!(out, "### {}\n", head_heading(h));
            }
            write_matrix(&mut out, trace, (&labels.0, &labels.1), m);
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn write_configuration(out: &mut String, trace: &Trace, tokens: &[String]) {
    let _ = writeln!(out, "## {CONFIGURATION}\n");
    for line in configuration(trace, tokens, MARKDOWN_DECIMALS) {
        let _ = writeln!(out, "- **{}:** {}", line.label, line.text);
    }
    if let Some(warning) = configuration_warning(trace, MARKDOWN_DECIMALS) {
        let _ = writeln!(out, "\n> **{NOTE}:** {warning}");
    }
    let _ = writeln!(out, "\n{}\n", rounding_remark(MARKDOWN_DECIMALS));
}

/// One matrix as a Markdown table, headed by its symbol and shape, as the handout writes it.
pub fn write_matrix_table(out: &mut String, trace: &Trace, m: &TraceMatrix<'_>) {
    let (tokens, key_tokens) = token_labels(trace);
    write_matrix(out, trace, (&tokens, &key_tokens), m);
}

/// The labels of the sentence's tokens and of the keys' tokens, escaped for Markdown: named as
/// the heatmaps and the questions name them, a repeated word with its position (`the (4)`).
fn token_labels(trace: &Trace) -> (Vec<String>, Vec<String>) {
    let escaped = |n: usize, name: &dyn Fn(usize) -> String| {
        (0..n).map(|i| escape_markdown(&name(i))).collect()
    };
    (
        escaped(trace.seq_len(), &|i| words::token(trace, i)),
        escaped(trace.n_keys(), &|i| key_token(trace, i)),
    )
}

fn write_matrix(
    out: &mut String,
    trace: &Trace,
    (tokens, key_tokens): (&[String], &[String]),
    m: &TraceMatrix<'_>,
) {
    let (rows, cols) = m.matrix.shape();
    let _ = writeln!(
        out,
        "**{}**: {} ({rows} × {cols})\n",
        matrix_symbol(m.key, m.head),
        matrix_caption(m.key, m.head, trace.wiring())
    );
    let row_labels = labels(m.rows, rows, (tokens, key_tokens), m.head);
    let mut col_labels = labels(m.cols, cols, (tokens, key_tokens), m.head);
    let softmax = m.key == "weights";
    if softmax {
        col_labels.push(ROW_SUM.to_string());
    }
    write_header_row(out, &col_labels);
    for (i, label) in row_labels.iter().enumerate() {
        let mut cells: Vec<String> = m.matrix.row(i).iter().map(|v| format_number(*v)).collect();
        if softmax {
            let fully_masked = m
                .head
                .and_then(|h| trace.heads.get(h))
                .is_some_and(|h| h.fully_masked_rows.contains(&i));
            let sum = format_number(m.matrix.row(i).sum());
            cells.push(if fully_masked {
                format!("{sum} {FULLY_MASKED}")
            } else {
                sum
            });
        }
        let _ = writeln!(out, "| {label} | {} |", cells.join(" | "));
    }
    out.push('\n');
}

/// A Markdown table's header row and alignment row, numbers right-aligned.
fn write_header_row(out: &mut String, col_labels: &[String]) {
    let _ = writeln!(out, "| | {} |", col_labels.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(col_labels.len()));
}

/// `matrix` as a Markdown table under `heading`, its rows the sentence's tokens and its columns
/// the keys' tokens (a head's target pattern, which the trace does not hold).
pub fn write_token_table(out: &mut String, trace: &Trace, heading: &str, matrix: &Matrix) {
    let (tokens, key_tokens) = token_labels(trace);
    let _ = writeln!(out, "{heading}\n");
    write_header_row(out, &key_tokens[..matrix.ncols().min(key_tokens.len())]);
    for (i, label) in tokens.iter().enumerate().take(matrix.nrows()) {
        let cells: Vec<String> = matrix.row(i).iter().map(|v| format_number(*v)).collect();
        let _ = writeln!(out, "| {label} | {} |", cells.join(" | "));
    }
    out.push('\n');
}

/// The `n` labels along `axis`; `head` places a head's columns in the layer.
fn labels(
    axis: Axis,
    n: usize,
    tokens: (&[String], &[String]),
    head: Option<usize>,
) -> Vec<String> {
    (0..n)
        .map(|i| axis_label(axis, i, n, tokens, head))
        .collect()
}

/// The label of index `i` of `n` along `axis`, counted from 1 like everything a learner reads:
/// a head's slice of `n` columns starts after the `n` columns of each head before it.
fn axis_label(
    axis: Axis,
    i: usize,
    n: usize,
    (tokens, key_tokens): (&[String], &[String]),
    head: Option<usize>,
) -> String {
    match axis {
        Axis::Tokens => tokens.get(i).cloned().unwrap_or_default(),
        Axis::KeyTokens => key_tokens.get(i).cloned().unwrap_or_default(),
        Axis::Dims => dim(i),
        Axis::HeadDims => dim(head.unwrap_or(0) * n + i),
        Axis::Hidden => hidden_unit(i),
        Axis::Single => String::new(),
    }
}

/// A number with [`MARKDOWN_DECIMALS`] decimals, written as on the heatmaps: a real minus sign,
/// `−∞` for minus infinity and no negative zero.
fn format_number(v: f64) -> String {
    format_value(v, MARKDOWN_DECIMALS)
}

/// `text` with every character Markdown could read as syntax escaped, and line breaks as spaces.
fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            // Tokens never start a line here, so list and heading markers like `-` are safe.
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '#' | '&' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// CSV

/// Every matrix of the trace in tidy long form, one value per line, under [`CSV_HEADER`].
///
/// `matrix` is the key of [`trace_matrices`] (the JSON name); `head` counts from 1 and is empty
/// for whole-layer matrices; `row` and `col` count from 1; `row_token` is the row's token (empty
/// for the rows of a weight matrix); `col_label` is the key token for query × key matrices and
/// `d1`, `d2`, … otherwise (a head's columns named as in the whole layer). Values are written in full
/// precision (the shortest text that reads back as the same `f64`), −∞ as `-inf`. Fields are
/// quoted as RFC 4180 asks when they hold a comma, a quote or a line break; lines end in `\n`.
pub fn trace_csv(trace: &Trace) -> String {
    let mut out = String::new();
    out.push_str(CSV_HEADER);
    out.push('\n');
    for m in trace_matrices(trace) {
        let head = m.head.map_or(String::new(), |h| (h + 1).to_string());
        for i in 0..m.matrix.nrows() {
            let row_token = match m.rows {
                Axis::Tokens => csv_field(token(&trace.tokens, i)),
                Axis::KeyTokens => csv_field(token(trace.key_tokens(), i)),
                _ => String::new(),
            };
            let cols = m.matrix.ncols();
            for j in 0..cols {
                let col_label = match m.cols {
                    Axis::Tokens => csv_field(token(&trace.tokens, j)),
                    Axis::KeyTokens => csv_field(token(trace.key_tokens(), j)),
                    axis => axis_label(axis, j, cols, (&[], &[]), m.head),
                };
                let _ = writeln!(
                    out,
                    "{},{head},{},{row_token},{},{col_label},{}",
                    m.key,
                    i + 1,
                    j + 1,
                    csv_number(m.matrix[(i, j)])
                );
            }
        }
    }
    out
}

fn token(tokens: &[String], i: usize) -> &str {
    tokens.get(i).map_or("", String::as_str)
}

fn csv_number(v: f64) -> String {
    if v == f64::NEG_INFINITY {
        "-inf".to_string()
    } else if v == f64::INFINITY {
        "inf".to_string()
    } else if v.is_nan() {
        "nan".to_string()
    } else {
        v.to_string()
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::Wiring;

    const W: Wiring = Wiring {
        cross: false,
        block: None,
        activation: crate::attention::Activation::Relu,
        rope: false,
        norm_type: crate::attention::NormType::LayerNorm,
    };
    use crate::attention::{forward, Config, Init, Inputs, ScaleMode, Weights};
    use crate::formats::scenario::Scenario;
    use serde_json::Value;

    fn trace_of(sentence: &str, config: Config) -> Trace {
        let weights = Weights::new(Init::Default, config.d_model);
        forward(&Inputs::from_sentence(sentence, config, weights).unwrap()).unwrap()
    }

    fn default_trace() -> Trace {
        forward(&Scenario::default().to_inputs().unwrap()).unwrap()
    }

    fn causal() -> Config {
        Config {
            causal: true,
            ..Config::default()
        }
    }

    /// The trace's JSON as a value to look into.
    fn json_value(trace: &Trace) -> Value {
        serde_json::to_value(trace_json(trace)).unwrap()
    }

    fn cell_count(trace: &Trace) -> usize {
        trace_matrices(trace).iter().map(|m| m.matrix.len()).sum()
    }

    #[test]
    fn every_matrix_is_listed_once_in_stage_order() {
        let trace = default_trace();
        let keys: Vec<(&str, Option<usize>)> = trace_matrices(&trace)
            .iter()
            .map(|m| (m.key, m.head))
            .collect();
        assert_eq!(keys.len(), 2 + 6 + 2 * 8 + 1 + 2);
        assert_eq!(keys[0], ("embeddings", None));
        assert_eq!(keys[8], ("q", Some(0)));
        assert_eq!(keys[11], ("q", Some(1)));
        assert_eq!(keys.last(), Some(&("output", None)));
        let stages: Vec<Stage> = trace_matrices(&trace).iter().map(|m| m.stage).collect();
        assert!(stages.windows(2).all(|w| w[0] <= w[1]));
        // 3 tokens, d_model 4, 2 heads of width 2, by hand:
        // E, X 12 each; W_q, W_k, W_v, W_o 16 each; Q, K, V 12 each; concat, output 12 each;
        // per head Q_h, K_h, V_h, C_h 6 each and four 3×3 matrices.
        assert_eq!(
            cell_count(&trace),
            12 * 2 + 16 * 4 + 12 * 3 + 12 * 2 + 2 * (6 * 4 + 9 * 4)
        );
    }

    #[test]
    fn the_positional_encoding_is_listed_only_when_it_is_on() {
        let on = trace_of(
            "a b",
            Config {
                positional_encoding: true,
                ..Config::default()
            },
        );
        assert!(trace_matrices(&on).iter().any(|m| m.key == "positional"));
        let off = trace_of("a b", Config::default());
        assert!(!trace_matrices(&off).iter().any(|m| m.key == "positional"));
        assert_eq!(json_value(&off)["positional"], Value::Null);
        assert!(json_value(&on)["positional"].is_array());
    }

    #[test]
    fn json_has_every_key_and_the_exact_output() {
        let trace = default_trace();
        let json = json_value(&trace);
        for key in [
            "tokens",
            "config",
            "embeddings",
            "positional",
            "x",
            "q",
            "k",
            "v",
            "scale_divisor",
            "heads",
            "concat",
            "output",
        ] {
            assert!(json.get(key).is_some(), "missing {key}");
        }
        assert_eq!(json["config"]["scale"], "sqrt_head_dim");
        assert_eq!(json["config"]["head_dim"], 2);
        assert_eq!(json["heads"].as_array().unwrap().len(), 2);
        let out = &json["output"];
        for i in 0..3 {
            for j in 0..4 {
                assert_eq!(out[i][j].as_f64().unwrap(), trace.output[(i, j)]);
            }
        }
        // The text holds the shortest digits that name each f64, so it reads back exactly.
        let reread: Value = serde_json::from_str(&trace_json_pretty(&trace)).unwrap();
        assert_eq!(reread, json);
    }

    #[test]
    fn pretty_json_lists_the_keys_in_stage_order() {
        let text = trace_json_pretty(&default_trace());
        let at = |key: &str| text.find(&format!("\n  \"{key}\"")).unwrap();
        let order = [
            "tokens",
            "config",
            "embeddings",
            "positional",
            "x",
            "w_q",
            "w_k",
            "w_v",
            "q",
            "k",
            "v",
            "scale_divisor",
            "heads",
            "concat",
            "w_o",
            "output",
        ];
        assert!(order.windows(2).all(|w| at(w[0]) < at(w[1])), "{order:?}");
        assert_eq!(text.matches("\n  \"").count(), order.len());
        let head = text.find("\n  \"heads\"").unwrap();
        let in_head = |key: &str| head + text[head..].find(&format!("\n      \"{key}\"")).unwrap();
        let head_order = [
            "q",
            "k",
            "v",
            "scores",
            "scaled",
            "masked",
            "weights",
            "context",
            "fully_masked_rows",
        ];
        assert!(
            head_order.windows(2).all(|w| in_head(w[0]) < in_head(w[1])),
            "{head_order:?}"
        );
        assert!(text.ends_with("]\n}\n"));
    }

    #[test]
    fn masked_minus_infinity_becomes_json_null_and_nothing_else_does() {
        let json = json_value(&trace_of("a b c", causal()));
        let masked = &json["heads"][0]["masked"];
        // Above the diagonal: keys after their query.
        assert_eq!(masked[0][1], Value::Null);
        assert_eq!(masked[0][2], Value::Null);
        assert_eq!(masked[1][2], Value::Null);
        assert!(masked[1][0].is_number() && masked[2][2].is_number());
        // Three hidden keys in each of the two heads; positions, rotary positions and the
        // window are off, hence three more nulls.
        let heads = json["heads"].to_string();
        assert_eq!(heads.matches("null").count(), 2 * 3);
        let text = json.to_string();
        assert_eq!(text.matches("null").count(), 2 * 3 + 3);
        assert!(!text.contains("inf") && !text.contains("NaN"));
    }

    #[test]
    fn a_heads_columns_keep_the_names_the_app_gives_them() {
        let trace = default_trace();
        let csv = trace_csv(&trace);
        // Head 2 of width 2 holds d3 and d4, as its heatmaps say.
        assert!(csv.contains("\ncontext,2,1,I,1,d3,"), "{csv}");
        assert!(csv.contains("\nq,2,3,hungry,2,d4,"), "{csv}");
        assert!(csv.contains("\ncontext,1,1,I,2,d2,"), "{csv}");
        let md = trace_markdown(&trace);
        assert!(!md.contains("| c1 |") && !md.contains("c1–"), "{md}");
        let app = crate::words::col_label(
            &trace,
            crate::attention::MatrixId::Head(1, crate::attention::HeadMatrix::Context),
            0,
        );
        assert_eq!(app, "d3");
    }

    #[test]
    fn markdown_shows_every_stage_with_formula_and_tokens() {
        let md = trace_markdown(&default_trace());
        assert!(md.starts_with("# Self-attention, step by step: I am hungry\n"));
        for (i, stage) in Stage::ALL.into_iter().enumerate() {
            let title = stage_title(stage, &Config::default(), W);
            assert!(md.contains(&format!("## {}. {title}\n", i + 1)));
            assert!(md.contains(&stage_formula(stage, &Config::default(), W)));
        }
        assert!(md.contains("d_k = d_model ÷ heads = 4 ÷ 2 = 2"));
        assert!(md.contains("divided by √d_k = √2 ≈ 1.414"));
        assert!(md.contains("rows = queries, columns = keys"));
        assert!(md.contains("**Q₂**"));
        assert!(md.contains("| | I | am | hungry | row sum |"));
        assert!(!md.contains("Note:"));
    }

    #[test]
    fn markdown_tables_have_one_cell_per_column_on_every_line() {
        let md = trace_markdown(&trace_of("x | y", causal()));
        // An escaped bar is text, not a cell border.
        let borders = |line: &str| line.replace("\\|", "").matches('|').count();
        let mut lines = md.lines().peekable();
        let mut tables = 0;
        while let Some(line) = lines.next() {
            if !line.starts_with("| |") {
                continue;
            }
            tables += 1;
            while let Some(row) = lines.next_if(|l| l.starts_with('|')) {
                assert_eq!(borders(row), borders(line), "{line}\n{row}");
            }
        }
        assert_eq!(tables, 2 + 6 + 2 * 8 + 1 + 2);
        assert!(md.contains("| x | \\| | y |"));
    }

    #[test]
    fn markdown_numbers_have_three_decimals_a_real_minus_and_minus_infinity() {
        assert_eq!(format_number(0.25), "0.250");
        assert_eq!(format_number(-1.0 / 3.0), "−0.333");
        assert_eq!(format_number(-0.0001), "0.000");
        assert_eq!(format_number(f64::NEG_INFINITY), "−∞");
        let md = trace_markdown(&trace_of("a b", causal()));
        assert!(md.contains("| a | "));
        assert!(md.contains("−∞"));
        assert!(md.contains("| 1.000 |"));
    }

    #[test]
    fn markdown_warns_when_the_scale_is_not_the_square_root_of_the_head_width() {
        for scale in [ScaleMode::SqrtSeqLen, ScaleMode::None] {
            let md = trace_markdown(&trace_of(
                "one two three four",
                Config {
                    scale,
                    ..Config::default()
                },
            ));
            assert!(md.contains("**Note:**"), "{scale}");
            assert!(md.contains("√d_k = √2 ≈ 1.414"), "{scale}");
        }
        let md = trace_markdown(&trace_of(
            "one two three four",
            Config {
                scale: ScaleMode::SqrtSeqLen,
                ..Config::default()
            },
        ));
        assert!(md.contains("√seq_len = √4 = 2"));
    }

    #[test]
    fn markdown_escapes_tokens_that_look_like_syntax() {
        assert_eq!(escape_markdown("a|b"), "a\\|b");
        assert_eq!(escape_markdown("*_`#"), "\\*\\_\\`\\#");
        assert_eq!(escape_markdown("<b>"), "\\<b\\>");
        assert_eq!(escape_markdown("line\nbreak"), "line break");
        assert_eq!(escape_markdown("café"), "café");
    }

    #[test]
    fn csv_has_the_header_and_one_line_per_value() {
        let trace = default_trace();
        let csv = trace_csv(&trace);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines.len(), cell_count(&trace) + 1);
        assert!(lines[1].starts_with("embeddings,,1,I,1,d1,"));
        assert!(csv.contains("\nscores,2,3,hungry,1,I,"));
        assert!(csv.contains("\nw_o,,4,,4,d4,"));
        assert!(csv.ends_with('\n'));
    }

    #[test]
    fn csv_values_read_back_exactly_and_minus_infinity_is_written_out() {
        let trace = trace_of("a b", causal());
        let csv = trace_csv(&trace);
        assert!(csv.contains("\nmasked,1,1,a,2,b,-inf\n"));
        let line = csv
            .lines()
            .find(|l| l.starts_with("output,,2,b,3,"))
            .unwrap();
        let value: f64 = line.rsplit(',').next().unwrap().parse().unwrap();
        assert_eq!(value, trace.output[(1, 2)]);
    }

    #[test]
    fn csv_quotes_tokens_with_commas_and_quotes() {
        let trace = trace_of("yes , \" no", Config::default());
        let csv = trace_csv(&trace);
        assert!(csv.contains("\nx,,2,\",\",1,d1,"));
        assert!(csv.contains("\nscores,1,3,\"\"\"\",2,\",\","));
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a\nb"), "\"a\nb\"");
    }
}
