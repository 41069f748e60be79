//! What each stage draws: lines of panels joined by operators, one line per head for the
//! per-head stages, or every head side by side on one colour scale to compare them.

use super::line::{op, Item, Line};
use super::panel_data::Panels;
use crate::attention::{
    key_input, query_input, BlockMatrix, BlockParam, HeadMatrix, LossKind, MatrixId, Norm,
    NormType, ScaleMode, Stage, Trace, WeightName,
};
use crate::components::heatmap::PanelData;
use crate::panels::input_copy_panel;
use crate::words::GoalSource;
use leptos::prelude::*;

fn head_line(h: usize, items: Vec<Item>) -> Line {
    Line {
        heading: Some(format!("Head {}", h + 1)),
        items,
    }
}

/// What stage `s` draws, for the heads in `heads`; a backward stage follows a loss of `kind`
/// whose goal comes from `source`.
pub(super) fn stage_lines(
    p: &Panels,
    trace: Memo<Trace>,
    s: Stage,
    heads: &[usize],
    kind: LossKind,
    source: GoalSource,
) -> Vec<Line> {
    if s.is_backward() {
        return super::backward_lines::backward_lines(p, trace, s, heads, kind, source);
    }
    match s {
        Stage::Decode => return super::run_lines::decode_lines(p, trace, heads),
        Stage::Tiles => return super::run_lines::tiles_lines(p, trace, heads),
        _ => {}
    }
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
            let mut lines = vec![Line {
                heading: layout.cross.then(|| "The sentence (queries)".to_string()),
                items,
            }];
            if layout.cross {
                let mut items = vec![Item::Given(p.whole(MatrixId::SourceEmbeddings, 1))];
                if layout.positional {
                    items.push(op("+"));
                    items.push(Item::Given(p.whole(MatrixId::SourcePositional, 1)));
                }
                items.push(op("="));
                items.push(Item::Panel(p.whole(MatrixId::SourceX, 1)));
                lines.push(Line {
                    heading: Some("The source sentence (keys and values)".into()),
                    items,
                });
            }
            lines
        }
        Stage::Projection => [
            (WeightName::Q, MatrixId::Q),
            (WeightName::K, MatrixId::K),
            (WeightName::V, MatrixId::V),
        ]
        .into_iter()
        .map(|(w, result)| {
            let input = trace.with_untracked(|t| match w {
                WeightName::Q | WeightName::O => query_input(t.wiring()),
                _ => key_input(t.wiring()),
            });
            let given = match input {
                MatrixId::Block(b) => p.block(b),
                m => p.whole(m, 1),
            };
            Line {
                heading: None,
                items: vec![
                    Item::Given(PanelData {
                        name: input_copy_panel(input, w),
                        ..given
                    }),
                    op("·"),
                    Item::Given(p.weight(w)),
                    op("="),
                    Item::Panel(p.whole(result, n)),
                ],
            }
        })
        .collect(),
        Stage::SplitHeads => {
            let config = trace.with_untracked(|t| t.config);
            let n_kv = config.n_kv_heads();
            let heading = if n_kv == n {
                "Before: one band of columns per head".to_string()
            } else {
                format!("Before: {n} bands of Q, {n_kv} of K and V")
            };
            let mut out = vec![Line {
                heading: Some(heading),
                items: [(MatrixId::Q, n), (MatrixId::K, n_kv), (MatrixId::V, n_kv)]
                    .map(|(m, bands)| Item::Given(p.whole(m, bands)))
                    .into(),
            }];
            out.extend(heads.iter().map(|&h| {
                let items = vec![
                    head(HeadMatrix::Q, h),
                    head(HeadMatrix::K, h),
                    head(HeadMatrix::V, h),
                ];
                if config.grouped() {
                    Line {
                        heading: Some(format!(
                            "Head {} · key/value head {}",
                            h + 1,
                            config.kv_head(h) + 1
                        )),
                        items,
                    }
                } else {
                    head_line(h, items)
                }
            }));
            out
        }
        // Two lines a head, queries then keys, so a turned matrix always sits beside its own.
        Stage::Rotary => heads
            .iter()
            .flat_map(|&h| {
                [
                    head_line(
                        h,
                        vec![
                            given(HeadMatrix::Q, h),
                            op("turn by φ →"),
                            head(HeadMatrix::QRope, h),
                        ],
                    ),
                    Line {
                        heading: None,
                        items: vec![
                            given(HeadMatrix::K, h),
                            op("turn by φ →"),
                            head(HeadMatrix::KRope, h),
                        ],
                    },
                ]
            })
            .collect(),
        // With rotary positions the scores read the turned rows.
        Stage::Scores => {
            let (q, kt) = if layout.rope {
                (HeadMatrix::QRope, HeadMatrix::KRopeTransposed)
            } else {
                (HeadMatrix::Q, HeadMatrix::KTransposed)
            };
            per_head(&|h| {
                vec![
                    given(q, h),
                    op("·"),
                    given(kt, h),
                    op("="),
                    head(HeadMatrix::Scores, h),
                ]
            })
        }
        Stage::Scale => {
            let div = trace.with_untracked(|t| match t.config.scale {
                ScaleMode::SqrtHeadDim => format!("÷ √{}", t.config.head_dim()),
                ScaleMode::SqrtSeqLen => format!("÷ √{}", t.n_keys()),
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
        _ => block_lines(p, trace, s),
    }
}

/// What a stage of the block draws: its operands, its parameters and its result.
fn block_lines(p: &Panels, trace: Memo<Trace>, s: Stage) -> Vec<Line> {
    use BlockMatrix as B;
    let pre = trace.with_untracked(|t| t.norm() == Some(Norm::Pre));
    let block = |b: B| p.block(b);
    let given = |b: B| Item::Given(p.block(b));
    let param = |q: BlockParam| Item::Given(p.block_param(q));
    let x = || Item::Given(p.whole(MatrixId::X, 1));
    let items = match s {
        Stage::Residual1 => vec![
            x(),
            op("+"),
            Item::Given(p.whole(MatrixId::Output, 1)),
            op("="),
            Item::Panel(block(B::Sum1)),
        ],
        Stage::Norm1 | Stage::Norm2 => {
            let (input, gamma, beta, out) = match (s, pre) {
                (Stage::Norm1, true) => (x(), BlockParam::Ln1Gamma, BlockParam::Ln1Beta, B::Norm1),
                (Stage::Norm1, false) => (
                    given(B::Sum1),
                    BlockParam::Ln1Gamma,
                    BlockParam::Ln1Beta,
                    B::Norm1,
                ),
                (_, true) => (
                    given(B::Sum1),
                    BlockParam::Ln2Gamma,
                    BlockParam::Ln2Beta,
                    B::Norm2,
                ),
                _ => (
                    given(B::Sum2),
                    BlockParam::Ln2Gamma,
                    BlockParam::Ln2Beta,
                    B::Norm2,
                ),
            };
            let rms = trace.with_untracked(|t| {
                t.block
                    .as_ref()
                    .is_some_and(|b| b.params.norm_type == NormType::RmsNorm)
            });
            // RMSNorm has a scale γ and no shift β.
            let (norm_op, params, heading) = if rms {
                ("RMSNorm →", vec![param(gamma)], "Per column: scale γ")
            } else {
                (
                    "LayerNorm →",
                    vec![param(gamma), param(beta)],
                    "Per column: scale γ and shift β",
                )
            };
            return vec![
                Line {
                    heading: None,
                    items: vec![input, op(norm_op), Item::Panel(block(out))],
                },
                Line {
                    heading: Some(heading.into()),
                    items: params,
                },
            ];
        }
        Stage::Hidden => vec![
            given(if pre { B::Norm2 } else { B::Norm1 }),
            op("·"),
            param(BlockParam::W1),
            op("+"),
            param(BlockParam::B1),
            op("="),
            Item::Panel(block(B::Hidden)),
        ],
        Stage::Activation => {
            // The gate reads the network's input: N₂ in pre-norm, N₁ in post-norm.
            let name = trace.with_untracked(|t| {
                t.block
                    .as_ref()
                    .map_or(String::new(), |b| match b.activation {
                        crate::attention::Activation::Relu => "ReLU →".into(),
                        crate::attention::Activation::Gelu => "GELU →".into(),
                        crate::attention::Activation::Swiglu => {
                            let n = if pre { "N₂" } else { "N₁" };
                            format!("⊙ SiLU({n}·W_gate) →")
                        }
                    })
            });
            let gated = trace.with_untracked(|t| {
                t.block
                    .as_ref()
                    .is_some_and(|b| b.activation == crate::attention::Activation::Swiglu)
            });
            if gated {
                return vec![
                    Line {
                        heading: None,
                        items: vec![
                            given(B::Hidden),
                            op(&name),
                            Item::Panel(block(B::Activated)),
                        ],
                    },
                    Line {
                        heading: Some("The gate's weights".into()),
                        items: vec![param(BlockParam::WGate)],
                    },
                ];
            }
            vec![
                given(B::Hidden),
                op(&name),
                Item::Panel(block(B::Activated)),
            ]
        }
        Stage::FeedForward => vec![
            given(B::Activated),
            op("·"),
            param(BlockParam::W2),
            op("+"),
            param(BlockParam::B2),
            op("="),
            Item::Panel(block(B::Ffn)),
        ],
        _ => vec![
            given(if pre { B::Sum1 } else { B::Norm1 }),
            op("+"),
            given(B::Ffn),
            op("="),
            Item::Panel(block(B::Sum2)),
        ],
    };
    vec![Line {
        heading: None,
        items,
    }]
}

/// All `n` heads' results of stage `s` in one row, on one colour scale, so specialisation shows.
pub(super) fn compare_line(p: &Panels, s: Stage, n: usize) -> Line {
    let m = match s {
        Stage::SplitHeads => HeadMatrix::Q,
        Stage::Rotary => HeadMatrix::QRope,
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
