//! An edit recomputes only what depends on it: `forward_reusing` takes every matrix whose inputs
//! did not change from the previous trace, and its result equals a fresh forward pass exactly.

#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{
    forward, forward_reusing, Block, Config, Init, Inputs, Limits, Matrix, Norm, ScaleMode, Source,
    SplitMix64, Trace, Weights,
};

/// The matrices and switches one edit can change.
#[derive(Debug, Clone, Copy)]
enum Edit {
    Wq,
    Wk,
    Wv,
    Wo,
    Embedding,
    SourceEmbedding,
    LayerNormGain,
    FeedForward,
    Temperature,
    Mask,
}

const EDITS: [Edit; 10] = [
    Edit::Wq,
    Edit::Wk,
    Edit::Wv,
    Edit::Wo,
    Edit::Embedding,
    Edit::SourceEmbedding,
    Edit::LayerNormGain,
    Edit::FeedForward,
    Edit::Temperature,
    Edit::Mask,
];

fn random_matrix(rng: &mut SplitMix64, rows: usize, cols: usize) -> Matrix {
    Matrix::from_fn(rows, cols, |_, _| rng.next_symmetric(2.0, 3))
}

/// Random inputs: `seq_len` tokens, a source of `src_len` tokens when given, the block in
/// `norm` when given.
fn scenario(seed: u64, n_heads: usize, source: Option<usize>, norm: Option<Norm>) -> Inputs {
    let mut rng = SplitMix64::new(seed);
    let (d_model, seq_len) = (8, 5);
    let config = Config {
        d_model,
        n_heads,
        causal: source.is_none(),
        positional_encoding: seed.is_multiple_of(2),
        scale: ScaleMode::ALL[(seed % 3) as usize],
        temperature: 0.7,
        ..Config::default()
    };
    Inputs {
        tokens: (0..seq_len).map(|i| format!("t{i}")).collect(),
        embeddings: random_matrix(&mut rng, seq_len, d_model),
        weights: Weights::new(Init::Random(seed), d_model),
        config,
        source: source.map(|src_len| Source {
            tokens: (0..src_len).map(|i| format!("s{i}")).collect(),
            embeddings: random_matrix(&mut rng, src_len, d_model),
        }),
        block: norm.map(|norm| Block {
            norm,
            ..Block::new(d_model, 16)
        }),
    }
}

/// `inputs` after one edit; `false` when the scenario has nothing the edit could change.
fn apply(inputs: &mut Inputs, edit: Edit) -> bool {
    let nudge = |m: &mut Matrix, r: usize, c: usize| m[(r, c)] += 0.25;
    match edit {
        Edit::Wq => nudge(&mut inputs.weights.w_q, 1, 2),
        Edit::Wk => nudge(&mut inputs.weights.w_k, 0, 3),
        Edit::Wv => nudge(&mut inputs.weights.w_v, 2, 1),
        Edit::Wo => nudge(&mut inputs.weights.w_o, 3, 0),
        Edit::Embedding => nudge(&mut inputs.embeddings, 2, 2),
        Edit::SourceEmbedding => match &mut inputs.source {
            Some(s) => nudge(&mut s.embeddings, 1, 1),
            None => return false,
        },
        Edit::LayerNormGain => match &mut inputs.block {
            Some(b) => nudge(&mut b.ln_1_gamma, 0, 1),
            None => return false,
        },
        Edit::FeedForward => match &mut inputs.block {
            Some(b) => nudge(&mut b.w_1, 1, 1),
            None => return false,
        },
        Edit::Temperature => inputs.config.temperature = 1.3,
        Edit::Mask => {
            if inputs.source.is_some() {
                return false;
            }
            inputs.config.causal = !inputs.config.causal;
        }
    }
    true
}

fn fresh(inputs: &Inputs) -> Trace {
    forward(inputs).expect("the scenario is valid")
}

fn reused(inputs: &Inputs, previous: &Trace) -> Trace {
    forward_reusing(inputs, &Limits::APP, Some(previous)).expect("the scenario is valid")
}

