//! plotters-canvas with the canvas state remembered between calls.
//!
//! `CanvasBackend` sets the colours, line width, font, alignment and baseline before every
//! rectangle, line and piece of text. Parsing a CSS font or colour string is the slow part of
//! drawing a label, and a heatmap draws hundreds of labels and cells, so this backend draws
//! rectangles, paths and text itself, setting only what changed, and hands the rest to
//! `CanvasBackend` unchanged.

use crate::plot::{quarter_turns, SvgBackend};
use plotters::backend::DrawingBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use plotters_canvas::CanvasBackend;
use std::fmt;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// A drawing call the canvas refused.
#[derive(Debug)]
pub struct CanvasError(String);

impl fmt::Display for CanvasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "canvas error: {}", self.0)
    }
}

impl std::error::Error for CanvasError {}

type Drawn = Result<(), DrawingErrorKind<CanvasError>>;

/// The inner backend's result in this backend's error type.
fn lift<E: std::error::Error + Send + Sync>(result: Result<(), DrawingErrorKind<E>>) -> Drawn {
    result.map_err(|e| match e {
        DrawingErrorKind::DrawingError(e) => {
            DrawingErrorKind::DrawingError(CanvasError(e.to_string()))
        }
        DrawingErrorKind::FontError(e) => DrawingErrorKind::FontError(e),
    })
}

/// The 2D context of `canvas`, or `None` when it has none.
pub fn context_2d(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas.get_context("2d").ok()??.dyn_into().ok()
}

/// What was last set on the context; `None` when it is unknown.
#[derive(Default)]
struct State {
    fill: Option<String>,
    stroke: Option<String>,
    line_width: Option<u32>,
    /// The font as set: its style, size (as bits) and family, so that an unchanged font is
    /// recognised without writing its CSS text.
    font: Option<(String, u64, String)>,
    align: Option<&'static str>,
    baseline: Option<&'static str>,
}

/// A `CanvasBackend` that skips redundant context updates.
pub struct CachedCanvas {
    inner: CanvasBackend,
    context: CanvasRenderingContext2d,
    state: State,
}

impl CachedCanvas {
    /// The backend for `canvas`, or `None` when it has no 2D context.
    pub fn new(canvas: HtmlCanvasElement) -> Option<Self> {
        let context = context_2d(&canvas)?;
        Some(Self {
            inner: CanvasBackend::with_canvas_object(canvas)?,
            context,
            state: State::default(),
        })
    }

    /// The canvas's 2D context, for drawing beside plotters.
    pub fn context(&self) -> &CanvasRenderingContext2d {
        &self.context
    }

    /// Forgets the colours and line width: `CanvasBackend` may set them behind our back.
    fn inner(&mut self) -> &mut CanvasBackend {
        self.state.fill = None;
        self.state.stroke = None;
        self.state.line_width = None;
        &mut self.inner
    }

    fn set_fill(&mut self, color: BackendColor) {
        let css = css_color(color);
        if self.state.fill.as_deref() != Some(css.as_str()) {
            self.context.set_fill_style_str(&css);
            self.state.fill = Some(css);
        }
    }

    fn set_stroke<S: BackendStyle>(&mut self, style: &S) {
        let css = css_color(style.color());
        if self.state.stroke.as_deref() != Some(css.as_str()) {
            self.context.set_stroke_style_str(&css);
            self.state.stroke = Some(css);
        }
        let width = style.stroke_width();
        if self.state.line_width != Some(width) {
            self.context.set_line_width(f64::from(width));
            self.state.line_width = Some(width);
        }
    }
}

fn css_color(color: BackendColor) -> String {
    let (r, g, b) = color.rgb;
    if color.alpha >= 1.0 {
        format!("rgb({r},{g},{b})")
    } else {
        format!("rgba({r},{g},{b},{})", color.alpha)
    }
}

impl DrawingBackend for CachedCanvas {
    type ErrorType = CanvasError;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Drawn {
        lift(self.inner.ensure_prepared())
    }

