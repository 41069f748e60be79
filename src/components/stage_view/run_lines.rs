//! The lines of the two stages that run attention another way: a decoding step (the cache,
//! each head's query, scores, weights and weighted sum, the output beside the whole sentence's)
//! and the tiles (a query row's inputs, what is kept after each block, the result beside the
//! weighted sum's row).

use super::line::{op, Item, Line};
use super::panel_data::Panels;
use crate::attention::{kv_head_of, row_tiles, DecodeStep, HeadMatrix, Matrix, Trace};
use crate::components::context::{run_context, RunContext};
use crate::components::heatmap::PanelData;
use crate::plot::{Palette, Reserve};
use crate::words::{
    cached_key_label, decode_heading, decode_nothing, dim, run_panel_title, tiles_heading,
    token_labels, DecodeLine, RunPanel,
};
use leptos::prelude::*;

fn dims(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(dim).collect()
}

/// A panel of numbers that belong to one view only: tokens or blocks for rows.
fn panel(
    name: String,
    title: String,
    values: Signal<Matrix>,
    rows: Signal<Vec<String>>,
    cols: Signal<Vec<String>>,
    axes: (&'static str, &'static str),
) -> PanelData {
    PanelData::signed(name, title, values, (rows, cols), axes)
}

/// A line saying why there is nothing to draw.
fn text_line(text: String) -> Vec<Line> {
    vec![Line {
        heading: None,
        items: vec![Item::Text(text)],
    }]
}

/// The decoding step shown, where there is one.
fn shown_step(trace: Memo<Trace>, run: RunContext) -> Memo<Option<DecodeStep>> {
    Memo::new(move |_| {
        let seq_len = trace.with(|t| t.seq_len());
        run.decode.with(|d| match d {
            Some(Ok(d)) => {
                let row = run.decoded_row(d.prefill, seq_len);
                d.steps.iter().find(|s| s.position == row).cloned()
            }
            _ => None,
        })
    })
}

