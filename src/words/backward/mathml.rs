//! The backward stages' formulas as presentation MathML (the inside of a `<math>` element): the
//! same formulas as [`super::back_formula`], for the loss and the settings on screen.

use super::{divisor_symbol, inputs};
use crate::attention::{BackMatrix, Config, LossKind, Norm, Stage, Wiring};

/// `<mi>{x}</mi>`, or `<msub>` for `W_q`, `X_src`, `N₁` and a head's `Aₕ`.
fn sym(x: &str) -> String {
    match x {
        "X_src" => "<msub><mi>X</mi><mtext>src</mtext></msub>".into(),
        "E_src" => "<msub><mi>E</mi><mtext>src</mtext></msub>".into(),
        "N₁" => "<msub><mi>N</mi><mn>1</mn></msub>".into(),
        // A capital Greek letter stands upright, as a matrix's name.
        "Π" => "<mi mathvariant=\"normal\">Π</mi>".into(),
        _ => match x.split_once('_') {
            Some((base, sub)) => format!("<msub><mi>{base}</mi><mi>{sub}</mi></msub>"),
            None => match x.strip_suffix('ₕ') {
                Some(base) => format!("<msub><mi>{base}</mi><mi>h</mi></msub>"),
                None => format!("<mi>{x}</mi>"),
            },
        },
    }
}

/// ∂L/∂x as a fraction.
fn d(x: &str) -> String {
    format!(
        "<mfrac><mrow><mo>∂</mo><mi>L</mi></mrow><mrow><mo>∂</mo>{}</mrow></mfrac>",
        sym(x)
    )
}

/// xᵀ.
fn tr(x: &str) -> String {
    format!("<msup>{}<mi>T</mi></msup>", sym(x))
}

/// A*ₕ.
/// "0 where j > i" (or i − j ≥ W under a window): the cells the mask hides.
fn hidden_zero(window: Option<usize>) -> String {
    let beyond = window.map_or(String::new(), |w| {
        format!("<mspace width=\"0.4em\"/><mtext>or</mtext><mspace width=\"0.4em\"/><mi>i</mi><mo>−</mo><mi>j</mi><mo>≥</mo><mn>{w}</mn>")
    });
    format!("<mn>0</mn><mspace width=\"0.4em\"/><mtext>where</mtext><mspace width=\"0.4em\"/><mi>j</mi><mo>&gt;</mo><mi>i</mi>{beyond}")
}

fn target() -> String {
    "<msubsup><mi>A</mi><mi>h</mi><mo>*</mo></msubsup>".into()
}

const SEP: &str = super::super::stages::EQUATION_SEPARATOR;

/// n_heads·n (·T when T ≠ 1), for the pattern loss's denominators.
fn count(t: bool) -> String {
    let t = if t { "<mo>·</mo><mi>T</mi>" } else { "" };
    format!("<msub><mi>n</mi><mtext>heads</mtext></msub><mo>·</mo><mi>n</mi>{t}")
}

