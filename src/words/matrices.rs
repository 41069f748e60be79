//! How matrices, their rows, columns and cells are named for people, the way the heatmaps label
//! them: symbols with the head as a subscript (`S₁`, `K₂ᵀ`), tokens for token axes, and
//! dimensions `d1, d2, …` counted from 1.

use super::backward::{
    back_cell_kind, back_cols_are_keys, back_is_weight, back_label, back_rows_are_keys,
};
use super::number::subscript;
use crate::attention::{
    BackMatrix, BlockMatrix, BlockParam, HeadGrad, HeadMatrix, MatrixId, Trace,
};
use crate::panels::head_panel;

/// Its symbol as the panels title it: `X`, `W_q`, `S₁`, `K₂ᵀ`, `Y`.
pub fn label(matrix: MatrixId) -> String {
    match matrix {
        MatrixId::Embeddings => "E".to_string(),
        MatrixId::Positional => "P".to_string(),
        MatrixId::X => "X".to_string(),
        MatrixId::Weight(w) => w.label().to_string(),
        MatrixId::Q => "Q".to_string(),
        MatrixId::K => "K".to_string(),
        MatrixId::V => "V".to_string(),
        MatrixId::Head(h, m) => {
            let symbol = head_panel(m).symbol;
            let s = subscript(h + 1);
            match symbol.strip_suffix('ᵀ') {
                Some(base) => format!("{base}{s}ᵀ"),
                None => format!("{symbol}{s}"),
            }
        }
        MatrixId::Concat => "C".to_string(),
        MatrixId::Output => "Y".to_string(),
        MatrixId::SourceEmbeddings => "E_src".to_string(),
        MatrixId::SourcePositional => "P_src".to_string(),
        MatrixId::SourceX => "X_src".to_string(),
        MatrixId::BlockParam(p) => block_param_symbol(p).to_string(),
        MatrixId::Block(b) => match b {
            BlockMatrix::Sum1 => "R₁",
            BlockMatrix::Norm1 => "N₁",
            BlockMatrix::Hidden => "H",
            BlockMatrix::Activated => "G",
            BlockMatrix::Ffn => "F",
            BlockMatrix::Sum2 => "R₂",
            BlockMatrix::Norm2 => "N₂",
        }
        .to_string(),
        MatrixId::Back(b) => back_label(b),
    }
}

/// A block parameter's symbol: `W₁`, `γ₂`.
pub fn block_param_symbol(p: BlockParam) -> &'static str {
    match p {
        BlockParam::W1 => "W₁",
        BlockParam::WGate => "W_gate",
        BlockParam::B1 => "b₁",
        BlockParam::W2 => "W₂",
        BlockParam::B2 => "b₂",
        BlockParam::Ln1Gamma => "γ₁",
        BlockParam::Ln1Beta => "β₁",
        BlockParam::Ln2Gamma => "γ₂",
        BlockParam::Ln2Beta => "β₂",
    }
}

/// A unit of the feed-forward network's hidden layer, counted from 1: `f3`.
pub fn hidden_unit(index: usize) -> String {
    format!("f{}", index + 1)
}

/// The key token at `index` as a learner tells it apart: the source's in cross-attention, else
/// the sentence's; a word that occurs twice among them carries its position, `the (4)`.
pub fn key_token(trace: &Trace, index: usize) -> String {
    token_label(trace.key_tokens(), index).unwrap_or_else(|| format!("token {}", index + 1))
}

/// Token `index` of `tokens`, followed by its position counted from 1 when the same word
/// occurs more than once (`the (1)`, `cat`, `the (3)`), so that every label names one token.
/// `None` past the end.
pub fn token_label(tokens: &[String], index: usize) -> Option<String> {
    let word = tokens.get(index)?;
    let repeated = tokens.iter().filter(|t| *t == word).count() > 1;
    Some(if repeated {
        format!("{word} ({})", index + 1)
    } else {
        word.clone()
    })
}

/// Every token of `tokens` labelled as [`token_label`] labels one: the axis labels of a heatmap.
pub fn token_labels(tokens: &[String]) -> Vec<String> {
    (0..tokens.len())
        .filter_map(|i| token_label(tokens, i))
        .collect()
}

