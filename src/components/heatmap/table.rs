//! The heatmap's numbers as an HTML table: what screen readers read, and what learners see
//! when they show the tables.

use crate::attention::Matrix;
use crate::components::deferred;
use crate::plot::format_value;
use leptos::html::Tbody;
use leptos::prelude::*;

/// `text` with the characters HTML gives meaning to escaped.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The rows of a matrix's table: a header cell with the row label, then one cell per value
/// carrying its full-precision number in `data-value`, and optionally the row's sum.
pub fn table_body_html(m: &Matrix, labels: &[String], row_sums: bool) -> String {
    let mut html = String::new();
    for r in 0..m.nrows() {
        let label = labels.get(r).map(String::as_str).unwrap_or_default();
        html.push_str(&format!(
            "<tr><th scope=\"row\">{}</th>",
            escape_html(label)
        ));
        for value in m.row(r).iter() {
            html.push_str(&format!(
                "<td data-value=\"{}\">{}</td>",
                *value,
                format_value(*value, 3)
            ));
        }
        if row_sums {
            // As beside the heatmap: a masked −∞ adds nothing, a NaN makes the sum NaN.
            let sum: f64 = m.row(r).iter().filter(|v| !v.is_infinite()).sum();
            html.push_str(&format!(
                "<td class=\"sum\" data-sum=\"{}\">{}</td>",
                sum,
                format_value(sum, 3)
            ));
        }
        html.push_str("</tr>");
    }
    html
}

/// Keeps the table body in `body` in step with `values` and `rows`.
///
/// One write per change: a 32 × 32 table would otherwise run two thousand small updates on every
/// edit. A hidden table catches up once edits pause, so dragging a value redraws the heatmaps
/// without rebuilding and laying out tables nobody is looking at.
pub fn follow_values(
    body: NodeRef<Tbody>,
    values: Signal<Matrix>,
    rows: Signal<Vec<String>>,
    row_sums: bool,
    shown: RwSignal<bool>,
) {
    Effect::new(move |drawn_before: Option<bool>| {
        let Some(body) = body.get() else {
            return false;
        };
        let html = move || {
            values
                .try_with_untracked(|m| {
                    rows.try_with_untracked(|labels| table_body_html(m, labels, row_sums))
                })
                .flatten()
        };
        values.track();
        rows.track();
        if drawn_before.unwrap_or(false) && !shown.get() {
            deferred::write_later(body.into(), html);
        } else if let Some(html) = html() {
            deferred::write_now(body.into(), &html);
        }
        true
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_escape_tokens_and_keep_full_precision() {
        let m = Matrix::from_row_slice(2, 2, &[0.1234567, f64::NEG_INFINITY, -2.0, 0.5]);
        let labels = vec!["<b>\"x\"</b>".to_string(), "y & z".to_string()];
        let html = table_body_html(&m, &labels, true);
        assert!(html.starts_with("<tr><th scope=\"row\">&lt;b&gt;&quot;x&quot;&lt;/b&gt;</th>"));
        assert!(html.contains("<td data-value=\"0.1234567\">0.123</td>"));
        assert!(html.contains("<td data-value=\"-inf\">−∞</td>"));
        assert!(html.contains("<th scope=\"row\">y &amp; z</th>"));
        assert!(html.contains("data-sum=\"-1.5\">−1.500</td>"));
        assert_eq!(html.matches("<tr>").count(), 2);
    }

    #[test]
    fn a_row_with_a_nan_sums_to_nan_as_beside_the_heatmap() {
        let m = Matrix::from_row_slice(2, 2, &[f64::NAN, 0.0, 0.25, 0.75]);
        let labels = vec!["a".to_string(), "b".to_string()];
        let html = table_body_html(&m, &labels, true);
        assert!(html.contains("data-sum=\"NaN\">NaN</td>"), "{html}");
        assert!(html.contains("data-sum=\"1\">1.000</td>"), "{html}");
    }
}
