//! Links, embedding and the page options read from the query string.

use super::context::Selection;
use crate::attention::Stage;
use crate::formats::page::{embed_code, embed_src, full_view_url, EmbedOptions};
use crate::formats::permalink::{
    cell_off_stage, decode, encode, history_step, HistoryStep, ShareState,
};
use crate::state::Model;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// Everything the URL holds, read from the app's signals.
#[derive(Clone, Copy)]
pub struct Shared {
    /// The model.
    pub model: RwSignal<Model>,
    /// The stage.
    pub stage: RwSignal<Stage>,
    /// The head at per-head stages.
    pub head: RwSignal<usize>,
    /// The query row decoding and the tiles show.
    pub row: RwSignal<Option<usize>>,
    /// The selected cell.
    pub selection: RwSignal<Option<Selection>>,
    /// Quiz mode and its question set.
    pub quiz: RwSignal<Option<u64>>,
}

impl Shared {
    fn state(&self) -> ShareState {
        ShareState {
            model: self.model.get(),
            stage: self.stage.get(),
            head: self.head.get(),
            row: self.row.get(),
            cell: self.selection.get().map(|s| (s.panel, s.row, s.col)),
            quiz: self.quiz.get(),
        }
    }

    fn apply(&self, state: ShareState) {
        self.model.set(state.model);
        self.stage.set(state.stage);
        self.head.set(state.head);
        self.row.set(state.row);
        self.quiz.set(state.quiz);
        self.selection.set(
            state
                .cell
                .map(|(panel, row, col)| Selection { panel, row, col }),
        );
    }
}

/// How long fine adjustments wait before they rewrite the address: dragging a value changes it
/// many times a second, and browsers throttle pages that rewrite their history that often.
const REPLACE_DELAY: std::time::Duration = std::time::Duration::from_millis(250);

thread_local! {
    /// The address waiting to replace the current history entry, made when it is written.
    static PENDING: std::cell::RefCell<Option<PendingUrl>> = const { std::cell::RefCell::new(None) };
    /// When the waiting address is written.
    static ADJUSTED: super::pause::Pause = const { super::pause::Pause::new(REPLACE_DELAY) };
}

fn replace_url(url: &str) {
    if let Ok(history) = window().history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(url));
    }
}

/// Makes the address of a state once it is written.
type PendingUrl = Box<dyn FnOnce() -> String>;

/// Drops the waiting address, if any, and returns it.
fn take_pending() -> Option<String> {
    PENDING.with(|p| p.borrow_mut().take()).map(|url| url())
}

/// Forgets the waiting address, if any.
fn drop_pending() {
    PENDING.with(|p| p.borrow_mut().take());
}

/// Writes the waiting address now, so the address bar shows the latest state.
fn flush_pending() {
    if let Some(url) = take_pending() {
        replace_url(&url);
    }
}

/// Replaces the current history entry with `url` once the adjustments pause.
fn replace_soon(url: PendingUrl) {
    PENDING.with(|p| *p.borrow_mut() = Some(url));
    super::pause::Pause::restart(&ADJUSTED, flush_pending);
}

pub(super) fn current_fragment() -> String {
    flush_pending();
    window()
        .location()
        .hash()
        .unwrap_or_default()
        .trim_start_matches('#')
        .to_string()
}

/// The full view of the state on screen: this page's address without its embed options.
pub fn full_view_href() -> String {
    let href = window().location().href().unwrap_or_default();
    full_view_url(&href, &current_fragment())
}

/// Points a full-view link at the state on screen as it is followed: the address bar may be a
/// step behind (an embed rewrites it once edits pause), so the link is made when pressed.
pub fn point_at_full_view(ev: &web_sys::Event) {
    let link = ev
        .current_target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlAnchorElement>().ok());
    if let Some(link) = link {
        link.set_href(&full_view_href());
    }
}

