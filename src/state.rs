//! The state a learner edits, kept valid at all times: every setter either applies a valid
//! change or returns an error and leaves the model as it was.

use crate::attention::{
    check_prefill, forward, forward_reusing, tokenize, toy_embedding, Activation, AttentionError,
    Block, BlockParam, Config, Init, Inputs, Limits, Matrix, Norm, Order, ScaleMode, Source,
    SplitMix64, Trace, Training, WeightName, Weights, Wiring,
};
use std::collections::BTreeMap;

/// Which matrix an editor changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EditTarget {
    /// The token embeddings (before positions).
    Embeddings,
    /// One of the projection matrices.
    Weight(WeightName),
    /// The source sentence's token embeddings.
    SourceEmbeddings,
    /// A parameter of the block.
    Block(BlockParam),
}

impl EditTarget {
    /// The editable matrices with `wiring`, in tab order: the source's embeddings with a
    /// source, the block's parameters with the block.
    pub fn shown(wiring: Wiring) -> Vec<EditTarget> {
        let mut all = vec![Self::Embeddings];
        if wiring.cross {
            all.push(Self::SourceEmbeddings);
        }
        all.extend(WeightName::ALL.map(Self::Weight));
        if wiring.block.is_some() {
            // W_gate only when SwiGLU reads it.
            all.extend(
                BlockParam::ALL
                    .into_iter()
                    .filter(|p| p.used(wiring.activation, wiring.norm_type))
                    .map(Self::Block),
            );
        }
        all
    }

    /// Every editable matrix, in tab order.
    pub const ALL: [EditTarget; 5] = [
        Self::Embeddings,
        Self::Weight(WeightName::Q),
        Self::Weight(WeightName::K),
        Self::Weight(WeightName::V),
        Self::Weight(WeightName::O),
    ];

    /// Short key for test ids and URLs.
    pub fn key(self) -> &'static str {
        match self {
            Self::Embeddings => "x",
            Self::Weight(w) => w.key(),
            Self::SourceEmbeddings => "x_src",
            Self::Block(p) => p.key(),
        }
    }

    /// The label shown on the tab.
    pub fn label(self) -> &'static str {
        match self {
            Self::Embeddings => "Embeddings E",
            Self::Weight(w) => w.label(),
            Self::SourceEmbeddings => "Source E_src",
            Self::Block(p) => crate::words::block_param_symbol(p),
        }
    }
}

/// The sentence the app opens with.
pub const DEFAULT_SENTENCE: &str = "I am hungry";

/// The source sentence offered when cross-attention is first switched on: the default
/// sentence in French.
pub const DEFAULT_SOURCE: &str = "J'ai faim";

/// Edited embedding rows by token text, in token order so that links list them in one order.
pub type Overrides = BTreeMap<String, Vec<f64>>;

/// Everything the learner has set. Always valid.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The last valid sentence.
    pub sentence: String,
    /// Shape and switches.
    pub config: Config,
    /// The projection matrices.
    pub weights: Weights,
    /// Edited embeddings, by token text: the same word shares one vector, as in a real
    /// embedding table. Tokens not listed use their toy embedding.
    pub embedding_overrides: Overrides,
    /// The seed of the Random buttons.
    pub seed: u64,
    /// The last valid source sentence, kept while cross-attention is off.
    pub source: String,
    /// Keys and values come from the source sentence (cross-attention).
    pub cross: bool,
    /// The causal mask's switch as it was when cross-attention switched the mask off, put back
    /// when cross-attention is switched off again; false while cross-attention is off.
    pub causal_before_cross: bool,
    /// Edited source embeddings, by token text.
    pub source_overrides: Overrides,
    /// The block's switches and parameters, kept while it is hidden.
    pub block: Block,
    /// Show the whole transformer block around attention.
    pub block_on: bool,
    /// What training aims at and how: the goal, the matrices that learn, the optimizer and
    /// its rate.
    pub training: Training,
    /// Decoding from a KV cache is shown, after a prefill of this many tokens (it needs the
    /// causal mask and no source sentence).
    pub prefill: Option<usize>,
    /// The tiled softmax is shown, with blocks of this many keys.
    pub tile: Option<usize>,
}

