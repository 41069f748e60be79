//! What guides a learner through the first minutes: where to start, where an edit first
//! matters, and one line of help on each setting and matrix symbol.

use super::matrices::label;
use super::stages::{ffn_input, norm_inputs, residual_2_input, stage_name};
use crate::attention::Order;
use crate::attention::{
    BlockMatrix, BlockParam, HeadMatrix, MatrixId, Norm, Parameter, Stage, WeightName, Wiring,
};

/// At the input stage, the one sentence on where to start.
pub const START_HERE: &str = "Start here: type a sentence (or load a preset) in Sentence & weights, then press Next → to follow it through every stage.";

/// The names of the places one click from the first screen, in the order the bar shows them.
pub const PLACE_INPUTS: &str = "Sentence & weights";
/// Training a head.
pub const PLACE_TRAIN: &str = "Train";
/// The what-if lab.
pub const PLACE_LAB: &str = "What-if lab";
/// Links, embedding, export, presenting and the quiz.
pub const PLACE_SHARE: &str = "Share & present";
/// The accessible name of the column beside the stage: an open place and the explanation.
pub const SIDE_LABEL: &str = "Inputs, sharing and explanation";
/// The link that lets a keyboard skip the bar of places.
pub const SKIP_TO_STAGE: &str = "Skip to the stage";
/// Training's and the lab's place while a quiz question hides the stage's result.
pub const QUIZ_HIDES_PLACE: &str = "The quiz is hiding this stage's result, and this would show it: answer the question, or leave the quiz (Quiz me, in Share & present), first.";
/// The same in an embed, which has no Share & present to leave the quiz from.
pub const QUIZ_HIDES_PLACE_EMBED: &str =
    "The quiz is hiding this stage's result, and training could give it away: answer the question first.";
/// What sharing adds to the pictures while it is open.
pub const SHARE_PICTURES: &str =
    "While this is open, each heatmap has PNG and SVG buttons to save it.";
/// The accessible name of the bar of places.
pub const PLACES_LABEL: &str = "More of attention-lens";

/// The accessible label of a stage-rail mark.
pub const CHANGED_BY_EDIT: &str = "changed by your edit";

/// The parameter as the subject of a sentence.
fn subject(p: Parameter) -> String {
    match p {
        Parameter::Sentence => "The sentence".into(),
        Parameter::DModel => "d_model".into(),
        Parameter::Embeddings => "The embeddings E".into(),
        Parameter::Positional => "Positional encoding".into(),
        Parameter::Weight(w) => w.label().into(),
        Parameter::Heads => "The number of heads".into(),
        Parameter::Scale => "The scale".into(),
        Parameter::Causal => "The causal mask".into(),
        Parameter::Temperature => "The temperature".into(),
        Parameter::Source => "The source sentence".into(),
        Parameter::SourceEmbeddings => "The source's embeddings E_src".into(),
        Parameter::Block(b) => b.label().into(),
        Parameter::DFf => "d_ff".into(),
        Parameter::Activation => "The activation".into(),
        Parameter::Rope => "Rotary positions".into(),
        Parameter::KvHeads => "The number of key/value heads".into(),
        Parameter::Window => "The sliding window".into(),
    }
}

/// A stage by number and name: `stage 2 (Projections Q, K, V)`.
fn stage_ref(stage: Stage, block: impl Into<Order>) -> String {
    format!("stage {} ({})", number(stage, block), stage_name(stage))
}

/// The stage's number among those shown, from 1.
fn number(stage: Stage, block: impl Into<Order>) -> usize {
    stage.position(block).unwrap_or(0) + 1
}

/// The note shown on a stage that an edit of `p` does not change, pointing to `next`, the
/// next stage it changes.
pub fn edit_note(p: Parameter, next: Stage, wiring: Wiring) -> String {
    let verb = match p {
        Parameter::Embeddings
        | Parameter::SourceEmbeddings
        | Parameter::Weight(_)
        | Parameter::Block(_) => "is first used in",
        _ => "first matters in",
    };
    let at = stage_ref(next, wiring.order());
    if next == p.first_stage(wiring) {
        format!("{} {verb} {at}.", subject(p))
    } else {
        format!(
            "{} does not change this stage; it matters again in {at}.",
            subject(p)
        )
    }
}

