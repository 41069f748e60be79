//! One labelled heatmap: token labels on the axes, each value in its cell when it fits, and a
//! colour bar.

use super::format::format_value;
use super::label::label_text;
use super::palette::{Palette, Rgb, Theme};
use crate::attention::Matrix;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_svg::SVGBackend;

/// Cells to outline or tint: the selected cell and the operands it came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Highlight {
    /// The selected cell, outlined.
    pub cell: Option<(usize, usize)>,
    /// Whole rows to mark.
    pub rows: Vec<usize>,
    /// Whole columns to mark.
    pub cols: Vec<usize>,
    /// Further single cells to outline, e.g. where a token sees the future.
    pub cells: Vec<(usize, usize)>,
}

/// Everything needed to draw one heatmap.
#[derive(Debug, Clone)]
pub struct Heatmap<'a> {
    /// The values; −∞ marks a masked cell.
    pub values: &'a Matrix,
    /// One label per row.
    pub row_labels: &'a [String],
    /// One label per column.
    pub col_labels: &'a [String],
    /// What a row is, e.g. "queries".
    pub row_axis: &'a str,
    /// What a column is, e.g. "keys".
    pub col_axis: &'a str,
    /// How values map to colours.
    pub palette: Palette,
    /// The scale's end: ±range (diverging) or 0..range (sequential).
    pub range: f64,
    /// Columns split into this many equal head bands (1 for none).
    pub col_groups: usize,
    /// Decimals written in cells.
    pub decimals: usize,
    /// Cells to mark.
    pub highlight: Highlight,
    /// Light or dark surroundings.
    pub theme: Theme,
    /// Room kept whatever the matrix holds now.
    pub reserve: Reserve,
}

/// Room a heatmap keeps whatever it shows, so a picture whose row changes step by step (a
/// decoding step's token) keeps its size and its place from step to step: the longest row
/// label and the widest written value it may show. The default keeps none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Reserve {
    /// Characters of the longest row label to make room for.
    pub label_chars: usize,
    /// Characters of the widest value written in a cell to make room for.
    pub value_chars: usize,
    /// Characters of the longer end value of the colour bar to make room for.
    pub bar_chars: usize,
}

impl Reserve {
    /// The room `values` would take as a map of `palette` on its own scale, with `decimals`
    /// in its cells and `label_chars` for its longest row label.
    pub fn of(values: &Matrix, palette: Palette, decimals: usize, label_chars: usize) -> Self {
        let map = Heatmap {
            values,
            row_labels: &[],
            col_labels: &[],
            row_axis: "",
            col_axis: "",
            palette,
            range: palette.range_for(values.iter()),
            col_groups: 1,
            decimals,
            highlight: Highlight::default(),
            theme: Theme::LIGHT,
            reserve: Reserve::default(),
        };
        Self {
            label_chars,
            value_chars: widest_value(values, decimals),
            bar_chars: map.bar_chars() as usize,
        }
    }

    /// Room for both.
    pub fn max(self, other: Self) -> Self {
        Self {
            label_chars: self.label_chars.max(other.label_chars),
            value_chars: self.value_chars.max(other.value_chars),
            bar_chars: self.bar_chars.max(other.bar_chars),
        }
    }
}

/// Head-band colours, distinguishable from each other and from the palettes' ends.
const BAND_COLORS: [Rgb; 8] = [
    Rgb(0x00, 0x72, 0xb2),
    Rgb(0xe6, 0x9f, 0x00),
    Rgb(0x00, 0x9e, 0x73),
    Rgb(0xcc, 0x79, 0xa7),
    Rgb(0x56, 0xb4, 0xe9),
    Rgb(0xd5, 0x5e, 0x00),
    Rgb(0xf0, 0xe4, 0x42),
    Rgb(0x99, 0x99, 0x99),
];

/// The colour of head `h`'s band, shared with the editors' column bands.
pub fn band_color(h: usize) -> Rgb {
    BAND_COLORS[h % BAND_COLORS.len()]
}

/// Where everything goes, in CSS pixels (multiply by the pixel ratio for the backend).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    /// Whole width.
    pub width: u32,
    /// Whole height.
    pub height: u32,
    /// Left edge of the grid.
    pub grid_x: u32,
    /// Top edge of the grid.
    pub grid_y: u32,
    /// Width of one cell.
    pub cell_w: u32,
    /// Height of one cell.
    pub cell_h: u32,
    /// Whether values are written in the cells.
    pub show_values: bool,
    /// Longest row label shown, in characters.
    pub label_chars: usize,
    /// Height of the column labels' strip, above the head bands.
    pub col_label_h: u32,
    /// Whether column labels are written upwards, because they are wider than a cell.
    pub col_labels_upright: bool,
    /// Height of the axis caption: two lines, rows then columns, where one is wider than the
    /// drawing.
    pub caption_h: u32,
}

