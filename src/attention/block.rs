//! The transformer block around attention: two residual sums, two LayerNorms and a two-layer
//! feed-forward network that works on each token (row) alone.
//!
//! ```text
//! post-norm (the original Transformer)     pre-norm (GPT-2 and most models since)
//! Y  = attention(X)                        N₁ = LN₁(X);  Y = attention(N₁)
//! R₁ = X + Y                               R₁ = X + Y
//! N₁ = LN₁(R₁)                             N₂ = LN₂(R₁)
//! H  = N₁·W₁ + b₁                          H  = N₂·W₁ + b₁
//! G  = act(H)                              G  = act(H)
//! F  = G·W₂ + b₂                           F  = G·W₂ + b₂
//! R₂ = N₁ + F                              R₂ = R₁ + F
//! N₂ = LN₂(R₂)          output N₂          output R₂
//! ```
//!
//! LN(r) = (r − mean(r)) / √(var(r) + ε) · γ + β for each row r, with the biased variance
//! (÷ d_model) and ε = 1e-5; with RMSNorm instead, LN(r) = r / √(mean(r²) + ε) · γ (no β).
//! With SwiGLU the network is gated: G = SiLU(N·W_gate) ⊙ (N·W₁ + b₁), then F = G·W₂ + b₂; with
//! pre-norm, RMSNorm and b₁ = b₂ = 0 this is Llama's decoder layer.

pub use super::choices::{Activation, Norm, NormType};
use super::error::AttentionError;
use super::rng::SplitMix64;
use super::weights::check_matrix;
use super::Matrix;
use std::fmt;
use std::ops::RangeInclusive;

/// Supported widths of the feed-forward network's hidden layer.
pub const D_FF_RANGE: RangeInclusive<usize> = 2..=64;

/// The ε added to the variance in LayerNorm, so a constant row does not divide by zero.
pub const LAYER_NORM_EPS: f64 = 1e-5;

/// One parameter of the block: a matrix or a row vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockParam {
    /// The feed-forward network's first matrix. (d_model, d_ff)
    W1,
    /// Its bias. (1, d_ff)
    B1,
    /// The second matrix. (d_ff, d_model)
    W2,
    /// Its bias. (1, d_model)
    B2,
    /// The first LayerNorm's scale γ₁. (1, d_model)
    Ln1Gamma,
    /// The first LayerNorm's shift β₁. (1, d_model)
    Ln1Beta,
    /// The second LayerNorm's scale γ₂. (1, d_model)
    Ln2Gamma,
    /// The second LayerNorm's shift β₂. (1, d_model)
    Ln2Beta,
    /// SwiGLU's gate matrix. (d_model, d_ff)
    WGate,
}

impl BlockParam {
    /// All of them, in the order a scenario lists them.
    pub const ALL: [BlockParam; 9] = [
        Self::WGate,
        Self::W1,
        Self::B1,
        Self::W2,
        Self::B2,
        Self::Ln1Gamma,
        Self::Ln1Beta,
        Self::Ln2Gamma,
        Self::Ln2Beta,
    ];

