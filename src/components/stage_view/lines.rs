//! What each stage draws: lines of panels joined by operators, one line per head for the
//! per-head stages, or every head side by side on one colour scale to compare them.

use super::panel_data::Panels;
use crate::attention::{HeadMatrix, MatrixId, ScaleMode, Stage, Trace, WeightName};
use crate::components::heatmap::PanelData;
use crate::panels::x_copy_panel;
use leptos::prelude::*;

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
}

/// One equation, with a heading above it.
pub(super) struct Line {
    pub heading: Option<String>,
    pub items: Vec<Item>,
}

fn op(s: &str) -> Item {
    Item::Op(s.to_string())
}

fn head_line(h: usize, items: Vec<Item>) -> Line {
    Line {
        heading: Some(format!("Head {}", h + 1)),
        items,
    }
}

/// What stage `s` draws, for the heads in `heads`.
pub(super) fn stage_lines(p: &Panels, trace: Memo<Trace>, s: Stage, heads: &[usize]) -> Vec<Line> {
    let layout = p.layout().get_untracked();
    let n = layout.n_heads;
    // One line per shown head, each with the head's panels in `row`.
    let per_head = |row: &dyn Fn(usize) -> Vec<Item>| -> Vec<Line> {
        heads.iter().map(|&h| head_line(h, row(h))).collect()
    };
    let head = |m: HeadMatrix, h: usize| Item::Panel(p.head(m, h));
    let given = |m: HeadMatrix, h: usize| Item::Given(p.head(m, h));
    match s {
        Stage::Input => {
            let mut items = vec![Item::Given(PanelData {
                title: "E (embeddings)".into(),
                ..p.whole(MatrixId::Embeddings, 1)
            })];
            if layout.positional {
                items.push(op("+"));
                items.push(Item::Given(PanelData {
                    title: "P (positions)".into(),
                    ..p.whole(MatrixId::Positional, 1)
                }));
            }
            items.push(op("="));
            items.push(Item::Panel(p.whole(MatrixId::X, 1)));
            vec![Line {
                heading: None,
                items,
            }]
        }
        Stage::Projection => [
            (WeightName::Q, MatrixId::Q),
            (WeightName::K, MatrixId::K),
            (WeightName::V, MatrixId::V),
        ]
        .into_iter()
        .map(|(w, result)| Line {
            heading: None,
            items: vec![
                Item::Given(PanelData {
                    name: x_copy_panel(w),
                    ..p.whole(MatrixId::X, 1)
                }),
                op("·"),
                Item::Given(p.weight(w)),
                op("="),
                Item::Panel(p.whole(result, n)),
            ],
        })
        .collect(),
        Stage::SplitHeads => {
            let mut out = vec![Line {
                heading: Some("Before: one band of columns per head".into()),
                items: [MatrixId::Q, MatrixId::K, MatrixId::V]
                    .map(|m| Item::Given(p.whole(m, n)))
                    .into(),
            }];
            out.extend(per_head(&|h| {
                vec![
                    head(HeadMatrix::Q, h),
                    head(HeadMatrix::K, h),
                    head(HeadMatrix::V, h),
                ]
            }));
            out
        }
        Stage::Scores => per_head(&|h| {
            vec![
                given(HeadMatrix::Q, h),
                op("·"),
                given(HeadMatrix::KTransposed, h),
                op("="),
                head(HeadMatrix::Scores, h),
            ]
        }),
        Stage::Scale => {
            let div = trace.with_untracked(|t| match t.config.scale {
                ScaleMode::SqrtHeadDim => format!("÷ √{}", t.config.head_dim()),
                ScaleMode::SqrtSeqLen => format!("÷ √{}", t.seq_len()),
                ScaleMode::None => "÷ 1".to_string(),
            });
            per_head(&|h| {
                vec![
                    given(HeadMatrix::Scores, h),
                    op(&div),
                    head(HeadMatrix::Scaled, h),
                ]
            })
        }
        Stage::Mask => per_head(&|h| {
            vec![
                given(HeadMatrix::Scaled, h),
                op("mask →"),
                head(HeadMatrix::Masked, h),
            ]
        }),
        Stage::Softmax => per_head(&|h| {
            vec![
                given(HeadMatrix::Masked, h),
                op("softmax →"),
                head(HeadMatrix::Weights, h),
                Item::Lines(h),
            ]
        }),
        Stage::WeightedSum => per_head(&|h| {
            vec![
                given(HeadMatrix::Weights, h),
                op("·"),
                given(HeadMatrix::V, h),
                op("="),
                head(HeadMatrix::Context, h),
            ]
        }),
        Stage::Concat => {
            let mut items: Vec<Item> = Vec::new();
            for h in 0..n {
                if h > 0 {
                    items.push(op("|"));
                }
                items.push(given(HeadMatrix::Context, h));
            }
            vec![
                Line {
                    heading: Some("The heads' results".into()),
                    items,
                },
                Line {
                    heading: Some("Side by side".into()),
                    items: vec![Item::Panel(p.whole(MatrixId::Concat, n))],
                },
            ]
        }
        Stage::OutputProjection => vec![Line {
            heading: None,
            items: vec![
                Item::Given(p.whole(MatrixId::Concat, n)),
                op("·"),
                Item::Given(p.weight(WeightName::O)),
                op("="),
                Item::Panel(PanelData {
                    title: "Y (output)".into(),
                    ..p.whole(MatrixId::Output, 1)
                }),
            ],
        }],
    }
}

/// All `n` heads' results of stage `s` in one row, on one colour scale, so specialisation shows.
pub(super) fn compare_line(p: &Panels, s: Stage, n: usize) -> Line {
    let m = match s {
        Stage::SplitHeads => HeadMatrix::Q,
        Stage::Scores => HeadMatrix::Scores,
        Stage::Scale => HeadMatrix::Scaled,
        Stage::Mask => HeadMatrix::Masked,
        Stage::WeightedSum => HeadMatrix::Context,
        _ => HeadMatrix::Weights,
    };
    Line {
        heading: Some("Every head, same colour scale".into()),
        items: (0..n).map(|h| Item::Panel(p.head(m, h))).collect(),
    }
}
