//! What guides a learner through the first minutes: where to start, where an edit first
//! matters, and one line of help on each setting and matrix symbol.

use super::matrices::label;
use super::stages::stage_name;
use crate::attention::{
    BlockMatrix, BlockParam, HeadMatrix, MatrixId, Norm, Parameter, Stage, WeightName, Wiring,
};

/// The first screen's one sentence on where to start.
pub const START_HERE: &str = "Start here: type a sentence (or load a preset) in the Sentence box, then press Next → to follow it through every stage.";

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
    }
}

/// A stage by number and name: `stage 2 (Projections Q, K, V)`.
fn stage_ref(stage: Stage, block: Option<Norm>) -> String {
    format!("stage {} ({})", number(stage, block), stage_name(stage))
}

/// The stage's number among those shown, from 1.
fn number(stage: Stage, block: Option<Norm>) -> usize {
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
    let at = stage_ref(next, wiring.block);
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
pub fn go_to_stage(stage: Stage, block: Option<Norm>) -> String {
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
}

impl Setting {
    /// Every setting with help, in the panel's order.
    pub const ALL: [Setting; 5] = [
        Self::DModel,
        Self::Heads,
        Self::DK,
        Self::Scale,
        Self::Temperature,
    ];

    /// A key for element ids and test ids.
    pub fn key(self) -> &'static str {
        match self {
            Self::DModel => "d-model",
            Self::Heads => "heads",
            Self::DK => "d-k",
            Self::Scale => "scale",
            Self::Temperature => "temperature",
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
        }
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
    }
}

fn block_param_help(p: BlockParam) -> &'static str {
    match p {
        BlockParam::W1 => "W₁: the feed-forward network's first matrix, d_model × d_ff, taking each token's row to d_ff numbers.",
        BlockParam::B1 => "b₁: the bias added to every row of N·W₁, one number per hidden unit.",
        BlockParam::W2 => "W₂: the feed-forward network's second matrix, d_ff × d_model, bringing each row back to d_model numbers.",
        BlockParam::B2 => "b₂: the bias added to every row of G·W₂.",
        BlockParam::Ln1Gamma | BlockParam::Ln2Gamma => "γ: LayerNorm's scale, one number per column, multiplying the normalised rows (1 by default).",
        BlockParam::Ln1Beta | BlockParam::Ln2Beta => "β: LayerNorm's shift, one number per column, added after scaling (0 by default).",
    }
}

fn block_matrix_help(b: BlockMatrix) -> &'static str {
    match b {
        BlockMatrix::Sum1 => "R₁ = X + Y: the input plus attention's output, the first residual sum.",
        BlockMatrix::Norm1 => "N₁: the first LayerNorm, each row brought to mean 0 and standard deviation 1, then scaled by γ₁ and shifted by β₁.",
        BlockMatrix::Hidden => "H: the feed-forward network's hidden layer, d_ff numbers per token.",
        BlockMatrix::Activated => "G = act(H): the hidden layer after the activation.",
        BlockMatrix::Ffn => "F = G·W₂ + b₂: the feed-forward output, d_model numbers per token again.",
        BlockMatrix::Sum2 => "R₂: the second residual sum, the feed-forward output added back.",
        BlockMatrix::Norm2 => "N₂: the second LayerNorm, each row normalised on its own.",
    }
}

/// One line of help on the matrix a heatmap or an editor tab is titled with.
pub fn matrix_help(matrix: MatrixId) -> String {
    let whole = match matrix {
        MatrixId::SourceEmbeddings => "E_src: the source sentence's token embeddings, one row per source token.",
        MatrixId::SourcePositional => "P_src: the source's positional encoding, counted from its own first token.",
        MatrixId::SourceX => "X_src = E_src + P_src: the source sentence, which keys and values are computed from.",
        MatrixId::BlockParam(p) => block_param_help(p),
        MatrixId::Block(b) => block_matrix_help(b),
        MatrixId::Embeddings => "E: the token embeddings, one row of numbers per token.",
        MatrixId::Positional => {
            "P: the positional encoding, sines and cosines of each token's position, added to E."
        }
        MatrixId::X => {
            "X = E + P: the layer's input, one row per token (just E when positional encoding is off)."
        }
        MatrixId::Weight(WeightName::Q) => {
            "W_q: learned weights that turn each row of X into a query, Q = X·W_q."
        }
        MatrixId::Weight(WeightName::K) => {
            "W_k: learned weights that turn each row of X into a key, K = X·W_k."
        }
        MatrixId::Weight(WeightName::V) => {
            "W_v: learned weights that turn each row of X into a value, V = X·W_v."
        }
        MatrixId::Weight(WeightName::O) => {
            "W_o: learned weights that mix the heads' results into the output, Y = C·W_o."
        }
        MatrixId::Q => "Q = X·W_q: the queries, what each token is looking for.",
        MatrixId::K => "K = X·W_k: the keys, what each token offers to the queries.",
        MatrixId::V => "V = X·W_v: the values, what each token passes on when it is looked at.",
        MatrixId::Concat => "C: every head's result Cₕ placed side by side.",
        MatrixId::Output => "Y = C·W_o: the layer's output, one new row per token.",
        MatrixId::Head(h, m) => {
            let me = label(matrix);
            let n = h + 1;
            return match m {
                HeadMatrix::Q => format!("{me}: head {n}'s queries, its d_k columns of Q."),
                HeadMatrix::K => format!("{me}: head {n}'s keys, its d_k columns of K."),
                HeadMatrix::KTransposed => format!(
                    "{me}: head {n}'s keys turned on their side, so that Q·Kᵀ compares every query with every key."
                ),
                HeadMatrix::V => format!("{me}: head {n}'s values, its d_k columns of V."),
                HeadMatrix::Scores => format!(
                    "{me} = Q·Kᵀ: raw scores, one per query (row) and key (column)."
                ),
                HeadMatrix::Scaled => format!(
                    "{me}: the scores divided by √d_k (or by what the Scale setting says)."
                ),
                HeadMatrix::Masked => format!(
                    "{me}: the scaled scores, with −∞ where the causal mask hides a later token."
                ),
                HeadMatrix::Weights => format!(
                    "{me}: attention weights, the softmax of each row of scores ÷ T; every row sums to 1."
                ),
                HeadMatrix::Context => format!(
                    "{me} = A·V: each token's average of the value rows, weighted by its attention."
                ),
            };
        }
    };
    whole.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let help = matrix_help(MatrixId::Head(1, HeadMatrix::Weights));
        assert!(help.starts_with("A₂: attention weights"), "{help}");
        assert!(matrix_help(MatrixId::Head(0, HeadMatrix::Scores)).starts_with("S₁ = Q·Kᵀ"));
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