/// The formula of backward stage `stage` as MathML.
pub fn back_formula_mathml(stage: Stage, c: &Config, w: Wiring, kind: LossKind) -> String {
    let pattern = kind == LossKind::Pattern;
    let eq = "<mo>=</mo>";
    let (q_in, k_in) = inputs(w);
    match stage {
        Stage::BackLoss if pattern => format!(
            "<mi>L</mi>{eq}<mo>−</mo><mfrac><mn>1</mn><mrow>{}</mrow></mfrac><munder><mo>∑</mo><mrow><mi>h</mi><mo>,</mo><mi>i</mi><mo>,</mo><mi>j</mi></mrow></munder>{}<mo>[</mo><mi>i</mi><mo>,</mo><mi>j</mi><mo>]</mo><mi>log</mi>{}<mo>[</mo><mi>i</mi><mo>,</mo><mi>j</mi><mo>]</mo>{SEP}{}{eq}<mo>−</mo><mfrac>{}<mrow>{}<mo>·</mo>{}</mrow></mfrac>",
            count(false),
            target(),
            sym("Aₕ"),
            d("Aₕ"),
            target(),
            count(false),
            sym("Aₕ")
        ),
        Stage::BackLoss => format!(
            "<mi>L</mi>{eq}<mfrac><mn>1</mn><mrow><mi>n</mi><mo>·</mo><msub><mi>d</mi><mtext>model</mtext></msub></mrow></mfrac><mo>∑</mo><msup><mrow><mo>(</mo><mi>Y</mi><mo>−</mo><msup><mi>Y</mi><mo>*</mo></msup><mo>)</mo></mrow><mn>2</mn></msup>{SEP}{}{eq}<mfrac><mrow><mn>2</mn><mo>(</mo><mi>Y</mi><mo>−</mo><msup><mi>Y</mi><mo>*</mo></msup><mo>)</mo></mrow><mrow><mi>n</mi><mo>·</mo><msub><mi>d</mi><mtext>model</mtext></msub></mrow></mfrac>",
            d("Y")
        ),
        // The pattern loss reads A alone: ∂L/∂Y and ∂L/∂Cₕ are 0, and ∂L/∂Aₕ comes from the
        // loss.
        Stage::BackOutput => {
            let zero = if pattern { "<mo>=</mo><mn>0</mn>" } else { "" };
            format!(
                "{}{eq}{}{}{zero}{SEP}{}{eq}{}{}{zero}",
                d("W_o"),
                tr("C"),
                d("Y"),
                d("C"),
                d("Y"),
                tr("W_o")
            )
        }
        Stage::BackWeightedSum if pattern => format!(
            "{}{eq}{}{}{eq}<mn>0</mn>",
            d("Vₕ"),
            tr("Aₕ"),
            d("Cₕ")
        ),
        // The masked cells' zeros are said in the stage's note: with them the formula would be
        // too wide for the header.
        Stage::BackWeightedSum => {
            format!(
                "{}{eq}{}{}{SEP}{}{eq}{}{}",
                d("Aₕ"),
                d("Cₕ"),
                tr("Vₕ"),
                d("Vₕ"),
                tr("Aₕ"),
                d("Cₕ")
            )
        }
        Stage::BackSoftmax if pattern => format!(
            "{}{eq}<mfrac><mrow>{}<mo>−</mo>{}</mrow><mrow>{}</mrow></mfrac>",
            d("Mₕ"),
            sym("Aₕ"),
            target(),
            count(c.temperature != 1.0)
        ),
        Stage::BackSoftmax => {
            let inner = format!(
                "{}<mo>⊙</mo><mo>(</mo><mi>D</mi><mo>−</mo><mtext>rowsum</mtext><mo>(</mo><mi>D</mi><mo>⊙</mo>{}<mo>)</mo><mo>)</mo>",
                sym("Aₕ"),
                sym("Aₕ")
            );
            let body = if c.temperature != 1.0 {
                format!("<mfrac><mrow>{inner}</mrow><mi>T</mi></mfrac>")
            } else {
                inner
            };
            format!("{}{eq}{body}{SEP}<mi>D</mi>{eq}{}", d("Mₕ"), d("Aₕ"))
        }
        Stage::BackScale => {
            let div = divisor_symbol(c, w).map(|d| {
                let under = d.trim_start_matches('√');
                let under = if under == "d_k" {
                    sym("d_k")
                } else {
                    format!("<mtext>{under}</mtext>")
                };
                format!("<msqrt>{under}</msqrt>")
            });
            let main = match div {
                Some(div) => format!("{}{eq}<mfrac>{}{div}</mfrac>", d("Sₕ"), d("Mₕ")),
                None => format!("{}{eq}{}", d("Sₕ"), d("Mₕ")),
            };
            if c.causal && !w.cross {
                format!("{main}{SEP}{}", hidden_zero(c.window))
            } else {
                main
            }
        }
        // Each turned operand's gradient, then the same turned back by the angles of the
        // forward turn: the queries' two equations, then the keys'.
        Stage::BackScores if w.rope => {
            let back = |x: &str, turned: &str| {
                format!(
                    "{}{eq}<mi>rot</mi><mo>(</mo>{}<mo>,</mo><mrow><mo>−</mo><mi>p</mi></mrow><mo>)</mo>",
                    d(x),
                    d(turned)
                )
            };
            format!(
                "{}{eq}{}{}{SEP}{}{SEP}{}{eq}<msup><mrow><mo>(</mo>{}<mo>)</mo></mrow><mi>T</mi></msup>{}{SEP}{}",
                d("Q̃ₕ"),
                d("Sₕ"),
                sym("K̃ₕ"),
                back("Qₕ", "Q̃ₕ"),
                d("K̃ₕ"),
                d("Sₕ"),
                sym("Q̃ₕ"),
                back("Kₕ", "K̃ₕ")
            )
        }
        Stage::BackScores => format!(
            "{}{eq}{}{}{SEP}{}{eq}<msup><mrow><mo>(</mo>{}<mo>)</mo></mrow><mi>T</mi></msup>{}",
            d("Qₕ"),
            d("Sₕ"),
            sym("Kₕ"),
            d("Kₕ"),
            d("Sₕ"),
            sym("Qₕ")
        ),
        Stage::BackProjection => {
            let mut parts = vec![
                format!("{}{eq}{}{}", d("W_q"), tr(q_in), d("Q")),
                format!("{}{eq}{}{}", d("W_k"), tr(k_in), d("K")),
            ];
            if !pattern {
                parts.push(format!("{}{eq}{}{}", d("W_v"), tr(k_in), d("V")));
            }
            parts.join(SEP)
        }
        _ => input_equations(w, kind)
            .into_iter()
            .map(|(_, e)| e)
            .collect::<Vec<_>>()
            .join(SEP),
    }
}