    /// The name used in scenarios, URLs and the CLI: `w_1`, `ln_2_beta`, ….
    pub fn key(self) -> &'static str {
        match self {
            Self::W1 => "w_1",
            Self::B1 => "b_1",
            Self::W2 => "w_2",
            Self::B2 => "b_2",
            Self::Ln1Gamma => "ln_1_gamma",
            Self::Ln1Beta => "ln_1_beta",
            Self::Ln2Gamma => "ln_2_gamma",
            Self::Ln2Beta => "ln_2_beta",
            Self::WGate => "w_gate",
        }
    }

    /// The name shown to people, `W_1`, `γ_1`, ….
    pub fn label(self) -> &'static str {
        match self {
            Self::W1 => "W_1",
            Self::B1 => "b_1",
            Self::W2 => "W_2",
            Self::B2 => "b_2",
            Self::Ln1Gamma => "γ_1",
            Self::Ln1Beta => "β_1",
            Self::Ln2Gamma => "γ_2",
            Self::Ln2Beta => "β_2",
            Self::WGate => "W_gate",
        }
    }

    /// A row vector rather than a matrix.
    pub fn is_vector(self) -> bool {
        !matches!(self, Self::W1 | Self::W2 | Self::WGate)
    }

    /// Whether a block of `activation` and `norm_type` reads this parameter: W_gate only with
    /// SwiGLU, the β's only with LayerNorm.
    pub fn used(self, activation: Activation, norm_type: NormType) -> bool {
        match self {
            Self::WGate => activation.gated(),
            Self::Ln1Beta | Self::Ln2Beta => norm_type == NormType::LayerNorm,
            _ => true,
        }
    }

    /// (rows, columns) for this model; vectors are one row.
    pub fn shape(self, d_model: usize, d_ff: usize) -> (usize, usize) {
        match self {
            Self::W1 | Self::WGate => (d_model, d_ff),
            Self::B1 => (1, d_ff),
            Self::W2 => (d_ff, d_model),
            _ => (1, d_model),
        }
    }

    /// The default values: seeded draws with one decimal for the network (seeds 53, 59, 61,
    /// 67 and 71 for W_gate; W₁, W₂ and W_gate in `[-1, 1)`, the biases in `[-0.5, 0.5)`, row
    /// by row), γ = 1 and β = 0.
    pub fn default_values(self, d_model: usize, d_ff: usize) -> Matrix {
        let (rows, cols) = self.shape(d_model, d_ff);
        let seeded = |seed: u64, half_width: f64| {
            let mut rng = SplitMix64::new(seed);
            let values: Vec<f64> = (0..rows * cols)
                .map(|_| rng.next_symmetric(half_width, 1))
                .collect();
            Matrix::from_row_slice(rows, cols, &values)
        };
        match self {
            Self::W1 => seeded(53, 1.0),
            Self::B1 => seeded(59, 0.5),
            Self::W2 => seeded(61, 1.0),
            Self::B2 => seeded(67, 0.5),
            Self::WGate => seeded(71, 1.0),
            Self::Ln1Gamma | Self::Ln2Gamma => Matrix::from_element(rows, cols, 1.0),
            Self::Ln1Beta | Self::Ln2Beta => Matrix::zeros(rows, cols),
        }
    }
}

impl fmt::Display for BlockParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The block's switches and parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// Where the LayerNorms sit.
    pub norm: Norm,
    /// LayerNorm or RMSNorm.
    pub norm_type: NormType,
    /// The feed-forward network's non-linearity.
    pub activation: Activation,
    /// SwiGLU's gate, read only with SwiGLU. (d_model, d_ff)
    pub w_gate: Matrix,
    /// (d_model, d_ff)
    pub w_1: Matrix,
    /// (1, d_ff)
    pub b_1: Matrix,
    /// (d_ff, d_model)
    pub w_2: Matrix,
    /// (1, d_model)
    pub b_2: Matrix,
    /// (1, d_model)
    pub ln_1_gamma: Matrix,
    /// (1, d_model)
    pub ln_1_beta: Matrix,
    /// (1, d_model)
    pub ln_2_gamma: Matrix,
    /// (1, d_model)
    pub ln_2_beta: Matrix,
}

impl Block {
    /// The default block for `d_model` with a hidden layer `d_ff` wide: post-norm, ReLU and the
    /// default parameters.
    pub fn new(d_model: usize, d_ff: usize) -> Self {
        let p = |param: BlockParam| param.default_values(d_model, d_ff);
        Self {
            norm: Norm::Post,
            norm_type: NormType::LayerNorm,
            activation: Activation::Relu,
            w_gate: p(BlockParam::WGate),
            w_1: p(BlockParam::W1),
            b_1: p(BlockParam::B1),
            w_2: p(BlockParam::W2),
            b_2: p(BlockParam::B2),
            ln_1_gamma: p(BlockParam::Ln1Gamma),
            ln_1_beta: p(BlockParam::Ln1Beta),
            ln_2_gamma: p(BlockParam::Ln2Gamma),
            ln_2_beta: p(BlockParam::Ln2Beta),
        }
    }

    /// The default hidden width, 4·d_model (the ratio of the original Transformer), within
    /// [`D_FF_RANGE`].
    pub fn default_d_ff(d_model: usize) -> usize {
        (4 * d_model).clamp(*D_FF_RANGE.start(), *D_FF_RANGE.end())
    }

    /// Width of the hidden layer.
    pub fn d_ff(&self) -> usize {
        self.w_1.ncols()
    }

    /// The parameter called `param`.
    pub fn get(&self, param: BlockParam) -> &Matrix {
        match param {
            BlockParam::W1 => &self.w_1,
            BlockParam::B1 => &self.b_1,
            BlockParam::W2 => &self.w_2,
            BlockParam::B2 => &self.b_2,
            BlockParam::Ln1Gamma => &self.ln_1_gamma,
            BlockParam::Ln1Beta => &self.ln_1_beta,
            BlockParam::Ln2Gamma => &self.ln_2_gamma,
            BlockParam::Ln2Beta => &self.ln_2_beta,
            BlockParam::WGate => &self.w_gate,
        }
    }

