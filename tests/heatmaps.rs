//! SVG snapshots of each heatmap kind, read back as XML: cells, labels, the colours at the
//! extremes, highlights and escaping, drawn by the same plotters code as the canvas and written
//! by plotters-svg. The SVGs are also written to target/heatmaps/ to look at.

// Native tests: they read files and run the CLI, which the browser target cannot.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{forward, Config, Init, Inputs, Matrix, Weights};
use attention_lens::plot::{
    format_value, heatmap_svg, Heatmap, Highlight, Palette, Reserve, Theme,
};
use roxmltree::{Document, Node};

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

/// `svg` parsed as XML, failing the test with the parser's message when it is not well-formed.
fn parse(svg: &str) -> Document<'_> {
    Document::parse(svg).unwrap_or_else(|e| panic!("the SVG is not well-formed XML: {e}"))
}

/// The elements called `tag`.
fn elements<'a, 'i>(doc: &'a Document<'i>, tag: &str) -> Vec<Node<'a, 'i>> {
    doc.descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == tag)
        .collect()
}

/// The text of every `<text>` element, trimmed of the line breaks plotters-svg writes around it.
fn texts(doc: &Document) -> Vec<String> {
    elements(doc, "text")
        .iter()
        .map(|n| n.text().unwrap_or_default().trim().to_string())
        .collect()
}

/// Whether any element is painted in `color` (fill or stroke).
fn uses_color(doc: &Document, color: &str) -> bool {
    doc.descendants().any(|n| {
        ["fill", "stroke"].iter().any(|a| {
            n.attribute(*a)
                .is_some_and(|v| v.eq_ignore_ascii_case(color))
        })
    })
}

/// An attribute read as a number.
fn number(node: &Node, name: &str) -> f64 {
    node.attribute(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("<{}> has no numeric {name}", node.tag_name().name()))
}

/// Every number the document writes in a geometry or font attribute is finite.
fn assert_all_numbers_finite(doc: &Document) {
    let numeric = [
        "x",
        "y",
        "width",
        "height",
        "x1",
        "y1",
        "x2",
        "y2",
        "font-size",
        "stroke-width",
        "opacity",
    ];
    for node in doc.descendants().filter(|n| n.is_element()) {
        for name in numeric {
            if let Some(v) = node.attribute(name) {
                let n: f64 = v.parse().unwrap_or(f64::NAN);
                assert!(
                    n.is_finite(),
                    "{name}=\"{v}\" on <{}>",
                    node.tag_name().name()
                );
            }
        }
        if let Some(points) = node.attribute("points") {
            for p in points.split([' ', ',']).filter(|p| !p.is_empty()) {
                assert!(
                    p.parse::<f64>().is_ok_and(f64::is_finite),
                    "points {points}"
                );
            }
        }
    }
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
        reserve: Default::default(),
    }
}

/// The SVG of a square query-by-key map of `values` with `labels` on both axes, diverging, light.
fn square_svg(values: &Matrix, labels: &[String]) -> String {
    heatmap_svg(&map(
        values,
        labels,
        labels,
        ("queries", "keys"),
        Palette::Diverging,
        1,
        Theme::LIGHT,
    ))
    .unwrap()
}

#[test]
fn a_signed_matrix_has_one_rectangle_per_cell_labels_and_diverging_ends() {
    let t = trace(false);
    let cols = dims(4);
    let heatmap = map(
        &t.q,
        &t.tokens,
        &cols,
        ("tokens", "dimensions"),
        Palette::Diverging,
        2,
        Theme::LIGHT,
    );
    let svg = heatmap_svg(&heatmap).unwrap();
    save("q", &svg);
    let doc = parse(&svg);
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let layout = heatmap.layout();
    assert_eq!(number(&root, "width"), f64::from(layout.width));
    assert_eq!(number(&root, "height"), f64::from(layout.height));
    // 5×4 cells + 32 colour-bar steps + 2 head bands + the background.
    assert_eq!(elements(&doc, "rect").len(), 5 * 4 + 32 + 2 + 1);
    // One filled rectangle of exactly one cell's size at every cell's place.
    let cells = elements(&doc, "rect")
        .iter()
        .filter(|r| {
            let (x, y) = (number(r, "x"), number(r, "y"));
            number(r, "width") == f64::from(layout.cell_w)
                && number(r, "height") == f64::from(layout.cell_h)
                && (x - f64::from(layout.grid_x)) % f64::from(layout.cell_w) == 0.0
                && (y - f64::from(layout.grid_y)) % f64::from(layout.cell_h) == 0.0
                && r.attribute("stroke") == Some("none")
        })
        .count();
    assert_eq!(cells, 20);
    let written = texts(&doc);
    for label in [
        "sushi",
        "because",
        "d1",
        "d4",
        "rows: tokens · columns: dimensions",
    ] {
        assert!(written.iter().any(|t| t == label), "missing {label}");
    }
    // The colour bar reaches both ends of the purple–orange palette.
    assert!(uses_color(&doc, "#542788"), "no dark purple end");
    assert!(uses_color(&doc, "#b35806"), "no dark orange end");
    // Every value is written in its cell, with a real minus sign.
    let values =
        t.q.iter()
            .filter(|v| written.contains(&format_value(**v, 2)));
    assert_eq!(values.count(), 20);
    assert!(written.iter().any(|t| t.starts_with('−')));
    assert_all_numbers_finite(&doc);
}