/// Drops the page option `key` from the address bar's query string and fragment, keeping the
/// rest of the address and the history entry.
pub fn drop_page_option(key: &str) {
    let location = window().location();
    let search = location.search().unwrap_or_default();
    let kept = crate::formats::page::without_option(&search, key);
    let fragment = current_fragment();
    // The option written into the link's fragment goes too.
    let kept_fragment = crate::formats::page::without_option(&fragment, key);
    let kept_fragment = kept_fragment.trim_start_matches('?');
    if kept != search || kept_fragment != fragment {
        let path = location.pathname().unwrap_or_default();
        let hash = if kept_fragment.is_empty() {
            String::new()
        } else {
            format!("#{kept_fragment}")
        };
        replace_url(&format!("{path}{kept}{hash}"));
    }
}

/// Restores the state from the address bar, then keeps the address bar following the state:
/// meaningful steps get a history entry, fine adjustments replace it, and Back/Forward restore.
/// `notices` lists the parts of the link on show that could not be used; a link pasted into the
/// address bar of the open page replaces them. Without `own_history` (an embed, whose history
/// entries would be its host page's), every step only rewrites the current entry.
pub fn sync_with_url(
    shared: Shared,
    stage_override: Option<Stage>,
    notices: RwSignal<Vec<String>>,
    own_history: bool,
    landing: Option<ShareState>,
) {
    let ui = super::context::ui_context();
    let fragment = current_fragment();
    let mut restored = ShareState::default();
    let landed = fragment.is_empty() && landing.is_some();
    if !fragment.is_empty() {
        let decoded = decode(&fragment);
        notices.set(decoded.notices);
        restored = decoded.state;
        shared.apply(restored.clone());
    } else if let Some(first) = landing {
        restored = first;
        shared.apply(restored.clone());
    }
    if let Some(stage) = stage_override {
        if stage != restored.stage {
            // The cell a link names is on its own stage's pictures only.
            shared.selection.set(None);
            restored.cell = None;
        }
        shared.stage.set(stage);
        restored.stage = stage;
    }
    if restored.cell.is_some() {
        keep_cell_on_stage(shared, notices, ui);
    }
    if landed {
        // The address carries what the page opened on, so Back to it and a reload find it.
        let location = window().location();
        replace_url(&format!(
            "{}{}#{}",
            location.pathname().unwrap_or_default(),
            location.search().unwrap_or_default(),
            encode(&restored)
        ));
    }

    let last = StoredValue::new(restored);
    // A sentence typed letter by letter is one step: pushes within this window replace.
    let last_sentence_push = StoredValue::new(f64::NEG_INFINITY);
    let restoring = StoredValue::new(false);
    // The training run whose frames were given a history entry: its later frames replace it.
    let pushed_run = StoredValue::new(None::<u64>);

    Effect::new(move |_| {
        let state = shared.state();
        if restoring.get_value() {
            restoring.set_value(false);
            last.set_value(state);
            return;
        }
        let previous = last.get_value();
        let mut step = history_step(&previous, &state);
        let run = ui.trained.with_value(|t| {
            t.as_ref()
                .filter(|(_, model)| *model == state.model)
                .map(|(run, _)| *run)
        });
        if let (Some(run), HistoryStep::Push) = (run, step) {
            if pushed_run.get_value() == Some(run) {
                step = HistoryStep::Replace;
            } else {
                pushed_run.set_value(Some(run));
            }
        }
        if !own_history && step == HistoryStep::Push {
            step = HistoryStep::Replace;
        }
        let now = js_sys::Date::now();
        let only_sentence = step == HistoryStep::Push
            && previous.model.sentence != state.model.sentence
            && previous.stage == state.stage
            && previous.model.config == state.model.config;
        if only_sentence {
            if now - last_sentence_push.get_value() < 1500.0 {
                step = HistoryStep::Replace;
            }
            last_sentence_push.set_value(now);
        }
        last.set_value(state.clone());
        if step == HistoryStep::Keep {
            return;
        }
        let url = move || {
            let location = window().location();
            format!(
                "{}{}#{}",
                location.pathname().unwrap_or_default(),
                location.search().unwrap_or_default(),
                encode(&state)
            )
        };
        if step == HistoryStep::Push {
            // The new entry carries the latest state; a waiting replace would be older.
            drop_pending();
            if let Ok(history) = window().history() {
                let _ = history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url()));
            }
        } else {
            // Written, and so encoded, once the adjustments pause.
            replace_soon(Box::new(url));
        }
    });

    let on_pop = Closure::<dyn Fn(web_sys::Event)>::new(move |_| {
        // The entry moved to must keep its own address.
        drop_pending();
        let decoded = decode(&current_fragment());
        restoring.set_value(true);
        let cell = decoded.state.cell.is_some();
        shared.apply(decoded.state);
        notices.set(decoded.notices);
        if cell {
            keep_cell_on_stage(shared, notices, ui);
        }
    });
    let _ = window().add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
    on_pop.forget();
    // Leaving or hiding the page keeps the last adjustment in the address (and so in a reload).
    let on_hide = Closure::<dyn Fn(web_sys::Event)>::new(|_| flush_pending());
    for event in ["pagehide", "visibilitychange"] {
        let _ = window().add_event_listener_with_callback(event, on_hide.as_ref().unchecked_ref());
    }
    on_hide.forget();
}

