//! Every what-if mistake against numbers worked out by hand on tiny inputs.
//!
//! The fixtures use one-hot (or nearly one-hot) embeddings and identity or zero projections, so
//! each score is a small whole number and each weight a short expression in e.

// Native tests: they read files and run the CLI, which the browser target cannot.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::whatif::{
    compare, compare_unstable, saturation_by_head_dim, temperature_sweep, Comparison, WhatIf,
    HUGE_SCORES, SATURATION_HEAD_DIMS, SATURATION_KEYS,
};
use attention_lens::attention::{
    AttentionError, Config, Inputs, Matrix, ScaleMode, Stage, Weights,
};
use attention_lens::words::{comparison_summary, denominators_text};

const TOL: f64 = 1e-6;

fn assert_close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() < TOL,
        "{what}: expected {expected}, got {actual}"
    );
}

fn e() -> f64 {
    1f64.exp()
}

/// Inputs with one head over all of `d_model`, W_v = W_o = identity.
fn one_head(embeddings: Matrix, w_q: Matrix, w_k: Matrix, causal: bool) -> Inputs {
    let d_model = embeddings.ncols();
    Inputs {
        tokens: (0..embeddings.nrows()).map(|i| format!("t{i}")).collect(),
        weights: Weights {
            w_q,
            w_k,
            w_v: Matrix::identity(d_model, d_model),
            w_o: Matrix::identity(d_model, d_model),
        },
        embeddings,
        config: Config {
            d_model,
            n_heads: 1,
            causal,
            positional_encoding: false,
            scale: ScaleMode::SqrtHeadDim,
            temperature: 1.0,
            ..Config::default()
        },
        source: None,
        block: None,
    }
}

/// Four tokens in d_model = 16 (one head, so d_k = 16): token i is 2·eᵢ and W_q = W_k = I, so
/// the scores are S = 4·I. √d_k = 4 and √seq_len = 2, so the correct scaled scores are I and
/// the √seq_len ones 2·I.
fn four_orthogonal_tokens() -> Inputs {
    let x = Matrix::from_fn(4, 16, |i, j| if i == j { 2.0 } else { 0.0 });
    one_head(x, Matrix::identity(16, 16), Matrix::identity(16, 16), false)
}

fn weight(c: &Comparison, altered: bool, i: usize, j: usize) -> f64 {
    let (correct, alt) = c.weights(0).unwrap();
    if altered {
        alt[(i, j)]
    } else {
        correct[(i, j)]
    }
}

#[test]
fn dividing_by_root_seq_len_instead_of_root_d_k_sharpens_a_short_sentence() {
    let c = compare(&four_orthogonal_tokens(), WhatIf::ScaleBySeqLen).unwrap();
    assert_eq!(c.stage(), Stage::Scale);
    // √d_k = √16 = 4 on the correct side, √seq_len = √4 = 2 on the altered side.
    assert_eq!(c.correct.scale_divisor, 4.0);
    assert_eq!(c.altered.scale_divisor, 2.0);
    assert_eq!(c.altered.config.scale, ScaleMode::SqrtSeqLen);
    let (correct_scaled, altered_scaled) = c.stage_matrices(0).unwrap();
    // S = 4·I: 4/4 = 1 and 4/2 = 2 on the diagonal.
    assert_eq!((correct_scaled[(0, 0)], altered_scaled[(0, 0)]), (1.0, 2.0));
    // Correct row: [1, 0, 0, 0] → e/(e + 3) ≈ 0.475367 on the diagonal, 1/(e + 3) ≈ 0.174878.
    assert_close(
        weight(&c, false, 0, 0),
        e() / (e() + 3.0),
        "correct diagonal",
    );
    assert_close(
        weight(&c, false, 0, 1),
        1.0 / (e() + 3.0),
        "correct off-diagonal",
    );
    // Altered row: [2, 0, 0, 0] → e²/(e² + 3) ≈ 0.711235, 1/(e² + 3) ≈ 0.096255.
    let e2 = 2f64.exp();
    assert_close(weight(&c, true, 0, 0), e2 / (e2 + 3.0), "altered diagonal");
    assert_close(
        weight(&c, true, 2, 3),
        1.0 / (e2 + 3.0),
        "altered off-diagonal",
    );
    // Every row looks alike, so the mean largest weight is the diagonal weight.
    let (correct_sat, altered_sat) = c.saturation(0).unwrap();
    assert_close(correct_sat.mean_max_weight, 0.475367, "correct saturation");
    assert_close(altered_sat.mean_max_weight, 0.711235, "altered saturation");
    assert!(altered_sat.mean_entropy < correct_sat.mean_entropy);
    // W_v = W_o = I and V = X = 2·I, so output row 0 is 2·(weights of row 0).
    let (correct_out, altered_out) = c.outputs();
    assert_close(correct_out[(0, 0)], 2.0 * 0.475367, "correct output");
    assert_close(altered_out[(0, 0)], 2.0 * 0.711235, "altered output");
    assert_close(
        c.max_output_change(),
        2.0 * (0.711235 - 0.475367),
        "output change",
    );
}