/// The button that goes to `stage` from the note.
pub fn go_to_stage(stage: Stage, block: impl Into<Order>) -> String {
    format!("Go to stage {} →", number(stage, block))
}

/// A setting of the settings panel that has a line of help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// Width of every token vector.
    DModel,
    /// Number of heads.
    Heads,
    /// Width of one head.
    DK,
    /// What the scores are divided by.
    Scale,
    /// Softmax temperature.
    Temperature,
    /// Keys and values from a source sentence: cross-attention.
    Cross,
    /// The transformer block around attention.
    Block,
    /// Rotary positions on each head's queries and keys.
    Rope,
    /// Key/value heads shared by groups of query heads.
    KvHeads,
    /// The sliding window under the causal mask.
    Window,
    /// Decoding from a KV cache, shown after the output projection.
    Decode,
    /// FlashAttention's tiled softmax, shown after the weighted sum.
    Tiles,
}

impl Setting {
    /// Every setting with help, in the panel's order.
    pub const ALL: [Setting; 12] = [
        Self::DModel,
        Self::Heads,
        Self::DK,
        Self::Scale,
        Self::Temperature,
        Self::Cross,
        Self::Block,
        Self::Rope,
        Self::KvHeads,
        Self::Window,
        Self::Decode,
        Self::Tiles,
    ];

    /// A key for element ids and test ids.
    pub fn key(self) -> &'static str {
        match self {
            Self::DModel => "d-model",
            Self::Heads => "heads",
            Self::DK => "d-k",
            Self::Scale => "scale",
            Self::Temperature => "temperature",
            Self::Cross => "cross-switch",
            Self::Block => "block-switch",
            Self::Rope => "rope",
            Self::KvHeads => "kv-heads",
            Self::Window => "window",
            Self::Decode => "decode",
            Self::Tiles => "tiles",
        }
    }

    /// The name the panel shows.
    pub fn name(self) -> &'static str {
        match self {
            Self::DModel => "d_model",
            Self::Heads => "Heads",
            Self::DK => "d_k",
            Self::Scale => "Scale",
            Self::Temperature => "Temperature",
            Self::Cross => "Attend to another sentence",
            Self::Block => "Show the whole block",
            Self::Rope => "Rotary positions",
            Self::KvHeads => "Key/value heads",
            Self::Window => "Sliding window",
            Self::Decode => "KV cache",
            Self::Tiles => "Tiled softmax",
        }
    }
}

/// A choice of the key/value heads menu: `2 (standard)`, `1 (multi-query)`.
pub fn kv_heads_label(n_kv_heads: usize, n_heads: usize) -> String {
    if n_kv_heads == n_heads {
        format!("{n_kv_heads} (standard)")
    } else if n_kv_heads == 1 {
        "1 (multi-query)".to_string()
    } else {
        format!(
            "{n_kv_heads} (grouped-query, {} heads each)",
            n_heads / n_kv_heads
        )
    }
}

/// A norm type as the menu names it.
pub fn norm_type_name(t: crate::attention::NormType) -> &'static str {
    match t {
        crate::attention::NormType::LayerNorm => "LayerNorm (original, GPT-2)",
        crate::attention::NormType::RmsNorm => "RMSNorm (Llama)",
    }
}

/// A rotary pairing as the menu names it.
pub fn pairing_label(p: crate::attention::Pairing) -> &'static str {
    match p {
        crate::attention::Pairing::Half => "half",
        crate::attention::Pairing::Interleaved => "interleaved",
    }
}

/// Which of a head's `d_k` columns turn together under pairing `p`, in a line under its menu
/// and in the rotary stage's note: counted from 1 within the head, as a reader counts them.
pub fn pairing_note(p: crate::attention::Pairing, d_k: usize) -> String {
    use super::number::ordinal;
    let half = d_k / 2;
    let pairs: Vec<String> = (0..half.min(2))
        .map(|k| match p {
            crate::attention::Pairing::Half => {
                format!("its {} with its {}", ordinal(k + 1), ordinal(k + 1 + half))
            }
            crate::attention::Pairing::Interleaved => {
                format!("its {} with its {}", ordinal(2 * k + 1), ordinal(2 * k + 2))
            }
        })
        .collect();
    let more = if half > 2 { ", …" } else { "" };
    match p {
        crate::attention::Pairing::Half => format!(
            "Each head's first half of columns turns with its second half: {}{more} (rotate_half in Hugging Face's Llama code).",
            pairs.join(", ")
        ),
        crate::attention::Pairing::Interleaved => format!(
            "Each head's columns turn in neighbouring pairs: {}{more} (Meta's original Llama code).",
            pairs.join(", ")
        ),
    }
}

