//! Picking a heatmap cell with the pointer or the keyboard.

use crate::components::keyboard::{move_selection, Direction};
use crate::plot::Layout;

/// The cell that `key` moves the selection to from `from` in a `(rows, cols)` matrix: an arrow
/// moves one step, Home and End go to the ends of the row. `None` for any other key and for an
/// empty matrix.
pub fn cell_for_key(
    key: &str,
    shape: (usize, usize),
    from: (usize, usize),
) -> Option<(usize, usize)> {
    let (rows, cols) = shape;
    if rows == 0 || cols == 0 {
        return None;
    }
    // A selection left outside a matrix that shrank is brought back in first.
    let row = from.0.min(rows - 1);
    match key {
        "Home" => Some((row, 0)),
        "End" => Some((row, cols - 1)),
        key => Direction::from_key(key).map(|d| move_selection(shape, from, d)),
    }
}

/// The cell under a click at `offset` (CSS pixels from the canvas's corner) on a canvas shown
/// `shown_width` CSS pixels wide, whose drawing is `layout.width` wide (the two differ when the
/// page zooms the heatmap or squeezes it into a narrow column).
pub fn cell_at_click(
    layout: &Layout,
    shown_width: f64,
    offset: (f64, f64),
    shape: (usize, usize),
) -> Option<(usize, usize)> {
    let scale = f64::from(layout.width) / shown_width.max(1.0);
    layout.cell_at(offset.0 * scale, offset.1 * scale, shape.0, shape.1)
}

/// How far to scroll the page down so that a cell whose box spans `cell_top..cell_bottom` (CSS
/// pixels from the top of the window) shows above a sheet whose top edge is at `sheet_top`,
/// with a small margin; 0 when the cell already shows. The cell's top never goes above the
/// window's, so a cell taller than the room left is shown from its top.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn scroll_to_clear(cell_top: f64, cell_bottom: f64, sheet_top: f64) -> f64 {
    const MARGIN: f64 = 12.0;
    let covered = cell_bottom + MARGIN - sheet_top;
    if covered <= 0.0 {
        0.0
    } else {
        covered.min((cell_top - MARGIN).max(0.0))
    }
}

/// Where a floating explanation `panel_h` tall goes clear of the picture spanning
/// `picture.0..picture.1`, as the top of its box in page pixels: just below it, or else just above
/// it, wholly inside `visible` and the page's content `0..content_h`; `None` where neither fits.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn float_clear_of(
    picture: (f64, f64),
    panel_h: f64,
    visible: (f64, f64),
    content_h: f64,
) -> Option<f64> {
    const GAP: f64 = 8.0;
    let low = visible.0.max(0.0);
    let high = visible.1.min(content_h);
    let below = picture.1 + GAP;
    let above = picture.0 - GAP - panel_h;
    if below + panel_h <= high {
        Some(below)
    } else if above >= low {
        Some(above)
    } else {
        None
    }
}

/// Where a floating explanation `panel_h` tall goes, as the top of its box in page pixels: just
/// below the picked cell (spanning `cell.0..cell.1`) when it fits there, else just above it, else
/// on the side with more room. It stays inside `visible` (the part of the page the reader can
/// see) as far as it can, and always inside the page's own content, `0..content_h`, so showing
/// it never makes the page taller.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn float_top(cell: (f64, f64), panel_h: f64, visible: (f64, f64), content_h: f64) -> f64 {
    const GAP: f64 = 8.0;
    let low = visible.0.max(0.0);
    let high = visible.1.min(content_h);
    let below = high - cell.1 - GAP;
    let above = cell.0 - GAP - low;
    let top = if panel_h <= below {
        cell.1 + GAP
    } else if panel_h <= above {
        cell.0 - GAP - panel_h
    } else if below >= above {
        // Neither side holds it: cover as little of the cell's row as the room allows.
        (high - panel_h).min(cell.1 + GAP)
    } else {
        low.max(cell.0 - GAP - panel_h)
    };
    top.min(content_h - panel_h).max(0.0)
}