impl Default for Model {
    fn default() -> Self {
        let config = Config::default();
        Self {
            sentence: DEFAULT_SENTENCE.to_string(),
            config,
            weights: Weights::new(Init::Default, config.d_model),
            embedding_overrides: Overrides::new(),
            seed: 42,
            source: DEFAULT_SOURCE.to_string(),
            cross: false,
            causal_before_cross: false,
            source_overrides: Overrides::new(),
            block: Block::new(config.d_model, Block::default_d_ff(config.d_model)),
            block_on: false,
            training: Training::default(),
            prefill: None,
            tile: None,
        }
    }
}

/// What of a model lays out the inputs and the training panel rather than filling them with
/// numbers. An edit of a weight or an embedding leaves it equal, so what is computed from it
/// alone need not follow such an edit.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelOutline {
    /// The last valid sentence.
    pub sentence: String,
    /// Its tokens.
    pub tokens: Vec<String>,
    /// The last valid source sentence.
    pub source: String,
    /// Its tokens.
    pub source_tokens: Vec<String>,
    /// Shape and switches.
    pub config: Config,
    /// Keys and values come from the source sentence.
    pub cross: bool,
    /// The transformer block is shown.
    pub block_on: bool,
    /// Where the block's LayerNorms sit.
    pub norm: Norm,
    /// The block's activation.
    pub activation: Activation,
    /// The block's norms: LayerNorm or RMSNorm.
    pub norm_type: crate::attention::NormType,
    /// The block's hidden width.
    pub d_ff: usize,
    /// The training settings, the goal fitted to the heads and sentences.
    pub training: Training,
    /// The stages shown.
    pub order: Order,
}

impl ModelOutline {
    /// The tokens the keys and values belong to: the source's in cross-attention, else the
    /// sentence's own.
    pub fn key_tokens(&self) -> &[String] {
        if self.cross {
            &self.source_tokens
        } else {
            &self.tokens
        }
    }

    /// The source and block switches.
    pub fn wiring(&self) -> Wiring {
        Wiring {
            cross: self.cross,
            block: self.block_on.then_some(self.norm),
            activation: self.activation,
            norm_type: self.norm_type,
            rope: self.config.rope.is_some() && !self.cross,
        }
    }
}

/// Key/value heads that no longer divide the heads go back to one per head.
fn fit_kv_heads(config: &mut Config) {
    if config
        .kv_heads
        .is_some_and(|g| !config.n_heads.is_multiple_of(g))
    {
        config.kv_heads = None;
    }
}

/// Rows of `overrides` or the toy embedding of each token. (tokens, d)
fn embedding_rows(tokens: &[String], overrides: &Overrides, d: usize) -> Matrix {
    let rows: Vec<Vec<f64>> = tokens
        .iter()
        .map(|t| {
            overrides
                .get(t)
                .cloned()
                .unwrap_or_else(|| toy_embedding(t, d))
        })
        .collect();
    Matrix::from_fn(tokens.len(), d, |i, j| rows[i][j])
}

impl Model {
    /// The tokens of the current sentence.
    pub fn tokens(&self) -> Vec<String> {
        tokenize(&self.sentence).unwrap_or_default()
    }

    /// The embedding matrix E, edited rows included. (seq_len, d_model)
    pub fn embeddings(&self) -> Matrix {
        embedding_rows(
            &self.tokens(),
            &self.embedding_overrides,
            self.config.d_model,
        )
    }

    /// The tokens of the source sentence.
    pub fn source_tokens(&self) -> Vec<String> {
        tokenize(&self.source).unwrap_or_default()
    }