/// One line of help on a setting.
pub fn setting_help(setting: Setting) -> &'static str {
    match setting {
        Setting::DModel => "d_model: how many numbers describe each token, the width of every row of X, Q, K, V and the output.",
        Setting::Heads => "Heads: how many attention patterns run side by side; each head gets its own d_k columns of Q, K and V.",
        Setting::DK => "d_k = d_model ÷ heads: the width of one head's queries, keys and values.",
        Setting::Scale => "Scale: what the scores are divided by before the mask and the softmax; √d_k is the formula of the paper.",
        Setting::Temperature => "Temperature T: the softmax reads the scores divided by T, so above 1 the weights spread out and below 1 they sharpen.",
        Setting::Cross => "Attend to another sentence: cross-attention. In the Transformer, each decoder layer runs masked self-attention over its own sentence, then cross-attention, whose queries come from that sentence and whose keys and values come from the encoder's output. Here your sentence gives the queries, and the source sentence, embedded like yours, stands in for the encoder's output. The weights then show a soft alignment: which source tokens each of your tokens draws on.",
        Setting::Rope => "Rotary positions (RoPE, as in Llama, Mistral and Qwen): after the split, each head's queries and keys are turned pair by pair by angles that grow with the token's position, θ^(−2i/d_k) radians a position for pair i, so a score depends on its two tokens' offset j − i, not on where they stand. The values are not turned. The pairing says which of a head's columns turn together: half (its first half with its second, as rotate_half in Hugging Face's Llama code) or interleaved (neighbours, as in Meta's original Llama code).",
        Setting::KvHeads => "Key/value heads: how many heads of keys and values there are. With fewer than the query heads, each is shared by a group of query heads in a row (grouped-query attention; 1 is multi-query attention), so K, V, W_k and W_v, and a decoder's KV cache, get narrower.",
        Setting::Decode => "KV cache: adds a stage after the output projection: the sentence decoded one token at a time from a KV cache, as a model writes text, each step's output set beside the whole sentence's. Needs the causal mask and no source sentence.",
        Setting::Tiles => "Tiled softmax: adds a stage after the weighted sum: one query row's softmax and weighted sum computed block by block of keys, as FlashAttention does, with the same result.",
        Setting::Window => "Sliding window W (with the causal mask): each token sees itself and the W − 1 tokens before it; keys further back get −∞ like later ones. Off lets a token see every earlier token.",
        Setting::Block => "Show the whole block: attention is followed by a feed-forward network, the two sub-layers of the block shown (a decoder layer that attends to a source sentence has a third, masked self-attention, first; the app leaves it out). Each sub-layer adds its output to the residual stream, the running row per token that starts as X, with LayerNorms after each sum (post-norm) or before each sub-layer (pre-norm).",
    }
}

/// The matrix editor's note on b₁, naming the feed-forward network's input in the wiring `w`:
/// N₁ in post-norm, N₂ in pre-norm.
pub fn bias_1_note(w: Wiring) -> &'static str {
    if w.block == Some(Norm::Pre) {
        "One number per hidden unit, added to every token's row of N₂·W₁."
    } else {
        "One number per hidden unit, added to every token's row of N₁·W₁."
    }
}

