//! The heatmap panels of the stage view, each matrix drawn the same way wherever it appears:
//! names and the head matrices' shapes and colouring from `crate::panels`, titles from
//! `crate::words`, values from the one trace.

use crate::attention::{
    BlockMatrix, BlockParam, HeadMatrix, HeadTrace, Matrix, MatrixId, Trace, WeightName,
};
use crate::components::heatmap::PanelData;
use crate::panels::{head_panel, panel_name, Values};
use crate::plot::Palette;
use crate::words::{dim, hidden_unit, label, rows_are_keys, token_labels};
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
        let tokens = Memo::new(move |_| trace.with(|t| token_labels(&t.tokens))).into();
        let key_tokens = Memo::new(move |_| trace.with(|t| token_labels(t.key_tokens()))).into();
        let layout = Memo::new(move |_| {
            trace.with(|t| Layout {
                n_heads: t.config.n_heads,
                d_model: t.config.d_model,
                positional: t.config.positional_encoding,
                cross: t.source.is_some(),
                d_ff: t.block.as_ref().map_or(0, |b| b.hidden.ncols()),
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
        }
    }

    /// Heads, width and positions, tracked.
    pub fn layout(&self) -> Memo<Layout> {
        self.layout
    }

    fn values(&self, matrix: MatrixId) -> Signal<Matrix> {
        let trace = self.trace;
        Memo::new(move |_| trace.with(|t| matrix.get(t).unwrap_or_else(empty))).into()
    }

    /// A whole-layer matrix with tokens for rows, `groups` head bands over its columns.
    pub fn whole(&self, matrix: MatrixId, groups: usize) -> PanelData {
        let d = self.layout.get_untracked().d_model;
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
        }
    }

    /// Matrix `m` of head `h`, as the head table describes it.
    pub fn head(&self, m: HeadMatrix, h: usize) -> PanelData {
        let row = head_panel(m);
        let hd = self.layout.get_untracked().head_dim();
        let head_dims = Signal::derive(move || dims(h * hd..(h + 1) * hd));
        let matrix = MatrixId::Head(h, m);
        let transposed = m == HeadMatrix::KTransposed;
        let palette = palette(row.values);
        PanelData {
            name: panel_name(matrix),
            title: label(matrix),
            values: self.values(matrix),
            rows: if transposed {
                head_dims
            } else if matches!(m, HeadMatrix::K | HeadMatrix::V) {
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
        }
    }

    /// A parameter of the block: W₁ and W₂ as matrices, the others as one row.
    pub fn block_param(&self, p: BlockParam) -> PanelData {
        let layout = self.layout.get_untracked();
        let (d, f) = (layout.d_model, layout.d_ff);
        let matrix = MatrixId::BlockParam(p);
        let title = label(matrix);
        let (rows, cols, axes): (Signal<Vec<String>>, Signal<Vec<String>>, _) = match p {
            BlockParam::W1 => (
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
        PanelData {
            name: panel_name(matrix),
            title,
            values: self.values(matrix),
            rows,
            cols,
            axes,
            palette: Palette::Diverging,
            range: None,
            col_groups: 1,
            row_sums: false,
        }
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