    /// The source's embedding matrix E_src, edited rows included. (src_len, d_model)
    pub fn source_embeddings(&self) -> Matrix {
        embedding_rows(
            &self.source_tokens(),
            &self.source_overrides,
            self.config.d_model,
        )
    }

    /// The source and block switches.
    pub fn wiring(&self) -> Wiring {
        Wiring {
            cross: self.cross,
            block: self.block_on.then_some(self.block.norm),
            activation: self.block.activation,
            rope: self.config.rope.is_some() && !self.cross,
            norm_type: self.block.norm_type,
        }
    }

    /// What lays out the inputs and the training panel, without the numbers.
    pub fn outline(&self) -> ModelOutline {
        let mut outline = ModelOutline {
            sentence: self.sentence.clone(),
            tokens: self.tokens(),
            source: self.source.clone(),
            source_tokens: self.source_tokens(),
            config: self.config,
            cross: self.cross,
            block_on: self.block_on,
            norm: self.block.norm,
            activation: self.block.activation,
            norm_type: self.block.norm_type,
            d_ff: self.block.d_ff(),
            training: Training::default(),
            order: self.order(),
        };
        // Fitted to the tokens just made, rather than tokenizing both sentences again.
        outline.training =
            self.training_fitted_to(outline.tokens.len(), outline.key_tokens().len());
        outline
    }

    /// The training settings with the goal fitted to the current heads, sentence and source
    /// (see [`crate::attention::Goal::fitted`]).
    pub fn fitted_training(&self) -> Training {
        let seq_len = self.tokens().len();
        let n_keys = if self.cross {
            self.source_tokens().len()
        } else {
            seq_len
        };
        self.training_fitted_to(seq_len, n_keys)
    }

    /// The training settings with the goal fitted to the current heads, `seq_len` tokens and
    /// `n_keys` keys.
    fn training_fitted_to(&self, seq_len: usize, n_keys: usize) -> Training {
        Training {
            goal: self
                .training
                .goal
                .fitted(self.config.n_heads, seq_len, n_keys),
            ..self.training.clone()
        }
    }

    /// The inputs of the forward pass.
    pub fn inputs(&self) -> Inputs {
        Inputs {
            tokens: self.tokens(),
            embeddings: self.embeddings(),
            weights: self.weights.clone(),
            config: self.effective_config(),
            source: self.cross.then(|| Source {
                tokens: self.source_tokens(),
                embeddings: self.source_embeddings(),
            }),
            block: self.block_on.then(|| self.block.clone()),
        }
    }

    /// Runs the forward pass.
    pub fn trace(&self) -> Result<Trace, AttentionError> {
        forward(&self.inputs())
    }

    /// Runs the forward pass, taking from `previous` whatever the change since left as it was.
    pub fn trace_after(&self, previous: Option<&Trace>) -> Result<Trace, AttentionError> {
        forward_reusing(&self.inputs(), &Limits::APP, previous)
    }

    /// The matrix an editor shows.
    pub fn matrix(&self, target: EditTarget) -> Matrix {
        match target {
            EditTarget::Embeddings => self.embeddings(),
            EditTarget::Weight(w) => self.weights.get(w).clone(),
            EditTarget::SourceEmbeddings => self.source_embeddings(),
            EditTarget::Block(p) => self.block.get(p).clone(),
        }
    }

    /// The configuration the forward pass runs: rotary positions rest while a source sentence
    /// is on (they belong to one sentence's positions), and the window while the causal mask is
    /// off (it narrows the mask); both come back as they were.
    pub fn effective_config(&self) -> Config {
        let mut config = self.config;
        if self.cross {
            config.rope = None;
        }
        if !config.causal {
            config.window = None;
        }
        config
    }

