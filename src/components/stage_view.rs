//! The current stage: title, formula, explanation, shapes, and its operands and result drawn
//! side by side.

use super::attention_lines::AttentionLines;
use super::heatmap::{HeatmapView, PanelData};
use crate::attention::{HeadMatrix, HeadTrace, Matrix, ScaleMode, Stage, Trace};
use crate::plot::Palette;
use crate::words::{
    shape_text, stage_explanation, stage_formula_mathml, stage_name, stage_note, subscript,
};
use leptos::prelude::*;

enum Item {
    Panel(PanelData),
    Op(String),
    Lines(usize),
}

struct Line {
    heading: Option<String>,
    items: Vec<Item>,
}

fn dims(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("d{}", i + 1)).collect()
}

fn empty() -> Matrix {
    Matrix::zeros(0, 0)
}

/// The current stage in full.
#[component]
pub fn StageView(
    /// The one trace.
    trace: Memo<Trace>,
    /// The stage to show.
    stage: RwSignal<Stage>,
    /// The head shown when there are too many to show at once.
    head: RwSignal<usize>,
) -> impl IntoView {
    let compare = RwSignal::new(false);
    let tokens: Signal<Vec<String>> = Memo::new(move |_| trace.with(|t| t.tokens.clone())).into();
    let layout = Memo::new(move |_| {
        trace.with(|t| {
            (
                t.config.n_heads,
                t.config.d_model,
                t.config.positional_encoding,
            )
        })
    });
    let max_abs = move |f: fn(&HeadTrace) -> &Matrix| -> Signal<f64> {
        Memo::new(move |_| {
            trace.with(|t| Palette::Diverging.range_for(t.heads.iter().flat_map(|h| f(h).iter())))
        })
        .into()
    };
    let scores_range = max_abs(|h| &h.scores);
    let scaled_range = max_abs(|h| &h.scaled);
    let context_range = max_abs(|h| &h.context);

    let whole = move |name: &str, title: &str, get: fn(&Trace) -> &Matrix, groups: usize| {
        let d = layout.get_untracked().1;
        PanelData {
            name: name.to_string(),
            title: title.to_string(),
            values: Memo::new(move |_| trace.with(|t| get(t).clone())).into(),
            rows: tokens,
            cols: Signal::derive(move || dims(0..d)),
            axes: ("tokens", "dimensions"),
            palette: Palette::Diverging,
            range: None,
            col_groups: groups,
            row_sums: false,
        }
    };
    let weight = move |name: &str, title: &str, get: fn(&Trace) -> &Matrix| {
        let d = layout.get_untracked().1;
        PanelData {
            name: name.to_string(),
            title: title.to_string(),
            values: Memo::new(move |_| trace.with(|t| get(t).clone())).into(),
            rows: Signal::derive(move || dims(0..d)),
            cols: Signal::derive(move || dims(0..d)),
            axes: ("input dims", "output dims"),
            palette: Palette::Diverging,
            range: None,
            col_groups: 1,
            row_sums: false,
        }
    };
    // A per-head matrix: `square` ones have key tokens on columns.
    let per_head = move |name: &str,
                         title: &str,
                         h: usize,
                         get: fn(&HeadTrace) -> &Matrix,
                         square: bool,
                         palette: Palette,
                         range: Option<Signal<f64>>| {
        let (n, d, _) = layout.get_untracked();
        let hd = d / n.max(1);
        PanelData {
            name: format!("{name}-h{h}"),
            title: format!("{title}{}", subscript(h + 1)),
            values: Memo::new(move |_| {
                trace.with(|t| t.heads.get(h).map(|x| get(x).clone()).unwrap_or_else(empty))
            })
            .into(),
            rows: tokens,
            cols: if square {
                tokens
            } else {
                Signal::derive(move || dims(h * hd..(h + 1) * hd))
            },
            axes: if square {
                ("queries", "keys")
            } else {
                ("tokens", "dimensions")
            },
            palette,
            range,
            col_groups: 1,
            row_sums: palette == Palette::Sequential,
        }
    };
    let key_transposed = move |h: usize| {
        let (n, d, _) = layout.get_untracked();
        let hd = d / n.max(1);
        PanelData {
            name: format!("kt-h{h}"),
            title: format!("K{}ᵀ", subscript(h + 1)),
            values: Memo::new(move |_| {
                trace.with(|t| {
                    t.heads
                        .get(h)
                        .map(|x| x.k.transpose())
                        .unwrap_or_else(empty)
                })
            })
            .into(),
            rows: Signal::derive(move || dims(h * hd..(h + 1) * hd)),
            cols: tokens,
            axes: ("dimensions", "keys"),
            palette: Palette::Diverging,
            range: None,
            col_groups: 1,
            row_sums: false,
        }
    };

    // Every per-head matrix is drawn the same way wherever it appears.
    let head_panel = move |m: HeadMatrix, h: usize| -> PanelData {
        let signed = Palette::Diverging;
        match m {
            HeadMatrix::Q => per_head("q", "Q", h, |x| &x.q, false, signed, None),
            HeadMatrix::K => per_head("k", "K", h, |x| &x.k, false, signed, None),
            HeadMatrix::KTransposed => key_transposed(h),
            HeadMatrix::V => per_head("v", "V", h, |x| &x.v, false, signed, None),
            HeadMatrix::Scores => per_head(
                "scores",
                "S",
                h,
                |x| &x.scores,
                true,
                signed,
                Some(scores_range),
            ),
            HeadMatrix::Scaled => per_head(
                "scaled",
                "Z",
                h,
                |x| &x.scaled,
                true,
                signed,
                Some(scaled_range),
            ),
            HeadMatrix::Masked => per_head(
                "masked",
                "M",
                h,
                |x| &x.masked,
                true,
                signed,
                Some(scaled_range),
            ),
            HeadMatrix::Weights => per_head(
                "weights",
                "A",
                h,
                |x| &x.weights,
                true,
                Palette::Sequential,
                None,
            ),
            HeadMatrix::Context => per_head(
                "context",
                "C",
                h,
                |x| &x.context,
                false,
                signed,
                Some(context_range),
            ),
        }
    };

    let op = |s: &str| Item::Op(s.to_string());
    let lines = move |s: Stage, heads: Vec<usize>| -> Vec<Line> {
        let (n, _, positional) = layout.get_untracked();
        let div = trace.with_untracked(|t| match t.config.scale {
            ScaleMode::SqrtHeadDim => format!("÷ √{}", t.config.head_dim()),
            ScaleMode::SqrtSeqLen => format!("÷ √{}", t.seq_len()),
            ScaleMode::None => "÷ 1".to_string(),
        });
        let head_line = |h: usize, items: Vec<Item>| Line {
            heading: Some(format!("Head {}", h + 1)),
            items,
        };
        match s {
            Stage::Input => {
                let mut items = vec![Item::Panel(whole(
                    "embeddings",
                    "E (embeddings)",
                    |t| &t.embeddings,
                    1,
                ))];
                if positional {
                    items.push(op("+"));
                    items.push(Item::Panel(whole(
                        "positional",
                        "P (positions)",
                        |t| t.positional.as_ref().unwrap_or(&t.embeddings),
                        1,
                    )));
                }
                items.push(op("="));
                items.push(Item::Panel(whole("x", "X", |t| &t.x, 1)));
                vec![Line {
                    heading: None,
                    items,
                }]
            }
            Stage::Projection => [
                (
                    "w_q",
                    "W_q",
                    "q",
                    "Q",
                    (|t: &Trace| &t.weights.w_q) as fn(&Trace) -> &Matrix,
                    (|t: &Trace| &t.q) as fn(&Trace) -> &Matrix,
                ),
                (
                    "w_k",
                    "W_k",
                    "k",
                    "K",
                    |t: &Trace| &t.weights.w_k,
                    |t: &Trace| &t.k,
                ),
                (
                    "w_v",
                    "W_v",
                    "v",
                    "V",
                    |t: &Trace| &t.weights.w_v,
                    |t: &Trace| &t.v,
                ),
            ]
            .into_iter()
            .map(|(wn, wt, rn, rt, w, r)| Line {
                heading: None,
                items: vec![
                    Item::Panel(whole(&format!("x-{rn}"), "X", |t| &t.x, 1)),
                    op("·"),
                    Item::Panel(weight(wn, wt, w)),
                    op("="),
                    Item::Panel(whole(rn, rt, r, n)),
                ],
            })
            .collect(),
            Stage::SplitHeads => {
                let mut out = vec![Line {
                    heading: Some("Before: one band of columns per head".into()),
                    items: vec![
                        Item::Panel(whole("q", "Q", |t| &t.q, n)),
                        Item::Panel(whole("k", "K", |t| &t.k, n)),
                        Item::Panel(whole("v", "V", |t| &t.v, n)),
                    ],
                }];
                out.extend(heads.iter().map(|&h| {
                    head_line(
                        h,
                        vec![
                            Item::Panel(head_panel(HeadMatrix::Q, h)),
                            Item::Panel(head_panel(HeadMatrix::K, h)),
                            Item::Panel(head_panel(HeadMatrix::V, h)),
                        ],
                    )
                }));
                out
            }
            Stage::Scores => heads
                .iter()
                .map(|&h| {
                    head_line(
                        h,
                        vec![
                            Item::Panel(head_panel(HeadMatrix::Q, h)),
                            op("·"),
                            Item::Panel(head_panel(HeadMatrix::KTransposed, h)),
                            op("="),
                            Item::Panel(head_panel(HeadMatrix::Scores, h)),
                        ],
                    )
                })
                .collect(),
            Stage::Scale => heads
                .iter()
                .map(|&h| {
                    head_line(
                        h,
                        vec![
                            Item::Panel(head_panel(HeadMatrix::Scores, h)),
                            op(&div),
                            Item::Panel(head_panel(HeadMatrix::Scaled, h)),
                        ],
                    )
                })
                .collect(),
            Stage::Mask => heads
                .iter()
                .map(|&h| {
                    head_line(
                        h,
                        vec![
                            Item::Panel(head_panel(HeadMatrix::Scaled, h)),
                            op("mask →"),
                            Item::Panel(head_panel(HeadMatrix::Masked, h)),
                        ],
                    )
                })
                .collect(),
            Stage::Softmax => heads
                .iter()
                .map(|&h| {
                    head_line(
                        h,
                        vec![
                            Item::Panel(head_panel(HeadMatrix::Masked, h)),
                            op("softmax →"),
                            Item::Panel(head_panel(HeadMatrix::Weights, h)),
                            Item::Lines(h),
                        ],
                    )
                })
                .collect(),
            Stage::WeightedSum => heads
                .iter()
                .map(|&h| {
                    head_line(
                        h,
                        vec![
                            Item::Panel(head_panel(HeadMatrix::Weights, h)),
                            op("·"),
                            Item::Panel(head_panel(HeadMatrix::V, h)),
                            op("="),
                            Item::Panel(head_panel(HeadMatrix::Context, h)),
                        ],
                    )
                })
                .collect(),
            Stage::Concat => {
                let mut items: Vec<Item> = Vec::new();
                for h in 0..n {
                    if h > 0 {
                        items.push(op("|"));
                    }
                    items.push(Item::Panel(head_panel(HeadMatrix::Context, h)));
                }
                vec![
                    Line {
                        heading: Some("The heads' results".into()),
                        items,
                    },
                    Line {
                        heading: Some("Side by side".into()),
                        items: vec![Item::Panel(whole("concat", "C", |t| &t.concat, n))],
                    },
                ]
            }
            Stage::OutputProjection => vec![Line {
                heading: None,
                items: vec![
                    Item::Panel(whole("concat", "C", |t| &t.concat, n)),
                    op("·"),
                    Item::Panel(weight("w_o", "W_o", |t| &t.weights.w_o)),
                    op("="),
                    Item::Panel(whole("output", "Y (output)", |t| &t.output, 1)),
                ],
            }],
        }
    };

    // All heads' results in one row, on one colour scale, so specialisation shows.
    let compare_line = move |s: Stage, n: usize| -> Line {
        let items = (0..n)
            .map(|h| {
                Item::Panel(match s {
                    Stage::SplitHeads => head_panel(HeadMatrix::Q, h),
                    Stage::Scores => head_panel(HeadMatrix::Scores, h),
                    Stage::Scale => head_panel(HeadMatrix::Scaled, h),
                    Stage::Mask => head_panel(HeadMatrix::Masked, h),
                    Stage::WeightedSum => head_panel(HeadMatrix::Context, h),
                    _ => head_panel(HeadMatrix::Weights, h),
                })
            })
            .collect();
        Line {
            heading: Some("Every head, same colour scale".into()),
            items,
        }
    };

    let picker = move || {
        let (n, _, _) = layout.get();
        let per_head_stage = stage.get().is_per_head();
        let compare_toggle = (per_head_stage && n > 1).then(|| {
            view! {
                <button type="button" class="compare-toggle" data-testid="compare-heads"
                    aria-pressed=move || compare.get().to_string()
                    on:click=move |_| compare.update(|c| *c = !*c)>
                    "Compare all heads"
                </button>
            }
        });
        let buttons = (n > 2 && per_head_stage && !compare.get()).then(|| {
            view! {
                <div class="head-picker" role="group" aria-label="Head to show">
                    {(0..n).map(|h| view! {
                        <button type="button" data-testid=format!("head-{h}")
                            aria-pressed=move || (head.get() == h).to_string()
                            on:click=move |_| head.set(h)>
                            {format!("Head {}", h + 1)}
                        </button>
                    }.into_any()).collect_view()}
                </div>
            }
        });
        view! { <div class="head-tools">{compare_toggle}{buttons}</div> }
    };

    let body = move || {
        let s = stage.get();
        let (n, _, _) = layout.get();
        let selected = head.get().min(n.saturating_sub(1));
        let heads: Vec<usize> = if n > 2 {
            vec![selected]
        } else {
            (0..n).collect()
        };
        let shown = if compare.get() && s.is_per_head() && n > 1 {
            vec![compare_line(s, n)]
        } else {
            lines(s, heads)
        };
        shown
            .into_iter()
            .map(|line| {
                let items = line
                    .items
                    .into_iter()
                    .map(|item| match item {
                        Item::Panel(data) => view! { <HeatmapView data /> }.into_any(),
                        Item::Op(text) => {
                            view! { <span class="op" aria-hidden="true">{text}</span> }.into_any()
                        }
                        Item::Lines(h) => view! { <AttentionLines trace head=h /> }.into_any(),
                    })
                    .collect_view();
                view! {
                    <div class="line">
                        {line.heading.map(|h| view! { <h3 class="line-heading">{h}</h3> }.into_any())}
                        <div class="equation">{items}</div>
                    </div>
                }
            })
            .collect_view()
    };

    let note = move || {
        let s = stage.get();
        trace.with(|t| stage_note(s, t))
    };
    let shapes = move || {
        let s = stage.get();
        trace.with(|t| shape_text(s, t.seq_len(), t.config.d_model, t.config.n_heads))
    };

    view! {
        <article class="stage" data-testid="stage-view" aria-labelledby="stage-title">
            <header class="stage-header">
                <p class="stage-kicker">{move || format!("Stage {} of 10", stage.get().index() + 1)}</p>
                <h2 id="stage-title" data-testid="stage-title" tabindex="-1">{move || stage_name(stage.get())}</h2>
                <div class="formula" data-testid="formula"
                    inner_html=move || format!("<math display=\"block\">{}</math>", stage_formula_mathml(stage.get()))>
                </div>
                <p class="explanation" data-testid="explanation">{move || stage_explanation(stage.get())}</p>
                <p class="shapes" data-testid="shapes">{shapes}</p>
                <p class="note" data-testid="stage-note">{note}</p>
            </header>
            {picker}
            <div class="stage-body">{body}</div>
        </article>
    }
}
