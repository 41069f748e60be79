//! The one layout rule: where a stage's picture goes in the box it is given.
//!
//! A stage's picture is lines (equations) of pieces: operands, operators, results and a head's
//! attention lines, each with its size at zoom 1. Every place a stage is seen (a window, a
//! projector, a phone's column, an embed's frame, a printed page) is a [`Room`] with a [`Rule`];
//! [`place`] picks the zoom, the operands' share of it and whether each line keeps its pieces
//! on one row. Everything in a picture is drawn proportionally to its zoom, so the picture's
//! size at any zoom follows from its size at zoom 1.

/// The box a picture is laid out in, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Room {
    /// The width the lines may take.
    pub width: f64,
    /// The height the whole picture may take.
    pub height: f64,
}

/// What a piece of a line is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Role {
    /// A matrix the line starts from, computed by an earlier stage: it may be drawn smaller
    /// than the line's result.
    Given,
    /// A matrix the line computes (or a placeholder for it, or a sentence in its place).
    Result,
    /// An operator between matrices: `·`, `=`, `÷ √2`.
    Operator,
    /// An operator kept on one row with the piece after it (any but an arrow, which may end a
    /// row): a wrapped line starts its row with `= Y` rather than end the row before with `=`.
    /// Where operators take rows of their own, it is an [`Role::Operator`].
    Lead,
    /// A head's attention lines: a drawing `aspect` times as tall as wide under a caption
    /// `height` tall. Beside other pieces they take the width left, from `width` up to
    /// [`LINES_GROWTH`] times it, no taller than the tallest piece beside them; on a row of
    /// their own they are [`Rule::lines_alone`] times `width` wide.
    Lines {
        /// Height over width.
        aspect: f64,
    },
}

/// How much wider than their least width the attention lines may grow.
pub const LINES_GROWTH: f64 = 3.25;

/// One piece of a line, sized at zoom 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Piece {
    /// What it is.
    pub role: Role,
    /// Width at zoom 1 (the least width, for attention lines).
    pub width: f64,
    /// Height at zoom 1 (for attention lines, at their least width).
    pub height: f64,
}

/// One equation: its pieces, left to right, and a heading above it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Line {
    /// The pieces in reading order.
    pub pieces: Vec<Piece>,
    /// The heading's height at zoom 1 (0 for none).
    pub heading: f64,
}

/// A stage's picture, sized at zoom 1.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Picture {
    /// The equations, one under another (or side by side, see `lines_side_by_side`).
    pub lines: Vec<Line>,
    /// The gap between pieces on a row, and between rows of a wrapped line, at zoom 1.
    pub gap: f64,
    /// The gap between lines one under another, at zoom 1.
    pub line_gap: f64,
    /// The gap between lines side by side, at zoom 1.
    pub side_gap: f64,
    /// Whether the lines sit side by side when they fit (a head's two gradients).
    pub lines_side_by_side: bool,
    /// Whether each operator takes a row of its own when a line wraps (a phone's column).
    pub operators_own_row: bool,
    /// How many times their least width attention lines on a row of their own are: [`place`]
    /// sets it from [`Rule::lines_alone`].
    pub lines_alone: f64,
}

/// What a place asks of its pictures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// The least and the largest zoom.
    pub zoom: (f64, f64),
    /// The zoom at which a result reads well in this place: the rule draws the operands
    /// smaller (down to `least_given_share` of the result's zoom) before it lets the result fall
    /// below it.
    pub readable: f64,
    /// The room's width at which `readable` holds (0 for any): a narrower room reads well at
    /// a zoom as much smaller, as a projector shows any screen as large on its wall.
    pub readable_width: f64,
    /// A result's least width as a share of the room's width (0 for none): raises `readable`
    /// for a picture whose results are narrow.
    pub result_share: f64,
    /// The smallest the operands are drawn, as a share of the result's zoom.
    pub least_given_share: f64,
    /// The zoom below which the operands are drawn smaller only when everything is (0 for
    /// none): a projector keeps their cells 24 px tall. Lines are kept on one row below it only
    /// where wrapping them cannot reach it either.
    pub least_given_zoom: f64,
    /// How much smaller a picture may be drawn to keep each line on one row: reading an
    /// equation left to right is worth a little size, but not cells below `least_given_zoom`.
    pub one_row_share: f64,
    /// Whether the picture must fit the room's height (presenter mode, a printed page) or may
    /// run below it at `readable` when it cannot (a page that scrolls).
    pub fit_height: bool,
    /// How many times their least width the attention lines are on a row of their own.
    pub lines_alone: f64,
    /// The largest zoom a picture that must fit the room's height but cannot, even at the
    /// least zoom, is drawn at, as wide as the room allows: it runs below the room whatever
    /// its size, so it is drawn to be read (a step presented on a phone). 0: at the least zoom
    /// (paper, which runs onto the next page).
    pub short_zoom: f64,
}