    /// Switches rotary positions on (`Some`) or off; refused, keeping the model as it was, when
    /// the heads are an odd number of columns wide.
    pub fn set_rope(&mut self, rope: Option<crate::attention::Rope>) -> Result<(), AttentionError> {
        let config = Config {
            rope,
            ..self.config
        };
        Config {
            window: None,
            ..config
        }
        .validate()?;
        self.config = config;
        Ok(())
    }

    /// The stages shown: the wiring's, with the tiles when asked for, and decoding when asked
    /// for where it can be (under the causal mask, without a source sentence).
    pub fn order(&self) -> Order {
        Order {
            tiles: self.tile.is_some(),
            decode: self.prefill.is_some() && self.config.causal && !self.cross,
            ..self.wiring().order()
        }
    }

    /// Shows decoding from a KV cache after a prefill of `prefill` tokens (`None` hides it);
    /// refused below 1.
    pub fn set_prefill(&mut self, prefill: Option<usize>) -> Result<(), AttentionError> {
        if let Some(p) = prefill {
            check_prefill(p, p, true, false)?;
        }
        self.prefill = prefill;
        Ok(())
    }

    /// Shows the tiled softmax with blocks of `tile` keys (`None` hides it); refused below 1.
    pub fn set_tile(&mut self, tile: Option<usize>) -> Result<(), AttentionError> {
        if tile == Some(0) {
            return Err(AttentionError::TileZero);
        }
        self.tile = tile;
        Ok(())
    }

    /// Sets the sliding window (`None` for none); it takes effect under the causal mask.
    pub fn set_window(&mut self, window: Option<usize>) -> Result<(), AttentionError> {
        if window == Some(0) {
            return Err(AttentionError::WindowZero);
        }
        self.config.window = window;
        Ok(())
    }

    /// Sets the number of key/value heads (`n_heads` for standard attention). W_k and W_v
    /// become `d_model × (n_kv_heads·d_k)`: they keep the columns both widths have, and a new
    /// column takes its default. Returns what was kept or reset, in words, for the setting's
    /// note; refused when the number does not divide the heads.
    pub fn set_kv_heads(&mut self, n_kv_heads: usize) -> Result<String, AttentionError> {
        let kv_heads = (n_kv_heads != self.config.n_heads).then_some(n_kv_heads);
        let config = Config {
            kv_heads,
            window: None,
            ..self.config
        };
        config.validate()?;
        let (old, new) = (self.config.kv_width(), config.kv_width());
        self.config.kv_heads = kv_heads;
        self.reshape_kv(self.config.d_model);
        let d = self.config.d_model;
        Ok(match new.cmp(&old) {
            std::cmp::Ordering::Equal => String::new(),
            std::cmp::Ordering::Less => format!(
                "W_k and W_v are now {d} × {new}: they kept their first {new} columns and dropped the other {}.",
                old - new
            ),
            std::cmp::Ordering::Greater => format!(
                "W_k and W_v are now {d} × {new}: they kept their {old} columns, and the {} new ones take the default weights.",
                new - old
            ),
        })
    }

    /// Resizes W_k and W_v to `d_model × kv_width`, keeping the top-left block; new cells take
    /// the default weights.
    fn reshape_kv(&mut self, d_model: usize) {
        let width = self.config.kv_width();
        for name in [WeightName::K, WeightName::V] {
            let fresh = Init::Default.shaped(name, d_model, width);
            let w = self.weights.get(name);
            let resized = Matrix::from_fn(d_model, width, |i, j| {
                w.get((i, j)).copied().unwrap_or(fresh[(i, j)])
            });
            *self.weights.get_mut(name) = resized;
        }
    }

    /// Replaces the source sentence if it tokenizes.
    pub fn set_source(&mut self, source: &str) -> Result<(), AttentionError> {
        tokenize(source).map_err(AttentionError::for_source)?;
        self.source = source.to_string();
        Ok(())
    }