/// Whether the rows of `matrix` are the key tokens (the source's, in cross-attention).
pub fn rows_are_keys(matrix: MatrixId) -> bool {
    matches!(
        matrix,
        MatrixId::K
            | MatrixId::V
            | MatrixId::SourceEmbeddings
            | MatrixId::SourcePositional
            | MatrixId::SourceX
            | MatrixId::Head(_, HeadMatrix::K | HeadMatrix::V | HeadMatrix::KRope)
    )
}

/// The columns of head `h`, `head_dim` wide, as the heatmaps label them: `d3–d4`, or `d3` when
/// the head is one column wide.
pub fn head_columns(h: usize, head_dim: usize) -> String {
    let first = h * head_dim;
    if head_dim == 1 {
        dim(first)
    } else {
        format!("{}–{}", dim(first), dim(first + head_dim - 1))
    }
}

/// A dimension as the heatmaps label it, counted from 1: `d3`.
pub fn dim(index: usize) -> String {
    format!("d{}", index + 1)
}

/// The sentence's token at `index` as a learner tells it apart (`the (4)` when the word occurs
/// twice, see [`token_label`]), or `token n` past the end.
pub fn token(trace: &Trace, index: usize) -> String {
    token_label(&trace.tokens, index).unwrap_or_else(|| format!("token {}", index + 1))
}

/// The heatmap's label of row `r` of `matrix`.
pub fn row_label(trace: &Trace, matrix: MatrixId, r: usize) -> String {
    match matrix {
        MatrixId::Weight(_) => dim(r),
        MatrixId::Back(b) if back_is_weight(b) => dim(r),
        MatrixId::Back(b) if back_rows_are_keys(b, trace.source.is_some()) => key_token(trace, r),
        MatrixId::Back(_) => token(trace, r),
        MatrixId::Head(h, HeadMatrix::KTransposed | HeadMatrix::KRopeTransposed) => {
            dim(trace.config.kv_head(h) * trace.head_dim() + r)
        }
        MatrixId::BlockParam(BlockParam::W1 | BlockParam::WGate) => dim(r),
        MatrixId::BlockParam(BlockParam::W2) => hidden_unit(r),
        MatrixId::BlockParam(p) => block_param_symbol(p).to_string(),
        m if rows_are_keys(m) => key_token(trace, r),
        _ => token(trace, r),
    }
}

/// The heatmap's label of column `c` of `matrix`.
pub fn col_label(trace: &Trace, matrix: MatrixId, c: usize) -> String {
    match matrix {
        MatrixId::Back(b) if back_cols_are_keys(b) => key_token(trace, c),
        // Keys' and values' gradients are their key/value head's columns.
        MatrixId::Back(BackMatrix::Head(h, HeadGrad::V | HeadGrad::K | HeadGrad::KRope)) => {
            dim(trace.config.kv_head(h) * trace.head_dim() + c)
        }
        MatrixId::Back(BackMatrix::Head(h, HeadGrad::Context | HeadGrad::Q | HeadGrad::QRope)) => {
            dim(h * trace.head_dim() + c)
        }
        MatrixId::Head(_, HeadMatrix::KTransposed | HeadMatrix::KRopeTransposed) => {
            key_token(trace, c)
        }
        MatrixId::Head(_, m) if head_panel(m).square => key_token(trace, c),
        // Keys and values are their key/value head's columns.
        MatrixId::Head(h, HeadMatrix::K | HeadMatrix::V | HeadMatrix::KRope) => {
            dim(trace.config.kv_head(h) * trace.head_dim() + c)
        }
        MatrixId::BlockParam(BlockParam::W1 | BlockParam::WGate | BlockParam::B1)
        | MatrixId::Block(BlockMatrix::Hidden | BlockMatrix::Activated) => hidden_unit(c),
        MatrixId::Head(h, _) => dim(h * trace.head_dim() + c),
        _ => dim(c),
    }
}

/// A cell by its labels: `S₁[am, hungry]`; a cell of a bias or a LayerNorm's γ or β, one row
/// labelled with its own symbol, by its column alone: `β₁[d1]`.
pub fn cell_name(trace: &Trace, matrix: MatrixId, r: usize, c: usize) -> String {
    match matrix {
        MatrixId::BlockParam(p)
            if !matches!(p, BlockParam::W1 | BlockParam::W2 | BlockParam::WGate) =>
        {
            format!("{}[{}]", label(matrix), col_label(trace, matrix, c))
        }
        _ => format!(
            "{}[{}, {}]",
            label(matrix),
            row_label(trace, matrix, r),
            col_label(trace, matrix, c)
        ),
    }
}