    /// The parameter called `param`, to change.
    pub fn get_mut(&mut self, param: BlockParam) -> &mut Matrix {
        match param {
            BlockParam::W1 => &mut self.w_1,
            BlockParam::B1 => &mut self.b_1,
            BlockParam::W2 => &mut self.w_2,
            BlockParam::B2 => &mut self.b_2,
            BlockParam::Ln1Gamma => &mut self.ln_1_gamma,
            BlockParam::Ln1Beta => &mut self.ln_1_beta,
            BlockParam::Ln2Gamma => &mut self.ln_2_gamma,
            BlockParam::Ln2Beta => &mut self.ln_2_beta,
            BlockParam::WGate => &mut self.w_gate,
        }
    }

    /// The same block for another `d_model` or `d_ff`: an edited parameter keeps its top-left
    /// values and takes the defaults where it grows; one still at its defaults takes the
    /// defaults of the new shape.
    pub fn resized(&self, d_model: usize, d_ff: usize) -> Self {
        let mut out = self.clone();
        let (old_d, old_f) = (self.ln_1_gamma.ncols(), self.d_ff());
        for param in BlockParam::ALL {
            let fresh = param.default_values(d_model, d_ff);
            let old = self.get(param);
            if *old == param.default_values(old_d, old_f) {
                *out.get_mut(param) = fresh;
                continue;
            }
            *out.get_mut(param) = Matrix::from_fn(fresh.nrows(), fresh.ncols(), |i, j| {
                old.get((i, j)).copied().unwrap_or(fresh[(i, j)])
            });
        }
        out
    }

    /// Checks `d_ff` and that every parameter has its shape and finite values.
    pub fn validate(&self, d_model: usize) -> Result<(), AttentionError> {
        let d_ff = self.d_ff();
        if !D_FF_RANGE.contains(&d_ff) {
            return Err(AttentionError::DffOutOfRange {
                d_ff,
                min: *D_FF_RANGE.start(),
                max: *D_FF_RANGE.end(),
            });
        }
        for param in BlockParam::ALL {
            check_matrix(param.label(), self.get(param), param.shape(d_model, d_ff))?;
        }
        Ok(())
    }

    /// The first norm of the block, LayerNorm or RMSNorm with γ₁ (and β₁). (rows, d) → (rows, d)
    pub fn norm_1(&self, m: &Matrix) -> Matrix {
        normalise(m, self.norm_type, &self.ln_1_gamma, &self.ln_1_beta)
    }

    /// The second norm, with γ₂ (and β₂). (rows, d) → (rows, d)
    pub fn norm_2(&self, m: &Matrix) -> Matrix {
        normalise(m, self.norm_type, &self.ln_2_gamma, &self.ln_2_beta)
    }
}

/// Every intermediate of the block, named as in the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockTrace {
    /// Where the LayerNorms sit.
    pub norm: Norm,
    /// The non-linearity.
    pub activation: Activation,
    /// The parameters used.
    pub params: Block,
    /// The gate's input N·W_gate, with SwiGLU. (seq_len, d_ff)
    pub gate: Option<Matrix>,
    /// What attention's queries read: X for post-norm, N₁ = LN₁(X) for pre-norm.
    pub attention_input: Matrix,
    /// R₁ = X + Y. (seq_len, d_model)
    pub sum_1: Matrix,
    /// N₁: LN₁(R₁) for post-norm, LN₁(X) for pre-norm. (seq_len, d_model)
    pub norm_1: Matrix,
    /// H = N·W₁ + b₁, with N = N₁ (post) or N₂ (pre). (seq_len, d_ff)
    pub hidden: Matrix,
    /// G = act(H), or SiLU(N·W_gate) ⊙ H with SwiGLU. (seq_len, d_ff)
    pub activated: Matrix,
    /// F = G·W₂ + b₂. (seq_len, d_model)
    pub ffn: Matrix,
    /// R₂ = N₁ + F (post) or R₁ + F (pre). (seq_len, d_model)
    pub sum_2: Matrix,
    /// N₂: LN₂(R₂) for post-norm, LN₂(R₁) for pre-norm. (seq_len, d_model)
    pub norm_2: Matrix,
}

