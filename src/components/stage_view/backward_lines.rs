//! What each backward stage draws: the gradients it computes, beside the gradients and forward
//! matrices it reads, one line per head for the per-head stages; or, where the chosen loss does
//! not reach the stage, a sentence that says so.

use super::line::{op, Item, Line};
use super::panel_data::Panels;
use crate::attention::{
    BackMatrix, HeadGrad, HeadMatrix, LossKind, MatrixId, Norm, ScaleMode, Stage, Trace,
};
use crate::components::heatmap::PanelData;
use crate::words::{subscript, unreached_text, GoalSource};
use leptos::prelude::*;

/// The matrix the whole of `m` is drawn with: `p.whole`, or `p.block` for N₁.
fn input_panel(p: &Panels, m: MatrixId) -> Item {
    match m {
        MatrixId::Block(b) => Item::Given(p.block(b)),
        m => Item::Given(p.whole(m, 1)),
    }
}

/// What backward stage `s` draws for the heads in `heads`, for a loss of `kind` whose goal comes
/// from `source`.
pub(super) fn backward_lines(
    p: &Panels,
    trace: Memo<Trace>,
    s: Stage,
    heads: &[usize],
    kind: LossKind,
    source: GoalSource,
) -> Vec<Line> {
    if let Some(text) = unreached_text(s, kind, source) {
        return vec![Line {
            heading: None,
            items: vec![Item::Text(text)],
        }];
    }
    let pattern = kind == LossKind::Pattern;
    let back = |m: BackMatrix| Item::Panel(p.back(m));
    let given_back = |m: BackMatrix| Item::Given(p.back(m));
    let fwd = |m: HeadMatrix, h: usize| Item::Given(p.head(m, h));
    let heading = |h: usize| Some(format!("Head {}", h + 1));
    let (config, wiring) = trace.with_untracked(|t| (t.config, t.wiring()));
    let mut lines = Vec::new();
    match s {
        Stage::BackLoss if pattern => {
            for &h in heads {
                lines.push(Line {
                    heading: heading(h),
                    items: vec![
                        fwd(HeadMatrix::Weights, h),
                        op("and"),
                        given_back(BackMatrix::TargetPattern(h)),
                        op("→"),
                        back(BackMatrix::Head(h, HeadGrad::Weights)),
                    ],
                });
            }
        }
        Stage::BackLoss => lines.push(Line {
            heading: None,
            items: vec![
                Item::Given(p.whole(MatrixId::Output, 1)),
                op("and"),
                given_back(BackMatrix::TaskTarget),
                op("→"),
                back(BackMatrix::Output),
            ],
        }),
        Stage::BackOutput => {
            let n = config.n_heads;
            lines.push(Line {
                heading: Some("∂L/∂W_o = Cᵀ·∂L/∂Y".into()),
                items: vec![
                    Item::Given(p.whole(MatrixId::Concat, n)),
                    op("with"),
                    given_back(BackMatrix::Output),
                    op("→"),
                    back(BackMatrix::WO),
                ],
            });
            lines.push(Line {
                heading: Some("∂L/∂C = ∂L/∂Y·W_oᵀ".into()),
                items: vec![
                    Item::Given(p.weight(crate::attention::WeightName::O)),
                    op("→"),
                    back(BackMatrix::Concat),
                ],
            });
        }
        Stage::BackWeightedSum => {
            for &h in heads {
                lines.push(Line {
                    heading: heading(h),
                    items: vec![
                        given_back(BackMatrix::Head(h, HeadGrad::Context)),
                        op("·"),
                        fwd(HeadMatrix::V, h),
                        op("ᵀ ="),
                        back(BackMatrix::Head(h, HeadGrad::Weights)),
                    ],
                });
                lines.push(Line {
                    heading: None,
                    items: vec![
                        fwd(HeadMatrix::Weights, h),
                        op(&format!("ᵀ · ∂L/∂C{} =", subscript(h + 1))),
                        back(BackMatrix::Head(h, HeadGrad::V)),
                    ],
                });
            }
        }
        Stage::BackSoftmax => {
            for &h in heads {
                let read = if pattern {
                    given_back(BackMatrix::TargetPattern(h))
                } else {
                    given_back(BackMatrix::Head(h, HeadGrad::Weights))
                };
                lines.push(Line {
                    heading: heading(h),
                    items: vec![
                        fwd(HeadMatrix::Weights, h),
                        op("and"),
                        read,
                        op("→"),
                        back(BackMatrix::Head(h, HeadGrad::Masked)),
                    ],
                });
            }
        }
        Stage::BackScale => {
            let div = match config.scale {
                ScaleMode::SqrtHeadDim => format!("÷ √{}", config.head_dim()),
                ScaleMode::SqrtSeqLen => {
                    format!("÷ √{}", trace.with_untracked(|t| t.n_keys()))
                }
                ScaleMode::None => "÷ 1".to_string(),
            };
            for &h in heads {
                lines.push(Line {
                    heading: heading(h),
                    items: vec![
                        given_back(BackMatrix::Head(h, HeadGrad::Masked)),
                        op(&div),
                        back(BackMatrix::Head(h, HeadGrad::Scores)),
                    ],
                });
            }
        }
        // With rotary positions the products give the turned rows' gradients, which are then
        // turned back.
        Stage::BackScores => {
            let (q, k) = if wiring.rope {
                (HeadMatrix::QRope, HeadMatrix::KRope)
            } else {
                (HeadMatrix::Q, HeadMatrix::K)
            };
            for &h in heads {
                let grad = |g: HeadGrad| back(BackMatrix::Head(h, g));
                let turned_back = |turned: HeadGrad, unturned: HeadGrad| {
                    if wiring.rope {
                        vec![grad(turned), op("turn back →"), grad(unturned)]
                    } else {
                        vec![grad(unturned)]
                    }
                };
                let mut queries = vec![
                    given_back(BackMatrix::Head(h, HeadGrad::Scores)),
                    op("·"),
                    fwd(k, h),
                    op("="),
                ];
                queries.extend(turned_back(HeadGrad::QRope, HeadGrad::Q));
                let mut keys = vec![fwd(q, h), op("with (∂L/∂Sₕ)ᵀ →")];
                keys.extend(turned_back(HeadGrad::KRope, HeadGrad::K));
                lines.push(Line {
                    heading: heading(h),
                    items: queries,
                });
                lines.push(Line {
                    heading: None,
                    items: keys,
                });
            }
        }
        Stage::BackProjection => {
            let (q_in, k_in) = trace.with_untracked(|t| {
                (
                    crate::attention::query_input(t.wiring()),
                    crate::attention::key_input(t.wiring()),
                )
            });
            let mut read = vec![input_panel(p, q_in)];
            if k_in != q_in {
                read.push(input_panel(p, k_in));
            }
            lines.push(Line {
                heading: Some("What the projections read".into()),
                items: read,
            });
            let (qs, ks) = (wiring.query_input(), wiring.key_input());
            let mut products = vec![
                (
                    BackMatrix::Q,
                    BackMatrix::WQ,
                    format!("∂L/∂W_q = {qs}ᵀ·∂L/∂Q"),
                ),
                (
                    BackMatrix::K,
                    BackMatrix::WK,
                    format!("∂L/∂W_k = {ks}ᵀ·∂L/∂K"),
                ),
            ];
            if !pattern {
                products.push((
                    BackMatrix::V,
                    BackMatrix::WV,
                    format!("∂L/∂W_v = {ks}ᵀ·∂L/∂V"),
                ));
            }
            for (d_out, d_w, title) in products {
                lines.push(Line {
                    heading: Some(title),
                    items: vec![back(d_out), op("→"), back(d_w)],
                });
            }
            // On paper the stage's note says it, and the page keeps to one sheet.
            if pattern && source != GoalSource::Paper {
                lines.push(Line {
                    heading: Some("∂L/∂W_v".into()),
                    items: vec![Item::Text(
                        "Not reached by the pattern loss: it compares only A with A*, and A is computed from Q and K alone, never from V, so ∂L/∂W_v is exactly 0.".into(),
                    )],
                });
            }
        }
        _ => {
            let pre = wiring.block == Some(Norm::Pre);
            let cross = wiring.cross;
            let mut reads = vec![given_back(BackMatrix::Q)];
            let mut kv = vec![given_back(BackMatrix::K)];
            if !pattern {
                kv.push(given_back(BackMatrix::V));
            }
            if !cross {
                reads.append(&mut kv);
            }
            let d_in = if pre {
                BackMatrix::Norm1
            } else {
                BackMatrix::X
            };
            reads.push(op("→"));
            reads.push(back(d_in));
            lines.push(Line {
                heading: Some(format!(
                    "∂L/∂{}: every projection that read it sends its gradient back",
                    wiring.query_input()
                )),
                items: reads,
            });
            if pre {
                // The norm by the name the block's settings give it.
                let norm = match wiring.norm_type {
                    crate::attention::NormType::RmsNorm => "RMSNorm₁",
                    crate::attention::NormType::LayerNorm => "LN₁",
                };
                lines.push(Line {
                    heading: Some(format!("Back through {norm}")),
                    items: vec![
                        given_back(BackMatrix::Norm1),
                        op("and"),
                        Item::Given(p.whole(MatrixId::X, 1)),
                        op(&format!("{norm}\nbackward →")),
                        back(BackMatrix::X),
                    ],
                });
            }
            if cross {
                kv.push(op("→"));
                kv.push(back(BackMatrix::SourceX));
                lines.push(Line {
                    heading: Some("∂L/∂X_src: from the keys and values".into()),
                    items: kv,
                });
            }
            let target_path = |own: bool| -> Vec<Item> {
                if !pattern && own {
                    vec![given_back(BackMatrix::ViaTarget), op("+ ∂L/∂X →")]
                } else {
                    Vec::new()
                }
            };
            let mut e = target_path(!cross);
            e.push(back(BackMatrix::Embeddings));
            lines.push(Line {
                heading: Some(if !pattern && !cross {
                    "∂L/∂E = ∂L/∂X + Πᵀ·∂L/∂Y*".into()
                } else {
                    "∂L/∂E = ∂L/∂X".into()
                }),
                items: e,
            });
            if cross {
                let mut e_src = target_path(true);
                if !pattern {
                    e_src.pop();
                    e_src.push(op("+ ∂L/∂X_src →"));
                }
                e_src.push(back(BackMatrix::SourceEmbeddings));
                lines.push(Line {
                    heading: Some(if pattern {
                        "∂L/∂E_src = ∂L/∂X_src".into()
                    } else {
                        "∂L/∂E_src = ∂L/∂X_src + Πᵀ·∂L/∂Y*".into()
                    }),
                    items: e_src,
                });
            }
        }
    }
    lines
}