/// The size of a cell's numbers at zoom 1, in CSS pixels.
const DIGITS_PX: f64 = super::CELL_FONT_PX;

/// A heatmap cell's height at zoom 1, in CSS pixels.
const CELL_PX: f64 = 28.0;

impl Rule {
    /// A projector: as large as the screen allows, without scrolling; results read from the
    /// back of a room (digits 28 px tall on a 1920 px screen, as much smaller on a narrower one,
    /// which the projector shows as large) where the operands can give way, and the operands'
    /// cells stay 24 px tall where they can.
    pub const PRESENTER: Rule = Rule {
        zoom: (0.4, 4.0),
        readable: 28.0 / DIGITS_PX,
        readable_width: 1860.0,
        result_share: 0.0,
        least_given_share: 0.5,
        least_given_zoom: 24.0 / CELL_PX,
        one_row_share: 0.85,
        fit_height: true,
        lines_alone: 1.0,
        short_zoom: 1.0,
    };

    /// A page that scrolls (a window, a phone, an embed): the picture fills the width of its
    /// column and the height of the screen, up to digits 18 px tall; where it cannot fit at
    /// zoom 1 it keeps zoom 1 and the page scrolls, and only a column narrower than the
    /// picture draws it smaller.
    pub const SCREEN: Rule = Rule {
        zoom: (0.5, 1.5),
        readable: 1.0,
        readable_width: 0.0,
        result_share: 0.0,
        least_given_share: 1.0,
        least_given_zoom: 0.0,
        one_row_share: 0.85,
        fit_height: false,
        lines_alone: 1.25,
        short_zoom: 0.0,
    };

    /// An embed's frame: its height follows what it shows (the host page is told it), so only
    /// the column's width counts: the picture is drawn at its own size or, where the column
    /// is narrower, smaller.
    pub const FRAME: Rule = Rule {
        zoom: (0.5, 1.0),
        ..Rule::SCREEN
    };

    /// A printed page: one stage fills one page, its results at least half the page wide
    /// where the page's height allows; an equation wraps sooner than on a screen, where a
    /// reader cannot zoom. Paper cannot be zoomed either: a stage too tall for one page at
    /// 0.6 (digits about 5 pt) runs onto the next rather than print smaller, and its operands
    /// keep at least 0.7 of the results' size.
    pub const PRINT: Rule = Rule {
        zoom: (0.6, 2.0),
        readable: 1.0,
        readable_width: 0.0,
        result_share: 0.5,
        least_given_share: 0.7,
        least_given_zoom: 0.0,
        one_row_share: 0.9,
        fit_height: true,
        lines_alone: 1.25,
        short_zoom: 0.0,
    };
}

/// Where a picture goes: what the components read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// The results' zoom.
    pub zoom: f64,
    /// The operands' zoom as a share of `zoom`.
    pub given_share: f64,
    /// Whether every line keeps its pieces on one row.
    pub one_row: bool,
    /// Whether the picture fits the room at this placement (a phone's presenter mode may not).
    pub fits: bool,
    /// The width of a head's attention lines, in CSS pixels (0 when the picture has none).
    pub lines_width: f64,
}

impl Placement {
    /// Every picture at its own size, before its box is known.
    pub const NATURAL: Placement = Placement {
        zoom: 1.0,
        given_share: 1.0,
        one_row: false,
        fits: true,
        lines_width: 0.0,
    };

    /// The size, in CSS pixels, of a result's digits.
    pub fn digits_px(&self) -> f64 {
        self.zoom * DIGITS_PX
    }
}

/// The room a row or a picture leaves spare, in CSS pixels, for the page's rounding of sizes
/// drawn at a zoom: a row laid out exactly at its box's edge could wrap in the browser.
const SLACK: f64 = 1.5;

/// How many evenly spaced values of a range are tried, and how many halvings follow.
const SAMPLES: usize = 16;
const STEPS: usize = 8;