const FONT: u32 = 12;
/// The size of the numbers in the cells, in CSS pixels at zoom 1.
pub const CELL_FONT_PX: f64 = FONT as f64;
/// The width allowed for one character of a label or value at [`FONT`].
const CHAR_W: u32 = 7;
const CAPTION_H: u32 = 18;
/// The axis caption's second line, where it takes two.
const CAPTION_LINE_H: u32 = 13;
/// The width allowed for one character of the axis caption (11 px), a wide font's.
const CAPTION_CHAR_W: u32 = 6;
const COL_LABEL_H: u32 = 18;
/// The longest label written whole; longer ones end in an ellipsis. Sentences are split into
/// words, so only an unusually long word is ever shortened.
const LABEL_MAX: usize = 18;
/// The widest a cell grows so that its column's label fits across it; wider labels are written
/// upwards instead.
const LABEL_CELL_MAX: u32 = 64;
const BAND_H: u32 = 5;
const BAR_GAP: u32 = 8;
const BAR_W: u32 = 10;
/// The least room for the colour bar's end values, at 10 px, four pixels from the bar.
const BAR_LABEL_W: u32 = 38;
/// Twice the width allowed for one character of a colour bar's end value (10 px), a wide
/// font's: 6.5 px.
const BAR_CHAR_W2: u32 = 13;
const PAD: u32 = 6;

impl Layout {
    /// The cell under CSS pixel `(x, y)`, if any.
    pub fn cell_at(&self, x: f64, y: f64, rows: usize, cols: usize) -> Option<(usize, usize)> {
        let gx = x - f64::from(self.grid_x);
        let gy = y - f64::from(self.grid_y);
        if gx < 0.0 || gy < 0.0 {
            return None;
        }
        let (c, r) = (
            (gx / f64::from(self.cell_w)) as usize,
            (gy / f64::from(self.cell_h)) as usize,
        );
        (r < rows && c < cols).then_some((r, c))
    }
}

/// Which parts of a heatmap to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Everything.
    Whole,
    /// What the values change: the cells, their numbers, the grid lines, the highlights and the
    /// colour bar's end values. The rest, the frame (the caption, the labels, the head bands and
    /// the colour bar's colours), must already be on the drawing, drawn at the same scale for a
    /// heatmap with the same [`Heatmap::frame`].
    Body,
}