/// The equation (or equations) of backward `stage` that give gradient `m`, which presenter mode
/// shows alone (see [`BackMatrix::shown_alone`]): part of [`back_formula_mathml`]. `None` for a
/// gradient the stage's formula does not give.
pub fn back_part_formula_mathml(
    stage: Stage,
    c: &Config,
    w: Wiring,
    kind: LossKind,
    m: BackMatrix,
) -> Option<String> {
    match stage {
        Stage::BackInput => input_equations(w, kind)
            .into_iter()
            .find(|(gives, _)| *gives == m)
            .map(|(_, e)| e),
        // One equation to each gradient, in the order the stage shows them.
        _ => {
            let at = BackMatrix::shown_alone(stage, w)
                .iter()
                .position(|r| *r == m)?;
            back_formula_mathml(stage, c, w, kind)
                .split(SEP)
                .nth(at)
                .map(str::to_string)
        }
    }
}

/// The input stage's equations, each with the gradient it gives, in the formula's order:
/// ∂L/∂N₁ (pre-norm) or ∂L/∂X from the projections, ∂L/∂X_src from the keys and values
/// (cross-attention), ∂L/∂X through LayerNorm with its ĝ (pre-norm), then ∂L/∂E and ∂L/∂E_src.
fn input_equations(w: Wiring, kind: LossKind) -> Vec<(BackMatrix, String)> {
    let pattern = kind == LossKind::Pattern;
    let eq = "<mo>=</mo>";
    let (q_in, _) = inputs(w);
    let pre = w.block == Some(Norm::Pre);
    let reads = if pre {
        BackMatrix::Norm1
    } else {
        BackMatrix::X
    };
    let term = |g: &str, wn: &str| format!("{}{}", d(g), tr(wn));
    let v = if pattern {
        String::new()
    } else {
        format!("<mo>+</mo>{}", term("V", "W_v"))
    };
    let target_path = if pattern {
        String::new()
    } else {
        format!(
                    "<mo>+</mo>{}<mfrac><mrow><mo>∂</mo><mi>L</mi></mrow><mrow><mo>∂</mo><msup><mi>Y</mi><mo>*</mo></msup></mrow></mfrac>",
                    tr("Π")
                )
    };
    let mut parts = Vec::new();
    if w.cross {
        parts.push((reads, format!("{}{eq}{}", d(q_in), term("Q", "W_q"))));
        parts.push((
            BackMatrix::SourceX,
            format!("{}{eq}{}{v}", d("X_src"), term("K", "W_k")),
        ));
    } else {
        parts.push((
            reads,
            format!(
                "{}{eq}{}<mo>+</mo>{}{v}",
                d(q_in),
                term("Q", "W_q"),
                term("K", "W_k")
            ),
        ));
    }
    if pre && w.norm_type == crate::attention::NormType::RmsNorm {
        parts.push((BackMatrix::X, format!(
                    "{}{eq}<mfrac><mrow><mi>ĝ</mi><mo>−</mo><mi>x̂</mi><mo>·</mo><mtext>mean</mtext><mo>(</mo><mi>ĝ</mi><mo>⊙</mo><mi>x̂</mi><mo>)</mo></mrow><mi>r</mi></mfrac>{SEP}<mi>ĝ</mi>{eq}{}<mo>⊙</mo><msub><mi>γ</mi><mn>1</mn></msub>",
                    d("X"),
                    d("N₁")
                )));
    } else if pre {
        parts.push((BackMatrix::X, format!(
                    "{}{eq}<mfrac><mrow><mi>ĝ</mi><mo>−</mo><mtext>mean</mtext><mo>(</mo><mi>ĝ</mi><mo>)</mo><mo>−</mo><mi>n̂</mi><mo>·</mo><mtext>mean</mtext><mo>(</mo><mi>ĝ</mi><mo>⊙</mo><mi>n̂</mi><mo>)</mo></mrow><msqrt><msup><mi>σ</mi><mn>2</mn></msup><mo>+</mo><mi>ε</mi></msqrt></mfrac>{SEP}<mi>ĝ</mi>{eq}{}<mo>⊙</mo><msub><mi>γ</mi><mn>1</mn></msub>",
                    d("X"),
                    d("N₁")
                )));
    }
    if w.cross {
        parts.push((BackMatrix::Embeddings, format!("{}{eq}{}", d("E"), d("X"))));
        parts.push((
            BackMatrix::SourceEmbeddings,
            format!("{}{eq}{}{target_path}", d("E_src"), d("X_src")),
        ));
    } else {
        parts.push((
            BackMatrix::Embeddings,
            format!("{}{eq}{}{target_path}", d("E"), d("X")),
        ));
    }
    parts
}
