//! The what-if lab: one deliberate mistake at a time, its result beside the correct one, and
//! what goes wrong in words. Every number comes from `attention::whatif`, every sentence from
//! `words`.

use super::heatmap::{HeatmapView, PanelData};
use super::in_sight::{near_window, Followed};
use super::paragraphs::Paragraphs;
use super::training_panel::Trainer;
use crate::attention::whatif::{
    compare, gradient_by_head_dim, is_standard, saturation_by_head_dim, standard, Comparison,
    WhatIf, GRADIENT_HEAD_DIMS, SATURATION_HEAD_DIMS,
};
use crate::attention::{Matrix, ScaleMode, Stage, Trace};
use crate::plot::{Highlight, Palette};
use crate::state::Model;
use crate::words::{
    comparison_summary, correct_title, denominators_text, dim, format_value, gradient_caption,
    gradient_number, gradient_summary, no_mistake_text_for, output_titles, shown_title,
    stage_name_in, whatif_explanation, whatif_label, MistakePlace, SEQ_LEN_IN_CROSS,
    TUTORIAL_MISTAKES, WHATIF_CROSS_NOTE,
};
use leptos::prelude::*;

/// Slider position (−1 to 1) to temperature (0.1 to 10), logarithmic so 1 sits in the middle.
pub fn slider_to_temperature(position: f64) -> f64 {
    let t = 10f64.powf(position.clamp(-1.0, 1.0));
    (t * 100.0).round() / 100.0
}