    /// Switches cross-attention on or off. The causal mask belongs to self-attention, so
    /// switching a source on switches the mask off, and switching it off again puts the mask
    /// back as it was.
    pub fn set_cross(&mut self, on: bool) {
        if on && !self.cross {
            self.causal_before_cross = self.config.causal;
        } else if !on && self.cross {
            self.config.causal = std::mem::take(&mut self.causal_before_cross);
        }
        self.cross = on;
        if on {
            self.config.causal = false;
        }
    }

    /// Shows or hides the block; its parameters are kept either way.
    pub fn set_block_on(&mut self, on: bool) {
        self.block_on = on;
    }

    /// Where the block's norms sit.
    pub fn set_norm(&mut self, norm: Norm) {
        self.block.norm = norm;
    }

    /// The block's activation.
    pub fn set_activation(&mut self, activation: Activation) {
        self.block.activation = activation;
    }

    /// Changes d_ff: W₁, b₁ and W₂ keep their values where they overlap.
    pub fn set_d_ff(&mut self, d_ff: usize) -> Result<(), AttentionError> {
        let resized = self.block.resized(self.config.d_model, d_ff);
        resized.validate(self.config.d_model)?;
        self.block = resized;
        Ok(())
    }

    /// Replaces the sentence if it tokenizes.
    pub fn set_sentence(&mut self, sentence: &str) -> Result<(), AttentionError> {
        tokenize(sentence)?;
        self.sentence = sentence.to_string();
        Ok(())
    }

    /// Changes the model width. Weights keep their top-left block and fill the rest with the
    /// defaults; edited embeddings are cut or extended with toy values; the head count becomes
    /// the nearest valid one.
    pub fn set_d_model(&mut self, d_model: usize) -> Result<(), AttentionError> {
        let mut config = Config {
            d_model,
            ..self.config
        };
        let valid = Self::head_counts(d_model, config.rope.is_some());
        if !valid.contains(&config.n_heads) {
            config.n_heads = valid
                .iter()
                .copied()
                .min_by_key(|h| h.abs_diff(self.config.n_heads))
                .unwrap_or(1);
        }
        fit_kv_heads(&mut config);
        Config {
            window: None,
            ..config
        }
        .validate()?;
        // A d_ff left at its default, 4·d_model, follows the new width.
        let old_d_ff = self.block.d_ff();
        let d_ff = if old_d_ff == Block::default_d_ff(self.config.d_model) {
            Block::default_d_ff(d_model)
        } else {
            old_d_ff
        };
        self.block = self.block.resized(d_model, d_ff);
        let old = self.config.d_model;
        for name in [WeightName::Q, WeightName::O] {
            let fresh = Init::Default.matrix(name, d_model);
            let w = self.weights.get(name);
            let resized = Matrix::from_fn(d_model, d_model, |i, j| {
                if i < old && j < old {
                    w[(i, j)]
                } else {
                    fresh[(i, j)]
                }
            });
            *self.weights.get_mut(name) = resized;
        }
        for (token, row) in self
            .embedding_overrides
            .iter_mut()
            .chain(self.source_overrides.iter_mut())
        {
            let toy = toy_embedding(token, d_model);
            row.resize(d_model, 0.0);
            for (j, value) in row.iter_mut().enumerate().skip(old) {
                *value = toy[j];
            }
        }
        self.config = config;
        self.reshape_kv(d_model);
        Ok(())
    }

    /// The head counts offered for `d_model`: those that divide it, and with rotary positions
    /// only those that leave an even d_k.
    pub fn head_counts(d_model: usize, rope: bool) -> Vec<usize> {
        Config::valid_head_counts(d_model)
            .into_iter()
            .filter(|h| !rope || (d_model / h).is_multiple_of(2))
            .collect()
    }

    /// Changes the number of heads if it divides d_model.
    pub fn set_n_heads(&mut self, n_heads: usize) -> Result<(), AttentionError> {
        self.set_config(Config {
            n_heads,
            ..self.config
        })
    }

