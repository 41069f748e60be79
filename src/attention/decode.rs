//! Decoding from a KV cache: after the first `prefill` tokens are processed at once, each next
//! token is processed alone. Its query meets the keys and values of every token so far, kept in
//! the cache (one row more per step), so the earlier tokens' keys and values are never computed
//! again. Under the causal mask a token reads only the tokens before it and itself, so each
//! step's output row equals the same row of the full pass.
//!
//! Only what a step computes is counted as multiply-adds: the new token's query, key and value
//! (3·d_model² together), each head's scores and weighted sum over the `i + 1` cached rows
//! (2·(i + 1)·d_k a head), and the output projection (d_model²). Without the cache the step
//! would also recompute the keys and values of the `i` earlier tokens: 2·i·d_model² more.

use super::error::AttentionError;
use super::forward::{softmax_rows, Trace};
use super::Matrix;

/// What one head computes at a decoding step.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeHead {
    /// The new token's query. (1, d_k)
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
    /// Each head's cached keys after this step. (position + 1, d_k) each
    pub k_cache: Vec<Matrix>,
    /// Each head's cached values after this step. (position + 1, d_k) each
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
    check_prefill(
        prefill,
        seq_len,
        trace.config.causal,
        trace.source.is_some(),
    )?;
    let input = trace
        .block
        .as_ref()
        .map_or(&trace.x, |b| &b.attention_input);
    let w = &trace.weights;
    let (d_model, n_heads) = (trace.config.d_model, trace.config.n_heads);
    let d_k = d_model / n_heads;
    let columns = |m: &Matrix, h: usize| m.columns(h * d_k, d_k).into_owned();
    // The prefill: the first tokens' keys and values in one product each.
    let rows = input.rows(0, prefill);
    let (k, v) = (rows * &w.w_k, rows * &w.w_v);
    let mut k_cache: Vec<Matrix> = (0..n_heads).map(|h| columns(&k, h)).collect();
    let mut v_cache: Vec<Matrix> = (0..n_heads).map(|h| columns(&v, h)).collect();
    let mut steps = Vec::with_capacity(seq_len - prefill);
    let mut matches = true;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0);
    for i in prefill..seq_len {
        let x = input.rows(i, 1);
        let (q, k, v) = (x * &w.w_q, x * &w.w_k, x * &w.w_v);
        let mut concat = Matrix::zeros(1, d_model);
        let mut heads = Vec::with_capacity(n_heads);
        for h in 0..n_heads {
            for (cache, new) in [(&mut k_cache[h], &k), (&mut v_cache[h], &v)] {
                *cache = std::mem::replace(cache, Matrix::zeros(0, 0)).insert_row(i, 0.0);
                cache.row_mut(i).copy_from(&new.columns(h * d_k, d_k));
            }
            let q = columns(&q, h);
            let scores = &q * k_cache[h].transpose();
            let scaled = scores.map(|s| s / trace.scale_divisor);
            let (weights, _) = softmax_rows(&scaled, trace.config.temperature);
            let context = &weights * &v_cache[h];
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
        let cached = 3 * d_model * d_model + n_heads * 2 * (i + 1) * d_k + d_model * d_model;
        steps.push(DecodeStep {
            position: i,
            k_cache: k_cache.clone(),
            v_cache: v_cache.clone(),
            heads,
            output,
            macs: Macs {
                cached,
                recomputed: cached + 2 * i * d_model * d_model,
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
        forward, Block, Config, Init, Inputs, Norm, ScaleMode, Source, Weights,
    };

    fn trace(config: Config, block: Option<Norm>, seed: u64) -> Trace {
        let sentence = "the cat sat on the mat because it was tired";
        let mut inputs = Inputs::from_sentence(
            sentence,
            config,
            Weights::new(Init::Random(seed), config.d_model),
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
                    // The cache holds exactly the full pass's keys, head by head.
                    let d_k = config.d_model / config.n_heads;
                    let keys = t.k.rows(0, i + 1).columns(d_k, d_k).into_owned();
                    assert!((&step.k_cache[1] - keys).amax() < 1e-12);
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