/// The lines of a decoding step, for the query heads in `heads`.
pub(super) fn decode_lines(p: &Panels, trace: Memo<Trace>, heads: &[usize]) -> Vec<Line> {
    let Some(run) = run_context() else {
        return Vec::new();
    };
    // Whether there is a step to show: the lines are made again when that changes.
    let problem = run.decode.with(|d| match d {
        Some(Ok(d)) if d.steps.is_empty() => Some(decode_nothing(d.prefill, d.prefill)),
        Some(Ok(_)) => None,
        Some(Err(e)) => Some(e.clone()),
        None => Some(String::new()),
    });
    if let Some(text) = problem {
        return text_line(text);
    }
    let step = shown_step(trace, run);
    let layout = p.layout().get_untracked();
    let (n, g_count, d) = (layout.n_heads, layout.n_kv_heads, layout.d_model);
    let dk = d / n.max(1);
    let (rope, grouped) = (layout.rope, g_count < n);
    let tokens = Memo::new(move |_| trace.with(|t| token_labels(&t.tokens)));
    let position = Memo::new(move |_| step.with(|s| s.as_ref().map_or(0, |s| s.position)));
    let cached_tokens: Signal<Vec<String>> = Signal::derive(move || {
        let i = position.get();
        tokens.with(|t| t.iter().take(i + 1).cloned().collect())
    });
    // The scores name the keys the window hides from the token decoded.
    let scored_tokens: Signal<Vec<String>> = Signal::derive(move || {
        let i = position.get();
        let window = trace.with(|t| t.config.window);
        tokens.with(|t| {
            t.iter()
                .take(i + 1)
                .enumerate()
                .map(|(j, label)| cached_key_label(label, window.is_some_and(|w| j + w <= i)))
                .collect()
        })
    });
    let new_token: Signal<Vec<String>> = Signal::derive(move || {
        tokens.with(|t| t.get(position.get()).cloned().into_iter().collect())
    });
    let of_step = move |f: fn(&DecodeStep) -> Matrix| -> Signal<Matrix> {
        Memo::new(move |_| step.with(|s| s.as_ref().map_or_else(|| Matrix::zeros(0, 0), f))).into()
    };
    let head_values =
        move |h: usize, f: fn(&crate::attention::DecodeHead) -> &Matrix| -> Signal<Matrix> {
            Memo::new(move |_| {
                step.with(|s| {
                    s.as_ref()
                        .and_then(|s| s.heads.get(h))
                        .map_or_else(|| Matrix::zeros(0, 0), |x| f(x).clone())
                })
            })
            .into()
        };
    let head_dims = move |owner: usize| -> Signal<Vec<String>> {
        Signal::derive(move || dims(owner * dk..(owner + 1) * dk))
    };
    let title = |panel: RunPanel| run_panel_title(panel, rope);
    // The room each panel keeps over every step: the sentence's longest token and the widest
    // number the panel shows at any step, so stepping changes the numbers, not where they are.
    let label_room =
        Memo::new(move |_| tokens.with(|t| t.iter().map(|l| l.chars().count()).max().unwrap_or(0)));
    let reserve_over = move |shown: fn(&DecodeStep, usize) -> Option<&Matrix>,
                             which: usize,
                             palette: Palette|
          -> Option<Signal<Reserve>> {
        let reserve = Memo::new(move |_| {
            let label_chars = label_room.get();
            run.decode.with(|d| match d {
                Some(Ok(d)) => d
                    .steps
                    .iter()
                    .filter_map(|s| shown(s, which))
                    .map(|m| Reserve::of(m, palette, 2, label_chars))
                    .fold(Reserve::default(), Reserve::max),
                _ => Reserve::default(),
            })
        });
        Some(reserve.into())
    };

    // The caches the shown heads read, each once.
    let mut groups: Vec<usize> = heads.iter().map(|&h| kv_head_of(h, n, g_count)).collect();
    groups.dedup();
    let mut cache_items = Vec::new();
    for &g in &groups {
        let cache = move |keys: bool| -> Signal<Matrix> {
            Memo::new(move |_| {
                step.with(|s| {
                    s.as_ref()
                        .and_then(|s| {
                            if keys {
                                s.k_cache.get(g)
                            } else {
                                s.v_cache.get(g)
                            }
                        })
                        .cloned()
                        .unwrap_or_else(|| Matrix::zeros(0, 0))
                })
            })
            .into()
        };
        cache_items.push(Item::Panel(PanelData {
            reserve: reserve_over(|s, g| s.k_cache.get(g), g, Palette::Diverging),
            ..panel(
                format!("dec-k-g{g}"),
                title(RunPanel::KeyCache(g)),
                cache(true),
                cached_tokens,
                head_dims(g),
                ("tokens", "dimensions"),
            )
        }));
        cache_items.push(Item::Panel(PanelData {
            reserve: reserve_over(|s, g| s.v_cache.get(g), g, Palette::Diverging),
            ..panel(
                format!("dec-v-g{g}"),
                title(RunPanel::ValueCache(g)),
                cache(false),
                cached_tokens,
                head_dims(g),
                ("tokens", "dimensions"),
            )
        }));
    }
    let mut lines = vec![Line {
        heading: Some(decode_heading(DecodeLine::Cache, grouped)),
        items: cache_items,
    }];
    for &h in heads {
        let g = kv_head_of(h, n, g_count);
        let items = vec![
            Item::Given(PanelData {
                reserve: reserve_over(|s, h| s.heads.get(h).map(|x| &x.q), h, Palette::Diverging),
                ..panel(
                    format!("dec-q-h{h}"),
                    title(RunPanel::Query(h)),
                    head_values(h, |x| &x.q),
                    new_token,
                    head_dims(h),
                    ("token", "dimensions"),
                )
            }),
            op(if rope { "· K̃ᵀ =" } else { "· Kᵀ =" }),
            Item::Panel(PanelData {
                reserve: reserve_over(
                    |s, h| s.heads.get(h).map(|x| &x.scores),
                    h,
                    Palette::Diverging,
                ),
                ..panel(
                    format!("dec-s-h{h}"),
                    title(RunPanel::Scores(h)),
                    head_values(h, |x| &x.scores),
                    new_token,
                    scored_tokens,
                    ("query", "keys"),
                )
            }),
            op("→"),
            Item::Panel(PanelData {
                palette: Palette::Sequential,
                row_sums: true,
                reserve: reserve_over(
                    |s, h| s.heads.get(h).map(|x| &x.weights),
                    h,
                    Palette::Sequential,
                ),
                ..panel(
                    format!("dec-a-h{h}"),
                    title(RunPanel::Weights(h)),
                    head_values(h, |x| &x.weights),
                    new_token,
                    cached_tokens,
                    ("query", "keys"),
                )
            }),
            op("· V ="),
            Item::Panel(PanelData {
                reserve: reserve_over(
                    |s, h| s.heads.get(h).map(|x| &x.context),
                    h,
                    Palette::Diverging,
                ),
                ..panel(
                    format!("dec-c-h{h}"),
                    title(RunPanel::Context(h)),
                    head_values(h, |x| &x.context),
                    new_token,
                    head_dims(h),
                    ("token", "dimensions"),
                )
            }),
        ];
        lines.push(Line {
            heading: Some(decode_heading(DecodeLine::Head { h, g }, grouped)),
            items,
        });
    }
    let full: Signal<Matrix> = Memo::new(move |_| {
        let i = position.get();
        trace.with(|t| {
            if i < t.output.nrows() {
                t.output.rows(i, 1).into_owned()
            } else {
                Matrix::zeros(0, 0)
            }
        })
    })
    .into();
    // The whole sentence's row equals the step's: both keep the same room, worked out once.
    let output_room = reserve_over(|s, _| Some(&s.output), 0, Palette::Diverging);
    lines.push(Line {
        heading: Some(decode_heading(DecodeLine::Output, grouped)),
        items: vec![
            Item::Panel(PanelData {
                reserve: output_room,
                ..panel(
                    "dec-y".into(),
                    title(RunPanel::Output),
                    of_step(|s| s.output.clone()),
                    new_token,
                    Signal::derive(move || dims(0..d)),
                    ("token", "dimensions"),
                )
            }),
            op("="),
            Item::Panel(PanelData {
                reserve: output_room,
                ..panel(
                    "dec-full-y".into(),
                    title(RunPanel::FullOutput),
                    full,
                    new_token,
                    Signal::derive(move || dims(0..d)),
                    ("token", "dimensions"),
                )
            }),
        ],
    });
    lines
}

