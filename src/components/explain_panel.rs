//! The arithmetic behind the selected cell, announced to screen readers.

use super::context::{run_context, ui_context, RunContext, Selection, SelectionContext};
use crate::attention::{BackwardPass, MatrixId, Trace};
use crate::panels;
use crate::plot::Highlight;
use crate::words::{
    explain, explain_back, explain_tile, run_cell_note, Explanation, RunCell, TileCell, NO_CELL,
};
use leptos::prelude::*;
use leptos_use_intersection_observer::{
    use_intersection_observer_with_options, UseIntersectionObserverOptions,
};

/// The explanation of `selection` in `trace`, if the cell exists.
pub fn explain_selection(trace: &Trace, selection: &Selection) -> Option<Explanation> {
    if let Some(run) = run_context() {
        if selection.panel.starts_with("dec-") || selection.panel.starts_with("tile-") {
            return explain_run(trace, selection, run);
        }
    }
    let matrix = panels::parse(&selection.panel)?;
    explain(trace, matrix, selection.row, selection.col)
}

/// The explanation of a cell of the decoding stage or of the tiles: the whole pass's cell it
/// equals, or the arithmetic of what the tiles keep.
fn explain_run(trace: &Trace, s: &Selection, run: RunContext) -> Option<Explanation> {
    let c = &trace.config;
    let per_group = c.n_heads / c.n_kv_heads().max(1);
    let seq_len = trace.seq_len();
    let decoding = s.panel.starts_with("dec-");
    let at = if decoding {
        let prefill = run
            .decode
            .with(|d| d.as_ref()?.as_ref().ok().map(|d| d.prefill))?;
        run.decoded_row(prefill, seq_len)
    } else {
        run.tiled_row(seq_len)
    };
    let kept = |prefix: &str| -> Option<usize> { s.panel.strip_prefix(prefix)?.parse().ok() };
    if let Some(h) = kept("tile-state-h") {
        let cell = match s.col {
            0 => TileCell::Max,
            1 => TileCell::Rescale,
            _ => TileCell::Sum,
        };
        return explain_tile(trace, (h, at), run.tile.get()?, s.row, cell);
    }
    if let Some(h) = kept("tile-out-h") {
        return explain_tile(trace, (h, at), run.tile.get()?, 0, TileCell::Result(s.col));
    }
    if let Some(h) = kept("tile-o-h") {
        let cell = TileCell::Output(s.col);
        return explain_tile(trace, (h, at), run.tile.get()?, s.row, cell);
    }
    let rope = c.rope.is_some();
    let (m, row, col) = panels::run_cell(&s.panel, (s.row, s.col), at, rope, |g| g * per_group)?;
    let mut e = explain(trace, m, row, col)?;
    let cached = s.panel.starts_with("dec-k-") || s.panel.starts_with("dec-v-");
    let cell = match (decoding, cached) {
        (true, true) if s.row < at => RunCell::CachedEarlier(s.row),
        (true, true) => RunCell::CachedNew,
        (true, false) if s.panel.starts_with("dec-q-") => RunCell::Query,
        (true, false) => RunCell::Decoded,
        (false, _) if s.panel.starts_with("tile-x-") => RunCell::TileInput,
        (false, _) => RunCell::Tile,
    };
    let lead = run_cell_note(trace, cell);
    e.note = Some(match e.note.take() {
        Some(note) => format!("{lead} {note}"),
        None => lead,
    });
    Some(e)
}

/// The explanation of `selection`, a cell of a forward matrix or of the backward `pass`.
pub fn explain_any_selection(
    trace: &Trace,
    pass: Option<&BackwardPass>,
    selection: &Selection,
) -> Option<Explanation> {
    match panels::parse(&selection.panel)? {
        MatrixId::Back(m) => explain_back(trace, pass?, m, selection.row, selection.col),
        matrix => explain(trace, matrix, selection.row, selection.col),
    }
}