impl Heatmap<'_> {
    /// The scale's end as drawn: `range`, unless it reads as 0 with the cells' decimals, when
    /// every cell reads 0 as well (a gradient the loss all but misses): then the scale of a
    /// matrix of zeros, ±1 (or 0 … 1), so the cells take the palette's colour of 0 and the
    /// colour bar's ends read as a scale, not as "0.00 … 0.00" over vivid cells.
    pub fn scale_end(&self) -> f64 {
        let range = self.range.abs();
        let reads_zero = format_value(range, self.decimals)
            .chars()
            .all(|c| c == '0' || c == '.');
        if reads_zero || !range.is_finite() {
            1.0
        } else {
            range
        }
    }

    /// The decimals of the colour bar's end values: the cells' own (at least two), so an end
    /// never reads 0 where the cells do not; none from 100 up.
    fn bar_decimals(&self, v: f64) -> usize {
        if v.abs() >= 100.0 {
            0
        } else {
            self.decimals.max(2)
        }
    }

    /// The characters of the colour bar's longer end value, −11.875 or 0.50.
    fn bar_chars(&self) -> u32 {
        let end = self.scale_end();
        let lo = match self.palette {
            Palette::Diverging => -end,
            Palette::Sequential => 0.0,
        };
        [lo, end]
            .map(|v| format_value(v, self.bar_decimals(v)).chars().count() as u32)
            .into_iter()
            .max()
            .unwrap_or(0)
    }

    /// The room the colour bar's end values take: the longer (or the reserve's), at least
    /// [`BAR_LABEL_W`].
    fn bar_label_w(&self) -> u32 {
        let chars = self.bar_chars().max(self.reserve.bar_chars as u32);
        (4 + chars * BAR_CHAR_W2 / 2).max(BAR_LABEL_W)
    }

    /// A fingerprint of the frame drawn at `scale` with `layout` (this heatmap's own): the
    /// layout, the labels, the caption, the head bands, the palette and the theme. Two heatmaps
    /// with the same fingerprint differ only in their body.
    pub fn frame(&self, layout: &Layout, scale: f64) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        layout.hash(&mut hasher);
        self.values.shape().hash(&mut hasher);
        self.row_labels.hash(&mut hasher);
        self.col_labels.hash(&mut hasher);
        self.row_axis.hash(&mut hasher);
        self.col_axis.hash(&mut hasher);
        self.col_groups.hash(&mut hasher);
        self.palette.hash(&mut hasher);
        self.theme.hash(&mut hasher);
        scale.to_bits().hash(&mut hasher);
        hasher.finish()
    }

    /// The layout for this matrix.
    pub fn layout(&self) -> Layout {
        let (rows, cols) = self.values.shape();
        let value_chars = widest_value(self.values, self.decimals).max(self.reserve.value_chars);
        // [`CHAR_W`] is a wide font's digit: the numbers keep a few pixels either side.
        let wanted = (value_chars as u32 * CHAR_W + 4).max(32);
        // Room for sixteen columns of two-decimal numbers such as −2.09.
        let widest = (640 / cols.max(1) as u32).max(18);
        let col_chars = longest_label(self.col_labels);
        // A cell may widen a little for its column's label, which reads better than turning it;
        // a label turned upwards anyway leaves the cell as narrow as its numbers.
        let label_w = col_chars as u32 * CHAR_W + 8;
        let across = if label_w <= LABEL_CELL_MAX.min(widest) {
            wanted.max(label_w)
        } else {
            wanted
        };
        let cell_w = across.min(widest);
        let show_values = cell_w >= wanted;
        let cell_h = if show_values {
            28
        } else {
            cell_w.clamp(16, 28)
        };
        let col_labels_upright = label_w > cell_w;
        let col_label_h = if col_labels_upright {
            col_chars as u32 * CHAR_W + 8
        } else {
            COL_LABEL_H
        };
        let label_chars = longest_label(self.row_labels)
            .max(self.reserve.label_chars.min(LABEL_MAX))
            .max(2);
        let grid_x = PAD + label_chars as u32 * CHAR_W + 10;
        let width = grid_x + cols as u32 * cell_w + BAR_GAP + BAR_W + self.bar_label_w();
        let caption = axis_caption(self.row_axis, self.col_axis);
        let caption_h = if PAD + caption.chars().count() as u32 * CAPTION_CHAR_W > width {
            CAPTION_H + CAPTION_LINE_H
        } else {
            CAPTION_H
        };
        let grid_y = caption_h + col_label_h + if self.col_groups > 1 { BAND_H + 2 } else { 0 };
        Layout {
            width,
            height: grid_y + rows as u32 * cell_h + PAD,
            grid_x,
            grid_y,
            cell_w,
            cell_h,
            show_values,
            label_chars,
            col_label_h,
            col_labels_upright,
            caption_h,
        }
    }
}

/// The characters in the longest of `labels`, at most [`LABEL_MAX`] and at least one.
fn longest_label(labels: &[String]) -> usize {
    labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1)
        .clamp(1, LABEL_MAX)
}

/// The most characters any value of `values` takes when written with `decimals` places.
///
/// A written number only grows with its size (and a minus sign), so the widest is the largest
/// or the smallest value: two numbers are formatted instead of every cell.
fn widest_value(values: &Matrix, decimals: usize) -> usize {
    let (mut lo, mut hi, mut special) = (f64::INFINITY, f64::NEG_INFINITY, 1);
    for &v in values.iter() {
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
        } else {
            special = special.max(format_value(v, decimals).chars().count());
        }
    }
    [lo, hi]
        .into_iter()
        .filter(|v| v.is_finite())
        .map(|v| format_value(v, decimals).chars().count())
        .fold(special, usize::max)
}

fn color(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

fn text_style(size: f64, c: Rgb) -> TextStyle<'static> {
    TextStyle {
        // The enum, not the string "sans-serif": plotters lower-cases a family name, which
        // would bring the Unicode case tables (about 13 kB) into the web bundle.
        font: (FontFamily::SansSerif, size).into_font(),
        color: color(c).to_backend_color(),
        pos: Pos::new(HPos::Left, VPos::Top),
    }
}

/// A grid of colours (the cells, or the colour bar's steps), for a backend that can fill it in
/// one go.
#[derive(Debug, Clone, PartialEq)]
pub struct CellGrid {
    /// Left edge of the grid, in backend pixels.
    pub x: f64,
    /// Top edge of the grid, in backend pixels.
    pub y: f64,
    /// Width of one cell, in backend pixels.
    pub cell_w: f64,
    /// Height of one cell, in backend pixels.
    pub cell_h: f64,
    /// Number of columns.
    pub cols: usize,
    /// Number of rows.
    pub rows: usize,
    /// One colour per cell, row by row.
    pub colors: Vec<Rgb>,
}

/// Draws `map` on `area`, with every length multiplied by `scale` (the device pixel ratio).
pub fn draw_heatmap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    map: &Heatmap,
    scale: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    draw_scaled(area, map, scale, 1.0, &mut |_| false, Part::Whole)
}