    /// Changes switches that do not resize anything (heads, mask, positions, scale, temperature).
    pub fn set_config(&mut self, config: Config) -> Result<(), AttentionError> {
        if config.d_model != self.config.d_model {
            self.set_d_model(config.d_model)?;
        }
        let mut config = config;
        fit_kv_heads(&mut config);
        // The window rests while the mask is off, so it is not checked here.
        Config {
            window: None,
            ..config
        }
        .validate()?;
        if config.causal && self.cross {
            return Err(AttentionError::CausalWithSource);
        }
        let width = self.config.kv_width();
        self.config = config;
        if self.config.kv_width() != width {
            self.reshape_kv(self.config.d_model);
        }
        Ok(())
    }

    /// Sets the scale mode.
    pub fn set_scale(&mut self, scale: ScaleMode) {
        self.config.scale = scale;
    }

    /// Sets one cell. Out-of-range positions and non-finite values are ignored with an error.
    pub fn set_cell(
        &mut self,
        target: EditTarget,
        row: usize,
        col: usize,
        value: f64,
    ) -> Result<(), AttentionError> {
        let d = self.config.d_model;
        if !value.is_finite() {
            return Err(AttentionError::NotFinite {
                name: target.label().to_string(),
                row,
                col,
            });
        }
        match target {
            EditTarget::Embeddings | EditTarget::SourceEmbeddings => {
                let source = target == EditTarget::SourceEmbeddings;
                let (tokens, matrix) = if source {
                    (self.source_tokens(), self.source_embeddings())
                } else {
                    (self.tokens(), self.embeddings())
                };
                let Some(token) = tokens.get(row).filter(|_| col < d) else {
                    return Err(out_of_range(target, (tokens.len(), d), row, col));
                };
                let mut vector = matrix.row(row).iter().copied().collect::<Vec<_>>();
                vector[col] = value;
                let overrides = if source {
                    &mut self.source_overrides
                } else {
                    &mut self.embedding_overrides
                };
                overrides.insert(token.clone(), vector);
            }
            EditTarget::Block(p) => {
                let m = self.block.get_mut(p);
                let shape = m.shape();
                let Some(cell) = m.get_mut((row, col)) else {
                    return Err(out_of_range(target, shape, row, col));
                };
                *cell = value;
            }
            EditTarget::Weight(name) => {
                if row >= d || col >= d {
                    return Err(out_of_range(target, (d, d), row, col));
                }
                self.weights.get_mut(name)[(row, col)] = value;
            }
        }
        Ok(())
    }

    /// Refills one matrix. For embeddings, `Default` restores the toy embeddings and
    /// `Identity` gives token i a 1 in dimension i (one-hot).
    pub fn fill(&mut self, target: EditTarget, init: Init) {
        let d = self.config.d_model;
        match target {
            EditTarget::Weight(name) => *self.weights.get_mut(name) = init.matrix(name, d),
            EditTarget::Block(p) => {
                let (rows, cols) = self.block.get(p).shape();
                let filled = match init {
                    Init::Default => p.default_values(d, self.block.d_ff()),
                    Init::Random(seed) => {
                        let mut rng = SplitMix64::new(seed ^ (0xB10C + p as u64));
                        Matrix::from_fn(rows, cols, |_, _| rng.next_signed(2))
                    }
                    // A pass-through: ones on the diagonal, γ = 1, β and biases 0.
                    Init::Identity if !p.is_vector() => Matrix::identity(rows, cols),
                    Init::Identity if matches!(p, BlockParam::Ln1Gamma | BlockParam::Ln2Gamma) => {
                        Matrix::from_element(rows, cols, 1.0)
                    }
                    Init::Identity | Init::Zero => Matrix::zeros(rows, cols),
                };
                *self.block.get_mut(p) = filled;
            }
            EditTarget::SourceEmbeddings => {
                let tokens = self.source_tokens();
                // Its own stream, so the source's rows differ from the sentence's.
                self.source_overrides = filled_rows(&tokens, init, d, 0x50C);
            }
            EditTarget::Embeddings => {
                self.embedding_overrides = filled_rows(&self.tokens(), init, d, 0);
            }
        }
    }

