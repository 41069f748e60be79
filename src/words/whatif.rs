//! What the what-if lab says: each mistake's menu label and explanation, and the summary of
//! what the mistake did to the numbers.

use super::matrices::token_label;
use super::number::{format_value, subscript};
use super::settings::scale_mode_label;
use crate::attention::whatif::{
    is_standard, Comparison, GradientPoint, WhatIf, GRADIENT_TASK, GRADIENT_TOKENS, GRADIENT_TRIALS,
};
use crate::attention::{Config, ScaleMode, Stage};

/// What the two sides show while no mistake is switched on, with the learner's `config`
/// (`cross`: the keys come from a source sentence), when the number of keys is not known: where
/// it decides whether the sides agree, the text says on what.
pub fn no_mistake_text(config: &Config, cross: bool) -> String {
    settings_text(config, cross, None)
}

/// What the two sides show while no mistake is switched on, with the learner's `config` and
/// `n_keys` keys (`cross`: they are a source sentence's words).
pub fn no_mistake_text_for(config: &Config, cross: bool, n_keys: usize) -> String {
    settings_text(config, cross, Some(n_keys))
}

fn settings_text(config: &Config, cross: bool, n_keys: Option<usize>) -> String {
    if is_standard(config) {
        return "No mistake is switched on, and your settings are those of standard attention \
                (÷√d_k, T = 1), so both sides agree."
            .to_string();
    }
    let mut yours = Vec::new();
    if config.scale != ScaleMode::SqrtHeadDim {
        yours.push(scale_mode_label(config.scale, cross).to_string());
    }
    let t = config.temperature;
    if t != 1.0 {
        yours.push(format!("T = {t}"));
    }
    let d_k = config.head_dim();
    let keys = if cross { "src_len" } else { "seq_len" };
    // Both sides divide the scores once: by √d_k on the left, by the scale's divisor times T
    // on the right. They give the same numbers exactly when those divisors are equal.
    let same = |divisor: f64| (divisor * t - (d_k as f64).sqrt()).abs() <= 1e-12 * divisor * t;
    let differ = match (config.scale, n_keys) {
        (ScaleMode::None, _) if t == 1.0 && d_k == 1 => {
            "which with d_k = 1 give the same numbers: standard attention divides by √1 = 1"
                .to_string()
        }
        (ScaleMode::None, _) if same(1.0) => format!(
            "which here give the same numbers: T = {t} equals √d_k = √{d_k}, so both divide the \
             scores by the same number"
        ),
        (ScaleMode::SqrtSeqLen, Some(n)) if t == 1.0 && n == d_k => {
            format!("which here give the same numbers: {keys} = d_k = {n}, so both divide by √{n}")
        }
        (ScaleMode::SqrtSeqLen, Some(n)) if same((n as f64).sqrt()) => format!(
            "which here give the same numbers: √{keys}·T = √{n}·{t} equals √d_k = √{d_k}, so \
             both divide the scores by the same number"
        ),
        (ScaleMode::SqrtSeqLen, None) if t == 1.0 => {
            format!("which differ from it unless {keys} = d_k = {d_k}")
        }
        (ScaleMode::SqrtSeqLen, None) => {
            format!("which differ from it unless √{keys}·{t} = √d_k = √{d_k}")
        }
        _ => "which differ from it".to_string(),
    };
    format!(
        "No mistake is switched on. The left side is standard attention (÷√d_k, T = 1, with your \
         mask and weights); the right side uses your own settings ({}), {differ}.",
        yours.join(", ")
    )
}

/// Where the app shows a mistake that tutorials make.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MistakePlace {
    /// A what-if of the lab computes it beside the correct result.
    WhatIf(WhatIf),
    /// The stage that computes the step correctly.
    Stage(Stage),
}

/// A mistake that tutorials make, as a learner may have read it, what goes wrong, and where the
/// app shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TutorialMistake {
    /// The mistake as it is written.
    pub read: &'static str,
    /// Why it is wrong.
    pub wrong: &'static str,
    /// Where to see it.
    pub place: MistakePlace,
}

