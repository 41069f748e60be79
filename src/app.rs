//! The root component: owns the input signals and the one `Memo<Trace>` every view reads.

use crate::attention::Order;
use crate::attention::{BackwardPass, Stage, Trace};
use crate::changes::Trail;
use crate::components::keyboard::{is_text_field, key_target};
use crate::components::{
    close_menus, close_menus_on_escape, close_menus_on_press_outside, drop_page_option, fit_stage,
    full_view_href, goal_text, import_file, model_outline, numbers_to_fit,
    open_stages_at_their_top, point_at_full_view, post_height_to_parent, post_step_to_parent,
    provide_outlines, provide_quiz, provide_selection, provide_trainer, provide_ui_context,
    set_fullscreen, settled, step_on_swipe, step_with_clicker, sync_with_url, trace_outline,
    BackwardContext, EditNote, ExplainPanel, ExportMenu, Handout, MatrixEditors, Place, PlaceBody,
    PlacesBar, PresenterBar, QuizCard, QuizToggle, RunContext, SentenceInput, Settings,
    ShareButtons, Shared, StageControls, StageRail, StageView, TrainingPanel, WhatIfLab,
};
use crate::formats::page::parse_address;
use crate::panels::{panel_head, projection_part};
use crate::state::Model;
use crate::training::GoalChoice;
use crate::words::{
    GoalSource, PLACE_SHARE, QUIZ_HIDES_PLACE, QUIZ_HIDES_PLACE_EMBED, SHARE_PICTURES, SIDE_LABEL,
    SKIP_TO_STAGE, START_HERE,
};
use leptos::ev;
use leptos::prelude::*;

/// Whether a key press belongs to a form field, a heatmap or a table that scrolls with the arrow
/// keys, rather than to the page.
fn typing_into_field(ev: &web_sys::KeyboardEvent) -> bool {
    key_target(ev).is_some_and(|el| {
        is_text_field(&el)
            || el.tag_name() == "CANVAS"
            || el.get_attribute("role").as_deref() == Some("tab")
            // Not `class_name()`: on SVG elements `className` is not a string.
            || el
                .get_attribute("class")
                .is_some_and(|c| c.split_whitespace().any(|c| c == "table-wrap"))
    })
}

/// What an arrow key does to the stage outside presenter mode (which steps with a clicker's
/// keys of its own).
pub fn stage_step(key: &str, stage: Stage, order: impl Into<Order>) -> Option<Stage> {
    let order = order.into();
    match key {
        "ArrowRight" => stage.next_in(order),
        "ArrowLeft" => stage.prev_in(order),
        _ => None,
    }
}