    /// The model of `sentence` with these inputs; with `edited_embeddings`, each token's row
    /// of `inputs.embeddings` is kept as an edited row (the first row of a repeated token), and
    /// likewise the source's rows with `edited_source`.
    pub fn from_inputs(
        sentence: &str,
        source: Option<&str>,
        inputs: Inputs,
        edited_embeddings: bool,
        edited_source: bool,
    ) -> Self {
        let overrides = |on: bool, tokens: &[String], embeddings: &Matrix| {
            let mut out = Overrides::new();
            if on {
                for (i, token) in tokens.iter().enumerate() {
                    out.entry(token.clone())
                        .or_insert_with(|| embeddings.row(i).iter().copied().collect());
                }
            }
            out
        };
        let d = inputs.config.d_model;
        let mut model = Self {
            sentence: sentence.to_string(),
            config: inputs.config,
            embedding_overrides: overrides(edited_embeddings, &inputs.tokens, &inputs.embeddings),
            weights: inputs.weights,
            ..Self::default()
        };
        model.block = Block::new(d, Block::default_d_ff(d));
        if let (Some(text), Some(src)) = (source, &inputs.source) {
            model.source = text.to_string();
            model.cross = true;
            model.source_overrides = overrides(edited_source, &src.tokens, &src.embeddings);
        }
        if let Some(block) = inputs.block {
            model.block = block;
            model.block_on = true;
        }
        model
    }
}

/// Rows for `tokens` filled by `init` (one-hot for Identity), or none for the toy defaults.
fn filled_rows(tokens: &[String], init: Init, d: usize, salt: u64) -> Overrides {
    let mut out = Overrides::new();
    if init == Init::Default {
        return out;
    }
    let mut rng = match init {
        Init::Random(seed) => Some(SplitMix64::new(seed ^ salt)),
        _ => None,
    };
    for (i, token) in tokens.iter().enumerate() {
        if out.contains_key(token) {
            continue;
        }
        let row = (0..d)
            .map(|j| match (&mut rng, init) {
                (Some(rng), _) => rng.next_signed(2),
                (None, Init::Identity) => f64::from(u8::from(i == j)),
                _ => 0.0,
            })
            .collect();
        out.insert(token.clone(), row);
    }
    out
}