/// The mistakes tutorials make, each shown as a mistake.
pub const TUTORIAL_MISTAKES: [TutorialMistake; 7] = [
    TutorialMistake {
        read: "“Divide the scores by the square root of the sequence length.”",
        wrong: "The size of a dot product depends on d_k, the head width, not on how many tokens there are.",
        place: MistakePlace::WhatIf(WhatIf::ScaleBySeqLen),
    },
    TutorialMistake {
        read: "“Divide the scores by d_k.”",
        wrong: "For unit-variance components a dot product of d_k terms is about √d_k in size, so dividing by d_k makes the scores √d_k times too small and the weights too flat.",
        place: MistakePlace::WhatIf(WhatIf::ScaleByHeadDim),
    },
    TutorialMistake {
        read: "“Softmax makes each column sum to 1.”",
        wrong: "Each row sums to 1: a row is one query sharing out its attention. The columns need not.",
        place: MistakePlace::WhatIf(WhatIf::SoftmaxOverColumns),
    },
    TutorialMistake {
        read: "A softmax whose sum repeats one term: exp(z_ij) / Σ_j′ exp(z_ij).",
        wrong: "The sum must add one exp per key, exp(z_ij′); repeating the numerator's term makes every weight 1/n.",
        place: MistakePlace::WhatIf(WhatIf::RepeatedDenominator),
    },
    TutorialMistake {
        read: "“The score of I for am is q_I · k_I.”",
        wrong: "It is q_I · k_am, the query of one token with the key of the other. With q_I · k_I every score in a row would be the same, and the row would say nothing about am.",
        place: MistakePlace::Stage(Stage::Scores),
    },
    TutorialMistake {
        read: "“Mask by setting the future keys to −∞.”",
        wrong: "The mask replaces scores, not keys. A key is shared by every query, so it would be hidden from earlier and later queries alike, and q · (−∞, …, −∞) is +∞, −∞ or NaN depending on the signs in q. Only the scores above the diagonal become −∞.",
        place: MistakePlace::Stage(Stage::Mask),
    },
    TutorialMistake {
        read: "Attention that ends with the concatenation, without W_o.",
        wrong: "Without W_o each output column comes from one head only; W_o mixes the heads' findings into every column of the output.",
        place: MistakePlace::WhatIf(WhatIf::NoOutputProjection),
    },
];

/// A short label for menus.
pub fn whatif_label(what: WhatIf) -> &'static str {
    match what {
        WhatIf::ScaleBySeqLen => "Divide by √seq_len instead of √d_k",
        WhatIf::NoScaling => "Do not scale the scores",
        WhatIf::SoftmaxOverColumns => "Softmax over columns instead of rows",
        WhatIf::NoCausalMask => "Switch off the causal mask",
        WhatIf::Temperature(_) => "Change the softmax temperature",
        WhatIf::UnstableSoftmax => "Softmax without subtracting the maximum",
        WhatIf::ScaleByHeadDim => "Divide by d_k instead of √d_k",
        WhatIf::RepeatedDenominator => "Softmax whose sum repeats one term",
        WhatIf::NoOutputProjection => "Leave out the output projection W_o",
    }
}

/// What the lab says while a source sentence is set.
pub const WHATIF_CROSS_NOTE: &str = "Attending to another sentence: the causal mask belongs to self-attention, so there is no mask to switch off here. The other mistakes compare on your source sentence's keys.";

/// What √seq_len means in cross-attention, after the what-if's explanation.
pub const SEQ_LEN_IN_CROSS: &str = "With a source sentence the divisor here is √src_len, the square root of the number of keys (the source's tokens), so adding a word to the source, not to your sentence, changes the divisor.";

