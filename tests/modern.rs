//! Today's attention in the core: rotary positions, shared key/value heads and the sliding
//! window, each checked against an independent construction of what it should equal.

// Native tests: the browser target runs its own.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{
    forward, AttentionError, Config, Init, Inputs, Matrix, Pairing, Rope, Source, SplitMix64,
    Trace, Weights,
};

const SENTENCE: &str = "the animal did not cross the street because it was tired";

fn random(rng: &mut SplitMix64, rows: usize, cols: usize) -> Matrix {
    Matrix::from_fn(rows, cols, |_, _| rng.next_symmetric(1.0, 6))
}

fn inputs(config: Config, seed: u64) -> Inputs {
    let mut rng = SplitMix64::new(seed);
    let (d, kv) = (config.d_model, config.kv_width());
    let weights = Weights {
        w_q: random(&mut rng, d, d),
        w_k: random(&mut rng, d, kv),
        w_v: random(&mut rng, d, kv),
        w_o: random(&mut rng, d, d),
    };
    Inputs::from_sentence(SENTENCE, config, weights).unwrap()
}

fn run(inputs: &Inputs) -> Trace {
    forward(inputs).unwrap()
}

fn close(a: &Matrix, b: &Matrix) -> bool {
    a.shape() == b.shape() && (a - b).amax() < 1e-12
}

/// W with each key/value head's columns repeated for every query head that reads it, as
/// Hugging Face's `repeat_kv` repeats the keys and values themselves.
fn repeated(w: &Matrix, config: &Config) -> Matrix {
    let d_k = config.head_dim();
    let mut out = Matrix::zeros(w.nrows(), config.d_model);
    for h in 0..config.n_heads {
        let g = config.kv_head(h);
        out.columns_mut(h * d_k, d_k)
            .copy_from(&w.columns(g * d_k, d_k));
    }
    out
}

#[test]
fn shared_key_value_heads_equal_standard_attention_with_the_heads_repeated() {
    for (n_heads, n_kv) in [(4, 2), (4, 1), (2, 1), (8, 4)] {
        let config = Config {
            d_model: 16,
            n_heads,
            causal: n_kv == 1,
            kv_heads: Some(n_kv),
            ..Config::default()
        };
        let grouped = inputs(config, 7);
        let mut standard = grouped.clone();
        standard.config.kv_heads = None;
        standard.weights.w_k = repeated(&grouped.weights.w_k, &config);
        standard.weights.w_v = repeated(&grouped.weights.w_v, &config);
        let (a, b) = (run(&grouped), run(&standard));
        assert_eq!(a.k.ncols(), n_kv * config.head_dim());
        assert!(
            close(&a.output, &b.output),
            "{n_heads} heads, {n_kv} shared"
        );
        // Contiguous groups: heads 0 and 1 of 4 read key/value head 0 when there are 2.
        let kv: Vec<usize> = a.heads.iter().map(|h| h.kv_head).collect();
        let group = n_heads / n_kv;
        assert_eq!(kv, (0..n_heads).map(|h| h / group).collect::<Vec<_>>());
    }
}

#[test]
fn interleaving_the_groups_gives_other_outputs() {
    let config = Config {
        d_model: 8,
        n_heads: 4,
        kv_heads: Some(2),
        ..Config::default()
    };
    let grouped = inputs(config, 3);
    let mut interleaved = grouped.clone();
    interleaved.config.kv_heads = None;
    let d_k = config.head_dim();
    let spread = |w: &Matrix| {
        let mut out = Matrix::zeros(w.nrows(), config.d_model);
        for h in 0..config.n_heads {
            out.columns_mut(h * d_k, d_k)
                .copy_from(&w.columns((h % 2) * d_k, d_k));
        }
        out
    };
    interleaved.weights.w_k = spread(&grouped.weights.w_k);
    interleaved.weights.w_v = spread(&grouped.weights.w_v);
    assert!(!close(&run(&grouped).output, &run(&interleaved).output));
}

/// A column permutation of each head's columns that takes the half pairing to the
/// interleaved one: the half pairing's column `i` and `i + d_k/2` become `2i` and `2i + 1`.
fn to_interleaved(w: &Matrix, n_heads: usize) -> Matrix {
    let d_k = w.ncols() / n_heads;
    let mut out = w.clone();
    for h in 0..n_heads {
        for i in 0..d_k / 2 {
            out.set_column(h * d_k + 2 * i, &w.column(h * d_k + i));
            out.set_column(h * d_k + 2 * i + 1, &w.column(h * d_k + i + d_k / 2));
        }
    }
    out
}

#[test]
fn the_pairings_are_related_by_a_column_permutation_of_w_q_and_w_k() {
    let config = Config {
        d_model: 8,
        n_heads: 2,
        causal: true,
        rope: Some(Rope::default()),
        ..Config::default()
    };
    let half = inputs(config, 11);
    let mut interleaved = half.clone();
    interleaved.config.rope = Some(Rope {
        pairing: Pairing::Interleaved,
        ..Rope::default()
    });
    let same_weights = run(&interleaved);
    interleaved.weights.w_q = to_interleaved(&half.weights.w_q, 2);
    interleaved.weights.w_k = to_interleaved(&half.weights.w_k, 2);
    let (a, b) = (run(&half), run(&interleaved));
    for (ha, hb) in a.heads.iter().zip(&b.heads) {
        assert!(close(&ha.scores, &hb.scores));
    }
    // Mixing the pairings, the same weights give other scores.
    assert!(!close(&a.heads[0].scores, &same_weights.heads[0].scores));
}