/// One line of help on a block parameter, naming what the wiring `w` feeds it.
fn block_param_help(p: BlockParam, w: Wiring) -> String {
    let into = ffn_input(w);
    match p {
        BlockParam::W1 => format!("W₁: the feed-forward network's first matrix, d_model × d_ff, taking each token's row of {into} to d_ff numbers."),
        BlockParam::B1 => format!("b₁: the bias added to every row of {into}·W₁, one number per hidden unit."),
        BlockParam::WGate => format!("W_gate: SwiGLU's gate matrix, d_model × d_ff: SiLU of each token's row of {into}·W_gate scales that token's hidden units."),
        BlockParam::W2 => "W₂: the feed-forward network's second matrix, d_ff × d_model, bringing each row back to d_model numbers.".into(),
        BlockParam::B2 => "b₂: the bias added to every row of G·W₂.".into(),
        BlockParam::Ln1Gamma | BlockParam::Ln2Gamma => format!("γ: {}'s scale, one number per column, multiplying the normalised rows (1 by default).", w.norm_word()),
        BlockParam::Ln1Beta | BlockParam::Ln2Beta if w.norm_type == crate::attention::NormType::RmsNorm => "β: LayerNorm's shift, which RMSNorm does not have: it is not used here.".into(),
        BlockParam::Ln1Beta | BlockParam::Ln2Beta => "β: LayerNorm's shift, one number per column, added after scaling (0 by default).".into(),
    }
}

/// One line of help on a matrix of the block, with the inputs of the wiring `w`.
fn block_matrix_help(b: BlockMatrix, w: Wiring) -> String {
    let (n1_in, n2_in) = norm_inputs(w);
    match b {
        BlockMatrix::Sum1 => "R₁ = X + Y: the input plus attention's output, the first residual sum.".into(),
        BlockMatrix::Norm1 if w.norm_type == crate::attention::NormType::RmsNorm => format!("N₁ = RMSNorm₁({n1_in}): the first RMSNorm, each row divided by its root mean square, then scaled by γ₁."),
        BlockMatrix::Norm1 => format!("N₁ = LN₁({n1_in}): the first LayerNorm, each row brought to mean 0 and standard deviation about 1, then scaled by γ₁ and shifted by β₁."),
        BlockMatrix::Hidden => format!("H = {}·W₁ + b₁: the feed-forward network's hidden layer, d_ff numbers per token.", ffn_input(w)),
        BlockMatrix::Activated if w.activation.gated() => format!("G = SiLU({}·W_gate) ⊙ H: each cell of H multiplied by the SiLU of its own gate, made from the same input by W_gate.", ffn_input(w)),
        BlockMatrix::Activated => "G = act(H): the hidden layer after the activation chosen under Settings in Sentence & weights, cell by cell.".into(),
        BlockMatrix::Ffn => "F = G·W₂ + b₂: the feed-forward output, d_model numbers per token again.".into(),
        BlockMatrix::Sum2 => format!("R₂ = {} + F: the second residual sum, the feed-forward output added back.", residual_2_input(w)),
        BlockMatrix::Norm2 if w.norm_type == crate::attention::NormType::RmsNorm => format!("N₂ = RMSNorm₂({n2_in}): the second RMSNorm, each row normalised on its own."),
        BlockMatrix::Norm2 => format!("N₂ = LN₂({n2_in}): the second LayerNorm, each row normalised on its own."),
    }
}

