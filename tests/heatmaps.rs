//! SVG snapshots of each heatmap kind: cells, labels and the colours at the extremes, drawn by
//! the same plotters code as the canvas. The SVGs are also written to target/heatmaps/ to look at.

// Native tests: they read files and run the CLI, which the browser target cannot.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{forward, Config, Init, Inputs, Matrix, Weights};
use attention_lens::plot::{heatmap_svg, Heatmap, Highlight, Palette, Theme};

fn trace(causal: bool) -> attention_lens::attention::Trace {
    let config = Config {
        causal,
        ..Config::default()
    };
    let inputs = Inputs::from_sentence(
        "I like sushi, because",
        config,
        Weights::new(Init::Default, config.d_model),
    )
    .unwrap();
    forward(&inputs).unwrap()
}

fn dims(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("d{i}")).collect()
}

fn save(name: &str, svg: &str) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("../heatmaps");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.svg")), svg).unwrap();
}

fn count(svg: &str, needle: &str) -> usize {
    svg.matches(needle).count()
}

/// Whether `svg` uses `hex` (any case) as a colour.
fn has_color(svg: &str, hex: &str) -> bool {
    svg.to_lowercase().contains(&hex.to_lowercase())
}

/// Whether `text` is written as a whole text element.
fn has_text(svg: &str, text: &str) -> bool {
    svg.contains(&format!(">\n{text}\n<"))
}

#[allow(clippy::too_many_arguments)]
fn map<'a>(
    values: &'a Matrix,
    rows: &'a [String],
    cols: &'a [String],
    axes: (&'a str, &'a str),
    palette: Palette,
    groups: usize,
    theme: Theme,
) -> Heatmap<'a> {
    Heatmap {
        values,
        row_labels: rows,
        col_labels: cols,
        row_axis: axes.0,
        col_axis: axes.1,
        palette,
        range: palette.range_for(values.iter()),
        col_groups: groups,
        decimals: 2,
        highlight: Highlight::default(),
        theme,
    }
}

#[test]
fn a_signed_matrix_has_one_rectangle_per_cell_labels_and_diverging_ends() {
    let t = trace(false);
    let cols = dims(4);
    let svg = heatmap_svg(&map(
        &t.q,
        &t.tokens,
        &cols,
        ("tokens", "dimensions"),
        Palette::Diverging,
        2,
        Theme::LIGHT,
    ))
    .unwrap();
    save("q", &svg);
    // 5×4 cells + 32 colour-bar steps + 2 head bands + the background.
    assert_eq!(count(&svg, "<rect"), 5 * 4 + 32 + 2 + 1);
    for label in [
        "sushi",
        "because",
        "d1",
        "d4",
        "rows: tokens · columns: dimensions",
    ] {
        assert!(svg.contains(label), "missing {label}");
    }
    // The colour bar reaches both ends of the purple–orange palette.
    assert!(has_color(&svg, "#542788"), "no dark purple end");
    assert!(has_color(&svg, "#b35806"), "no dark orange end");
    // Every value is written in its cell, with a real minus sign.
    let written =
        t.q.iter()
            .filter(|v| has_text(&svg, &attention_lens::plot::format_value(**v, 2)))
            .count();
    assert_eq!(written, 20);
}

#[test]
fn a_probability_matrix_uses_the_sequential_palette_with_key_tokens_on_columns() {
    let t = trace(false);
    let w = &t.heads[0].weights;
    let svg = heatmap_svg(&map(
        w,
        &t.tokens,
        &t.tokens,
        ("queries", "keys"),
        Palette::Sequential,
        1,
        Theme::LIGHT,
    ))
    .unwrap();
    save("weights", &svg);
    assert_eq!(count(&svg, "<rect"), 25 + 32 + 1);
    assert!(svg.contains("rows: queries · columns: keys"));
    // Blues: the light end for 0 and the dark end for 1 on the colour bar.
    assert!(has_color(&svg, "#f7fbff"), "no light end");
    assert!(has_color(&svg, "#08306b"), "no dark end");
    assert!(
        !has_color(&svg, "#542788"),
        "probabilities must not use the diverging palette"
    );
}

#[test]
fn masked_cells_are_hatched_and_marked_minus_infinity() {
    let t = trace(true);
    let m = &t.heads[1].masked;
    let svg = heatmap_svg(&map(
        m,
        &t.tokens,
        &t.tokens,
        ("queries", "keys"),
        Palette::Diverging,
        1,
        Theme::DARK,
    ))
    .unwrap();
    save("masked-dark", &svg);
    // 5 tokens: 10 cells above the diagonal.
    assert_eq!(count(&svg, ">\n−∞\n<"), 10);
    assert!(has_color(&svg, &Theme::DARK.masked.hex()));
    assert!(count(&svg, "<polyline") + count(&svg, "<line") + count(&svg, "<path") >= 10);
}

#[test]
fn a_selected_cell_is_outlined_in_the_accent_colour() {
    let t = trace(false);
    let cols = dims(4);
    let mut m = map(
        &t.output,
        &t.tokens,
        &cols,
        ("tokens", "dimensions"),
        Palette::Diverging,
        1,
        Theme::LIGHT,
    );
    let plain = heatmap_svg(&m).unwrap();
    m.highlight.cell = Some((1, 2));
    let marked = heatmap_svg(&m).unwrap();
    let accent = Theme::LIGHT.accent.hex();
    assert!(!has_color(&plain, &accent));
    assert!(has_color(&marked, &accent));
}

#[test]
fn a_large_matrix_hides_cell_values_but_keeps_every_cell() {
    let m = Matrix::from_fn(32, 32, |i, j| (i as f64 - j as f64) / 10.0);
    let labels: Vec<String> = (0..32).map(|i| format!("tok{i}")).collect();
    let svg = heatmap_svg(&map(
        &m,
        &labels,
        &labels,
        ("queries", "keys"),
        Palette::Diverging,
        1,
        Theme::LIGHT,
    ))
    .unwrap();
    assert_eq!(count(&svg, "<rect"), 32 * 32 + 32 + 1);
    // Only the labels, the caption and the colour bar's two ends are written.
    assert_eq!(
        count(&svg, "<text"),
        32 + 32 + 1 + 2,
        "values should be hidden when cells are small"
    );
}
