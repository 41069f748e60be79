//! What happens at each stage and why, in words true for every setting: what depends on the
//! settings (the mask, the scale, a source, the block's norm) is in the stage's note.
//!
//! Each explanation is a few short paragraphs separated by [`PARAGRAPH_BREAK`], each of them
//! what a lecturer would say in one breath.

use crate::attention::Stage;

/// What separates the paragraphs of an explanation or a note.
pub const PARAGRAPH_BREAK: &str = "\n\n";

/// [`stage_explanation`] for the stages of `order`: the norms lead with RMSNorm where the block
/// uses it, and the backward stages say what rotary positions and a pre-norm block add where
/// they are on.
pub fn stage_explanation_in(stage: Stage, order: crate::attention::Order) -> String {
    match stage {
        Stage::Norm1 | Stage::Norm2 if order.rms => RMS_NORM.to_string(),
        s if s.is_backward() => super::super::backward::back_explanation_in(s, order),
        _ => stage_explanation(stage).to_string(),
    }
}

/// What RMSNorm does and why.
const RMS_NORM: &str = "RMSNorm works on each row (token) alone. It divides the row by its root mean square, √(mean(x²) + ε), the mean taken over the row's d_model numbers, where ε = 0.00001 keeps a row of zeros from dividing by zero. Then it multiplies each column by its γ, a parameter a real model learns, one per column (this app's training leaves it as it is). Unlike LayerNorm, it does not subtract the row's mean and has no β.\n\n\
    Why: rows grow or shrink as the block adds to them. RMSNorm hands on rows of a steady scale whatever came in, so the weights after it need not follow the scale. Llama and most models since use it: it is cheaper than LayerNorm and trains as well.";

