//! The heatmap panels the views draw, and their names: `x`, `w_q`, `q`, `scores-h0`, `kt-h1`,
//! `concat`, ….
//!
//! A panel's name is an identifier of the user interface, not maths and not prose: the test ids
//! (`canvas-<name>`), the selected cell and the share link's `cell=` all use it. [`HEAD_PANELS`]
//! is the one table of the per-head matrices (name, symbol, shape, colouring) that both the stage
//! view and the explanations read.
//!
//! It depends on [`crate::attention`] only, so that [`crate::words`] (which writes the symbols
//! into sentences) and [`crate::components`] (which maps the colouring to a plot palette) can
//! both read it.

use crate::attention::{
    BackMatrix, BlockMatrix, BlockParam, HeadGrad, HeadMatrix, MatrixId, WeightName,
};

/// What a matrix's numbers are, which decides how they are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// Any sign, coloured around 0 (a diverging palette).
    Signed,
    /// Attention weights in `[0, 1]`, each row summing to 1 (a sequential palette, row sums).
    Weights,
}

/// One row of [`HEAD_PANELS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadPanel {
    /// The matrix.
    pub matrix: HeadMatrix,
    /// The panel name without the head suffix: `scores` for `scores-h0`.
    pub key: &'static str,
    /// Its symbol without the head: `S`, `Kᵀ`; the head's subscript goes before a `ᵀ`.
    pub symbol: &'static str,
    /// Rows and columns are tokens (queries × keys).
    pub square: bool,
    /// How its numbers are coloured.
    pub values: Values,
}

/// Every per-head matrix, in the order of [`HeadMatrix::ALL`].
pub const HEAD_PANELS: [HeadPanel; 12] = [
    row(HeadMatrix::Q, "q", "Q", false, Values::Signed),
    row(HeadMatrix::K, "k", "K", false, Values::Signed),
    row(HeadMatrix::KTransposed, "kt", "Kᵀ", false, Values::Signed),
    row(HeadMatrix::QRope, "qr", "Q̃", false, Values::Signed),
    row(HeadMatrix::KRope, "kr", "K̃", false, Values::Signed),
    row(
        HeadMatrix::KRopeTransposed,
        "krt",
        "K̃ᵀ",
        false,
        Values::Signed,
    ),
    row(HeadMatrix::V, "v", "V", false, Values::Signed),
    row(HeadMatrix::Scores, "scores", "S", true, Values::Signed),
    row(HeadMatrix::Scaled, "scaled", "Z", true, Values::Signed),
    row(HeadMatrix::Masked, "masked", "M", true, Values::Signed),
    row(HeadMatrix::Weights, "weights", "A", true, Values::Weights),
    row(HeadMatrix::Context, "context", "C", false, Values::Signed),
];

const fn row(
    matrix: HeadMatrix,
    key: &'static str,
    symbol: &'static str,
    square: bool,
    values: Values,
) -> HeadPanel {
    HeadPanel {
        matrix,
        key,
        symbol,
        square,
        values,
    }
}

// The table is indexed by the matrix's position: checked when the crate compiles.
const _: () = {
    let mut i = 0;
    while i < HEAD_PANELS.len() {
        assert!(HEAD_PANELS[i].matrix as usize == i);
        assert!(HeadMatrix::ALL[i] as usize == i);
        i += 1;
    }
};

/// The row of [`HEAD_PANELS`] for `matrix`.
pub fn head_panel(matrix: HeadMatrix) -> &'static HeadPanel {
    &HEAD_PANELS[matrix as usize]
}

