//! The stage's picture laid out by the one rule ([`crate::plot::place`]) in the box the page
//! gives it: the column beside the explanation in a window, an embed's frame, a phone's column,
//! or the screen above the presenter bar and the explanation's sheet. The page is read for two
//! things only, the box and the pieces' sizes at zoom 1; the rule decides the rest, and the
//! style sheet draws the pictures from `--zoom`, `--given-zoom`, `--lines-w` and `data-one-row`.

use super::context::{ui_context, UiContext};
use super::window_size;
use crate::plot::{place, Picture, PictureLine, Piece, Placement, Role, Room, Rule};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};

/// Lays the stage out again after every step, change of numbers, explanation opened or closed,
/// or resize.
pub fn fit_stage(track: impl Fn() + 'static) {
    let ui = ui_context();
    let resized = RwSignal::new(0u32);
    let _resize = window_event_listener(leptos::ev::resize, move |_| {
        resized.update(|n| *n = n.wrapping_add(1));
    });
    Effect::new(move |_| {
        track();
        resized.track();
        let presenting = ui.presenting.get();
        let magnify = if presenting { ui.magnify.get() } else { 1.0 };
        // Printed, the stage is laid out on the page at once: the browser prints before the
        // next frame.
        if ui.printing.get() {
            let drawn = ui.placement.with_untracked(|p| (p.zoom, p.given_share));
            let stage = element(".app .stage");
            if let Some((p, _)) = stage.and_then(|stage| on_paper(&stage, 0.0, drawn, false)) {
                ui.placement.set(p);
            }
            return;
        }
        // Measured once the step is on the page, then again at the placement found: a caption
        // or a line of words may take other room at another zoom, and a presented step that
        // still runs past the screen is fitted again into a room smaller by as much.
        let settle = move |spare: Spare| {
            // A frame late, the place may have changed (presenter mode left while training
            // redraws the step every frame): the run the change started lays it out instead.
            let now = ui.presenting.get_untracked();
            if now != presenting || (now && ui.magnify.get_untracked() != magnify) {
                return;
            }
            if let Some((p, widest)) = placement(ui, presenting, spare) {
                // Zoomed in no further than the widest picture fits across the screen.
                if magnify > widest.max(1.0) {
                    ui.magnify.set((widest.max(1.0) * 100.0).floor() / 100.0);
                    return;
                }
                let p = magnified(p, magnify);
                if ui.placement.get_untracked() != p {
                    ui.placement.set(p);
                }
            }
        };
        settle_in_frames(
            ui,
            settle,
            presenting && magnify <= 1.0,
            Spare::default(),
            5,
            true,
        );
    });
}

/// How often, at most, a step is laid out again while training changes its numbers.
const TRAINING_REFIT_MS: f64 = 400.0;

/// A count for [`fit_stage`] to follow the changes of the numbers (`changed` is tracked) by:
/// it follows each change, except those a running training makes (the model is the one the
/// trainer last wrote), which change the numbers up to 60 times a second but the pictures'
/// sizes seldom: it follows those at most every [`TRAINING_REFIT_MS`], the last included.
pub fn numbers_to_fit(
    changed: impl Fn() + 'static,
    model: RwSignal<crate::state::Model>,
) -> ReadSignal<u32> {
    let ui = ui_context();
    let count = RwSignal::new(0u32);
    let last = StoredValue::new(f64::NEG_INFINITY);
    let waiting = StoredValue::new(false);
    let bump = move || {
        last.set_value(js_sys::Date::now());
        count.update(|n| *n = n.wrapping_add(1));
    };
    Effect::new(move |_| {
        changed();
        let trained = ui.trained.with_value(|t| {
            t.as_ref()
                .is_some_and(|(_, m)| model.with_untracked(|now| now == m))
        });
        let since = js_sys::Date::now() - last.get_value();
        if !trained || since >= TRAINING_REFIT_MS {
            bump();
        } else if !waiting.get_value() {
            waiting.set_value(true);
            let wait = (TRAINING_REFIT_MS - since).max(0.0) as u64;
            set_timeout(
                move || {
                    waiting.set_value(false);
                    bump();
                },
                std::time::Duration::from_millis(wait),
            );
        }
    });
    count.read_only()
}