/// Mounts the app on the page's body, with the marks the benchmarks read.
///
/// The page may hold a picture of the first screen, `.prerendered`, shown while the module loads,
/// or the template it comes from, still waiting (`assets/first-screen.html`). Both go in the same
/// task as the app mounts and draws its first heatmaps, so the browser paints one or the other,
/// never both and never neither.
pub fn mount() {
    crate::components::perf::mount_started();
    while let Ok(Some(picture)) = document().query_selector(".prerendered, template.first-screen") {
        picture.remove();
    }
    leptos::mount::mount_to_body(App);
    crate::components::perf::mounted();
}

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let location = window().location();
    let options = parse_address(
        &location.search().unwrap_or_default(),
        &location.hash().unwrap_or_default(),
    );
    let ui = provide_ui_context(
        options.dark,
        options.embed,
        options.embed && !options.controls,
    );
    let model = RwSignal::new(Model::default());
    // One run for the training panel and, while presenting, the presenter bar's buttons.
    provide_trainer(model);
    let result = Memo::new(move |prev: Option<&Result<Trace, _>>| {
        let previous = prev.and_then(|r| r.as_ref().ok());
        model.with(|m| m.trace_after(previous))
    });
    // The last trace that worked stays on screen while an error is shown.
    let trace = Memo::new(move |prev: Option<&Trace>| match result.get() {
        Ok(t) => t,
        Err(_) => prev.cloned().unwrap_or_else(|| {
            Model::default()
                .trace()
                .unwrap_or_else(|e| panic!("the default model is invalid: {e}"))
        }),
    });
    let error = move || result.with(|r| r.as_ref().err().map(|e| e.to_string()));
    // What lays out the page; a weight's edit leaves both equal.
    provide_outlines(model, result, trace);
    let outline = trace_outline(trace);
    let inputs_outline = model_outline(model);
    let stage = RwSignal::new(Stage::Input);
    let head = RwSignal::new(0usize);
    // The stages shown follow the block switch; a stage that is no longer shown gives way to
    // the last one of attention.
    let order = Memo::new(move |_| {
        let asked = inputs_outline.with(|o| o.order);
        outline.with(|o| crate::attention::Order {
            tiles: asked.tiles,
            decode: asked.decode && o.config.causal && !o.wiring.cross,
            ..o.wiring.order()
        })
    });
    let cross = Memo::new(move |_| outline.with(|o| o.wiring.cross));
    Effect::new(move |_| ui.cross.set(cross.get()));
    Effect::new(move |_| {
        let o = order.get();
        ui.order.set(o);
        match stage.get_untracked() {
            // The turn rests with rotary positions: the split comes just before it.
            Stage::Rotary if Stage::Rotary.position(o).is_none() => stage.set(Stage::SplitHeads),
            Stage::Tiles if Stage::Tiles.position(o).is_none() => stage.set(Stage::WeightedSum),
            s if s.position(o).is_none() => stage.set(Stage::OutputProjection),
            _ => {}
        }
    });
    // The goal is the model's, fitted to its heads and sentence, so the backward stages follow
    // it even where the training panel is not shown (an embed, presenter mode) and a link
    // carries it.
    let goal = Memo::new(move |_| inputs_outline.with(|o| o.training.goal.clone()));
    let pass = Memo::new(move |_| {
        goal.with(|goal| trace.with(|t| BackwardPass::new(t, goal).map_err(|e| e.to_string())))
    });
    let backward = BackwardContext {
        pass,
        goal,
        goal_name: Signal::derive(move || goal.with(|g| goal_text(GoalChoice::of(g), cross.get()))),
        goal_source: Signal::derive(move || {
            match (options.embed && !options.train, ui.presenting.get()) {
                (true, _) => GoalSource::Link,
                (false, true) => GoalSource::Presenter,
                (false, false) => GoalSource::Panel,
            }
        }),
    };
    provide_context(backward);
    let row = RwSignal::new(None::<usize>);
    let prefill = Memo::new(move |_| model.with(|m| m.prefill));
    provide_context(RunContext {
        decode: Memo::new(move |_| {
            let p = prefill.get()?;
            Some(trace.with(|t| {
                // At least one token is left to decode where the sentence has two.
                let p = p.min(t.seq_len().saturating_sub(1)).max(1);
                crate::attention::decode(t, p).map_err(|e| e.to_string())
            }))
        }),
        tile: Memo::new(move |_| model.with(|m| m.tile)),
        row,
        model,
    });
    let (picked, explanation) = provide_selection(trace, pass);
    let quiz = provide_quiz(trace, backward, stage, head, picked);
    let presenting = ui.presenting;
    presenting.set(options.present);
    // Leaving presenter mode, however it is left, takes `present=1` out of the address, so a
    // reload opens the page as it is now.
    Effect::new(move |_| {
        if !presenting.get() {
            drop_page_option("present");
        }
    });
    // Back to an address written while presenting leaves the page as it is: the address follows.
    // Read without writing the address: a write waiting now would undo the step back.
    let _back = window_event_listener(leptos::ev::popstate, move |_| {
        let location = window().location();
        let (search, hash) = (
            location.search().unwrap_or_default(),
            location.hash().unwrap_or_default(),
        );
        let present =
            crate::formats::page::parse_address(&search, hash.trim_start_matches('#')).present;
        if present && !presenting.get_untracked() {
            drop_page_option("present");
        }
    });
    let report = RwSignal::new(None::<String>);
    let n_heads = Signal::derive(move || outline.with(|o| o.config.n_heads));
    step_with_clicker(stage, head, n_heads);
    // A training step changes the numbers many times a second, their pictures' sizes seldom.
    let numbers = numbers_to_fit(move || trace.track(), model);
    fit_stage(move || {
        stage.track();
        head.track();
        ui.stage_part.track();
        numbers.track();
        quiz.set.track();
        quiz.session.track();
        // Presenting, an explanation opening or closing changes the room the step has (on a
        // page that scrolls it takes a column or a sheet of its own), and so does decoding
        // another token, whose cache and row of scores grow (a page that scrolls lets them: a
        // step's repaint stays one drawing).
        if ui.presenting.get() {
            picked.selection.track();
            row.track();
        }
        // The training buttons join the presenter bar once the parts below the stage mount.
        ui.settled_below.track();
    });

    let notices = RwSignal::new(Vec::<String>::new());
    sync_with_url(
        Shared {
            model,
            stage,
            head,
            row,
            selection: picked.selection,
            quiz: quiz.set,
        },
        options.stage,
        notices,
        // Inside a host page, history entries are the host's: Back must leave the post, not
        // step through the frame's edits.
        !options.embed,
        // A bare address opens on the first screen's scenario, so a lecture's slides, an embed
        // and the page students open show the same numbers; presenter mode and an embed open
        // it where their address says, at the input (where a lecture starts), no cell explained.
        crate::presets::first_screen().map(|first| {
            if options.present || options.embed {
                crate::formats::permalink::ShareState {
                    stage: crate::attention::Stage::Input,
                    head: 0,
                    cell: None,
                    ..first
                }
            } else {
                first
            }
        }),
    );
    // Which stages the last edit changed that the learner has not looked at (see `changes`).
    // It starts from the model the link opened, which is no edit of the learner's.
    let trail = Memo::new(move |prev: Option<&Trail>| {
        let current = stage.get();
        model.with(|m| match prev {
            Some(trail) => trail.step(m, current),
            None => Trail::start(m),
        })
    });
    // What the rail's marks and the edit note show, which most edits leave as it was.
    let unseen = settled(move || trail.with(|t| t.unseen.clone()));
    if options.quiz && quiz.set.get_untracked().is_none() {
        quiz.toggle();
    }
    if options.embed {
        post_height_to_parent();
        Effect::watch(move || stage.get(), |_, _, _| post_step_to_parent(), false);
    }

    // The cell h hid, on the step it was hidden on: h again brings its explanation back.
    let hidden_pick = StoredValue::new(None::<(crate::components::Selection, Stage, usize)>);
    let _keys = window_event_listener(ev::keydown, move |ev| {
        // A key the page's own controls took (the decoding tools' arrows) is theirs.
        if ev.default_prevented() || ev.alt_key() || ev.ctrl_key() || ev.meta_key() {
            return;
        }
        let key = ev.key();
        // A heatmap or a tab with the focus keeps its arrows; presenting, the letters below
        // still work from there (a clicked cell focuses its heatmap), but not in a text field.
        if typing_into_field(&ev)
            && (!presenting.get_untracked() || key_target(&ev).is_some_and(|el| is_text_field(&el)))
        {
            return;
        }
        // While presenting, the clicker's keys were taken before the page saw them.
        if !presenting.get_untracked() {
            if let Some(s) = stage_step(&key, stage.get_untracked(), ui.order.get_untracked()) {
                ev.prevent_default();
                stage.set(s);
            }
        } else if key == "r" || key == "R" {
            // The teacher reveals the answer once the class has guessed.
            if quiz.reveal() {
                ev.prevent_default();
            }
        } else if key == "h" || key == "H" {
            // The explanation's sheet goes, and the class sees the whole step again; on the
            // same step, h brings it back.
            ev.prevent_default();
            let here = (stage.get_untracked(), head.get_untracked());
            match picked.selection.get_untracked() {
                Some(shown) => {
                    hidden_pick.set_value(Some((shown, here.0, here.1)));
                    picked.selection.set(None);
                }
                None => {
                    if let Some((hidden, ..)) =
                        hidden_pick.get_value().filter(|(_, s, h)| (*s, *h) == here)
                    {
                        picked.selection.set(Some(hidden));
                    }
                    hidden_pick.set_value(None);
                }
            }
        } else if key == "f" || key == "F" {
            ev.prevent_default();
            set_fullscreen(document().fullscreen_element().is_none());
        } else if key == "Escape" {
            presenting.set(false);
            set_fullscreen(false);
        }
    });
    close_menus_on_press_outside();
    step_on_swipe(stage);
    open_stages_at_their_top(stage);
    close_menus_on_escape();
    let _dragover = window_event_listener(ev::dragover, move |ev| ev.prevent_default());
    let _drop = window_event_listener(ev::drop, move |ev| {
        ev.prevent_default();
        if let Some(file) = ev
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0))
        {
            import_file(file, model, report);
        }
    });

    let show_controls = options.controls;
    let embed = options.embed;
    // An embed with editors has them open from the start: it has no bar of places, and its
    // reader asked for them.
    if show_controls && embed {
        ui.open_place(Place::Inputs);
    }
    // An embed of the training view trains below its stage, open from the start.
    let embed_trains = embed && options.train;
    if embed_trains {
        ui.open_place(Place::Train);
    }
    // A step to another stage, or to another head or part where one is shown at a time, takes
    // the picked cell's picture away, so its explanation closes rather than explain a cell that is
    // not on screen (in an embed it floated where the cell was). A change that brings its own
    // cell with it (a new link, Back) keeps it.
    Effect::watch(
        move || {
            (
                stage.get(),
                head.get(),
                ui.stage_part.get(),
                picked.selection.get(),
            )
        },
        move |(now, now_head, now_part, selection), before, _| {
            let Some(picked_cell) = selection else {
                return;
            };
            let stepped = before.is_some_and(|(was, was_head, was_part, was_selection)| {
                let other_head = was_head != now_head
                    && panel_head(&picked_cell.panel).is_some_and(|h| h != *now_head);
                // Where a stage shows one part at a time, another part replaces the pictures.
                // (Q, K or V picked by its own cell, as a link's, stays.)
                let own_part = projection_part(&picked_cell.panel) == Some(now_part.1);
                let other_part =
                    was_part != now_part && !own_part && untrack(|| ui.shown_part(*now)).is_some();
                (was != now || other_head || other_part) && was_selection == selection
            });
            if stepped {
                picked.selection.set(None);
            }
        },
        false,
    );
    // The backward stages join the rail once a training goal is in use: the Train place was
    // opened, the model carries a goal of its own (a link, a preset), or a backward stage is on
    // screen. From the outline, so an edit of a weight compares nothing here.
    let own_goal = Memo::new(move |_| {
        inputs_outline.with(|o| o.training != crate::attention::Training::default())
    });
    let backward_in_use = Signal::derive(move || {
        stage.get().is_backward() || own_goal.get() || ui.visited(Place::Train)
    });
    // Whether the page trains: not in an embed (unless it embeds the training view), nor while
    // a quiz hides the result (training would show it), nor before the parts below the stage
    // mount, after the first picture.
    let trainable = Signal::derive(move || (!embed || embed_trains) && ui.settled_below.get());
    let training = Signal::derive(move || trainable.get() && !quiz.hidden.get());

    // The top bar's actions: a row on wide screens, one menu on a phone.
    let actions = move || {
        view! {
            <h2 class="panel-title">{PLACE_SHARE}</h2>
            // What a lecturer opens the place for first, where it is seen without scrolling.
            <button type="button" class="present" data-testid="present"
                on:click=move |_| {
                    close_menus(None);
                    presenting.set(true);
                }>"Present"</button>
            <QuizToggle />
            <label class="toggle tables-toggle">
                <input type="checkbox" data-testid="show-tables"
                    prop:checked=move || ui.show_tables.get()
                    on:change=move |ev| ui.show_tables.set(event_target_checked(&ev)) />
                " Show numbers as tables"
            </label>
            <ShareButtons />
            <ExportMenu model trace report />
            <p class="help">{SHARE_PICTURES}</p>
        }
    };

    view! {
        // The handout to print stands in for the app, which keeps its state behind it.
        {move || ui.handout.get().then(|| view! { <Handout trace /> })}
        <div class="app" class:embed=embed class:presenting=move || presenting.get()
            class:behind-handout=move || ui.handout.get()
            class:no-controls=!show_controls data-testid="app"
            // Each picture offers its PNG and SVG while sharing is open.
            class:sharing=move || ui.is_open(Place::Share)
            data-one-row=move || ui.placement.with(|p| p.one_row.to_string())
            // Whether the step fits its room (a phone's presented step may run below it).
            data-fits=move || ui.placement.with(|p| p.fits.to_string())
            style=move || ui.placement.with(|p| {
                let lines = if p.lines_width > 0.0 {
                    format!("; --lines-w: {:.1}px", p.lines_width)
                } else {
                    String::new()
                };
                format!("--zoom: {:.3}; --given-zoom: {:.3}{lines}", p.zoom, p.zoom * p.given_share)
            })>
            {(!embed).then(|| view! {
                <header class="topbar">
                    // Focuses the stage's title rather than follow the fragment, which holds the state.
                    <a class="skip-link" href="#stage-title" data-testid="skip-link"
                        on:click=move |ev| {
                            ev.prevent_default();
                            if let Some(title) = document().get_element_by_id("stage-title") {
                                use wasm_bindgen::JsCast;
                                if let Ok(title) = title.dyn_into::<web_sys::HtmlElement>() {
                                    let _ = title.focus();
                                }
                            }
                        }>{SKIP_TO_STAGE}</a>
                    <div class="brand">
                        <h1>"attention-lens"</h1>
                        <p class="tagline">"Multi-head attention, one stage at a time, with every number."</p>
                    </div>
                    <PlacesBar places=Place::ALL.to_vec() />
                </header>
            }.into_any())}
            {embed.then(|| view! {
                <header class="embed-bar">
                    <span class="embed-title">"attention-lens"</span>
                    <a href=full_view_href() target="_blank" rel="noopener" data-testid="open-full-view"
                        on:pointerdown=move |ev| point_at_full_view(&ev)
                        on:click=move |ev| point_at_full_view(&ev)>"Open full view ↗"</a>
                </header>
            }.into_any())}
            <div class="notices" role="status">
                {move || notices.get().into_iter().enumerate().map(|(i, text)| view! {
                    <p class="notice" data-testid="notice">
                        <span>{text}</span>
                        <button type="button" aria-label="Dismiss" data-testid="dismiss-notice"
                            on:click=move |_| notices.update(|n| { if i < n.len() { n.remove(i); } })>"×"</button>
                    </p>
                }.into_any()).collect_view()}
                {move || report.get().map(|text| view! {
                    <p class="notice" data-testid="import-report">
                        <span>{text}</span>
                        <button type="button" aria-label="Dismiss" on:click=move |_| report.set(None)>"×"</button>
                    </p>
                }.into_any())}
            </div>
            <div class="layout">
                {(show_controls || !embed).then(|| view! {
                <aside class="controls" aria-label=SIDE_LABEL>
                    // The open places scroll on their own; the explanation stays below them.
                    <div class="side-places">
                        {show_controls.then(|| view! {
                            <PlaceBody place=Place::Inputs>
                                <div class="controls-inputs">
                                    <SentenceInput model stage head trace />
                                    <Settings model />
                                    <MatrixEditors model />
                                </div>
                            </PlaceBody>
                        })}
                        {(!embed).then(|| view! {
                            <PlaceBody place=Place::Share>
                                <div class="actions">{actions()}</div>
                            </PlaceBody>
                        })}
                    </div>
                    // Beside the heatmaps, so it never covers the cell it explains; below
                    // an open place, which makes room for it rather than hide behind it.
                    // A phone's sheet is on the first screen from its first picture, so that
                    // the page opens as it stays: with the sheet's cell in sight.
                    {move || (show_controls && !presenting.get() && (ui.settled.get() || (ui.narrow.get() && !embed))).then(|| view! {
                        <ExplainPanel explanation selection=picked.selection folded=picked.folded sheet=ui.narrow floating=embed />
                    }.into_any())}
                </aside>
                })}
                <main class="stage-area">
                    {move || presenting.get().then(|| view! {
                        <PresenterBar stage head n_heads training=trainable />
                    }.into_any())}
                    // A compact embed steps with Previous and Next alone.
                    // Where to start, below Previous and Next: gone after the first Next, it
                    // moves nothing the learner is about to press again.
                    {move || (!presenting.get()).then(|| view! {
                        {(!ui.compact).then(|| view! { <StageRail stage unseen backward=backward_in_use /> })}
                        <StageControls stage />
                        {move || (!embed && stage.get() == Stage::Input).then(|| view! {
                            <p class="start-here" data-testid="start-here">{START_HERE}</p>
                        })}
                        {show_controls.then(|| view! { <EditNote stage unseen /> })}
                    }.into_any())}
                    <p class="error global-error" role="alert" data-testid="trace-error">{error}</p>
                    <StageView trace stage head hide_result=quiz.hidden>
                        <QuizCard trace stage />
                    </StageView>
                    // Without the inputs column, a sheet over the bottom of the window.
                    {move || (!show_controls || presenting.get()).then(|| view! {
                        <ExplainPanel explanation selection=picked.selection folded=picked.folded sheet=true
                            floating=embed && !presenting.get() />
                    }.into_any())}
                    // The lab would show the hidden result's numbers.
                    {move || (!presenting.get() && !embed && !quiz.hidden.get()).then(|| view! {
                        <p class="hint" data-testid="step-tip">
                            <span class="hint-hover">"Tip: ← and → step through the stages."</span>
                            <span class="hint-touch">"Tip: swipe across the stage to step through the stages."</span>
                        </p>
                    }.into_any())}
                    // Kept while presenting, where it shrinks to a large loss curve once a run
                    // has one (its buttons move to the presenter bar), so a run goes on when
                    // the presenter starts or leaves.
                    // While a question hides the result, training and the lab, which would show
                    // it, say so in their place instead.
                    {(!embed || embed_trains).then(|| view! {
                        <PlaceBody place=Place::Train also=presenting>
                            {move || match (training.get(), trainable.get()) {
                                (true, _) => view! { <TrainingPanel model trace /> }.into_any(),
                                (false, true) => view! {
                                    <p class="panel place-note" data-testid="train-waits">
                                        {if embed { QUIZ_HIDES_PLACE_EMBED } else { QUIZ_HIDES_PLACE }}
                                    </p>
                                }.into_any(),
                                (false, false) => ().into_any(),
                            }}
                        </PlaceBody>
                    })}
                    {move || (!presenting.get() && !embed && ui.settled_below.get()).then(|| view! {
                        <PlaceBody place=Place::Lab>
                            {move || if quiz.hidden.get() {
                                view! { <p class="panel place-note" data-testid="lab-waits">{QUIZ_HIDES_PLACE}</p> }.into_any()
                            } else {
                                view! { <WhatIfLab model trace stage /> }.into_any()
                            }}
                        </PlaceBody>
                    }.into_any())}
                </main>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_step_through_the_stages_and_stop_at_the_ends() {
        assert_eq!(
            stage_step("ArrowRight", Stage::Input, None),
            Some(Stage::Projection)
        );
        assert_eq!(
            stage_step("ArrowRight", Stage::OutputProjection, None),
            Some(Stage::BackLoss)
        );
        assert_eq!(stage_step("ArrowRight", Stage::BackInput, None), None);
        assert_eq!(
            stage_step("ArrowLeft", Stage::Projection, None),
            Some(Stage::Input)
        );
        assert_eq!(stage_step("PageDown", Stage::Input, None), None);
    }
}