#[test]
fn a_word_wider_than_its_cell_is_written_upwards_not_cut() {
    let tokens: Vec<String> = ["an", "extraordinarily", "long", "word"]
        .map(String::from)
        .to_vec();
    let w = Matrix::from_element(4, 4, 0.25);
    let svg = heatmap_svg(&map(
        &w,
        &tokens,
        &tokens,
        ("queries", "keys"),
        Palette::Sequential,
        1,
        Theme::LIGHT,
    ))
    .unwrap();
    let doc = parse(&svg);
    let written = texts(&doc);
    for token in &tokens {
        assert_eq!(written.iter().filter(|t| *t == token).count(), 2, "{token}");
    }
    let turned = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter(|n| {
            n.attribute("transform")
                .is_some_and(|t| t.starts_with("rotate(270"))
        })
        .count();
    assert_eq!(
        turned, 4,
        "every column label is turned when one is too wide"
    );
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
    let doc = parse(&svg);
    assert_eq!(elements(&doc, "rect").len(), 25 + 32 + 1);
    let written = texts(&doc);
    assert!(written.contains(&"rows: queries · columns: keys".to_string()));
    // Each token labels a row and a column, whole: the cells widen to fit "because".
    for token in ["I", "like", "sushi", ",", "because"] {
        assert_eq!(written.iter().filter(|t| *t == token).count(), 2, "{token}");
    }
    assert!(!written.iter().any(|t| t.contains('…')), "{written:?}");
    assert!(!svg.contains("rotate("), "short labels are written across");
    // Blues: the light end for 0 and the dark end for 1 on the colour bar.
    assert!(uses_color(&doc, "#f7fbff"), "no light end");
    assert!(uses_color(&doc, "#08306b"), "no dark end");
    assert!(
        !uses_color(&doc, "#542788"),
        "probabilities must not use the diverging palette"
    );
    assert_all_numbers_finite(&doc);
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
    let doc = parse(&svg);
    // 5 tokens: 10 cells above the diagonal.
    assert_eq!(texts(&doc).iter().filter(|t| *t == "−∞").count(), 10);
    let masked = Theme::DARK.masked.hex();
    let masked_cells = elements(&doc, "rect")
        .iter()
        .filter(|r| {
            r.attribute("fill")
                .is_some_and(|f| f.eq_ignore_ascii_case(&masked))
        })
        .count();
    assert_eq!(masked_cells, 10);
    // Hatching: lines in the muted colour, several per masked cell.
    let muted = Theme::DARK.muted.hex();
    let hatches = elements(&doc, "polyline")
        .iter()
        .filter(|p| {
            p.attribute("stroke")
                .is_some_and(|s| s.eq_ignore_ascii_case(&muted))
        })
        .count();
    assert!(hatches >= 10 * 2, "{hatches} hatch lines");
    // The dark background fills the whole image.
    let background = &elements(&doc, "rect")[0];
    let bg = Theme::DARK.background.hex();
    assert!(background
        .attribute("fill")
        .is_some_and(|f| f.eq_ignore_ascii_case(&bg)));
    assert_eq!(
        (number(background, "x"), number(background, "y")),
        (0.0, 0.0)
    );
    assert_all_numbers_finite(&doc);
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
    let accent = Theme::LIGHT.accent.hex();
    let outlines = |svg: &str| -> Vec<(f64, f64, f64, f64)> {
        let doc = parse(svg);
        elements(&doc, "rect")
            .iter()
            .filter(|r| {
                r.attribute("fill") == Some("none")
                    && r.attribute("stroke")
                        .is_some_and(|s| s.eq_ignore_ascii_case(&accent))
            })
            .map(|r| {
                (
                    number(r, "x"),
                    number(r, "y"),
                    number(r, "width"),
                    number(r, "height"),
                )
            })
            .collect()
    };
    assert!(outlines(&heatmap_svg(&m).unwrap()).is_empty());
    m.highlight.cell = Some((1, 2));
    let l = m.layout();
    let cell = (
        f64::from(l.grid_x + 2 * l.cell_w),
        f64::from(l.grid_y + l.cell_h),
        f64::from(l.cell_w),
        f64::from(l.cell_h),
    );
    assert_eq!(outlines(&heatmap_svg(&m).unwrap()), vec![cell]);
    // A highlighted row is outlined across the whole grid.
    m.highlight = Highlight {
        rows: vec![3],
        ..Highlight::default()
    };
    let row = (
        f64::from(l.grid_x),
        f64::from(l.grid_y + 3 * l.cell_h),
        f64::from(4 * l.cell_w),
        f64::from(l.cell_h),
    );
    assert_eq!(outlines(&heatmap_svg(&m).unwrap()), vec![row]);
}

