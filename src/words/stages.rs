//! What a learner reads about each stage: its name, its formula (as text and as MathML), a
//! paragraph on what happens and why, the shapes involved, and a note on the current numbers.

use super::number::format_value;
use super::settings::word_order_text;
use crate::attention::{Config, ScaleMode, Stage, Trace};

/// The name shown to people.
pub fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::Input => "Input X",
        Stage::Projection => "Projections Q, K, V",
        Stage::SplitHeads => "Split into heads",
        Stage::Scores => "Scores QₕKₕᵀ",
        Stage::Scale => "Scale the scores",
        Stage::Mask => "Causal mask",
        Stage::Softmax => "Softmax",
        Stage::WeightedSum => "Weighted sum AₕVₕ",
        Stage::Concat => "Concatenate heads",
        Stage::OutputProjection => "Output projection",
    }
}

/// Which product of the projection stage presenter mode shows, `part` 0, 1 or 2.
pub fn projection_part_name(part: usize) -> &'static str {
    match part {
        0 => "Queries: Q = X·W_q",
        1 => "Keys: K = X·W_k",
        _ => "Values: V = X·W_v",
    }
}

/// The stage's name in three parts for the stage rail, which shows only the middle one (a word
/// or two) where space is short; the three together are [`stage_name`], so the button's
/// accessible name holds what it shows.
pub fn stage_rail_name(stage: Stage) -> (&'static str, &'static str, &'static str) {
    match stage {
        Stage::Input => ("", "Input", " X"),
        Stage::Projection => ("Projections ", "Q, K, V", ""),
        Stage::SplitHeads => ("Split into ", "heads", ""),
        Stage::Scores => ("", "Scores", " QₕKₕᵀ"),
        Stage::Scale => ("", "Scale", " the scores"),
        Stage::Mask => ("Causal ", "mask", ""),
        Stage::Softmax => ("", "Softmax", ""),
        Stage::WeightedSum => ("Weighted ", "sum", " AₕVₕ"),
        Stage::Concat => ("", "Concat", "enate heads"),
        Stage::OutputProjection => ("", "Output", " projection"),
    }
}

/// The stage's title for the settings in `c`: the name, with what the settings do to it where
/// they depart from standard attention or switch the stage off.
pub fn stage_title(stage: Stage, c: &Config) -> String {
    match stage {
        Stage::Scale => match c.scale {
            ScaleMode::SqrtHeadDim => "Scale ÷√d_k".into(),
            ScaleMode::SqrtSeqLen => "Scale ÷√seq_len (a common mistake)".into(),
            ScaleMode::None => "Scale: off (no scaling)".into(),
        },
        Stage::Mask if !c.causal => "Causal mask: off".into(),
        Stage::Softmax if c.temperature != 1.0 => {
            format!("Softmax at temperature T = {}", c.temperature)
        }
        _ => stage_name(stage).into(),
    }
}

/// The formula in plain Unicode text, for the settings in `c`. Heads, rows and columns count
/// from 1, like the labels beside the pictures.
pub fn stage_formula(stage: Stage, c: &Config) -> String {
    match stage {
        Stage::Input if c.positional_encoding => "X = E + P".into(),
        Stage::Input => "X = E".into(),
        Stage::Projection => "Q = X·W_q,  K = X·W_k,  V = X·W_v".into(),
        Stage::SplitHeads => "Qₕ = columns (h−1)·d_k + 1 … h·d_k of Q,  likewise Kₕ, Vₕ".into(),
        Stage::Scores => "Sₕ = Qₕ·Kₕᵀ".into(),
        Stage::Scale => match c.scale {
            ScaleMode::SqrtHeadDim => "Zₕ = Sₕ / √d_k".into(),
            ScaleMode::SqrtSeqLen => "Zₕ = Sₕ / √seq_len".into(),
            ScaleMode::None => "Zₕ = Sₕ".into(),
        },
        Stage::Mask if c.causal => "Mₕ[i, j] = −∞ if j > i, else Zₕ[i, j]".into(),
        Stage::Mask => "Mₕ = Zₕ".into(),
        Stage::Softmax if c.temperature != 1.0 => {
            "Aₕ[i, j] = exp(Mₕ[i, j] / T) / Σⱼ′ exp(Mₕ[i, j′] / T)".into()
        }
        Stage::Softmax => "Aₕ[i, j] = exp(Mₕ[i, j]) / Σⱼ′ exp(Mₕ[i, j′])".into(),
        Stage::WeightedSum => "Cₕ = Aₕ·Vₕ".into(),
        Stage::Concat => "C = [C₁ | C₂ | … | C_H]".into(),
        Stage::OutputProjection => "Y = C·W_o".into(),
    }
}