/// Lays `picture` out in `room` by `rule`. Each candidate is kept only if the picture's size
/// at it, computed by [`extent`], fits the room.
pub fn place(room: Room, picture: &Picture, rule: &Rule) -> Placement {
    let picture = &Picture {
        lines_alone: rule.lines_alone,
        ..picture.clone()
    };
    let readable = readable_zoom(room, picture, rule);
    // The largest zoom at which everything is drawn alike; below `readable`, the results drawn
    // readable with the operands smaller, or else as large as the room the operands leave
    // when they are drawn no smaller than at that zoom.
    let best = |room: Room, one_row: bool| -> Option<(f64, f64)> {
        let fits = |zoom: f64, share: f64| fits(room, picture, zoom, share, one_row);
        let uniform = largest(rule.zoom, &|z| fits(z, 1.0))?;
        if uniform >= readable || rule.least_given_share >= 1.0 {
            return Some((uniform, 1.0));
        }
        // Readable with the operands drawn smaller, no smaller than the rule's least zoom for
        // them; else the results as large as the room such operands leave; else, where that
        // gains nothing, everything alike: operands drawn smaller still would be unreadable.
        let given = rule.least_given_zoom.min(uniform);
        let least = |z: f64| rule.least_given_share.max(given / z).min(1.0);
        if let Some(share) = largest((least(readable), 1.0), &|s| fits(readable, s)) {
            return Some((readable, share));
        }
        let result = largest((uniform, readable), &|z| fits(z, least(z))).unwrap_or(uniform);
        if result > uniform * 1.02 {
            let share =
                largest((least(result), 1.0), &|s| fits(result, s)).unwrap_or(least(result));
            return Some((result, share));
        }
        Some((uniform, 1.0))
    };
    let choose = |room: Room| -> Option<Placement> {
        let wrapped = best(room, false);
        let one_row = best(room, true);
        let keep_one_row = match (one_row, wrapped) {
            (Some(_), None) => true,
            (Some(o), Some(w)) => {
                // The smallest cells' zoom: the operands' where they are drawn smaller.
                let cells = |(zoom, share): (f64, f64)| zoom * share.min(1.0);
                let least = rule.least_given_zoom - 1e-9;
                let shrinks_past_reading = cells(o) < least && cells(w) >= least;
                o.0 >= rule.one_row_share * w.0
                    && o.1 >= rule.one_row_share * w.1
                    && !shrinks_past_reading
            }
            _ => false,
        };
        let ((zoom, given_share), one_row) = if keep_one_row {
            (one_row?, true)
        } else {
            (wrapped?, false)
        };
        Some(Placement {
            zoom,
            given_share,
            one_row,
            fits: true,
            lines_width: lines_width(room.width, picture, zoom, given_share, one_row),
        })
    };
    // The height let go, as wide as the room allows, at most `cap`: a picture that runs below
    // its room anyway.
    let running_below = |cap: f64| -> Placement {
        let tall = Room {
            height: f64::INFINITY,
            ..room
        };
        let Some(p) = choose(tall) else {
            return least(room, picture, rule);
        };
        let zoom = p.zoom.min(cap).max(rule.zoom.0);
        // Drawn smaller than chosen, the operands may keep their results' size.
        let given_share = if zoom < p.zoom && fits(tall, picture, zoom, 1.0, p.one_row) {
            1.0
        } else {
            p.given_share
        };
        Placement {
            zoom,
            given_share,
            fits: !rule.fit_height,
            lines_width: lines_width(room.width, picture, zoom, given_share, p.one_row),
            ..p
        }
    };
    let whole = choose(room);
    match whole {
        Some(p) if rule.fit_height || p.zoom >= readable => p,
        // A page that scrolls: at least readable where the width allows.
        _ if !rule.fit_height => running_below(readable.max(whole.map_or(0.0, |w| w.zoom))),
        // Too tall for the room even at the least zoom: up to the rule's zoom for a picture
        // that runs below it anyway.
        _ if rule.short_zoom > 0.0 => running_below(rule.short_zoom),
        _ => least(room, picture, rule),
    }
}

impl Picture {
    /// The width of its widest piece, with its results at `zoom` and its operands at `zoom ×
    /// share`: a lead counts with the piece it is kept beside.
    pub fn widest(&self, zoom: f64, share: f64) -> f64 {
        let gap = self.gap * zoom;
        let mut widest: f64 = 0.0;
        for line in &self.lines {
            let mut lead = 0.0;
            for piece in &line.pieces {
                let z = if piece.role == Role::Given {
                    zoom * share
                } else {
                    zoom
                };
                let width = piece.width * z;
                if piece.role == Role::Lead && !self.operators_own_row {
                    lead = width + gap;
                    continue;
                }
                widest = widest.max(lead + width);
                lead = 0.0;
            }
        }
        widest
    }
}

/// The width of the widest attention lines at a placement.
fn lines_width(width: f64, picture: &Picture, zoom: f64, share: f64, one_row: bool) -> f64 {
    layout(width, picture, zoom, share, one_row).map_or(0.0, |l| l.lines_width)
}

/// The smallest placement, for a room nothing fits: wrapped, so that nothing runs off the side,
/// and the attention lines at their least width.
fn least(room: Room, picture: &Picture, rule: &Rule) -> Placement {
    let zoom = rule.zoom.0;
    let lines = picture
        .lines
        .iter()
        .flat_map(|l| &l.pieces)
        .filter(|p| matches!(p.role, Role::Lines { .. }))
        .map(|p| p.width * zoom)
        .fold(0.0, f64::max);
    Placement {
        zoom,
        given_share: 1.0,
        one_row: false,
        fits: false,
        lines_width: lines.min(room.width),
    }
}

