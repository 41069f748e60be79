//! The forward pass, one small function per stage.

use super::block::{self, Block, BlockTrace, Norm};
use super::config::{Config, Limits, Mask, Wiring};
use super::embeddings::{positional_encoding, toy_embeddings};
use super::error::AttentionError;
use super::stage::Stage;
use super::tokens::tokenize;
use super::weights::{check_matrix, Weights};
use super::Matrix;
use std::ops::Range;

/// Everything the forward pass reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    /// The tokens, in order.
    pub tokens: Vec<String>,
    /// Token embeddings before positions are added. (seq_len, d_model)
    pub embeddings: Matrix,
    /// The projection matrices.
    pub weights: Weights,
    /// Shape and switches.
    pub config: Config,
    /// The other sentence, for cross-attention: keys and values come from it.
    pub source: Option<Source>,
    /// The transformer block around attention, when it is shown.
    pub block: Option<Block>,
}

/// The sentence attended to in cross-attention (e.g. the sentence being translated).
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// Its tokens, in order.
    pub tokens: Vec<String>,
    /// Its token embeddings before positions. (src_len, d_model)
    pub embeddings: Matrix,
}

impl Source {
    /// The source `sentence` with the toy embeddings of its tokens.
    pub fn from_sentence(sentence: &str, d_model: usize) -> Result<Self, AttentionError> {
        let tokens = tokenize(sentence).map_err(AttentionError::for_source)?;
        let embeddings = toy_embeddings(&tokens, d_model);
        Ok(Self { tokens, embeddings })
    }
}

impl Inputs {
    /// Inputs for `sentence` with its toy embeddings.
    pub fn from_sentence(
        sentence: &str,
        config: Config,
        weights: Weights,
    ) -> Result<Self, AttentionError> {
        config.validate()?;
        let tokens = tokenize(sentence)?;
        let embeddings = toy_embeddings(&tokens, config.d_model);
        Ok(Self {
            tokens,
            embeddings,
            weights,
            config,
            source: None,
            block: None,
        })
    }

    /// Number of tokens.
    pub fn seq_len(&self) -> usize {
        self.tokens.len()
    }

    /// The source and block switches.
    pub fn wiring(&self) -> Wiring {
        Wiring {
            cross: self.source.is_some(),
            block: self.block.as_ref().map(|b| b.norm),
            activation: self
                .block
                .as_ref()
                .map(|b| b.activation)
                .unwrap_or_default(),
            rope: self.config.rope.is_some(),
            norm_type: self.block.as_ref().map(|b| b.norm_type).unwrap_or_default(),
        }
    }

    /// Checks every shape and number against the app's limits.
    pub fn validate(&self) -> Result<(), AttentionError> {
        self.validate_within(&Limits::APP)
    }

    /// Checks every shape and number against `limits`.
    pub fn validate_within(&self, limits: &Limits) -> Result<(), AttentionError> {
        self.config.validate_within(limits)?;
        if self.tokens.is_empty() {
            return Err(AttentionError::EmptySentence);
        }
        if self.tokens.len() > limits.max_tokens {
            return Err(AttentionError::TooManyTokens {
                count: self.tokens.len(),
                max: limits.max_tokens,
            });
        }
        check_matrix(
            "The embedding matrix X",
            &self.embeddings,
            (self.seq_len(), self.config.d_model),
        )?;
        self.weights
            .validate_shaped(self.config.d_model, self.config.kv_width())?;
        if let Some(source) = &self.source {
            if self.config.causal {
                return Err(AttentionError::CausalWithSource);
            }
            if self.config.rope.is_some() {
                return Err(AttentionError::RopeWithSource);
            }
            if source.tokens.is_empty() {
                return Err(AttentionError::for_source(AttentionError::EmptySentence));
            }
            if source.tokens.len() > limits.max_tokens {
                return Err(AttentionError::for_source(AttentionError::TooManyTokens {
                    count: source.tokens.len(),
                    max: limits.max_tokens,
                }));
            }
            check_matrix(
                "The source's embedding matrix",
                &source.embeddings,
                (source.tokens.len(), self.config.d_model),
            )?;
        }
        if let Some(block) = &self.block {
            block.validate(self.config.d_model)?;
        }
        Ok(())
    }
}