/// What changes and what it does to the result, in short paragraphs separated by a blank line
/// (`"\n\n"`), each what a lecturer would say in one breath.
pub fn whatif_explanation(what: WhatIf) -> &'static str {
    match what {
        WhatIf::ScaleBySeqLen => "The scores are divided by √seq_len, the square root of the number of tokens, instead of √d_k. But the size of a dot product depends on how many numbers it multiplies and adds, which is d_k, not on how many tokens there are.\n\n\
            So the divisor is wrong in a way that changes with the sentence. With fewer tokens than d_k it divides by too little, and the weights come out too sharp; with more, by too much, and they come out too flat. Only when seq_len happens to equal d_k do the two agree.\n\n\
            Adding a word at the end changes the divisor, so the scaled score of every pair of words already there changes, although their queries and keys did not. With √d_k a new word only adds its own row and column, and the scores already there stay as they were. Compare the mean largest weight per row on both sides.",
        WhatIf::NoScaling => "The scores go into the softmax undivided. A dot product adds up d_k products, so for random vectors with unit-variance components its typical size grows like √d_k: the wider the head, the bigger the scores. Dividing by √d_k brings such scores back to a typical size of about 1, whatever d_k is.\n\n\
            Large differences push the softmax towards all-or-nothing weights, where a row can put almost all its weight on one token. When the loss reaches the scores only through the output, as in a real transformer (the app's task goals), a saturated row passes back almost no gradient: the softmax's backward, A ⊙ (D − rowsum(D ⊙ A)) with D = ∂L/∂A, is close to 0 there. A loss on the weights themselves, like the pattern goals, still gets A − A*.\n\n\
            Whenever d_k is above 1, the undivided scores are √d_k times larger, so every row whose scores differ gets sharper: its largest weight grows and its entropy falls. With d_k = 1 the divisor is √1 = 1 and the two sides are the same. The saturation chart shows the effect growing with d_k, and the table below it what that does to learning: how large the gradient ∂L/∂S is with and without the divisor.",
        WhatIf::SoftmaxOverColumns => "Each column is normalised instead of each row, so the weights add up to 1 down every column rather than across every row. A row is one token asking where to look; a column is one token being looked at.\n\n\
            Normalising columns shares out each key among the queries, so a token no longer divides one unit of attention among the others. Its row can total more or less than 1, so its output is no longer a weighted average of value rows but is blown up or shrunk. And a key that several queries like has its share split between them. Check the sums: the rows drift away from 1 while every column sums to exactly 1.\n\n\
            Under the causal mask it also leaks the future. A column's total adds up the exponentiated scores of every query that may see that key, later tokens included, so a token's weights depend on the tokens after it (outlined).",
        WhatIf::NoCausalMask => "The causal mask is switched off, so each token can attend to the tokens after it. In a decoder-only model that predicts the next token (GPT-style) this is cheating: in training the token to be predicted is right there in the input, so the model learns to copy it rather than predict it. And when the model generates text, those future tokens do not exist yet. An encoder such as BERT has no mask on purpose: it is not asked to predict the next token.\n\n\
            The highlighted cells are the leaks: every cell above the diagonal that now has a positive weight is a token looking at its own future. The weight they take is missing from the earlier tokens, so even the allowed weights change.",
        WhatIf::Temperature(_) => "The scaled scores are divided by a temperature T before the softmax. Below 1 the gaps between scores are magnified and each row sharpens towards its single highest score; as T approaches 0 the row becomes all-or-nothing. Above 1 the gaps shrink and each row flattens; as T grows every weight approaches 1 divided by the number of visible keys.\n\n\
            Attention itself uses T = 1. A language model uses a temperature the same way on its output scores when it picks its next token, to make its choice bolder or more random. The entropy of a row measures how spread out it is, and it falls as T falls.",
        WhatIf::UnstableSoftmax => "The softmax is computed straight from its definition, exp(z) divided by the sum of exp over the row, without first subtracting the row's largest score, and in 32-bit floats (f32), as many models compute. In exact arithmetic that gives the same answer, but floats have limits.\n\n\
            In f32, exp(z) overflows to infinity once z is above about 88.7 (in half precision, fp16, above about 11.1), and infinity divided by infinity is NaN, not a number. If every score in a row is below about −104 in f32, every exp rounds to 0, and 0 divided by 0 is NaN too.\n\n\
            Toy scores are far too small for that, so both sides here use scores 100 times larger (W_q is multiplied by 100). Scores that large do occur in large trained models. Both sides also divide by √d_k at T = 1, as standard attention does, whatever the Scale and temperature settings say; only the softmax differs.\n\n\
            The stable softmax subtracts the maximum, so its largest exponent is exp(0) = 1 and its weights stay finite and sum to 1. In the naive one, a score past the limit makes its exp ∞ and so its row's sum ∞: that cell's weight is ∞/∞ = NaN and the row's other weights finite/∞ = 0. The NaN then spreads into every number computed from that row, the row of Cₕ and, through W_o, the row of Y.\n\n\
            A row can also fail without NaN: when several scores sit just under the limit, no exp overflows but their sum does, and every weight of the row is finite/∞ = 0. Rows where no exp overflows, the largest exp stays above about 10⁻³⁸ (a score above about −87.3) and the sum stays finite come out right, to f32's precision.",
        WhatIf::ScaleByHeadDim => "The scores are divided by d_k itself instead of its square root. For unit-variance components a dot product of d_k terms has a typical size of √d_k, not d_k: the terms' spreads add up in variance, not in size.\n\n\
            So dividing by d_k over-corrects. The typical score becomes 1/√d_k, smaller the wider the head, and the softmax flattens towards 1 divided by the number of visible keys, so the head can hardly prefer one token to another. With d_k = 1 the two agree; with d_k = 4 the scores come out 2 times too small, with d_k = 64 8 times. Compare the mean largest weight per row on both sides.",
        WhatIf::RepeatedDenominator => "The softmax is written exp(z_ij) / Σ_j′ exp(z_ij): the sum runs over j′, but its term still says j, so it adds up n copies of the numerator's own exp instead of one exp per key. Every weight is then exp(z_ij) / (n·exp(z_ij)) = 1/n, whatever the scores.\n\n\
            Each row still sums to 1, so nothing looks wrong, but the scores have been thrown away and every token attends to all n keys equally. Under the causal mask it is worse: a hidden key gives exp(−∞) / (n·exp(−∞)) = 0/0, which is NaN.\n\n\
            The right denominator, Σ_j′ exp(z_ij′), adds one term per key and is the same for the whole row. The summary shows both for the cell you click (the first one until you do).",
        WhatIf::NoOutputProjection => "The layer stops at the concatenation C and leaves out Y = C·W_o. The attention weights do not change, so the lab shows the outputs instead: Y on the left, C on the right.\n\n\
            In C each column still comes from one head only, head 1's columns first. W_o is what mixes the heads' findings, so that every column of the output can draw on every head, and it is learned like W_q, W_k and W_v. Without it the heads cannot combine what they found. When W_o happens to be the identity matrix, the two sides are the same.",
    }
}