/// Like [`draw_heatmap`], but draws only `part`, and `fill_cells` may paint a grid of colours
/// itself (say, as one scaled image) and return `true`; otherwise each cell of it is drawn as a
/// rectangle. It is called for the cells and for the colour bar. Everything on top of the
/// colours (values, hatching, grid lines, highlights) is drawn either way.
pub fn draw_heatmap_with<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    map: &Heatmap,
    scale: f64,
    fill_cells: &mut dyn FnMut(&CellGrid) -> bool,
    part: Part,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    draw_scaled(area, map, scale, 1.0, fill_cells, part)
}

/// `font_factor` undoes backends that shrink font sizes (plotters' SVG writes size / 1.24).
fn draw_scaled<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    map: &Heatmap,
    scale: f64,
    font_factor: f64,
    fill_cells: &mut dyn FnMut(&CellGrid) -> bool,
    part: Part,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let layout = map.layout();
    let s = |v: u32| (f64::from(v) * scale).round() as i32;
    let theme = map.theme;
    let (rows, cols) = map.values.shape();
    let font = |size: u32, c: Rgb| text_style(f64::from(size) * scale * font_factor, c);

    if part == Part::Body {
        // The grid: the frame ends at least 4 pixels above it and 8 to its left, and a
        // highlight's outline reaches at most 2 beyond it. Then the colour bar's end values,
        // right of the bar and below the caption, which may reach that far right.
        let (grid_right, grid_bottom) = (
            layout.grid_x + cols as u32 * layout.cell_w,
            layout.grid_y + rows as u32 * layout.cell_h,
        );
        for [x0, y0, x1, y1] in [
            [
                layout.grid_x - 2,
                layout.grid_y - 2,
                grid_right + 2,
                grid_bottom + 2,
            ],
            [
                bar_x(&layout, cols) + BAR_W + 1,
                layout.grid_y - 2,
                layout.width,
                layout.height,
            ],
        ] {
            area.draw(&Rectangle::new(
                [(s(x0), s(y0)), (s(x1), s(y1))],
                color(theme.background).filled(),
            ))?;
        }
        return draw_body(area, map, &layout, scale, font_factor, fill_cells);
    }
    area.fill(&color(theme.background))?;

    // Axis caption, stated on the chart so nobody has to guess which way the matrix reads: on
    // two lines, rows then columns, where one would run past a narrow drawing.
    let caption = axis_caption(map.row_axis, map.col_axis);
    let lines: Vec<&str> = if layout.caption_h > CAPTION_H {
        caption.split(" · ").collect()
    } else {
        vec![caption.as_str()]
    };
    for (i, line) in lines.into_iter().enumerate() {
        area.draw(&Text::new(
            line,
            (s(PAD), s(2 + i as u32 * CAPTION_LINE_H)),
            font(11, theme.muted).pos(Pos::new(HPos::Left, VPos::Top)),
        ))?;
    }

    let label_bottom = layout.caption_h + layout.col_label_h;
    for (c, label) in map.col_labels.iter().enumerate().take(cols) {
        let x = layout.grid_x + c as u32 * layout.cell_w + layout.cell_w / 2;
        let text = label_text(label, LABEL_MAX);
        let style = font(FONT, theme.text);
        let element = if layout.col_labels_upright {
            // Read from the bottom up, ending just above its column.
            Text::new(
                text,
                (s(x), s(label_bottom - 4)),
                style
                    .transform(FontTransform::Rotate270)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            )
        } else {
            Text::new(
                text,
                (s(x), s(label_bottom - COL_LABEL_H / 2)),
                style.pos(Pos::new(HPos::Center, VPos::Center)),
            )
        };
        area.draw(&element)?;
    }
    if map.col_groups > 1 && cols % map.col_groups == 0 {
        let per = cols / map.col_groups;
        for g in 0..map.col_groups {
            let x0 = layout.grid_x + (g * per) as u32 * layout.cell_w;
            let y0 = layout.caption_h + layout.col_label_h;
            area.draw(&Rectangle::new(
                [
                    (s(x0) + 1, s(y0)),
                    (s(x0 + per as u32 * layout.cell_w) - 1, s(y0 + BAND_H)),
                ],
                color(band_color(g)).filled(),
            ))?;
        }
    }
    for (r, label) in map.row_labels.iter().enumerate().take(rows) {
        let y = layout.grid_y + r as u32 * layout.cell_h + layout.cell_h / 2;
        area.draw(&Text::new(
            label_text(label, layout.label_chars),
            (s(layout.grid_x - 8), s(y)),
            font(FONT, theme.text).pos(Pos::new(HPos::Right, VPos::Center)),
        ))?;
    }
    draw_color_strip(area, map, &layout, scale, fill_cells)?;
    draw_body(area, map, &layout, scale, font_factor, fill_cells)
}

