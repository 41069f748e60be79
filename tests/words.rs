//! The words check themselves against the maths: for random sentences and sources (repeated
//! words included), in self- and cross-attention, with and without the block in either norm
//! position, every token, symbol and divisor that a cell explanation or the handout names is the
//! one the trace used, and every worked sum whose rounded operands miss the shown result says so.

// Native tests: they read files and run the CLI, which the browser target cannot.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{
    forward, Activation, Block, BlockMatrix, BlockParam, Config, HeadMatrix, Init, Inputs,
    MatrixId, Norm, ScaleMode, Source, SplitMix64, Stage, Trace, WeightName, Weights,
};
use attention_lens::words::{
    by_hand_either_way, col_label, configuration, configuration_warning, explain, format_value,
    handout_stage_note, handout_title, key_token, row_label, token, Explanation,
};

/// Few words, so that sentences repeat them often.
const WORDS: [&str; 6] = ["the", "cat", "saw", "le", "chat", "dog"];

/// How a scenario is wired.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Wiring {
    cross: bool,
    norm: Option<Norm>,
}

/// A random scenario from `seed`, wired as asked.
fn scenario(seed: u64, wiring: Wiring) -> Trace {
    let mut rng = SplitMix64::new(seed);
    let mut pick = |n: usize| (rng.next_u64() % n as u64) as usize;
    let d_model = [2, 4, 6, 8][pick(4)];
    let heads = Config::valid_head_counts(d_model);
    let config = Config {
        d_model,
        n_heads: heads[pick(heads.len())],
        causal: !wiring.cross && pick(2) == 0,
        positional_encoding: pick(2) == 0,
        scale: ScaleMode::ALL[pick(3)],
        temperature: [1.0, 0.5, 2.0][pick(3)],
        ..Config::default()
    };
    let sentence = |pick: &mut dyn FnMut(usize) -> usize| {
        let n = 1 + pick(7);
        (0..n).map(|_| WORDS[pick(6)]).collect::<Vec<_>>().join(" ")
    };
    let text = sentence(&mut pick);
    let mut inputs =
        Inputs::from_sentence(&text, config, Weights::new(Init::Random(seed), d_model)).unwrap();
    if wiring.cross {
        let source = sentence(&mut pick);
        inputs.source = Some(Source::from_sentence(&source, d_model).unwrap());
    }
    if let Some(norm) = wiring.norm {
        let mut block = Block::new(d_model, 2 + pick(10));
        block.norm = norm;
        block.activation = [Activation::Relu, Activation::Gelu][pick(2)];
        inputs.block = Some(block);
    }
    forward(&inputs).unwrap()
}

/// Every wiring the words must follow.
const WIRINGS: [Wiring; 4] = [
    Wiring {
        cross: true,
        norm: None,
    },
    Wiring {
        cross: true,
        norm: Some(Norm::Pre),
    },
    Wiring {
        cross: false,
        norm: Some(Norm::Pre),
    },
    Wiring {
        cross: true,
        norm: Some(Norm::Post),
    },
];

/// Scenarios of every wiring, and two sentences that repeat a word for certain.
fn scenarios() -> Vec<Trace> {
    let mut all: Vec<Trace> = (0..24u64)
        .flat_map(|seed| WIRINGS.map(|w| scenario(seed, w)))
        .collect();
    all.extend([repeated(false), repeated(true)]);
    all
}

/// “the cat saw the dog”, attending to itself or to “le chat a vu le chien”.
fn repeated(cross: bool) -> Trace {
    let config = Config {
        d_model: 4,
        n_heads: 2,
        positional_encoding: true,
        ..Config::default()
    };
    let mut inputs = Inputs::from_sentence(
        "the cat saw the dog",
        config,
        Weights::new(Init::Default, 4),
    )
    .unwrap();
    if cross {
        inputs.source = Some(Source::from_sentence("le chat a vu le chien", 4).unwrap());
    }
    forward(&inputs).unwrap()
}

/// Token `i` of `tokens` as a learner must be able to tell it apart: a repeated word carries its
/// position, counted from 1. Written here from the definition, not from the app.
fn named(tokens: &[String], i: usize) -> String {
    let word = &tokens[i];
    if tokens.iter().filter(|t| *t == word).count() > 1 {
        format!("{word} ({})", i + 1)
    } else {
        word.clone()
    }
}

fn cell(trace: &Trace, id: MatrixId, r: usize, c: usize) -> Explanation {
    explain(trace, id, r, c).unwrap_or_else(|| panic!("{id:?} ({r}, {c}) is not explained"))
}