/// The tiles of one query row of head `h`, after each block.
#[derive(PartialEq)]
struct Tiled {
    /// The softmax inputs. (1, n)
    inputs: Matrix,
    /// m, the rescale factor and ℓ after each block. (blocks, 3)
    state: Matrix,
    /// o after each block. (blocks, d_k)
    running: Matrix,
    /// o ÷ ℓ after the last block. (1, d_k)
    result: Matrix,
    /// The weighted sum's row. (1, d_k)
    full: Matrix,
}

fn tiled(t: &Trace, h: usize, row: usize, block: usize) -> Option<Tiled> {
    let head = t.heads.get(h)?;
    let row_tiles = &row_tiles(head, t.config.temperature, block, row)?;
    let n = head.masked.ncols();
    let d_k = head.v.ncols();
    let state = Matrix::from_fn(row_tiles.len(), 3, |b, c| {
        let tile = &row_tiles[b];
        let before = if b == 0 {
            f64::NEG_INFINITY
        } else {
            row_tiles[b - 1].m
        };
        match c {
            0 => tile.m,
            1 => crate::attention::rescale(before, tile.m),
            _ => tile.l,
        }
    });
    Some(Tiled {
        inputs: Matrix::from_fn(1, n, |_, j| head.masked[(row, j)] / t.config.temperature),
        state,
        running: Matrix::from_fn(row_tiles.len(), d_k, |b, c| row_tiles[b].o[c]),
        result: Matrix::from_row_slice(1, d_k, &row_tiles.last()?.output()),
        full: head.context.rows(row, 1).into_owned(),
    })
}