    fn present(&mut self) -> Drawn {
        lift(self.inner.present())
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Drawn {
        lift(self.inner().draw_pixel(point, color))
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Drawn {
        lift(self.inner().draw_line(from, to, style))
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Drawn {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let (x, y) = (f64::from(upper_left.0), f64::from(upper_left.1));
        let w = f64::from(bottom_right.0 - upper_left.0);
        let h = f64::from(bottom_right.1 - upper_left.1);
        if fill {
            self.set_fill(style.color());
            self.context.fill_rect(x, y, w, h);
        } else {
            self.set_stroke(style);
            self.context.stroke_rect(x, y, w, h);
        }
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let mut path = path.into_iter();
        self.context.begin_path();
        if let Some(start) = path.next() {
            self.set_stroke(style);
            self.context.move_to(f64::from(start.0), f64::from(start.1));
            for next in path {
                self.context.line_to(f64::from(next.0), f64::from(next.1));
            }
        }
        self.context.stroke();
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        lift(self.inner().fill_polygon(path, style))
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn {
        lift(self.inner().draw_circle(center, radius, style, fill))
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Drawn {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let quarter_turns = quarter_turns(style.transform());
        let (x, y) = if quarter_turns == 0 {
            (f64::from(pos.0), f64::from(pos.1))
        } else {
            self.context.save();
            let _ = self.context.translate(f64::from(pos.0), f64::from(pos.1));
            let _ = self
                .context
                .rotate(f64::from(quarter_turns) * std::f64::consts::FRAC_PI_2);
            (0.0, 0.0)
        };
        let baseline = match style.anchor().v_pos {
            VPos::Top => "top",
            VPos::Center => "middle",
            VPos::Bottom => "bottom",
        };
        if self.state.baseline != Some(baseline) {
            self.context.set_text_baseline(baseline);
            self.state.baseline = Some(baseline);
        }
        let align = match style.anchor().h_pos {
            HPos::Left => "start",
            HPos::Right => "end",
            HPos::Center => "center",
        };
        if self.state.align != Some(align) {
            self.context.set_text_align(align);
            self.state.align = Some(align);
        }
        self.set_fill(color);
        let (font_style, size, family) = (style.style(), style.size(), style.family());
        let (font_style, family) = (font_style.as_str(), family.as_str());
        let unchanged =
            self.state.font.as_ref().is_some_and(|(s, bits, f)| {
                s == font_style && *bits == size.to_bits() && f == family
            });
        if !unchanged {
            let css = format!("{font_style} {}px {family}", size);
            self.context.set_font(&css);
            self.state.font = Some((font_style.to_string(), size.to_bits(), family.to_string()));
        }
        let drawn = self.context.fill_text(text, x, y).map_err(|e| {
            DrawingErrorKind::DrawingError(CanvasError(
                e.as_string()
                    .unwrap_or_else(|| "fillText failed".to_string()),
            ))
        });
        if quarter_turns != 0 {
            // Restoring brings back the font and colours from before the rotation.
            self.context.restore();
            self.state = State::default();
        }
        drawn
    }
}

/// Where the app draws a heatmap: a canvas on the page, or an SVG document for export. The
/// plotting code is compiled once for this type instead of once per backend, which keeps a copy
/// of it out of the wasm build.
pub enum Surface<'a> {
    /// A canvas on the page.
    Canvas(CachedCanvas),
    /// An SVG document being written.
    Svg(SvgBackend<'a>),
}

impl DrawingBackend for Surface<'_> {
    type ErrorType = CanvasError;

    fn get_size(&self) -> (u32, u32) {
        match self {
            Self::Canvas(c) => c.get_size(),
            Self::Svg(s) => s.get_size(),
        }
    }

    fn ensure_prepared(&mut self) -> Drawn {
        match self {
            Self::Canvas(c) => c.ensure_prepared(),
            Self::Svg(s) => lift(s.ensure_prepared()),
        }
    }

    fn present(&mut self) -> Drawn {
        match self {
            Self::Canvas(c) => c.present(),
            Self::Svg(s) => lift(s.present()),
        }
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Drawn {
        match self {
            Self::Canvas(c) => c.draw_pixel(point, color),
            Self::Svg(s) => lift(s.draw_pixel(point, color)),
        }
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Drawn {
        match self {
            Self::Canvas(c) => c.draw_line(from, to, style),
            Self::Svg(s) => lift(s.draw_line(from, to, style)),
        }
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Drawn {
        match self {
            Self::Canvas(c) => c.draw_rect(upper_left, bottom_right, style, fill),
            Self::Svg(s) => lift(s.draw_rect(upper_left, bottom_right, style, fill)),
        }
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        match self {
            Self::Canvas(c) => c.draw_path(path, style),
            Self::Svg(s) => lift(s.draw_path(path, style)),
        }
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        match self {
            Self::Canvas(c) => c.fill_polygon(path, style),
            Self::Svg(s) => lift(s.fill_polygon(path, style)),
        }
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn {
        match self {
            Self::Canvas(c) => c.draw_circle(center, radius, style, fill),
            Self::Svg(s) => lift(s.draw_circle(center, radius, style, fill)),
        }
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Drawn {
        match self {
            Self::Canvas(c) => c.draw_text(text, style, pos),
            Self::Svg(s) => lift(s.draw_text(text, style, pos)),
        }
    }
}