/// One line of help on the matrix a heatmap or an editor tab is titled with. Its formula and
/// words follow the wiring `w`: N₁ feeds attention in pre-norm, X_src gives the keys and values
/// in cross-attention.
pub fn matrix_help(matrix: MatrixId, w: Wiring) -> String {
    let (q_in, k_in) = (w.query_input(), w.key_input());
    // Whose tokens the keys and values belong to.
    let keys_of = if w.cross { "source token" } else { "token" };
    match matrix {
        MatrixId::SourceEmbeddings => "E_src: the source sentence's token embeddings, one row per source token.".into(),
        MatrixId::SourcePositional => "P_src: the source's positional encoding, counted from its own first token.".into(),
        MatrixId::SourceX => "X_src = E_src + P_src (just E_src when positional encoding is off): the source sentence, which keys and values are computed from; it stands in for an encoder's output.".into(),
        MatrixId::BlockParam(p) => block_param_help(p, w),
        MatrixId::Block(b) => block_matrix_help(b, w),
        MatrixId::Back(b) => super::backward::back_help(b),
        MatrixId::Embeddings => "E: the token embeddings, one row of numbers per token.".into(),
        MatrixId::Positional => {
            "P: the positional encoding, sines and cosines of each token's position, added to E.".into()
        }
        MatrixId::X => format!(
            "X = E + P: the {} input, one row per token (just E when positional encoding is off).",
            if w.block.is_some() { "block's" } else { "layer's" }
        ),
        MatrixId::Weight(WeightName::Q) => {
            format!("W_q: learned weights that turn each row of {q_in} into a query, Q = {q_in}·W_q.")
        }
        MatrixId::Weight(WeightName::K) => {
            format!("W_k: learned weights that turn each row of {k_in} into a key, K = {k_in}·W_k.")
        }
        MatrixId::Weight(WeightName::V) => {
            format!("W_v: learned weights that turn each row of {k_in} into a value, V = {k_in}·W_v.")
        }
        MatrixId::Weight(WeightName::O) => {
            "W_o: learned weights that mix the heads' results into the output, Y = C·W_o.".into()
        }
        MatrixId::Q => format!("Q = {q_in}·W_q: the queries, what each token is looking for."),
        MatrixId::K => format!("K = {k_in}·W_k: the keys, what each {keys_of} offers to the queries."),
        MatrixId::V => format!("V = {k_in}·W_v: the values, what each {keys_of} passes on when it is looked at."),
        MatrixId::Concat => "C: every head's result Cₕ placed side by side.".into(),
        MatrixId::Output if w.block.is_some() => "Y = C·W_o: attention's output, one new row per token; with the block on, the block goes on after it.".into(),
        MatrixId::Output => "Y = C·W_o: the layer's output, one new row per token.".into(),
        MatrixId::Head(h, m) => {
            let me = label(matrix);
            let of = |m: HeadMatrix| label(MatrixId::Head(h, m));
            let n = h + 1;
            match m {
                HeadMatrix::Q => format!("{me}: head {n}'s queries, its d_k columns of Q."),
                HeadMatrix::K => format!("{me}: head {n}'s keys, its d_k columns of K."),
                HeadMatrix::KTransposed => format!(
                    "{me}: head {n}'s keys turned on their side, so that {}·{me} compares every query with every key.",
                    of(HeadMatrix::Q)
                ),
                HeadMatrix::V => format!("{me}: head {n}'s values, its d_k columns of V."),
                HeadMatrix::QRope => format!(
                    "{me}: head {n}'s queries turned by rotary positions: row p's pair i turns by p·θ^(−2i/d_k) radians."
                ),
                HeadMatrix::KRope => format!(
                    "{me}: head {n}'s keys turned by rotary positions, each row by its own position's angles."
                ),
                HeadMatrix::KRopeTransposed => format!(
                    "{me}: head {n}'s turned keys on their side, so that {}·{me} compares every turned query with every turned key.",
                    of(HeadMatrix::QRope)
                ),
                HeadMatrix::Scores if w.rope => format!(
                    "{me} = {}·{}: head {n}'s raw scores from the turned queries and keys, one per query (row) and key (column).",
                    of(HeadMatrix::QRope),
                    of(HeadMatrix::KRopeTransposed)
                ),
                HeadMatrix::Scores => format!(
                    "{me} = {}·{}: head {n}'s raw scores, one per query (row) and key (column).",
                    of(HeadMatrix::Q),
                    of(HeadMatrix::KTransposed)
                ),
                HeadMatrix::Scaled => format!(
                    "{me}: head {n}'s scores divided by what the Scale setting says (√d_k in standard attention)."
                ),
                HeadMatrix::Masked if w.cross => format!(
                    "{me} = {}: cross-attention has no causal mask, so nothing is hidden.",
                    of(HeadMatrix::Scaled)
                ),
                HeadMatrix::Masked => format!(
                    "{me}: {}, the scores as the Scale setting left them, with −∞ where the causal mask, when it is on, hides a key after its query (j > i), and a sliding window W, when set, one W or more tokens back (j ≤ i − W).",
                    of(HeadMatrix::Scaled)
                ),
                HeadMatrix::Weights => format!(
                    "{me}: attention weights, the softmax of each row of {} ÷ T; every row sums to 1.",
                    of(HeadMatrix::Masked)
                ),
                HeadMatrix::Context => format!(
                    "{me} = {}·{}: each token's average of {}, weighted by its attention.",
                    of(HeadMatrix::Weights),
                    of(HeadMatrix::V),
                    if w.cross { "the source's value rows" } else { "the value rows" }
                ),
            }
        }
    }
}

/// The title of the editor's recipe for a head built by hand.
pub const BUILD_A_HEAD_TITLE: &str = "Build a previous-token head by hand";