/// Every intermediate result of one head.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadTrace {
    /// The key/value head this query head reads: itself, unless key/value heads are shared.
    pub kv_head: usize,
    /// This head's slice of Q. (seq_len, head_dim)
    pub q: Matrix,
    /// Its key/value head's slice of K. (n_keys, head_dim): n_keys is src_len with a source,
    /// else seq_len.
    pub k: Matrix,
    /// Its key/value head's slice of V. (n_keys, head_dim)
    pub v: Matrix,
    /// Q_h with rotary positions: row p turned by position p's angles. (seq_len, head_dim)
    pub q_rope: Option<Matrix>,
    /// K_h with rotary positions. (n_keys, head_dim)
    pub k_rope: Option<Matrix>,
    /// Raw scores Q_h·K_hᵀ (of the turned Q_h and K_h with rotary positions); row = query,
    /// column = key. (seq_len, n_keys)
    pub scores: Matrix,
    /// Scores divided by the scale divisor. (seq_len, n_keys)
    pub scaled: Matrix,
    /// Scaled scores with −∞ where the mask hides a key. (seq_len, n_keys)
    pub masked: Matrix,
    /// Row-wise softmax of masked / temperature; each row sums to 1. (seq_len, n_keys)
    pub weights: Matrix,
    /// Weighted sum of value rows, weights·V_h. (seq_len, head_dim)
    pub context: Matrix,
    /// Rows whose every key was masked: their weights are set to zero, a convention (the
    /// formula gives 0/0). The causal mask alone never makes one, since the diagonal is visible.
    pub fully_masked_rows: Vec<usize>,
}

impl HeadTrace {
    /// A copy of everything up to the weights; the values and context are left empty, for the
    /// caller to fill.
    fn clone_attention(&self) -> Self {
        Self {
            kv_head: self.kv_head,
            q: self.q.clone(),
            k: self.k.clone(),
            v: Matrix::zeros(0, 0),
            q_rope: self.q_rope.clone(),
            k_rope: self.k_rope.clone(),
            scores: self.scores.clone(),
            scaled: self.scaled.clone(),
            masked: self.masked.clone(),
            weights: self.weights.clone(),
            context: Matrix::zeros(0, 0),
            fully_masked_rows: self.fully_masked_rows.clone(),
        }
    }

    /// The queries the scores read: Q_h turned by rotary positions, or Q_h itself.
    /// (seq_len, head_dim)
    pub fn q_scored(&self) -> &Matrix {
        self.q_rope.as_ref().unwrap_or(&self.q)
    }

    /// The keys the scores read: K_h turned by rotary positions, or K_h itself.
    /// (n_keys, head_dim)
    pub fn k_scored(&self) -> &Matrix {
        self.k_rope.as_ref().unwrap_or(&self.k)
    }

    /// The spread (population standard deviation) of the raw scores and of the scaled scores:
    /// how far a typical score lies from their mean, before and after the division.
    pub fn score_spread(&self) -> (f64, f64) {
        (self.scores.variance().sqrt(), self.scaled.variance().sqrt())
    }
}

/// Every intermediate matrix of one multi-head attention layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The tokens, in order.
    pub tokens: Vec<String>,
    /// The configuration used.
    pub config: Config,
    /// Token embeddings before positions. (seq_len, d_model)
    pub embeddings: Matrix,
    /// The positional encoding added, when switched on. (seq_len, d_model)
    pub positional: Option<Matrix>,
    /// The input to the layer, embeddings + positions. (seq_len, d_model)
    pub x: Matrix,
    /// The projection matrices used.
    pub weights: Weights,
    /// The source sentence of cross-attention, when one is set.
    pub source: Option<SourceTrace>,
    /// Queries X·W_q (N₁·W_q in a pre-norm block). (seq_len, d_model)
    pub q: Matrix,
    /// Keys X·W_k, or X_src·W_k with a source. (n_keys, n_kv_heads·head_dim)
    pub k: Matrix,
    /// Values X·W_v, or X_src·W_v with a source. (n_keys, n_kv_heads·head_dim)
    pub v: Matrix,
    /// What the scores were divided by.
    pub scale_divisor: f64,
    /// One trace per head.
    pub heads: Vec<HeadTrace>,
    /// The heads' contexts side by side. (seq_len, d_model)
    pub concat: Matrix,
    /// concat·W_o, the layer's output. (seq_len, d_model)
    pub output: Matrix,
    /// The transformer block around attention, when it is on.
    pub block: Option<BlockTrace>,
}