/// `<msub><mi>{base}</mi><mi>{sub}</mi></msub>`.
fn msub(base: &str, sub: &str) -> String {
    format!("<msub><mi>{base}</mi><mi>{sub}</mi></msub>")
}

/// The formula as presentation MathML (the inside of a `<math>` element), for the settings in
/// `c`: the same formula as [`stage_formula`].
pub fn stage_formula_mathml(stage: Stage, c: &Config) -> String {
    let (dk, ij, ijp) = (
        msub("d", "k"),
        "<mrow><mi>i</mi><mi>j</mi></mrow>",
        "<mrow><mi>i</mi><msup><mi>j</mi><mo>′</mo></msup></mrow>",
    );
    match stage {
        Stage::Input if c.positional_encoding => {
            "<mi>X</mi><mo>=</mo><mi>E</mi><mo>+</mo><mi>P</mi>".into()
        }
        Stage::Input => "<mi>X</mi><mo>=</mo><mi>E</mi>".into(),
        Stage::Projection => ["q", "k", "v"]
            .iter()
            .zip(["Q", "K", "V"])
            .map(|(w, m)| format!("<mi>{m}</mi><mo>=</mo><mi>X</mi>{}", msub("W", w)))
            .collect::<Vec<_>>()
            .join("<mo>,</mo><mspace width=\"1em\"/>"),
        Stage::SplitHeads => format!(
            "{}<mo>=</mo><mi>Q</mi><mo>[</mo><mo>:</mo><mo>,</mo><mo>(</mo><mi>h</mi><mo>−</mo><mn>1</mn><mo>)</mo>{dk}<mo>+</mo><mn>1</mn><mo>…</mo><mi>h</mi>{dk}<mo>]</mo>",
            msub("Q", "h")
        ),
        Stage::Scores => format!(
            "{}<mo>=</mo>{}<msubsup><mi>K</mi><mi>h</mi><mi>T</mi></msubsup>",
            msub("S", "h"),
            msub("Q", "h")
        ),
        Stage::Scale => {
            let (z, s) = (msub("Z", "h"), msub("S", "h"));
            match c.scale {
                ScaleMode::SqrtHeadDim => {
                    format!("{z}<mo>=</mo><mfrac>{s}<msqrt>{dk}</msqrt></mfrac>")
                }
                ScaleMode::SqrtSeqLen => format!(
                    "{z}<mo>=</mo><mfrac>{s}<msqrt><mtext>seq_len</mtext></msqrt></mfrac>"
                ),
                ScaleMode::None => format!("{z}<mo>=</mo>{s}"),
            }
        }
        Stage::Mask if c.causal => format!(
            "<msub><mi>M</mi>{ij}</msub><mo>=</mo><mrow><mo>{{</mo><mtable><mtr><mtd><mo>−</mo><mi>∞</mi></mtd><mtd><mtext>if </mtext><mi>j</mi><mo>&gt;</mo><mi>i</mi></mtd></mtr><mtr><mtd><msub><mi>Z</mi>{ij}</msub></mtd><mtd><mtext>otherwise</mtext></mtd></mtr></mtable></mrow>"
        ),
        Stage::Mask => format!("{}<mo>=</mo>{}", msub("M", "h"), msub("Z", "h")),
        Stage::Softmax => {
            let over_t = if c.temperature != 1.0 {
                "<mo>/</mo><mi>T</mi>"
            } else {
                ""
            };
            format!(
                "<msub><mi>A</mi>{ij}</msub><mo>=</mo><mfrac><mrow><mi>exp</mi><mo>(</mo><msub><mi>M</mi>{ij}</msub>{over_t}<mo>)</mo></mrow><mrow><munder><mo>∑</mo><msup><mi>j</mi><mo>′</mo></msup></munder><mi>exp</mi><mo>(</mo><msub><mi>M</mi>{ijp}</msub>{over_t}<mo>)</mo></mrow></mfrac>"
            )
        }
        Stage::WeightedSum => format!(
            "{}<mo>=</mo>{}{}",
            msub("C", "h"),
            msub("A", "h"),
            msub("V", "h")
        ),
        Stage::Concat => "<mi>C</mi><mo>=</mo><mo>[</mo><msub><mi>C</mi><mn>1</mn></msub><mo>|</mo><msub><mi>C</mi><mn>2</mn></msub><mo>|</mo><mo>…</mo><mo>|</mo><msub><mi>C</mi><mi>H</mi></msub><mo>]</mo>".into(),
        Stage::OutputProjection => format!("<mi>Y</mi><mo>=</mo><mi>C</mi>{}", msub("W", "o")),
    }
}