fn everything(e: &Explanation) -> String {
    format!(
        "{} | {} | {} | {}",
        e.title,
        e.formula,
        e.expansion,
        e.note.as_deref().unwrap_or("")
    )
}

/// `√n = r` when the root is whole, else `√n ≈ r` (3 decimals), as the handout writes it.
fn root(n: usize) -> String {
    let r = (n as f64).sqrt();
    if r.fract() == 0.0 {
        format!("√{n} = {r}")
    } else {
        format!("√{n} ≈ {}", format_value(r, 3))
    }
}

/// The scale's divisor as the maths used it: its symbol and the number under the root.
fn divisor(trace: &Trace) -> Option<(&'static str, usize)> {
    match trace.config.scale {
        ScaleMode::SqrtHeadDim => Some(("√d_k", trace.head_dim())),
        ScaleMode::SqrtSeqLen if trace.source.is_some() => Some(("√src_len", trace.n_keys())),
        ScaleMode::SqrtSeqLen => Some(("√seq_len", trace.seq_len())),
        ScaleMode::None => None,
    }
}

/// A number as the explanations write it: `−0.42` or `(−0.42)`.
fn parse(text: &str) -> f64 {
    text.trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .replace('−', "-")
        .parse()
        .unwrap_or_else(|_| panic!("{text:?} is not a number"))
}

/// `a × b + c × d + e`, redone with the numbers as written.
fn sum_of_products(text: &str) -> f64 {
    text.split(" + ")
        .map(|term| term.split(" × ").map(parse).product::<f64>())
        .sum()
}

/// What the expansion's arithmetic gives when redone by hand from the shown numbers; `None`
/// for cells whose expansion is not plain arithmetic.
fn by_hand(e: &Explanation) -> Option<f64> {
    if e.expansion.contains("more terms") {
        return None;
    }
    let body = result_sign(e).map(|sign| {
        e.expansion
            .strip_suffix(&format!(" {sign} {}", e.value_text))
            .unwrap()
    })?;
    let arithmetic = body.rsplit(" = ").next()?;
    // `√2 ≈ 1.414` or a total `≈ 1.08`: the arithmetic is what follows the last `≈`.
    let arithmetic = arithmetic.rsplit(" ≈ ").next()?;
    if let Some(rest) = arithmetic.strip_prefix('(') {
        // LayerNorm: (x − μ) / √(σ² + ε) · γ + β
        let (x, rest) = rest.split_once(" − ")?;
        let (mean, rest) = rest.split_once(") / √(")?;
        let (var, rest) = rest.split_once(" + ")?;
        let (eps, rest) = rest.split_once(") · ")?;
        let (gamma, beta) = rest.split_once(" + ")?;
        return Some(
            (parse(x) - parse(mean)) / (parse(var) + parse(eps)).sqrt() * parse(gamma)
                + parse(beta),
        );
    }
    if let Some(rest) = arithmetic.strip_prefix("0.5 × ") {
        // GELU: 0.5 × h × (1 + tanh(0.7979 × (h + 0.044715 × h³)))
        let h = parse(rest.split(" × ").next()?);
        return Some(0.5 * h * (1.0 + (0.7979 * (h + 0.044715 * h.powi(3))).tanh()));
    }
    if let Some(angle) = arithmetic.strip_prefix("sin(") {
        return Some(parse(angle.strip_suffix(')')?).sin());
    }
    if let Some(angle) = arithmetic.strip_prefix("cos(") {
        return Some(parse(angle.strip_suffix(')')?).cos());
    }
    let plain = arithmetic
        .chars()
        .all(|c| c.is_ascii_digit() || " .−×+()/".contains(c));
    if !plain {
        return None;
    }
    Some(match arithmetic.split_once(" / ") {
        Some((a, b)) => sum_of_products(a) / sum_of_products(b),
        None => sum_of_products(arithmetic),
    })
}

/// The sign before the expansion's result, `=` or `≈`; `None` when it ends otherwise.
fn result_sign(e: &Explanation) -> Option<char> {
    let body = e.expansion.strip_suffix(&e.value_text)?.strip_suffix(' ')?;
    body.chars()
        .next_back()
        .filter(|sign| *sign == '=' || *sign == '≈')
}

// ---------------------------------------------------------------------------------------------
// Tokens.