/// The source sentence as cross-attention reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceTrace {
    /// Its tokens, in order.
    pub tokens: Vec<String>,
    /// Its token embeddings. (src_len, d_model)
    pub embeddings: Matrix,
    /// Its positional encoding, positions counted from its own first token, when switched on.
    /// (src_len, d_model)
    pub positional: Option<Matrix>,
    /// X_src = E_src (+ P_src): what keys and values are computed from. (src_len, d_model)
    pub x: Matrix,
}

/// What of a trace lays out its views rather than filling them with numbers. An edit of a
/// weight or an embedding leaves it equal, so what is computed from it alone need not follow
/// such an edit.
#[derive(Debug, Clone, PartialEq)]
pub struct Outline {
    /// The tokens, in order.
    pub tokens: Vec<String>,
    /// The tokens the keys and values belong to: the source's, or the sentence's own.
    pub key_tokens: Vec<String>,
    /// The configuration used.
    pub config: Config,
    /// The source and block switches.
    pub wiring: Wiring,
    /// The block's hidden width, 0 without a block.
    pub d_ff: usize,
}

impl Outline {
    /// Number of tokens.
    pub fn seq_len(&self) -> usize {
        self.tokens.len()
    }

    /// Number of keys: the source's length, or seq_len without one.
    pub fn n_keys(&self) -> usize {
        self.key_tokens.len()
    }
}

impl Trace {
    /// Number of tokens.
    pub fn seq_len(&self) -> usize {
        self.tokens.len()
    }

    /// Width of each head.
    pub fn head_dim(&self) -> usize {
        self.config.head_dim()
    }

    /// Number of keys (columns of the scores): the source's length, or seq_len without one.
    pub fn n_keys(&self) -> usize {
        self.k.nrows()
    }

    /// The tokens the keys and values belong to: the source's, or the sentence's own.
    pub fn key_tokens(&self) -> &[String] {
        match &self.source {
            Some(source) => &source.tokens,
            None => &self.tokens,
        }
    }

    /// Where the LayerNorms sit, when the block is on.
    pub fn norm(&self) -> Option<Norm> {
        self.block.as_ref().map(|b| b.norm)
    }

    /// The source and block switches.
    pub fn wiring(&self) -> Wiring {
        Wiring {
            cross: self.source.is_some(),
            block: self.norm(),
            activation: self
                .block
                .as_ref()
                .map(|b| b.activation)
                .unwrap_or_default(),
            rope: self.config.rope.is_some(),
            norm_type: self
                .block
                .as_ref()
                .map(|b| b.params.norm_type)
                .unwrap_or_default(),
        }
    }

    /// What lays out this trace's views: its tokens, configuration, wiring and the block's
    /// width, without the numbers.
    pub fn outline(&self) -> Outline {
        Outline {
            tokens: self.tokens.clone(),
            key_tokens: self.key_tokens().to_vec(),
            config: self.config,
            wiring: self.wiring(),
            d_ff: self.block.as_ref().map_or(0, |b| b.hidden.ncols()),
        }
    }

    /// The stages shown for this trace, in order.
    pub fn stages(&self) -> Vec<Stage> {
        Stage::sequence(self.wiring().order())
    }

    /// What the queries are computed from: X, or N₁ in a pre-norm block.
    pub fn attention_input(&self) -> &Matrix {
        match &self.block {
            Some(block) => &block.attention_input,
            None => &self.x,
        }
    }

    /// What keys and values are computed from: the source's X_src, or the queries' input.
    pub fn key_input(&self) -> &Matrix {
        match &self.source {
            Some(source) => &source.x,
            None => self.attention_input(),
        }
    }