/// What lights up for an explanation, by panel name: each operand in the panel drawn beside the
/// explained one.
pub fn operand_highlights(explanation: &Explanation) -> Vec<(String, Highlight)> {
    explanation
        .operands
        .iter()
        .map(|o| {
            (
                panels::operand_panel(explanation.matrix, o.matrix),
                Highlight {
                    cell: o.cell,
                    rows: o.rows.clone(),
                    cols: o.cols.clone(),
                    cells: Vec::new(),
                },
            )
        })
        .collect()
}

/// Creates the selection context for `trace` and the backward `pass`, and returns it with the
/// current explanation.
pub fn provide_selection(
    trace: Memo<Trace>,
    pass: Memo<Result<BackwardPass, String>>,
) -> (SelectionContext, Memo<Option<Explanation>>) {
    let selection = RwSignal::new(None::<Selection>);
    // Only a gradient's cell reads the backward pass, which is computed when first read.
    let explain = move |s: &Selection| {
        let backward = panels::parse(&s.panel).is_some_and(|m| matches!(m, MatrixId::Back(_)));
        trace.with(|t| {
            if backward {
                pass.with(|p| explain_any_selection(t, p.as_ref().ok(), s))
            } else {
                explain_selection(t, s)
            }
        })
    };
    let explanation = Memo::new(move |_| explain(&selection.get()?));
    let answer = RwSignal::new(None::<Selection>);
    let operands = Memo::new(move |_| {
        if selection.with(Option::is_some) {
            return explanation.with(|e| e.as_ref().map(operand_highlights).unwrap_or_default());
        }
        // A revealed answer lights its operands as a picked cell would; answers are only asked
        // about forward results and gradients, which the same explanations cover.
        answer
            .get()
            .and_then(|a| explain(&a))
            .as_ref()
            .map(operand_highlights)
            .unwrap_or_default()
    })
    .into();
    let ctx = SelectionContext {
        selection,
        operands,
        answer,
        folded: RwSignal::new(false),
    };
    provide_context(ctx);
    (ctx, explanation)
}

/// The widest screen on which a presented run's curve takes a band at the foot (the style
/// sheet's `max-width: 900px`) rather than a column of its own.
const PRESENTED_CURVE_BAND: f64 = 900.0;