/// The one part of backward stage `s` that presenter mode shows at step `part`, from the
/// stage's `lines`: at the output projection ∂L/∂W_o or ∂L/∂C, each written as its product
/// (see [`BackMatrix::OUTPUT_RESULTS`]); at the projection one weight's gradient, on one line
/// with the input the weight read (see [`BackMatrix::PROJECTION_RESULTS`]), the last followed
/// by what the stage says of the weights the loss does not reach; at the input one of its lines
/// (see [`BackMatrix::input_results`]). Other stages are shown whole.
pub(super) fn presenter_part(mut lines: Vec<Line>, s: Stage, part: usize) -> Vec<Line> {
    let has_panels = |line: &Line| line.items.iter().any(|i| matches!(i, Item::Panel(_)));
    match s {
        Stage::BackOutput if lines.len() == 2 && lines.iter().all(has_panels) => {
            let part = part.min(1);
            let heading = lines[part].heading.take();
            let items: Vec<Item> = lines.into_iter().flat_map(|l| l.items).collect();
            // C with ∂L/∂Y → ∂L/∂W_o, then W_o → ∂L/∂C, which reads the first line's ∂L/∂Y.
            let items = match <[Item; 8]>::try_from(items) {
                Ok([c, _, d_y, _, d_w_o, ..]) if part == 0 => {
                    vec![c, op("ᵀ ·"), d_y, op("→"), d_w_o]
                }
                Ok([_, _, d_y, _, _, w_o, _, d_c]) => vec![d_y, op("·"), w_o, op("ᵀ →"), d_c],
                Err(items) => items,
            };
            vec![Line { heading, items }]
        }
        Stage::BackProjection if lines.len() > 1 && has_panels(&lines[1]) => {
            let read = lines.remove(0);
            let (products, sentences): (Vec<Line>, Vec<Line>) =
                lines.into_iter().partition(|l| has_panels(l));
            let last = products.len() - 1;
            let part = part.min(last);
            let mut line = products.into_iter().nth(part).expect("part ≤ last");
            // Queries read the first input, keys and values the last.
            let input = if part == 0 {
                read.items.into_iter().next()
            } else {
                read.items.into_iter().last()
            };
            // The gradient the weight's reads came from is an operand here, which may be drawn
            // smaller so the weight's gradient can be read from afar.
            line.items = line
                .items
                .into_iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Item::Panel(data) if i == 0 => Item::Given(data),
                    item => item,
                })
                .collect();
            if let Some(input) = input {
                line.items.splice(0..0, [input, op("ᵀ ·")]);
            }
            let mut shown = vec![line];
            if part == last {
                shown.extend(sentences);
            }
            shown
        }
        Stage::BackInput if !lines.is_empty() => {
            let part = part.min(lines.len() - 1);
            // The gradients the earlier lines computed, which the step no longer shows.
            let earlier: Vec<PanelData> = lines[..part]
                .iter()
                .filter_map(|l| {
                    l.items.iter().rev().find_map(|i| match i {
                        Item::Panel(data) => Some(data.clone()),
                        _ => None,
                    })
                })
                .collect();
            let mut line = lines.swap_remove(part);
            read_earlier_gradient(&mut line, &earlier);
            vec![line]
        }
        _ => lines,
    }
}