    /// The last matrix computed: the block's output when it is on, else Y.
    pub fn final_output(&self) -> &Matrix {
        match &self.block {
            Some(block) => block.out(),
            None => &self.output,
        }
    }

    /// The columns of Q and concat that belong to head `h`.
    pub fn head_columns(&self, h: usize) -> Range<usize> {
        head_columns(h, self.head_dim())
    }

    /// The columns of K and V that query head `h` reads: its key/value head's.
    pub fn kv_columns(&self, h: usize) -> Range<usize> {
        head_columns(self.config.kv_head(h), self.head_dim())
    }
}

fn head_columns(h: usize, head_dim: usize) -> Range<usize> {
    h * head_dim..(h + 1) * head_dim
}

/// Runs multi-head self-attention on `inputs` and keeps every intermediate.
pub fn forward(inputs: &Inputs) -> Result<Trace, AttentionError> {
    forward_within(inputs, &Limits::APP)
}

/// [`forward`] with other size limits, e.g. [`Limits::NONE`] for benchmarks at larger sizes.
pub fn forward_within(inputs: &Inputs, limits: &Limits) -> Result<Trace, AttentionError> {
    forward_reusing(inputs, limits, None)
}

/// [`forward_within`], taking from `previous` every matrix whose inputs did not change, so an
/// edit recomputes only what depends on it: a W_v edit keeps the scores and weights, a W_o edit
/// everything up to the concatenation. The result equals a fresh [`forward_within`] exactly.
pub fn forward_reusing(
    inputs: &Inputs,
    limits: &Limits,
    previous: Option<&Trace>,
) -> Result<Trace, AttentionError> {
    inputs.validate_within(limits)?;
    let config = inputs.config;
    let seq_len = inputs.seq_len();
    let head_dim = config.head_dim();
    // Every setting (scale, mask, temperature, shape) feeds the heads, so a settings change
    // starts afresh.
    let previous = previous.filter(|p| p.config == config);

    let (positional, x) = input(&inputs.embeddings, config.positional_encoding);
    let attention_input = match &inputs.block {
        Some(b) if b.norm == Norm::Pre => {
            let n1 = b.norm_1(&x);
            check_finite(Stage::Norm1, [&n1])?;
            n1
        }
        _ => x.clone(),
    };
    let source = inputs.source.as_ref().map(|s| {
        // Positions restart at the source's first token.
        let (positional, x) = input(&s.embeddings, config.positional_encoding);
        SourceTrace {
            tokens: s.tokens.clone(),
            embeddings: s.embeddings.clone(),
            positional,
            x,
        }
    });
    let key_input = source.as_ref().map_or(&attention_input, |s| &s.x);
    let w = &inputs.weights;
    // A projection is kept when both its input and its matrix are unchanged.
    let kept = |old: fn(&Trace) -> (&Matrix, &Matrix, &Matrix), input: &Matrix, w: &Matrix| {
        previous.and_then(|p| {
            let (old_input, old_w, old_out) = old(p);
            (old_input == input && old_w == w).then(|| old_out.clone())
        })
    };
    let q = kept(
        |p| (p.attention_input(), &p.weights.w_q, &p.q),
        &attention_input,
        &w.w_q,
    );
    let k = kept(|p| (p.key_input(), &p.weights.w_k, &p.k), key_input, &w.w_k);
    let v = kept(|p| (p.key_input(), &p.weights.w_v, &p.v), key_input, &w.w_v);
    let (same_q, same_k, same_v) = (q.is_some(), k.is_some(), v.is_some());
    let (q, k, v) = (
        q.unwrap_or_else(|| project(&attention_input, &w.w_q)),
        k.unwrap_or_else(|| project(key_input, &w.w_k)),
        v.unwrap_or_else(|| project(key_input, &w.w_v)),
    );
    check_finite(Stage::Projection, [&q, &k, &v])?;

    let scale_divisor = config.scale.divisor(head_dim, k.nrows());
    let mut heads = Vec::with_capacity(config.n_heads);
    let turn = |m: &Matrix| config.rope.map(|rope| rope.rotate(m, 0));
    for h in 0..config.n_heads {
        let cols = head_columns(h, head_dim);
        let kv_head = config.kv_head(h);
        let kv_cols = head_columns(kv_head, head_dim);
        let old = previous.and_then(|p| p.heads.get(h));
        // A head whose queries and keys are unchanged keeps its scores and weights: an edit of
        // one column of W_q or W_k changes only the head that owns that column.
        let (q_h, k_h) = match old {
            Some(_) if same_q && same_k => (None, None),
            _ => (
                Some(split_head(&q, cols.clone())),
                Some(split_head(&k, kv_cols.clone())),
            ),
        };
        let kept_attention = old.filter(|old| {
            q_h.as_ref().is_none_or(|q_h| *q_h == old.q)
                && k_h.as_ref().is_none_or(|k_h| *k_h == old.k)
        });
        let head = match kept_attention {
            Some(old) => {
                // Likewise a head whose values are unchanged keeps its weighted sum.
                let (v_h, context) = if same_v {
                    (old.v.clone(), old.context.clone())
                } else {
                    let v_h = split_head(&v, kv_cols);
                    let context = if v_h == old.v {
                        old.context.clone()
                    } else {
                        weighted_sum(&old.weights, &v_h)
                    };
                    (v_h, context)
                };
                HeadTrace {
                    v: v_h,
                    context,
                    ..old.clone_attention()
                }
            }
            None => {
                let q_h = q_h.unwrap_or_else(|| split_head(&q, cols.clone()));
                let k_h = k_h.unwrap_or_else(|| split_head(&k, kv_cols.clone()));
                let v_h = split_head(&v, kv_cols);
                let (q_rope, k_rope) = (turn(&q_h), turn(&k_h));
                let scores = scores(
                    q_rope.as_ref().unwrap_or(&q_h),
                    k_rope.as_ref().unwrap_or(&k_h),
                );
                check_finite(Stage::Scores, [&scores])?;
                let scaled = scale(&scores, scale_divisor);
                let masked = mask(&scaled, config.mask());
                let (weights, fully_masked_rows) = softmax_rows(&masked, config.temperature);
                check_finite(Stage::Softmax, [&weights])?;
                let context = weighted_sum(&weights, &v_h);
                HeadTrace {
                    kv_head,
                    q: q_h,
                    k: k_h,
                    v: v_h,
                    q_rope,
                    k_rope,
                    scores,
                    scaled,
                    masked,
                    weights,
                    context,
                    fully_masked_rows,
                }
            }
        };
        check_finite(Stage::WeightedSum, [&head.context])?;
        heads.push(head);
    }
    let same_concat = same_q && same_k && same_v && previous.is_some();
    let concat = match previous {
        Some(p) if same_concat => p.concat.clone(),
        _ => concat(&heads, seq_len, config.d_model),
    };
    let output = match previous {
        Some(p) if same_concat && p.weights.w_o == w.w_o => p.output.clone(),
        _ => project(&concat, &w.w_o),
    };
    check_finite(Stage::OutputProjection, [&output])?;
    let block = match &inputs.block {
        Some(b) => {
            let old = previous.and_then(|p| p.block.as_ref()).filter(|old| {
                old.params == *b
                    && old.attention_input == attention_input
                    && previous.is_some_and(|p| p.x == x && p.output == output)
            });
            let trace = match old {
                Some(old) => old.clone(),
                None => block::run(b, &x, &attention_input, &output),
            };
            check_finite(Stage::Residual2, [&trace.sum_2, &trace.norm_2])?;
            Some(trace)
        }
        None => None,
    };

    Ok(Trace {
        tokens: inputs.tokens.clone(),
        config,
        embeddings: inputs.embeddings.clone(),
        positional,
        x,
        weights: inputs.weights.clone(),
        source,
        q,
        k,
        v,
        scale_divisor,
        heads,
        concat,
        output,
        block,
    })
}