/// The zoom at which results read well in `room`: the rule's, raised so that the widest result
/// takes `rule.result_share` of the room's width.
fn readable_zoom(room: Room, picture: &Picture, rule: &Rule) -> f64 {
    let widest = picture
        .lines
        .iter()
        .flat_map(|l| &l.pieces)
        .filter(|p| p.role == Role::Result)
        .map(|p| p.width)
        .fold(0.0, f64::max);
    let by_width = if widest > 0.0 {
        rule.result_share * room.width / widest
    } else {
        0.0
    };
    let scaled = if rule.readable_width > 0.0 {
        rule.readable * (room.width / rule.readable_width).min(1.0)
    } else {
        rule.readable
    };
    // Rounded up to the thousandths the page keeps of a zoom.
    let readable = scaled.max(by_width).min(rule.zoom.1);
    (readable * 1000.0).ceil() / 1000.0
}

/// The largest value in `range` for which `ok` holds, to a thousandth; `None` when it holds
/// nowhere. A wrapping line is not monotonic (a piece that moves to the next row leaves room
/// that another piece grows into), so the range is sampled first, then halved between the
/// largest sample that holds and the next.
fn largest(range: (f64, f64), ok: &dyn Fn(f64) -> bool) -> Option<f64> {
    let (lo, hi) = range;
    let at = |i: usize| lo + (hi - lo) * i as f64 / SAMPLES as f64;
    let best = (0..=SAMPLES).rev().find(|&i| ok(at(i)))?;
    if best == SAMPLES {
        return Some(hi);
    }
    let (mut lo, mut hi) = (at(best), at(best + 1));
    for _ in 0..STEPS {
        let mid = (lo + hi) / 2.0;
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let kept = ((lo * 1000.0).floor() / 1000.0).max(range.0);
    Some(if ok(kept) { kept } else { lo })
}

fn fits(room: Room, picture: &Picture, zoom: f64, share: f64, one_row: bool) -> bool {
    extent(room.width, picture, zoom, share, one_row)
        .is_some_and(|(w, h)| w <= room.width - SLACK && h <= room.height - SLACK)
}

/// A picture's size, laid out.
struct Laid {
    width: f64,
    height: f64,
    lines_width: f64,
}

/// The picture's width and height with its results at `zoom` and its operands at `zoom ×
/// share`, its lines laid into `width`: on one row each, or wrapped as a flex row wraps. `None`
/// when a piece (or a line kept on one row) is wider than `width`.
pub fn extent(
    width: f64,
    picture: &Picture,
    zoom: f64,
    share: f64,
    one_row: bool,
) -> Option<(f64, f64)> {
    layout(width, picture, zoom, share, one_row).map(|l| (l.width, l.height))
}

fn layout(width: f64, picture: &Picture, zoom: f64, share: f64, one_row: bool) -> Option<Laid> {
    let mut lines = Vec::with_capacity(picture.lines.len());
    let mut lines_width: f64 = 0.0;
    for line in &picture.lines {
        let (w, h, l) = line_extent(width, line, picture, zoom, share, one_row)?;
        lines.push((w, h));
        lines_width = lines_width.max(l);
    }
    // The lines, one under another, or packed side by side where they fit.
    let line_gap = picture.line_gap * zoom;
    let side_gap = picture.side_gap * zoom;
    let rows = if picture.lines_side_by_side {
        pack(&lines, width, side_gap)
    } else {
        lines.iter().map(|&l| vec![l]).collect()
    };
    let mut w: f64 = 0.0;
    let mut h: f64 = 0.0;
    for (i, row) in rows.iter().enumerate() {
        let row_w = row.iter().map(|l| l.0).sum::<f64>() + side_gap * (row.len() - 1) as f64;
        w = w.max(row_w);
        h += row.iter().map(|l| l.1).fold(0.0, f64::max);
        if i > 0 {
            h += line_gap;
        }
    }
    Some(Laid {
        width: w,
        height: h,
        lines_width,
    })
}

/// One line's width and height (with its heading), and the width of its attention lines.
fn line_extent(
    width: f64,
    line: &Line,
    picture: &Picture,
    zoom: f64,
    share: f64,
    one_row: bool,
) -> Option<(f64, f64, f64)> {
    let gap = picture.gap * zoom;
    let sized: Vec<(f64, f64, Role)> = line
        .pieces
        .iter()
        .map(|p| {
            let z = if p.role == Role::Given {
                zoom * share
            } else {
                zoom
            };
            (p.width * z, p.height * z, p.role)
        })
        .collect();
    if sized.iter().any(|s| s.0 > width - SLACK) {
        return None;
    }
    let operator = |r: Role| matches!(r, Role::Operator | Role::Lead);
    let leads = !one_row && !picture.operators_own_row;
    let too_wide_together = sized
        .windows(2)
        .any(|pair| pair[0].2 == Role::Lead && pair[0].0 + gap + pair[1].0 > width - SLACK);
    if leads && too_wide_together {
        return None;
    }
    let rows: Vec<Vec<(f64, f64, Role)>> = if one_row {
        vec![sized]
    } else {
        let mut rows: Vec<Vec<(f64, f64, Role)>> = Vec::new();
        let mut used = f64::INFINITY;
        for s in sized {
            let own_row = picture.operators_own_row && operator(s.2);
            let last = rows.last().and_then(|r| r.last()).map(|l| l.2);
            let last_own = picture.operators_own_row && last.is_some_and(operator);
            if own_row || last_own || used + gap + s.0 > width - SLACK {
                // A lead wraps with its piece, unless it starts its row already.
                let lead =
                    leads && last == Some(Role::Lead) && rows.last().is_some_and(|r| r.len() > 1);
                let op = if lead {
                    rows.last_mut().and_then(|r| r.pop())
                } else {
                    None
                };
                match op {
                    Some(op) => {
                        used = op.0 + gap + s.0;
                        rows.push(vec![op, s]);
                    }
                    None => {
                        rows.push(vec![s]);
                        used = s.0;
                    }
                }
            } else {
                used += gap + s.0;
                if let Some(r) = rows.last_mut() {
                    r.push(s);
                }
            }
        }
        rows
    };
    let mut w: f64 = 0.0;
    let mut h = line.heading * zoom;
    let mut lines_width: f64 = 0.0;
    for (i, row) in rows.iter().enumerate() {
        let fixed: f64 = row.iter().map(|s| s.0).sum::<f64>() + gap * (row.len() - 1) as f64;
        if fixed > width - SLACK {
            return None;
        }
        // The attention lines grow into the width left, up to their largest and no taller
        // than the tallest piece beside them.
        let others = row
            .iter()
            .filter(|s| !matches!(s.2, Role::Lines { .. }))
            .map(|s| s.1)
            .fold(0.0, f64::max);
        let mut tallest = others;
        let mut row_w = fixed;
        for s in row {
            if let Role::Lines { aspect } = s.2 {
                let grown = if row.len() == 1 {
                    (s.0 * picture.lines_alone.max(1.0))
                        .min(width - SLACK)
                        .max(s.0)
                } else {
                    let room = (s.0 + (width - SLACK - fixed).max(0.0)).min(s.0 * LINES_GROWTH);
                    let level = if aspect > 0.0 {
                        (others - s.1) / aspect
                    } else {
                        room
                    };
                    room.min(level).max(s.0)
                };
                row_w += grown - s.0;
                lines_width = lines_width.max(grown);
                tallest = tallest.max(s.1 + grown * aspect);
            }
        }
        w = w.max(row_w);
        h += tallest + if i > 0 { gap } else { 0.0 };
    }
    Some((w, h, lines_width))
}

/// Packs `items` (width, height) into rows of `width`, as a wrapping flex row does.
fn pack(items: &[(f64, f64)], width: f64, gap: f64) -> Vec<Vec<(f64, f64)>> {
    let mut rows: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut used = f64::INFINITY;
    for &item in items {
        if used + gap + item.0 > width - SLACK {
            rows.push(vec![item]);
            used = item.0;
        } else {
            used += gap + item.0;
            if let Some(r) = rows.last_mut() {
                r.push(item);
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::Matrix;
    use crate::plot::{Heatmap, Highlight, Palette, Theme};

    /// A caption's height and a row sums' column's width at zoom 1, as the style sheet draws them.
    const CAPTION: f64 = 22.0;
    const SUMS: f64 = 44.0;

    /// A heatmap of `rows × cols` with token or dimension labels, as the page draws it.
    fn matrix(role: Role, rows: usize, cols: usize, sums: bool) -> Piece {
        heatmap(role, (rows, cols), sums, 2)
    }

    /// A heatmap of `rows × cols` numbers with `decimals`, as the page draws it.
    fn heatmap(role: Role, (rows, cols): (usize, usize), sums: bool, decimals: usize) -> Piece {
        let m = Matrix::from_element(rows, cols, -0.25);
        const WORDS: [&str; 10] = [
            "the", "cat", "sat", "on", "a", "mat", "because", "it", "was", "tired",
        ];
        let row_labels: Vec<String> = (0..rows).map(|i| WORDS[i % 10].to_string()).collect();
        let col_labels: Vec<String> = (0..cols).map(|i| format!("{i}")).collect();
        let l = Heatmap {
            values: &m,
            row_labels: &row_labels,
            col_labels: &col_labels,
            row_axis: "queries",
            col_axis: "keys",
            palette: Palette::Diverging,
            range: 1.0,
            col_groups: 1,
            decimals,
            highlight: Highlight::default(),
            theme: Theme::LIGHT,
            reserve: Default::default(),
        }
        .layout();
        Piece {
            role,
            width: f64::from(l.width) + if sums { SUMS } else { 0.0 },
            height: f64::from(l.height) + CAPTION,
        }
    }

    fn op(chars: usize) -> Piece {
        Piece {
            role: Role::Operator,
            width: 15.0 * chars as f64,
            height: 30.0,
        }
    }

    /// A head's attention lines over `t` tokens, as the page draws them: 400 wide, 30 a row.
    fn lines(t: usize) -> Piece {
        let aspect = (40.0 + 30.0 * t as f64) / 400.0;
        Piece {
            role: Role::Lines { aspect },
            width: 160.0,
            height: 24.0,
        }
    }

    fn picture(lines: Vec<Vec<Piece>>) -> Picture {
        Picture {
            lines: lines
                .into_iter()
                .map(|pieces| Line {
                    pieces,
                    heading: 0.0,
                })
                .collect(),
            gap: 10.0,
            line_gap: 8.0,
            side_gap: 32.0,
            lines_side_by_side: false,
            operators_own_row: false,
            lines_alone: 1.0,
        }
    }

    /// Softmax over `t` tokens: M → A, with A's row sums and the head's lines.
    fn softmax(t: usize) -> Picture {
        picture(vec![vec![
            matrix(Role::Given, t, t, false),
            op(8),
            matrix(Role::Result, t, t, true),
            lines(t),
        ]])
    }

    /// Scores: Q · Kᵀ = S, with a head of width 4.
    fn scores(t: usize) -> Picture {
        picture(vec![vec![
            matrix(Role::Given, t, 4, false),
            op(1),
            matrix(Role::Given, 4, t, false),
            op(1),
            matrix(Role::Result, t, t, false),
        ]])
    }

    /// The loss's gradient at the softmax: ∂L/∂A beside A, over the head's target.
    fn backward_loss(t: usize) -> Picture {
        picture(vec![
            vec![
                matrix(Role::Given, t, t, false),
                op(3),
                matrix(Role::Given, t, t, false),
            ],
            vec![matrix(Role::Result, t, t, false)],
        ])
    }

    /// The room below the presenter bar and the stage's title and formula.
    fn projector(width: f64, height: f64) -> Room {
        Room {
            width: width - 48.0,
            height: height - 230.0,
        }
    }

    fn assert_fits(room: Room, picture: &Picture, p: Placement) {
        assert!(p.fits, "{p:?}");
        let (w, h) = extent(room.width, picture, p.zoom, p.given_share, p.one_row)
            .unwrap_or_else(|| panic!("a piece is wider than the room: {p:?}"));
        assert!(
            w <= room.width + 0.5 && h <= room.height + 0.5,
            "{w}×{h} in {room:?}"
        );
    }

    #[test]
    fn a_lead_operator_wraps_with_the_picture_after_it() {
        let piece = |role, width, height| Piece {
            role,
            width,
            height,
        };
        let line = |role| Line {
            pieces: vec![
                piece(Role::Result, 300.0, 100.0),
                piece(role, 40.0, 30.0),
                piece(Role::Result, 250.0, 100.0),
                piece(Role::Result, 180.0, 300.0),
            ],
            heading: 0.0,
        };
        let at = |role, own_row| {
            let picture = Picture {
                operators_own_row: own_row,
                ..picture(vec![])
            };
            line_extent(500.0, &line(role), &picture, 1.0, 1.0, false).map(|(w, h, _)| (w, h))
        };
        // An operator ends the first row; a lead starts the second with the picture after it.
        assert_eq!(at(Role::Operator, false), Some((440.0, 410.0)));
        assert_eq!(at(Role::Lead, false), Some((490.0, 410.0)));
        // Where operators take rows of their own, a lead is one.
        assert_eq!(at(Role::Lead, true), at(Role::Operator, true));
        // A lead and its picture wider together than the room do not fit.
        let wide = Line {
            pieces: vec![
                piece(Role::Result, 100.0, 10.0),
                piece(Role::Lead, 40.0, 10.0),
                piece(Role::Result, 460.0, 10.0),
            ],
            heading: 0.0,
        };
        assert_eq!(
            line_extent(500.0, &wide, &picture(vec![]), 1.0, 1.0, false),
            None
        );
    }

    #[test]
    fn a_step_too_tall_for_a_phone_presented_is_drawn_to_be_read_and_scrolls() {
        // A phone's column below the presenter bar, in landscape: 312 × 150.
        let room = Room {
            width: 312.0,
            height: 150.0,
        };
        let picture = backward_loss(8);
        let p = place(room, &picture, &Rule::PRESENTER);
        assert!(!p.fits, "{p:?}");
        assert!(p.zoom > Rule::PRESENTER.zoom.0 + 0.05, "{p:?}");
        assert!(p.zoom <= Rule::PRESENTER.short_zoom, "{p:?}");
        // As wide as the column allows, no wider.
        let (w, _) = extent(room.width, &picture, p.zoom, p.given_share, p.one_row)
            .unwrap_or_else(|| panic!("a piece is wider than the column: {p:?}"));
        assert!(w <= room.width + 0.5, "{w} in {room:?}");
        // Paper keeps its least zoom and runs onto the next page.
        let printed = place(room, &picture, &Rule::PRINT);
        assert_eq!(printed.zoom, Rule::PRINT.zoom.0);
    }

    #[test]
    fn every_step_fits_a_projector_with_cells_at_least_24_px_tall() {
        let stages = [
            softmax(6),
            scores(6),
            backward_loss(6),
            softmax(8),
            scores(8),
        ];
        for (w, h) in [(1024.0, 768.0), (1920.0, 1080.0)] {
            let room = projector(w, h);
            for picture in &stages {
                let p = place(room, picture, &Rule::PRESENTER);
                assert_fits(room, picture, p);
                // Cells are 28 px tall at zoom 1: the results' and the operands'.
                assert!(p.zoom * 28.0 >= 24.0, "{w}×{h}: {p:?}");
                if (w, h) == (1024.0, 768.0) {
                    assert!(p.zoom * p.given_share * 28.0 >= 23.99, "{w}×{h}: {p:?}");
                }
            }
        }
    }

    #[test]
    fn at_1920_a_projected_result_reads_from_the_back_of_the_room() {
        let room = projector(1920.0, 1080.0);
        for picture in [softmax(3), softmax(6), scores(6), backward_loss(6)] {
            let p = place(room, &picture, &Rule::PRESENTER);
            assert!(p.digits_px() >= 28.0, "{p:?}");
        }
        // Eight tokens: the operands keep cells 24 px tall, the results take the rest.
        let p = place(room, &scores(8), &Rule::PRESENTER);
        assert!(p.zoom * p.given_share * CELL_PX >= 23.99, "{p:?}");
        assert!(p.digits_px() >= 24.0, "{p:?}");
    }

    #[test]
    fn a_line_wraps_rather_than_draw_its_cells_below_24_px_where_wrapped_they_reach_it() {
        // ∂L/∂M ÷ √4 = ∂L/∂S over eight tokens, three decimals: side by side the cells are
        // 23.5 px, 0.87 of the zoom one under the other, where they are 24.
        let room = Room {
            width: 900.0,
            height: 538.0,
        };
        let gradient = |role| heatmap(role, (8, 8), false, 3);
        let picture = picture(vec![vec![
            gradient(Role::Given),
            op(4),
            gradient(Role::Result),
        ]]);
        let p = place(room, &picture, &Rule::PRESENTER);
        assert_fits(room, &picture, p);
        assert!(!p.one_row, "{p:?}");
        assert!(p.zoom * p.given_share * CELL_PX >= 23.99, "{p:?}");
        // Kept on one row where wrapping cannot reach 24 px either.
        let wide = Room {
            width: 900.0,
            height: 420.0,
        };
        assert!(place(wide, &picture, &Rule::PRESENTER).one_row);
    }

    #[test]
    fn the_operands_give_way_only_to_draw_the_result_larger_and_keep_24_px_cells() {
        // Eight tokens at 1024×768: the room cannot hold every matrix at digits 28 px tall.
        let room = projector(1024.0, 768.0);
        let picture = scores(8);
        let p = place(room, &picture, &Rule::PRESENTER);
        assert_fits(room, &picture, p);
        let alike = place(
            room,
            &picture,
            &Rule {
                least_given_share: 1.0,
                ..Rule::PRESENTER
            },
        );
        assert_eq!(alike.given_share, 1.0);
        assert!(
            p.given_share < 1.0 && p.zoom > alike.zoom,
            "{p:?} against {alike:?}"
        );
        assert!(p.zoom * p.given_share * CELL_PX >= 23.99, "{p:?}");
    }

    #[test]
    fn operands_are_not_shrunk_past_reading_for_a_result_that_gains_nothing() {
        // ∂L/∂X = ∂L/∂Q·W_qᵀ + ∂L/∂K·W_kᵀ + ∂L/∂V·W_vᵀ (d_model 5) at 1024×768 under a revealed
        // answer:
        // three operands and a result on one row, in a room a third of the screen tall. Where
        // drawing the result readable would leave the operands no room but a sliver, all four
        // are drawn alike.
        let room = Room {
            width: 976.0,
            height: 260.0,
        };
        let picture = picture(vec![vec![
            matrix(Role::Given, 3, 5, false),
            op(1),
            matrix(Role::Given, 3, 5, false),
            op(1),
            matrix(Role::Given, 3, 5, false),
            op(1),
            matrix(Role::Result, 3, 5, false),
        ]]);
        let p = place(room, &picture, &Rule::PRESENTER);
        assert_fits(room, &picture, p);
        assert_eq!(p.given_share, 1.0, "{p:?}");
    }

    #[test]
    fn the_picture_fills_a_wide_window_and_keeps_its_size_in_a_small_one() {
        // The stage's column at 1920×1080 beside the explanation: larger than zoom 1, and as
        // wide or as tall as the room.
        let wide = Room {
            width: 1300.0,
            height: 760.0,
        };
        let picture = softmax(3);
        let p = place(wide, &picture, &Rule::SCREEN);
        assert!(p.zoom > 1.0, "{p:?}");
        let (w, h) = extent(wide.width, &picture, p.zoom, p.given_share, p.one_row).unwrap();
        assert!(
            w >= 0.9 * wide.width || h >= 0.9 * wide.height || p.zoom >= Rule::SCREEN.zoom.1,
            "{w}×{h} in {wide:?}: {p:?}"
        );
        // A short window: zoom 1, and the page scrolls.
        let short = Room {
            width: 900.0,
            height: 100.0,
        };
        let p = place(short, &picture, &Rule::SCREEN);
        assert_eq!(p.zoom, 1.0, "{p:?}");
    }

    #[test]
    fn a_phone_column_wraps_the_line_and_draws_wide_pieces_smaller() {
        let room = Room {
            width: 336.0,
            height: 420.0,
        };
        let mut picture = scores(10);
        picture.operators_own_row = true;
        let p = place(room, &picture, &Rule::SCREEN);
        assert!(!p.one_row, "{p:?}");
        assert!(p.zoom <= 1.0, "{p:?}");
        let widest = picture.lines[0]
            .pieces
            .iter()
            .map(|piece| piece.width)
            .fold(0.0, f64::max);
        assert!(widest * p.zoom <= room.width + 0.5, "{p:?}");
    }

    #[test]
    fn a_printed_page_holds_one_stage_with_results_half_its_width() {
        // A4 at 96 px an inch, less the margins and the stage's title, formula and notes.
        let page = Room {
            width: 718.0,
            height: 700.0,
        };
        for picture in [softmax(6), scores(6), backward_loss(6)] {
            let p = place(page, &picture, &Rule::PRINT);
            assert_fits(page, &picture, p);
            let result = picture
                .lines
                .iter()
                .flat_map(|l| &l.pieces)
                .filter(|piece| piece.role == Role::Result)
                .map(|piece| piece.width)
                .fold(0.0, f64::max);
            assert!(result * p.zoom >= 0.5 * page.width - 0.5, "{p:?}");
        }
    }

    #[test]
    fn a_larger_room_never_draws_the_picture_smaller() {
        let picture = softmax(6);
        let mut last = 0.0;
        for w in (1000..=2600).step_by(100) {
            let room = projector(f64::from(w), f64::from(w) * 0.6);
            let p = place(room, &picture, &Rule::PRESENTER);
            assert!(p.fits, "{w}: {p:?}");
            // Keeping a line on one row may cost a little size (`Rule::one_row_share`).
            // Keeping a line on one row may cost a little size (`Rule::one_row_share`).
            assert!(
                p.zoom >= Rule::PRESENTER.one_row_share * last - 1e-9,
                "{w}: {p:?}"
            );
            last = p.zoom;
        }
    }

    #[test]
    fn a_room_nothing_fits_in_is_laid_out_wrapped_at_the_least_zoom() {
        let room = Room {
            width: 120.0,
            height: 100.0,
        };
        let p = place(room, &softmax(6), &Rule::PRESENTER);
        assert!(!p.fits && !p.one_row);
        assert_eq!(p.zoom, Rule::PRESENTER.zoom.0);
        // The lines keep their least width rather than take their own.
        assert_eq!(p.lines_width, 160.0 * Rule::PRESENTER.zoom.0);
    }

    #[test]
    fn two_gradients_sit_side_by_side_when_the_room_is_wide() {
        let mut picture = picture(vec![
            vec![matrix(Role::Result, 6, 6, false)],
            vec![matrix(Role::Result, 6, 6, false)],
        ]);
        picture.lines_side_by_side = true;
        let (w, h) = extent(2000.0, &picture, 1.0, 1.0, true).unwrap();
        let (w1, h1) = extent(450.0, &picture, 1.0, 1.0, true).unwrap();
        assert!(w > w1 && h < h1, "{w}×{h} against {w1}×{h1}");
    }
}