/// The lab.
#[component]
pub fn WhatIfLab(
    /// The learner's model; the lab compares on its inputs.
    model: RwSignal<Model>,
    /// The app's trace, shown while no mistake is on.
    trace: Memo<Trace>,
    /// The stage shown, for the mistakes best seen on a stage.
    stage: RwSignal<Stage>,
) -> impl IntoView {
    // Below the stage: out of sight, the lab catches up with edits once they pause.
    let root = NodeRef::<leptos::html::Section>::new();
    let near = near_window(root);
    // The lab reads the model only where the trace it follows changed.
    let training = use_context::<Trainer>().map_or_else(|| Signal::from(false), |t| t.running());
    let trace = Followed::new(near, trace, training);
    // None: the mistake is switched off and the correct result is displayed.
    let active = RwSignal::new(None::<WhatIf>);
    let slider = RwSignal::new(-0.6f64);
    let head = RwSignal::new(0usize);
    let temperature = Memo::new(move |_| slider_to_temperature(slider.get()));

    let chosen = Memo::new(move |_| {
        active.get().map(|w| match w {
            WhatIf::Temperature(_) => WhatIf::temperature(temperature.get()),
            other => other,
        })
    });
    let comparison = Memo::new(move |_| {
        let what = chosen.get()?;
        trace.track();
        model.with_untracked(|m| compare(&m.inputs(), what).ok())
    });
    let outline = Memo::new(move |_| trace.with(Trace::outline));
    let n_heads = Memo::new(move |_| outline.with(|o| o.config.n_heads));
    let tokens: Signal<Vec<String>> =
        Memo::new(move |_| outline.with(|o| crate::words::token_labels(&o.tokens))).into();
    // The keys are the source's tokens in cross-attention.
    let key_tokens: Signal<Vec<String>> =
        Memo::new(move |_| outline.with(|o| crate::words::token_labels(&o.key_tokens))).into();
    let cross = Memo::new(move |_| outline.with(|o| o.wiring.cross));
    // The causal mask belongs to self-attention: with a source there is none to switch off.
    Effect::new(move |_| {
        if cross.get() && active.get_untracked() == Some(WhatIf::NoCausalMask) {
            active.set(None);
        }
    });
    let h = move || head.get().min(n_heads.get().saturating_sub(1));

    // The weights show every mistake's consequence: saturation, broken sums, leaks, NaN.
    let pick = |c: &Comparison, h: usize, altered: bool| -> Matrix {
        c.weights(h)
            .map(|(a, b)| if altered { b.clone() } else { a.clone() })
            .unwrap_or_else(|| Matrix::zeros(0, 0))
    };
    let head_weights = |t: &Trace, h: usize| {
        t.heads
            .get(h)
            .map(|x| x.weights.clone())
            .unwrap_or_else(|| Matrix::zeros(0, 0))
    };
    // Switched off: standard attention on the learner's inputs, whatever their scale and
    // temperature, beside the learner's own weights.
    // With standard settings the learner's own trace is the reference: no second forward pass.
    let reference = Memo::new(move |_| {
        trace.track();
        model.with_untracked(|m| {
            (!is_standard(&m.config))
                .then(|| standard(&m.inputs()).ok())
                .flatten()
        })
    });
    let correct_values: Signal<Matrix> = Memo::new(move |_| {
        comparison
            .with(|c| c.as_ref().map(|c| pick(c, h(), false)))
            .or_else(|| reference.with(|r| r.as_ref().map(|t| head_weights(t, h()))))
            .unwrap_or_else(|| trace.with(|t| head_weights(t, h())))
    })
    .into();
    let shown_values: Signal<Matrix> = Memo::new(move |_| {
        comparison
            .with(|c| c.as_ref().map(|c| pick(c, h(), true)))
            .unwrap_or_else(|| trace.with(|t| head_weights(t, h())))
    })
    .into();
    let leaked = Signal::derive(move || Highlight {
        cells: comparison.with(|c| {
            c.as_ref()
                .and_then(|c| {
                    c.altered.heads.get(h()).map(|x| {
                        let mut cells = x.leaked.clone();
                        cells.extend(&x.future_dependent);
                        cells
                    })
                })
                .unwrap_or_default()
        }),
        ..Highlight::default()
    });

    // Both sides are attention weights: probabilities, queries by keys, with row sums.
    let weights_panel = move |name: &str, title: String, values: Signal<Matrix>| {
        PanelData::attention_weights(name.into(), title, values, tokens, key_tokens)
    };

    // Leaving out W_o changes no weight: the outputs show the difference.
    let output_of = move |altered: bool| -> Signal<Matrix> {
        Memo::new(move |_| {
            comparison.with(|c| {
                c.as_ref()
                    .map(|c| {
                        let (correct, mistaken) = c.outputs();
                        if altered {
                            mistaken.clone()
                        } else {
                            correct.clone()
                        }
                    })
                    .unwrap_or_else(|| Matrix::zeros(0, 0))
            })
        })
        .into()
    };
    let (correct_output, shown_output) = (output_of(false), output_of(true));
    let dims: Signal<Vec<String>> =
        Memo::new(move |_| outline.with(|o| (0..o.config.d_model).map(dim).collect())).into();
    let outputs_panel =
        move |name: &str, title: &'static str, values: Signal<Matrix>, groups: usize| PanelData {
            name: name.into(),
            title: title.into(),
            values,
            rows: tokens,
            cols: dims,
            axes: ("tokens", "dimensions"),
            palette: Palette::Diverging,
            range: None,
            col_groups: groups,
            row_sums: false,
            decimals: 2,
            reserve: None,
        };

    // A cell clicked in the lab's own heatmaps, for the lines about one cell.
    let picked = use_context::<super::context::SelectionContext>();
    let lab_cell = move || {
        picked
            .and_then(|p| p.selection.get())
            .filter(|s| s.panel.starts_with("whatif-"))
            .map_or((0, 0), |s| (s.row, s.col))
    };
    let summary = move || {
        comparison.with(|c| {
            c.as_ref().map(|c| {
                let mut lines = comparison_summary(c, h());
                let (row, col) = lab_cell();
                lines.extend(denominators_text(c, h(), row, col));
                lines
            })
        })
    };

    let saturation_rows = move || {
        matches!(
            chosen.get(),
            Some(WhatIf::NoScaling) | Some(WhatIf::ScaleBySeqLen)
        )
        .then(|| saturation_by_head_dim(&SATURATION_HEAD_DIMS, 7, ScaleMode::SqrtHeadDim))
    };

    // Why the divisor matters for learning: computed once, when "no scaling" is first chosen.
    let gradient_points = Memo::new(move |previous: Option<&Option<Vec<_>>>| {
        if let Some(Some(points)) = previous {
            return Some(points.clone());
        }
        (chosen.get() == Some(WhatIf::NoScaling))
            .then(|| gradient_by_head_dim(&GRADIENT_HEAD_DIMS, 7))
    });
    let gradient_rows = move || {
        (chosen.get() == Some(WhatIf::NoScaling))
            .then(|| gradient_points.get())
            .flatten()
    };

    let order = crate::components::context::ui_context().order;
    view! {
        <section class="panel whatif" aria-labelledby="whatif-title" data-testid="whatif-lab" node_ref=root>
            <h2 id="whatif-title" class="panel-title">"What-if lab"</h2>
            <p class="help">"Break the maths on purpose: switch one mistake on and compare its result with the correct one."</p>
            <details class="mistakes-read" data-testid="mistakes-read">
                <summary>"Mistakes you may have read"</summary>
                <ul>
                    {TUTORIAL_MISTAKES.iter().enumerate().map(|(i, m)| {
                        let place = m.place;
                        let go = move |_| match place {
                            MistakePlace::WhatIf(w) => {
                                active.set(Some(w));
                                bring_result_into_view();
                            }
                            MistakePlace::Stage(s) => {
                                stage.set(s);
                                if let Some(el) = document().get_element_by_id("stage-title") {
                                    el.scroll_into_view();
                                }
                            }
                        };
                        // The stage's number and name follow the settings (rotary positions
                        // add a stage and rename the scores).
                        let link = move || match place {
                            MistakePlace::WhatIf(w) => format!("Switch it on: {}", whatif_label(w)),
                            MistakePlace::Stage(s) => {
                                let order = order.get();
                                format!(
                                    "See stage {}: {}",
                                    s.position(order).unwrap_or(0) + 1,
                                    stage_name_in(s, order)
                                )
                            }
                        };
                        view! {
                            <li>
                                <strong>{m.read}</strong>" "{m.wrong}" "
                                <button type="button" class="link-button" data-testid=format!("mistake-{i}")
                                    on:click=go>{link}</button>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </details>
            <div class="whatif-toggles" role="group" aria-label="Mistakes">
                {WhatIf::ALL.into_iter().map(|w| {
                    let key = w.key();
                    let is_on = move || active.get().map(|a| a.key()) == Some(key);
                    view! {
                        <button type="button" class="whatif-toggle" data-testid=format!("whatif-{key}")
                            aria-pressed=move || is_on().to_string()
                            prop:disabled=move || w == WhatIf::NoCausalMask && cross.get()
                            on:click=move |_| {
                                active.set(if is_on() { None } else { Some(w) });
                                bring_result_into_view();
                            }>
                            {whatif_label(w)}
                        </button>
                    }
                }).collect_view()}
            </div>
            {move || cross.get().then(|| view! {
                <p class="help" data-testid="whatif-cross-note">{WHATIF_CROSS_NOTE}</p>
            })}
            {move || matches!(active.get(), Some(WhatIf::Temperature(_))).then(|| view! {
                <label class="whatif-temperature">
                    "Temperature T = " <output data-testid="whatif-temperature-value">{move || temperature.get().to_string()}</output>
                    <input type="range" min="-1" max="1" step="0.05" data-testid="whatif-temperature-slider"
                        prop:value=move || slider.get().to_string()
                        on:input=move |ev| {
                            if let Some(v) = event_target_value(&ev).parse::<f64>().ok().filter(|v| v.is_finite()) {
                                slider.set(v);
                            }
                        } />
                </label>
            }.into_any())}
            {move || (n_heads.get() > 1).then(|| view! {
                <div class="head-picker" role="group" aria-label="Head for the comparison">
                    {(0..n_heads.get()).map(|i| view! {
                        <button type="button" data-testid=format!("whatif-head-{i}")
                            aria-pressed=move || (h() == i).to_string()
                            on:click=move |_| head.set(i)>{format!("Head {}", i + 1)}</button>
                    }).collect_view()}
                </div>
            }.into_any())}
            <Paragraphs class="whatif-explanation" testid="whatif-explanation"
                text=Signal::derive(move || match chosen.get() {
                    Some(WhatIf::ScaleBySeqLen) if cross.get() => format!(
                        "{}\n\n{SEQ_LEN_IN_CROSS}",
                        whatif_explanation(WhatIf::ScaleBySeqLen)
                    ),
                    Some(what) => whatif_explanation(what).to_string(),
                    None => outline.with(|o| no_mistake_text_for(&o.config, o.wiring.cross, o.key_tokens.len())),
                }) />
            {move || {
                if chosen.get() == Some(WhatIf::NoOutputProjection) {
                    let (with, without) = output_titles();
                    return view! {
                        <div class="equation">
                            <HeatmapView data=outputs_panel("whatif-correct", with, correct_output, 1) />
                            <span class="op" aria-hidden="true">"vs"</span>
                            <HeatmapView data=outputs_panel("whatif-shown", without, shown_output, n_heads.get()) />
                        </div>
                    }
                    .into_any();
                }
                let title = correct_title(h());
                let name = shown_title(h(), chosen.get().is_some());
                view! {
                    <div class="equation">
                        <HeatmapView data=weights_panel("whatif-correct", title, correct_values) />
                        <span class="op" aria-hidden="true">"vs"</span>
                        <HeatmapView data=weights_panel("whatif-shown", name, shown_values)
                            highlight=leaked />
                    </div>
                }
                .into_any()
            }}
            <ul class="whatif-summary" data-testid="whatif-summary">
                {move || summary().unwrap_or_default().into_iter().map(|l| view! { <li>{l}</li> }.into_any()).collect_view()}
            </ul>
            {move || saturation_rows().map(|points| view! {
                <table class="saturation matrix-table" data-testid="saturation">
                    <caption>"Random queries and 16 keys: mean largest softmax weight as the head widens"</caption>
                    <thead><tr><th scope="col">"d_k"</th><th scope="col">"no scaling"</th><th scope="col">"÷ √d_k"</th></tr></thead>
                    <tbody>
                        {points.into_iter().map(|p| view! {
                            <tr>
                                <th scope="row">{p.head_dim}</th>
                                <td data-value=p.unscaled.to_string()>
                                    <span class="meter">
                                        <span class="track" aria-hidden="true">
                                            <span class="bar" style=format!("width: {:.0}%", p.unscaled * 100.0)></span>
                                        </span>
                                        {format_value(p.unscaled, 2)}
                                    </span>
                                </td>
                                <td data-value=p.scaled.to_string()>
                                    <span class="meter">
                                        <span class="track" aria-hidden="true">
                                            <span class="bar" style=format!("width: {:.0}%", p.scaled * 100.0)></span>
                                        </span>
                                        {format_value(p.scaled, 2)}
                                    </span>
                                </td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            }.into_any())}
            {move || gradient_rows().map(|points| {
                let summary = gradient_summary(&points);
                let widest = points.iter().map(|p| p.scaled.max(p.unscaled)).fold(0.0, f64::max);
                let bar = move |v: f64| format!("width: {:.0}%", v / widest * 100.0);
                view! {
                    <table class="saturation gradient-table matrix-table" data-testid="gradient-table">
                        <caption>{gradient_caption()}</caption>
                        <thead><tr>
                            <th scope="col">"d_k"</th>
                            <th scope="col">"median ‖∂L/∂Sᵢ‖, no scaling"</th>
                            <th scope="col">"median ‖∂L/∂Sᵢ‖, ÷ √d_k"</th>
                            <th scope="col">"mean largest weight, no scaling / ÷ √d_k"</th>
                        </tr></thead>
                        <tbody>
                            {points.iter().map(|p| view! {
                                <tr>
                                    <th scope="row">{p.head_dim}</th>
                                    <td data-value=p.unscaled.to_string()>
                                        <span class="meter">
                                            <span class="track" aria-hidden="true">
                                                <span class="bar" style=bar(p.unscaled)></span>
                                            </span>
                                            {gradient_number(p.unscaled)}
                                        </span>
                                    </td>
                                    <td data-value=p.scaled.to_string()>
                                        <span class="meter">
                                            <span class="track" aria-hidden="true">
                                                <span class="bar" style=bar(p.scaled)></span>
                                            </span>
                                            {gradient_number(p.scaled)}
                                        </span>
                                    </td>
                                    <td>{format!("{} / {}", format_value(p.unscaled_max_weight, 2), format_value(p.scaled_max_weight, 2))}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    <p class="help" data-testid="gradient-summary">{summary}</p>
                }
            }.into_any())}
        </section>
    }
}

/// How much of the comparison's explanation a tap that brings it into view shows, at most.
const SHOWN: f64 = 240.0;

/// Brings the comparison's explanation into view under the top bar where a choice left it below
/// the window (a phone, whose column the mistakes' buttons fill): the tap's result is in sight.
fn bring_result_into_view() {
    request_animation_frame(|| {
        let Some(words) = document()
            .query_selector("[data-testid=whatif-explanation]")
            .ok()
            .flatten()
        else {
            return;
        };
        let top = words.get_bounding_client_rect().top();
        let height = super::window_size::inner_height();
        if top < height - 48.0 {
            return;
        }
        // As little as shows its first lines, so what was tapped stays in sight where it can.
        let shown = (height * 0.4).min(SHOWN);
        let by = top - (height - shown).max(super::swipe::covered_top() + 8.0);
        window().scroll_by_with_x_and_y(0.0, by);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temperature_slider_is_logarithmic_around_one() {
        assert_eq!(slider_to_temperature(0.0), 1.0);
        assert_eq!(slider_to_temperature(-1.0), 0.1);
        assert_eq!(slider_to_temperature(1.0), 10.0);
        assert_eq!(slider_to_temperature(5.0), 10.0);
    }
}
