//! Decoding from a KV cache: after the first `prefill` tokens are processed at once, each next
//! token is processed alone. Its query meets the keys and values of every token so far, kept in
//! the cache (one row more per step), so the earlier tokens' keys and values are never computed
//! again. Under the causal mask a token reads only the tokens before it and itself, so each
//! step's output row equals the same row of the full pass.
//!
//! Only what a step computes is counted as multiply-adds: the new token's query (d_model²), key
//! and value (2·d_model·n_kv_heads·d_k together), each query head's scores and weighted sum over
//! the cached rows it can see (2·d_k a row: `i + 1` rows, at most `W` under a sliding window),
//! and the output projection (d_model²); turning a query or key by rotary positions is not
//! counted. Without the cache the step would also recompute the keys and values of the `i`
//! earlier tokens: 2·i·d_model·n_kv_heads·d_k more. The cache holds `2·(i + 1)·n_kv_heads·d_k`
//! numbers after step `i`: sharing key/value heads shrinks it.

use super::error::AttentionError;
use super::forward::{softmax_rows, Trace};
use super::Matrix;

/// What one head computes at a decoding step.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeHead {
    /// The new token's query, turned by its position under rotary positions. (1, d_k)
    pub q: Matrix,
    /// Its raw scores with every cached key, before scaling. (1, i + 1)
    pub scores: Matrix,
    /// Its attention weights over the cache. (1, i + 1)
    pub weights: Matrix,
    /// The weighted sum of the cached values. (1, d_k)
    pub context: Matrix,
}

/// Multiply-adds a step takes with the cache, and without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Macs {
    /// With the cache: the new token's projections, its scores and weighted sums, its output.
    pub cached: usize,
    /// The same step recomputing every earlier token's keys and values.
    pub recomputed: usize,
}

/// One decoding step: the token at `position` processed alone.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeStep {
    /// The token's 0-based position.
    pub position: usize,
    /// Each key/value head's cached keys after this step, each turned by its own position
    /// under rotary positions. (position + 1, d_k) each
    pub k_cache: Vec<Matrix>,
    /// Each key/value head's cached values after this step. (position + 1, d_k) each
    pub v_cache: Vec<Matrix>,
    /// What each head computes.
    pub heads: Vec<DecodeHead>,
    /// The token's row of attention's output, context·W_o. (1, d_model)
    pub output: Matrix,
    /// What the step costs.
    pub macs: Macs,
}

/// Decoding a trace's sentence from a KV cache.
#[derive(Debug, Clone, PartialEq)]
pub struct Decode {
    /// How many tokens were processed at once before decoding.
    pub prefill: usize,
    /// One step per position from `prefill` to the last.
    pub steps: Vec<DecodeStep>,
    /// Whether every step's weights and output equal the full pass's rows.
    pub matches_full_pass: bool,
}

/// Checks that a sentence of `seq_len` tokens can be decoded after a prefill of `prefill`:
/// self-attention (no source sentence), under the causal mask, with 1 ≤ prefill ≤ seq_len.
pub fn check_prefill(
    prefill: usize,
    seq_len: usize,
    causal: bool,
    source: bool,
) -> Result<(), AttentionError> {
    if source {
        return Err(AttentionError::DecodeWithSource);
    }
    if !causal {
        return Err(AttentionError::DecodeNeedsCausal);
    }
    if !(1..=seq_len).contains(&prefill) {
        return Err(AttentionError::PrefillOutOfRange { prefill, seq_len });
    }
    Ok(())
}