impl BlockTrace {
    /// The block's output: N₂ for post-norm, R₂ for pre-norm.
    pub fn out(&self) -> &Matrix {
        match self.norm {
            Norm::Post => &self.norm_2,
            Norm::Pre => &self.sum_2,
        }
    }

    /// What the feed-forward network reads: N₁ (post) or N₂ (pre).
    pub fn ffn_input(&self) -> &Matrix {
        match self.norm {
            Norm::Post => &self.norm_1,
            Norm::Pre => &self.norm_2,
        }
    }

    /// What the second residual adds F to: N₁ (post) or R₁ (pre).
    pub fn residual_2_input(&self) -> &Matrix {
        match self.norm {
            Norm::Post => &self.norm_1,
            Norm::Pre => &self.sum_1,
        }
    }

    /// What the second LayerNorm reads: R₂ (post) or R₁ (pre).
    pub fn norm_2_input(&self) -> &Matrix {
        match self.norm {
            Norm::Post => &self.sum_2,
            Norm::Pre => &self.sum_1,
        }
    }
}

/// The mean and biased variance (÷ width) of each row, the statistics LayerNorm uses.
pub fn row_stats(m: &Matrix, row: usize) -> (f64, f64) {
    let n = m.ncols().max(1) as f64;
    let r = m.row(row);
    let mean = r.sum() / n;
    let var = r.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var)
}

/// LayerNorm of every row: `(r − mean) / √(var + ε) · γ + β`. (rows, d) → (rows, d)
pub fn layer_norm(m: &Matrix, gamma: &Matrix, beta: &Matrix) -> Matrix {
    let mut out = m.clone();
    for i in 0..m.nrows() {
        let (mean, var) = row_stats(m, i);
        let sd = (var + LAYER_NORM_EPS).sqrt();
        for j in 0..m.ncols() {
            out[(i, j)] = (m[(i, j)] - mean) / sd * gamma[(0, j)] + beta[(0, j)];
        }
    }
    out
}

/// The mean of the squares of each row, which RMSNorm divides by the root of (with ε).
pub fn row_mean_square(m: &Matrix, row: usize) -> f64 {
    let n = m.ncols().max(1) as f64;
    m.row(row).iter().map(|v| v * v).sum::<f64>() / n
}

/// RMSNorm of every row: `r / √(mean(r²) + ε) · γ`. (rows, d) → (rows, d)
pub fn rms_norm(m: &Matrix, gamma: &Matrix) -> Matrix {
    let mut out = m.clone();
    for i in 0..m.nrows() {
        let rms = (row_mean_square(m, i) + LAYER_NORM_EPS).sqrt();
        for j in 0..m.ncols() {
            out[(i, j)] = m[(i, j)] / rms * gamma[(0, j)];
        }
    }
    out
}

/// LayerNorm or RMSNorm of every row; RMSNorm has no β. (rows, d) → (rows, d)
pub fn normalise(m: &Matrix, norm_type: NormType, gamma: &Matrix, beta: &Matrix) -> Matrix {
    match norm_type {
        NormType::LayerNorm => layer_norm(m, gamma, beta),
        NormType::RmsNorm => rms_norm(m, gamma),
    }
}

/// `m·w + b`, the bias added to every row. (rows, n)·(n, k) + (1, k) → (rows, k)
pub fn affine(m: &Matrix, w: &Matrix, b: &Matrix) -> Matrix {
    let mut out = m * w;
    for mut row in out.row_iter_mut() {
        row += b.row(0);
    }
    out
}