#[test]
fn rotary_positions_turn_queries_and_keys_and_leave_the_values() {
    let config = Config {
        d_model: 4,
        n_heads: 1,
        rope: Some(Rope::default()),
        ..Config::default()
    };
    let t = run(&inputs(config, 5));
    let head = &t.heads[0];
    let (q, k) = (head.q_rope.as_ref().unwrap(), head.k_rope.as_ref().unwrap());
    // Row 0 is not turned; row 1's first pair (columns 0 and 2) by 1 radian.
    assert!(close(
        &q.rows(0, 1).into_owned(),
        &head.q.rows(0, 1).into_owned()
    ));
    let (a, b) = (head.q[(1, 0)], head.q[(1, 2)]);
    assert!((q[(1, 0)] - (a * 1f64.cos() - b * 1f64.sin())).abs() < 1e-12);
    assert!((q[(1, 2)] - (a * 1f64.sin() + b * 1f64.cos())).abs() < 1e-12);
    assert!(close(&head.scores, &(q * k.transpose())));
    assert!(close(&head.v, &t.v));
    // The rotation keeps each row's length.
    for r in 0..q.nrows() {
        assert!((q.row(r).norm() - head.q.row(r).norm()).abs() < 1e-12);
    }
}

#[test]
fn with_rotary_positions_a_score_depends_on_the_distance_only() {
    // The same token everywhere: every query and key row is the same before turning, so the
    // scores must be constant along each diagonal.
    let config = Config {
        d_model: 8,
        n_heads: 2,
        rope: Some(Rope::default()),
        ..Config::default()
    };
    let mut same = inputs(config, 2);
    same.tokens = vec!["x".into(); 6];
    same.embeddings = Matrix::from_fn(6, 8, |_, c| 0.3 * c as f64 - 1.0);
    let t = run(&same);
    let s = &t.heads[1].scores;
    for i in 0..6 {
        for j in 0..6 {
            if i > 0 && j > 0 {
                assert!((s[(i, j)] - s[(i - 1, j - 1)]).abs() < 1e-12, "({i}, {j})");
            }
        }
    }
    // Turning every position by the same extra angle changes no score.
    let rope = config.rope.unwrap();
    let head = &t.heads[1];
    let shifted = rope.rotate(&head.q, 5) * rope.rotate(&head.k, 5).transpose();
    assert!(close(&shifted, s));
}

#[test]
fn the_window_hides_keys_that_many_tokens_back_and_the_later_ones() {
    let config = Config {
        causal: true,
        window: Some(3),
        ..Config::default()
    };
    let t = run(&inputs(config, 4));
    for head in &t.heads {
        for i in 0..t.seq_len() {
            for j in 0..t.seq_len() {
                let visible = j <= i && i - j < 3;
                assert_eq!(head.masked[(i, j)].is_finite(), visible, "({i}, {j})");
                assert_eq!(head.weights[(i, j)] > 0.0, visible);
            }
        }
    }
    // A window as long as the sentence is the causal mask alone.
    let long = Config {
        window: Some(t.seq_len()),
        ..config
    };
    let open = Config {
        window: None,
        ..config
    };
    assert!(close(
        &run(&inputs(long, 4)).output,
        &run(&inputs(open, 4)).output
    ));
}

#[test]
fn each_new_setting_refuses_what_it_cannot_do() {
    let refused = |config: Config| {
        let weights = Weights::shaped(Init::Default, config.d_model, config.kv_width());
        Inputs::from_sentence("a b c", config, weights).unwrap_err()
    };
    let base = Config::default();
    assert!(matches!(
        refused(Config {
            d_model: 6,
            n_heads: 2,
            rope: Some(Rope::default()),
            ..base
        }),
        AttentionError::RopeOddHeadWidth { d_k: 3 }
    ));
    assert!(matches!(
        refused(Config {
            rope: Some(Rope {
                theta: 0.5,
                ..Rope::default()
            }),
            ..base
        }),
        AttentionError::RopeTheta { .. }
    ));
    let err = refused(Config {
        d_model: 8,
        n_heads: 4,
        kv_heads: Some(3),
        ..base
    });
    assert!(err.to_string().contains("choose one of 1, 2 or 4"), "{err}");
    assert_eq!(
        refused(Config {
            window: Some(2),
            ..base
        }),
        AttentionError::WindowNeedsCausal
    );
    assert_eq!(
        refused(Config {
            causal: true,
            window: Some(0),
            ..base
        }),
        AttentionError::WindowZero
    );
    // Rotary positions with a source sentence.
    let mut with_source = inputs(
        Config {
            rope: Some(Rope::default()),
            ..base
        },
        1,
    );
    with_source.source = Some(Source::from_sentence("x y", 4).unwrap());
    assert_eq!(
        forward(&with_source).unwrap_err(),
        AttentionError::RopeWithSource
    );
    // W_k of the wrong width for the key/value heads.
    let mut narrow = inputs(
        Config {
            kv_heads: Some(1),
            ..base
        },
        1,
    );
    narrow.weights.w_k = Matrix::zeros(4, 4);
    let err = forward(&narrow).unwrap_err();
    assert!(err.to_string().contains("W_k"), "{err}");
}
