//! Cell arithmetic: every cell of every heatmap is explained with the number the heatmap shows,
//! the operands light up where they should, and a tiny example is checked by hand.

// Native tests: they read files and run the CLI, which the browser target cannot.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{
    forward, Config, HeadMatrix, Init, Inputs, Matrix, MatrixId, Operand, Pairing, Rope, ScaleMode,
    Source, Trace, WeightName, Weights, MAX_TOKENS,
};
use attention_lens::formats::scenario::Scenario;
use attention_lens::panels::{self, operand_panel, panel_name, panel_names};
use attention_lens::words::{explain, format_value, Explanation};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Scenarios.

fn default_trace() -> Trace {
    let inputs = Scenario::default()
        .to_inputs()
        .expect("the default scenario is valid");
    forward(&inputs).expect("the default scenario runs")
}

fn trace_of(sentence: &str, config: Config) -> Trace {
    let weights = Weights::shaped(Init::Default, config.d_model, config.kv_width());
    let inputs = Inputs::from_sentence(sentence, config, weights).expect("valid inputs");
    forward(&inputs).expect("the forward pass runs")
}

/// Causal mask, positions and three heads of width 2.
fn causal_trace() -> Trace {
    trace_of(
        "the cat sat on the mat",
        Config {
            d_model: 6,
            n_heads: 3,
            causal: true,
            positional_encoding: true,
            ..Config::default()
        },
    )
}

/// Every switch the explanations talk about, in turn.
fn variant_traces() -> Vec<Trace> {
    let base = Config::default();
    vec![
        trace_of(
            "I am hungry",
            Config {
                scale: ScaleMode::SqrtSeqLen,
                ..base
            },
        ),
        trace_of(
            "I am hungry",
            Config {
                scale: ScaleMode::None,
                temperature: 0.5,
                ..base
            },
        ),
        trace_of(
            "one two three four five six seven eight nine ten",
            Config {
                d_model: 16,
                n_heads: 1,
                causal: true,
                temperature: 3.0,
                ..base
            },
        ),
        // Today's attention: rotary positions in both pairings, shared key/value heads and a
        // sliding window.
        trace_of(
            "the cat sat on the mat",
            Config {
                d_model: 8,
                n_heads: 4,
                causal: true,
                rope: Some(Rope::default()),
                kv_heads: Some(2),
                window: Some(3),
                ..base
            },
        ),
        trace_of(
            "the cat sat on the mat",
            Config {
                d_model: 8,
                n_heads: 2,
                rope: Some(Rope {
                    theta: 100.0,
                    pairing: Pairing::Interleaved,
                }),
                kv_heads: Some(1),
                ..base
            },
        ),
    ]
}