/// The left edge of the colour bar.
fn bar_x(layout: &Layout, cols: usize) -> u32 {
    layout.grid_x + cols as u32 * layout.cell_w + BAR_GAP
}

/// The colour bar's left edge, top and height, for `map`.
fn bar_place(map: &Heatmap, layout: &Layout) -> (u32, u32, u32) {
    let (rows, cols) = map.values.shape();
    let height = (rows as u32 * layout.cell_h).max(40);
    (bar_x(layout, cols), layout.grid_y, height)
}

/// The part of a heatmap its values change: see [`Part::Body`].
/// A cell's colour: the palette's for a number, the theme's grey for a masked cell (−∞, which
/// is also hatched) and for NaN.
fn cell_fill(map: &Heatmap, v: f64) -> Rgb {
    if v == f64::NEG_INFINITY || v.is_nan() {
        map.theme.masked
    } else {
        map.palette.color(v, map.scale_end())
    }
}

fn draw_body<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    map: &Heatmap,
    layout: &Layout,
    scale: f64,
    font_factor: f64,
    fill_cells: &mut dyn FnMut(&CellGrid) -> bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let s = |v: u32| (f64::from(v) * scale).round() as i32;
    let px = |v: f64| (v * scale).round() as i32;
    let theme = map.theme;
    let (rows, cols) = map.values.shape();
    let font = |size: u32, c: Rgb| text_style(f64::from(size) * scale * font_factor, c);
    let grid = CellGrid {
        x: f64::from(layout.grid_x) * scale,
        y: f64::from(layout.grid_y) * scale,
        cell_w: f64::from(layout.cell_w) * scale,
        cell_h: f64::from(layout.cell_h) * scale,
        cols,
        rows,
        colors: (0..rows * cols)
            .map(|i| cell_fill(map, map.values[(i / cols.max(1), i % cols.max(1))]))
            .collect(),
    };
    let cells_filled = rows * cols > 0 && fill_cells(&grid);
    for r in 0..rows {
        for c in 0..cols {
            let v = map.values[(r, c)];
            let x0 = layout.grid_x + c as u32 * layout.cell_w;
            let y0 = layout.grid_y + r as u32 * layout.cell_h;
            let (x1, y1) = (x0 + layout.cell_w, y0 + layout.cell_h);
            let masked = v == f64::NEG_INFINITY;
            let fill = grid.colors[r * cols + c];
            if !cells_filled {
                area.draw(&Rectangle::new(
                    [(s(x0), s(y0)), (s(x1), s(y1))],
                    color(fill).filled(),
                ))?;
            }
            if masked {
                // Hatching, so a masked cell differs from a coloured one without relying on hue.
                let step = 7.0;
                let mut d = 0.0;
                while d < f64::from(layout.cell_w + layout.cell_h) {
                    let a = (f64::from(x0) + d, f64::from(y0));
                    let b = (f64::from(x0) + d - f64::from(layout.cell_h), f64::from(y1));
                    let (a, b) = clip_segment(a, b, f64::from(x0), f64::from(x1));
                    area.draw(&PathElement::new(
                        vec![(px(a.0), px(a.1)), (px(b.0), px(b.1))],
                        color(theme.muted).stroke_width(1),
                    ))?;
                    d += step;
                }
            }
            // Not a number has no place on the colour scale: its cell is plain grey and always
            // says NaN.
            let not_a_number = v.is_nan();
            if layout.show_values || masked || not_a_number {
                let text_color = if masked || not_a_number {
                    theme.text
                } else {
                    Theme::text_on(fill)
                };
                area.draw(&Text::new(
                    format_value(v, map.decimals),
                    (s(x0 + layout.cell_w / 2), s(y0 + layout.cell_h / 2)),
                    font(FONT, text_color).pos(Pos::new(HPos::Center, VPos::Center)),
                ))?;
            }
        }
    }

    // Thin separators between cells keep neighbouring equal colours apart.
    let grid_line = color(theme.background).stroke_width(1);
    for c in 1..cols {
        let x = s(layout.grid_x + c as u32 * layout.cell_w);
        area.draw(&PathElement::new(
            vec![
                (x, s(layout.grid_y)),
                (x, s(layout.grid_y + rows as u32 * layout.cell_h)),
            ],
            grid_line,
        ))?;
    }
    for r in 1..rows {
        let y = s(layout.grid_y + r as u32 * layout.cell_h);
        area.draw(&PathElement::new(
            vec![
                (s(layout.grid_x), y),
                (s(layout.grid_x + cols as u32 * layout.cell_w), y),
            ],
            grid_line,
        ))?;
    }

    draw_highlight(area, map, layout, scale)?;
    draw_color_labels(area, map, layout, scale, font_factor)?;
    area.present()
}