/// The name of the panel that shows `matrix`.
pub fn panel_name(matrix: MatrixId) -> String {
    match matrix {
        MatrixId::Embeddings => "embeddings".to_string(),
        MatrixId::Positional => "positional".to_string(),
        MatrixId::X => "x".to_string(),
        MatrixId::Weight(w) => w.key().to_string(),
        MatrixId::Q => "q".to_string(),
        MatrixId::K => "k".to_string(),
        MatrixId::V => "v".to_string(),
        MatrixId::Head(h, m) => format!("{}-h{h}", head_panel(m).key),
        MatrixId::Concat => "concat".to_string(),
        MatrixId::Output => "output".to_string(),
        MatrixId::SourceEmbeddings => "embeddings-src".to_string(),
        MatrixId::SourcePositional => "positional-src".to_string(),
        MatrixId::SourceX => "x-src".to_string(),
        MatrixId::BlockParam(p) => p.key().to_string(),
        MatrixId::Block(b) => b.key().to_string(),
        MatrixId::Back(b) => back_panel_name(b),
    }
}

/// The name of the panel that shows a target or a gradient: `d_weights-h0`, `d_w_q`.
fn back_panel_name(b: BackMatrix) -> String {
    match b {
        BackMatrix::TargetPattern(h) => format!("a_target-h{h}"),
        BackMatrix::Head(h, m) => format!("{}-h{h}", m.key()),
        whole => WHOLE_BACK
            .iter()
            .find(|(m, _)| *m == whole)
            .map_or_else(String::new, |(_, name)| name.to_string()),
    }
}

/// The whole-layer targets and gradients and their panel names.
const WHOLE_BACK: [(BackMatrix, &str); 16] = [
    (BackMatrix::TaskTarget, "y_target"),
    (BackMatrix::Output, "d_output"),
    (BackMatrix::WO, "d_w_o"),
    (BackMatrix::Concat, "d_concat"),
    (BackMatrix::Q, "d_q"),
    (BackMatrix::K, "d_k"),
    (BackMatrix::V, "d_v"),
    (BackMatrix::WQ, "d_w_q"),
    (BackMatrix::WK, "d_w_k"),
    (BackMatrix::WV, "d_w_v"),
    (BackMatrix::Norm1, "d_norm_1"),
    (BackMatrix::X, "d_x"),
    (BackMatrix::SourceX, "d_x-src"),
    (BackMatrix::ViaTarget, "d_via_target"),
    (BackMatrix::Embeddings, "d_embeddings"),
    (BackMatrix::SourceEmbeddings, "d_embeddings-src"),
];

/// The target or gradient a panel shows, from its name.
fn parse_back(name: &str) -> Option<BackMatrix> {
    if let Some((m, _)) = WHOLE_BACK.iter().find(|(_, n)| *n == name) {
        return Some(*m);
    }
    let (key, head) = name.rsplit_once("-h")?;
    let canonical = !head.is_empty()
        && head.bytes().all(|b| b.is_ascii_digit())
        && (head == "0" || !head.starts_with('0'));
    if !canonical {
        return None;
    }
    let h: usize = head.parse().ok()?;
    if key == "a_target" {
        return Some(BackMatrix::TargetPattern(h));
    }
    let m = HeadGrad::ALL.into_iter().find(|m| m.key() == key)?;
    Some(BackMatrix::Head(h, m))
}

/// Every panel name that shows `matrix`: X is also drawn beside each projection as `x-q`, `x-k`
/// and `x-v`, and so are X_src and N₁ when they are what the projections read.
pub fn panel_names(matrix: MatrixId) -> Vec<String> {
    let mut names = vec![panel_name(matrix)];
    if matrix == MatrixId::X || COPIED_INPUTS.contains(&matrix) {
        names.extend(
            [WeightName::Q, WeightName::K, WeightName::V].map(|w| input_copy_panel(matrix, w)),
        );
    }
    names
}

/// The copy of X drawn beside `w` on the Projection stage: `x-q`.
pub fn x_copy_panel(w: WeightName) -> String {
    format!("x-{}", w.key().strip_prefix("w_").unwrap_or(w.key()))
}