/// Once the stage a link opened is drawn, shows the link's cell: where the stage shows one head
/// or one of Q, K and V at a time, the one the cell belongs to. A cell the stage does not draw
/// at all (a link written by hand) is unselected, with a notice saying so: its explanation
/// would describe numbers that are not on the screen.
fn keep_cell_on_stage(
    shared: Shared,
    notices: RwSignal<Vec<String>>,
    ui: super::context::UiContext,
) {
    request_animation_frame(move || {
        let Some(selection) = shared.selection.get_untracked() else {
            return;
        };
        if cell_drawn(&selection.panel) {
            return;
        }
        let stage = shared.stage.get_untracked();
        // The head a per-head matrix's name ends with, or the part Q, K or V names.
        let head = crate::panels::panel_head(&selection.panel);
        let part = crate::panels::projection_part(&selection.panel);
        match (head, part) {
            (Some(h), _) if h != shared.head.get_untracked() => shared.head.set(h),
            (_, Some(p)) if p != untrack(|| ui.part_of(stage)) => ui.stage_part.set((stage, p)),
            _ => {
                notices.update(|n| n.push(cell_off_stage(&selection.panel, ui.embed)));
                shared.selection.set(None);
                return;
            }
        }
        request_animation_frame(move || {
            if !cell_drawn(&selection.panel) {
                notices.update(|n| n.push(cell_off_stage(&selection.panel, ui.embed)));
                shared.selection.set(None);
            }
        });
    });
}

/// Whether the stage on the page draws the matrix named `panel` (or hides it for a question).
fn cell_drawn(panel: &str) -> bool {
    let names = [format!("canvas-{panel}"), format!("hidden-{panel}")];
    document()
        .query_selector_all(".app .stage [data-testid]")
        .ok()
        .is_some_and(|all| {
            (0..all.length()).any(|i| {
                all.item(i)
                    .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                    .and_then(|el| el.get_attribute("data-testid"))
                    .is_some_and(|id| names.contains(&id))
            })
        })
}

/// Sends the page's height to the embedding page; `stepped` says it follows a step to another
/// stage, after which the embed code's script shows the frame's top if it is above the window.
fn post_height(stepped: bool) {
    let Some(parent) = window().parent().ok().flatten() else {
        return;
    };
    // The content's own height: the root's scroll height is never less than the frame's, so a
    // frame that was too tall would never shrink.
    let height = document()
        .body()
        .map(|b| b.get_bounding_client_rect().height().ceil() as i32)
        .unwrap_or(0);
    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&message, &"type".into(), &"attention-lens:height".into());
    let _ = js_sys::Reflect::set(&message, &"height".into(), &f64::from(height).into());
    if stepped {
        let _ = js_sys::Reflect::set(&message, &"step".into(), &true.into());
    }
    let _ = parent.post_message(&message, "*");
}

/// Sends the page height to the embedding page whenever it changes.
pub fn post_height_to_parent() {
    if window().parent().ok().flatten().is_none() {
        return;
    }
    post_height(false);
    let callback = Closure::<dyn Fn(js_sys::Array)>::new(move |_| post_height(false));
    if let Ok(observer) = web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()) {
        if let Some(root) = document().document_element() {
            observer.observe(&root);
        }
        if let Some(body) = document().body() {
            observer.observe(&body);
        }
    }
    callback.forget();
}