/// Clips the hatch segment from `a` to `b` to the vertical band `x0..x1`.
fn clip_segment(a: (f64, f64), b: (f64, f64), x0: f64, x1: f64) -> ((f64, f64), (f64, f64)) {
    let at = |x: f64| {
        let t = (x - a.0) / (b.0 - a.0);
        (x, a.1 + t * (b.1 - a.1))
    };
    let a = if a.0 > x1 { at(x1) } else { a };
    let b = if b.0 < x0 { at(x0) } else { b };
    (a, b)
}

fn draw_highlight<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    map: &Heatmap,
    layout: &Layout,
    scale: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let s = |v: u32| (f64::from(v) * scale).round() as i32;
    let (rows, cols) = map.values.shape();
    let accent = color(map.theme.accent);
    let (gx, gy, cw, ch) = (layout.grid_x, layout.grid_y, layout.cell_w, layout.cell_h);
    let outline = |x0: u32, y0: u32, x1: u32, y1: u32, width: u32| {
        Rectangle::new(
            [(s(x0), s(y0)), (s(x1), s(y1))],
            accent.stroke_width((f64::from(width) * scale).round().max(1.0) as u32),
        )
    };
    for &r in map.highlight.rows.iter().filter(|r| **r < rows) {
        let y0 = gy + r as u32 * ch;
        area.draw(&outline(gx, y0, gx + cols as u32 * cw, y0 + ch, 2))?;
    }
    for &c in map.highlight.cols.iter().filter(|c| **c < cols) {
        let x0 = gx + c as u32 * cw;
        area.draw(&outline(x0, gy, x0 + cw, gy + rows as u32 * ch, 2))?;
    }
    for &(r, c) in map
        .highlight
        .cells
        .iter()
        .filter(|(r, c)| *r < rows && *c < cols)
    {
        let (x0, y0) = (gx + c as u32 * cw, gy + r as u32 * ch);
        area.draw(&outline(x0 + 1, y0 + 1, x0 + cw - 1, y0 + ch - 1, 2))?;
    }
    if let Some((r, c)) = map.highlight.cell.filter(|(r, c)| *r < rows && *c < cols) {
        let (x0, y0) = (gx + c as u32 * cw, gy + r as u32 * ch);
        area.draw(&outline(x0, y0, x0 + cw, y0 + ch, 3))?;
    }
    Ok(())
}

/// The colour bar's colours, from the largest value at the top to the smallest at the bottom:
/// they depend on the palette alone, not on the range.
fn draw_color_strip<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    map: &Heatmap,
    layout: &Layout,
    scale: f64,
    fill_cells: &mut dyn FnMut(&CellGrid) -> bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let s = |v: u32| (f64::from(v) * scale).round() as i32;
    let (x0, top, height) = bar_place(map, layout);
    let steps = 32;
    let lo = match map.palette {
        Palette::Diverging => -1.0,
        Palette::Sequential => 0.0,
    };
    // Top of the bar is the largest value; the end steps show the exact end colours.
    let step_color = |i: u32| {
        let t = 1.0 - f64::from(i) / f64::from(steps - 1);
        map.palette.color(lo + t * (1.0 - lo), 1.0)
    };
    // The bar is a grid of one column, so a backend that fills grids in one go does it too.
    let bar = CellGrid {
        x: f64::from(x0) * scale,
        y: f64::from(top) * scale,
        cell_w: f64::from(BAR_W) * scale,
        cell_h: f64::from(height) * scale / f64::from(steps),
        cols: 1,
        rows: steps as usize,
        colors: (0..steps).map(step_color).collect(),
    };
    if !fill_cells(&bar) {
        for i in 0..steps {
            let y0 = top + height * i / steps;
            let y1 = top + height * (i + 1) / steps;
            area.draw(&Rectangle::new(
                [(s(x0), s(y0)), (s(x0 + BAR_W), s(y1))],
                color(step_color(i)).filled(),
            ))?;
        }
    }
    Ok(())
}

/// The values at the colour bar's ends: ±range, or 0 and range.
fn draw_color_labels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    map: &Heatmap,
    layout: &Layout,
    scale: f64,
    font_factor: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let s = |v: u32| (f64::from(v) * scale).round() as i32;
    let (x0, top, height) = bar_place(map, layout);
    let end = map.scale_end();
    let (lo, hi) = match map.palette {
        Palette::Diverging => (-end, end),
        Palette::Sequential => (0.0, end),
    };
    let label = |v: f64| format_value(v, map.bar_decimals(v));
    let text = text_style(10.0 * scale * font_factor, map.theme.muted);
    area.draw(&Text::new(
        label(hi),
        (s(x0 + BAR_W + 4), s(top)),
        text.pos(Pos::new(HPos::Left, VPos::Top)),
    ))?;
    area.draw(&Text::new(
        label(lo),
        (s(x0 + BAR_W + 4), s(top + height)),
        text.pos(Pos::new(HPos::Left, VPos::Bottom)),
    ))?;
    Ok(())
}