/// The lines of the tiles, for the first head of `heads`.
pub(super) fn tiles_lines(p: &Panels, trace: Memo<Trace>, heads: &[usize]) -> Vec<Line> {
    let Some(run) = run_context() else {
        return Vec::new();
    };
    let Some(&h) = heads.first() else {
        return Vec::new();
    };
    let layout = p.layout().get_untracked();
    let n = layout.n_heads;
    let dk = layout.d_model / n.max(1);
    let block = run.tile.get().unwrap_or(1).max(1);
    let data = Memo::new(move |_| {
        let seq_len = trace.with(|t| t.seq_len());
        let row = run.tiled_row(seq_len);
        let b = run.tile.get().unwrap_or(1).max(1);
        trace.with(|t| tiled(t, h, row, b))
    });
    let values = move |f: fn(&Tiled) -> &Matrix| -> Signal<Matrix> {
        Memo::new(move |_| {
            data.with(|d| {
                d.as_ref()
                    .map_or_else(|| Matrix::zeros(0, 0), |d| f(d).clone())
            })
        })
        .into()
    };
    let tokens = Memo::new(move |_| trace.with(|t| token_labels(&t.tokens)));
    let row = Memo::new(move |_| run.tiled_row(trace.with(|t| t.seq_len())));
    let query: Signal<Vec<String>> =
        Signal::derive(move || tokens.with(|t| t.get(row.get()).cloned().into_iter().collect()));
    let keys: Signal<Vec<String>> = tokens.into();
    let blocks: Signal<Vec<String>> = Signal::derive(move || {
        let (b, n_keys) = (
            run.tile.get().unwrap_or(1).max(1),
            trace.with(|t| t.n_keys()),
        );
        (0..n_keys.div_ceil(b))
            .map(|k| {
                let (first, last) = (k * b + 1, ((k + 1) * b).min(n_keys));
                if first == last {
                    format!("block {} (key {first})", k + 1)
                } else {
                    format!("block {} (keys {first}–{last})", k + 1)
                }
            })
            .collect()
    });
    // o and C are the query head's columns of the concatenation.
    let head_dims: Signal<Vec<String>> = Signal::derive(move || dims(h * dk..(h + 1) * dk));
    let title = |panel: RunPanel| run_panel_title(panel, layout.rope);
    vec![
        Line {
            heading: Some(tiles_heading(0, h, block)),
            items: vec![
                Item::Panel(panel(
                    format!("tile-x-h{h}"),
                    title(RunPanel::Inputs(h)),
                    values(|d| &d.inputs),
                    query,
                    keys,
                    ("query", "keys"),
                )),
                Item::Given(p.head(HeadMatrix::V, h)),
            ],
        },
        Line {
            heading: Some(tiles_heading(1, h, block)),
            items: vec![
                Item::Panel(PanelData {
                    decimals: 3,
                    ..panel(
                        format!("tile-state-h{h}"),
                        title(RunPanel::State),
                        values(|d| &d.state),
                        blocks,
                        Signal::derive(|| vec!["m".into(), "e^(m − m′)".into(), "ℓ".into()]),
                        ("blocks", "kept"),
                    )
                }),
                Item::Panel(panel(
                    format!("tile-o-h{h}"),
                    title(RunPanel::Running),
                    values(|d| &d.running),
                    blocks,
                    head_dims,
                    ("blocks", "dimensions"),
                )),
            ],
        },
        Line {
            heading: Some(tiles_heading(2, h, block)),
            items: vec![
                Item::Panel(panel(
                    format!("tile-out-h{h}"),
                    title(RunPanel::Result),
                    values(|d| &d.result),
                    query,
                    head_dims,
                    ("query", "dimensions"),
                )),
                op("="),
                Item::Panel(panel(
                    format!("tile-c-h{h}"),
                    title(RunPanel::FullContext(h)),
                    values(|d| &d.full),
                    query,
                    head_dims,
                    ("query", "dimensions"),
                )),
            ],
        },
    ]
}