#[test]
fn every_key_value_and_source_position_an_explanation_names_is_the_sources() {
    for trace in scenarios() {
        let (tokens, keys) = (&trace.tokens, trace.key_tokens());
        for h in 0..trace.config.n_heads {
            for i in 0..trace.seq_len() {
                for j in 0..trace.n_keys() {
                    let pair = format!("[{}, {}]", named(tokens, i), named(keys, j));
                    let score = cell(&trace, MatrixId::Head(h, HeadMatrix::Scores), i, j);
                    let dot = format!("q_{} · k_{} = ", named(tokens, i), named(keys, j));
                    assert!(score.expansion.starts_with(&dot), "{}", score.expansion);
                    for m in [HeadMatrix::Scores, HeadMatrix::Scaled, HeadMatrix::Masked] {
                        let e = cell(&trace, MatrixId::Head(h, m), i, j);
                        assert!(e.title.ends_with(&pair), "{} vs {pair}", e.title);
                    }
                    let masked = cell(&trace, MatrixId::Head(h, HeadMatrix::Masked), i, j);
                    if let Some((_, key)) = masked.expansion.split_once("key “") {
                        let key = key.split('”').next().unwrap();
                        assert_eq!(key, named(keys, j), "{}", masked.expansion);
                    }
                }
            }
            for j in 0..trace.n_keys() {
                for m in [HeadMatrix::K, HeadMatrix::V] {
                    let e = cell(&trace, MatrixId::Head(h, m), j, 0);
                    let row = format!("[{}, ", named(keys, j));
                    assert_eq!(e.expansion.matches(&row).count(), 2, "{}", e.expansion);
                }
            }
        }
        let sources = [
            MatrixId::SourceEmbeddings,
            MatrixId::SourcePositional,
            MatrixId::SourceX,
        ];
        for id in sources.into_iter().filter(|id| id.get(&trace).is_some()) {
            for j in 0..trace.n_keys() {
                let e = cell(&trace, id, j, 1);
                assert!(
                    e.title.ends_with(&format!("[{}, d2]", named(keys, j))),
                    "{}",
                    e.title
                );
                if id == MatrixId::SourcePositional {
                    let note = e.note.as_deref().unwrap();
                    let said = format!(
                        "“{}” is source token {}, so p = i − 1 = {j}",
                        keys[j],
                        j + 1
                    );
                    assert!(note.contains(&said), "{note}");
                    assert!(e.formula.starts_with("P_src[i, c]"), "{}", e.formula);
                }
                if id == MatrixId::SourceEmbeddings {
                    let note = e.note.as_deref().unwrap();
                    assert!(note.contains(&format!("(“{}”)", keys[j])), "{note}");
                }
            }
        }
    }
}

#[test]
fn a_repeated_word_is_named_with_its_position_on_every_axis() {
    for trace in scenarios() {
        for id in MatrixId::all(&trace) {
            let (rows, cols) = id.shape(&trace).unwrap();
            let row_names: Vec<String> = (0..rows).map(|r| row_label(&trace, id, r)).collect();
            let col_names: Vec<String> = (0..cols).map(|c| col_label(&trace, id, c)).collect();
            for names in [&row_names, &col_names] {
                let mut unique = names.clone();
                unique.sort();
                unique.dedup();
                let is_vector = names.len() == 1;
                assert!(
                    is_vector || unique.len() == names.len(),
                    "{id:?} has two axis labels alike: {names:?}"
                );
            }
        }
        for i in 0..trace.seq_len() {
            assert_eq!(token(&trace, i), named(&trace.tokens, i));
        }
        for j in 0..trace.n_keys() {
            assert_eq!(key_token(&trace, j), named(trace.key_tokens(), j));
        }
    }
}

#[test]
fn the_sentence_the_cat_saw_the_dog_names_each_the_by_its_position() {
    let trace = repeated(false);
    assert_eq!(token(&trace, 0), "the (1)");
    assert_eq!(token(&trace, 1), "cat");
    assert_eq!(token(&trace, 3), "the (4)");
    let e = cell(&trace, MatrixId::Head(0, HeadMatrix::Scores), 0, 3);
    assert_eq!(e.title, "Score S₁[the (1), the (4)]");
    assert!(
        e.expansion.starts_with("q_the (1) · k_the (4) = "),
        "{}",
        e.expansion
    );
    // Both occurrences look up the same embedding: the note says so.
    let e = cell(&trace, MatrixId::Embeddings, 3, 0);
    let note = e.note.as_deref().unwrap();
    assert!(note.contains("token 4 (“the”)"), "{note}");
    assert!(note.contains("occurs 2 times"), "{note}");
}

// ---------------------------------------------------------------------------------------------
// Symbols.