/// X = E (+ P). Returns the positional encoding used and X. (seq_len, d_model)
fn input(embeddings: &Matrix, positional: bool) -> (Option<Matrix>, Matrix) {
    if positional {
        let pe = positional_encoding(embeddings.nrows(), embeddings.ncols());
        let x = embeddings + &pe;
        (Some(pe), x)
    } else {
        (None, embeddings.clone())
    }
}

/// X·W. (seq_len, d_model)·(d_model, d_model) → (seq_len, d_model)
fn project(x: &Matrix, w: &Matrix) -> Matrix {
    x * w
}

/// The columns of one head. (seq_len, d_model) → (seq_len, head_dim)
fn split_head(m: &Matrix, cols: Range<usize>) -> Matrix {
    m.columns(cols.start, cols.len()).into_owned()
}

/// Q_h·K_hᵀ. (seq_len, head_dim)·(head_dim, seq_len) → (seq_len, seq_len)
fn scores(q: &Matrix, k: &Matrix) -> Matrix {
    q * k.transpose()
}

/// Scores ÷ divisor. (seq_len, seq_len)
fn scale(scores: &Matrix, divisor: f64) -> Matrix {
    scores / divisor
}

/// −∞ where the mask hides a key: above the diagonal (key after query) under the causal
/// mask, and before the window under a sliding window. (seq_len, n_keys)
fn mask(scaled: &Matrix, mask: Mask) -> Matrix {
    let mut masked = scaled.clone();
    if mask.is_on() {
        for i in 0..masked.nrows() {
            for j in 0..masked.ncols() {
                if mask.hides(i, j) {
                    masked[(i, j)] = f64::NEG_INFINITY;
                }
            }
        }
    }
    masked
}

