//! The training loss, step by step: a line chart with a logarithmic loss axis, so a loss that
//! keeps halving keeps falling visibly instead of hugging the floor.

use super::palette::{Rgb, Theme};
use plotters::chart::ChartBuilder;
use plotters::coord::combinators::{BindKeyPoints, IntoLogRange};
use plotters::coord::Shift;
use plotters::drawing::{DrawingArea, DrawingAreaErrorKind, IntoDrawingArea};
use plotters::series::LineSeries;
use plotters::style::{Color, FontFamily, IntoFont, RGBColor, TextStyle};
use plotters_backend::DrawingBackend;
use plotters_svg::SVGBackend;

/// The smallest loss the axis shows: a loss of exactly 0 (a task met exactly) sits on the floor.
const FLOOR: f64 = 1e-6;

/// Width and height of the chart in CSS pixels, before any zoom.
pub const LOSS_CURVE_SIZE: (u32, u32) = (480, 220);

fn color(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

fn font(size: f64, c: Rgb) -> TextStyle<'static> {
    // The enum, not a family name: see `heatmap::text_style`.
    (FontFamily::SansSerif, size).into_font().color(&color(c))
}

/// The loss axis's ends: a little below the smallest and above the largest loss, on a log
/// scale, at least one decade apart so a flat curve still has labels.
pub fn loss_range(losses: &[f64]) -> (f64, f64) {
    let finite = losses.iter().copied().filter(|l| l.is_finite());
    let lo = finite.clone().fold(f64::INFINITY, f64::min).max(FLOOR);
    let hi = finite.fold(0.0, f64::max).max(lo);
    if !lo.is_finite() {
        return (0.1, 1.0);
    }
    let (lo, hi) = (lo / 1.5, hi * 1.5);
    if hi / lo < 10.0 {
        let mid = (lo * hi).sqrt();
        (mid / 10f64.sqrt(), mid * 10f64.sqrt())
    } else {
        (lo, hi)
    }
}

/// The loss axis's labelled values: 1, 2 and 5 times the powers of ten between `lo` and `hi`,
/// or only the powers of ten when that would be more than seven labels, and only every few of
/// them past ten.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = lo.log10().floor() as i32..=hi.log10().ceil() as i32;
    let ticks = |steps: &[f64]| -> Vec<f64> {
        decades
            .clone()
            // Read from its decimal form, each tick is the float nearest m·10^k, which the
            // shortest form writes back exactly: 0.002, not 0.0020000000000000005; 1e45, not
            // 1.0000000000000001e45.
            .flat_map(|k| {
                steps
                    .iter()
                    .filter_map(move |m| format!("{m}e{k}").parse::<f64>().ok())
            })
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    let fine = ticks(&[1.0, 2.0, 5.0]);
    if fine.len() <= 7 {
        return fine;
    }
    let decades = ticks(&[1.0]);
    if decades.len() <= 10 {
        return decades;
    }
    // A run that blew up spans dozens of decades: every few of them, eight labels at most.
    let every = decades.len().div_ceil(8);
    decades.into_iter().step_by(every).collect()
}

/// A tick of the loss axis: 1, 2 or 5 times a power of ten, which the shortest form writes
/// exactly ("0.02", "500"), with the power written out ("1e6", "2e-5") where that form would
/// take more than five characters.
pub fn tick_label(v: f64) -> String {
    super::shortest_within(v, 5)
}

/// Draws `losses` (`losses[k]` after k steps) on `area`, `scale` times the CSS pixel sizes;
/// `font_factor` undoes backends that shrink font sizes (plotters' SVG writes size / 1.24).
pub fn draw_loss_curve<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    losses: &[f64],
    theme: &Theme,
    scale: f64,
    font_factor: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&color(theme.background))?;
    let px = |v: f64| (v * scale).round() as u32;
    let steps = losses.len().saturating_sub(1).max(1);
    let (lo, hi) = loss_range(losses);
    let mut chart = ChartBuilder::on(area)
        .margin(px(10.0))
        // Half of the last step's label ("1000") stands right of the axis's end.
        .margin_right(px(22.0))
        .x_label_area_size(px(34.0))
        .y_label_area_size(px(56.0))
        .build_cartesian_2d(
            0..steps,
            (lo..hi).log_scale().with_key_points(log_ticks(lo, hi)),
        )?;
    let label = font(12.0 * scale * font_factor, theme.muted);
    let grid = color(theme.masked);
    let format_loss = |v: &f64| tick_label(*v);
    chart
        .configure_mesh()
        .x_desc("step")
        .y_desc("loss (log scale)")
        .x_labels(6)
        .y_labels(5)
        .y_label_formatter(&format_loss)
        .label_style(label.clone())
        .axis_desc_style(label)
        .bold_line_style(grid.stroke_width(px(1.0)))
        .light_line_style(grid.mix(0.4).stroke_width(px(1.0)))
        .axis_style(color(theme.muted).stroke_width(px(1.0)))
        .draw()?;
    let points = losses
        .iter()
        .enumerate()
        .filter(|(_, l)| l.is_finite())
        .map(|(k, l)| (k, l.max(FLOOR)));
    chart.draw_series(LineSeries::new(
        points,
        color(theme.accent).stroke_width(px(2.0)),
    ))?;
    area.present()
}