#[test]
fn projections_name_the_input_the_wiring_reads() {
    for trace in scenarios() {
        let pre = trace.norm() == Some(Norm::Pre);
        let query_input = if pre { "N₁" } else { "X" };
        let key_input = if trace.source.is_some() {
            "X_src"
        } else {
            query_input
        };
        let (tokens, keys) = (&trace.tokens, trace.key_tokens());
        let q = cell(&trace, MatrixId::Q, 0, 0);
        let q_row = format!("{query_input}[{}, :] · W_q[:, d1] = ", named(tokens, 0));
        assert!(q.expansion.starts_with(&q_row), "{}", q.expansion);
        for (w, id) in [(WeightName::K, MatrixId::K), (WeightName::V, MatrixId::V)] {
            let last = trace.n_keys() - 1;
            let e = cell(&trace, id, last, 0);
            let row = format!(
                "{key_input}[{}, :] · {}[:, d1] = ",
                named(keys, last),
                w.label()
            );
            assert!(e.expansion.starts_with(&row), "{}", e.expansion);
        }
    }
}

#[test]
fn block_cells_name_the_matrices_their_wiring_adds_and_normalises() {
    use BlockMatrix as B;
    for trace in scenarios().iter().filter(|t| t.block.is_some()) {
        let pre = trace.norm() == Some(Norm::Pre);
        let formula = |b: B| cell(trace, MatrixId::Block(b), 0, 0).formula;
        assert_eq!(formula(B::Sum1), "R₁[i, c] = X[i, c] + Y[i, c]");
        let sum_2 = if pre { "R₁" } else { "N₁" };
        assert_eq!(
            formula(B::Sum2),
            format!("R₂[i, c] = {sum_2}[i, c] + F[i, c]")
        );
        let (norm_1, norm_2) = if pre { ("X", "R₁") } else { ("R₁", "R₂") };
        assert!(formula(B::Norm1).starts_with(&format!("N₁[i, c] = ({norm_1}[i, c] − μᵢ)")));
        assert!(formula(B::Norm2).starts_with(&format!("N₂[i, c] = ({norm_2}[i, c] − μᵢ)")));
        let hidden = if pre { "N₂" } else { "N₁" };
        assert_eq!(
            formula(B::Hidden),
            format!("H[i, c] = Σ_m {hidden}[i, m] · W₁[m, c] + b₁[c]")
        );
        assert_eq!(formula(B::Ffn), "F[i, c] = Σ_m G[i, m] · W₂[m, c] + b₂[c]");
        let note = |b: B| {
            cell(trace, MatrixId::Block(b), 0, 0)
                .note
                .unwrap_or_default()
        };
        assert!(
            note(B::Sum1).contains("row of X passes through"),
            "{}",
            note(B::Sum1)
        );
        assert!(
            note(B::Sum2).contains(&format!("row of {sum_2} passes through")),
            "{}",
            note(B::Sum2)
        );
        let param = |p: BlockParam| cell(trace, MatrixId::BlockParam(p), 0, 0).formula;
        assert_eq!(
            param(BlockParam::W1),
            format!("W₁[m, c]: the weight from column m of {hidden} to column c of H")
        );
        assert_eq!(
            param(BlockParam::B2),
            "b₂[c]: the bias added to column c of F"
        );
        assert_eq!(
            param(BlockParam::Ln1Beta),
            "β₁[c]: LayerNorm's shift for column c: added after γ₁[c] scales the normalised \
             value, giving N₁[i, c]"
        );
        assert_eq!(
            param(BlockParam::Ln2Gamma),
            "γ₂[c]: LayerNorm's scale for column c: the normalised value is multiplied by it, \
             then β₂[c] is added, giving N₂[i, c]"
        );
        // One symbol, one meaning: the sums are never S, which is a head's scores.
        for b in B::ALL {
            let text = everything(&cell(trace, MatrixId::Block(b), 0, 0));
            assert!(!text.contains("S₁") && !text.contains("S₂"), "{text}");
        }
    }
}