/// Row-wise softmax of `z / temperature`, stable: each row's maximum is subtracted before `exp`.
///
/// A row whose every entry is −∞ has no key to attend to; it becomes all zeros and its index is
/// returned in the second value, never NaN. (rows, cols) → (rows, cols)
pub fn softmax_rows(z: &Matrix, temperature: f64) -> (Matrix, Vec<usize>) {
    let mut out = Matrix::zeros(z.nrows(), z.ncols());
    let mut fully_masked = Vec::new();
    for i in 0..z.nrows() {
        let row: Vec<f64> = z.row(i).iter().copied().collect();
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if max == f64::NEG_INFINITY {
            fully_masked.push(i);
            continue;
        }
        if max == f64::INFINITY {
            // Overflowed scores: the infinite entries share the row equally.
            let n = row.iter().filter(|v| **v == f64::INFINITY).count() as f64;
            for (j, v) in row.iter().enumerate() {
                out[(i, j)] = if *v == f64::INFINITY { 1.0 / n } else { 0.0 };
            }
            continue;
        }
        // Subtracting the maximum before dividing by the temperature keeps every exponent at
        // or below 0, so a small temperature cannot overflow it (the result is the same).
        let exps: Vec<f64> = row
            .iter()
            .map(|v| ((v - max) / temperature).exp())
            .collect();
        let sum: f64 = exps.iter().sum();
        for (j, e) in exps.iter().enumerate() {
            out[(i, j)] = e / sum;
        }
    }
    (out, fully_masked)
}

/// A_h·V_h. (seq_len, seq_len)·(seq_len, head_dim) → (seq_len, head_dim)
fn weighted_sum(weights: &Matrix, v: &Matrix) -> Matrix {
    weights * v
}

/// [C_1 | C_2 | …]. n_heads × (seq_len, head_dim) → (seq_len, d_model)
fn concat(heads: &[HeadTrace], seq_len: usize, d_model: usize) -> Matrix {
    concat_columns(heads.iter().map(|h| &h.context), seq_len, d_model)
}

/// Matrices placed side by side, left to right. n × (seq_len, w) → (seq_len, d_model)
pub(crate) fn concat_columns<'a>(
    parts: impl Iterator<Item = &'a Matrix>,
    seq_len: usize,
    d_model: usize,
) -> Matrix {
    let mut out = Matrix::zeros(seq_len, d_model);
    let mut col = 0;
    for part in parts {
        out.columns_mut(col, part.ncols()).copy_from(part);
        col += part.ncols();
    }
    out
}

fn check_finite<const N: usize>(stage: Stage, ms: [&Matrix; N]) -> Result<(), AttentionError> {
    if ms.iter().all(|m| m.iter().all(|v| v.is_finite())) {
        Ok(())
    } else {
        Err(AttentionError::Overflow { stage })
    }
}