#[test]
fn a_large_matrix_hides_cell_values_but_keeps_every_cell() {
    let m = Matrix::from_fn(32, 32, |i, j| (i as f64 - j as f64) / 10.0);
    let labels: Vec<String> = (0..32).map(|i| format!("tok{i}")).collect();
    let svg = square_svg(&m, &labels);
    let doc = parse(&svg);
    assert_eq!(elements(&doc, "rect").len(), 32 * 32 + 32 + 1);
    // Only the labels, the caption and the colour bar's two ends are written.
    assert_eq!(
        elements(&doc, "text").len(),
        32 + 32 + 1 + 2,
        "values should be hidden when cells are small"
    );
}

#[test]
fn labels_with_control_characters_and_markup_still_make_well_formed_xml() {
    let mut labels: Vec<String> = (0u32..0x20)
        .map(|c| format!("a{}", char::from_u32(c).unwrap()))
        .collect();
    labels.extend(
        [
            "\u{FFFE}", "\u{FFFF}", "&", "<", "\"", "]]>", "'", "<script>", "&amp;",
        ]
        .map(String::from),
    );
    let n = labels.len();
    let values = Matrix::from_fn(n, n, |i, j| (i as f64 - j as f64) / 7.0);
    let svg = square_svg(&values, &labels);
    save("hostile-labels", &svg);
    let doc = parse(&svg);
    let written = texts(&doc);
    // Markup arrives as the same text, escaped on the way in and unescaped by the parser (as
    // row labels: the narrow columns shorten the longer ones).
    for label in ["&", "<", "\"", "]]>", "'", "<script>", "&amp;"] {
        assert!(written.iter().any(|t| t == label), "{label}");
    }
    for label in ["&", "<", "\"", "'"] {
        assert_eq!(written.iter().filter(|t| *t == label).count(), 2, "{label}");
    }
    assert!(elements(&doc, "script").is_empty());
    // Control characters are shown as their pictures, non-characters as U+FFFD.
    for (c, picture) in [
        (0x00, '␀'),
        (0x01, '␁'),
        (0x09, '␉'),
        (0x0A, '␊'),
        (0x1F, '␟'),
    ] {
        let label = format!("a{picture}");
        let shown = written.iter().filter(|t| **t == label).count();
        assert_eq!(shown, 2, "U+{c:04X}");
    }
    assert_eq!(written.iter().filter(|t| *t == "\u{FFFD}").count(), 4);
    assert!(!svg
        .chars()
        .any(|c| (c < ' ' && c != '\n') || c == '\u{FFFE}' || c == '\u{FFFF}'));
    assert_all_numbers_finite(&doc);
}