/// Gives a line of ∂L/∂E (or ∂L/∂E_src) the ∂L/∂X it equals, or adds to, as its operand, taken
/// from `earlier`: presenter mode shows the line alone, without the line above that made it.
fn read_earlier_gradient(line: &mut Line, earlier: &[PanelData]) {
    let name = |m: BackMatrix| crate::panels::panel_name(MatrixId::Back(m));
    let Some(Item::Panel(result)) = line.items.last() else {
        return;
    };
    let read = if result.name == name(BackMatrix::Embeddings) {
        name(BackMatrix::X)
    } else if result.name == name(BackMatrix::SourceEmbeddings) {
        name(BackMatrix::SourceX)
    } else {
        return;
    };
    let Some(gradient) = earlier.iter().find(|d| d.name == read) else {
        return;
    };
    let shown = Item::Given(gradient.clone());
    let result_at = line.items.len() - 1;
    match line.items.get(result_at.wrapping_sub(1)) {
        // ∂L/∂E = ∂L/∂X: the gradient, then "=".
        None => {
            line.items.splice(0..0, [shown, op("=")]);
        }
        // The task's path through its target, "+ ∂L/∂X →": the gradient between "+" and "→".
        Some(Item::Op(_)) => {
            line.items
                .splice(result_at - 1..result_at, [op("+"), shown, op("→")]);
        }
        Some(_) => {}
    }
}

/// Every head's result of backward stage `s` in one row, on one colour scale; `None` where the
/// stage has no per-head result for the loss.
pub(super) fn backward_compare_line(
    p: &Panels,
    s: Stage,
    n: usize,
    kind: LossKind,
) -> Option<Line> {
    let g = match s {
        Stage::BackWeightedSum if kind == LossKind::Task => HeadGrad::Weights,
        Stage::BackSoftmax => HeadGrad::Masked,
        Stage::BackScale => HeadGrad::Scores,
        Stage::BackScores => HeadGrad::Q,
        _ => return None,
    };
    Some(Line {
        heading: Some("Every head, same colour scale".into()),
        items: (0..n)
            .map(|h| Item::Panel(p.back_compared(BackMatrix::Head(h, g))))
            .collect(),
    })
}
