//! Properties of the attention core that hold for every valid configuration, checked with
//! proptest, and one small example worked out by hand.

// Native tests: they read files and run the CLI, which the browser target cannot.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{
    forward, positional_encoding, AttentionError, Config, Inputs, Matrix, ScaleMode, Trace, Weights,
};
use proptest::prelude::*;

/// Cases per property: enough to meet every shape, few enough to stay fast in debug builds.
const CASES: u32 = 256;

/// Largest number of tokens generated.
const MAX_SEQ_LEN: usize = 12;

fn cases() -> ProptestConfig {
    ProptestConfig::with_cases(CASES)
}

// ---------------------------------------------------------------------------------------------
// Strategies.

/// Temperatures across the whole supported range, log-uniform, with 1 common.
fn temperature() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(1.0),
        (-2.0f64..=2.0).prop_map(|e| 10f64.powf(e).clamp(0.01, 100.0)),
    ]
}

/// A valid configuration: `d_model` in 2..=16 and a head count that divides it.
fn config() -> impl Strategy<Value = Config> {
    (2usize..=16).prop_flat_map(|d_model| {
        (
            prop::sample::select(Config::valid_head_counts(d_model)),
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(ScaleMode::ALL.to_vec()),
            temperature(),
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

/// A `rows × cols` matrix with entries in [-3, 3].
fn matrix(rows: usize, cols: usize) -> impl Strategy<Value = Matrix> {
    prop::collection::vec(-3.0f64..=3.0, rows * cols)
        .prop_map(move |values| Matrix::from_row_slice(rows, cols, &values))
}

/// Inputs for `config`: 1 to [`MAX_SEQ_LEN`] tokens, embeddings and weights in [-3, 3].
fn inputs_for(config: Config) -> impl Strategy<Value = Inputs> {
    let d = config.d_model;
    (1usize..=MAX_SEQ_LEN).prop_flat_map(move |seq_len| {
        (
            matrix(seq_len, d),
            matrix(d, d),
            matrix(d, d),
            matrix(d, d),
            matrix(d, d),
        )
            .prop_map(move |(embeddings, w_q, w_k, w_v, w_o)| Inputs {
                tokens: (0..seq_len).map(|i| format!("t{i}")).collect(),
                embeddings,
                weights: Weights { w_q, w_k, w_v, w_o },
                config,
                source: None,
                block: None,
            })
    })
}

/// Inputs for any valid configuration.
fn inputs() -> impl Strategy<Value = Inputs> {
    config().prop_flat_map(inputs_for)
}

/// Inputs whose configuration has been adjusted by `adjust`.
fn inputs_with(adjust: fn(Config) -> Config) -> impl Strategy<Value = Inputs> {
    config().prop_map(adjust).prop_flat_map(inputs_for)
}

fn run(inputs: &Inputs) -> Trace {
    forward(inputs).expect("generated inputs are valid and moderate")
}

// ---------------------------------------------------------------------------------------------
// Plain reference computations, written from the formulas rather than from the core.

/// Largest absolute entry, at least 1: the scale that rounding errors are measured against.
fn magnitude(m: &Matrix) -> f64 {
    m.iter().fold(1.0, |acc, v| acc.max(v.abs()))
}

fn assert_close(
    label: &str,
    actual: &Matrix,
    expected: &Matrix,
    tol: f64,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(actual.shape(), expected.shape(), "{}: shapes differ", label);
    for i in 0..actual.nrows() {
        for j in 0..actual.ncols() {
            let (a, e) = (actual[(i, j)], expected[(i, j)]);
            prop_assert!(
                (a - e).abs() <= tol,
                "{label}: cell ({i}, {j}) is {a}, expected {e} (tolerance {tol:e})"
            );
        }
    }
    Ok(())
}

/// Row-wise softmax over the keys `visible(query, key)` allows; hidden keys get weight 0.
fn softmax_visible(z: &Matrix, visible: impl Fn(usize, usize) -> bool) -> Matrix {
    let mut out = Matrix::zeros(z.nrows(), z.ncols());
    for i in 0..z.nrows() {
        let keys: Vec<usize> = (0..z.ncols()).filter(|&j| visible(i, j)).collect();
        let top = keys
            .iter()
            .map(|&j| z[(i, j)])
            .fold(f64::NEG_INFINITY, f64::max);
        let total: f64 = keys.iter().map(|&j| (z[(i, j)] - top).exp()).sum();
        for &j in &keys {
            out[(i, j)] = (z[(i, j)] - top).exp() / total;
        }
    }
    out
}

/// The textbook single head, softmax(Q·Kᵀ / √d_k)·V with Q = X·W_q, K = X·W_k, V = X·W_v.
/// Returns (weights, context).
fn textbook_attention(x: &Matrix, w_q: &Matrix, w_k: &Matrix, w_v: &Matrix) -> (Matrix, Matrix) {
    let q = x * w_q;
    let k = x * w_k;
    let v = x * w_v;
    let d_k = q.ncols() as f64;
    let z = (&q * k.transpose()) / d_k.sqrt();
    let a = softmax_visible(&z, |_, _| true);
    let context = &a * &v;
    (a, context)
}

/// One head computed on its own from the column blocks of the projections. Returns
/// (scaled scores, weights, context), the context being (seq_len, head_dim).
fn head_alone(trace: &Trace, inputs: &Inputs, h: usize) -> (Matrix, Matrix, Matrix) {
    let config = inputs.config;
    let head_dim = config.head_dim();
    let block = |w: &Matrix| w.columns(h * head_dim, head_dim).into_owned();
    let w = &inputs.weights;
    // X is taken from the trace: the positional encoding has its own test.
    let q_h = &trace.x * block(&w.w_q);
    let k_h = &trace.x * block(&w.w_k);
    let v_h = &trace.x * block(&w.w_v);
    let divisor = config.scale.divisor(head_dim, inputs.seq_len());
    let scaled = (&q_h * k_h.transpose()) / divisor;
    let causal = config.causal;
    let a = softmax_visible(&(&scaled / config.temperature), |i, j| !causal || j <= i);
    let context = &a * &v_h;
    (scaled, a, context)
}

// ---------------------------------------------------------------------------------------------
// Properties.

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn every_weight_row_sums_to_one(inputs in inputs()) {
        let trace = run(&inputs);
        for (h, head) in trace.heads.iter().enumerate() {
            for i in 0..head.weights.nrows() {
                let sum: f64 = head.weights.row(i).iter().sum();
                prop_assert!((sum - 1.0).abs() <= 1e-12, "head {h}, row {i} sums to {sum}");
                prop_assert!(head.weights.row(i).iter().all(|w| (0.0..=1.0).contains(w)));
            }
            prop_assert!(head.fully_masked_rows.is_empty());
        }
    }

    #[test]
    fn causal_weights_are_exactly_zero_above_the_diagonal(
        inputs in inputs_with(|c| Config { causal: true, ..c })
    ) {
        let trace = run(&inputs);
        for (h, head) in trace.heads.iter().enumerate() {
            for i in 0..head.weights.nrows() {
                for j in (i + 1)..head.weights.ncols() {
                    prop_assert_eq!(head.weights[(i, j)], 0.0, "head {}, ({}, {})", h, i, j);
                    prop_assert_eq!(head.masked[(i, j)], f64::NEG_INFINITY);
                }
            }
        }
    }

    #[test]
    fn under_the_causal_mask_a_later_token_never_changes_an_earlier_output(
        (inputs, later, new_row) in inputs_with(|c| Config { causal: true, ..c })
            .prop_flat_map(|inputs| {
                let (seq_len, d) = (inputs.seq_len(), inputs.config.d_model);
                (Just(inputs), 0..seq_len, matrix(1, d))
            })
    ) {
        let before = run(&inputs);
        let mut changed = inputs.clone();
        changed.embeddings.row_mut(later).copy_from(&new_row);
        let after = run(&changed);
        // Exact equality: a hidden key contributes exp(−∞) = 0 to every earlier sum.
        for i in 0..later {
            prop_assert_eq!(before.output.row(i), after.output.row(i), "output row {}", i);
            for (h, (b, a)) in before.heads.iter().zip(&after.heads).enumerate() {
                prop_assert_eq!(b.weights.row(i), a.weights.row(i), "head {} weights row {}", h, i);
            }
        }
    }

    #[test]
    fn one_head_is_the_textbook_formula(
        inputs in inputs_with(|c| Config {
            n_heads: 1,
            causal: false,
            positional_encoding: false,
            scale: ScaleMode::SqrtHeadDim,
            temperature: 1.0,
            ..c
        })
    ) {
        let trace = run(&inputs);
        let w = &inputs.weights;
        let (weights, context) = textbook_attention(&inputs.embeddings, &w.w_q, &w.w_k, &w.w_v);
        let head = &trace.heads[0];
        // Rounding in the scores, relative to their size, moves the weights.
        let tol = 1e-13 * magnitude(&head.scaled);
        assert_close("weights", &head.weights, &weights, tol)?;
        assert_close("context", &head.context, &context, tol * magnitude(&trace.v))?;
        assert_close(
            "output",
            &trace.output,
            &(&context * &w.w_o),
            tol * magnitude(&trace.v) * magnitude(&w.w_o),
        )?;
    }

    #[test]
    fn each_head_equals_its_column_blocks_computed_alone(inputs in inputs()) {
        let trace = run(&inputs);
        let head_dim = inputs.config.head_dim();
        for (h, head) in trace.heads.iter().enumerate() {
            let cols = h * head_dim;
            // Splitting and concatenating only move numbers around.
            prop_assert_eq!(&head.q, &trace.q.columns(cols, head_dim).into_owned());
            prop_assert_eq!(&head.k, &trace.k.columns(cols, head_dim).into_owned());
            prop_assert_eq!(&head.v, &trace.v.columns(cols, head_dim).into_owned());
            prop_assert_eq!(&head.context, &trace.concat.columns(cols, head_dim).into_owned());

            let (scaled, weights, context) = head_alone(&trace, &inputs, h);
            let tol = 1e-13 * magnitude(&scaled) / inputs.config.temperature;
            assert_close(&format!("head {h} scaled"), &head.scaled, &scaled, 1e-12 * magnitude(&scaled))?;
            assert_close(&format!("head {h} weights"), &head.weights, &weights, tol)?;
            assert_close(
                &format!("head {h} context"),
                &head.context,
                &context,
                tol * magnitude(&head.v),
            )?;
        }
    }

    #[test]
    fn the_output_is_the_sum_of_each_head_through_its_rows_of_w_o(inputs in inputs()) {
        let trace = run(&inputs);
        let head_dim = inputs.config.head_dim();
        let w_o = &inputs.weights.w_o;
        let mut sum = Matrix::zeros(inputs.seq_len(), inputs.config.d_model);
        for (h, head) in trace.heads.iter().enumerate() {
            sum += &head.context * w_o.rows(h * head_dim, head_dim);
        }
        let tol = 1e-13 * magnitude(&trace.concat) * magnitude(w_o);
        assert_close("output", &trace.output, &sum, tol)?;
    }

    #[test]
    fn a_tiny_temperature_puts_nearly_all_weight_on_a_clear_maximum(
        inputs in inputs_with(|c| Config { temperature: 0.01, ..c })
    ) {
        let trace = run(&inputs);
        for (h, head) in trace.heads.iter().enumerate() {
            for i in 0..head.masked.nrows() {
                let mut visible: Vec<(usize, f64)> = head
                    .masked
                    .row(i)
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|(_, z)| z.is_finite())
                    .collect();
                visible.sort_by(|a, b| b.1.total_cmp(&a.1));
                let (best, top) = visible[0];
                // With a gap of at least 0.1 and temperature 0.01, every other key is at most
                // e^(−10) times the best, so the best gets at least 1 / (1 + 11·e^(−10)) > 0.999.
                let clear = visible.get(1).is_none_or(|&(_, second)| top - second >= 0.1);
                if clear {
                    prop_assert!(
                        head.weights[(i, best)] >= 0.99,
                        "head {h}, row {i}: weight {} on the maximum",
                        head.weights[(i, best)]
                    );
                }
            }
        }
    }

    #[test]
    fn huge_inputs_give_finite_weights_not_an_error(
        (inputs, huge_weights) in inputs().prop_flat_map(|inputs| (Just(inputs), any::<bool>()))
    ) {
        let mut inputs = inputs;
        inputs.embeddings *= 1e30;
        if huge_weights {
            inputs.weights.w_q *= 1e30;
            inputs.weights.w_k *= 1e30;
        }
        let trace = forward(&inputs);
        prop_assert!(trace.is_ok(), "{:?}", trace.err());
        let trace = trace.unwrap();
        for head in &trace.heads {
            prop_assert!(head.weights.iter().all(|w| w.is_finite()));
            for i in 0..head.weights.nrows() {
                let sum: f64 = head.weights.row(i).iter().sum();
                prop_assert!((sum - 1.0).abs() <= 1e-12, "row {i} sums to {sum}");
            }
        }
        prop_assert!(trace.output.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn every_matrix_has_its_documented_shape(inputs in inputs()) {
        let trace = run(&inputs);
        let (seq_len, d_model) = (inputs.seq_len(), inputs.config.d_model);
        let head_dim = inputs.config.head_dim();
        prop_assert_eq!(trace.output.shape(), (seq_len, d_model));
        prop_assert_eq!(trace.concat.shape(), (seq_len, d_model));
        prop_assert_eq!(trace.heads.len(), inputs.config.n_heads);
        for head in &trace.heads {
            prop_assert_eq!(head.q.shape(), (seq_len, head_dim));
            prop_assert_eq!(head.weights.shape(), (seq_len, seq_len));
            prop_assert_eq!(head.context.shape(), (seq_len, head_dim));
        }
    }

    #[test]
    fn scaled_scores_are_the_scores_over_the_chosen_divisor(inputs in inputs()) {
        let trace = run(&inputs);
        let config = inputs.config;
        let expected = match config.scale {
            ScaleMode::SqrtHeadDim => (config.head_dim() as f64).sqrt(),
            ScaleMode::SqrtSeqLen => (inputs.seq_len() as f64).sqrt(),
            ScaleMode::None => 1.0,
        };
        prop_assert_eq!(trace.scale_divisor, expected);
        for head in &trace.heads {
            prop_assert_eq!(&head.scaled, &(&head.scores / expected));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Concrete checks.

/// Inputs with the given config, embeddings rows and weights.
fn fixed_inputs(config: Config, rows: &[&[f64]], weights: Weights) -> Inputs {
    let d = config.d_model;
    let flat: Vec<f64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
    Inputs {
        tokens: (0..rows.len()).map(|i| format!("t{i}")).collect(),
        embeddings: Matrix::from_row_slice(rows.len(), d, &flat),
        weights,
        config,
        source: None,
        block: None,
    }
}

fn identity_weights(d: usize) -> Weights {
    let i = Matrix::identity(d, d);
    Weights {
        w_q: i.clone(),
        w_k: i.clone(),
        w_v: i.clone(),
        w_o: i,
    }
}

#[test]
fn the_default_scale_divides_by_the_root_of_the_head_width_not_the_sentence_length() {
    // d_model 8 in 2 heads: head_dim 4, √4 = 2. Nine tokens: √9 = 3.
    let rows: Vec<Vec<f64>> = (0..9)
        .map(|i| (0..8).map(|j| ((i * 8 + j) % 7) as f64 - 3.0).collect())
        .collect();
    let rows: Vec<&[f64]> = rows.iter().map(Vec::as_slice).collect();
    let config = Config {
        d_model: 8,
        n_heads: 2,
        ..Config::default()
    };
    let by_head_dim = forward(&fixed_inputs(config, &rows, identity_weights(8))).unwrap();
    assert_eq!(by_head_dim.scale_divisor, 2.0);
    for head in &by_head_dim.heads {
        assert_eq!(head.scaled, &head.scores / 2.0);
    }

    let config = Config {
        scale: ScaleMode::SqrtSeqLen,
        ..config
    };
    let by_seq_len = forward(&fixed_inputs(config, &rows, identity_weights(8))).unwrap();
    assert_eq!(by_seq_len.scale_divisor, 3.0);
    assert_eq!(
        by_seq_len.heads[1].scaled,
        &by_seq_len.heads[1].scores / 3.0
    );
    // Same scores, different scaling.
    assert_eq!(by_seq_len.heads[1].scores, by_head_dim.heads[1].scores);
    assert_ne!(by_seq_len.heads[1].weights, by_head_dim.heads[1].weights);
}

#[test]
fn the_positional_encoding_is_added_to_the_embeddings() {
    let config = Config {
        d_model: 4,
        n_heads: 1,
        positional_encoding: true,
        ..Config::default()
    };
    let rows: [&[f64]; 3] = [&[0.5, -0.5, 1.0, 0.0], &[0.0; 4], &[2.0, 1.0, 0.0, -1.0]];
    let inputs = fixed_inputs(config, &rows, identity_weights(4));
    let trace = forward(&inputs).unwrap();
    assert_eq!(trace.x, &inputs.embeddings + positional_encoding(3, 4));
    // Position 1, column 1 is cos(1 / 10000^0) = cos 1.
    assert!((trace.x[(1, 1)] - 1f64.cos()).abs() < 1e-15);
}

#[test]
fn entries_too_large_to_multiply_are_an_overflow_error_not_nan() {
    let config = Config {
        d_model: 2,
        n_heads: 1,
        ..Config::default()
    };
    let rows: [&[f64]; 2] = [&[1e300, 1e300], &[-1e300, 1e300]];
    let mut weights = identity_weights(2);
    weights.w_q *= 1e10;
    let err = forward(&fixed_inputs(config, &rows, weights)).unwrap_err();
    assert!(matches!(err, AttentionError::Overflow { .. }), "{err:?}");
}

/// A two-token example small enough to do by hand.
///
/// d_model 2, one head (d_k = 2), every projection the identity, so Q = K = V = X:
///
/// ```text
/// X = [1 0]      scores = X·Xᵀ = [1 1]      scaled = scores / √2 = [0.7071 0.7071]
///     [1 1]                      [1 2]                             [0.7071 1.4142]
/// ```
///
/// Row 0 has two equal scores, so its weights are 1/2 and 1/2. Row 1's scores differ by
/// 1/√2, so its weights are 1/(1 + e^(1/√2)) and e^(1/√2)/(1 + e^(1/√2)); e^0.7071 = 2.0281,
/// giving 0.3302 and 0.6698.
///
/// ```text
/// context row 0 = ½·(1, 0) + ½·(1, 1)           = (1, 0.5)
/// context row 1 = 0.3302·(1, 0) + 0.6698·(1, 1) = (1, 0.6698)
/// ```
///
/// and the output equals the context because W_o is the identity. With the causal mask, row 0
/// sees only itself: weights (1, 0), context (1, 0); row 1 is unchanged.
#[test]
fn a_two_token_example_worked_out_by_hand() {
    let config = Config {
        d_model: 2,
        n_heads: 1,
        ..Config::default()
    };
    let rows: [&[f64]; 2] = [&[1.0, 0.0], &[1.0, 1.0]];
    let trace = forward(&fixed_inputs(config, &rows, identity_weights(2))).unwrap();
    let head = &trace.heads[0];

    let r = 0.5f64.sqrt(); // 1/√2
    let low = 1.0 / (1.0 + r.exp());
    let high = 1.0 - low;
    let close = |a: &Matrix, expected: &[f64], tol: f64| {
        let got: Vec<f64> = a.transpose().iter().copied().collect(); // row-major
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(expected) {
            assert!((g - e).abs() <= tol, "{got:?} is not {expected:?}");
        }
    };

    close(&head.scores, &[1.0, 1.0, 1.0, 2.0], 1e-15);
    close(&head.scaled, &[r, r, r, 2.0 * r], 1e-15);
    close(&head.weights, &[0.5, 0.5, low, high], 1e-15);
    close(&head.weights, &[0.5, 0.5, 0.3302, 0.6698], 5e-5);
    close(&trace.output, &[1.0, 0.5, 1.0, high], 1e-15);
    close(&trace.output, &[1.0, 0.5, 1.0, 0.6698], 5e-5);

    let causal = Config {
        causal: true,
        ..config
    };
    let trace = forward(&fixed_inputs(causal, &rows, identity_weights(2))).unwrap();
    close(&trace.heads[0].weights, &[1.0, 0.0, 0.3302, 0.6698], 5e-5);
    close(&trace.output, &[1.0, 0.0, 1.0, 0.6698], 5e-5);
}

/// Known core bug, kept failing until it is fixed: `softmax_rows` divides a row by the
/// temperature before subtracting its maximum, so scores that are finite but overflow once
/// divided by a small temperature all become +∞ and share the row equally, even though one is
/// clearly larger. Subtracting the maximum first, `exp((z − max) / T)`, gives the same result
/// everywhere else and never overflows.
#[test]
fn scores_that_overflow_only_after_the_temperature_still_favour_the_largest() {
    let config = Config {
        d_model: 2,
        n_heads: 1,
        temperature: 0.01,
        ..Config::default()
    };
    // scores = X·Xᵀ = [4e306 3.8e306; 3.8e306 3.61e306], finite; ÷ √2 ÷ 0.01 overflows.
    let rows: [&[f64]; 2] = [&[2e153, 0.0], &[1.9e153, 0.0]];
    let trace = forward(&fixed_inputs(config, &rows, identity_weights(2))).unwrap();
    let head = &trace.heads[0];
    assert!(head.scaled.iter().all(|z| z.is_finite()));
    // In both rows key 0 scores higher by more than 1e304 / 0.01: all weight belongs to it.
    for i in 0..2 {
        assert_eq!(
            (head.weights[(i, 0)], head.weights[(i, 1)]),
            (1.0, 0.0),
            "row {i} of {}",
            head.weights
        );
    }
}