/// The copy of `input` drawn beside `w` on the Projection stage: `x-q`, `x-src-k`, `norm_1-q`.
pub fn input_copy_panel(input: MatrixId, w: WeightName) -> String {
    if input == MatrixId::X {
        return x_copy_panel(w);
    }
    format!(
        "{}-{}",
        panel_name(input),
        w.key().strip_prefix("w_").unwrap_or(w.key())
    )
}

/// The matrices drawn in copies beside the projections.
const COPIED_INPUTS: [MatrixId; 2] = [MatrixId::SourceX, MatrixId::Block(BlockMatrix::Norm1)];

/// The panel in which an operand of a cell of `explained` lights up: the one drawn beside it.
/// X is drawn beside each projection, so a cell of Q lights its row of X in `x-q`.
pub fn operand_panel(explained: MatrixId, operand: MatrixId) -> String {
    let beside = match explained {
        MatrixId::Q => Some(WeightName::Q),
        MatrixId::K => Some(WeightName::K),
        MatrixId::V => Some(WeightName::V),
        _ => None,
    };
    match beside {
        Some(w) if operand == MatrixId::X || COPIED_INPUTS.contains(&operand) => {
            input_copy_panel(operand, w)
        }
        _ => panel_name(operand),
    }
}

/// The prefix of a panel drawn again in the training view, beside the loss curve.
pub const TRAINING_VIEW: &str = "train-";

/// The head whose picture the panel called `panel` is, for a panel of one head.
pub fn panel_head(panel: &str) -> Option<usize> {
    // Decoding's and the tiles' panels of one head end in `-h<head>`.
    if panel.starts_with("dec-") || panel.starts_with("tile-") {
        return panel.rsplit_once("-h")?.1.parse().ok();
    }
    match parse(panel)? {
        MatrixId::Head(h, _) | MatrixId::Back(BackMatrix::Head(h, _)) => Some(h),
        _ => None,
    }
}

/// Which of Q, K and V (0, 1, 2) the panel called `panel` is, where it is one of them.
pub fn projection_part(panel: &str) -> Option<usize> {
    ["q", "k", "v"].iter().position(|p| *p == panel)
}

/// The matrix a panel shows, from its name; `x-q`, `x-k` and `x-v` are X, and a training
/// view's copy is the matrix it copies.
pub fn parse(name: &str) -> Option<MatrixId> {
    // The training view's copy of a panel is the same matrix.
    if let Some(shown) = name.strip_prefix(TRAINING_VIEW) {
        return parse(shown);
    }
    if let Some(b) = parse_back(name) {
        return Some(MatrixId::Back(b));
    }
    let whole = match name {
        "embeddings" => Some(MatrixId::Embeddings),
        "positional" => Some(MatrixId::Positional),
        "x" | "x-q" | "x-k" | "x-v" => Some(MatrixId::X),
        "w_q" => Some(MatrixId::Weight(WeightName::Q)),
        "w_k" => Some(MatrixId::Weight(WeightName::K)),
        "w_v" => Some(MatrixId::Weight(WeightName::V)),
        "w_o" => Some(MatrixId::Weight(WeightName::O)),
        "q" => Some(MatrixId::Q),
        "k" => Some(MatrixId::K),
        "v" => Some(MatrixId::V),
        "concat" => Some(MatrixId::Concat),
        "output" => Some(MatrixId::Output),
        "embeddings-src" => Some(MatrixId::SourceEmbeddings),
        "positional-src" => Some(MatrixId::SourcePositional),
        "x-src" => Some(MatrixId::SourceX),
        _ => BlockParam::ALL
            .into_iter()
            .find(|p| p.key() == name)
            .map(MatrixId::BlockParam)
            .or_else(|| {
                BlockMatrix::ALL
                    .into_iter()
                    .find(|b| b.key() == name)
                    .map(MatrixId::Block)
            }),
    };
    if whole.is_some() {
        return whole;
    }
    for suffix in ["-q", "-k", "-v"] {
        if let Some(base) = name.strip_suffix(suffix) {
            if let Some(m) = COPIED_INPUTS.into_iter().find(|m| panel_name(*m) == base) {
                return Some(m);
            }
        }
    }
    let (key, head) = name.rsplit_once("-h")?;
    let panel = HEAD_PANELS.iter().find(|p| p.key == key)?;
    // Only the spelling panel_name writes, so every panel has exactly one name.
    let canonical = !head.is_empty()
        && head.bytes().all(|b| b.is_ascii_digit())
        && (head == "0" || !head.starts_with('0'));
    if !canonical {
        return None;
    }
    Some(MatrixId::Head(head.parse().ok()?, panel.matrix))
}

