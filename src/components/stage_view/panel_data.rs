//! The heatmap panels of the stage view, each matrix drawn the same way wherever it appears:
//! names and the head matrices' shapes and colouring from `crate::panels`, titles from
//! `crate::words`, values from the one trace.

use crate::attention::{
    kv_head_of, BackMatrix, BackwardPass, BlockMatrix, BlockParam, HeadGrad, HeadMatrix, HeadTrace,
    Matrix, MatrixId, Trace, WeightName,
};
use crate::components::context::backward_context;
use crate::components::heatmap::PanelData;
use crate::components::{from_trace, trace_outline};
use crate::panels::{head_panel, panel_name, Values};
use crate::plot::Palette;
use crate::words::{dim, hidden_unit, label, rows_are_keys, token_labels, GRADIENT_DECIMALS};
use leptos::prelude::*;

/// What decides which panels a stage shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Layout {
    /// Heads.
    pub n_heads: usize,
    /// Model width.
    pub d_model: usize,
    /// Whether P is added to E.
    pub positional: bool,
    /// Whether keys and values come from a source sentence.
    pub cross: bool,
    /// The block's hidden width (0 without a block).
    pub d_ff: usize,
    /// Rotary positions turn Qₕ and Kₕ before the scores.
    pub rope: bool,
    /// Key/value heads, shared by groups of query heads when fewer than `n_heads`.
    pub n_kv_heads: usize,
}

impl Layout {
    fn head_dim(&self) -> usize {
        self.d_model / self.n_heads.max(1)
    }
}

/// The palette a head table's colouring maps to.
pub(super) fn palette(values: Values) -> Palette {
    match values {
        Values::Signed => Palette::Diverging,
        Values::Weights => Palette::Sequential,
    }
}

/// Makes the panels of one trace.
#[derive(Clone, Copy)]
pub(super) struct Panels {
    trace: Memo<Trace>,
    tokens: Signal<Vec<String>>,
    key_tokens: Signal<Vec<String>>,
    layout: Memo<Layout>,
    scores_range: Signal<f64>,
    scaled_range: Signal<f64>,
    context_range: Signal<f64>,
    /// The backward pass, where the app provides one.
    pass: Option<Memo<Result<BackwardPass, String>>>,
}

fn dims(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(dim).collect()
}

fn empty() -> Matrix {
    Matrix::zeros(0, 0)
}

impl Panels {
    /// Panels reading `trace`.
    pub fn new(trace: Memo<Trace>) -> Self {
        // A word that occurs twice is labelled with its position, as the explanations name it.
        let outline = trace_outline(trace);
        let tokens = Memo::new(move |_| outline.with(|o| token_labels(&o.tokens))).into();
        let key_tokens = Memo::new(move |_| outline.with(|o| token_labels(&o.key_tokens))).into();
        let layout = Memo::new(move |_| {
            outline.with(|o| Layout {
                n_heads: o.config.n_heads,
                d_model: o.config.d_model,
                positional: o.config.positional_encoding,
                cross: o.wiring.cross,
                d_ff: o.d_ff,
                rope: o.config.rope.is_some(),
                n_kv_heads: o.config.n_kv_heads(),
            })
        });
        // One colour scale per kind of matrix across the heads, so the heads compare.
        let max_abs = move |f: fn(&HeadTrace) -> &Matrix| -> Signal<f64> {
            Memo::new(move |_| {
                trace.with(|t| {
                    Palette::Diverging.range_for(t.heads.iter().flat_map(|h| f(h).iter()))
                })
            })
            .into()
        };
        Self {
            trace,
            tokens,
            key_tokens,
            layout,
            scores_range: max_abs(|h| &h.scores),
            scaled_range: max_abs(|h| &h.scaled),
            context_range: max_abs(|h| &h.context),
            pass: backward_context().map(|b| b.pass),
        }
    }

    /// The backward pass's values of `m`; empty where the loss does not reach it.
    fn back_values(&self, m: BackMatrix) -> Signal<Matrix> {
        let pass = self.pass;
        Memo::new(move |_| {
            pass.and_then(|p| p.with(|p| p.as_ref().ok().and_then(|p| m.get(p).cloned())))
                .unwrap_or_else(empty)
        })
        .into()
    }

    /// One colour scale for gradient `g` across the heads, so the heads compare.
    fn back_head_range(&self, g: HeadGrad) -> Signal<f64> {
        let pass = self.pass;
        Memo::new(move |_| {
            pass.map_or(1.0, |p| {
                p.with(|p| {
                    let Ok(p) = p.as_ref() else { return 1.0 };
                    let n = p.gradients.heads.len();
                    Palette::Diverging.range_for(
                        (0..n)
                            .filter_map(|h| BackMatrix::Head(h, g).get(p))
                            .flat_map(|m| m.iter()),
                    )
                })
            })
        })
        .into()
    }

    /// Gradient `m` of one head, on the colour scale all heads share, to compare them.
    pub fn back_compared(&self, m: BackMatrix) -> PanelData {
        let range = match m {
            BackMatrix::Head(_, g) => Some(self.back_head_range(g)),
            _ => None,
        };
        PanelData {
            range,
            ..self.back(m)
        }
    }