/// The title of the correct side's weights for head `h`: `A₁ correct`.
pub fn correct_title(h: usize) -> String {
    format!("A{}, standard attention", subscript(h + 1))
}

/// The titles of the two outputs compared when W_o is left out: with it, and without.
pub fn output_titles() -> (&'static str, &'static str) {
    ("With W_o: Y = C·W_o", "Without W_o: C")
}

/// The title of the other side's weights for head `h`: with the mistake on, or the learner's
/// own settings when none is.
pub fn shown_title(h: usize, mistake_on: bool) -> String {
    let name = format!("A{}", subscript(h + 1));
    if mistake_on {
        format!("{name} with the mistake")
    } else {
        format!("{name} with your settings")
    }
}

/// For the repeated-term softmax: the wrong sum beside the right one for the cell (`row`, `col`)
/// of head `h`, naming its query and key.
pub fn denominators_text(c: &Comparison, h: usize, row: usize, col: usize) -> Option<String> {
    if c.what != WhatIf::RepeatedDenominator {
        return None;
    }
    let (wrong, right) = c.denominators(h, row, col)?;
    // A repeated word is named with its position, as the heatmaps' labels name it.
    let token = |tokens: &[String], i: usize| token_label(tokens, i).unwrap_or_default();
    Some(format!(
        "Row “{}”, key “{}”: the repeated sum is {}, the right one {}. Click a cell to see \
         another.",
        token(&c.correct.tokens, row),
        token(c.correct.key_tokens(), col),
        format_value(wrong, 2),
        format_value(right, 2)
    ))
}