/// The cell of the whole pass that a cell of the decoding stage or of the tiles equals: each
/// step computes the query row `at`'s numbers alone, and a cache's row `r` is row `r` of its
/// key/value head's keys (turned with `rope`) or values, which `owner` gives a query head of.
/// `None` for a panel of neither stage, and for what only the tiles keep (`m`, `ℓ`, `o`).
pub fn run_cell(
    panel: &str,
    (row, col): (usize, usize),
    at: usize,
    rope: bool,
    owner: impl Fn(usize) -> usize,
) -> Option<(MatrixId, usize, usize)> {
    let (kind, index) = panel.rsplit_once('-')?;
    let index: Option<usize> = index.get(1..).and_then(|i| i.parse().ok());
    let (q, k) = if rope {
        (HeadMatrix::QRope, HeadMatrix::KRope)
    } else {
        (HeadMatrix::Q, HeadMatrix::K)
    };
    let head = |m: HeadMatrix, r: usize| Some((MatrixId::Head(index?, m), r, col));
    match (kind, panel) {
        (_, "dec-y" | "dec-full-y") => Some((MatrixId::Output, at, col)),
        ("dec-k", _) => Some((MatrixId::Head(owner(index?), k), row, col)),
        ("dec-v", _) => Some((MatrixId::Head(owner(index?), HeadMatrix::V), row, col)),
        ("dec-q", _) => head(q, at),
        ("dec-s", _) => head(HeadMatrix::Scores, at),
        ("dec-a", _) => head(HeadMatrix::Weights, at),
        ("dec-c" | "tile-out" | "tile-c", _) => head(HeadMatrix::Context, at),
        ("tile-x", _) => head(HeadMatrix::Masked, at),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_panel_name_parses_back_to_its_matrix() {
        let mut ids = vec![
            MatrixId::Embeddings,
            MatrixId::Positional,
            MatrixId::X,
            MatrixId::Q,
            MatrixId::K,
            MatrixId::V,
            MatrixId::Concat,
            MatrixId::Output,
            MatrixId::SourceEmbeddings,
            MatrixId::SourcePositional,
            MatrixId::SourceX,
        ];
        ids.extend(WeightName::ALL.map(MatrixId::Weight));
        ids.extend(BlockParam::ALL.map(MatrixId::BlockParam));
        ids.extend(BlockMatrix::ALL.map(MatrixId::Block));
        ids.extend(WHOLE_BACK.map(|(m, _)| MatrixId::Back(m)));
        for h in [0, 1, 7, 12] {
            ids.extend(HeadMatrix::ALL.map(|m| MatrixId::Head(h, m)));
            ids.extend(HeadGrad::ALL.map(|m| MatrixId::Back(BackMatrix::Head(h, m))));
            ids.push(MatrixId::Back(BackMatrix::TargetPattern(h)));
        }
        for id in ids {
            for name in panel_names(id) {
                assert_eq!(parse(&name), Some(id), "{name}");
            }
        }
        assert_eq!(
            panel_name(MatrixId::Head(1, HeadMatrix::KTransposed)),
            "kt-h1"
        );
    }

    #[test]
    fn the_projection_copies_of_x_are_x() {
        for name in ["x-q", "x-k", "x-v"] {
            assert_eq!(parse(name), Some(MatrixId::X));
        }
        assert_eq!(
            panel_names(MatrixId::X),
            ["x", "x-q", "x-k", "x-v"].map(String::from)
        );
    }

    #[test]
    fn names_that_are_not_panels_do_not_parse() {
        for name in [
            "",
            "X",
            "x-o",
            "q-h",
            "q-h-1",
            "q-h+1",
            "q-h01",
            "kt",
            "scores",
            "scores-h0x",
            "w_x",
            "-h0",
            "attention-h0",
        ] {
            assert_eq!(parse(name), None, "{name:?}");
        }
    }

    #[test]
    fn operands_of_a_projection_light_the_copy_of_x_beside_it() {
        assert_eq!(operand_panel(MatrixId::K, MatrixId::X), "x-k");
        assert_eq!(
            operand_panel(MatrixId::K, MatrixId::Weight(WeightName::K)),
            "w_k"
        );
        assert_eq!(operand_panel(MatrixId::Output, MatrixId::Concat), "concat");
        assert_eq!(operand_panel(MatrixId::Embeddings, MatrixId::X), "x");
    }

    #[test]
    fn only_query_by_key_matrices_are_square_and_only_weights_are_probabilities() {
        for panel in HEAD_PANELS {
            assert_eq!(head_panel(panel.matrix), &panel);
        }
        let square: Vec<&str> = HEAD_PANELS
            .iter()
            .filter(|p| p.square)
            .map(|p| p.key)
            .collect();
        assert_eq!(square, ["scores", "scaled", "masked", "weights"]);
        assert_eq!(head_panel(HeadMatrix::Weights).values, Values::Weights);
    }

    #[test]
    fn a_cell_of_decoding_or_the_tiles_is_a_cell_of_the_whole_pass() {
        let owner = |g: usize| g * 2;
        let at = 4;
        assert_eq!(
            run_cell("dec-k-g1", (3, 1), at, true, owner),
            Some((MatrixId::Head(2, HeadMatrix::KRope), 3, 1))
        );
        assert_eq!(
            run_cell("dec-v-g0", (2, 0), at, true, owner),
            Some((MatrixId::Head(0, HeadMatrix::V), 2, 0))
        );
        assert_eq!(
            run_cell("dec-q-h1", (0, 2), at, false, owner),
            Some((MatrixId::Head(1, HeadMatrix::Q), 4, 2))
        );
        assert_eq!(
            run_cell("dec-a-h0", (0, 3), at, true, owner),
            Some((MatrixId::Head(0, HeadMatrix::Weights), 4, 3))
        );
        assert_eq!(
            run_cell("dec-full-y", (0, 5), at, true, owner),
            Some((MatrixId::Output, 4, 5))
        );
        assert_eq!(
            run_cell("tile-x-h1", (0, 2), at, true, owner),
            Some((MatrixId::Head(1, HeadMatrix::Masked), 4, 2))
        );
        assert_eq!(run_cell("tile-o-h0", (1, 1), at, true, owner), None);
        assert_eq!(run_cell("weights-h0", (1, 1), at, true, owner), None);
    }

    #[test]
    fn a_panel_of_one_head_names_its_head() {
        use crate::attention::{BackMatrix, HeadGrad, HeadMatrix, MatrixId};
        assert_eq!(
            panel_head(&panel_name(MatrixId::Head(1, HeadMatrix::Scores))),
            Some(1)
        );
        let grad = MatrixId::Back(BackMatrix::Head(2, HeadGrad::Weights));
        assert_eq!(panel_head(&panel_name(grad)), Some(2));
        assert_eq!(panel_head(&panel_name(MatrixId::X)), None);
        assert_eq!(panel_head("nonsense"), None);
        assert_eq!(projection_part("v"), Some(2));
        assert_eq!(projection_part("w_v"), None);
    }
}