/// The panel itself.
#[component]
pub fn ExplainPanel(
    /// The explanation of the selected cell.
    explanation: Memo<Option<Explanation>>,
    /// To clear the selection.
    selection: RwSignal<Option<Selection>>,
    /// Whether the sheet is folded to its title.
    folded: RwSignal<bool>,
    /// Whether it opens as a sheet over the bottom of the window, rather than where it stands.
    #[prop(into)]
    sheet: Signal<bool>,
    /// In an embed the sheet floats beside the picked cell instead, inside the part of the frame
    /// the host page shows, and the frame keeps its height.
    #[prop(optional)]
    floating: bool,
) -> impl IntoView {
    // A sheet folds to its title, giving the picture its room back; it folds itself when a
    // place opens, whose inputs it would otherwise cover while the learner types, and opens
    // folded where it would cover a cell the reader did not pick (`keys::keep_clear_of_sheet`).
    let ui = ui_context();
    Effect::new(move |before: Option<u8>| {
        let open = ui.open.get();
        if before.is_some_and(|b| open & !b != 0) && sheet.get_untracked() {
            folded.set(true);
        }
        open
    });
    // On a narrow screen a presented run's curve takes the foot, and the sheet above it would
    // leave the step a sliver: it folds when the curve appears (a tap unfolds it).
    let curve = use_context::<super::training_panel::Trainer>().map(|t| t.has_curve());
    Effect::new(move |before: Option<bool>| {
        let shown = ui.presenting.get() && curve.is_some_and(|c| c.get());
        let narrow = super::window_size::inner_width() <= PRESENTED_CURVE_BAND;
        if shown && before == Some(false) && narrow && sheet.get_untracked() {
            folded.set(true);
        }
        shown
    });
    // A sheet explains a cell of the stage: while the stage is out of the window (a phone's
    // place scrolled to, the lab below), it steps aside rather than cover what is there.
    let stage_in_sight = RwSignal::new(true);
    if !floating {
        // In sight: within the window's middle band, not a sliver at its edge.
        use_intersection_observer_with_options(
            "[data-testid=stage-view]",
            move |entries, _| {
                if let Some(entry) = entries.last() {
                    stage_in_sight.try_set(entry.is_intersecting());
                }
            },
            UseIntersectionObserverOptions::default().root_margin("-20% 0px -20% 0px"),
        );
    }
    view! {
        <aside id="explain-panel" class="explain-panel" data-testid="explain-panel"
            class:active=move || explanation.with(Option::is_some)
            class:sheet=move || sheet.get()
            class:aside=move || sheet.get() && !stage_in_sight.get()
            class:folded=move || folded.get() && sheet.get()
            class:floating=floating
            aria-live="polite" aria-label="How the selected cell was computed">
            {move || match explanation.get() {
                None => view! {
                    <p class="explain-empty">{NO_CELL}</p>
                }.into_any(),
                Some(e) => view! {
                    <div class="explain-head">
                        <h3 data-testid="explain-title">{e.title.clone()}</h3>
                        {move || sheet.get().then(|| view! {
                            <button type="button" class="explain-fold" data-testid="explain-fold"
                                aria-expanded=move || (!folded.get()).to_string()
                                aria-label=move || if folded.get() { "Show the whole explanation" } else { "Fold the explanation to its title" }
                                on:click=move |_| {
                                    // Opened by the reader, it keeps its cell in sight.
                                    super::heatmap::picked_by_reader();
                                    folded.update(|f| *f = !*f);
                                }>
                                {move || if folded.get() { "▴" } else { "▾" }}
                            </button>
                        })}
                        <button type="button" class="explain-close" aria-label="Clear the selection"
                            on:click=move |_| selection.set(None)>"×"</button>
                    </div>
                    <p class="explain-formula" data-testid="explain-formula">{e.formula.clone()}</p>
                    <p class="explain-expansion" data-testid="explain-expansion">{e.expansion.clone()}</p>
                    {e.note.clone().map(|n| view! { <p class="explain-note" data-testid="explain-note">{n}</p> }.into_any())}
                }.into_any(),
            }}
        </aside>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Model;

    #[test]
    fn a_score_cell_lights_its_query_and_key_rows() {
        let trace = Model::default().trace().unwrap();
        let selection = Selection {
            panel: "scores-h0".into(),
            row: 1,
            col: 2,
        };
        let e = explain_selection(&trace, &selection).unwrap();
        let lit = operand_highlights(&e);
        assert!(lit.iter().any(|(p, h)| p == "q-h0" && h.rows == [1]));
        assert!(lit.iter().any(|(p, _)| p == "kt-h0"));
    }

    #[test]
    fn a_projection_cell_lights_the_copy_of_x_beside_its_weight() {
        let trace = Model::default().trace().unwrap();
        let selection = Selection {
            panel: "v".into(),
            row: 2,
            col: 1,
        };
        let e = explain_selection(&trace, &selection).unwrap();
        let lit = operand_highlights(&e);
        assert!(lit.iter().any(|(p, h)| p == "x-v" && h.rows == [2]));
        assert!(lit.iter().any(|(p, h)| p == "w_v" && h.cols == [1]));
    }

    #[test]
    fn an_unknown_panel_or_cell_explains_nothing() {
        let trace = Model::default().trace().unwrap();
        let bad = |panel: &str, row, col| Selection {
            panel: panel.into(),
            row,
            col,
        };
        assert!(explain_selection(&trace, &bad("nope", 0, 0)).is_none());
        assert!(explain_selection(&trace, &bad("scores-h0", 9, 0)).is_none());
    }
}