/// The heatmap as an SVG document, drawn by the same code as the canvas.
pub fn heatmap_svg(map: &Heatmap) -> Result<String, String> {
    let layout = map.layout();
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (layout.width, layout.height)).into_drawing_area();
        // plotters-svg writes font sizes as plotters' size / 1.24, which the factor undoes, so
        // the export's text has the canvas's CSS pixel sizes.
        draw_scaled(&root, map, 1.0, 1.24, &mut |_| false, Part::Whole)
            .map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// What the rows and the columns of a heatmap are, `rows: tokens · columns: keys`; a row vector
/// (a bias, γ or β), whose one row has no axis, says so.
fn axis_caption(rows: &str, cols: &str) -> String {
    if rows.is_empty() {
        format!("one row · columns: {cols}")
    } else {
        format!("rows: {rows} · columns: {cols}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_vector_is_captioned_as_one_row() {
        assert_eq!(
            axis_caption("", "dimensions"),
            "one row · columns: dimensions"
        );
        assert_eq!(
            axis_caption("tokens", "keys"),
            "rows: tokens · columns: keys"
        );
    }

    #[test]
    fn a_nan_cell_is_grey_and_says_nan() {
        let mut m = Matrix::from_element(2, 2, 0.5);
        m[(1, 0)] = f64::NAN;
        let rows = labels(2, "t");
        let cols = labels(2, "k");
        let map = Heatmap {
            values: &m,
            row_labels: &rows,
            col_labels: &cols,
            row_axis: "queries",
            col_axis: "keys",
            palette: Palette::Sequential,
            range: 1.0,
            col_groups: 1,
            decimals: 2,
            highlight: Highlight::default(),
            theme: Theme::LIGHT,
            reserve: Default::default(),
        };
        let grey = Theme::LIGHT.masked;
        assert_eq!(cell_fill(&map, f64::NAN), grey);
        assert_ne!(cell_fill(&map, 0.5), grey);
        let svg = heatmap_svg(&map).unwrap();
        let hex = format!("#{:02X}{:02X}{:02X}", grey.0, grey.1, grey.2);
        assert!(svg.to_uppercase().contains(&hex), "no grey cell in {svg}");
        assert_eq!(
            svg.lines().filter(|l| l.trim() == "NaN").count(),
            1,
            "{svg}"
        );
    }

    fn labels(n: usize, prefix: &str) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}{i}")).collect()
    }

    #[test]
    fn the_cell_under_a_point_is_found() {
        let m = Matrix::from_element(3, 4, 0.5);
        let rows = labels(3, "t");
        let cols = labels(4, "d");
        let map = Heatmap {
            values: &m,
            row_labels: &rows,
            col_labels: &cols,
            row_axis: "tokens",
            col_axis: "dimensions",
            palette: Palette::Diverging,
            range: 1.0,
            col_groups: 2,
            decimals: 2,
            highlight: Highlight::default(),
            theme: Theme::LIGHT,
            reserve: Default::default(),
        };
        let l = map.layout();
        let x = f64::from(l.grid_x + l.cell_w * 2 + 1);
        let y = f64::from(l.grid_y + l.cell_h + 1);
        assert_eq!(l.cell_at(x, y, 3, 4), Some((1, 2)));
        assert_eq!(l.cell_at(0.0, 0.0, 3, 4), None);
        assert!(l.show_values);
    }

    #[test]
    fn sixteen_columns_of_two_decimal_numbers_show_their_numbers_and_thirty_two_do_not() {
        for (cols, shown) in [(16, true), (32, false)] {
            let m = Matrix::from_element(8, cols, -2.09);
            let rows = labels(8, "t");
            let names = labels(cols, "f");
            let l = heatmap_of(&m, (&rows, &names), ("tokens", "hidden units")).layout();
            assert_eq!(l.show_values, shown, "{cols} columns");
        }
    }

    /// The layout of `values` with these labels and axes.
    /// A heatmap of `values` on the light theme: sequential, 0 … 1, two decimals.
    fn heatmap_of<'a>(
        values: &'a Matrix,
        labels: (&'a [String], &'a [String]),
        axes: (&'a str, &'a str),
    ) -> Heatmap<'a> {
        Heatmap {
            values,
            row_labels: labels.0,
            col_labels: labels.1,
            row_axis: axes.0,
            col_axis: axes.1,
            palette: Palette::Sequential,
            range: 1.0,
            col_groups: 1,
            decimals: 2,
            highlight: Highlight::default(),
            theme: Theme::LIGHT,
            reserve: Default::default(),
        }
    }

    fn layout_of(values: &Matrix, labels: (&[String], &[String]), axes: (&str, &str)) -> Layout {
        heatmap_of(values, labels, axes).layout()
    }

    fn square_layout(tokens: &[&str]) -> Layout {
        let labels: Vec<String> = tokens.iter().map(|t| t.to_string()).collect();
        let m = Matrix::from_element(labels.len(), labels.len(), 0.25);
        layout_of(&m, (&labels, &labels), ("queries", "keys"))
    }

    #[test]
    fn a_long_colour_bar_end_value_takes_the_room_it_needs() {
        let labels: Vec<String> = ["I", "am", "hungry"]
            .iter()
            .map(|t| t.to_string())
            .collect();
        let m = Matrix::from_element(3, 3, -11.875);
        let map = |range: f64, decimals: usize| Heatmap {
            palette: Palette::Diverging,
            range,
            decimals,
            ..heatmap_of(&m, (&labels, &labels), ("queries", "keys"))
        };
        // "−0.50" keeps the least room; "−11.875", seven characters at 6.5 px, takes more.
        assert_eq!(map(0.5, 2).bar_label_w(), BAR_LABEL_W);
        assert_eq!(map(11.875, 3).bar_label_w(), 4 + 7 * 13 / 2);
        assert!(map(11.875, 3).layout().width > map(0.5, 3).layout().width);
    }

    #[test]
    fn a_short_column_label_widens_its_cell_rather_than_being_cut() {
        let l = square_layout(&["I", "am", "hungry"]);
        assert!(!l.col_labels_upright);
        assert!(l.cell_w >= 6 * CHAR_W + 8, "{l:?}");
        assert!(l.show_values);
    }

    #[test]
    fn a_narrow_drawing_writes_its_axes_on_two_lines_inside_it() {
        let m = Matrix::from_element(3, 2, -0.25);
        let labels: Vec<String> = ["I", "am", "hungry"]
            .iter()
            .map(|t| t.to_string())
            .collect();
        let dims = vec!["d1".to_string(), "d2".to_string()];
        let layout =
            |cols: &[String], m: &Matrix| layout_of(m, (&labels, cols), ("tokens", "dimensions"));
        let narrow = layout(&dims, &m);
        assert_eq!(narrow.caption_h, CAPTION_H + CAPTION_LINE_H, "{narrow:?}");
        for line in ["rows: tokens", "columns: dimensions"] {
            assert!(PAD + line.chars().count() as u32 * CAPTION_CHAR_W <= narrow.width);
        }
        assert_eq!(narrow.grid_y, narrow.caption_h + narrow.col_label_h);
        let wide_m = Matrix::from_element(3, 8, -0.25);
        let eight: Vec<String> = (1..=8).map(|i| format!("d{i}")).collect();
        assert_eq!(layout(&eight, &wide_m).caption_h, CAPTION_H);
    }

    #[test]
    fn a_long_column_label_is_written_upwards_whole() {
        let l = square_layout(&["the", "extraordinary", "cat"]);
        assert!(l.col_labels_upright, "{l:?}");
        assert!(l.col_label_h >= 13 * CHAR_W, "{l:?}");
        assert_eq!(l.label_chars, 13);
        // The grid starts below the turned labels, so a click finds the same cells.
        assert_eq!(l.grid_y, l.caption_h + l.col_label_h);
        let short = square_layout(&["the", "cat", "sat"]);
        assert_eq!(short.col_label_h, COL_LABEL_H);
        assert!(!short.col_labels_upright);
    }

    #[test]
    fn the_widest_value_is_found_without_formatting_every_cell() {
        let values = [
            0.0, -0.0, -0.001, 0.004, 9.995, -9.995, 99.5, -0.5, 1234.5, -12.25, 0.125,
        ];
        for decimals in 0..4 {
            for n in 1..values.len() {
                for start in 0..values.len() - n {
                    let m = Matrix::from_row_slice(1, n, &values[start..start + n]);
                    let brute = m
                        .iter()
                        .map(|v| format_value(*v, decimals).chars().count())
                        .max()
                        .unwrap();
                    assert_eq!(widest_value(&m, decimals), brute, "{m} at {decimals}");
                }
            }
        }
        let mut m = Matrix::from_row_slice(1, 3, &[0.5, f64::NEG_INFINITY, f64::NAN]);
        assert_eq!(widest_value(&m, 0), 3);
        m[(0, 2)] = 0.25;
        assert_eq!(widest_value(&m, 0), 2);
        assert_eq!(widest_value(&Matrix::zeros(0, 0), 2), 1);
    }
}