fn long_sentence() -> String {
    (1..=MAX_TOKENS)
        .map(|n| format!("w{n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tiny fixture worked by hand: two tokens, one head of width 2, identity weights, so
/// Q = K = V = X = E.
fn tiny_trace() -> Trace {
    let inputs = Inputs {
        tokens: vec!["cats".to_string(), "chase".to_string()],
        // cats = (−0.5, 1), chase = (2, −0.25)
        embeddings: Matrix::from_row_slice(2, 2, &[-0.5, 1.0, 2.0, -0.25]),
        weights: Weights::new(Init::Identity, 2),
        config: Config {
            d_model: 2,
            n_heads: 1,
            ..Config::default()
        },
        source: None,
        block: None,
    };
    forward(&inputs).expect("the tiny fixture runs")
}

// ---------------------------------------------------------------------------------------------
// Helpers.

fn cell(trace: &Trace, id: MatrixId, r: usize, c: usize) -> Explanation {
    explain(trace, id, r, c)
        .unwrap_or_else(|| panic!("{} ({r}, {c}) is not explained", panel_name(id)))
}

/// The text after the last ` = ` or ` ≈ `: the number the expansion ends in.
fn final_number(e: &Explanation) -> &str {
    let after = |sign: &str| e.expansion.rfind(sign).map(|at| at + sign.len());
    let start = after(" = ").max(after(" ≈ ")).unwrap_or(0);
    &e.expansion[start..]
}

/// Whether the expansion ends in `≈ value`: it must exactly when its note says that the rounded
/// numbers written before the result give another number.
fn ends_approximately(e: &Explanation) -> bool {
    e.expansion.ends_with(&format!(" ≈ {}", e.value_text))
}

fn head(h: usize, m: HeadMatrix) -> MatrixId {
    MatrixId::Head(h, m)
}

fn operand(
    matrix: MatrixId,
    rows: &[usize],
    cols: &[usize],
    cell: Option<(usize, usize)>,
) -> Operand {
    Operand {
        matrix,
        rows: rows.to_vec(),
        cols: cols.to_vec(),
        cell,
    }
}

/// Checks one explanation against the trace; returns a message instead of panicking so the
/// proptest below can report it.
fn check(trace: &Trace, id: MatrixId, r: usize, c: usize) -> Result<(), String> {
    let name = format!("{} ({r}, {c})", panel_name(id));
    let e = explain(trace, id, r, c).ok_or(format!("{name}: not explained"))?;
    let stored = id.get(trace).ok_or(format!("{name}: no matrix"))?[(r, c)];
    if e.value.to_bits() != stored.to_bits() {
        return Err(format!(
            "{name}: value {} but the trace holds {stored}",
            e.value
        ));
    }
    let shown = format_value(stored, 2);
    if e.value_text != shown {
        return Err(format!(
            "{name}: value_text {:?}, shown {shown:?}",
            e.value_text
        ));
    }
    let redone = e
        .note
        .as_deref()
        .is_some_and(|note| note.contains("Redone with the rounded numbers shown"));
    if ends_approximately(&e) != redone {
        return Err(format!(
            "{name}: the sign before the result disagrees with the note: {} | {:?}",
            e.expansion, e.note
        ));
    }
    let last = final_number(&e);
    if last != shown {
        return Err(format!(
            "{name}: expansion ends in {last:?}, shown {shown:?}: {}",
            e.expansion
        ));
    }
    if stored.is_finite() {
        let parsed: f64 = last
            .replace('−', "-")
            .parse()
            .map_err(|_| format!("{name}: {last:?} is not a number"))?;
        if (parsed - stored).abs() > 0.005 + 1e-12 {
            return Err(format!("{name}: {last} is not {stored} rounded"));
        }
    }
    if e.title.is_empty() || e.formula.is_empty() || e.expansion.contains("NaN") {
        return Err(format!("{name}: incomplete explanation {e:?}"));
    }
    for op in &e.operands {
        let (rows, cols) = op.matrix.shape(trace).ok_or(format!(
            "{name}: operand {:?} is not in the trace",
            op.matrix
        ))?;
        let in_range = op.rows.iter().all(|&i| i < rows)
            && op.cols.iter().all(|&j| j < cols)
            && op.cell.is_none_or(|(i, j)| i < rows && j < cols);
        if !in_range {
            return Err(format!("{name}: operand {op:?} is outside {rows} × {cols}"));
        }
        let panel = operand_panel(id, op.matrix);
        if panels::parse(&panel) != Some(op.matrix) {
            return Err(format!(
                "{name}: operand panel {panel:?} is not {:?}",
                op.matrix
            ));
        }
    }
    Ok(())
}

fn check_every_cell(trace: &Trace) -> usize {
    let mut count = 0;
    for id in MatrixId::all(trace) {
        let (rows, cols) = id.shape(trace).expect("listed matrices exist");
        for r in 0..rows {
            for c in 0..cols {
                if let Err(message) = check(trace, id, r, c) {
                    panic!("{message}");
                }
                count += 1;
            }
        }
    }
    count
}

// ---------------------------------------------------------------------------------------------
// Panel names.

/// The panels the stage view draws, per stage, for `n_heads` heads.
fn ui_panel_names(n_heads: usize) -> Vec<String> {
    let per_head = |keys: &[&str]| -> Vec<String> {
        (0..n_heads)
            .flat_map(|h| keys.iter().map(move |k| format!("{k}-h{h}")))
            .collect()
    };
    let mut names: Vec<String> = ["embeddings", "positional", "x"]
        .into_iter()
        .chain(["x-q", "x-k", "x-v", "w_q", "w_k", "w_v", "q", "k", "v"])
        .map(String::from)
        .collect();
    names.extend(per_head(&["q", "k", "v"]));
    names.extend(per_head(&["kt", "scores"]));
    names.extend(per_head(&["scaled", "masked", "weights", "context"]));
    names.extend(["concat", "w_o", "output"].map(String::from));
    names
}

#[test]
fn every_panel_the_stage_view_draws_names_a_matrix_of_the_trace() {
    let trace = causal_trace();
    for name in ui_panel_names(3) {
        let id = panels::parse(&name).unwrap_or_else(|| panic!("{name} does not parse"));
        assert!(id.get(&trace).is_some(), "{name} has no values");
        assert!(
            panel_names(id).contains(&name),
            "{name} is not a name of {id:?}"
        );
    }
    assert_eq!(panels::parse("x-q"), Some(MatrixId::X));
    assert_eq!(
        panels::parse("kt-h2"),
        Some(head(2, HeadMatrix::KTransposed))
    );
    assert_eq!(panels::parse("q-h3"), Some(head(3, HeadMatrix::Q)));
    assert!(
        head(3, HeadMatrix::Q).get(&trace).is_none(),
        "there are only 3 heads"
    );
}

#[test]
fn panel_names_are_exactly_the_stage_view_names() {
    let trace = causal_trace();
    let names: Vec<String> = MatrixId::all(&trace)
        .iter()
        .map(|id| panel_name(*id))
        .collect();
    let mut expected = ui_panel_names(3);
    expected.retain(|n| !n.starts_with("x-"));
    let (mut names, mut expected) = (names, expected);
    names.sort();
    expected.sort();
    assert_eq!(names, expected);
}

#[test]
fn k_transposed_has_head_dimensions_for_rows_and_keys_for_columns() {
    let trace = causal_trace();
    let kt = head(1, HeadMatrix::KTransposed).get(&trace).unwrap();
    assert_eq!(kt, trace.heads[1].k.transpose());
    assert_eq!(head(1, HeadMatrix::KTransposed).shape(&trace), Some((2, 6)));
}

// ---------------------------------------------------------------------------------------------
// Every cell.

#[test]
fn every_cell_of_the_default_scenario_is_explained_with_its_shown_value() {
    let trace = default_trace();
    let count = check_every_cell(&trace);
    // E, X, Q, K, V, concat, output (3×4); the four weights (4×4); per head Q, K, V, C (3×2),
    // Kᵀ (2×3) and S, Z, M, A (3×3).
    assert_eq!(count, 7 * 12 + 4 * 16 + 2 * (5 * 6 + 4 * 9));
}

#[test]
fn every_cell_of_a_causal_three_head_scenario_with_positions_is_explained() {
    check_every_cell(&causal_trace());
}

#[test]
fn every_cell_is_explained_under_every_scale_mode_and_temperature() {
    for trace in variant_traces() {
        check_every_cell(&trace);
    }
}

#[test]
fn cells_outside_the_matrix_are_not_explained() {
    let trace = causal_trace();
    for id in MatrixId::all(&trace) {
        let (rows, cols) = id.shape(&trace).unwrap();
        for (r, c) in [
            (rows, 0),
            (0, cols),
            (rows, cols),
            (usize::MAX, 0),
            (0, usize::MAX),
        ] {
            assert!(explain(&trace, id, r, c).is_none(), "{id:?} ({r}, {c})");
        }
    }
    assert!(explain(&trace, head(3, HeadMatrix::Scores), 0, 0).is_none());
    assert!(explain(&trace, head(usize::MAX, HeadMatrix::Context), 0, 0).is_none());
    let without_positions = default_trace();
    assert!(explain(&without_positions, MatrixId::Positional, 0, 0).is_none());
}

// ---------------------------------------------------------------------------------------------
// Operands.

#[test]
fn a_projection_cell_reads_a_row_of_x_and_a_column_of_the_weight() {
    let trace = causal_trace();
    let e = cell(&trace, MatrixId::K, 4, 3);
    assert_eq!(
        e.operands,
        vec![
            operand(MatrixId::X, &[4], &[], None),
            operand(MatrixId::Weight(WeightName::K), &[], &[3], None),
        ]
    );
    // X lights up in the copy drawn beside W_k.
    assert_eq!(operand_panel(e.matrix, e.operands[0].matrix), "x-k");
    assert_eq!(e.title, "Key K[the (5), d4]");
    assert_eq!(e.formula, "K[i, c] = Σ_m X[i, m] · W_k[m, c]");
    assert!(
        e.expansion.starts_with("X[the (5), :] · W_k[:, d4] = "),
        "{}",
        e.expansion
    );
    // Six products, one per dimension of X.
    assert_eq!(e.expansion.matches(" × ").count(), 6);

    let y = cell(&trace, MatrixId::Output, 1, 0);
    assert_eq!(
        y.operands,
        vec![
            operand(MatrixId::Concat, &[1], &[], None),
            operand(MatrixId::Weight(WeightName::O), &[], &[0], None),
        ]
    );
}

#[test]
fn a_score_cell_reads_a_query_row_and_a_key_row() {
    let trace = causal_trace();
    let e = cell(&trace, head(1, HeadMatrix::Scores), 2, 1);
    assert_eq!(
        e.operands,
        vec![
            operand(head(1, HeadMatrix::Q), &[2], &[], None),
            operand(head(1, HeadMatrix::K), &[1], &[], None),
            operand(head(1, HeadMatrix::KTransposed), &[], &[1], None),
        ]
    );
    assert_eq!(e.title, "Score S₂[sat, cat]");
    assert!(
        e.expansion.starts_with("q_sat · k_cat = "),
        "{}",
        e.expansion
    );
}

#[test]
fn a_softmax_cell_reads_its_whole_row() {
    let trace = causal_trace();
    let e = cell(&trace, head(2, HeadMatrix::Weights), 3, 1);
    assert_eq!(
        e.operands,
        vec![
            operand(head(2, HeadMatrix::Masked), &[3], &[], None),
            operand(head(2, HeadMatrix::Weights), &[3], &[], None),
        ]
    );
}

#[test]
fn a_context_cell_reads_a_row_of_weights_and_a_column_of_values() {
    let trace = causal_trace();
    let e = cell(&trace, head(0, HeadMatrix::Context), 5, 1);
    assert_eq!(
        e.operands,
        vec![
            operand(head(0, HeadMatrix::Weights), &[5], &[], None),
            operand(head(0, HeadMatrix::V), &[], &[1], None),
        ]
    );
    assert_eq!(e.formula, "C₁[i, c] = Σ_j A₁[i, j] · V₁[j, c]");
    // One product per token.
    assert_eq!(e.expansion.matches(" × ").count(), 6);
}

#[test]
fn split_and_concat_cells_name_the_head_and_column_they_come_from() {
    let trace = causal_trace();
    // Head 3 owns columns d5–d6 of Q.
    let q = cell(&trace, head(2, HeadMatrix::Q), 1, 1);
    assert_eq!(
        q.operands,
        vec![operand(MatrixId::Q, &[], &[], Some((1, 5)))]
    );
    assert_eq!(
        q.expansion,
        format!("Q₃[cat, d6] = Q[cat, d6] = {}", q.value_text)
    );
    assert!(q
        .note
        .as_deref()
        .unwrap()
        .contains("Head 3 takes columns d5–d6 of Q"));

    let c = cell(&trace, MatrixId::Concat, 0, 2);
    assert_eq!(
        c.operands,
        vec![operand(
            head(1, HeadMatrix::Context),
            &[],
            &[],
            Some((0, 0))
        )]
    );
    assert!(
        c.expansion
            .starts_with("C[the (1), d3] = C₂[the (1), d3] = "),
        "{}",
        c.expansion
    );
    assert!(c.note.as_deref().unwrap().contains("head 2"));

    let kt = cell(&trace, head(0, HeadMatrix::KTransposed), 1, 4);
    assert_eq!(
        kt.operands,
        vec![operand(head(0, HeadMatrix::K), &[], &[], Some((4, 1)))]
    );
    assert!(
        kt.expansion
            .starts_with("K₁ᵀ[d2, the (5)] = K₁[the (5), d2] = "),
        "{}",
        kt.expansion
    );
}

#[test]
fn input_cells_add_positions_or_say_they_are_off() {
    let with = causal_trace();
    let e = cell(&with, MatrixId::X, 2, 1);
    assert_eq!(e.formula, "X[i, c] = E[i, c] + P[i, c]");
    assert_eq!(
        e.operands,
        vec![
            operand(MatrixId::Embeddings, &[], &[], Some((2, 1))),
            operand(MatrixId::Positional, &[], &[], Some((2, 1))),
        ]
    );
    let (emb, pos) = (
        with.embeddings[(2, 1)],
        with.positional.as_ref().unwrap()[(2, 1)],
    );
    let pos_text = format_value(pos, 2);
    let pos_text = if pos < 0.0 {
        format!("({pos_text})")
    } else {
        pos_text
    };
    assert_eq!(
        e.expansion,
        format!("{} + {pos_text} = {}", format_value(emb, 2), e.value_text)
    );

    let without = default_trace();
    let e = cell(&without, MatrixId::X, 0, 0);
    let note = e.note.as_deref().unwrap();
    assert!(
        note.starts_with("X = E: positional encoding is off."),
        "{note}"
    );
    assert!(note.contains("cannot tell word order apart"), "{note}");
    assert_eq!(e.expansion, "E[I, d1] = 0.18");
    // With the causal mask on, order shows even without positions.
    let masked = Scenario {
        causal: true,
        ..Scenario::default()
    };
    let masked = forward(&masked.to_inputs().unwrap()).unwrap();
    let note = cell(&masked, MatrixId::X, 0, 0).note.unwrap();
    assert!(
        note.contains("the causal mask still makes order matter"),
        "{note}"
    );
    assert!(!note.contains("cannot"), "{note}");
}

// ---------------------------------------------------------------------------------------------
// Mask, scale, softmax.

#[test]
fn masked_cells_explain_that_the_key_comes_after_the_query() {
    let trace = causal_trace();
    let n = trace.seq_len();
    for h in 0..3 {
        for i in 0..n {
            for j in 0..n {
                let e = cell(&trace, head(h, HeadMatrix::Masked), i, j);
                if j > i {
                    assert_eq!(e.value, f64::NEG_INFINITY);
                    assert!(e.expansion.contains("comes after query"), "{}", e.expansion);
                    assert!(e.expansion.contains("j > i"), "{}", e.expansion);
                    assert!(e.expansion.ends_with("= −∞"), "{}", e.expansion);
                } else {
                    assert!(e.value.is_finite());
                    assert!(!e.expansion.contains("j > i"), "{}", e.expansion);
                }
            }
        }
    }
    let e = cell(&trace, head(0, HeadMatrix::Masked), 1, 2);
    assert_eq!(
        e.expansion,
        "key “sat” (token 3) comes after query “cat” (token 2): j > i, so M₁[cat, sat] = −∞"
    );
    let off = cell(&default_trace(), head(0, HeadMatrix::Masked), 0, 2);
    assert!(
        off.expansion.starts_with("the causal mask is off"),
        "{}",
        off.expansion
    );
}

#[test]
fn softmax_cells_show_one_term_per_token_and_masked_terms_as_zero() {
    for trace in [default_trace(), causal_trace()] {
        let n = trace.seq_len();
        for i in 0..n {
            let e = cell(&trace, head(0, HeadMatrix::Weights), i, 0);
            let steps: Vec<&str> = e.expansion.split(" = ").collect();
            // exp(z_ij − max) / (one exp per token) = numbers / (one number per token) = …
            let calls = steps[0].split_once(" / ").unwrap().1;
            assert_eq!(calls.matches("exp(").count(), n, "{}", e.expansion);
            // A total that is not the sum of the rounded terms follows them with ` ≈ `.
            let numbers = steps[1].split(" ≈ ").next().unwrap();
            let numbers = numbers.split_once(" / (").unwrap().1.trim_end_matches(')');
            assert_eq!(numbers.split(" + ").count(), n, "{}", e.expansion);
            let masked = if trace.config.causal { n - 1 - i } else { 0 };
            assert_eq!(calls.matches("exp(−∞)").count(), masked, "{}", e.expansion);
            assert_eq!(numbers.split(" + ").filter(|t| *t == "0").count(), masked);
        }
    }
}

#[test]
fn long_rows_leave_out_the_middle_of_the_sum_but_keep_the_exact_value() {
    let trace = trace_of(&long_sentence(), Config::default());
    let a = cell(&trace, head(1, HeadMatrix::Weights), 7, 30);
    assert!(a.expansion.contains("… 27 more terms …"), "{}", a.expansion);
    let steps: Vec<&str> = a
        .expansion
        .split(" = ")
        .flat_map(|s| s.split(" ≈ "))
        .collect();
    let numbers = steps[1].split_once(" / (").unwrap().1.trim_end_matches(')');
    assert_eq!(numbers.split(" + ").count(), 3 + 1 + 2);
    assert_eq!(a.value, trace.heads[1].weights[(7, 30)]);
    assert!(a.note.as_deref().unwrap().contains("32 terms"));

    let c = cell(&trace, head(0, HeadMatrix::Context), 31, 1);
    assert!(c.expansion.contains("… 27 more terms …"), "{}", c.expansion);
    assert_eq!(c.value, trace.heads[0].context[(31, 1)]);
    check_every_cell(&trace);
}

#[test]
fn the_scale_explanation_names_the_divisor_and_the_mode() {
    let trace = default_trace();
    let e = cell(&trace, head(0, HeadMatrix::Scaled), 0, 1);
    let s = format_value(trace.heads[0].scores[(0, 1)], 2);
    assert_eq!(
        e.expansion,
        format!("{s} / √2 ≈ {s} / 1.4142 = {}", e.value_text)
    );

    let variants = variant_traces();
    let (by_length, unscaled) = (&variants[0], &variants[1]);
    let e = cell(by_length, head(1, HeadMatrix::Scaled), 2, 0);
    assert_eq!(e.formula, "Z₂[i, j] = S₂[i, j] / √seq_len");
    assert!(e.expansion.contains(" / √3 ≈ "), "{}", e.expansion);
    assert!(e.expansion.contains(" / 1.7321 = "), "{}", e.expansion);
    assert!(e.note.as_deref().unwrap().contains("common mistake"));

    let e = cell(unscaled, head(0, HeadMatrix::Scaled), 1, 2);
    assert_eq!(e.formula, "Z₁[i, j] = S₁[i, j]");
    assert!(e.note.as_deref().unwrap().starts_with("Scaling is off"));
}

#[test]
fn a_temperature_other_than_one_appears_in_the_softmax() {
    let unscaled = variant_traces().swap_remove(1);
    let e = cell(&unscaled, head(0, HeadMatrix::Weights), 0, 0);
    assert!(e.formula.contains("/ T)"), "{}", e.formula);
    assert!(e.expansion.contains(") / 0.5)"), "{}", e.expansion);
    assert!(e.note.as_deref().unwrap().contains("Temperature T = 0.5"));
    let plain = cell(&default_trace(), head(0, HeadMatrix::Weights), 0, 0);
    assert!(!plain.formula.contains('T'), "{}", plain.formula);
}

// ---------------------------------------------------------------------------------------------
// Worked by hand.

#[test]
fn a_tiny_score_scale_and_softmax_match_the_hand_computation() {
    let trace = tiny_trace();

    // q_cats · k_chase = −0.5·2 + 1·(−0.25) = −1 − 0.25 = −1.25
    let s = cell(&trace, head(0, HeadMatrix::Scores), 0, 1);
    assert_eq!(s.title, "Score S₁[cats, chase]");
    assert_eq!(s.formula, "q_i · k_j = Σ_m Q₁[i, m] · K₁[j, m]");
    assert_eq!(
        s.expansion,
        "q_cats · k_chase = −0.50 × 2.00 + 1.00 × (−0.25) = −1.25"
    );
    assert_eq!(s.value, -1.25);
    assert_eq!(s.note, None);

    // −1.25 / √2 = −0.8839
    let z = cell(&trace, head(0, HeadMatrix::Scaled), 0, 1);
    assert_eq!(z.expansion, "−1.25 / √2 ≈ −1.25 / 1.4142 = −0.88");

    // Row cats: z = (1.25, −1.25) / √2 = (0.8839, −0.8839), max 0.8839;
    // exp(−1.7678) = 0.1707, so a = 0.1707 / (1 + 0.1707) = 0.1458.
    let a = cell(&trace, head(0, HeadMatrix::Weights), 0, 1);
    assert_eq!(
        a.expansion,
        "exp(−0.88 − 0.88) / (exp(0.88 − 0.88) + exp(−0.88 − 0.88)) \
         = 0.17 / (1.00 + 0.17) = 0.17 / 1.17 = 0.15"
    );
    assert!((a.value - 0.1707 / 1.1707).abs() < 1e-4);

    // Context cats, d1: 0.8542·(−0.5) + 0.1458·2 = −0.1354
    let c = cell(&trace, head(0, HeadMatrix::Context), 0, 0);
    assert_eq!(
        c.expansion,
        "A₁[cats, :] · V₁[:, d1] = 0.85 × (−0.50) + 0.15 × 2.00 ≈ −0.14"
    );
    assert!(
        c.note.as_deref().unwrap().contains("comes to −0.125, but"),
        "{:?}",
        c.note
    );
}

#[test]
fn sums_of_rounded_numbers_that_miss_the_result_say_so() {
    // Q[a, d1] = 0.004·1 + 0.004·1 = 0.008: shown as 0.00 × 1.00 + 0.00 × 1.00 ≈ 0.01.
    let inputs = Inputs {
        tokens: vec!["a".to_string(), "b".to_string()],
        embeddings: Matrix::from_row_slice(2, 2, &[0.004, 0.004, 0.0, 0.0]),
        weights: Weights {
            w_q: Matrix::from_row_slice(2, 2, &[1.0, 0.0, 1.0, 0.0]),
            ..Weights::new(Init::Identity, 2)
        },
        config: Config {
            d_model: 2,
            n_heads: 1,
            ..Config::default()
        },
        source: None,
        block: None,
    };
    let trace = forward(&inputs).unwrap();
    let e = cell(&trace, MatrixId::Q, 0, 0);
    assert_eq!(
        e.expansion,
        "X[a, :] · W_q[:, d1] = 0.00 × 1.00 + 0.00 × 1.00 ≈ 0.01"
    );
    assert!(e.note.as_deref().unwrap().contains("rounded"));
}

// ---------------------------------------------------------------------------------------------
// Fuzzing.

fn config() -> impl Strategy<Value = Config> {
    (2usize..=8).prop_flat_map(|d_model| {
        (
            prop::sample::select(Config::valid_head_counts(d_model)),
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(ScaleMode::ALL.to_vec()),
            prop_oneof![Just(1.0), 0.05f64..5.0],
        )
            .prop_map(
                move |(n_heads, causal, positional_encoding, scale, temperature)| Config {
                    d_model,
                    n_heads,
                    causal,
                    positional_encoding,
                    scale,
                    temperature,
                    ..Config::default()
                },
            )
    })
}

fn inputs() -> impl Strategy<Value = Inputs> {
    (config(), 1usize..=12).prop_flat_map(|(config, seq_len)| {
        let d = config.d_model;
        (
            prop::collection::vec(-3.0f64..=3.0, seq_len * d),
            prop::collection::vec(-3.0f64..=3.0, 4 * d * d),
        )
            .prop_map(move |(e, w)| {
                let square =
                    |k: usize| Matrix::from_row_slice(d, d, &w[k * d * d..(k + 1) * d * d]);
                Inputs {
                    tokens: (0..seq_len).map(|i| format!("t{i}")).collect(),
                    embeddings: Matrix::from_row_slice(seq_len, d, &e),
                    weights: Weights {
                        w_q: square(0),
                        w_k: square(1),
                        w_v: square(2),
                        w_o: square(3),
                    },
                    config,
                    source: None,
                    block: None,
                }
            })
    })
}

fn any_matrix() -> impl Strategy<Value = MatrixId> {
    prop_oneof![
        Just(MatrixId::Embeddings),
        Just(MatrixId::Positional),
        Just(MatrixId::X),
        prop::sample::select(WeightName::ALL.to_vec()).prop_map(MatrixId::Weight),
        Just(MatrixId::Q),
        Just(MatrixId::K),
        Just(MatrixId::V),
        (0usize..10, prop::sample::select(HeadMatrix::ALL.to_vec()))
            .prop_map(|(h, m)| MatrixId::Head(h, m)),
        Just(MatrixId::Concat),
        Just(MatrixId::Output),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn any_cell_is_explained_exactly_when_it_exists(
        inputs in inputs(),
        id in any_matrix(),
        row in 0usize..20,
        col in 0usize..20,
    ) {
        let trace = forward(&inputs).expect("moderate inputs run");
        let exists = id.value(&trace, row, col).is_some();
        prop_assert_eq!(explain(&trace, id, row, col).is_some(), exists);
        if exists {
            if let Err(message) = check(&trace, id, row, col) {
                prop_assert!(false, "{}", message);
            }
        }
    }

    #[test]
    fn any_text_parses_to_a_matrix_only_if_it_is_one_of_its_panel_names(name in "\\PC{0,12}|[a-z_]{1,8}-h[0-9]{0,3}") {
        if let Some(id) = panels::parse(&name) {
            prop_assert!(panel_names(id).contains(&name), "{} -> {:?}", name, id);
        }
    }
}

#[test]
fn a_position_cell_counts_tokens_and_columns_from_one() {
    let t = causal_trace();
    // Row 2 is "sat", token 3; column 3 is d4, the cos of pair 2.
    let e = cell(&t, MatrixId::Positional, 2, 3);
    let note = e.note.as_deref().unwrap();
    assert!(
        note.contains("“sat” is token 3, so p = i − 1 = 2"),
        "{note}"
    );
    assert!(note.contains("pair 2"), "{note}");
    assert!(!note.contains("count from 0"), "{note}");
    assert!(e.formula.contains("p = i − 1"), "{}", e.formula);
    assert!(
        e.expansion.starts_with("cos(2 / 10000^(2/6))"),
        "{}",
        e.expansion
    );
}

#[test]
fn a_head_slice_cell_names_its_column_as_the_layer_does_and_counts_heads_from_one() {
    let t = default_trace();
    let e = cell(&t, MatrixId::Head(1, HeadMatrix::Q), 0, 0);
    assert!(
        e.formula.contains("(h − 1)·d_k + 1 … h·d_k"),
        "{}",
        e.formula
    );
    assert!(
        e.expansion.starts_with("Q₂[I, d3] = Q[I, d3]"),
        "{}",
        e.expansion
    );
    let e = cell(&t, MatrixId::Concat, 2, 3);
    assert!(
        e.expansion.starts_with("C[hungry, d4] = C₂[hungry, d4]"),
        "{}",
        e.expansion
    );
}

// ---------------------------------------------------------------------------------------------
// Cross-attention: the keys, values and source positions are the source's.

/// “the cat” attending to the five-token source “le chat noir dort bien”, dividing by
/// √src_len, with positions.
fn cross_trace() -> Trace {
    let config = Config {
        scale: ScaleMode::SqrtSeqLen,
        positional_encoding: true,
        ..Config::default()
    };
    let mut inputs = Inputs::from_sentence(
        "the cat",
        config,
        Weights::new(Init::Default, config.d_model),
    )
    .expect("valid inputs");
    inputs.source = Some(Source::from_sentence("le chat noir dort bien", 4).expect("a source"));
    forward(&inputs).expect("the forward pass runs")
}

#[test]
fn a_cross_attention_score_names_the_sources_key_token() {
    let trace = cross_trace();
    let e = cell(&trace, head(0, HeadMatrix::Scores), 1, 0);
    assert_eq!(e.title, "Score S₁[cat, le]");
    assert!(
        e.expansion.starts_with("q_cat · k_le = "),
        "{}",
        e.expansion
    );
    // Past the sentence's length the key is still a source word, not “token 5”.
    let e = cell(&trace, head(1, HeadMatrix::Scores), 0, 4);
    assert!(
        e.expansion.starts_with("q_the · k_bien = "),
        "{}",
        e.expansion
    );
}

#[test]
fn a_source_position_cell_names_the_source_token_and_its_own_position() {
    let trace = cross_trace();
    let e = cell(&trace, MatrixId::SourcePositional, 3, 0);
    assert_eq!(e.title, "Source position P_src[dort, d1]");
    assert!(e.formula.starts_with("P_src[i, c] = sin("), "{}", e.formula);
    let note = e.note.as_deref().unwrap();
    assert!(
        note.contains("“dort” is source token 4, so p = i − 1 = 3"),
        "{note}"
    );
    assert!(e.expansion.starts_with("sin(3 / "), "{}", e.expansion);
}

#[test]
fn a_cross_attention_scale_cell_divides_by_the_root_of_the_sources_length() {
    let trace = cross_trace();
    let e = cell(&trace, head(0, HeadMatrix::Scaled), 1, 2);
    assert_eq!(e.formula, "Z₁[i, j] = S₁[i, j] / √src_len");
    assert!(e.expansion.contains(" / √5 ≈ "), "{}", e.expansion);
    assert!(e.expansion.contains(" / 2.2361 "), "{}", e.expansion);
    let note = e.note.as_deref().unwrap();
    assert!(note.contains("src_len = 5"), "{note}");
    assert!(!note.contains("seq_len"), "{note}");
}

#[test]
fn a_cross_attention_mask_cell_says_there_is_no_causal_mask() {
    let trace = cross_trace();
    let e = cell(&trace, head(0, HeadMatrix::Masked), 0, 3);
    let note = e.note.as_deref().unwrap();
    assert!(!note.contains("later ones"), "{note}");
    assert!(note.contains("no causal mask"), "{note}");
    assert!(e.title.ends_with("[the, dort]"), "{}", e.title);
}

#[test]
fn scaling_off_says_the_scores_are_not_divided() {
    let unscaled = variant_traces().swap_remove(1);
    let e = cell(&unscaled, head(0, HeadMatrix::Scaled), 0, 1);
    assert!(!e.formula.contains('/'), "{}", e.formula);
    assert!(e.note.as_deref().unwrap().contains("not divided"));
}

#[test]
fn a_one_head_concat_cell_is_head_ones_context_without_a_head_h() {
    let trace = variant_traces().swap_remove(2);
    let e = cell(&trace, MatrixId::Concat, 0, 5);
    assert_eq!(e.formula, "C[i, c] = C₁[i, c]");
    assert!(e.note.as_deref().unwrap().contains("With one head"));
}

// ---------------------------------------------------------------------------------------------
// What a lecturer checked: words that hold for every setting.

/// “the cat saw the dog” with the mask and the positions as asked.
fn the_cat_saw_the_dog(causal: bool, positional: bool) -> Trace {
    trace_of(
        "the cat saw the dog",
        Config {
            causal,
            positional_encoding: positional,
            ..Config::default()
        },
    )
}

/// “the cat the” attending to “le chat le chien”, with or without positions.
fn repeated_cross(positional: bool) -> Trace {
    let config = Config {
        positional_encoding: positional,
        ..Config::default()
    };
    let mut inputs = Inputs::from_sentence(
        "the cat the",
        config,
        Weights::new(Init::Default, config.d_model),
    )
    .expect("valid inputs");
    inputs.source = Some(Source::from_sentence("le chat le chien", 4).expect("a source"));
    forward(&inputs).expect("the forward pass runs")
}

/// Whether rows `a` and `b` of `m` differ.
fn rows_differ(m: &Matrix, a: usize, b: usize) -> bool {
    (m.row(a) - m.row(b)).norm() > 1e-9
}

#[test]
fn a_repeated_word_is_told_apart_only_by_the_switches_that_do_tell_it_apart() {
    let mut traces = Vec::new();
    for causal in [false, true] {
        for positional in [false, true] {
            traces.push((
                the_cat_saw_the_dog(causal, positional),
                MatrixId::Embeddings,
                3,
            ));
        }
    }
    for positional in [false, true] {
        traces.push((repeated_cross(positional), MatrixId::Embeddings, 2));
        traces.push((repeated_cross(positional), MatrixId::SourceEmbeddings, 2));
    }
    for (trace, id, again) in &traces {
        let (causal, positional) = (trace.config.causal, trace.config.positional_encoding);
        let note = cell(trace, *id, 0, 0).note.unwrap_or_default();
        let at = format!("{id:?}, causal {causal}, positions {positional}: {note}");
        assert!(note.contains("occurs 2 times"), "{at}");
        // What the learner can check on screen: the rows after attention.
        let result = if *id == MatrixId::SourceEmbeddings {
            &trace.k
        } else {
            &trace.output
        };
        let differ = rows_differ(result, 0, *again);
        if note.contains("nothing tells them apart") {
            assert!(!differ, "{at}");
        }
        if differ && !positional {
            assert!(note.contains("under the causal mask"), "{at}");
        }
        if note.contains("causal mask") && !note.contains("no causal mask") {
            assert!(causal && trace.source.is_none(), "{at}");
        }
        assert_eq!(
            note.contains("only the positional encoding"),
            positional,
            "{at}"
        );
        assert!(!note.contains("when it is on"), "{at}");
    }
    // The case the lecturer ran: the mask alone tells the two “the” apart.
    let trace = the_cat_saw_the_dog(true, false);
    assert!(rows_differ(&trace.output, 0, 3));
    assert!(!rows_differ(&trace.x, 0, 3));
}

#[test]
fn a_softmax_total_that_is_not_the_sum_of_its_shown_terms_is_written_approximately_and_explained() {
    // Row “dog” of head 2: the exponentials shown, 0.04 + 1.00 + 0.00 + 0.00 + 0.05, add to
    // 1.09, while their exact total is 1.08; the weight is 0.92, but the last step written,
    // 1.00 / 1.08, is 0.926: written "≈", with a note.
    let trace = the_cat_saw_the_dog(true, true);
    let e = cell(&trace, head(1, HeadMatrix::Weights), 4, 1);
    assert!(
        e.expansion
            .ends_with("= 1.00 / (0.04 + 1.00 + 0.00 + 0.00 + 0.05) ≈ 1.00 / 1.08 ≈ 0.92"),
        "{}",
        e.expansion
    );
    let note = e.note.as_deref().unwrap();
    assert!(
        note.contains("The exponentials shown add to 1.09, not 1.08, because each was rounded"),
        "{note}"
    );
    assert!(
        note.contains(
            "Redone with the rounded numbers shown, 1.00 / 1.08 comes to ≈ 0.93, but the weight, \
             0.92, is computed from the exact values."
        ),
        "{note}"
    );
}

#[test]
fn a_root_that_is_not_whole_is_written_approximately_and_a_whole_root_exactly() {
    let by = |sentence: &str, d_model: usize, scale: ScaleMode| {
        let trace = trace_of(
            sentence,
            Config {
                d_model,
                n_heads: 2,
                scale,
                ..Config::default()
            },
        );
        cell(&trace, head(0, HeadMatrix::Scaled), 0, 1).expansion
    };
    let d_k_2 = by("I am hungry", 4, ScaleMode::SqrtHeadDim);
    assert!(
        d_k_2.contains(" / √2 ≈ ") && d_k_2.contains(" / 1.4142 "),
        "{d_k_2}"
    );
    let d_k_4 = by("I am hungry", 8, ScaleMode::SqrtHeadDim);
    assert!(
        d_k_4.contains(" / √4 = ") && d_k_4.contains(" / 2 = "),
        "{d_k_4}"
    );
    let seq_len_3 = by("I am hungry", 4, ScaleMode::SqrtSeqLen);
    assert!(seq_len_3.contains(" / √3 ≈ "), "{seq_len_3}");
    let seq_len_4 = by("I am very hungry", 4, ScaleMode::SqrtSeqLen);
    assert!(seq_len_4.contains(" / √4 = "), "{seq_len_4}");
    let src_len_5 = cell(&cross_trace(), head(0, HeadMatrix::Scaled), 0, 1).expansion;
    assert!(
        src_len_5.contains(" / √5 ≈ ") && src_len_5.contains(" / 2.2361 "),
        "{src_len_5}"
    );
}

#[test]
fn with_one_token_the_mask_cell_says_the_mask_hides_nothing() {
    for causal in [true, false] {
        let trace = trace_of(
            "hello",
            Config {
                causal,
                ..Config::default()
            },
        );
        let note = cell(&trace, head(0, HeadMatrix::Masked), 0, 0)
            .note
            .unwrap();
        assert!(
            note.contains("With one token there is nothing above the diagonal"),
            "{note}"
        );
        assert!(!note.contains("later ones"), "{note}");
    }
    // Two tokens still have a cell above the diagonal.
    let note = cell(&causal_trace(), head(0, HeadMatrix::Masked), 0, 1)
        .note
        .unwrap();
    assert!(!note.contains("With one token"), "{note}");
}

#[test]
fn a_one_column_head_says_its_column_comes_from_it_and_wider_heads_say_theirs_come() {
    let narrow = trace_of(
        "I am hungry",
        Config {
            d_model: 8,
            n_heads: 8,
            ..Config::default()
        },
    );
    let note = cell(&narrow, MatrixId::Concat, 0, 2).note.unwrap();
    assert!(
        note.starts_with("Column d3 of C comes from head 3;"),
        "{note}"
    );
    let note = cell(&default_trace(), MatrixId::Concat, 0, 2).note.unwrap();
    assert!(
        note.starts_with("Columns d3–d4 of C come from head 2;"),
        "{note}"
    );
}

#[test]
fn a_repeated_word_given_two_vectors_by_a_scenario_is_not_said_to_share_one() {
    let inputs = Inputs {
        tokens: vec!["a".to_string(), "b".to_string(), "a".to_string()],
        embeddings: Matrix::from_row_slice(3, 2, &[1.0, 0.0, 0.0, 1.0, 0.5, 0.5]),
        weights: Weights::new(Init::Identity, 2),
        config: Config {
            d_model: 2,
            n_heads: 1,
            ..Config::default()
        },
        source: None,
        block: None,
    };
    let trace = forward(&inputs).expect("the fixture runs");
    let note = cell(&trace, MatrixId::Embeddings, 2, 0).note.unwrap();
    assert!(!note.contains("this same vector"), "{note}");
    assert!(note.contains("given different vectors"), "{note}");
}

#[test]
fn a_turned_cell_writes_its_rotation_with_the_pair_the_angle_and_its_real_numbers() {
    let variants = variant_traces();
    let modern = variants.iter().find(|t| t.config.window.is_some()).unwrap();
    // Head 2, row 3 (“sat”, position 2), column 1: the pair (d1, d2)'s first column under the
    // half pairing with d_k = 2.
    let e = cell(modern, head(1, HeadMatrix::QRope), 2, 0);
    assert!(
        e.formula
            .starts_with("Q̃₂[p, a] = Q₂[p, a]·cos φ − Q₂[p, b]·sin φ"),
        "{}",
        e.formula
    );
    let note = e.note.as_deref().unwrap();
    assert!(
        note.contains("position p = 2") && note.contains("pair i = 0"),
        "{note}"
    );
    assert!(note.contains("φ = p·ω = 2 rad"), "{note}");
    let q = &modern.heads[1].q;
    let shown = |v: f64| format_value(v, 2);
    assert!(
        e.expansion.contains(&format!("= {} × ", shown(q[(2, 0)]))),
        "{}",
        e.expansion
    );
    // The scores read the turned rows, and the note says the distance.
    let s = cell(modern, head(1, HeadMatrix::Scores), 4, 2);
    assert!(s.formula.contains("Q̃₂"), "{}", s.formula);
    assert!(s.note.as_deref().unwrap().contains("i − j = 2 here"));
    // The window's mask names W and i − j.
    let m = cell(modern, head(0, HeadMatrix::Masked), 4, 1);
    assert!(m.formula.contains("i − j ≥ 3"), "{}", m.formula);
    assert!(
        m.expansion.contains("outside the window"),
        "{}",
        m.expansion
    );
}