/// What the mistake did to head `h` and to the layer's output, one sentence a line.
pub fn comparison_summary(c: &Comparison, h: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let weights_unchanged = c.what == WhatIf::NoOutputProjection;
    if let Some((right, wrong)) = c.saturation(h).filter(|_| !weights_unchanged) {
        // Without a mask the learner's own settings are an encoder's, which is not wrong: the
        // two sides are named by the mask.
        let (right_side, wrong_side) = if c.what == WhatIf::NoCausalMask {
            ("with the causal mask", "without it")
        } else {
            ("correct", "with the mistake")
        };
        lines.push(format!(
            "Mean largest weight per row: {} {right_side}, {} {wrong_side}.",
            format_value(right.mean_max_weight, 2),
            format_value(wrong.mean_max_weight, 2)
        ));
    }
    if let Some(head) = c.altered.heads.get(h) {
        if matches!(c.what, WhatIf::SoftmaxOverColumns) {
            let sums: Vec<String> = head.row_sums.iter().map(|s| format_value(*s, 2)).collect();
            lines.push(format!(
                "Row sums with the mistake: {} (they should all be 1.00).",
                sums.join(", ")
            ));
        }
        if !head.future_dependent.is_empty() {
            let n = head.future_dependent.len();
            lines.push(format!(
                "Under the causal mask this leaks the future too: {n} {} (outlined) {} \
                 divided by column totals that include later tokens' scores.",
                if n == 1 { "weight" } else { "weights" },
                if n == 1 { "is" } else { "are" }
            ));
        }
        if !head.leaked.is_empty() {
            let n = head.leaked.len();
            lines.push(format!(
                "{n} {} above the diagonal now {} weight: a token sees the future (outlined).",
                if n == 1 { "cell" } else { "cells" },
                if n == 1 { "gets" } else { "get" }
            ));
        }
        if !head.unwindowed.is_empty() {
            let n = head.unwindowed.len();
            lines.push(format!(
                "{n} {} below the diagonal, earlier tokens the sliding window hid, now {} \
                 weight too: the window narrows the causal mask, so it goes with it. They are \
                 the past, not a leak.",
                if n == 1 { "cell" } else { "cells" },
                if n == 1 { "gets" } else { "get" }
            ));
        }
        let mut nan_rows: Vec<usize> = head.non_finite.iter().map(|&(r, _)| r).collect();
        nan_rows.dedup();
        let n = head.weights.nrows();
        // Without the maximum subtracted, a row whose exps are finite but sum past f32's
        // largest number comes out all finite/∞ = 0, with no NaN.
        let zero_rows: Vec<usize> = if c.what == WhatIf::UnstableSoftmax {
            (0..n)
                .filter(|r| !nan_rows.contains(r))
                .filter(|&r| head.weights.row(r).iter().all(|&w| w == 0.0))
                .collect()
        } else {
            Vec::new()
        };
        if !nan_rows.is_empty() {
            let why = if c.what == WhatIf::RepeatedDenominator {
                "a hidden key gives 0/0"
            } else {
                "without the maximum subtracted, an exp overflowed to ∞ (∞/∞) or every exp \
                 rounded to 0 (0/0) in f32"
            };
            lines.push(format!(
                "{} of {n} rows contain NaN: {why}.",
                nan_rows.len()
            ));
        }
        if !zero_rows.is_empty() {
            lines.push(format!(
                "{} of {n} {} no NaN but every weight 0: no exp overflowed, but \
                 their sum passed f32's largest number (about 3.4 × 10³⁸), and finite/∞ = 0.",
                zero_rows.len(),
                if zero_rows.len() == 1 {
                    "row has"
                } else {
                    "rows have"
                }
            ));
        }
        let broken = nan_rows.len() + zero_rows.len();
        // Only the naive softmax leaves other rows to compare: the repeated denominator makes
        // every row 1/n.
        if c.what == WhatIf::UnstableSoftmax && broken > 0 && broken < n {
            // Exps below f32's smallest normal number keep only a few digits: a row of them
            // can be off without NaN or zeros.
            let correct = c.correct.heads.get(h).map(|head| &head.weights);
            let off = (0..n)
                .filter(|r| !nan_rows.contains(r) && !zero_rows.contains(r))
                .filter(|&r| {
                    correct.is_some_and(|w| {
                        head.weights
                            .row(r)
                            .iter()
                            .zip(w.row(r).iter())
                            .any(|(a, b)| (a - b).abs() >= 0.005)
                    })
                })
                .count();
            lines.push(if off == 0 {
                "The other rows stayed within the limits and match the stable softmax.".to_string()
            } else {
                format!(
                    "{off} other {} from the stable softmax: {} exps are so small that f32 \
                     keeps only a few of their digits.",
                    if off == 1 {
                        "row differs"
                    } else {
                        "rows differ"
                    },
                    if off == 1 { "its" } else { "their" }
                )
            });
        }
    }
    let change = c.max_output_change();
    lines.push(if change.is_nan() {
        "Attention's output Y is broken: it contains NaN.".to_string()
    } else {
        format!(
            "Largest change in attention's output Y: {}.",
            format_value(change, 2)
        )
    });
    lines
}