    /// A target or a gradient of the backward pass, labelled like the matrix it belongs to.
    pub fn back(&self, m: BackMatrix) -> PanelData {
        let layout = self.layout.get_untracked();
        let (d, hd) = (layout.d_model, layout.head_dim());
        let id = MatrixId::Back(m);
        let tokens = self.tokens;
        let keys = self.key_tokens;
        let dims_of = |range: std::ops::Range<usize>| -> Signal<Vec<String>> {
            Signal::derive(move || dims(range.clone()))
        };
        // Keys and values are as wide as the key/value heads, which query heads may share.
        let kw = layout.n_kv_heads * hd;
        let (rows, cols, axes): (Signal<Vec<String>>, Signal<Vec<String>>, _) = match m {
            BackMatrix::WQ | BackMatrix::WO => {
                (dims_of(0..d), dims_of(0..d), ("input dims", "output dims"))
            }
            BackMatrix::WK | BackMatrix::WV => {
                (dims_of(0..d), dims_of(0..kw), ("input dims", "output dims"))
            }
            BackMatrix::TargetPattern(_)
            | BackMatrix::Head(_, HeadGrad::Weights | HeadGrad::Masked | HeadGrad::Scores) => {
                (tokens, keys, ("queries", "keys"))
            }
            // A head's share of its key/value head's gradient: that head's columns, which
            // query heads sharing it have in common. (Turned keys come with rotary positions,
            // which have no source: their keys are the tokens.)
            BackMatrix::Head(h, HeadGrad::K | HeadGrad::KRope | HeadGrad::V) => {
                let g = kv_head_of(h, layout.n_heads, layout.n_kv_heads);
                (
                    keys,
                    dims_of(g * hd..(g + 1) * hd),
                    (key_axis(layout.cross), "dimensions"),
                )
            }
            BackMatrix::Head(h, _) => (
                tokens,
                dims_of(h * hd..(h + 1) * hd),
                ("tokens", "dimensions"),
            ),
            BackMatrix::K | BackMatrix::V => {
                (keys, dims_of(0..kw), (key_axis(layout.cross), "dimensions"))
            }
            BackMatrix::SourceX | BackMatrix::SourceEmbeddings => {
                (keys, dims_of(0..d), (key_axis(layout.cross), "dimensions"))
            }
            BackMatrix::ViaTarget if layout.cross => {
                (keys, dims_of(0..d), (key_axis(true), "dimensions"))
            }
            _ => (tokens, dims_of(0..d), ("tokens", "dimensions")),
        };
        let bands = match m {
            BackMatrix::Q | BackMatrix::Concat => layout.n_heads,
            BackMatrix::K | BackMatrix::V => layout.n_kv_heads,
            _ => 1,
        };
        // Each gradient on its own scale: one extreme head (a wanted weight near 0 gives a
        // huge ∂L/∂A) would wash out the others. Comparing heads shares one: `back_compared`.
        let range = None;
        let target = !m.is_gradient();
        PanelData {
            name: panel_name(id),
            title: label(id),
            values: self.back_values(m),
            rows,
            cols,
            axes,
            palette: if matches!(m, BackMatrix::TargetPattern(_)) {
                Palette::Sequential
            } else {
                Palette::Diverging
            },
            range,
            col_groups: bands,
            row_sums: matches!(m, BackMatrix::TargetPattern(_)),
            decimals: if target { 2 } else { GRADIENT_DECIMALS },
            reserve: None,
        }
    }

    /// Heads, width and positions, tracked.
    pub fn layout(&self) -> Memo<Layout> {
        self.layout
    }

    /// `matrix` of the trace; an edit that leaves it equal does not wake its heatmap.
    fn values(&self, matrix: MatrixId) -> Signal<Matrix> {
        from_trace(self.trace, move |t| matrix.get(t).unwrap_or_else(empty))
    }

    /// A whole-layer matrix with tokens for rows, `groups` head bands over its columns.
    pub fn whole(&self, matrix: MatrixId, groups: usize) -> PanelData {
        let layout = self.layout.get_untracked();
        // Keys and values are as wide as the key/value heads, which query heads may share.
        let d = match matrix {
            MatrixId::K | MatrixId::V => layout.n_kv_heads * layout.head_dim(),
            _ => layout.d_model,
        };
        let key_rows = rows_are_keys(matrix);
        PanelData {
            name: panel_name(matrix),
            title: label(matrix),
            values: self.values(matrix),
            rows: if key_rows {
                self.key_tokens
            } else {
                self.tokens
            },
            cols: Signal::derive(move || dims(0..d)),
            axes: (
                if key_rows && self.layout.get_untracked().cross {
                    "source tokens"
                } else {
                    "tokens"
                },
                "dimensions",
            ),
            palette: Palette::Diverging,
            range: None,
            col_groups: groups,
            row_sums: false,
            decimals: 2,
            reserve: None,
        }
    }