fn element(selector: &str) -> Option<Element> {
    document().query_selector(selector).ok()?
}

/// The value of `property` in `el`'s computed style.
pub(crate) fn computed(el: &Element, property: &str) -> Option<String> {
    window()
        .get_computed_style(el)
        .ok()
        .flatten()?
        .get_property_value(property)
        .ok()
}

/// The room the explanation takes at the foot of the stage's column while it is open as a sheet:
/// from its top to the screen's foot (a training run's curve may sit below it); 0 where it sits
/// in a column of its own beside the stage (presenting a training run on a wide screen).
fn sheet_height() -> f64 {
    let Some(sheet) = element("#explain-panel.active.sheet") else {
        return 0.0;
    };
    let s = sheet.get_bounding_client_rect();
    let beside = element(".app .stage")
        .is_some_and(|stage| s.left() >= stage.get_bounding_client_rect().right());
    if beside {
        return 0.0;
    }
    let screen = window_size::inner_height();
    (screen - s.top()).max(s.height())
}

/// Room kept free of a presented step, in CSS pixels: as much as it ran past the screen's foot
/// or the stage's right edge when laid out in the whole room.
#[derive(Clone, Copy, Default)]
struct Spare {
    width: f64,
    height: f64,
}

/// Runs `settle` in the next frame with `spare` kept free of the room, then checks in the
/// frame after: a step that runs past the screen, or past the stage's side, where it must fit
/// (`fit`) is settled again into a room smaller by as much; else, the first time (`again`), it
/// is settled once more, as measured at the placement found (a caption or a line of words may
/// take other room at another zoom), and checked again. Every run ends with a check; `passes` bounds the runs.
fn settle_in_frames(
    ui: UiContext,
    settle: impl Fn(Spare) + Copy + 'static,
    fit: bool,
    spare: Spare,
    passes: u8,
    again: bool,
) {
    request_animation_frame(move || {
        settle(spare);
        if passes > 1 {
            request_animation_frame(move || {
                // A step that does not fit the height even at the least zoom keeps its height.
                let fits = ui.placement.with_untracked(|p| p.fits);
                // One that runs below the screen at any zoom still keeps to its width.
                let (over, wide) = match (fit, fits) {
                    (true, true) => (overflow(), overrun()),
                    (true, false) => (0.0, overrun()),
                    _ => (0.0, 0.0),
                };
                if over > 0.5 || wide > 0.5 {
                    let more = |by: f64| if by > 0.5 { by + 2.0 } else { 0.0 };
                    let spare = Spare {
                        width: spare.width + more(wide),
                        height: spare.height + more(over),
                    };
                    settle_in_frames(ui, settle, fit, spare, passes - 1, false);
                } else if again {
                    settle_in_frames(ui, settle, fit, spare, passes - 1, false);
                }
            });
        }
    });
}

/// How far the presented step runs past the bottom of the screen (less an open explanation's
/// sheet), in CSS pixels.
fn overflow() -> f64 {
    let Some(stage) = element(".app .stage") else {
        return 0.0;
    };
    let height = window_size::inner_height();
    let sheet = sheet_height();
    let page = f64::from(
        document()
            .document_element()
            .map_or(0, |e| e.scroll_height()),
    );
    // The room the page keeps below its content for an open sheet is not the step's: the
    // step's own foot is measured against the sheet's top.
    let sheet_room = document().body().map_or(0.0, |b| px(&b, "padding-bottom"));
    (stage.get_bounding_client_rect().bottom() - (height - sheet - 8.0))
        .max(page - sheet_room - height)
        .max(0.0)
}

/// How far the presented step's pictures run past the right of the stage's body, in CSS
/// pixels: a piece measured at one zoom may take a few pixels more at another.
fn overrun() -> f64 {
    let Some(body) = element(".app .stage .stage-body") else {
        return 0.0;
    };
    let edge = body.get_bounding_client_rect().left()
        + f64::from(body.client_left() + body.client_width())
        - px(&body, "padding-right");
    let Ok(pieces) = body.query_selector_all(".heatmap, .lines-figure, .op") else {
        return 0.0;
    };
    (0..pieces.length())
        .filter_map(|i| pieces.item(i)?.dyn_into::<Element>().ok())
        .map(|piece| piece.get_bounding_client_rect().right() - edge)
        .fold(0.0, f64::max)
}