thread_local! {
    /// Whether the reader has picked a cell themselves: only then may showing its explanation
    /// scroll the host page of an embed (a cell a link picks opens where the page is).
    static PICKED_BY_READER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Notes that the reader picked a cell, by a click, a tap or a key.
pub fn picked_by_reader() {
    PICKED_BY_READER.with(|p| p.set(true));
}

/// Keeps `cell` of `canvas` (drawn to `layout`) and its explanation both in sight: a sheet fixed
/// over the bottom of the window scrolls the page so the cell shows above it, unless the reader
/// did not pick the cell (the first screen, a link, a preset): then the sheet first folds to its
/// title (`fold`), so the page opens as it is, and scrolls only where that is not enough; a
/// explanation (in an embed, whose frame is as tall as its content, so "the bottom of the
/// window" may be far below what the reader sees) is placed beside the cell, within the part of
/// the frame the host page shows.
#[cfg(target_arch = "wasm32")]
pub fn keep_clear_of_sheet(
    canvas: &web_sys::HtmlCanvasElement,
    layout: &Layout,
    cell: (usize, usize),
    fold: impl FnOnce(),
) {
    use leptos::prelude::{document, window};
    use wasm_bindgen::{closure::Closure, JsCast};
    let Some(sheet) = document().get_element_by_id("explain-panel") else {
        return;
    };
    let rect = canvas.get_bounding_client_rect();
    let scale = rect.width() / f64::from(layout.width.max(1));
    let top = rect.top() + f64::from(layout.grid_y + cell.0 as u32 * layout.cell_h) * scale;
    let bottom = top + f64::from(layout.cell_h) * scale;
    if sheet.class_list().contains("floating") {
        let Ok(sheet) = sheet.dyn_into::<web_sys::HtmlElement>() else {
            return;
        };
        let scroll_y = window().scroll_y().unwrap_or(0.0);
        let cell_box = (top + scroll_y, bottom + scroll_y);
        // The whole picture of the cell's line, which the explanation keeps clear of where it
        // can: the operands it names and the heatmap a reader clicks next.
        let line = canvas.closest(".line").ok().flatten();
        // Room made below a line for an earlier explanation is given back first.
        if let Ok(made) = document().query_selector_all(".line.made-room") {
            for i in 0..made.length() {
                if let Some(el) = made
                    .item(i)
                    .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                {
                    let _ = el.class_list().remove_1("made-room");
                }
            }
        }
        let line_box = line
            .as_ref()
            .map(|line| line.get_bounding_client_rect())
            .map_or(cell_box, |r| (r.top() + scroll_y, r.bottom() + scroll_y));
        // The visible part of the frame: an intersection observer with no root measures
        // against the host page's viewport, even across origins; its first report is the
        // current state.
        let place = Closure::<dyn Fn(js_sys::Array, web_sys::IntersectionObserver)>::new(
            move |entries: js_sys::Array, observer: web_sys::IntersectionObserver| {
                observer.disconnect();
                let Ok(entry) = entries
                    .get(0)
                    .dyn_into::<web_sys::IntersectionObserverEntry>()
                else {
                    return;
                };
                let seen = entry.intersection_rect();
                let content_h = document()
                    .body()
                    .map_or(0.0, |b| b.get_bounding_client_rect().height());
                // Where Previous and Next sit in a bar at the foot of the frame, below the
                // cell, the explanation ends above them: the next step is never covered.
                let content_h = document()
                    .query_selector(".stage-area > .stage-controls")
                    .ok()
                    .flatten()
                    .map(|bar| bar.get_bounding_client_rect().top() + scroll_y)
                    .filter(|&bar_top| bar_top > cell_box.1)
                    .map_or(content_h, |bar_top| content_h.min(bar_top));
                let visible = if seen.height() > 0.0 {
                    (seen.top() + scroll_y, seen.bottom() + scroll_y)
                } else {
                    (0.0, content_h)
                };
                let parent_top = sheet
                    .offset_parent()
                    .map_or(0.0, |p| p.get_bounding_client_rect().top() + scroll_y);
                let panel_h = f64::from(sheet.offset_height());
                // Below the picture's line inside the frame as it is; else below the line with
                // room made for it (the frame grows, and the host fits the frame to it), where
                // the reader sees it there, or will once the host page scrolls it into view
                // with the cell still in sight above it; else above the line; else over the
                // picture, clear of the cell. Below comes first: above the line are the stage's
                // title and formula.
                let below = line_box.1 + 8.0 + panel_h;
                let in_sight = visible.1 >= content_h - 2.0 || below <= visible.1;
                // A cell a link picked is explained below its line wherever the page is: the
                // reader meets it there, below the picture, as in a printed figure.
                let by_reader = PICKED_BY_READER.with(std::cell::Cell::get);
                let brought = !by_reader || below - cell_box.0 <= visible.1 - visible.0;
                let clear = float_clear_of(line_box, panel_h, visible, content_h);
                let at = match clear {
                    Some(at) if at > line_box.1 => at,
                    _ if (in_sight || brought) && line.is_some() => {
                        // The line makes room below itself: what follows it (the notes,
                        // Previous and Next) moves down, and the host fits the frame to it.
                        if let Some(line) = line
                            .as_ref()
                            .and_then(|l| l.dyn_ref::<web_sys::HtmlElement>())
                        {
                            let _ = line
                                .style()
                                .set_property("--float-room", &format!("{:.0}px", panel_h + 16.0));
                            let _ = line.class_list().add_1("made-room");
                        }
                        if !in_sight && by_reader {
                            show_once_fitted(sheet.clone().into(), 30);
                        }
                        line_box.1 + 8.0
                    }
                    Some(at) => at,
                    None => float_top(cell_box, panel_h, visible, content_h),
                } - parent_top;
                let _ = sheet.style().set_property("top", &format!("{at:.0}px"));
            },
        );
        if let Ok(observer) = web_sys::IntersectionObserver::new(place.as_ref().unchecked_ref()) {
            if let Some(root) = document().document_element() {
                observer.observe(&root);
            }
        }
        place.forget();
        return;
    }
    let fixed = crate::components::fit::computed(&sheet, "position").is_some_and(|p| p == "fixed");
    if !fixed {
        return;
    }
    let mut by = scroll_to_clear(top, bottom, sheet.get_bounding_client_rect().top());
    let by_reader = PICKED_BY_READER.with(std::cell::Cell::get);
    if by > 0.0 && !by_reader && !sheet.class_list().contains("folded") {
        // Folded now, so that it is measured so and painted so.
        let _ = sheet.class_list().add_1("folded");
        fold();
        by = scroll_to_clear(top, bottom, sheet.get_bounding_client_rect().top());
    }
    if by > 0.0 {
        window().scroll_by_with_x_and_y(0.0, by);
    }
}

/// Scrolls `el` into the reader's sight, the least distance, once the host page has fitted the
/// frame to its grown content (or after `frames` animation frames, for a host that does not):
/// scrolled before, it would scroll the frame's own content instead.
#[cfg(target_arch = "wasm32")]
fn show_once_fitted(el: web_sys::Element, frames: u32) {
    use leptos::prelude::{document, request_animation_frame};
    request_animation_frame(move || {
        let content = document()
            .document_element()
            .map_or(0.0, |e| f64::from(e.scroll_height()));
        let frame = crate::components::window_size::inner_height();
        if content > frame + 1.0 && frames > 0 {
            show_once_fitted(el, frames - 1);
            return;
        }
        let options = web_sys::ScrollIntoViewOptions::new();
        options.set_block(web_sys::ScrollLogicalPosition::Nearest);
        el.scroll_into_view_with_scroll_into_view_options(&options);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floating_explanation_keeps_clear_of_the_picture_where_the_window_has_room() {
        // The picture at 300..500 of a 1000 px page, the window showing 100..700.
        assert_eq!(
            float_clear_of((300.0, 500.0), 150.0, (100.0, 700.0), 1000.0),
            Some(508.0)
        );
        // Too little room below: above it.
        assert_eq!(
            float_clear_of((300.0, 600.0), 150.0, (100.0, 700.0), 1000.0),
            Some(142.0)
        );
        // Room on neither side in the window: none.
        assert_eq!(
            float_clear_of((150.0, 600.0), 150.0, (100.0, 700.0), 1000.0),
            None
        );
        // Below it, the page's content ends first.
        assert_eq!(
            float_clear_of((300.0, 500.0), 150.0, (0.0, 900.0), 600.0),
            Some(142.0)
        );
    }

    #[test]
    fn a_floating_explanation_goes_below_its_cell_when_it_fits_there() {
        // Cell at 100..130 of a 700 px page, all of it visible: 8 px below the cell.
        assert_eq!(float_top((100.0, 130.0), 200.0, (0.0, 700.0), 700.0), 138.0);
    }

    #[test]
    fn a_floating_explanation_goes_above_a_cell_near_the_visible_bottom() {
        // The host shows 300..800 of the frame; the cell sits at 700..730.
        assert_eq!(
            float_top((700.0, 730.0), 200.0, (300.0, 800.0), 900.0),
            492.0
        );
    }

    #[test]
    fn a_floating_explanation_never_leaves_the_page_content() {
        // A cell at the very bottom of a short page, with a tall panel: it stays inside 0..400.
        let top = float_top((360.0, 390.0), 350.0, (0.0, 400.0), 400.0);
        assert!((0.0..=50.0).contains(&top), "{top}");
        // A panel taller than the page starts at its top.
        assert_eq!(float_top((10.0, 40.0), 500.0, (0.0, 400.0), 400.0), 0.0);
    }

    #[test]
    fn arrows_move_one_cell_and_stop_at_the_edges() {
        assert_eq!(cell_for_key("ArrowRight", (3, 4), (1, 1)), Some((1, 2)));
        assert_eq!(cell_for_key("ArrowDown", (3, 4), (2, 1)), Some((2, 1)));
        assert_eq!(cell_for_key("ArrowLeft", (3, 4), (0, 0)), Some((0, 0)));
    }

    #[test]
    fn home_and_end_go_to_the_ends_of_the_row() {
        assert_eq!(cell_for_key("Home", (3, 4), (2, 3)), Some((2, 0)));
        assert_eq!(cell_for_key("End", (3, 4), (1, 0)), Some((1, 3)));
        // After the matrix shrank, the row is brought back in.
        assert_eq!(cell_for_key("End", (2, 2), (5, 0)), Some((1, 1)));
    }

    #[test]
    fn other_keys_and_empty_matrices_pick_nothing() {
        assert_eq!(cell_for_key("a", (3, 4), (0, 0)), None);
        assert_eq!(cell_for_key("ArrowUp", (0, 0), (0, 0)), None);
        assert_eq!(cell_for_key("Home", (3, 0), (0, 0)), None);
    }

    #[test]
    fn a_click_on_a_zoomed_canvas_finds_the_cell_drawn_there() {
        let layout = Layout {
            width: 200,
            height: 100,
            grid_x: 40,
            grid_y: 20,
            cell_w: 30,
            cell_h: 20,
            show_values: true,
            label_chars: 4,
            col_label_h: 18,
            col_labels_upright: false,
            caption_h: 18,
        };
        // Drawn 200 wide, shown 400 wide: every CSS pixel is half a drawing pixel.
        assert_eq!(
            cell_at_click(&layout, 400.0, (2.0 * 75.0, 2.0 * 45.0), (3, 4)),
            Some((1, 1))
        );
        assert_eq!(cell_at_click(&layout, 200.0, (10.0, 10.0), (3, 4)), None);
        assert_eq!(cell_at_click(&layout, 0.0, (0.0, 0.0), (3, 4)), None);
    }

    #[test]
    fn a_cell_under_the_sheet_is_scrolled_just_above_it() {
        // Already clear of a sheet starting at 500.
        assert_eq!(scroll_to_clear(100.0, 130.0, 500.0), 0.0);
        // Its bottom 30 px under the sheet's top: scroll by that and the margin.
        assert_eq!(scroll_to_clear(500.0, 530.0, 500.0), 42.0);
        // Never so far that the cell's top leaves the window.
        assert_eq!(scroll_to_clear(40.0, 900.0, 500.0), 28.0);
    }
}