/// A paragraph in plain language: what happens here and why.
pub fn stage_explanation(stage: Stage) -> &'static str {
    match stage {
        Stage::Input => "Each token becomes one row of numbers, its embedding. Stacked, the rows form X, one row per token. The dot products of attention do not look at where a token stands, so positional encoding, when it is on, adds to each row a pattern of sines and cosines that is different for every position.",
        Stage::Projection => "Every token row is multiplied by three learned matrices. The query Q says what a token is looking for, the key K what it offers to others, and the value V what it passes on when it is chosen. The same matrices are used for every token.",
        Stage::SplitHeads => "The columns of Q, K and V are cut into equal slices, one per head, each d_k = d_model ÷ heads wide. Each head works on its own slice, so different heads can learn to look for different things.",
        Stage::Scores => "In each head, every query row is compared with every key row by a dot product. A large score means the query token finds that key token relevant. Rows are queries (the token that is looking), columns are keys (the token being looked at).",
        Stage::Scale => "Standard attention divides the scores by √d_k, the square root of the head width. Why the square root: if the components of a query and a key were independent, with mean 0 and variance 1, their dot product, a sum of d_k such products, would have variance d_k, so its typical size (its standard deviation) would be √d_k. Dividing by √d_k brings that back to about 1 whatever the head width, so the softmax neither saturates into all-or-nothing weights nor loses its gradient. The divisor is the head width, not the sentence length: the number of tokens does not change the size of one dot product.",
        Stage::Mask => "In a language model a token may not look at tokens that come after it. The causal mask sets those scores to −∞ (above the diagonal), so the softmax gives them exactly zero weight. With the mask off, every token can see every other.",
        Stage::Softmax => "Each row of scores becomes a probability distribution: every entry is exponentiated and divided by the row's total, so the weights are never negative (a masked key gets exactly 0) and each row sums to 1. The row maximum is subtracted first, which changes nothing mathematically but keeps exp from overflowing.",
        Stage::WeightedSum => "Each token's new vector is a weighted average of all value rows, using that token's attention weights. A token that puts most of its weight on another token mostly copies that token's value. Vₕ and Cₕ are d_v columns wide; here, as in most models, d_v = d_k.",
        Stage::Concat => "The heads' results are placed side by side, head 1's columns first, giving one row of d_model numbers per token again.",
        Stage::OutputProjection => "Finally the concatenated rows are multiplied by W_o, which mixes the heads' findings into one output vector per token. This is the layer's output, the same shape as its input X.",
    }
}

/// Where the stage is among all of them: `Stage 3 of 10`.
pub fn stage_progress(stage: Stage) -> String {
    format!("Stage {} of {}", stage.index() + 1, Stage::ALL.len())
}

/// The shapes of a stage's operands and result, in words and numbers.
pub fn shape_text(stage: Stage, seq_len: usize, d_model: usize, n_heads: usize) -> String {
    let dk = d_model / n_heads.max(1);
    let (s, d) = (seq_len, d_model);
    match stage {
        Stage::Input => format!("X: seq_len × d_model = {s} × {d}"),
        Stage::Projection => {
            format!("X ({s} × {d}) · W ({d} × {d}) = Q, K, V (seq_len × d_model = {s} × {d})")
        }
        Stage::SplitHeads => format!(
            "Q ({s} × {d}) → {n_heads} heads × Qₕ (seq_len × d_k = {s} × {dk}); likewise K, V"
        ),
        Stage::Scores => {
            format!("Qₕ ({s} × {dk}) · Kₕᵀ ({dk} × {s}) = Sₕ (seq_len × seq_len = {s} × {s})")
        }
        Stage::Scale | Stage::Mask | Stage::Softmax => {
            format!("seq_len × seq_len = {s} × {s}, per head")
        }
        Stage::WeightedSum => {
            format!("Aₕ ({s} × {s}) · Vₕ ({s} × {dk}) = Cₕ (seq_len × d_k = {s} × {dk})")
        }
        Stage::Concat => {
            format!("{n_heads} × Cₕ ({s} × {dk}) side by side = C (seq_len × d_model = {s} × {d})")
        }
        Stage::OutputProjection => {
            format!("C ({s} × {d}) · W_o ({d} × {d}) = Y (seq_len × d_model = {s} × {d})")
        }
    }
}

