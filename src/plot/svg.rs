//! A plotters backend that writes SVG into a string: what the heatmap exports are drawn on.
//!
//! It writes the same elements as the `plotters-svg` crate (a `rect` per rectangle, a
//! `polyline` per path, a `text` per label), with its numbers written by
//! [`crate::attention::decimal`], so the web bundle needs none of the standard library's float
//! formatting.

use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontStyle, FontTransform,
};
use std::convert::Infallible;
use std::fmt::Write as _;

type Drawn = Result<(), DrawingErrorKind<Infallible>>;

/// How many quarter turns clockwise plotters asks text to be rotated by: both the SVG writer
/// and the browser's canvas backend rotate by this.
pub fn quarter_turns(transform: FontTransform) -> u32 {
    match transform {
        FontTransform::None => 0,
        FontTransform::Rotate90 => 1,
        FontTransform::Rotate180 => 2,
        FontTransform::Rotate270 => 3,
    }
}

/// Draws into `out`, which holds a complete SVG document once the drawing is presented.
pub struct SvgBackend<'a> {
    out: &'a mut String,
    size: (u32, u32),
    closed: bool,
}

impl<'a> SvgBackend<'a> {
    /// Starts a `width × height` document in `out`.
    pub fn new(out: &'a mut String, size: (u32, u32)) -> Self {
        let (w, h) = size;
        let _ = writeln!(
            out,
            "<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" xmlns=\"http://www.w3.org/2000/svg\">"
        );
        Self {
            out,
            size,
            closed: false,
        }
    }

    /// Writes `<tag a="v" …` for `attrs`, escaping the values; the caller closes the tag.
    fn open(&mut self, tag: &str, attrs: &[(&str, &str)]) {
        self.out.push('<');
        self.out.push_str(tag);
        for (key, value) in attrs {
            let _ = write!(self.out, " {key}=\"");
            escape_into(self.out, value);
            self.out.push('"');
        }
    }

    fn element(&mut self, tag: &str, attrs: &[(&str, &str)]) {
        self.open(tag, attrs);
        self.out.push_str("/>\n");
    }
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
}

fn hex(color: BackendColor) -> String {
    let (r, g, b) = color.rgb;
    format!("#{r:02X}{g:02X}{b:02X}")
}

fn opacity(color: BackendColor) -> String {
    color.alpha.to_string()
}

/// The `fill` and `stroke` of a shape drawn filled or outlined in `color`.
fn fill_and_stroke(color: BackendColor, filled: bool) -> (String, String) {
    let (paint, none) = (hex(color), "none".to_string());
    if filled {
        (paint, none)
    } else {
        (none, paint)
    }
}

fn points(path: impl IntoIterator<Item = BackendCoord>) -> String {
    path.into_iter().fold(String::new(), |mut s, (x, y)| {
        let _ = write!(s, "{x},{y} ");
        s
    })
}

impl DrawingBackend for SvgBackend<'_> {
    type ErrorType = Infallible;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Drawn {
        Ok(())
    }

    fn present(&mut self) -> Drawn {
        if !self.closed {
            self.out.push_str("</svg>\n");
            self.closed = true;
        }
        Ok(())
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Drawn {
        if color.alpha > 0.0 {
            let (x, y) = (point.0.to_string(), point.1.to_string());
            self.element(
                "rect",
                &[
                    ("x", &x),
                    ("y", &y),
                    ("width", "1"),
                    ("height", "1"),
                    ("stroke", "none"),
                    ("opacity", &opacity(color)),
                    ("fill", &hex(color)),
                ],
            );
        }
        Ok(())
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Drawn {
        let color = style.color();
        if color.alpha > 0.0 {
            self.element(
                "line",
                &[
                    ("opacity", &opacity(color)),
                    ("stroke", &hex(color)),
                    ("stroke-width", &style.stroke_width().to_string()),
                    ("x1", &from.0.to_string()),
                    ("y1", &from.1.to_string()),
                    ("x2", &to.0.to_string()),
                    ("y2", &to.1.to_string()),
                ],
            );
        }
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Drawn {
        let color = style.color();
        if color.alpha > 0.0 {
            let (fill, stroke) = fill_and_stroke(color, fill);
            self.element(
                "rect",
                &[
                    ("x", &upper_left.0.to_string()),
                    ("y", &upper_left.1.to_string()),
                    ("width", &(bottom_right.0 - upper_left.0).to_string()),
                    ("height", &(bottom_right.1 - upper_left.1).to_string()),
                    ("opacity", &opacity(color)),
                    ("fill", &fill),
                    ("stroke", &stroke),
                ],
            );
        }
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        let color = style.color();
        if color.alpha > 0.0 {
            self.element(
                "polyline",
                &[
                    ("fill", "none"),
                    ("opacity", &opacity(color)),
                    ("stroke", &hex(color)),
                    ("stroke-width", &style.stroke_width().to_string()),
                    ("points", &points(path)),
                ],
            );
        }
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        let color = style.color();
        if color.alpha > 0.0 {
            self.element(
                "polygon",
                &[
                    ("opacity", &opacity(color)),
                    ("fill", &hex(color)),
                    ("points", &points(path)),
                ],
            );
        }
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn {
        let color = style.color();
        if color.alpha > 0.0 {
            let (fill, stroke) = fill_and_stroke(color, fill);
            self.element(
                "circle",
                &[
                    ("cx", &center.0.to_string()),
                    ("cy", &center.1.to_string()),
                    ("r", &radius.to_string()),
                    ("opacity", &opacity(color)),
                    ("fill", &fill),
                    ("stroke", &stroke),
                    ("stroke-width", &style.stroke_width().to_string()),
                ],
            );
        }
        Ok(())
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
        let (x, y) = (pos.0.to_string(), pos.1.to_string());
        let anchor = match style.anchor().h_pos {
            HPos::Left => "start",
            HPos::Right => "end",
            HPos::Center => "middle",
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => "0.76em",
            VPos::Center => "0.5ex",
            VPos::Bottom => "-0.5ex",
        };
        // Font sizes are given in plotters' units, 1.24 times the CSS pixel size.
        let size = (style.size() / 1.24).to_string();
        let (opacity, fill) = (opacity(color), hex(color));
        let family = style.family();
        let mut attrs: Vec<(&str, &str)> = vec![
            ("x", &x),
            ("y", &y),
            ("dy", dy),
            ("text-anchor", anchor),
            ("font-family", family.as_str()),
            ("font-size", &size),
            ("opacity", &opacity),
            ("fill", &fill),
        ];
        let font_style = style.style();
        match font_style {
            FontStyle::Normal => {}
            FontStyle::Bold => attrs.push(("font-weight", "bold")),
            _ => attrs.push(("font-style", font_style.as_str())),
        }
        let degrees = 90 * quarter_turns(style.transform());
        let rotate = format!("rotate({degrees}, {x}, {y})");
        if degrees != 0 {
            attrs.push(("transform", &rotate));
        }
        self.open("text", &attrs);
        self.out.push_str(">\n");
        escape_into(self.out, text);
        self.out.push_str("\n</text>\n");
        Ok(())
    }
}