/// The caption of the learning table: what was measured, on what, with which loss.
pub fn gradient_caption() -> String {
    format!(
        "Why √d_k matters for learning: random embeddings E (unit variance) and W_q, W_k, W_v, \
W_o (variance 1/d_k, so each entry of Q, K and V has variance ≈ 1) for {GRADIENT_TOKENS} \
tokens and one head of width d_k = d_model, no mask and no positions, and the task loss {task} \
(Y* is the previous row of E), L = 1/(n·d_model) · Σ (Y − Y*)², sent through the backward pass \
for {GRADIENT_TRIALS} random inputs per d_k, with the scores S divided by √d_k and not \
divided. ‖∂L/∂S‖ is the typical length of a row of the gradient reaching the raw scores (the \
median over rows).",
        task = GRADIENT_TASK.key()
    )
}

/// A gradient size as the table writes it: three significant digits.
pub fn gradient_number(v: f64) -> String {
    crate::words::training::loss_number(v)
}

/// What the learning table shows, with its own numbers: where the undivided side's gradient
/// is larger, and how much smaller it is at the widest head, where the softmax saturates.
pub fn gradient_summary(points: &[GradientPoint]) -> Option<String> {
    let (first, last) = (points.first()?, points.last()?);
    let narrow = if first.unscaled > first.scaled {
        format!(
            "At d_k = {} the divisor √{} ≈ {} mostly shrinks the gradient, so the undivided side \
has the larger ‖∂L/∂S‖ (≈ {} against ≈ {}).",
            first.head_dim,
            first.head_dim,
            crate::words::format_value((first.head_dim as f64).sqrt(), 2),
            gradient_number(first.unscaled),
            gradient_number(first.scaled)
        )
    } else {
        format!(
            "Already at d_k = {} the undivided side has the smaller ‖∂L/∂S‖ (≈ {} against ≈ {}).",
            first.head_dim,
            gradient_number(first.unscaled),
            gradient_number(first.scaled)
        )
    };
    // The widest head at which the undivided side still has the larger gradient.
    let crossing = points
        .iter()
        .rev()
        .find(|p| p.unscaled > p.scaled)
        .map(|p| {
            format!(
                " Up to d_k = {}, the undivided side still has the larger gradient.",
                p.head_dim
            )
        })
        .unwrap_or_default();
    let wide = if last.unscaled < last.scaled {
        format!(
            "As d_k grows the undivided scores grow like √d_k and the softmax saturates: at \
d_k = {} a row's largest weight is ≈ {} on average (≈ {} with ÷√d_k), and through such a row \
the softmax's backward, A ⊙ (D − rowsum(D ⊙ A)) with D = ∂L/∂A, is small. So ‖∂L/∂S‖ is ≈ {} without the \
divisor, about {} times smaller than the ≈ {} with it: plain SGD at the same η would move W_q \
and W_k about that many times more slowly, while Adam rescales its steps and hides much of \
this.{crossing}",
            last.head_dim,
            crate::words::format_value(last.unscaled_max_weight, 2),
            crate::words::format_value(last.scaled_max_weight, 2),
            gradient_number(last.unscaled),
            crate::words::format_value(last.shrink(), 1),
            gradient_number(last.scaled)
        )
    } else {
        format!(
            "Even at d_k = {} the undivided side keeps the larger ‖∂L/∂S‖ (≈ {} against ≈ {}).",
            last.head_dim,
            gradient_number(last.unscaled),
            gradient_number(last.scaled)
        )
    };
    Some(format!("{narrow} {wide}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(head_dim: usize, scaled: f64, unscaled: f64) -> GradientPoint {
        GradientPoint {
            head_dim,
            scaled,
            unscaled,
            scaled_max_weight: 0.4,
            unscaled_max_weight: 0.94,
        }
    }

    #[test]
    fn the_learning_table_names_d_k_the_divisor_and_the_loss() {
        let caption = gradient_caption();
        for needle in [
            "√d_k",
            "copy_previous",
            "L = 1/(n·d_model) · Σ (Y − Y*)²",
            "∂L/∂S",
        ] {
            assert!(caption.contains(needle), "{needle}: {caption}");
        }
    }

    #[test]
    fn the_learning_summary_says_what_its_own_numbers_show() {
        let text = gradient_summary(&[point(2, 0.1, 0.15), point(128, 0.004, 0.001)]).unwrap();
        assert!(
            text.contains("At d_k = 2 the divisor √2 ≈ 1.41 mostly shrinks"),
            "{text}"
        );
        assert!(text.contains("≈ 0.1500 against ≈ 0.1000"), "{text}");
        assert!(
            text.contains("at d_k = 128 a row's largest weight is ≈ 0.94"),
            "{text}"
        );
        assert!(
            text.contains("≈ 0.0010 without the divisor, about 4.0 times smaller"),
            "{text}"
        );
        // Numbers that do not show the effect are not described as if they did.
        let flat = gradient_summary(&[point(2, 0.1, 0.05), point(128, 0.1, 0.2)]).unwrap();
        assert!(
            flat.contains("Already at d_k = 2") && flat.contains("Even at d_k = 128"),
            "{flat}"
        );
        assert!(!flat.contains("more slowly"), "{flat}");
        assert!(
            text.contains("Up to d_k = 2, the undivided side still has the larger gradient."),
            "{text}"
        );
        assert_eq!(gradient_summary(&[]), None);
    }

    use crate::attention::whatif::compare;
    use crate::attention::{Config, Init, Inputs, Weights};

    #[test]
    fn every_mistake_is_labelled_and_explained_differently() {
        for what in WhatIf::ALL {
            assert!(
                whatif_explanation(what).len() > 300,
                "{} is barely explained",
                what.key()
            );
            assert!(!whatif_label(what).is_empty());
        }
        let mut texts: Vec<&str> = WhatIf::ALL.iter().map(|w| whatif_explanation(*w)).collect();
        texts.sort_unstable();
        texts.dedup();
        assert_eq!(texts.len(), WhatIf::ALL.len());
    }

    #[test]
    fn every_tutorial_mistake_has_a_place_and_each_what_if_is_in_the_lab() {
        for m in TUTORIAL_MISTAKES {
            assert!(m.read.len() > 10 && m.wrong.len() > 40, "{}", m.read);
            if let MistakePlace::WhatIf(w) = m.place {
                assert!(WhatIf::ALL.contains(&w), "{}", w.key());
            }
        }
        let places: Vec<MistakePlace> = TUTORIAL_MISTAKES.iter().map(|m| m.place).collect();
        assert!(places.contains(&MistakePlace::WhatIf(WhatIf::ScaleByHeadDim)));
        assert!(places.contains(&MistakePlace::Stage(Stage::Mask)));
        assert!(places.contains(&MistakePlace::WhatIf(WhatIf::NoOutputProjection)));
    }

    #[test]
    fn with_no_mistake_on_the_lab_says_whether_the_settings_are_standard() {
        let standard = Config::default();
        assert!(no_mistake_text(&standard, false).contains("both sides agree"));
        let yours = Config {
            scale: ScaleMode::SqrtSeqLen,
            temperature: 0.5,
            ..standard
        };
        let text = no_mistake_text(&yours, false);
        assert!(text.contains("left side is standard attention"), "{text}");
        assert!(
            text.contains("√seq_len") && text.contains("T = 0.5"),
            "{text}"
        );
        assert!(!text.contains("agree"), "{text}");
        // With a source sentence the mistake divides by the number of source tokens.
        let cross = no_mistake_text(&yours, true);
        assert!(
            cross.contains("÷ √src_len") && !cross.contains("seq_len"),
            "{cross}"
        );
        assert_eq!(correct_title(1), "A₂, standard attention");
    }

    #[test]
    fn the_lab_says_when_dividing_by_the_keys_gives_the_standard_numbers() {
        // "I am" with d_model 4 and 2 heads: seq_len = d_k = 2, so both sides divide by √2.
        let yours = Config {
            scale: ScaleMode::SqrtSeqLen,
            ..Config::default()
        };
        assert_eq!(yours.head_dim(), 2);
        let text = no_mistake_text_for(&yours, false, 2);
        assert!(
            text.ends_with(
                "the right side uses your own settings (÷ √seq_len (common mistake)), which here \
                 give the same numbers: seq_len = d_k = 2, so both divide by √2."
            ),
            "{text}"
        );
        let source = no_mistake_text_for(&yours, true, 2);
        assert!(source.contains("src_len = d_k = 2"), "{source}");
        assert!(no_mistake_text_for(&yours, false, 3).ends_with("which differ from it."));
        // Without the number of keys the text says on what the answer depends.
        assert!(no_mistake_text(&yours, false)
            .ends_with("which differ from it unless seq_len = d_k = 2."));
        // A temperature can make up the difference: √4 · 0.5 = 1 = √1.
        let one_column = Config {
            d_model: 4,
            n_heads: 4,
            temperature: 0.5,
            ..yours
        };
        let text = no_mistake_text_for(&one_column, false, 4);
        assert!(
            text.contains("give the same numbers: √seq_len·T = √4·0.5 equals √d_k = √1"),
            "{text}"
        );
        let hot = Config {
            scale: ScaleMode::None,
            temperature: 2.0,
            n_heads: 1,
            ..one_column
        };
        assert!(no_mistake_text(&hot, false).contains("T = 2 equals √d_k = √4"));
        assert_eq!(shown_title(0, false), "A₁ with your settings");
    }

    #[test]
    fn the_overflow_limits_quoted_are_those_of_f32_and_f16() {
        use crate::attention::whatif::{f16_exp_overflow, f32_exp_overflow, HUGE_SCORES};
        let text = whatif_explanation(WhatIf::UnstableSoftmax);
        assert!(text.contains(&format!("above about {:.1} (", f32_exp_overflow())));
        assert!(text.contains(&format!("above about {:.1})", f16_exp_overflow())));
        // exp rounds to 0 in f32 below ln(2⁻¹⁵⁰), the half of the smallest subnormal.
        assert!(text.contains(&format!("below about −{:.0}", 150.0 * 2f64.ln())));
        assert!(text.contains(&format!("{HUGE_SCORES} times larger")));
        assert!(!text.contains("709"));
    }

    #[test]
    fn switching_the_mask_off_counts_the_leaked_cells() {
        let config = Config {
            causal: true,
            ..Config::default()
        };
        let weights = Weights::new(Init::Default, config.d_model);
        let inputs = Inputs::from_sentence("I am hungry", config, weights).unwrap();
        let c = compare(&inputs, WhatIf::NoCausalMask).unwrap();
        let lines = comparison_summary(&c, 0);
        // Three tokens: three cells above the diagonal, each now given some weight.
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("3 cells above the diagonal")),
            "{lines:?}"
        );
        assert!(lines[0].starts_with("Mean largest weight per row: "));
        assert!(
            lines[0].contains(" with the causal mask, ") && lines[0].ends_with(" without it."),
            "{lines:?}"
        );
        assert!(lines
            .last()
            .unwrap()
            .starts_with("Largest change in attention's output Y: "));
    }

    #[test]
    fn switching_the_mask_off_under_a_window_tells_the_past_from_the_future() {
        let config = Config {
            causal: true,
            window: Some(2),
            ..Config::default()
        };
        let weights = Weights::new(Init::Default, config.d_model);
        let inputs = Inputs::from_sentence("the cat sat on the mat", config, weights).unwrap();
        let c = compare(&inputs, WhatIf::NoCausalMask).unwrap();
        let lines = comparison_summary(&c, 0);
        // Six tokens: 15 cells above the diagonal; a window of 2 hid 4 + 3 + 2 + 1 = 10 below it.
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("15 cells above the diagonal now get weight")),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with(
                "10 cells below the diagonal, earlier tokens the sliding window hid, now get weight too"
            )),
            "{lines:?}"
        );
    }
}
