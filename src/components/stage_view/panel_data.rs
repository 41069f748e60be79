//! The heatmap panels of the stage view, each matrix drawn the same way wherever it appears:
//! names and the head matrices' shapes and colouring from `crate::panels`, titles from
//! `crate::words`, values from the one trace.

use crate::attention::{HeadMatrix, HeadTrace, Matrix, MatrixId, Trace, WeightName};
use crate::components::heatmap::PanelData;
use crate::panels::{head_panel, panel_name, Values};
use crate::plot::Palette;
use crate::words::{dim, label};
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
        let tokens = Memo::new(move |_| trace.with(|t| t.tokens.clone())).into();
        let layout = Memo::new(move |_| {
            trace.with(|t| Layout {
                n_heads: t.config.n_heads,
                d_model: t.config.d_model,
                positional: t.config.positional_encoding,
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
        PanelData {
            name: panel_name(matrix),
            title: label(matrix),
            values: self.values(matrix),
            rows: self.tokens,
            cols: Signal::derive(move || dims(0..d)),
            axes: ("tokens", "dimensions"),
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
            rows: if transposed { head_dims } else { self.tokens },
            cols: if row.square || transposed {
                self.tokens
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
}