/// Runs the block after attention, given X, attention's output Y and, for pre-norm, N₁.
pub(crate) fn run(block: &Block, x: &Matrix, attention_input: &Matrix, y: &Matrix) -> BlockTrace {
    let sum_1 = x + y;
    let (norm_1, ffn_in) = match block.norm {
        Norm::Post => {
            let n1 = block.norm_1(&sum_1);
            (n1.clone(), n1)
        }
        Norm::Pre => (attention_input.clone(), block.norm_2(&sum_1)),
    };
    let hidden = affine(&ffn_in, &block.w_1, &block.b_1);
    let (gate, activated) = if block.activation.gated() {
        let gate = &ffn_in * &block.w_gate;
        let activated = gate.zip_map(&hidden, |g, h| block.activation.apply(g) * h);
        (Some(gate), activated)
    } else {
        (None, hidden.map(|v| block.activation.apply(v)))
    };
    let ffn = affine(&activated, &block.w_2, &block.b_2);
    let (sum_2, norm_2) = match block.norm {
        Norm::Post => {
            let s2 = &norm_1 + &ffn;
            let n2 = block.norm_2(&s2);
            (s2, n2)
        }
        Norm::Pre => (&sum_1 + &ffn, ffn_in),
    };
    BlockTrace {
        norm: block.norm,
        activation: block.activation,
        params: block.clone(),
        gate,
        attention_input: attention_input.clone(),
        sum_1,
        norm_1,
        hidden,
        activated,
        ffn,
        sum_2,
        norm_2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_norm_gives_rows_mean_zero_and_variance_one() {
        let m = Matrix::from_row_slice(2, 4, &[1.0, 2.0, 3.0, 4.0, -5.0, 0.0, 5.0, 10.0]);
        let n = layer_norm(&m, &Matrix::from_element(1, 4, 1.0), &Matrix::zeros(1, 4));
        for i in 0..2 {
            let (mean, var) = row_stats(&n, i);
            assert!(mean.abs() < 1e-12);
            assert!((var - 1.0).abs() < 1e-4, "{var}");
        }
    }

    #[test]
    fn a_constant_row_normalises_to_beta_without_dividing_by_zero() {
        let m = Matrix::from_element(1, 3, 7.0);
        let beta = Matrix::from_row_slice(1, 3, &[0.5, -1.0, 2.0]);
        let n = layer_norm(&m, &Matrix::from_element(1, 3, 3.0), &beta);
        assert_eq!(n, beta);
    }

    #[test]
    fn relu_clips_and_gelu_follows_its_tanh_form() {
        assert_eq!(Activation::Relu.apply(-2.0), 0.0);
        assert_eq!(Activation::Relu.apply(1.5), 1.5);
        assert_eq!(Activation::Gelu.apply(0.0), 0.0);
        // Known values of the tanh approximation.
        assert!((Activation::Gelu.apply(1.0) - 0.841_192).abs() < 1e-6);
        assert!((Activation::Gelu.apply(-1.0) + 0.158_808).abs() < 1e-6);
    }

    #[test]
    fn defaults_have_their_shapes_and_resizing_keeps_the_top_left() {
        let block = Block::new(4, Block::default_d_ff(4));
        assert_eq!(block.d_ff(), 16);
        assert!(block.validate(4).is_ok());
        assert_eq!(block.ln_1_gamma, Matrix::from_element(1, 4, 1.0));
        let mut edited = block.clone();
        edited.w_1[(0, 0)] = 9.0;
        let grown = edited.resized(6, 20);
        assert!(grown.validate(6).is_ok());
        assert_eq!(grown.w_1[(0, 0)], 9.0);
        assert_eq!(
            grown.w_1[(5, 19)],
            BlockParam::W1.default_values(6, 20)[(5, 19)]
        );
        assert_eq!(Block::default_d_ff(16), 64);
        assert_eq!(Block::default_d_ff(2), 8);
    }

    #[test]
    fn keys_round_trip() {
        for norm in Norm::ALL {
            assert_eq!(norm.key().parse::<Norm>(), Ok(*norm));
        }
        assert!("layer".parse::<Norm>().unwrap_err().contains("post or pre"));
        assert!("tanh"
            .parse::<Activation>()
            .unwrap_err()
            .contains("relu, gelu or swiglu"));
    }

    #[test]
    fn post_and_pre_norm_wire_the_sums_differently() {
        let x = Matrix::from_row_slice(2, 2, &[1.0, -1.0, 0.5, 2.0]);
        let y = Matrix::from_row_slice(2, 2, &[0.2, 0.3, -0.4, 0.1]);
        let mut block = Block::new(2, 3);
        let post = run(&block, &x, &x, &y);
        assert_eq!(post.sum_1, &x + &y);
        assert_eq!(post.sum_2, &post.norm_1 + &post.ffn);
        assert_eq!(post.out(), &post.norm_2);
        block.norm = Norm::Pre;
        let n1 = layer_norm(&x, &block.ln_1_gamma, &block.ln_1_beta);
        let pre = run(&block, &x, &n1, &y);
        assert_eq!(pre.norm_1, n1);
        assert_eq!(pre.sum_2, &pre.sum_1 + &pre.ffn);
        assert_eq!(pre.out(), &pre.sum_2);
        assert_eq!(pre.hidden, affine(&pre.norm_2, &block.w_1, &block.b_1));
    }
}