/// The loss curve as an SVG document, for exports and native tests.
pub fn loss_curve_svg(losses: &[f64], theme: &Theme) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, LOSS_CURVE_SIZE).into_drawing_area();
        draw_loss_curve(&root, losses, theme, 1.0, 1.24).map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_spans_at_least_a_decade_around_a_flat_curve() {
        let (lo, hi) = loss_range(&[0.5, 0.5]);
        assert!(lo < 0.5 && hi > 0.5 && hi / lo >= 9.99, "{lo}..{hi}");
    }

    #[test]
    fn a_zero_loss_sits_on_the_floor_and_the_axis_keeps_the_start() {
        let (lo, hi) = loss_range(&[2.0, 0.0]);
        assert!(lo <= FLOOR && hi >= 2.0, "{lo}..{hi}");
    }

    #[test]
    fn a_loss_over_dozens_of_decades_gets_at_most_eight_labels() {
        let ticks = log_ticks(0.5, 2.76e67);
        assert!(ticks.len() <= 8 && ticks.len() >= 4, "{ticks:?}");
        assert_eq!(ticks[0], 1.0);
        assert!(ticks.iter().all(|t| tick_label(*t).len() <= 5), "{ticks:?}");
    }

    #[test]
    fn tick_labels_stay_short_at_any_size() {
        assert_eq!(tick_label(0.02), "0.02");
        assert_eq!(tick_label(500.0), "500");
        assert_eq!(tick_label(20000.0), "20000");
        assert_eq!(tick_label(1e100), "1e100");
        assert_eq!(tick_label(0.00002), "2e-5");
    }

    #[test]
    fn ticks_are_one_two_five_per_decade_or_only_the_decades() {
        assert_eq!(log_ticks(0.15, 2.5), vec![0.2, 0.5, 1.0, 2.0]);
        assert_eq!(log_ticks(1e-6, 10.0).len(), 8);
        let small: Vec<String> = log_ticks(0.0015, 0.006)
            .iter()
            .map(|v| v.to_string())
            .collect();
        assert_eq!(small, ["0.002", "0.005"]);
        assert!(log_ticks(1e-6, 10.0)
            .iter()
            .all(|v| (v.log10() - v.log10().round()).abs() < 1e-9));
    }

    #[test]
    fn no_losses_give_a_default_axis() {
        assert_eq!(loss_range(&[]), (0.1, 1.0));
    }

    #[test]
    fn the_last_step_s_label_is_inside_the_picture() {
        let losses: Vec<f64> = (0..=1000).map(|k| 2.0 / (1.0 + k as f64)).collect();
        let svg = loss_curve_svg(&losses, &Theme::LIGHT).unwrap();
        // The label's centre, and half of "1000" at 12 px (four digits of about 7 px).
        let at = svg
            .find(">\n1000\n</text>")
            .or_else(|| svg.find(">1000</text>"));
        let head = &svg[..at.unwrap_or_else(|| panic!("a label 1000: {svg}"))];
        let tag = &head[head.rfind("<text").unwrap()..];
        let x: f64 = tag
            .split("x=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse().ok())
            .unwrap();
        assert!(x + 14.0 <= f64::from(LOSS_CURVE_SIZE.0), "{tag}");
    }

    #[test]
    fn the_svg_draws_one_line_and_names_its_axes() {
        let svg = loss_curve_svg(&[1.4, 0.9, 0.5, 0.2], &Theme::LIGHT).unwrap();
        assert!(svg.contains("loss (log scale)"), "{svg}");
        let texts: Vec<&str> = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim()))
            .collect();
        assert!(texts.contains(&"step"), "{texts:?}");
        // The curve is the one line in the accent colour.
        assert_eq!(svg.matches(r##"stroke="#0B6E4F""##).count(), 1, "{svg}");
        for tick in ["0.2", "0.5", "1", "2"] {
            assert!(
                texts.contains(&tick),
                "no {tick} on the loss axis: {texts:?}"
            );
        }
    }
}