/// Tells the embedding page that the reader stepped to another stage, with the new stage's
/// height, once it is laid out: a reader who pressed Next at the foot of a tall stage would
/// otherwise be left below a frame that shrank.
pub fn post_step_to_parent() {
    request_animation_frame(|| post_height(true));
}

/// Copies `text` to the clipboard and reports the outcome in `status`.
pub(super) fn copy(
    text: String,
    done: &'static str,
    status: RwSignal<String>,
    fallback: RwSignal<Option<String>>,
) {
    let clipboard = window().navigator().clipboard();
    let promise = clipboard.write_text(&text);
    let ok = Closure::once(move |_: wasm_bindgen::JsValue| status.set(done.to_string()));
    let failed = Closure::once(move |_: wasm_bindgen::JsValue| {
        status.set("Copying was blocked: select the text below and copy it.".into());
        fallback.set(Some(text));
    });
    let _ = promise.then2(&ok, &failed);
    ok.forget();
    failed.forget();
}

/// The widths of a post's column the embed's preview offers, in CSS pixels: a wide blog column,
/// a narrow one, a phone's.
const PREVIEW_COLUMNS: [u32; 3] = [700, 400, 360];

/// "Copy link", and "Copy embed code" with how the embed opens and a preview of it.
#[component]
pub fn ShareButtons() -> impl IntoView {
    let status = RwSignal::new(String::new());
    let fallback = RwSignal::new(None::<String>);
    let options = RwSignal::new(EmbedOptions::default());
    let preview = RwSignal::new(None::<String>);
    let dialog = NodeRef::<leptos::html::Dialog>::new();
    let frame = NodeRef::<leptos::html::Iframe>::new();
    // The preview's column, as wide as a blog's, and the height the embed asks its host for.
    let column = RwSignal::new(PREVIEW_COLUMNS[0]);
    // The widest column the screen leaves the post, measured when the preview opens.
    let room = RwSignal::new(None::<u32>);
    let frame_height = RwSignal::new(None::<f64>);
    let _heights = window_event_listener(leptos::ev::message, move |ev| {
        let from_frame = frame.get_untracked().is_some_and(|f| {
            let window = f.content_window().map(JsValue::from);
            ev.source()
                .is_some_and(|s| window.is_some_and(|w| JsValue::from(s) == w))
        });
        if !from_frame {
            return;
        }
        let data = ev.data();
        let field = |name: &str| js_sys::Reflect::get(&data, &name.into()).ok();
        let is_height =
            field("type").and_then(|t| t.as_string()).as_deref() == Some("attention-lens:height");
        let height = field("height").and_then(|h| h.as_f64());
        if let (true, Some(h)) = (is_height, height) {
            if h > 0.0 && h < 20_000.0 {
                frame_height.set(Some(h.ceil()));
            }
        }
    });
    let href = || window().location().href().unwrap_or_default();
    let src = move || embed_src(&href(), &current_fragment(), &options.get_untracked());
    // The options change only while the preview, a modal dialog, is closed: it opens on them.
    let change = move |f: &dyn Fn(&mut EmbedOptions)| options.update(|o| f(o));
    let toggle = move |id: &'static str,
                       label: &'static str,
                       get: fn(&EmbedOptions) -> bool,
                       f: fn(&mut EmbedOptions, bool)| {
        view! {
            <label class="toggle">
                <input type="checkbox" data-testid=id
                    prop:checked=move || options.with(get)
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        change(&|o| f(o, on));
                    } />
                " " {label}
            </label>
        }
    };
    view! {
        <div class="share">
            <button type="button" data-testid="copy-link"
                on:click=move |_| copy(full_view_url(&href(), &current_fragment()), "Link copied.", status, fallback)>
                "Copy link"
            </button>
            // The options belong to the button: drawn as one group, so none reads alone.
            <fieldset class="embed-options" data-testid="embed-options">
                <legend>"Embed in a page"</legend>
                <span class="embed-group" role="group" aria-label="Embed code">
                    <button type="button" data-testid="copy-embed"
                        on:click=move |_| copy(embed_code(&href(), &current_fragment(), &options.get_untracked()), "Embed code copied.", status, fallback)>
                        "Copy embed code"
                    </button>
                    <label class="toggle embed-editors" title="Embed with the sentence, settings and matrices beside the stage">
                        <input type="checkbox" data-testid="embed-editors"
                            prop:checked=move || options.with(|o| o.editors)
                            on:change=move |ev| {
                                let on = event_target_checked(&ev);
                                change(&|o| o.editors = on);
                            } />
                        " with editors"
                    </label>
                </span>
                <label class="embed-theme">"Colours "
                    <select data-testid="embed-theme"
                        on:change=move |ev| {
                            let dark = match event_target_value(&ev).as_str() {
                                "dark" => Some(true),
                                "light" => Some(false),
                                _ => None,
                            };
                            change(&|o| o.dark = dark);
                        }>
                        <option value="follow" selected=true>"follow the reader"</option>
                        <option value="light">"light"</option>
                        <option value="dark">"dark"</option>
                    </select>
                </label>
                {toggle("embed-quiz", "as a quiz", |o| o.quiz, |o, on| o.quiz = on)}
                {toggle("embed-cell", "with the picked cell explained", |o| o.cell, |o, on| o.cell = on)}
                {toggle("embed-start", "from the first stage", |o| o.from_start, |o, on| o.from_start = on)}
                {toggle("embed-train", "with the training view", |o| o.train, |o, on| o.train = on)}
                <button type="button" data-testid="embed-preview" aria-haspopup="dialog"
                    on:click=move |_| {
                        frame_height.set(None);
                        preview.set(Some(src()));
                        if let Some(d) = dialog.get_untracked() {
                            let _ = d.show_modal();
                            let post = d.query_selector(".embed-preview-post").ok().flatten();
                            room.set(post.and_then(|p| p.parent_element()).map(|p| {
                                // The post's padding, 0.75rem a side.
                                (f64::from(p.client_width()) - 24.0).max(0.0) as u32
                            }));
                        }
                    }>
                    "Preview the embed"
                </button>
            </fieldset>
            // The embed as a reader meets it: in a column of a post, as wide as a blog's, between
            // the post's words, over the page (Esc or Close leaves).
            <dialog class="embed-preview-dialog" data-testid="embed-preview-dialog" node_ref=dialog
                aria-labelledby="embed-preview-title"
                on:close=move |_| preview.set(None)>
                <div class="embed-preview-head">
                    <h2 id="embed-preview-title">"Preview of the embed"</h2>
                    <span class="embed-preview-label" id="embed-preview-columns">"The post's column:"</span>
                    <span class="embed-preview-columns" role="group" aria-labelledby="embed-preview-columns">
                        {PREVIEW_COLUMNS.map(|w| view! {
                            <button type="button" data-testid=format!("embed-preview-{w}")
                                aria-pressed=move || (column.get() == w).to_string()
                                on:click=move |_| column.set(w)>
                                {format!("{w} px")}
                            </button>
                        }).collect_view()}
                    </span>
                    <button type="button" class="embed-preview-close" data-testid="embed-preview-close"
                        on:click=move |_| if let Some(d) = dialog.get_untracked() { d.close(); }>
                        "Close"
                    </button>
                </div>
                {move || room.get().filter(|&r| r < column.get()).map(|r| view! {
                    <p class="embed-preview-room" data-testid="embed-preview-room">
                        {format!("This screen is narrower: the column is {r} px wide.")}
                    </p>
                })}
                <div class="embed-preview-post" style:max-width=move || format!("{}px", column.get())>
                    <p class="embed-preview-words">"A post's words, then the embed:"</p>
                    {move || preview.get().map(|src| view! {
                        <iframe class="embed-preview" data-testid="embed-preview-frame" src=src
                            node_ref=frame title="Preview of the embed"
                            style:height=move || frame_height.get().map(|h| format!("{h}px"))></iframe>
                    })}
                    <p class="embed-preview-words">"The post goes on below it."</p>
                </div>
            </dialog>
            <span class="share-status" role="status" data-testid="share-status">{move || status.get()}</span>
            {move || fallback.get().map(|text| view! {
                <textarea class="share-fallback" readonly=true data-testid="share-fallback" rows="3">{text}</textarea>
            }.into_any())}
        </div>
    }
}