#[test]
fn a_one_head_layer_never_speaks_of_a_second_head() {
    for trace in scenarios().iter().filter(|t| t.config.n_heads == 1) {
        for c in 0..trace.config.d_model {
            let e = cell(trace, MatrixId::Concat, 0, c);
            let text = everything(&e);
            assert!(!text.contains("C₂") && !text.contains("head h"), "{text}");
            let split = everything(&cell(trace, MatrixId::Head(0, HeadMatrix::Q), 0, c));
            assert!(split.contains("With one head"), "{split}");
        }
        for stage in [Stage::SplitHeads, Stage::Concat] {
            let note = handout_stage_note(trace, stage, 3);
            assert!(
                !note.contains("head 2") && !note.contains("C₂") && !note.contains("the next"),
                "{note}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Divisors.

#[test]
fn every_scaled_score_names_the_divisor_the_maths_used() {
    for trace in scenarios() {
        let e = cell(&trace, MatrixId::Head(0, HeadMatrix::Scaled), 0, 0);
        let text = everything(&e);
        match divisor(&trace) {
            Some((symbol, n)) => {
                assert!(e.formula.ends_with(&format!("/ {symbol}")), "{}", e.formula);
                let d = trace.scale_divisor;
                // Four decimals: a hand redoes the division with the root as written.
                let shown = if d.fract() == 0.0 {
                    d.to_string()
                } else {
                    format_value(d, 4)
                };
                // A root that is not whole is only approximately the number written.
                let relation = if d.fract() == 0.0 { "=" } else { "≈" };
                assert!(
                    e.expansion.contains(&format!(" / √{n} {relation} ")),
                    "{}",
                    e.expansion
                );
                assert!(
                    e.expansion.contains(&format!(" / {shown} ")),
                    "{}",
                    e.expansion
                );
                assert!((d - (n as f64).sqrt()).abs() < 1e-12);
                let other = if symbol == "√src_len" {
                    "seq_len"
                } else {
                    "src_len"
                };
                if symbol != "√d_k" {
                    assert!(!text.contains(other), "{text}");
                }
            }
            None => {
                assert!(!e.formula.contains('/'), "{}", e.formula);
                assert!(text.contains("not divided"), "{text}");
            }
        }
        if trace.source.is_some() {
            let masked = everything(&cell(&trace, MatrixId::Head(0, HeadMatrix::Masked), 0, 0));
            assert!(!masked.contains("later ones"), "{masked}");
            assert!(masked.contains("no causal mask"), "{masked}");
        }
    }
}

#[test]
fn the_handout_names_the_divisor_the_maths_used() {
    for trace in scenarios() {
        let tokens = trace.tokens.clone();
        let scaling = configuration(&trace, &tokens, 3)
            .into_iter()
            .find(|l| l.label == "Scaling")
            .unwrap()
            .text;
        let note = handout_stage_note(&trace, Stage::Scale, 3);
        let warning = configuration_warning(&trace, 3).unwrap_or_default();
        match divisor(&trace) {
            Some((symbol, n)) => {
                let named = format!("{symbol} = {}", root(n));
                assert!(scaling.contains(&named), "{scaling} lacks {named}");
                assert!(note.contains(&named), "{note} lacks {named}");
                if symbol != "√d_k" {
                    assert!(warning.contains(symbol), "{warning}");
                    assert!(!warning.contains("by the sentence length"), "{warning}");
                }
            }
            None => {
                for text in [&scaling, &note] {
                    assert!(text.contains("not divided"), "{text}");
                    assert!(!text.contains("divided by 1"), "{text}");
                    assert!(!text.contains("1.000"), "{text}");
                }
            }
        }
    }
}

#[test]
fn the_handout_names_each_heads_columns_in_words_that_fit_their_number() {
    for trace in scenarios() {
        let note = handout_stage_note(&trace, Stage::SplitHeads, 3);
        let d_k = trace.head_dim();
        for h in 0..trace.config.n_heads {
            let (a, b) = (h * d_k + 1, (h + 1) * d_k);
            let columns = if a == b {
                format!("d{a}")
            } else {
                format!("d{a}–d{b}")
            };
            assert!(note.contains(&columns), "{note} lacks {columns}");
        }
        let tokens = trace.tokens.clone();
        let config = configuration(&trace, &tokens, 3);
        let texts = trace
            .stages()
            .into_iter()
            .map(|s| handout_stage_note(&trace, s, 3))
            .chain(config.into_iter().map(|l| l.text));
        for text in texts {
            assert!(!text.contains(" 1 columns"), "{text}");
        }
        let concat = handout_stage_note(&trace, Stage::Concat, 3);
        if trace.config.n_heads > 1 {
            let last = trace.config.n_heads;
            assert!(
                concat.contains(&format!("C{}", subscript(last))),
                "{concat}"
            );
        }
    }
}

fn subscript(n: usize) -> String {
    n.to_string()
        .chars()
        .map(|c| char::from_u32(0x2080 + c.to_digit(10).unwrap()).unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Rounding.

#[test]
fn worked_arithmetic_whose_shown_operands_miss_the_shown_result_says_so() {
    let (mut missed, mut silent) = (0, Vec::new());
    for trace in scenarios() {
        for id in MatrixId::all(&trace) {
            let (rows, cols) = id.shape(&trace).unwrap();
            for r in 0..rows {
                for c in 0..cols {
                    let e = cell(&trace, id, r, c);
                    let Some(redone) = by_hand(&e) else {
                        continue;
                    };
                    // At a tie, a hand may round either way; either that gives the result is fine.
                    let shown = by_hand_either_way(redone).map(|v| format_value(v, 2));
                    let sign = result_sign(&e).unwrap();
                    if !shown.contains(&e.value_text) {
                        missed += 1;
                        if !e.note.as_deref().unwrap_or("").contains("rounded") {
                            silent.push(format!("{id:?}: {} redoes to {redone}", e.expansion));
                        }
                        // What the written numbers give is not the result: the line says ≈.
                        assert_eq!(sign, '≈', "{id:?}: {} redoes to {redone}", e.expansion);
                    } else {
                        assert_eq!(sign, '=', "{id:?}: {} redoes to {redone}", e.expansion);
                    }
                }
            }
        }
    }
    assert!(
        silent.is_empty(),
        "no rounding note:\n{}",
        silent.join("\n")
    );
    // The scenarios do hold such cells, so the test checks something.
    assert!(missed > 0);
}

/// “the black cat sleeps”, with or without positions, attending to “le chat noir dort” when
/// `cross`.
fn black_cat(cross: bool, positional: bool, causal: bool) -> Trace {
    let config = Config {
        d_model: 4,
        n_heads: 2,
        positional_encoding: positional,
        causal: causal && !cross,
        ..Config::default()
    };
    let mut inputs = Inputs::from_sentence(
        "the black cat sleeps",
        config,
        Weights::new(Init::Default, 4),
    )
    .unwrap();
    if cross {
        inputs.source = Some(Source::from_sentence("le chat noir dort", 4).unwrap());
    }
    forward(&inputs).unwrap()
}

/// The handout's configuration line on positional encoding.
fn positional_line(trace: &Trace) -> String {
    configuration(trace, &trace.tokens, 3)
        .into_iter()
        .find(|l| l.label == "Positional encoding")
        .unwrap()
        .text
}

#[test]
fn with_a_source_the_handout_and_the_x_cells_say_how_word_order_shows_in_cross_attention() {
    // Positions off: the source's tokens are the columns, so reordering your sentence moves no
    // column.
    let t = black_cat(true, false, false);
    let line = positional_line(&t);
    let x = cell(&t, MatrixId::X, 0, 0).note.unwrap();
    for text in [&line, &x] {
        assert!(
            !text.contains("Reorder the tokens and the rows of every result move with them"),
            "{text}"
        );
        assert!(
            text.contains("reorder the source and the columns of the scores and weights move"),
            "{text}"
        );
    }
    // Positions on: K and V come from X_src, so your sentence's positions change only queries.
    let t = black_cat(true, true, false);
    let line = positional_line(&t);
    assert!(
        !line.contains("the same word gets different queries, keys and values"),
        "{line}"
    );
    assert!(
        line.contains("different queries (in your sentence) or keys and values (in the source)"),
        "{line}"
    );
}

#[test]
fn the_handout_and_the_x_cells_name_the_positional_switch_once() {
    for cross in [false, true] {
        for positional in [false, true] {
            for causal in [false, true] {
                let t = black_cat(cross, positional, causal);
                let line = positional_line(&t);
                assert!(!line.contains("Positional encoding is"), "{line}");
                assert!(
                    !line.contains("positional encoding and the causal mask both"),
                    "{line}"
                );
                if !positional {
                    let x = cell(&t, MatrixId::X, 1, 0).note.unwrap();
                    assert_eq!(x.matches("ositional encoding").count(), 1, "{x}");
                }
            }
        }
    }
}

#[test]
fn when_root_seq_len_happens_to_equal_root_d_k_the_handout_and_the_quiz_say_so() {
    // “I am”: seq_len = 2 = d_k.
    let config = Config {
        scale: ScaleMode::SqrtSeqLen,
        ..Config::default()
    };
    let t =
        forward(&Inputs::from_sentence("I am", config, Weights::new(Init::Default, 4)).unwrap())
            .unwrap();
    let note = handout_stage_note(&t, Stage::Scale, 3);
    assert!(!note.contains("not by the correct"), "{note}");
    assert!(
        note.contains(
            "divided by √seq_len = √2 ≈ 1.414, which here happens to equal the correct √d_k = √2 ≈ 1.414"
        ),
        "{note}"
    );
    let warning = configuration_warning(&t, 3).unwrap();
    assert!(warning.contains("the two happen to agree"), "{warning}");
    for seed in 0..4 {
        let q = attention_lens::quiz::question(&t, Stage::Scale, seed).unwrap();
        let quiz_note = q.note.unwrap();
        assert!(
            quiz_note.contains("which here happens to equal the correct √d_k = √2"),
            "{quiz_note}"
        );
        assert!(!quiz_note.contains(", but the size"), "{quiz_note}");
    }
}

#[test]
fn the_cross_attention_titles_name_the_queries_and_the_source_without_an_arrow() {
    let words = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
    let (tokens, source) = (words("the black cat sleeps"), words("le chat noir dort"));
    let title = handout_title(&tokens, Some(&source));
    assert_eq!(
        title,
        "Cross-attention, step by step: “the black cat sleeps” (queries) attending to “le chat noir dort” (source)"
    );
    assert!(!title.contains('→'));
    assert_eq!(
        handout_title(&tokens, None),
        "Self-attention, step by step: the black cat sleeps"
    );
    use attention_lens::formats::worksheet::{worksheet_markdown, Picks};
    let t = black_cat(true, false, false);
    for (answers, kind) in [(false, "Worksheet"), (true, "Answer key")] {
        let sheet = worksheet_markdown(&t, None, Picks::QuizSet(1), Default::default(), answers);
        let want = format!(
            "# {kind}: “the black cat sleeps” (queries) attending to “le chat noir dort” (source)\n"
        );
        assert!(
            sheet.starts_with(&want),
            "{}",
            sheet.lines().next().unwrap()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Totals as shown.

/// Every cell of head matrix `m` in every head of `trace`.
fn head_cells(trace: &Trace, m: HeadMatrix) -> Vec<Explanation> {
    let (rows, cols) = (trace.seq_len(), trace.n_keys());
    let cols = if m == HeadMatrix::Context {
        trace.head_dim()
    } else {
        cols
    };
    (0..trace.config.n_heads)
        .flat_map(|h| (0..rows).flat_map(move |r| (0..cols).map(move |c| (h, r, c))))
        .map(|(h, r, c)| cell(trace, MatrixId::Head(h, m), r, c))
        .collect()
}

/// The numbers of `a + b + …`, each read as written.
fn terms(text: &str) -> Vec<f64> {
    text.split(" + ").map(parse).collect()
}

/// Every softmax cell of the scenarios whose line writes all its terms.
fn softmax_lines() -> Vec<Explanation> {
    scenarios()
        .iter()
        .flat_map(|trace| head_cells(trace, HeadMatrix::Weights))
        .filter(|e| !e.expansion.contains("more terms") && e.value.is_finite())
        .collect()
}

#[test]
fn every_softmax_line_whose_shown_exponentials_miss_the_total_says_so() {
    let mut missed = 0;
    for e in softmax_lines() {
        let note = e.note.as_deref().unwrap_or("");
        // exp(…) / (exp(…) + …) [= or ≈] n / (a + b + …) [= or ≈] n / total [= or ≈] weight
        let Some((at, sign)) = [") = ", ") ≈ "]
            .iter()
            .filter_map(|sign| e.expansion.find(sign).map(|at| (at, sign)))
            .min()
        else {
            continue;
        };
        let rest = &e.expansion[at + sign.len()..];
        let Some((shown, rest)) = rest.split_once(" / (") else {
            continue;
        };
        let (sum, rest) = rest.split_once(") ").unwrap();
        let (relation, rest) = rest.split_once(' ').unwrap();
        let total = rest
            .split(" / ")
            .nth(1)
            .unwrap()
            .split([' '])
            .next()
            .unwrap();
        let added = format_value(terms(sum).iter().sum(), 2);
        if added == total {
            assert_eq!(relation, "=", "{}", e.expansion);
            continue;
        }
        missed += 1;
        assert_eq!(relation, "≈", "{}", e.expansion);
        assert!(
            note.contains(&format!(
                "The exponentials shown add to {added}, not {total}, because each was rounded"
            )),
            "{} | {note}",
            e.expansion
        );
        // The last step is redone from the numbers it writes, and says so only when they
        // miss.
        let redone = by_hand_either_way(parse(shown) / parse(total)).map(|v| format_value(v, 2));
        assert_eq!(
            !redone.contains(&e.value_text),
            note.contains("Redone with the rounded numbers"),
            "{} | {note}",
            e.expansion
        );
    }
    assert!(missed > 0, "no softmax total missed its shown terms");
}

/// `exp(a − b)` or `exp((a − b) / t)` redone with the numbers as written; `None` for `exp(−∞)`.
fn exp_redone(call: &str) -> Option<f64> {
    let inside = call.strip_prefix("exp(")?.strip_suffix(')')?;
    if inside == "−∞" {
        return None;
    }
    let (difference, t) = match inside.strip_prefix('(') {
        Some(rest) => {
            let (difference, t) = rest.split_once(") / ").unwrap();
            (difference, parse(t))
        }
        None => (inside, 1.0),
    };
    let (a, b) = difference.split_once(" − ").unwrap();
    Some(((parse(a) - parse(b)) / t).exp())
}

#[test]
fn every_softmax_line_whose_exponentials_miss_exp_of_the_numbers_written_says_so() {
    let mut missed = 0;
    for e in softmax_lines() {
        // exp(…) / (exp(…) + …) [= or ≈] n / (a + b + …) …
        let Some((_, rest)) = e.expansion.split_once(" / (exp(") else {
            continue;
        };
        let rest = format!("exp({rest}");
        let end = [") = ", ") ≈ "]
            .iter()
            .filter_map(|sign| rest.find(sign))
            .min()
            .unwrap();
        let calls = &rest[..end];
        let (relation, rest) = rest[end + 2..].split_once(' ').unwrap();
        let values = rest
            .split_once(" / (")
            .unwrap()
            .1
            .split_once(')')
            .unwrap()
            .0;
        let misses = calls
            .split(" + ")
            .zip(values.split(" + "))
            .any(|(call, value)| {
                exp_redone(call).is_some_and(|v| {
                    !by_hand_either_way(v)
                        .map(|v| format_value(v, 2))
                        .contains(&value.to_string())
                })
            });
        let note = e.note.as_deref().unwrap_or("");
        assert_eq!(relation, if misses { "≈" } else { "=" }, "{}", e.expansion);
        assert_eq!(
            note.contains("Each exponential is computed from the exact scores"),
            misses,
            "{} | {note}",
            e.expansion
        );
        missed += usize::from(misses);
    }
    assert!(
        missed > 0,
        "no exponential missed exp of its written numbers"
    );
}

#[test]
fn every_weighted_sum_whose_shown_weights_miss_1_says_so() {
    let mut missed = 0;
    for trace in scenarios() {
        for e in head_cells(&trace, HeadMatrix::Context) {
            if e.expansion.contains("more terms") {
                continue;
            }
            let note = e.note.as_deref().unwrap_or("");
            // A·[q, :] · V[:, c] = w × v + w × v + … = result
            let sum = e.expansion.split(" = ").nth(1).unwrap();
            let weights: f64 = sum
                .split(" + ")
                .map(|t| parse(t.split(" × ").next().unwrap()))
                .sum();
            let added = format_value(weights, 2);
            if added == "1.00" {
                assert!(!note.contains("the weights shown add to"), "{note}");
            } else {
                missed += 1;
                assert!(
                    note.contains(&format!(
                        "which sum to 1 (the weights shown add to {added} because each was rounded)"
                    )),
                    "{} | {note}",
                    e.expansion
                );
            }
        }
    }
    assert!(missed > 0, "no row of shown weights missed 1");
}

#[test]
fn every_layer_norm_whose_row_as_shown_gives_another_mean_or_variance_says_so() {
    let mut missed = 0;
    for trace in scenarios() {
        let Some(block) = trace.block.as_ref() else {
            continue;
        };
        let norms = [
            (
                MatrixId::Block(BlockMatrix::Norm1),
                match block.norm {
                    Norm::Post => &block.sum_1,
                    Norm::Pre => &trace.x,
                },
            ),
            (MatrixId::Block(BlockMatrix::Norm2), block.norm_2_input()),
        ];
        for (id, input) in norms {
            for i in 0..input.nrows() {
                let e = cell(&trace, id, i, 0);
                let note = e.note.as_deref().unwrap_or("");
                let row: Vec<f64> = input
                    .row(i)
                    .iter()
                    .map(|v| format_value(*v, 2).replace('−', "-").parse().unwrap())
                    .collect();
                let n = row.len() as f64;
                let mean = row.iter().sum::<f64>() / n;
                let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
                let exact = input.row(i).mean();
                let exact_var = input.row(i).variance();
                // μᵢ and σᵢ² are written with two decimals, as the steps and heatmaps write them.
                let mean_differs = format_value(mean, 2) != format_value(exact, 2);
                let var_differs = format_value(var, 2) != format_value(exact_var, 2);
                if mean_differs {
                    assert!(
                        note.contains(&format!("the mean comes to ≈ {}", format_value(mean, 2))),
                        "{note}"
                    );
                }
                if var_differs {
                    assert!(
                        note.contains(&format!("variance to ≈ {}", format_value(var, 2)))
                            || note
                                .contains(&format!("variance comes to ≈ {}", format_value(var, 2))),
                        "{note}"
                    );
                }
                if mean_differs || var_differs {
                    missed += 1;
                } else {
                    assert!(!note.contains("Redone from row"), "{note}");
                }
            }
        }
    }
    assert!(
        missed > 0,
        "no LayerNorm row as shown missed its mean or variance"
    );
}