#[test]
fn when_seq_len_equals_d_k_the_wrong_divisor_happens_to_agree() {
    // Four tokens, d_k = 4: √seq_len = √d_k = 2.
    let x = Matrix::from_fn(4, 4, |i, j| if i == j { 2.0 } else { 0.0 });
    let inputs = one_head(x, Matrix::identity(4, 4), Matrix::identity(4, 4), false);
    let c = compare(&inputs, WhatIf::ScaleBySeqLen).unwrap();
    assert_eq!(c.correct.scale_divisor, c.altered.scale_divisor);
    assert_eq!(c.max_output_change(), 0.0);
}

#[test]
fn no_scaling_feeds_the_raw_scores_to_the_softmax_and_saturates_it() {
    let c = compare(&four_orthogonal_tokens(), WhatIf::NoScaling).unwrap();
    assert_eq!(c.altered.scale_divisor, 1.0);
    // Raw row [4, 0, 0, 0] → e⁴/(e⁴ + 3) ≈ 0.947915 and 1/(e⁴ + 3) ≈ 0.017362.
    let e4 = 4f64.exp();
    assert_close(weight(&c, true, 1, 1), e4 / (e4 + 3.0), "diagonal");
    assert_close(weight(&c, true, 1, 0), 1.0 / (e4 + 3.0), "off-diagonal");
    let (correct_sat, altered_sat) = c.saturation(0).unwrap();
    assert_close(altered_sat.mean_max_weight, 0.947915, "saturation");
    assert!(altered_sat.mean_max_weight > correct_sat.mean_max_weight);
    // Entropy of [0.947915, 3 × 0.017362]: −(0.947915 ln 0.947915 + 3 · 0.017362 ln 0.017362)
    // ≈ 0.050704 + 0.211127 = 0.261830, far below the correct side's.
    assert_close(altered_sat.mean_entropy, 0.261830, "entropy");
    assert!(correct_sat.mean_entropy > 1.0);
}