    /// A projection matrix: input dimensions by output dimensions.
    pub fn weight(&self, w: WeightName) -> PanelData {
        let d = self.layout.get_untracked().d_model;
        let matrix = MatrixId::Weight(w);
        PanelData {
            name: panel_name(matrix),
            title: label(matrix),
            values: self.values(matrix),
            rows: Signal::derive(move || dims(0..d)),
            cols: Signal::derive(move || dims(0..d)),
            axes: ("input dims", "output dims"),
            palette: Palette::Diverging,
            range: None,
            col_groups: 1,
            row_sums: false,
            decimals: 2,
            reserve: None,
        }
    }

    /// Matrix `m` of head `h`, as the head table describes it.
    pub fn head(&self, m: HeadMatrix, h: usize) -> PanelData {
        let row = head_panel(m);
        let layout = self.layout.get_untracked();
        let hd = layout.head_dim();
        // Keys and values are their key/value head's columns.
        let keys = matches!(
            m,
            HeadMatrix::K
                | HeadMatrix::V
                | HeadMatrix::KTransposed
                | HeadMatrix::KRope
                | HeadMatrix::KRopeTransposed
        );
        let owner = if keys {
            kv_head_of(h, layout.n_heads, layout.n_kv_heads)
        } else {
            h
        };
        let head_dims = Signal::derive(move || dims(owner * hd..(owner + 1) * hd));
        let matrix = MatrixId::Head(h, m);
        let transposed = matches!(m, HeadMatrix::KTransposed | HeadMatrix::KRopeTransposed);
        let palette = palette(row.values);
        PanelData {
            name: panel_name(matrix),
            title: label(matrix),
            values: self.values(matrix),
            rows: if transposed {
                head_dims
            } else if matches!(m, HeadMatrix::K | HeadMatrix::V | HeadMatrix::KRope) {
                self.key_tokens
            } else {
                self.tokens
            },
            cols: if row.square || transposed {
                self.key_tokens
            } else {
                head_dims
            },
            axes: if row.square {
                ("queries", "keys")
            } else if transposed {
                ("dimensions", "keys")
            } else {
                ("tokens", "dimensions")
            },
            palette,
            range: match m {
                HeadMatrix::Scores => Some(self.scores_range),
                HeadMatrix::Scaled | HeadMatrix::Masked => Some(self.scaled_range),
                HeadMatrix::Context => Some(self.context_range),
                _ => None,
            },
            col_groups: 1,
            row_sums: palette == Palette::Sequential,
            decimals: 2,
            reserve: None,
        }
    }

    /// A result of the block: tokens by model dimensions, or by hidden units for H and G.
    pub fn block(&self, b: BlockMatrix) -> PanelData {
        let layout = self.layout.get_untracked();
        let hidden = matches!(b, BlockMatrix::Hidden | BlockMatrix::Activated);
        let (n, unit) = if hidden {
            (layout.d_ff, "hidden units")
        } else {
            (layout.d_model, "dimensions")
        };
        let matrix = MatrixId::Block(b);
        PanelData {
            name: panel_name(matrix),
            title: label(matrix),
            values: self.values(matrix),
            rows: self.tokens,
            cols: Signal::derive(move || labels(hidden, n)),
            axes: ("tokens", unit),
            palette: Palette::Diverging,
            range: None,
            col_groups: 1,
            row_sums: false,
            decimals: 2,
            reserve: None,
        }
    }

    /// A parameter of the block: W₁ and W₂ as matrices, the others as one row.
    pub fn block_param(&self, p: BlockParam) -> PanelData {
        let layout = self.layout.get_untracked();
        let (d, f) = (layout.d_model, layout.d_ff);
        let matrix = MatrixId::BlockParam(p);
        let title = label(matrix);
        let (rows, cols, axes): (Signal<Vec<String>>, Signal<Vec<String>>, _) = match p {
            BlockParam::W1 | BlockParam::WGate => (
                Signal::derive(move || labels(false, d)),
                Signal::derive(move || labels(true, f)),
                ("input dims", "hidden units"),
            ),
            BlockParam::W2 => (
                Signal::derive(move || labels(true, f)),
                Signal::derive(move || labels(false, d)),
                ("hidden units", "output dims"),
            ),
            _ => {
                let n = if p == BlockParam::B1 { f } else { d };
                let row = title.clone();
                (
                    Signal::derive(move || vec![row.clone()]),
                    Signal::derive(move || labels(p == BlockParam::B1, n)),
                    (
                        "",
                        if p == BlockParam::B1 {
                            "hidden units"
                        } else {
                            "dimensions"
                        },
                    ),
                )
            }
        };
        PanelData::signed(
            panel_name(matrix),
            title,
            self.values(matrix),
            (rows, cols),
            axes,
        )
    }
}

/// What rows of keys are called: the source's tokens in cross-attention.
fn key_axis(cross: bool) -> &'static str {
    if cross {
        "source tokens"
    } else {
        "tokens"
    }
}

/// `f1…f_n` for hidden units, else `d1…d_n`.
fn labels(hidden: bool, n: usize) -> Vec<String> {
    if hidden {
        (0..n).map(hidden_unit).collect()
    } else {
        dims(0..n)
    }
}