/// The recipe, in the steps a learner takes in the editors.
pub const BUILD_A_HEAD: &str = "Start from self-attention (Attend to another sentence off, the \
block off or post-norm), ÷√d_k, T = 1, d_model 4 and 1 head, and switch on positional encoding \
and the causal mask. On the Embeddings tab click Zero: each row of X is then its position alone, \
with d1 = sin p and d2 = cos p (p = 0 for the first token), a point that moves one radian round \
a circle from one token to the next. On W_k click Zero, then type 4 in cells (d1, d1) and (d2, \
d2): each key keeps its point, four times longer. On W_q click Zero, then type 2.16 and 3.37 in \
row d1 and −3.37 and 2.16 in row d2 (4·cos 1 ≈ 2.16 and 4·sin 1 ≈ 3.37): each query's point \
turns back one radian, onto the previous token's. With up to 7 tokens, every token from the \
second on then puts most of its weight on the one before it. The Previous-token preset holds these numbers.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recipe_states_the_settings_it_needs_and_where_positions_start() {
        for needed in [
            "Attend to another sentence off",
            "post-norm",
            "÷√d_k",
            "T = 1",
            "p = 0",
        ] {
            assert!(BUILD_A_HEAD.contains(needed), "{needed}");
        }
        assert!(!BUILD_A_HEAD.contains("  "));
    }

    #[test]
    fn the_pairing_note_counts_a_head_s_columns_from_one() {
        use crate::attention::Pairing;
        assert_eq!(
            pairing_note(Pairing::Half, 4),
            "Each head's first half of columns turns with its second half: its 1st with its 3rd, its 2nd with its 4th (rotate_half in Hugging Face's Llama code)."
        );
        assert_eq!(
            pairing_note(Pairing::Interleaved, 8),
            "Each head's columns turn in neighbouring pairs: its 1st with its 2nd, its 3rd with its 4th, … (Meta's original Llama code)."
        );
    }

    #[test]
    fn the_masked_scores_help_holds_with_the_scale_off() {
        let help = matrix_help(MatrixId::Head(0, HeadMatrix::Masked), Wiring::default());
        assert!(!help.contains("scaled scores"), "{help}");
        let scaled = crate::words::label(MatrixId::Head(0, HeadMatrix::Scaled));
        assert!(
            help.contains(&format!(
                "{scaled}, the scores as the Scale setting left them"
            )),
            "{help}"
        );
    }

    #[test]
    fn the_note_names_the_first_stage_and_its_title() {
        assert_eq!(
            edit_note(
                Parameter::Weight(WeightName::Q),
                Stage::Projection,
                Wiring::default()
            ),
            "W_q is first used in stage 2 (Projections Q, K, V)."
        );
        assert_eq!(
            edit_note(
                Parameter::Weight(WeightName::O),
                Stage::OutputProjection,
                Wiring::default()
            ),
            "W_o is first used in stage 10 (Output projection)."
        );
        assert_eq!(
            edit_note(Parameter::Temperature, Stage::Softmax, Wiring::default()),
            "The temperature first matters in stage 7 (Softmax)."
        );
    }

    #[test]
    fn past_the_first_stage_the_note_says_where_it_matters_again() {
        let note = edit_note(
            Parameter::Weight(WeightName::V),
            Stage::WeightedSum,
            Wiring::default(),
        );
        assert!(note.starts_with("W_v does not change this stage"), "{note}");
        assert!(note.contains("stage 8"), "{note}");
    }

    #[test]
    fn head_help_names_the_head_from_one() {
        let w = Wiring::default();
        let help = matrix_help(MatrixId::Head(1, HeadMatrix::Weights), w);
        assert!(help.starts_with("A₂: attention weights"), "{help}");
        assert!(help.contains("each row of M₂ ÷ T"), "{help}");
        let scores = matrix_help(MatrixId::Head(0, HeadMatrix::Scores), w);
        assert!(
            scores.starts_with("S₁ = Q₁·K₁ᵀ: head 1's raw scores"),
            "{scores}"
        );
    }

    #[test]
    fn the_captions_of_q_k_and_v_name_the_inputs_the_wiring_uses() {
        let help = |m, w| matrix_help(m, w);
        let plain = Wiring::default();
        assert!(help(MatrixId::Q, plain).starts_with("Q = X·W_q"));
        assert!(help(MatrixId::K, plain).starts_with("K = X·W_k"));
        let pre = Wiring {
            block: Some(Norm::Pre),
            ..plain
        };
        assert!(help(MatrixId::Q, pre).starts_with("Q = N₁·W_q"));
        assert!(help(MatrixId::K, pre).starts_with("K = N₁·W_k"));
        assert!(help(MatrixId::V, pre).starts_with("V = N₁·W_v"));
        assert!(help(MatrixId::Weight(WeightName::Q), pre).contains("each row of N₁ into a query"));
        let cross = Wiring {
            cross: true,
            block: Some(Norm::Pre),
            ..plain
        };
        assert!(help(MatrixId::Q, cross).starts_with("Q = N₁·W_q"));
        assert!(help(MatrixId::K, cross).starts_with("K = X_src·W_k"));
        assert!(help(MatrixId::K, cross).contains("each source token"));
        assert!(help(MatrixId::V, cross).starts_with("V = X_src·W_v"));
        assert!(help(MatrixId::Weight(WeightName::K), cross).ends_with("K = X_src·W_k."));
        assert!(help(MatrixId::Head(0, HeadMatrix::Masked), cross).contains("no causal mask"));
        assert!(
            help(MatrixId::Head(0, HeadMatrix::Context), cross).contains("the source's value rows")
        );
        // The block's symbols follow the norm too.
        assert!(help(MatrixId::Block(BlockMatrix::Norm1), pre).starts_with("N₁ = LN₁(X)"));
        let post = Wiring {
            block: Some(Norm::Post),
            ..plain
        };
        assert!(help(MatrixId::Block(BlockMatrix::Norm1), post).starts_with("N₁ = LN₁(R₁)"));
        assert!(help(MatrixId::Block(BlockMatrix::Sum2), pre).starts_with("R₂ = R₁ + F"));
        assert!(help(MatrixId::Block(BlockMatrix::Sum2), post).starts_with("R₂ = N₁ + F"));
        assert!(help(MatrixId::BlockParam(BlockParam::B1), pre).contains("every row of N₂·W₁"));
        assert!(help(MatrixId::Output, post).contains("the block goes on"));
        assert!(help(MatrixId::Output, plain).contains("the layer's output"));
    }

    #[test]
    fn the_cross_attention_switch_says_where_cross_attention_lives_and_defines_alignment() {
        let help = setting_help(Setting::Cross);
        assert!(
            help.contains("decoder layer runs masked self-attention"),
            "{help}"
        );
        assert!(help.contains("encoder's output"), "{help}");
        assert!(
            help.contains("stands in for the encoder's output"),
            "{help}"
        );
        assert!(help.contains("alignment: which source tokens"), "{help}");
        let block = setting_help(Setting::Block);
        assert!(block.contains("sub-layers") && block.contains("residual stream, the running row"));
    }

    #[test]
    fn the_editors_note_on_b1_names_the_feed_forward_input_of_the_norm_on_screen() {
        let wiring = |block| Wiring {
            cross: false,
            block,
            activation: crate::attention::Activation::Relu,
            rope: false,
            norm_type: Default::default(),
        };
        assert_eq!(
            bias_1_note(wiring(Some(Norm::Post))),
            "One number per hidden unit, added to every token's row of N₁·W₁."
        );
        assert!(bias_1_note(wiring(Some(Norm::Pre))).ends_with("row of N₂·W₁."));
        for norm in [Norm::Post, Norm::Pre] {
            let note = bias_1_note(wiring(Some(norm)));
            assert!(!note.contains(" N·W₁"), "{note}");
            // The same symbol as the help on b₁ and the formula of H.
            let help = block_param_help(BlockParam::B1, wiring(Some(norm)));
            let symbol = ffn_input(wiring(Some(norm)));
            assert!(
                note.contains(&format!("{symbol}·W₁")) && help.contains(&format!("{symbol}·W₁"))
            );
        }
    }

    #[test]
    fn every_setting_has_one_line_of_help_naming_it() {
        for s in Setting::ALL {
            let help = setting_help(s);
            assert!(help.starts_with(s.name()), "{help}");
            assert!(!help.contains('\n'));
        }
    }
}