/// Three tokens in d_model = 4: x₀ = 2e₀, x₁ = 2e₁, x₂ = 0. W_k = I, and W_q sends e₁ to e₀, so
/// q₀ = q₁ = (2, 0, 0, 0), q₂ = 0 and k = x. Scores S = [[4, 0, 0], [4, 0, 0], [0, 0, 0]],
/// scaled by √d_k = 2 to Z = [[2, 0, 0], [2, 0, 0], [0, 0, 0]].
fn two_tokens_like_the_first() -> Inputs {
    let x = Matrix::from_row_slice(
        3,
        4,
        &[2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    );
    let mut w_q = Matrix::identity(4, 4);
    w_q[(1, 1)] = 0.0;
    w_q[(1, 0)] = 1.0;
    one_head(x, w_q, Matrix::identity(4, 4), false)
}

#[test]
fn softmax_over_columns_makes_columns_sum_to_one_and_rows_drift() {
    let c = compare(&two_tokens_like_the_first(), WhatIf::SoftmaxOverColumns).unwrap();
    assert_eq!(c.stage(), Stage::Softmax);
    let e2 = 2f64.exp();
    // Correct rows 0 and 1: [e², 1, 1]/(e² + 2) ≈ [0.786986, 0.106507, 0.106507]; row 2: 1/3.
    assert_close(weight(&c, false, 1, 0), e2 / (e2 + 2.0), "correct row 1");
    // Altered column 0: [e², e², 1]/(2e² + 1) ≈ [0.468311, 0.468311, 0.063378]; columns 1
    // and 2 are all zeros, so 1/3 each.
    assert_close(
        weight(&c, true, 0, 0),
        e2 / (2.0 * e2 + 1.0),
        "column 0, row 0",
    );
    assert_close(
        weight(&c, true, 2, 0),
        1.0 / (2.0 * e2 + 1.0),
        "column 0, row 2",
    );
    assert_close(weight(&c, true, 1, 2), 1.0 / 3.0, "column 2");
    let head = &c.altered.heads[0];
    // Rows: 0.468311 + 2/3 ≈ 1.134978 twice, and 0.063378 + 2/3 ≈ 0.730045.
    assert_close(head.row_sums[0], 1.134978, "row 0 sum");
    assert_close(head.row_sums[1], 1.134978, "row 1 sum");
    assert_close(head.row_sums[2], 0.730045, "row 2 sum");
    for (j, s) in head.column_sums.iter().enumerate() {
        assert_close(*s, 1.0, &format!("column {j} sum"));
    }
    // Context row 0 = 0.468311·(2, 0, 0, 0) + (1/3)·(0, 2, 0, 0) ≈ (0.936622, 0.666667, 0, 0),
    // where the correct one is 0.786986·(2, 0, 0, 0) + 0.106507·(0, 2, 0, 0).
    let (correct_out, altered_out) = c.outputs();
    assert_close(altered_out[(0, 0)], 0.936622, "altered output x");
    assert_close(altered_out[(0, 1)], 2.0 / 3.0, "altered output y");
    assert_close(correct_out[(0, 0)], 2.0 * 0.786986, "correct output x");
    assert!(head.leaked.is_empty() && head.non_finite.is_empty());
}

#[test]
fn softmax_over_columns_keeps_the_mask_so_nothing_leaks() {
    let mut inputs = two_tokens_like_the_first();
    inputs.config.causal = true;
    let c = compare(&inputs, WhatIf::SoftmaxOverColumns).unwrap();
    let head = &c.altered.heads[0];
    assert!(head.leaked.is_empty());
    // Column 2 has one visible query (row 2), which gets all of it.
    assert_eq!(head.weights[(2, 2)], 1.0);
    assert!(head.column_sums.iter().all(|s| (s - 1.0).abs() < TOL));
}

/// Three tokens, x = [e₀; e₁; e₂] in d_model = 4, W_k = I and W_q zero except W_q[0][2] = −4000:
/// S = x·W_q·W_kᵀ·xᵀ is zero except S[0][2] = −4000, so Z[0][2] = −4000/2 = −2000.
fn three_tokens_one_hopeless_pair(causal: bool) -> Inputs {
    let x = Matrix::from_fn(3, 4, |i, j| if i == j { 1.0 } else { 0.0 });
    let mut w_q = Matrix::zeros(4, 4);
    w_q[(0, 2)] = -4000.0;
    one_head(x, w_q, Matrix::identity(4, 4), causal)
}

#[test]
fn no_causal_mask_leaks_exactly_the_future_cells_with_positive_weight() {
    let c = compare(&three_tokens_one_hopeless_pair(true), WhatIf::NoCausalMask).unwrap();
    assert_eq!(c.stage(), Stage::Mask);
    assert!(c.correct.config.causal && !c.altered.config.causal);
    // Correct: row 0 sees itself (1), row 1 two tokens (1/2 each), row 2 three (1/3 each).
    assert_eq!(weight(&c, false, 0, 0), 1.0);
    assert_close(weight(&c, false, 1, 1), 0.5, "correct row 1");
    assert_close(weight(&c, false, 2, 0), 1.0 / 3.0, "correct row 2");
    // Altered row 0: [0, 0, −2000] → [1/2, 1/2, e^−2000 = 0]; rows 1 and 2: 1/3 each.
    assert_close(weight(&c, true, 0, 1), 0.5, "altered row 0");
    assert_eq!(weight(&c, true, 0, 2), 0.0);
    assert_close(weight(&c, true, 1, 2), 1.0 / 3.0, "altered row 1");
    // Above the diagonal: (0, 1) has 1/2 and (1, 2) has 1/3, but (0, 2) has 0: it is hidden
    // by its score, not by the mask, so it does not leak.
    assert_eq!(c.altered.heads[0].leaked, vec![(0, 1), (1, 2)]);
    // The mask stage shows −∞ above the diagonal on the correct side only.
    let (correct_masked, altered_masked) = c.stage_matrices(0).unwrap();
    assert_eq!(correct_masked[(0, 1)], f64::NEG_INFINITY);
    assert_eq!(altered_masked[(0, 1)], 0.0);
    // V = X = one-hot, so output row 0 is row 0's weights: (1, 0, 0, 0) becomes (½, ½, 0, 0).
    let (correct_out, altered_out) = c.outputs();
    assert_eq!(correct_out[(0, 0)], 1.0);
    assert_close(altered_out[(0, 0)], 0.5, "output of token 0");
    assert_close(altered_out[(0, 1)], 0.5, "token 0 reads token 1");
}

#[test]
fn the_correct_side_of_no_causal_mask_is_masked_even_if_the_inputs_were_not() {
    let c = compare(&three_tokens_one_hopeless_pair(false), WhatIf::NoCausalMask).unwrap();
    assert!(c.correct.config.causal);
    assert_eq!(c.altered.heads[0].leaked, vec![(0, 1), (1, 2)]);
}

#[test]
fn other_mistakes_on_unmasked_inputs_report_no_leaks() {
    let c = compare(&three_tokens_one_hopeless_pair(false), WhatIf::NoScaling).unwrap();
    assert!(c.altered.heads[0].leaked.is_empty());
}

#[test]
fn a_low_temperature_sharpens_and_a_high_one_flattens() {
    let inputs = four_orthogonal_tokens();
    let cold = compare(&inputs, WhatIf::Temperature(0.1)).unwrap();
    let hot = compare(&inputs, WhatIf::Temperature(10.0)).unwrap();
    assert_eq!(cold.correct.config.temperature, 1.0);
    assert_eq!(cold.altered.config.temperature, 0.1);
    // Correct scaled row [1, 0, 0, 0]. T = 0.1: [10, 0, 0, 0] → e¹⁰/(e¹⁰ + 3) ≈ 0.999864.
    let e10 = 10f64.exp();
    assert_close(weight(&cold, true, 0, 0), e10 / (e10 + 3.0), "T = 0.1");
    // T = 10: [0.1, 0, 0, 0] → e^0.1/(e^0.1 + 3) ≈ 0.269215, others 1/(e^0.1 + 3) ≈ 0.243595.
    let e01 = 0.1f64.exp();
    assert_close(weight(&hot, true, 0, 0), e01 / (e01 + 3.0), "T = 10");
    assert_close(weight(&hot, true, 0, 3), 1.0 / (e01 + 3.0), "T = 10, other");
    // Entropy ordering: T = 0.1 < T = 1 < T = 10 < ln 4 (even weights).
    let (one, sharp) = cold.saturation(0).unwrap();
    let (_, flat) = hot.saturation(0).unwrap();
    assert!(sharp.mean_entropy < one.mean_entropy);
    assert!(one.mean_entropy < flat.mean_entropy);
    assert!(flat.mean_entropy < 4f64.ln());
}

#[test]
fn at_the_ends_of_the_temperature_range_rows_approach_one_hot_and_even() {
    let c = compare(&four_orthogonal_tokens(), WhatIf::Temperature(1.0)).unwrap();
    let sweep = temperature_sweep(&c.correct, 0, 0, &[0.01, 1.0, 100.0]).unwrap();
    // T = 0.01: [100, 0, 0, 0] → 1/(1 + 3e⁻¹⁰⁰): 1 to within 1e-43, the rest e⁻¹⁰⁰ ≈ 3.7e-44.
    assert_eq!(sweep[0].weights[0], 1.0);
    assert!(sweep[0].weights[1] < 1e-40);
    assert!(sweep[0].entropy < 1e-40);
    // T = 100: [0.01, 0, 0, 0] → e^0.01/(e^0.01 + 3) ≈ 0.251880, within 0.002 of 1/4.
    assert_close(
        sweep[2].weights[0],
        0.01f64.exp() / (0.01f64.exp() + 3.0),
        "T = 100",
    );
    assert!(sweep[2].weights.iter().all(|w| (w - 0.25).abs() < 0.002));
    assert!(4f64.ln() - sweep[2].entropy < 1e-4);
    // The sweep at T = 1 is the trace's own row.
    assert_close(sweep[1].weights[0], e() / (e() + 3.0), "T = 1");
    assert!(temperature_sweep(&c.correct, 1, 0, &[1.0]).is_none());
    assert!(temperature_sweep(&c.correct, 0, 4, &[1.0]).is_none());
}

#[test]
fn a_temperature_the_core_refuses_is_an_error_not_a_panic() {
    let err = compare(&four_orthogonal_tokens(), WhatIf::Temperature(1000.0)).unwrap_err();
    assert_eq!(err, AttentionError::BadTemperature { value: 1000.0 });
}

/// Two tokens in d_model = 4: x₀ = (1, 1, 0, 0), x₁ = (0, 0, 1, 0), every W the identity.
/// S = [[2, 0], [0, 1]], scaled by √4 = 2 to [[1, 0], [0, 0.5]].
fn two_tokens_for_overflow() -> Inputs {
    let x = Matrix::from_row_slice(2, 4, &[1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    one_head(x, Matrix::identity(4, 4), Matrix::identity(4, 4), false)
}

#[test]
fn the_naive_softmax_gives_nan_on_huge_scores_where_the_stable_one_sums_to_one() {
    let c = compare(&two_tokens_for_overflow(), WhatIf::UnstableSoftmax).unwrap();
    assert_eq!(c.score_multiplier, HUGE_SCORES);
    // W_q × 100 makes the scores 100·S: 200 and 100 on the diagonal, then ÷2.
    let correct = &c.correct.heads[0];
    assert_eq!(correct.scores[(0, 0)], 200.0);
    assert_eq!(correct.masked[(0, 0)], 100.0);
    assert_eq!(correct.masked[(1, 1)], 50.0);
    // Stable row 0: [100, 0] − 100 → [1, e⁻¹⁰⁰] / (1 + e⁻¹⁰⁰). Row 1: [0, 50] − 50 →
    // [e⁻⁵⁰, 1] / (1 + e⁻⁵⁰). Finite, each row summing to 1.
    assert_eq!(correct.weights[(0, 0)], 1.0);
    assert_close(correct.weights[(0, 1)], (-100f64).exp(), "stable e⁻¹⁰⁰");
    assert_eq!(correct.weights[(1, 1)], 1.0);
    for i in 0..2 {
        assert_close(correct.weights.row(i).sum(), 1.0, "stable row sum");
    }
    // Naive, in f32: row 0: exp(100) > f32::MAX ≈ e^88.7, so ∞/∞ = NaN and 1/∞ = 0. Row 1:
    // exp(50) ≈ 5.2e21 is finite in f32, so [1/(1 + 5.2e21), 1] ≈ [1.9e-22, 1] survives.
    let altered = &c.altered.heads[0];
    assert!(altered.weights[(0, 0)].is_nan());
    assert_eq!(altered.weights[(0, 1)], 0.0);
    assert_eq!(altered.weights[(1, 1)], 1.0);
    let tiny = altered.weights[(1, 0)];
    assert!((tiny / (-50f64).exp() - 1.0).abs() < 1e-6, "{tiny}");
    assert_eq!(altered.non_finite, vec![(0, 0)]);
    assert!(altered.row_sums[0].is_nan());
    // NaN·0 is NaN, so the whole of token 0's output is lost; token 1's is intact.
    let (correct_out, altered_out) = c.outputs();
    assert!(altered_out.row(0).iter().all(|v| v.is_nan()));
    for j in 0..4 {
        assert_close(altered_out[(1, j)], correct_out[(1, j)], "token 1's output");
    }
    assert!(c.max_output_change().is_nan());
    assert!(altered.saturation.mean_max_weight.is_nan());
    let summary = comparison_summary(&c, 0).join(" ");
    assert!(summary.contains("1 of 2 rows contain NaN"), "{summary}");
    assert!(
        summary.contains("The other rows stayed within the limits and match the stable softmax."),
        "{summary}"
    );
}

#[test]
fn a_row_whose_exps_sum_past_f32s_largest_number_is_all_zero_and_the_summary_says_so() {
    // Two equal tokens x = (1, 0, 0, 0), every W the identity: S is all 1, scaled by √4 to 0.5.
    // Times 177 every score is 88.5: exp(88.5) ≈ 2.7e38 is finite in f32, but two of them
    // sum past f32::MAX ≈ 3.4e38, so each weight is finite/∞ = 0, with no NaN anywhere.
    let x = Matrix::from_row_slice(2, 4, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    let inputs = one_head(x, Matrix::identity(4, 4), Matrix::identity(4, 4), false);
    let c = compare_unstable(&inputs, 177.0).unwrap();
    let altered = &c.altered.heads[0];
    assert_eq!(c.correct.heads[0].masked[(0, 0)], 88.5);
    assert!(altered.non_finite.is_empty());
    assert!(altered.weights.iter().all(|&w| w == 0.0));
    let summary = comparison_summary(&c, 0).join(" ");
    assert!(
        summary.contains("2 of 2 rows have no NaN but every weight 0"),
        "{summary}"
    );
    assert!(!summary.contains("contain NaN"), "{summary}");
    assert!(!summary.contains("The other rows"), "{summary}");
}

#[test]
fn a_row_of_tiny_exps_is_named_as_off_and_an_underflowed_row_as_nan() {
    // Causal, every W the identity, the scores times −206 and ÷√4: each score is −103·S.
    // Row 0 sees only itself: −103 · 1.21 ≈ −124.6, every exp rounds to 0 in f32, so 0/0 = NaN.
    // Row 1 sees [−103 · 1.0, −103 · 1.006] ≈ [−103.0, −103.6]: exps of about 1.9e-45 and
    // 1.0e-45, below f32's smallest normal number, both round to one step of 1.4e-45, so the
    // naive row reads [0.5, 0.5] where the stable one reads about [0.65, 0.35].
    let x1 = [1.0 / 1.1, (1.006f64 - 1.0 / 1.21).sqrt()];
    let x = Matrix::from_row_slice(2, 4, &[1.1, 0.0, 0.0, 0.0, x1[0], x1[1], 0.0, 0.0]);
    let inputs = one_head(x, Matrix::identity(4, 4), Matrix::identity(4, 4), true);
    let c = compare_unstable(&inputs, -206.0).unwrap();
    let altered = &c.altered.heads[0];
    assert!(altered.weights[(0, 0)].is_nan());
    assert_eq!(altered.weights[(1, 0)], 0.5);
    assert_eq!(altered.weights[(1, 1)], 0.5);
    assert!((c.correct.heads[0].weights[(1, 0)] - 0.65).abs() < 0.01);
    let summary = comparison_summary(&c, 0).join(" ");
    assert!(
        summary.contains("1 of 2 rows contain NaN: without the maximum subtracted, an exp overflowed to ∞ (∞/∞) or every exp rounded to 0 (0/0) in f32."),
        "{summary}"
    );
    assert!(
        summary.contains("1 other row differs from the stable softmax"),
        "{summary}"
    );
    assert!(!summary.contains("match the stable softmax"), "{summary}");
}

#[test]
fn on_ordinary_scores_the_naive_softmax_agrees_with_the_stable_one() {
    let c = compare_unstable(&two_tokens_for_overflow(), 1.0).unwrap();
    assert_eq!(c.score_multiplier, 1.0);
    // Row 0: [1, 0] → e/(e + 1) ≈ 0.731059 on both sides, to f32 precision.
    assert!((weight(&c, true, 0, 0) - e() / (e() + 1.0)).abs() < 1e-6);
    assert!(c.altered.heads[0].non_finite.is_empty());
    assert!(c.max_output_change() < 1e-6);
}

#[test]
fn an_infinite_multiplier_is_refused_as_a_non_finite_w_q() {
    let err = compare_unstable(&two_tokens_for_overflow(), f64::INFINITY).unwrap_err();
    assert!(matches!(err, AttentionError::NotFinite { ref name, .. } if name == "W_q"));
}

#[test]
fn every_mistake_in_the_menu_runs_on_the_same_inputs() {
    let inputs = two_tokens_like_the_first();
    for what in WhatIf::ALL {
        let c = compare(&inputs, what).unwrap();
        assert_eq!(c.what, what);
        assert_eq!(c.altered.heads.len(), 1);
        assert_eq!(c.altered.output.shape(), (3, 4));
    }
}

#[test]
fn without_scaling_the_softmax_saturates_as_heads_widen_and_root_d_k_keeps_it_steady() {
    for seed in [1, 7, 2024] {
        let points = saturation_by_head_dim(&SATURATION_HEAD_DIMS, seed, ScaleMode::SqrtHeadDim);
        assert_eq!(points.len(), SATURATION_HEAD_DIMS.len());
        // d_k = 1: √1 = 1, so both sides divide by the same number.
        assert_eq!(points[0].unscaled, points[0].scaled);
        for pair in points.windows(2) {
            assert!(
                pair[1].unscaled > pair[0].unscaled,
                "seed {seed}: unscaled saturation fell from d_k = {} to {}",
                pair[0].head_dim,
                pair[1].head_dim
            );
        }
        // Scores with a spread of √128 ≈ 11 over 16 keys: the top key nearly always wins.
        let last = points.last().unwrap();
        assert!(last.unscaled > 0.85, "seed {seed}: {last:?}");
        assert!(last.unscaled > 3.0 * last.scaled);
        // With √d_k every score has variance 1 whatever d_k, so the mean largest weight stays
        // near the value for 16 keys with unit-variance scores, about 1/4. At d_k = 1 and 2 it
        // is lower: the spread of one row's scores is |q|, which varies most when q is short.
        for p in &points {
            assert!((0.15..0.3).contains(&p.scaled), "seed {seed}: {p:?}");
        }
        let wide: Vec<f64> = points[2..].iter().map(|p| p.scaled).collect();
        let lo = wide.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = wide.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert!(
            hi - lo < 0.04,
            "seed {seed}: d_k ≥ 4 ranges over {lo}..{hi}"
        );
    }
}

#[test]
fn dividing_by_root_seq_len_does_not_stop_the_saturation() {
    let points = saturation_by_head_dim(&SATURATION_HEAD_DIMS, 7, ScaleMode::SqrtSeqLen);
    // The divisor is √16 = 4 for every width, so it cannot keep up with √d_k.
    let keys = SATURATION_KEYS as f64;
    assert!(points.iter().all(|p| p.divisor == keys.sqrt()));
    for pair in points.windows(2) {
        assert!(pair[1].scaled > pair[0].scaled);
    }
    assert!(points.last().unwrap().scaled > 2.0 * points[2].scaled);
}

#[test]
fn the_saturation_series_is_reproducible_from_its_seed() {
    let a = saturation_by_head_dim(&[3, 12], 42, ScaleMode::SqrtHeadDim);
    let b = saturation_by_head_dim(&[3, 12], 42, ScaleMode::SqrtHeadDim);
    assert_eq!(a, b);
    assert_ne!(
        a,
        saturation_by_head_dim(&[3, 12], 43, ScaleMode::SqrtHeadDim)
    );
    // A width does not depend on which other widths were asked for.
    assert_eq!(
        saturation_by_head_dim(&[12], 42, ScaleMode::SqrtHeadDim)[0],
        a[1]
    );
    assert!(saturation_by_head_dim(&[0], 42, ScaleMode::None).is_empty());
}

/// Two tokens whose scores are S = [[2, 0], [0, 1]] in one head of width d_k = 4 (see
/// `two_tokens_for_overflow`), with or without the causal mask.
fn two_tokens(causal: bool) -> Inputs {
    let x = Matrix::from_row_slice(2, 4, &[1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    one_head(x, Matrix::identity(4, 4), Matrix::identity(4, 4), causal)
}

#[test]
fn dividing_by_d_k_instead_of_its_root_flattens_the_weights() {
    let c = compare(&two_tokens(false), WhatIf::ScaleByHeadDim).unwrap();
    // Correct: S/√4 = [[1, 0], [0, 0.5]]. Mistake: S/4 = [[0.5, 0], [0, 0.25]].
    let altered = &c.altered.heads[0];
    assert_close(altered.scaled[(0, 0)], 0.5, "S/d_k");
    assert_close(altered.scaled[(1, 1)], 0.25, "S/d_k");
    assert_close(c.altered.scale_divisor, 4.0, "divisor d_k");
    // Row 0: e/(e + 1) ≈ 0.731 correct, e^0.5/(e^0.5 + 1) ≈ 0.622 with the mistake.
    assert_close(weight(&c, false, 0, 0), e() / (e() + 1.0), "correct row 0");
    let half = 0.5f64.exp();
    assert_close(weight(&c, true, 0, 0), half / (half + 1.0), "d_k row 0");
    let summary = comparison_summary(&c, 0).join(" ");
    assert!(
        summary.contains("0.68 correct, 0.59 with the mistake"),
        "{summary}"
    );
}

#[test]
fn a_softmax_sum_that_repeats_one_term_gives_one_over_n_and_nan_under_the_mask() {
    let c = compare(&two_tokens(false), WhatIf::RepeatedDenominator).unwrap();
    // exp(z_ij) / (2·exp(z_ij)) = 1/2 in every cell, whatever the scores.
    for i in 0..2 {
        for j in 0..2 {
            assert_eq!(weight(&c, true, i, j), 0.5);
        }
    }
    // Row 0, key 0: 2·e¹ ≈ 5.44 repeated, e¹ + e⁰ ≈ 3.72 as it should be. Row 1 = [0, 0.5],
    // key 0: 2·e⁰ = 2 repeated, 1 + e^0.5 ≈ 2.65 as it should be.
    let (wrong, right) = c.denominators(0, 0, 0).unwrap();
    assert_close(wrong, 2.0 * e(), "repeated sum");
    assert_close(right, e() + 1.0, "right sum");
    let text = denominators_text(&c, 0, 0, 0).unwrap();
    assert!(
        text.starts_with("Row “t0”, key “t0”: the repeated sum is 5.44, the right one 3.72"),
        "{text}"
    );
    let (wrong, right) = c.denominators(0, 1, 0).unwrap();
    assert_close(wrong, 2.0, "repeated sum, row 1");
    assert_close(right, 1.0 + 0.5f64.exp(), "right sum, row 1");
    assert!(denominators_text(&c, 0, 1, 0)
        .unwrap()
        .starts_with("Row “t1”, key “t0”"));
    assert!(c.denominators(0, 2, 0).is_none());

    // Under the mask token 0 cannot see token 1: exp(−∞)/(2·exp(−∞)) = 0/0.
    let c = compare(&two_tokens(true), WhatIf::RepeatedDenominator).unwrap();
    let altered = &c.altered.heads[0];
    assert_eq!(altered.weights[(0, 0)], 0.5);
    assert!(altered.weights[(0, 1)].is_nan());
    assert_eq!(altered.non_finite, vec![(0, 1)]);
    let summary = comparison_summary(&c, 0).join(" ");
    assert!(
        summary.contains("1 of 2 rows contain NaN: a hidden key gives 0/0"),
        "{summary}"
    );
    // Row “t1” is 1/2, 1/2 whatever its scores: no word of f32 digits or of rows that are right.
    assert!(!summary.contains("other row"), "{summary}");
}

#[test]
fn leaving_out_w_o_keeps_the_weights_and_ends_at_the_concatenation() {
    let mut inputs = two_tokens(false);
    // W_o = 2·I: the correct output is twice the concatenation.
    inputs.weights.w_o = Matrix::identity(4, 4) * 2.0;
    let c = compare(&inputs, WhatIf::NoOutputProjection).unwrap();
    let (correct, altered) = c.weights(0).unwrap();
    assert_eq!(correct, altered);
    let (y, without) = c.outputs();
    assert_eq!(without, &c.correct.concat);
    assert_eq!(y, &(&c.correct.concat * 2.0));
    // Row 0 of C: weights [e/(e + 1), 1/(e + 1)] times V = X, so d1 = e/(e + 1).
    assert_close(without[(0, 0)], e() / (e() + 1.0), "C[0, d1]");
    assert_close(
        c.max_output_change(),
        without.iter().fold(0.0, |m: f64, v| m.max(v.abs())),
        "largest change = largest |C|",
    );
    let summary = comparison_summary(&c, 0).join(" ");
    assert!(!summary.contains("Mean largest weight"), "{summary}");
    // With W_o the identity, nothing changes.
    let c = compare(&two_tokens(false), WhatIf::NoOutputProjection).unwrap();
    assert_eq!(c.max_output_change(), 0.0);
}

/// The lab runs on cross-attention inside a pre-norm block: every what-if compares without a
/// panic, and the causal one, which needs self-attention, is refused with a reason.
#[test]
fn every_what_if_runs_on_cross_attention_in_a_block() {
    use attention_lens::attention::{Block, Norm, Source};
    let config = Config {
        d_model: 4,
        n_heads: 2,
        ..Config::default()
    };
    let mut inputs = Inputs::from_sentence(
        "the black cat",
        config,
        attention_lens::attention::Weights::new(attention_lens::attention::Init::Default, 4),
    )
    .unwrap();
    inputs.source = Some(Source::from_sentence("le chat noir dort", 4).unwrap());
    let mut block = Block::new(4, 8);
    block.norm = Norm::Pre;
    inputs.block = Some(block);
    for what in WhatIf::ALL {
        let result = compare(&inputs, what);
        if what == WhatIf::NoCausalMask {
            let err = result.unwrap_err().to_string();
            assert!(err.contains("self-attention"), "{err}");
            continue;
        }
        let c = result.unwrap_or_else(|e| panic!("{what:?}: {e}"));
        let (correct, altered) = c.weights(0).unwrap();
        assert_eq!(correct.shape(), (3, 4), "{what:?}");
        assert_eq!(altered.shape(), (3, 4), "{what:?}");
    }
}

#[test]
fn one_leaked_cell_is_counted_in_the_singular_and_the_change_is_named_as_attentions_output_y() {
    // Two tokens under the mask: one cell above the diagonal, which the switch lets through.
    let c = compare(&two_tokens(true), WhatIf::NoCausalMask).unwrap();
    let lines = comparison_summary(&c, 0);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("1 cell above the diagonal now gets weight")),
        "{lines:?}"
    );
    // With the block on, Y is the attention sub-layer's output, so the line names Y.
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("Largest change in attention's output Y: "),
        "{lines:?}"
    );
    assert!(!lines.iter().any(|l| l.contains("layer's output")));
}

#[test]
fn no_scaling_says_a_row_can_saturate_not_that_every_row_lands_on_one_token() {
    let text = attention_lens::words::whatif_explanation(WhatIf::NoScaling);
    assert!(
        !text.contains("each row ends up on a single token"),
        "{text}"
    );
    assert!(
        text.contains(
            "Large differences push the softmax towards all-or-nothing weights, where a row can put almost all its weight on one token."
        ),
        "{text}"
    );
}

#[test]
fn the_repeated_sum_names_a_repeated_word_by_its_position() {
    let config = Config {
        d_model: 4,
        n_heads: 2,
        causal: false,
        positional_encoding: false,
        scale: ScaleMode::SqrtHeadDim,
        temperature: 1.0,
        ..Config::default()
    };
    let inputs = Inputs::from_sentence(
        "the cat saw the dog",
        config,
        Weights::new(attention_lens::attention::Init::Default, 4),
    )
    .unwrap();
    let c = compare(&inputs, WhatIf::RepeatedDenominator).unwrap();
    let text = denominators_text(&c, 0, 0, 3).unwrap();
    assert!(text.starts_with("Row “the (1)”, key “the (4)”:"), "{text}");
    let text = denominators_text(&c, 1, 1, 0).unwrap();
    assert!(text.starts_with("Row “cat”, key “the (1)”:"), "{text}");
}

#[test]
fn with_one_column_heads_no_scaling_is_not_said_to_differ_from_standard_attention() {
    let one_column = Config {
        d_model: 4,
        n_heads: 4,
        causal: false,
        positional_encoding: false,
        scale: ScaleMode::None,
        temperature: 1.0,
        ..Config::default()
    };
    let text = attention_lens::words::no_mistake_text(&one_column, false);
    assert!(!text.contains("which differ from it"), "{text}");
    assert!(
        text.contains("with d_k = 1 give the same numbers"),
        "{text}"
    );
    let wider = Config {
        n_heads: 2,
        ..one_column
    };
    assert!(attention_lens::words::no_mistake_text(&wider, false).contains("which differ from it"));
}