/// What happens here and why, in short paragraphs separated by [`PARAGRAPH_BREAK`]: true for
/// every setting; the stage's note says what the settings on screen do.
pub fn stage_explanation(stage: Stage) -> &'static str {
    match stage {
        Stage::Input => "Each token becomes one row of numbers, its embedding. Stacked, the rows form X, one row per token.\n\n\
            The dot products of attention do not look at where a token stands. So positional encoding, when it is on, adds to each row a pattern of sines and cosines that is different for every position.",
        Stage::Projection => "Three learned matrices turn rows into queries, keys and values. A query Q says what its token is looking for, a key K what its token offers to the queries, and a value V what its token passes on when it is chosen.\n\n\
            The same three matrices serve every token, so a word gets the same query wherever it stands, unless its row carries its position.",
        Stage::SplitHeads => "Multi-head attention cuts the columns of Q into n_heads equal slices, each d_k = d_model ÷ n_heads wide, and those of K and V into slices just as wide. Each head works on its own slice, so different heads can learn to look for different things.\n\n\
            In standard attention every head has its own keys and values. Many of today's models (Llama 2 70B and Llama 3, Mistral) share each key/value head between a group of query heads: grouped-query attention, or multi-query attention with a single one. K and V are then narrower, and so is the KV cache a decoder keeps.",
        Stage::Rotary => "Rotary positions (RoPE) give attention the order of the tokens by turning each head's queries and keys instead of adding a pattern to X. In each row the columns go in pairs, and each pair is turned like a point in the plane, by an angle that grows with the token's position: pair i turns by θ^(−2i/d_k) radians a position, so the first pairs turn fast and the last ones slowly.\n\n\
            Turning a query at position i and a key at position j and then taking their dot product gives the same number as turning the key back by the angle of i − j: the score depends on where the two tokens stand only through their distance. The values are not turned, so what a token passes on carries no rotary turn.\n\n\
            Which columns pair up is a convention: Hugging Face's Llama code (rotate_half) pairs each head's first half of columns with its second half, column by column (the “half” pairing); Meta's original Llama code pairs neighbours, a head's 1st column with its 2nd, its 3rd with its 4th (“interleaved”). The same weights give other scores under the other pairing; a checkpoint converted from one to the other has its W_q and W_k columns permuted to match.",
        Stage::Scores => "In each head, every query row is compared with every key row by a dot product. A large score means the query's token finds that key's token relevant.\n\n\
            Rows are queries (the token that is looking); columns are keys (the token being looked at).",
        Stage::Scale => "Standard attention divides every score by √d_k, the square root of d_k, the width of one head's queries and keys. Why the square root? If the components of a query and a key were independent, with mean 0 and variance 1, their dot product, a sum of d_k such products, would have variance d_k: its typical size, its standard deviation, would be √d_k.\n\n\
            Dividing by √d_k divides the spread of the scores by exactly √d_k. For such unit-variance components that brings the spread to about 1, whatever d_k is, so the softmax neither saturates into all-or-nothing weights nor loses its gradient. Learned weights, and the toy ones here, need not give unit variance, so the spread after dividing need not be near 1.\n\n\
            The divisor depends on d_k, not on the number of tokens: more tokens make more dot products, not larger ones. Dividing by √seq_len, the square root of the sentence's length (√src_len, the number of keys, with a source sentence), is a common mistake.",
        Stage::Mask => "A decoder-only language model (GPT-style) predicts each token from the tokens before it, so a token may not look at the tokens after it. The causal mask sets those scores to −∞ (above the diagonal), so the softmax gives them exactly zero weight.\n\n\
            An encoder such as BERT uses no mask: each token looks both ways. Cross-attention uses none either, since the source sentence is known in full.\n\n\
            Some models (Mistral, Gemma 2 in half its layers) also limit how far back a token looks: with a sliding window of W, a token sees itself and the W − 1 tokens before it, and the rest get −∞ too.",
        Stage::Softmax => "Each row of scores becomes a probability distribution. Every entry is divided by the temperature T (1 in standard attention) and exponentiated; each result is then divided by its row's total. So the weights are never negative, a masked key gets exactly 0, and each row sums to 1.\n\n\
            The row's maximum is subtracted first. That changes nothing mathematically but keeps exp from overflowing.",
        Stage::WeightedSum => "Each token's new row is a weighted average of the value rows, with that token's attention weights. A token that puts most of its weight on one key's token mostly copies that token's value row.\n\n\
            Vₕ and Cₕ are d_v columns wide; here, as in most models, d_v = d_k.",
        Stage::Concat => "The heads' results Cₕ are placed side by side, head 1's columns first, giving one row of d_model numbers per token again.",
        Stage::OutputProjection => "The concatenated rows are multiplied by W_o, a learned d_model × d_model matrix. With several heads it mixes their findings, so every output column can draw on every head.\n\n\
            The result Y is attention's output: one row per token, the same shape as its input X.",
        Stage::Residual1 => "The block wraps attention in what lets Transformers stack many layers. The block shown here has two sub-layers: attention, then a feed-forward network. Each reads the residual stream, the running row per token that starts as X (in pre-norm, a normalised copy of it), and adds its output back to it.\n\n\
            Here attention's output Y is added to the block's input X, row by row: a residual (skip) connection, R₁ = X + Y. Each token keeps what it had, and attention only adds what it found.\n\n\
            In training, the sum also gives gradients a short path back to the input (in post-norm it passes through each norm on the way), which is what lets deep stacks of blocks learn.",
        Stage::Norm1 | Stage::Norm2 => "LayerNorm works on each row (token) alone. It subtracts the row's mean μ and divides by √(σ² + ε), where σ² is the variance of the row's d_model numbers (÷ d_model) and ε = 0.00001 keeps a constant row from dividing by zero. Then it multiplies each column by its γ and adds its β: parameters a real model learns, one per column (this app's training leaves them as they are).\n\n\
            Why: rows grow or shrink as the block adds to them. LayerNorm hands on rows of a steady scale whatever came in, so the weights after it need not follow the scale, and activations and gradients stay in a steady range while a model trains.\n\n\
            Llama and most models since use RMSNorm instead: it skips subtracting the mean and has no β, dividing each row by √(mean(x²) + ε), its root mean square, and multiplying each column by its γ. It is cheaper and trains as well.",
        Stage::Hidden => "The feed-forward network starts here. Each token's row is multiplied by W₁ and the bias b₁ is added, taking it from d_model to d_ff numbers (usually wider: 4 × d_model in the original Transformer).\n\n\
            It works on each token alone: row i of H depends only on row i of its input. Why it is there: attention moves information between tokens, but what it adds is built from weighted averages of value rows. The feed-forward network then transforms each token's row through a non-linearity. With d_ff = 4 × d_model it holds about two thirds of a block's weights.",
        Stage::Activation => "A non-linearity is applied to H, cell by cell (with SwiGLU each cell also reads its gate). Without it, a ReLU or GELU network would collapse into one affine map: (x·W₁ + b₁)·W₂ + b₂ = x·(W₁W₂) + (b₁W₂ + b₂), a single matrix and a single bias, no more than one layer. (SwiGLU without its SiLU would still multiply two projections of x, cell by cell: a quadratic map, not an affine one.)\n\n\
            ReLU keeps positive numbers and sets negative ones to 0. GELU is smooth: GELU(x) = x·Φ(x), where Φ(x) is the chance that a standard normal number is below x. It shrinks every positive number, large ones hardly at all (GELU(1) ≈ 0.84, GELU(3) ≈ 3.00). It keeps under half of any negative number, dips to about −0.17 near x ≈ −0.75, and fades to 0 for large negative x.\n\n\
            SwiGLU (Llama) is gated: a second matrix W_gate makes a gate Z = N·W_gate from the same input as H, and G = SiLU(Z) ⊙ H, SiLU(z) = z·σ(z). Each hidden cell is multiplied by its own gate's SiLU, which is about z for a large z, 0 at z = 0 and a small negative number for a negative z.",
        Stage::FeedForward => "The activated rows are multiplied by W₂ and the bias b₂ is added, bringing each token back from d_ff to d_model numbers, so the result can be added to the residual stream. Still one token at a time: nothing mixes between rows.",
        Stage::Residual2 => "The feed-forward output F is added back to the residual stream, row by row: the second residual connection. As before, each token keeps what it had, the network only adds to it, and gradients get a short path back (through each norm, in post-norm).",
        Stage::Tiles => super::super::running::TILES_EXPLANATION,
        Stage::Decode => super::super::running::DECODE_EXPLANATION,
        _ => super::super::backward::back_explanation(stage),
    }
}