/// Each head's spread of scores before and after the division, `head 1: 1.52 → 1.07; …`, with
/// `decimals` places.
pub fn score_spreads(trace: &Trace, decimals: usize) -> String {
    let spreads: Vec<String> = trace
        .heads
        .iter()
        .enumerate()
        .map(|(h, head)| {
            let (before, after) = head.score_spread();
            format!(
                "head {}: {} → {}",
                h + 1,
                format_value(before, decimals),
                format_value(after, decimals)
            )
        })
        .collect();
    spreads.join("; ")
}

/// What the numbers of this trace say about the stage, beyond the general explanation.
pub fn stage_note(stage: Stage, trace: &Trace) -> Option<String> {
    let c = &trace.config;
    match stage {
        Stage::Input => Some(word_order_text(c.positional_encoding, c.causal).into()),
        Stage::Scale => {
            let divisor = format_value(trace.scale_divisor, 3);
            let mut note = match c.scale {
                ScaleMode::SqrtHeadDim => format!(
                    "Here d_k = {}, so every score is divided by √{} ≈ {divisor}.",
                    c.head_dim(),
                    c.head_dim(),
                ),
                ScaleMode::SqrtSeqLen => format!(
                    "You chose √seq_len: the scores are divided by √{} ≈ {divisor}. This is a common mistake (see the what-if lab): the size of a dot product depends on d_k = {}, not on how many tokens there are.",
                    trace.seq_len(),
                    c.head_dim()
                ),
                ScaleMode::None => format!(
                    "Scaling is off, which differs from standard attention (see the what-if lab): the scores go into the softmax as they are. With d_k = {} they would be divided by √{}.",
                    c.head_dim(),
                    c.head_dim()
                ),
            };
            note.push_str(&format!(
                " The spread (standard deviation) of the scores, before → after: {}.",
                score_spreads(trace, 2)
            ));
            Some(note)
        }
        Stage::Mask if !c.causal => Some(
            "The causal mask is off: nothing is hidden and every token sees every other. Switch it on in Settings to see −∞ above the diagonal."
                .into(),
        ),
        Stage::Mask => Some(
            "Cells above the diagonal (a key that comes after its query) are −∞ and drawn hatched."
                .into(),
        ),
        Stage::Softmax if c.temperature != 1.0 => Some(format!(
            "Temperature T = {}: the scores are divided by it before the softmax ({}). Standard attention uses T = 1; see the temperature what-if in the lab.",
            c.temperature,
            if c.temperature < 1.0 { "sharper" } else { "flatter" }
        )),
        Stage::Softmax => Some("Each row sums to 1: the sums are listed beside every chart.".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{forward, Config, Init, Inputs, Weights};

    fn trace(scale: ScaleMode) -> Trace {
        let config = Config {
            scale,
            ..Config::default()
        };
        let weights = Weights::new(Init::Default, config.d_model);
        forward(&Inputs::from_sentence("I am hungry", config, weights).unwrap()).unwrap()
    }

    #[test]
    fn every_stage_is_named_and_explained() {
        for stage in Stage::ALL {
            assert!(
                stage_explanation(stage).len() > 100,
                "{stage:?} is barely explained"
            );
            assert!(!stage_name(stage).is_empty());
            assert!(!stage_formula(stage, &Config::default()).is_empty());
            assert!(stage_formula_mathml(stage, &Config::default()).starts_with('<'));
        }
    }

    #[test]
    fn the_scale_stage_teaches_the_head_width_not_the_sentence_length() {
        assert!(stage_explanation(Stage::Scale).contains("not the sentence length"));
        assert!(stage_formula(Stage::Scale, &Config::default()).contains("√d_k"));
    }

    #[test]
    fn titles_and_formulas_follow_the_settings() {
        let standard = Config::default();
        assert_eq!(stage_formula(Stage::Input, &standard), "X = E");
        assert_eq!(stage_title(Stage::Mask, &standard), "Causal mask: off");
        assert_eq!(stage_formula(Stage::Mask, &standard), "Mₕ = Zₕ");
        assert!(!stage_formula(Stage::Softmax, &standard).contains('T'));
        assert!(!stage_formula_mathml(Stage::Softmax, &standard).contains("<mi>T</mi>"));
        let changed = Config {
            positional_encoding: true,
            causal: true,
            temperature: 0.5,
            scale: ScaleMode::SqrtSeqLen,
            ..standard
        };
        assert_eq!(stage_formula(Stage::Input, &changed), "X = E + P");
        assert_eq!(stage_title(Stage::Mask, &changed), "Causal mask");
        assert!(stage_formula(Stage::Mask, &changed).contains("−∞ if j > i"));
        assert!(stage_formula(Stage::Softmax, &changed).contains("/ T"));
        assert!(stage_formula_mathml(Stage::Softmax, &changed).contains("<mi>T</mi>"));
        assert_eq!(
            stage_title(Stage::Softmax, &changed),
            "Softmax at temperature T = 0.5"
        );
        assert_eq!(
            stage_title(Stage::Scale, &changed),
            "Scale ÷√seq_len (a common mistake)"
        );
        assert_eq!(stage_formula(Stage::Scale, &changed), "Zₕ = Sₕ / √seq_len");
        assert!(stage_formula_mathml(Stage::Scale, &changed).contains("seq_len"));
        let unscaled = Config {
            scale: ScaleMode::None,
            ..standard
        };
        assert_eq!(stage_formula(Stage::Scale, &unscaled), "Zₕ = Sₕ");
        assert!(!stage_title(Stage::Scale, &unscaled).contains('√'));
        assert!(!stage_formula_mathml(Stage::Scale, &unscaled).contains("msqrt"));
    }

    #[test]
    fn the_split_formula_counts_heads_from_one_like_the_labels() {
        let f = stage_formula(Stage::SplitHeads, &Config::default());
        assert!(f.contains("(h−1)·d_k + 1 … h·d_k"), "{f}");
    }

    #[test]
    fn progress_counts_stages_from_one() {
        assert_eq!(stage_progress(Stage::Input), "Stage 1 of 10");
        assert_eq!(stage_progress(Stage::OutputProjection), "Stage 10 of 10");
    }

    #[test]
    fn shapes_name_the_head_width_for_per_head_stages() {
        assert_eq!(
            shape_text(Stage::Scores, 5, 8, 2),
            "Qₕ (5 × 4) · Kₕᵀ (4 × 5) = Sₕ (seq_len × seq_len = 5 × 5)"
        );
        assert!(shape_text(Stage::Concat, 3, 6, 3).contains("3 × 6"));
    }

    #[test]
    fn the_scale_note_gives_the_real_divisor_and_flags_the_mistake() {
        let t = trace(ScaleMode::SqrtHeadDim);
        let note = stage_note(Stage::Scale, &t).unwrap();
        assert!(
            note.starts_with("Here d_k = 2, so every score is divided by √2 ≈ 1.414."),
            "{note}"
        );
        // The learner's own spreads, before and after: divided by exactly √2.
        for (h, head) in t.heads.iter().enumerate() {
            let (before, after) = head.score_spread();
            assert!((before / after - 2f64.sqrt()).abs() < 1e-12);
            let shown = format!(
                "head {}: {} → {}",
                h + 1,
                format_value(before, 2),
                format_value(after, 2)
            );
            assert!(note.contains(&shown), "{note} lacks {shown}");
        }
        let t = trace(ScaleMode::SqrtSeqLen);
        assert!(stage_note(Stage::Scale, &t)
            .unwrap()
            .contains("common mistake"));
    }

    #[test]
    fn the_rail_name_parts_make_the_full_name() {
        for stage in Stage::ALL {
            let (before, shown, after) = stage_rail_name(stage);
            assert_eq!(format!("{before}{shown}{after}"), stage_name(stage));
            assert!(!shown.is_empty());
        }
    }
}