#[test]
fn not_a_number_in_the_values_writes_no_nan_into_the_drawing() {
    let values = Matrix::from_row_slice(2, 2, &[f64::NAN, 1.0, f64::NEG_INFINITY, -1.0]);
    let labels = vec!["a".to_string(), "b".to_string()];
    let svg = square_svg(&values, &labels);
    let doc = parse(&svg);
    assert_all_numbers_finite(&doc);
    assert_eq!(elements(&doc, "rect").len(), 4 + 32 + 1);
}

/// The fill of every cell-sized rectangle on the grid.
fn cell_fills(doc: &Document, layout: &attention_lens::plot::Layout) -> Vec<String> {
    elements(doc, "rect")
        .iter()
        .filter(|r| {
            number(r, "width") == f64::from(layout.cell_w)
                && number(r, "height") == f64::from(layout.cell_h)
                && r.attribute("stroke") == Some("none")
        })
        .filter_map(|r| r.attribute("fill").map(str::to_lowercase))
        .collect()
}

#[test]
fn a_gradient_that_reads_0_everywhere_is_drawn_neutral_on_an_honest_scale() {
    // Every cell reads 0.000: the cells take the colour of 0, and the bar's ends are not "0.00".
    let tiny = Matrix::from_row_slice(2, 3, &[1e-6, -2e-6, 3e-7, 0.0, -4e-4, 2e-5]);
    let rows = dims(2);
    let cols = dims(3);
    let mut heatmap = map(
        &tiny,
        &rows,
        &cols,
        ("tokens", "dimensions"),
        Palette::Diverging,
        1,
        Theme::LIGHT,
    );
    heatmap.decimals = 3;
    assert!(heatmap.range < 1e-3);
    assert_eq!(heatmap.scale_end(), 1.0);
    let svg = heatmap_svg(&heatmap).unwrap();
    save("all_zero_gradient", &svg);
    let doc = parse(&svg);
    let fills = cell_fills(&doc, &heatmap.layout());
    assert_eq!(fills.len(), 6);
    let neutral = Palette::Diverging.color(0.0, 1.0).hex();
    assert!(fills.iter().all(|f| *f == neutral), "{fills:?}");
    let written = texts(&doc);
    assert!(
        written.iter().filter(|t| *t == "0.000").count() == 6,
        "{written:?}"
    );
    assert!(written.iter().any(|t| t == "1.000") && written.iter().any(|t| t == "−1.000"));
    assert!(!written.iter().any(|t| t == "0.00"), "{written:?}");

    // A gradient whose largest cell reads 0.004: the bar's ends read ±0.004, as the cells do.
    let small = Matrix::from_row_slice(1, 3, &[0.004, -0.001, 0.0]);
    let one = dims(1);
    let mut heatmap = map(
        &small,
        &one,
        &cols,
        ("tokens", "dimensions"),
        Palette::Diverging,
        1,
        Theme::LIGHT,
    );
    heatmap.decimals = 3;
    assert_eq!(heatmap.scale_end(), 0.004);
    let written = texts(&parse(&heatmap_svg(&heatmap).unwrap()));
    assert!(
        written.iter().any(|t| t == "0.004") && written.iter().any(|t| t == "−0.004"),
        "{written:?}"
    );
}

#[test]
fn a_reserve_keeps_a_rows_layout_whatever_its_label_and_numbers() {
    let reserve = Reserve {
        label_chars: 12,
        value_chars: 6,
        bar_chars: 6,
    };
    let cols: Vec<String> = (1..=4).map(|c| format!("d{c}")).collect();
    let short = Matrix::from_row_slice(1, 4, &[0.1, 0.2, -0.3, 0.4]);
    let long = Matrix::from_row_slice(1, 4, &[12.5, -10.25, 3.0, -0.5]);
    let layout = |values: &Matrix, label: &str, reserve: Reserve| {
        let rows = vec![label.to_string()];
        Heatmap {
            reserve,
            ..map(
                values,
                &rows,
                &cols,
                ("token", "dimensions"),
                Palette::Diverging,
                1,
                Theme::LIGHT,
            )
        }
        .layout()
    };
    // Without one, a longer token and wider numbers make a wider picture.
    assert!(
        layout(&long, "considerable", Reserve::default()).width
            > layout(&short, "a", Reserve::default()).width
    );
    // With one, the two rows are laid out alike.
    assert_eq!(
        layout(&short, "a", reserve),
        layout(&long, "considerable", reserve)
    );
}