/// What one of its cells is called in a title: `Score`, `Attention weight`.
pub fn cell_kind(matrix: MatrixId) -> &'static str {
    match matrix {
        MatrixId::Embeddings => "Embedding",
        MatrixId::Positional => "Position",
        MatrixId::X => "Input",
        MatrixId::Weight(_) => "Weight",
        MatrixId::Q | MatrixId::Head(_, HeadMatrix::Q) => "Query",
        MatrixId::K | MatrixId::Head(_, HeadMatrix::K | HeadMatrix::KTransposed) => "Key",
        MatrixId::Head(_, HeadMatrix::QRope) => "Turned query",
        MatrixId::Head(_, HeadMatrix::KRope | HeadMatrix::KRopeTransposed) => "Turned key",
        MatrixId::V | MatrixId::Head(_, HeadMatrix::V) => "Value",
        MatrixId::Head(_, HeadMatrix::Scores) => "Score",
        MatrixId::Head(_, HeadMatrix::Scaled) => "Scaled score",
        MatrixId::Head(_, HeadMatrix::Masked) => "Masked score",
        MatrixId::Head(_, HeadMatrix::Weights) => "Attention weight",
        MatrixId::Head(_, HeadMatrix::Context) => "Context",
        MatrixId::Concat => "Concatenated",
        MatrixId::Output => "Output",
        MatrixId::SourceEmbeddings => "Source embedding",
        MatrixId::SourcePositional => "Source position",
        MatrixId::SourceX => "Source input",
        MatrixId::BlockParam(_) => "Parameter",
        MatrixId::Block(BlockMatrix::Sum1 | BlockMatrix::Sum2) => "Residual sum",
        MatrixId::Block(BlockMatrix::Norm1 | BlockMatrix::Norm2) => "Normalised",
        MatrixId::Block(BlockMatrix::Hidden) => "Hidden",
        MatrixId::Block(BlockMatrix::Activated) => "Activated",
        MatrixId::Block(BlockMatrix::Ffn) => "Feed-forward",
        MatrixId::Back(b) => back_cell_kind(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_matrices_are_labelled_with_heads_counted_from_one() {
        assert_eq!(label(MatrixId::Head(0, HeadMatrix::Scores)), "S₁");
        assert_eq!(label(MatrixId::Head(1, HeadMatrix::KTransposed)), "K₂ᵀ");
        assert_eq!(label(MatrixId::Head(11, HeadMatrix::Weights)), "A₁₂");
    }

    #[test]
    fn a_vector_of_the_block_names_its_cells_by_column_alone() {
        use crate::attention::{forward, Block, Config, Init, Inputs, Weights};
        use crate::words::explain::explain;
        let mut inputs = Inputs::from_sentence(
            "I am hungry",
            Config::default(),
            Weights::new(Init::Default, 4),
        )
        .unwrap();
        inputs.block = Some(Block::new(4, 8));
        let trace = forward(&inputs).unwrap();
        let beta = MatrixId::BlockParam(BlockParam::Ln1Beta);
        assert_eq!(cell_name(&trace, beta, 0, 0), "β₁[d1]");
        assert_eq!(
            cell_name(&trace, MatrixId::BlockParam(BlockParam::B1), 0, 7),
            "b₁[f8]"
        );
        let w1 = MatrixId::BlockParam(BlockParam::W1);
        assert_eq!(cell_name(&trace, w1, 1, 2), "W₁[d2, f3]");
        let e = explain(&trace, beta, 0, 0).unwrap();
        assert_eq!(e.title, "Parameter β₁[d1]");
        assert!(e.expansion.starts_with("β₁[d1] = "), "{}", e.expansion);
    }

    #[test]
    fn only_a_repeated_word_carries_its_position_counted_from_one() {
        let tokens: Vec<String> = ["the", "cat", "saw", "the", "dog"]
            .map(String::from)
            .to_vec();
        let labels: Vec<_> = (0..6).map(|i| token_label(&tokens, i)).collect();
        assert_eq!(labels[0].as_deref(), Some("the (1)"));
        assert_eq!(labels[1].as_deref(), Some("cat"));
        assert_eq!(labels[3].as_deref(), Some("the (4)"));
        assert_eq!(labels[5], None);
    }
}