/// Decodes `trace`'s sentence after a prefill of `prefill` tokens, from the weights and the
/// attention's input rows the full pass used (X, or N₁ in a pre-norm block).
pub fn decode(trace: &Trace, prefill: usize) -> Result<Decode, AttentionError> {
    let seq_len = trace.tokens.len();
    let config = trace.config;
    check_prefill(prefill, seq_len, config.causal, trace.source.is_some())?;
    let input = trace.attention_input();
    let w = &trace.weights;
    let (d_model, n_heads, n_kv) = (config.d_model, config.n_heads, config.n_kv_heads());
    let (d_k, kv_width, mask) = (config.head_dim(), config.kv_width(), config.mask());
    let columns = |m: &Matrix, g: usize| m.columns(g * d_k, d_k).into_owned();
    // Keys are cached turned, each by its own position; a query is turned by its own.
    let turn = |m: Matrix, first: usize| match config.rope {
        Some(rope) => rope.rotate(&m, first),
        None => m,
    };
    // The prefill: the first tokens' keys and values in one product each.
    let rows = input.rows(0, prefill);
    let (k, v) = (rows * &w.w_k, rows * &w.w_v);
    let mut k_cache: Vec<Matrix> = (0..n_kv).map(|g| turn(columns(&k, g), 0)).collect();
    let mut v_cache: Vec<Matrix> = (0..n_kv).map(|g| columns(&v, g)).collect();
    let mut steps = Vec::with_capacity(seq_len - prefill);
    let mut matches = true;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0);
    for i in prefill..seq_len {
        let x = input.rows(i, 1);
        let (q, k, v) = (x * &w.w_q, x * &w.w_k, x * &w.w_v);
        for g in 0..n_kv {
            let new_k = turn(columns(&k, g), i);
            for (cache, new) in [(&mut k_cache[g], new_k), (&mut v_cache[g], columns(&v, g))] {
                *cache = std::mem::replace(cache, Matrix::zeros(0, 0)).insert_row(i, 0.0);
                cache.row_mut(i).copy_from(&new);
            }
        }
        let mut concat = Matrix::zeros(1, d_model);
        let mut heads = Vec::with_capacity(n_heads);
        for h in 0..n_heads {
            let g = config.kv_head(h);
            let q = turn(q.columns(h * d_k, d_k).into_owned(), i);
            let scores = &q * k_cache[g].transpose();
            // Keys the window has left behind take no weight.
            let scaled = Matrix::from_fn(1, i + 1, |_, j| {
                if mask.hides(i, j) {
                    f64::NEG_INFINITY
                } else {
                    scores[(0, j)] / trace.scale_divisor
                }
            });
            let (weights, _) = softmax_rows(&scaled, config.temperature);
            let context = &weights * &v_cache[g];
            concat.columns_mut(h * d_k, d_k).copy_from(&context);
            let full = &trace.heads[h].weights;
            matches &= (0..=i).all(|j| close(weights[(0, j)], full[(i, j)]));
            heads.push(DecodeHead {
                q,
                scores,
                weights,
                context,
            });
        }
        let output = &concat * &w.w_o;
        matches &= (0..d_model).all(|c| close(output[(0, c)], trace.output[(i, c)]));
        let visible = mask.visible(i, i + 1).len();
        let cached = d_model * d_model
            + 2 * d_model * kv_width
            + n_heads * 2 * visible * d_k
            + d_model * d_model;
        steps.push(DecodeStep {
            position: i,
            k_cache: k_cache.clone(),
            v_cache: v_cache.clone(),
            heads,
            output,
            macs: Macs {
                cached,
                recomputed: cached + 2 * i * d_model * kv_width,
            },
        });
    }
    Ok(Decode {
        prefill,
        steps,
        matches_full_pass: matches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{
        forward, Block, Config, Init, Inputs, Norm, Pairing, Rope, ScaleMode, Source, Weights,
    };

    fn trace(config: Config, block: Option<Norm>, seed: u64) -> Trace {
        let sentence = "the cat sat on the mat because it was tired";
        let mut inputs = Inputs::from_sentence(
            sentence,
            config,
            Weights::shaped(Init::Random(seed), config.d_model, config.kv_width()),
        )
        .unwrap();
        inputs.block = block.map(|norm| Block {
            norm,
            ..Block::new(config.d_model, Block::default_d_ff(config.d_model))
        });
        forward(&inputs).unwrap()
    }

    #[test]
    fn every_step_equals_the_full_pass_for_every_prefill() {
        let settings = [
            (
                Config {
                    causal: true,
                    ..Config::default()
                },
                None,
            ),
            (
                Config {
                    causal: true,
                    d_model: 8,
                    n_heads: 4,
                    positional_encoding: true,
                    temperature: 0.7,
                    ..Config::default()
                },
                Some(Norm::Pre),
            ),
            (
                Config {
                    causal: true,
                    d_model: 6,
                    n_heads: 3,
                    scale: ScaleMode::SqrtSeqLen,
                    ..Config::default()
                },
                Some(Norm::Post),
            ),
            (
                Config {
                    causal: true,
                    d_model: 8,
                    n_heads: 4,
                    rope: Some(Rope::default()),
                    kv_heads: Some(2),
                    ..Config::default()
                },
                None,
            ),
            (
                Config {
                    causal: true,
                    d_model: 8,
                    n_heads: 2,
                    rope: Some(Rope {
                        theta: 50.0,
                        pairing: Pairing::Interleaved,
                    }),
                    kv_heads: Some(1),
                    window: Some(3),
                    ..Config::default()
                },
                Some(Norm::Pre),
            ),
            (
                Config {
                    causal: true,
                    window: Some(1),
                    ..Config::default()
                },
                None,
            ),
        ];
        for (seed, (config, block)) in settings.into_iter().enumerate() {
            let t = trace(config, block, seed as u64 + 3);
            for prefill in 1..=t.tokens.len() {
                let d = decode(&t, prefill).unwrap();
                assert!(
                    d.matches_full_pass,
                    "{config:?} {block:?}, prefill {prefill}"
                );
                assert_eq!(d.steps.len(), t.tokens.len() - prefill);
                for step in &d.steps {
                    let i = step.position;
                    assert_eq!(step.k_cache[0].nrows(), i + 1);
                    assert_eq!(step.heads[0].scores.ncols(), i + 1);
                    for c in 0..config.d_model {
                        assert!((step.output[(0, c)] - t.output[(i, c)]).abs() < 1e-12);
                    }
                    // The cache holds exactly the full pass's keys (turned, with rotary
                    // positions), key/value head by key/value head.
                    assert_eq!(step.k_cache.len(), config.n_kv_heads());
                    let last = config.n_heads - 1;
                    let keys = t.heads[last].k_scored().rows(0, i + 1).into_owned();
                    let g = config.kv_head(last);
                    assert!((&step.k_cache[g] - keys).amax() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn the_cache_saves_recomputing_the_earlier_keys_and_values() {
        let t = trace(
            Config {
                causal: true,
                ..Config::default()
            },
            None,
            5,
        );
        let d = decode(&t, 1).unwrap();
        let mut last = None;
        for step in &d.steps {
            let i = step.position;
            assert_eq!(step.macs.recomputed - step.macs.cached, 2 * i * 16);
            assert!(step.macs.cached < step.macs.recomputed);
            if let Some((cached, recomputed)) = last {
                assert!(step.macs.cached > cached && step.macs.recomputed > recomputed);
            }
            last = Some((step.macs.cached, step.macs.recomputed));
        }
        // Position 1, d_model 4, two heads of 2: 3·16 + 2·2·2·2 + 16 = 80.
        assert_eq!(d.steps[0].macs.cached, 80);
    }

    #[test]
    fn shared_heads_and_a_window_cost_less_and_a_window_stops_the_growth() {
        let config = Config {
            causal: true,
            d_model: 8,
            n_heads: 4,
            kv_heads: Some(1),
            window: Some(2),
            ..Config::default()
        };
        let d = decode(&trace(config, None, 9), 1).unwrap();
        assert!(d.matches_full_pass);
        for step in &d.steps {
            let i = step.position;
            // Q and the output: 2·64; one key/value head of 2: 2·8·2; 4 heads over 2 keys.
            assert_eq!(step.macs.cached, 128 + 32 + 4 * 2 * 2 * 2, "step {i}");
            assert_eq!(step.macs.recomputed - step.macs.cached, 2 * i * 8 * 2);
            // A key the window has left behind keeps its score, and takes no weight.
            for head in &step.heads {
                assert_eq!(head.scores.ncols(), i + 1);
                assert!((0..i.saturating_sub(1)).all(|j| head.weights[(0, j)] == 0.0));
            }
        }
    }

    #[test]
    fn a_full_pass_that_differs_is_reported() {
        let mut t = trace(
            Config {
                causal: true,
                ..Config::default()
            },
            None,
            2,
        );
        assert!(decode(&t, 3).unwrap().matches_full_pass);
        t.output[(9, 0)] += 1e-6;
        assert!(!decode(&t, 3).unwrap().matches_full_pass);
        // Rows inside the prefill are not decoded, so they are not compared.
        t.output[(9, 0)] -= 1e-6;
        t.output[(1, 0)] += 1.0;
        assert!(decode(&t, 3).unwrap().matches_full_pass);
    }

    #[test]
    fn decoding_needs_the_mask_no_source_and_a_prefill_within_the_sentence() {
        let t = trace(
            Config {
                causal: true,
                ..Config::default()
            },
            None,
            1,
        );
        assert_eq!(
            decode(&t, 0),
            Err(AttentionError::PrefillOutOfRange {
                prefill: 0,
                seq_len: 10
            })
        );
        assert!(decode(&t, 11).is_err());
        assert_eq!(decode(&t, 10).unwrap().steps.len(), 0);
        let open = trace(Config::default(), None, 1);
        assert_eq!(decode(&open, 1), Err(AttentionError::DecodeNeedsCausal));
        // A source sentence refuses the mask too; the source is named first.
        let mut inputs = Inputs::from_sentence(
            "the cat sat",
            Config::default(),
            Weights::new(Init::Default, 4),
        )
        .unwrap();
        inputs.source = Some(Source::from_sentence("le chat", 4).unwrap());
        let crossed = forward(&inputs).unwrap();
        assert_eq!(decode(&crossed, 1), Err(AttentionError::DecodeWithSource));
    }
}