#[test]
fn after_any_edit_the_reused_trace_equals_a_fresh_one_exactly() {
    let mut checked = 0;
    for seed in 0..6 {
        for n_heads in [1, 2, 4] {
            for source in [None, Some(3)] {
                for norm in [None, Some(Norm::Pre), Some(Norm::Post)] {
                    let before = scenario(seed, n_heads, source, norm);
                    let previous = fresh(&before);
                    for edit in EDITS {
                        let mut after = before.clone();
                        if !apply(&mut after, edit) {
                            continue;
                        }
                        assert_eq!(
                            reused(&after, &previous),
                            fresh(&after),
                            "{edit:?}, seed {seed}, {n_heads} heads, source {source:?}, {norm:?}"
                        );
                        checked += 1;
                    }
                    assert_eq!(reused(&before, &previous), previous, "no edit");
                }
            }
        }
    }
    assert!(checked > 300, "only {checked} edits were checked");
}

/// A previous trace whose every head's scores and whose concatenation are marked with a value
/// no forward pass computes, so a result that carries the mark took them from it.
fn marked(mut trace: Trace) -> Trace {
    for head in &mut trace.heads {
        head.scores[(0, 0)] = 1234.5;
        head.weights[(0, 0)] = 0.5;
    }
    trace.concat[(0, 0)] = 1234.5;
    trace
}

#[test]
fn a_w_v_edit_keeps_the_scores_and_weights_and_recomputes_the_values() {
    let before = scenario(3, 2, None, None);
    let previous = marked(fresh(&before));
    let mut after = before.clone();
    apply(&mut after, Edit::Wv);
    let trace = reused(&after, &previous);
    for head in &trace.heads {
        assert_eq!(head.scores[(0, 0)], 1234.5, "the scores were recomputed");
        assert_eq!(head.weights[(0, 0)], 0.5, "the weights were recomputed");
    }
    assert_ne!(trace.v, previous.v);
    assert_ne!(trace.concat[(0, 0)], 1234.5, "the concatenation was kept");
}

#[test]
fn a_w_o_edit_keeps_everything_up_to_the_concatenation() {
    let before = scenario(4, 4, Some(3), Some(Norm::Post));
    let previous = marked(fresh(&before));
    let mut after = before.clone();
    apply(&mut after, Edit::Wo);
    let trace = reused(&after, &previous);
    assert_eq!(
        trace.concat[(0, 0)],
        1234.5,
        "the concatenation was recomputed"
    );
    assert_ne!(trace.output, previous.output);
}

#[test]
fn a_w_q_edit_recomputes_the_scores_of_the_head_that_owns_the_column_and_no_other() {
    // d_model 8 and 4 heads: the edit at W_q[1, 2] changes Q's column 2, which head 1 (from 0)
    // takes, as columns 2 and 3.
    let before = scenario(5, 4, None, Some(Norm::Pre));
    let previous = marked(fresh(&before));
    let mut after = before.clone();
    apply(&mut after, Edit::Wq);
    let trace = reused(&after, &previous);
    for (h, head) in trace.heads.iter().enumerate() {
        let kept = head.scores[(0, 0)] == 1234.5 && head.weights[(0, 0)] == 0.5;
        assert_eq!(kept, h != 1, "head {h}");
    }
    let fresh = fresh(&after);
    assert_eq!(trace.heads[1], fresh.heads[1]);
    assert_ne!(trace.heads[1], previous.heads[1]);
    // The W_k edit at [0, 3] changes head 1's keys too.
    let mut after = before.clone();
    apply(&mut after, Edit::Wk);
    let trace = reused(&after, &previous);
    let kept: Vec<bool> = trace
        .heads
        .iter()
        .map(|h| h.scores[(0, 0)] == 1234.5)
        .collect();
    assert_eq!(kept, [true, false, true, true]);
}

#[test]
fn a_settings_change_starts_afresh() {
    let before = scenario(6, 2, None, None);
    let previous = marked(fresh(&before));
    let mut after = before.clone();
    after.config.scale = ScaleMode::None;
    assert_eq!(reused(&after, &previous), fresh(&after));
}