fn out_of_range(
    target: EditTarget,
    shape: (usize, usize),
    row: usize,
    col: usize,
) -> AttentionError {
    AttentionError::WrongShape {
        name: format!("{} (cell {}, {})", target.label(), row + 1, col + 1),
        expected: shape,
        found: (row + 1, col + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unticking_cross_attention_puts_the_mask_back_as_it_was() {
        for causal in [false, true] {
            let mut model = Model::default();
            model
                .set_config(Config {
                    causal,
                    ..model.config
                })
                .unwrap();
            let before = model.clone();
            model.set_cross(true);
            assert!(model.cross && !model.config.causal);
            model.trace().unwrap();
            // Ticking it again changes nothing, and forgets nothing.
            model.set_cross(true);
            model.set_cross(false);
            assert_eq!(model.config.causal, causal);
            assert!(!model.cross);
            assert_eq!(model, before, "mask {causal}: the model is as it was");
            // Unticking what is already off leaves the mask alone.
            model.set_cross(false);
            assert_eq!(model.config.causal, causal);
        }
    }

    #[test]
    fn the_default_model_traces() {
        let model = Model::default();
        let trace = model.trace().unwrap();
        assert_eq!(trace.tokens, ["I", "am", "hungry"]);
    }

    #[test]
    fn editing_numbers_leaves_the_outlines_equal_and_settings_change_them() {
        let mut model = Model::default();
        let (before, trace_before) = (model.outline(), model.trace().unwrap().outline());
        model
            .set_cell(EditTarget::Weight(WeightName::Q), 0, 0, 2.5)
            .unwrap();
        model.set_cell(EditTarget::Embeddings, 1, 0, -1.0).unwrap();
        assert_eq!(model.outline(), before);
        assert_eq!(model.trace().unwrap().outline(), trace_before);
        model.set_cross(true);
        let crossed = model.outline();
        assert_ne!(crossed, before);
        assert_eq!(crossed.wiring(), model.wiring());
        let outline = model.trace().unwrap().outline();
        assert_eq!(outline.key_tokens, model.source_tokens());
        assert_eq!(outline.n_keys(), model.trace().unwrap().n_keys());
        model.set_sentence("the cat sat down").unwrap();
        assert_eq!(model.outline().tokens, ["the", "cat", "sat", "down"]);
        assert_eq!(model.outline().training, model.fitted_training());
    }

    #[test]
    fn an_invalid_sentence_keeps_the_last_valid_one() {
        let mut model = Model::default();
        assert!(model.set_sentence("   ").is_err());
        assert!(model.set_sentence(&"w ".repeat(40)).is_err());
        assert_eq!(model.sentence, DEFAULT_SENTENCE);
        model.set_sentence("the cat sat").unwrap();
        assert_eq!(model.tokens(), ["the", "cat", "sat"]);
    }

    #[test]
    fn editing_an_embedding_changes_every_copy_of_that_word() {
        let mut model = Model::default();
        model.set_sentence("the cat saw the dog").unwrap();
        model.set_cell(EditTarget::Embeddings, 0, 1, 0.75).unwrap();
        let e = model.embeddings();
        assert_eq!(e[(0, 1)], 0.75);
        assert_eq!(e[(3, 1)], 0.75);
        assert_ne!(e[(1, 1)], 0.75);
    }

    #[test]
    fn resizing_keeps_edits_and_picks_a_valid_head_count() {
        let mut model = Model::default();
        model
            .set_cell(EditTarget::Weight(WeightName::Q), 1, 1, 0.5)
            .unwrap();
        model.set_d_model(6).unwrap();
        assert_eq!(model.weights.w_q.shape(), (6, 6));
        assert_eq!(model.weights.w_q[(1, 1)], 0.5);
        assert_eq!(model.config.n_heads, 2);
        model.set_n_heads(3).unwrap();
        model.set_d_model(8).unwrap();
        assert!([2, 4].contains(&model.config.n_heads));
        assert!(model.trace().is_ok());
        assert!(model.set_n_heads(3).is_err());
    }

    #[test]
    fn out_of_range_cells_and_non_finite_values_are_refused() {
        let mut model = Model::default();
        let before = model.clone();
        assert!(model
            .set_cell(EditTarget::Weight(WeightName::K), 4, 0, 1.0)
            .is_err());
        assert!(model.set_cell(EditTarget::Embeddings, 3, 0, 1.0).is_err());
        assert!(model
            .set_cell(EditTarget::Weight(WeightName::K), 0, 0, f64::NAN)
            .is_err());
        assert_eq!(model, before);
    }

    #[test]
    fn fills_apply_to_one_matrix() {
        let mut model = Model::default();
        model.fill(EditTarget::Weight(WeightName::V), Init::Identity);
        assert_eq!(model.weights.w_v, Matrix::identity(4, 4));
        model.fill(EditTarget::Embeddings, Init::Identity);
        let e = model.embeddings();
        assert_eq!(e[(0, 0)], 1.0);
        assert_eq!(e[(2, 2)], 1.0);
        assert_eq!(e[(2, 1)], 0.0);
        model.fill(EditTarget::Embeddings, Init::Default);
        assert!(model.embedding_overrides.is_empty());
    }
}