/// `property` of `el` as computed, in CSS pixels (0 where it is not a length in pixels).
fn px(el: &Element, property: &str) -> f64 {
    computed(el, property)
        .and_then(|v| v.trim_end_matches("px").parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// `p` drawn `magnify` times larger, as the lecturer asked: larger than fitted, a line wraps
/// where it no longer fits across the screen, and the step may scroll down.
fn magnified(p: Placement, magnify: f64) -> Placement {
    if magnify == 1.0 {
        return p;
    }
    Placement {
        zoom: p.zoom * magnify,
        lines_width: p.lines_width * magnify,
        fits: p.fits && magnify < 1.0,
        one_row: p.one_row && magnify < 1.0,
        ..p
    }
}

/// The placement of the app's stage in its box, by the rule of the place it is in, and how many
/// times larger than placed its widest picture would still fit across the box.
fn placement(ui: UiContext, presenting: bool, spare: Spare) -> Option<(Placement, f64)> {
    let body = element(".app .stage .stage-body")?;
    let stage = element(".app .stage")?;
    let (zoom, share) = ui.placement.with_untracked(|p| (p.zoom, p.given_share));
    let width = f64::from(body.client_width());
    let (picture, above) = picture(
        &body,
        (zoom, share),
        presenting && body.class_list().contains("two-results"),
        !presenting && width <= PHONE_COLUMN,
    )?;
    let window_height = Some(window_size::inner_height()).filter(|h| *h > 0.0)?;
    let room = if presenting {
        window().scroll_to_with_x_and_y(0.0, 0.0);
        // An open explanation takes its room at the foot of the screen: the step fits above
        // it, so it covers neither its cell nor the operands.
        let sheet = sheet_height();
        let (b, s) = (
            body.get_bounding_client_rect(),
            stage.get_bounding_client_rect(),
        );
        Room {
            width: width - spare.width,
            height: window_height
                - sheet
                - 8.0
                - spare.height
                - above
                - b.top()
                - (s.bottom() - b.bottom()).max(0.0),
        }
    } else {
        // A page that scrolls: the picture fits the window's height below the stage's title
        // and formula where it can, and the column's width always.
        let above_body =
            body.get_bounding_client_rect().top() - stage.get_bounding_client_rect().top();
        Room {
            width,
            // An embed's frame takes the height of what it shows: only its width counts.
            height: if ui.embed {
                f64::INFINITY
            } else {
                window_height - above_body - above - FOOT
            },
        }
    };
    let rule = if presenting {
        Rule::PRESENTER
    } else if ui.embed {
        Rule::FRAME
    } else {
        Rule::SCREEN
    };
    let p = place(room, &picture, &rule);
    let widest = picture.widest(p.zoom, p.given_share);
    Some((p, room.width / widest.max(1.0)))
}

/// The room kept below a picture on a page that scrolls: the phone's stepper or a margin.
const FOOT: f64 = 72.0;

/// The widest a phone's column is, in CSS pixels, where each operator takes a row of its own
/// (the style sheet's `stage-area` container query).
const PHONE_COLUMN: f64 = 520.0;

/// A4's box at 96 px an inch, inside the page's margins (`@page { margin: 14mm 12mm }`).
pub const PAGE: Room = Room {
    width: 703.0,
    height: 1017.0,
};

/// The height a printed stage leaves spare on its page, in CSS pixels: the screen, which the
/// rule measures, and the paper set a line of words a few pixels apart.
const PAGE_SPARE: f64 = 24.0;

/// The zoom below which a handout's stage gives its pictures a page of their own and its notes
/// the next (digits about 7 pt), where that draws them larger and the notes fill a good part of
/// a page ([`NOTES_APART`]): a page of small pictures above long notes reads worse than two.
const PAPER_READABLE: f64 = 0.8;

/// The least height of the notes, in CSS pixels, that take a page of their own: shorter ones
/// would leave a page all but empty.
const NOTES_APART: f64 = 0.3 * PAGE.height;

/// Lays each stage of the printed handout out on a page of its own.
pub fn fit_pages() {
    let Ok(stages) = document().query_selector_all(".handout .print-stage") else {
        return;
    };
    // The first page also holds the handout's title and settings.
    let head =
        element(".handout .handout-head").map_or(0.0, |h| h.get_bounding_client_rect().height());
    for i in 0..stages.length() {
        let Some(stage) = stages.item(i).and_then(|s| s.dyn_into::<Element>().ok()) else {
            continue;
        };
        let Some(style) = stage.dyn_ref::<HtmlElement>().map(HtmlElement::style) else {
            continue;
        };
        let var = |name: &str, or: f64| {
            style
                .get_property_value(name)
                .ok()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .unwrap_or(or)
        };
        let zoom = var("--zoom", 1.0);
        let drawn = (zoom, var("--given-zoom", zoom) / zoom.max(0.1));
        if let Some((p, apart)) = on_paper(&stage, if i == 0 { head } else { 0.0 }, drawn, true) {
            set_on(&stage, &p);
            let _ = stage.set_attribute("data-notes-apart", if apart { "true" } else { "false" });
        }
    }
}

/// The placement of `stage` (an `article.stage`, drawn now at `drawn`: its zoom and its
/// operands' share) on a printed page: the page's width, and its height less the stage's title,
/// formula and notes and `above` (what the page has above it); and whether the notes go on the
/// next page instead, as they may (`notes_may_part`) where [`PAPER_READABLE`] says.
fn on_paper(
    stage: &Element,
    above: f64,
    drawn: (f64, f64),
    notes_may_part: bool,
) -> Option<(Placement, bool)> {
    let body = stage.query_selector(".stage-body").ok()??;
    // The handout's lines sit side by side where they fit; the app's, one under another.
    let side_by_side = stage.class_list().contains("print-stage");
    let (picture, above_lines) = picture(&body, drawn, side_by_side, false)?;
    let (s, b) = (
        stage.get_bounding_client_rect(),
        body.get_bounding_client_rect(),
    );
    let notes = stage
        .query_selector(".stage-notes")
        .ok()
        .flatten()
        .map_or(0.0, |n| n.get_bounding_client_rect().height());
    let room = |apart: bool| Room {
        width: PAGE.width,
        height: PAGE.height - above - above_lines - (s.height() - b.height())
            + if apart { notes } else { 0.0 }
            - PAGE_SPARE,
    };
    let together = place(room(false), &picture, &Rule::PRINT);
    if notes_may_part && together.zoom < PAPER_READABLE && notes >= NOTES_APART {
        let apart = place(room(true), &picture, &Rule::PRINT);
        if apart.zoom > together.zoom * 1.1 {
            return Some((apart, true));
        }
    }
    Some((together, false))
}

/// Writes a placement on one printed stage.
fn set_on(stage: &Element, p: &Placement) {
    let _ = stage.set_attribute("data-one-row", if p.one_row { "true" } else { "false" });
    if let Some(el) = stage.dyn_ref::<HtmlElement>() {
        let style = el.style();
        let _ = style.set_property("--zoom", &format!("{:.3}", p.zoom));
        let _ = style.set_property("--given-zoom", &format!("{:.3}", p.zoom * p.given_share));
        if p.lines_width > 0.0 {
            let _ = style.set_property("--lines-w", &format!("{:.1}px", p.lines_width));
        }
    }
}

/// The picture in `body`, drawn now with its results at `zoom` and its operands at `zoom ×
/// share`, sized at zoom 1: its lines side by side where they fit, or one under another, and
/// each operator on a row of its own or not; with the height, in CSS pixels, of the words above
/// its lines (a goal's sentence), which keep their size. `None` before its heatmaps have their
/// sizes.
fn picture(
    body: &Element,
    (zoom, share): (f64, f64),
    lines_side_by_side: bool,
    operators_own_row: bool,
) -> Option<(Picture, f64)> {
    let zoom = zoom.max(0.1);
    let mut lines = Vec::new();
    let mut above = 0.0;
    let mut gap = 0.0;
    let children = body.children();
    for i in 0..children.length() {
        let Some(child) = children.item(i) else {
            continue;
        };
        if !child.class_list().contains("line") {
            above += child.get_bounding_client_rect().height() + px(body, "row-gap");
            continue;
        }
        let heading = child
            .query_selector(".line-heading")
            .ok()
            .flatten()
            .map_or(0.0, |h| h.get_bounding_client_rect().height() / zoom);
        let Some(equation) = child.query_selector(".equation").ok().flatten() else {
            continue;
        };
        gap = px(&equation, "column-gap") / zoom;
        let mut pieces = Vec::new();
        // An operator glued to the picture after it is two pieces, which the rule keeps on one
        // row.
        let mut items = Vec::new();
        let children = equation.children();
        for j in 0..children.length() {
            let Some(item) = children.item(j) else {
                continue;
            };
            if item.class_list().contains("op-glue") {
                let inner = item.children();
                items.extend((0..inner.length()).filter_map(|k| inner.item(k)));
            } else {
                items.push(item);
            }
        }
        for item in items {
            if item.class_list().contains("given") {
                let inner = item.children();
                for k in 0..inner.length() {
                    if let Some(el) = inner.item(k) {
                        pieces.push(piece(&el, Role::Given, zoom * share)?);
                    }
                }
                continue;
            }
            // Not shown (the lines in a compact embed): not laid out.
            let shown = item.get_bounding_client_rect();
            if shown.width() == 0.0 && shown.height() == 0.0 {
                continue;
            }
            let given = item.query_selector(".given").ok().flatten().is_some();
            let role = if item.class_list().contains("op") {
                // Glued to the picture after it, unless operators take rows of their own.
                let glued = item
                    .parent_element()
                    .is_some_and(|p| p.class_list().contains("op-glue"));
                if glued && !operators_own_row {
                    Role::Lead
                } else {
                    Role::Operator
                }
            } else if item.class_list().contains("lines-figure") {
                let r = item
                    .query_selector("svg")
                    .ok()
                    .flatten()
                    .map(|svg| svg.get_bounding_client_rect())?;
                Role::Lines {
                    aspect: r.height() / r.width().max(1.0),
                }
            } else if given {
                Role::Given
            } else {
                Role::Result
            };
            let z = if given { zoom * share } else { zoom };
            let mut piece = piece(&item, role, z)?;
            // An operator on a row of its own stretches across it: only its height counts.
            if operators_own_row && role == Role::Operator {
                piece.width = 0.0;
            }
            pieces.push(piece);
        }
        lines.push(PictureLine { pieces, heading });
    }
    // Lines side by side are kept apart by the column gap and the rule before the second.
    let side_gap = body
        .query_selector(".line + .line")
        .ok()
        .flatten()
        .map_or(0.0, |l| {
            px(&l, "padding-left") + px(&l, "border-left-width")
        })
        + px(body, "column-gap");
    let picture = Picture {
        lines,
        gap,
        side_gap: side_gap / zoom,
        line_gap: px(body, "row-gap") / zoom,
        lines_side_by_side,
        operators_own_row,
        lines_alone: 1.0,
    };
    Some((picture, above))
}

/// One piece's size at zoom 1, drawn now at `zoom`. A heatmap's drawing counts at its own size,
/// not at the size a narrow column squeezes it to. `None` for a heatmap not yet sized.
fn piece(el: &Element, role: Role, zoom: f64) -> Option<Piece> {
    let r = el.get_bounding_client_rect();
    let (mut width, mut height) = (r.width() / zoom, r.height() / zoom);
    if let Role::Lines { .. } = role {
        // At their least width, under their caption: the rule sizes the drawing.
        let caption = el
            .query_selector("figcaption")
            .ok()
            .flatten()
            .map_or(0.0, |c| c.get_bounding_client_rect().height());
        return Some(Piece {
            role,
            width: LINES_LEAST,
            height: caption / zoom,
        });
    }
    let canvases = el.query_selector_all("canvas").ok()?;
    for i in 0..canvases.length() {
        let Some(canvas) = canvases
            .item(i)
            .and_then(|c| c.dyn_into::<HtmlElement>().ok())
        else {
            continue;
        };
        let drawn: f64 = canvas
            .style()
            .get_property_value("--w")
            .ok()
            .and_then(|w| w.trim().parse().ok())?;
        let c = canvas.get_bounding_client_rect();
        if c.width() > 0.0 {
            width += drawn - c.width() / zoom;
            height += drawn * c.height() / c.width() - c.height() / zoom;
        }
    }
    Some(Piece {
        role,
        width,
        height,
    })
}

/// The attention lines' least width at zoom 1, in CSS pixels.
const LINES_LEAST: f64 = 260.0;
