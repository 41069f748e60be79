//! Cell arithmetic: the computation behind any cell of any heatmap, written out with the real
//! numbers and the display's rounding, and the operand cells it read, so they can light up.
//!
//! A heatmap panel's name is [`MatrixId::panel_name`]; [`MatrixId::parse`] reads it back, the
//! Projection stage's copies of X (`x-q`, `x-k`, `x-v`) included. [`explain`] then gives the
//! [`Explanation`] of one cell. Rows and columns are counted from 0 here; the text names them
//! the way the heatmaps label them: tokens, and dimensions `d1, d2, …` counted from 1.

use super::config::ScaleMode;
use super::format::{format_value, subscript};
use super::forward::Trace;
use super::stage::Stage;
use super::weights::WeightName;
use super::Matrix;

/// Decimals of the numbers in an explanation: the same as in heatmap cells.
const DECIMALS: usize = 2;

/// Sums with more terms than this write out only the first and last few.
const MAX_WRITTEN_TERMS: usize = 8;
/// Terms written before the gap of a long sum.
const FIRST_TERMS: usize = 3;
/// Terms written after the gap of a long sum.
const LAST_TERMS: usize = 2;

const ROUNDING_NOTE: &str = "Every number above is rounded to 2 decimals, but the result is \
computed from the exact values, so redoing the sum with the rounded numbers can differ in the \
last digit.";

/// One of the matrices a head computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeadMatrix {
    /// Qₕ, the head's columns of Q. (seq_len, head_dim)
    Q,
    /// Kₕ, the head's columns of K. (seq_len, head_dim)
    K,
    /// Kₕᵀ: rows are head dimensions, columns are key tokens. (head_dim, seq_len)
    KTransposed,
    /// Vₕ, the head's columns of V. (seq_len, head_dim)
    V,
    /// Sₕ = Qₕ·Kₕᵀ. (seq_len, seq_len)
    Scores,
    /// Zₕ = Sₕ ÷ divisor. (seq_len, seq_len)
    Scaled,
    /// Mₕ, Zₕ with the causal mask applied. (seq_len, seq_len)
    Masked,
    /// Aₕ = softmax(Mₕ / T) per row. (seq_len, seq_len)
    Weights,
    /// Cₕ = Aₕ·Vₕ. (seq_len, head_dim)
    Context,
}

impl HeadMatrix {
    /// All of them, in the order the stages compute them.
    pub const ALL: [HeadMatrix; 9] = [
        Self::Q,
        Self::K,
        Self::KTransposed,
        Self::V,
        Self::Scores,
        Self::Scaled,
        Self::Masked,
        Self::Weights,
        Self::Context,
    ];

    /// The panel name without the head suffix.
    fn key(self) -> &'static str {
        match self {
            Self::Q => "q",
            Self::K => "k",
            Self::KTransposed => "kt",
            Self::V => "v",
            Self::Scores => "scores",
            Self::Scaled => "scaled",
            Self::Masked => "masked",
            Self::Weights => "weights",
            Self::Context => "context",
        }
    }

    fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.key() == key)
    }

    /// Rows and columns are tokens.
    fn is_square(self) -> bool {
        matches!(
            self,
            Self::Scores | Self::Scaled | Self::Masked | Self::Weights
        )
    }
}

/// Any matrix a heatmap can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatrixId {
    /// E, the token embeddings. (seq_len, d_model)
    Embeddings,
    /// P, the positional encoding; absent when it is switched off. (seq_len, d_model)
    Positional,
    /// X = E + P, the layer's input. (seq_len, d_model)
    X,
    /// A projection matrix. (d_model, d_model)
    Weight(WeightName),
    /// Q = X·W_q. (seq_len, d_model)
    Q,
    /// K = X·W_k. (seq_len, d_model)
    K,
    /// V = X·W_v. (seq_len, d_model)
    V,
    /// One matrix of head `h`, counted from 0.
    Head(usize, HeadMatrix),
    /// C = [C₁ | C₂ | …]. (seq_len, d_model)
    Concat,
    /// Y = C·W_o. (seq_len, d_model)
    Output,
}

impl MatrixId {
    /// Every matrix `trace` holds, in stage order; P only when positions are switched on.
    pub fn all(trace: &Trace) -> Vec<MatrixId> {
        let mut all = vec![Self::Embeddings];
        if trace.positional.is_some() {
            all.push(Self::Positional);
        }
        all.extend([
            Self::X,
            Self::Weight(WeightName::Q),
            Self::Weight(WeightName::K),
            Self::Weight(WeightName::V),
            Self::Q,
            Self::K,
            Self::V,
        ]);
        for h in 0..trace.heads.len() {
            all.extend(HeadMatrix::ALL.map(|m| Self::Head(h, m)));
        }
        all.extend([Self::Concat, Self::Weight(WeightName::O), Self::Output]);
        all
    }

    /// The name of its heatmap panel: `x`, `w_q`, `q`, `scores-h0`, `kt-h1`, `concat`, ….
    pub fn panel_name(&self) -> String {
        match self {
            Self::Embeddings => "embeddings".to_string(),
            Self::Positional => "positional".to_string(),
            Self::X => "x".to_string(),
            Self::Weight(w) => w.key().to_string(),
            Self::Q => "q".to_string(),
            Self::K => "k".to_string(),
            Self::V => "v".to_string(),
            Self::Head(h, m) => format!("{}-h{h}", m.key()),
            Self::Concat => "concat".to_string(),
            Self::Output => "output".to_string(),
        }
    }

    /// Every panel name that shows this matrix: X is also drawn beside each projection as
    /// `x-q`, `x-k` and `x-v`.
    pub fn panel_names(&self) -> Vec<String> {
        let mut names = vec![self.panel_name()];
        if *self == Self::X {
            names.extend(PROJECTIONS.map(|(_, _, w)| x_copy_panel(w)));
        }
        names
    }

    /// The matrix a panel shows, from its name; `x-q`, `x-k` and `x-v` are X.
    pub fn parse(name: &str) -> Option<MatrixId> {
        let whole = match name {
            "embeddings" => Some(Self::Embeddings),
            "positional" => Some(Self::Positional),
            "x" | "x-q" | "x-k" | "x-v" => Some(Self::X),
            "w_q" => Some(Self::Weight(WeightName::Q)),
            "w_k" => Some(Self::Weight(WeightName::K)),
            "w_v" => Some(Self::Weight(WeightName::V)),
            "w_o" => Some(Self::Weight(WeightName::O)),
            "q" => Some(Self::Q),
            "k" => Some(Self::K),
            "v" => Some(Self::V),
            "concat" => Some(Self::Concat),
            "output" => Some(Self::Output),
            _ => None,
        };
        if whole.is_some() {
            return whole;
        }
        // Split at the last "-h"; a char search keeps the substring searcher out of the wasm.
        let at = name.rfind('h')?;
        let key = name.get(..at)?.strip_suffix('-')?;
        let head = name.get(at + 1..)?;
        let kind = HeadMatrix::from_key(key)?;
        // Only the spelling panel_name writes, so every panel has exactly one name.
        let canonical = !head.is_empty()
            && head.bytes().all(|b| b.is_ascii_digit())
            && (head == "0" || !head.starts_with('0'));
        if !canonical {
            return None;
        }
        Some(Self::Head(head.parse().ok()?, kind))
    }

    /// Its symbol as the panels title it: `X`, `W_q`, `S₁`, `K₂ᵀ`, `Y`.
    pub fn label(&self) -> String {
        match self {
            Self::Embeddings => "E".to_string(),
            Self::Positional => "P".to_string(),
            Self::X => "X".to_string(),
            Self::Weight(w) => w.label().to_string(),
            Self::Q => "Q".to_string(),
            Self::K => "K".to_string(),
            Self::V => "V".to_string(),
            Self::Head(h, m) => {
                let s = subscript(h + 1);
                match m {
                    HeadMatrix::Q => format!("Q{s}"),
                    HeadMatrix::K => format!("K{s}"),
                    HeadMatrix::KTransposed => format!("K{s}ᵀ"),
                    HeadMatrix::V => format!("V{s}"),
                    HeadMatrix::Scores => format!("S{s}"),
                    HeadMatrix::Scaled => format!("Z{s}"),
                    HeadMatrix::Masked => format!("M{s}"),
                    HeadMatrix::Weights => format!("A{s}"),
                    HeadMatrix::Context => format!("C{s}"),
                }
            }
            Self::Concat => "C".to_string(),
            Self::Output => "Y".to_string(),
        }
    }

    /// The stage that computes it (inputs and weights: the first stage that reads them).
    pub fn stage(&self) -> Stage {
        match self {
            Self::Embeddings | Self::Positional | Self::X => Stage::Input,
            Self::Weight(WeightName::O) | Self::Output => Stage::OutputProjection,
            Self::Weight(_) | Self::Q | Self::K | Self::V => Stage::Projection,
            Self::Head(_, m) => match m {
                HeadMatrix::Q | HeadMatrix::K | HeadMatrix::V => Stage::SplitHeads,
                HeadMatrix::KTransposed | HeadMatrix::Scores => Stage::Scores,
                HeadMatrix::Scaled => Stage::Scale,
                HeadMatrix::Masked => Stage::Mask,
                HeadMatrix::Weights => Stage::Softmax,
                HeadMatrix::Context => Stage::WeightedSum,
            },
            Self::Concat => Stage::Concat,
        }
    }

    /// Its values in `trace`; `None` for a head that does not exist or P when it is off.
    pub fn get(&self, trace: &Trace) -> Option<Matrix> {
        let stored = self.stored(trace)?;
        Some(if self.is_transposed() {
            stored.transpose()
        } else {
            stored.clone()
        })
    }

    /// (rows, columns), without copying the values.
    pub fn shape(&self, trace: &Trace) -> Option<(usize, usize)> {
        let stored = self.stored(trace)?;
        Some(if self.is_transposed() {
            (stored.ncols(), stored.nrows())
        } else {
            (stored.nrows(), stored.ncols())
        })
    }

    /// One value, without copying the matrix; `None` out of range.
    pub fn value(&self, trace: &Trace, row: usize, col: usize) -> Option<f64> {
        let stored = self.stored(trace)?;
        if self.is_transposed() {
            at(stored, col, row)
        } else {
            at(stored, row, col)
        }
    }

    /// The matrix as the trace keeps it (Kₕᵀ is kept as Kₕ).
    fn stored<'t>(&self, trace: &'t Trace) -> Option<&'t Matrix> {
        Some(match self {
            Self::Embeddings => &trace.embeddings,
            Self::Positional => trace.positional.as_ref()?,
            Self::X => &trace.x,
            Self::Weight(w) => trace.weights.get(*w),
            Self::Q => &trace.q,
            Self::K => &trace.k,
            Self::V => &trace.v,
            Self::Head(h, m) => {
                let head = trace.heads.get(*h)?;
                match m {
                    HeadMatrix::Q => &head.q,
                    HeadMatrix::K | HeadMatrix::KTransposed => &head.k,
                    HeadMatrix::V => &head.v,
                    HeadMatrix::Scores => &head.scores,
                    HeadMatrix::Scaled => &head.scaled,
                    HeadMatrix::Masked => &head.masked,
                    HeadMatrix::Weights => &head.weights,
                    HeadMatrix::Context => &head.context,
                }
            }
            Self::Concat => &trace.concat,
            Self::Output => &trace.output,
        })
    }

    fn is_transposed(&self) -> bool {
        matches!(self, Self::Head(_, HeadMatrix::KTransposed))
    }

    /// The heatmap's label of row `r`.
    fn row_label(&self, trace: &Trace, r: usize) -> String {
        match self {
            Self::Weight(_) => dim(r),
            Self::Head(h, HeadMatrix::KTransposed) => dim(h * trace.head_dim() + r),
            _ => token(trace, r),
        }
    }

    /// The heatmap's label of column `c`.
    fn col_label(&self, trace: &Trace, c: usize) -> String {
        match self {
            Self::Head(_, HeadMatrix::KTransposed) => token(trace, c),
            Self::Head(_, m) if m.is_square() => token(trace, c),
            Self::Head(h, _) => dim(h * trace.head_dim() + c),
            _ => dim(c),
        }
    }

    /// `S₁[am, hungry]`.
    fn cell_name(&self, trace: &Trace, r: usize, c: usize) -> String {
        format!(
            "{}[{}, {}]",
            self.label(),
            self.row_label(trace, r),
            self.col_label(trace, c)
        )
    }

    /// What one of its cells is called in a title.
    fn kind(&self) -> &'static str {
        match self {
            Self::Embeddings => "Embedding",
            Self::Positional => "Position",
            Self::X => "Input",
            Self::Weight(_) => "Weight",
            Self::Q | Self::Head(_, HeadMatrix::Q) => "Query",
            Self::K | Self::Head(_, HeadMatrix::K | HeadMatrix::KTransposed) => "Key",
            Self::V | Self::Head(_, HeadMatrix::V) => "Value",
            Self::Head(_, HeadMatrix::Scores) => "Score",
            Self::Head(_, HeadMatrix::Scaled) => "Scaled score",
            Self::Head(_, HeadMatrix::Masked) => "Masked score",
            Self::Head(_, HeadMatrix::Weights) => "Attention weight",
            Self::Head(_, HeadMatrix::Context) => "Context",
            Self::Concat => "Concatenated",
            Self::Output => "Output",
        }
    }
}

/// The three input projections: result, its symbol, its weight.
const PROJECTIONS: [(MatrixId, &str, WeightName); 3] = [
    (MatrixId::Q, "Q", WeightName::Q),
    (MatrixId::K, "K", WeightName::K),
    (MatrixId::V, "V", WeightName::V),
];

/// The copy of X drawn beside `w` on the Projection stage: `x-q`.
fn x_copy_panel(w: WeightName) -> String {
    format!("x-{}", w.key().strip_prefix("w_").unwrap_or(w.key()))
}

/// Cells that one cell was computed from, to light up in their own heatmap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operand {
    /// The matrix read.
    pub matrix: MatrixId,
    /// The panel to light, the one drawn beside the explained cell's: `x-q` for X when
    /// explaining a cell of Q, otherwise `matrix.panel_name()`.
    pub panel: String,
    /// Whole rows read.
    pub rows: Vec<usize>,
    /// Whole columns read.
    pub cols: Vec<usize>,
    /// A single cell read.
    pub cell: Option<(usize, usize)>,
}

impl Operand {
    fn new(matrix: MatrixId) -> Self {
        Self {
            matrix,
            panel: matrix.panel_name(),
            rows: Vec::new(),
            cols: Vec::new(),
            cell: None,
        }
    }

    fn row(matrix: MatrixId, r: usize) -> Self {
        Self {
            rows: vec![r],
            ..Self::new(matrix)
        }
    }

    fn col(matrix: MatrixId, c: usize) -> Self {
        Self {
            cols: vec![c],
            ..Self::new(matrix)
        }
    }

    fn cell(matrix: MatrixId, r: usize, c: usize) -> Self {
        Self {
            cell: Some((r, c)),
            ..Self::new(matrix)
        }
    }

    fn in_panel(self, panel: String) -> Self {
        Self { panel, ..self }
    }
}

/// How one cell was computed, for a learner.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// What the cell is, named by its row and column: `Score S₁[am, hungry]`.
    pub title: String,
    /// The rule in symbols: `q_i · k_j = Σ_m Q₁[i, m] · K₁[j, m]`.
    pub formula: String,
    /// The rule with this cell's numbers, term by term, ending in `= ` and the value as shown.
    pub expansion: String,
    /// The exact value, as the trace holds it.
    pub value: f64,
    /// The value as the heatmap shows it.
    pub value_text: String,
    /// What else is worth knowing: a switch that is off, why a cell is hidden, rounding.
    pub note: Option<String>,
    /// The cells read, to light up.
    pub operands: Vec<Operand>,
}

/// The arithmetic behind cell (`row`, `col`) of `matrix`; `None` when there is no such cell.
pub fn explain(trace: &Trace, matrix: MatrixId, row: usize, col: usize) -> Option<Explanation> {
    let value = matrix.value(trace, row, col)?;
    let cell = Cell {
        trace,
        id: matrix,
        i: row,
        c: col,
        value,
    };
    let work = match matrix {
        MatrixId::Embeddings => embedding(&cell),
        MatrixId::Positional => position(&cell),
        MatrixId::X => input(&cell),
        MatrixId::Weight(w) => Some(weight(&cell, w)),
        MatrixId::Q | MatrixId::K | MatrixId::V => {
            let (_, symbol, w) = PROJECTIONS.into_iter().find(|p| p.0 == matrix)?;
            let x = Source {
                id: MatrixId::X,
                symbol: "X",
                panel: x_copy_panel(w),
            };
            projection(&cell, symbol, x, w)
        }
        MatrixId::Output => {
            let concat = Source {
                id: MatrixId::Concat,
                symbol: "C",
                panel: MatrixId::Concat.panel_name(),
            };
            projection(&cell, "Y", concat, WeightName::O)
        }
        MatrixId::Head(h, m) => match m {
            HeadMatrix::Q | HeadMatrix::K | HeadMatrix::V => split(&cell, h, m),
            HeadMatrix::KTransposed => transposed(&cell, h),
            HeadMatrix::Scores => score(&cell, h),
            HeadMatrix::Scaled => scale(&cell, h),
            HeadMatrix::Masked => mask(&cell, h),
            HeadMatrix::Weights => softmax(&cell, h),
            HeadMatrix::Context => weighted_sum(&cell, h),
        },
        MatrixId::Concat => concat(&cell),
    }?;
    let value_text = num(value);
    Some(Explanation {
        title: format!("{} {}", matrix.kind(), matrix.cell_name(trace, row, col)),
        formula: work.formula,
        expansion: format!("{} = {value_text}", work.steps),
        value,
        value_text,
        note: (!work.notes.is_empty()).then(|| work.notes.join(" ")),
        operands: work.operands,
    })
}

/// An arrow key's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// One row up.
    Up,
    /// One row down.
    Down,
    /// One column left.
    Left,
    /// One column right.
    Right,
}

impl Direction {
    /// The direction of a `KeyboardEvent.key` such as `ArrowUp`.
    pub fn from_key(key: &str) -> Option<Direction> {
        match key {
            "ArrowUp" => Some(Self::Up),
            "ArrowDown" => Some(Self::Down),
            "ArrowLeft" => Some(Self::Left),
            "ArrowRight" => Some(Self::Right),
            _ => None,
        }
    }
}

/// The cell one step from `(row, col)` in a `(rows, cols)` matrix, staying inside it; a
/// selection left outside (after the matrix shrank) is first brought back in.
pub fn move_selection(
    shape: (usize, usize),
    selection: (usize, usize),
    direction: Direction,
) -> (usize, usize) {
    let last_row = shape.0.saturating_sub(1);
    let last_col = shape.1.saturating_sub(1);
    let (row, col) = (selection.0.min(last_row), selection.1.min(last_col));
    match direction {
        Direction::Up => (row.saturating_sub(1), col),
        Direction::Down => ((row + 1).min(last_row), col),
        Direction::Left => (row, col.saturating_sub(1)),
        Direction::Right => (row, (col + 1).min(last_col)),
    }
}

/// The cell being explained.
struct Cell<'t> {
    trace: &'t Trace,
    id: MatrixId,
    i: usize,
    c: usize,
    value: f64,
}

impl Cell<'_> {
    fn name(&self) -> String {
        self.id.cell_name(self.trace, self.i, self.c)
    }
}

/// An explanation before its final `= value`.
struct Work {
    formula: String,
    steps: String,
    notes: Vec<String>,
    operands: Vec<Operand>,
}

/// The left factor of a projection and the panel it is drawn in.
struct Source {
    id: MatrixId,
    symbol: &'static str,
    panel: String,
}

fn embedding(cell: &Cell) -> Option<Work> {
    let t = token(cell.trace, cell.i);
    Some(Work {
        formula: "E[i, c] = dimension c of the embedding of token i".to_string(),
        steps: cell.name(),
        notes: vec![format!(
            "An input, not computed: the vector looked up for “{t}”. Every word has a fixed toy \
             vector unless you edit it."
        )],
        operands: Vec::new(),
    })
}

fn position(cell: &Cell) -> Option<Work> {
    let d_model = cell.trace.config.d_model;
    let pair = (cell.c / 2) * 2;
    let angle = super::embeddings::encoding_angle(cell.i, cell.c, d_model);
    let f = if cell.c.is_multiple_of(2) {
        "sin"
    } else {
        "cos"
    };
    let t = token(cell.trace, cell.i);
    Some(Work {
        formula: format!(
            "P[pos, c] = {f}(pos / 10000^(2k / d_model)), with 2k = c rounded down to even"
        ),
        steps: format!(
            "{f}({} / 10000^({pair}/{d_model})) = {f}({})",
            cell.i,
            format_value(angle, 4)
        ),
        notes: vec![format!(
            "Positions count from 0: “{t}” is at position {}. Even columns use sin, odd columns \
             cos, and each pair of columns a slower wave than the pair before.",
            cell.i
        )],
        operands: Vec::new(),
    })
}

fn input(cell: &Cell) -> Option<Work> {
    let (i, c) = (cell.i, cell.c);
    let e = at(&cell.trace.embeddings, i, c)?;
    let e_name = MatrixId::Embeddings.cell_name(cell.trace, i, c);
    match &cell.trace.positional {
        Some(positions) => {
            let p = at(positions, i, c)?;
            let mut notes = Vec::new();
            rounding_note(&mut notes, rounded(e) + rounded(p), cell.value);
            Some(Work {
                formula: "X[i, c] = E[i, c] + P[i, c]".to_string(),
                steps: format!("{} + {}", num(e), after_op(p)),
                notes,
                operands: vec![
                    Operand::cell(MatrixId::Embeddings, i, c),
                    Operand::cell(MatrixId::Positional, i, c),
                ],
            })
        }
        None => Some(Work {
            formula: "X[i, c] = E[i, c]".to_string(),
            steps: e_name,
            notes: vec!["X = E: positional encoding is off.".to_string()],
            operands: vec![Operand::cell(MatrixId::Embeddings, i, c)],
        }),
    }
}

fn weight(cell: &Cell, w: WeightName) -> Work {
    let row = cell.id.row_label(cell.trace, cell.i);
    let col = cell.id.col_label(cell.trace, cell.c);
    Work {
        formula: format!("{}[m, c]: a parameter of the layer", w.label()),
        steps: cell.name(),
        notes: vec![format!(
            "A parameter, not computed from the sentence: training would learn it; here it is \
             the default value or the one you typed. It carries input dimension {row} into \
             output dimension {col}."
        )],
        operands: Vec::new(),
    }
}

/// `result[i, c] = Σ_m source[i, m] · W[m, c]`.
fn projection(cell: &Cell, result: &str, source: Source, w: WeightName) -> Option<Work> {
    let (i, c) = (cell.i, cell.c);
    let left = source.id.stored(cell.trace)?;
    let right = cell.trace.weights.get(w);
    let pairs = (0..left.ncols())
        .map(|m| Some((at(left, i, m)?, at(right, m, c)?)))
        .collect::<Option<Vec<_>>>()?;
    let (sum, notes) = dot(&pairs, cell.value);
    let (src, wl) = (source.symbol, w.label());
    Some(Work {
        formula: format!("{result}[i, c] = Σ_m {src}[i, m] · {wl}[m, c]"),
        steps: format!(
            "{src}[{}, :] · {wl}[:, {}] = {sum}",
            token(cell.trace, i),
            dim(c)
        ),
        notes,
        operands: vec![
            Operand::row(source.id, i).in_panel(source.panel),
            Operand::col(MatrixId::Weight(w), c),
        ],
    })
}

fn split(cell: &Cell, h: usize, m: HeadMatrix) -> Option<Work> {
    let (whole, symbol) = match m {
        HeadMatrix::Q => (MatrixId::Q, "Q"),
        HeadMatrix::K => (MatrixId::K, "K"),
        HeadMatrix::V => (MatrixId::V, "V"),
        _ => return None,
    };
    let head_dim = cell.trace.head_dim();
    let column = h * head_dim + cell.c;
    whole.value(cell.trace, cell.i, column)?;
    Some(Work {
        formula: format!("{symbol}ₕ[i, c] = {symbol}[i, h·d_k + c]"),
        steps: format!(
            "{} = {}",
            cell.name(),
            whole.cell_name(cell.trace, cell.i, column)
        ),
        notes: vec![format!(
            "Head {} takes {} of {symbol} (d_k = {head_dim} per head); this cell is column {}.",
            h + 1,
            columns_text(h, head_dim),
            dim(column)
        )],
        operands: vec![Operand::cell(whole, cell.i, column)],
    })
}

fn transposed(cell: &Cell, h: usize) -> Option<Work> {
    let k = MatrixId::Head(h, HeadMatrix::K);
    let s = subscript(h + 1);
    Some(Work {
        formula: format!("K{s}ᵀ[m, j] = K{s}[j, m]"),
        steps: format!(
            "{} = {}",
            cell.name(),
            k.cell_name(cell.trace, cell.c, cell.i)
        ),
        notes: vec![
            "Kᵀ is K turned on its side: each key token becomes a column, so Q·Kᵀ dots every \
             query with every key."
                .to_string(),
        ],
        operands: vec![Operand::cell(k, cell.c, cell.i)],
    })
}

fn score(cell: &Cell, h: usize) -> Option<Work> {
    let head = cell.trace.heads.get(h)?;
    let (i, j) = (cell.i, cell.c);
    let pairs = (0..head.q.ncols())
        .map(|m| Some((at(&head.q, i, m)?, at(&head.k, j, m)?)))
        .collect::<Option<Vec<_>>>()?;
    let (sum, notes) = dot(&pairs, cell.value);
    let s = subscript(h + 1);
    Some(Work {
        formula: format!("q_i · k_j = Σ_m Q{s}[i, m] · K{s}[j, m]"),
        steps: format!(
            "q_{} · k_{} = {sum}",
            token(cell.trace, i),
            token(cell.trace, j)
        ),
        notes,
        operands: vec![
            Operand::row(MatrixId::Head(h, HeadMatrix::Q), i),
            Operand::row(MatrixId::Head(h, HeadMatrix::K), j),
            Operand::col(MatrixId::Head(h, HeadMatrix::KTransposed), j),
        ],
    })
}

fn scale(cell: &Cell, h: usize) -> Option<Work> {
    let trace = cell.trace;
    let head = trace.heads.get(h)?;
    let (i, j) = (cell.i, cell.c);
    let score = at(&head.scores, i, j)?;
    let divisor = trace.scale_divisor;
    let s = subscript(h + 1);
    let score_name = MatrixId::Head(h, HeadMatrix::Scores).cell_name(trace, i, j);
    let head_dim = trace.head_dim();
    let mut notes = Vec::new();
    let root = match trace.config.scale {
        ScaleMode::SqrtHeadDim => Some(("d_k", head_dim)),
        ScaleMode::SqrtSeqLen => Some(("seq_len", trace.seq_len())),
        ScaleMode::None => None,
    };
    let (formula, steps) = match root {
        Some((symbol, n)) => {
            if trace.config.scale == ScaleMode::SqrtSeqLen {
                notes.push(format!(
                    "This divides by √seq_len, a common mistake: the size of a dot product grows \
                     with the head width d_k = {head_dim}, not with the length of the sentence."
                ));
            }
            rounding_note(&mut notes, rounded(score) / divisor, cell.value);
            (
                format!("Z{s}[i, j] = S{s}[i, j] / √{symbol}"),
                format!(
                    "{} / √{n} = {} / {}",
                    num(score),
                    num(score),
                    format_value(divisor, 3)
                ),
            )
        }
        None => {
            notes.push("Scaling is off: the scores pass through unchanged.".to_string());
            (format!("Z{s}[i, j] = S{s}[i, j]"), score_name)
        }
    };
    Some(Work {
        formula,
        steps,
        notes,
        operands: vec![Operand::cell(MatrixId::Head(h, HeadMatrix::Scores), i, j)],
    })
}

fn mask(cell: &Cell, h: usize) -> Option<Work> {
    let trace = cell.trace;
    let (i, j) = (cell.i, cell.c);
    let s = subscript(h + 1);
    let (query, key) = (token(trace, i), token(trace, j));
    let masked_name = cell.name();
    let scaled_name = MatrixId::Head(h, HeadMatrix::Scaled).cell_name(trace, i, j);
    let mut notes = Vec::new();
    let (formula, steps) = if trace.config.causal {
        let formula = format!("M{s}[i, j] = −∞ if j > i, else Z{s}[i, j]");
        let (qp, kp) = (i + 1, j + 1);
        let steps = if j > i {
            notes.push(
                "A token may not look at the tokens after it: in the softmax exp(−∞) = 0, so \
                 this key gets no weight at all."
                    .to_string(),
            );
            format!(
                "key “{key}” (position {kp}) comes after query “{query}” (position {qp}): \
                 j > i, so {masked_name}"
            )
        } else if j == i {
            format!(
                "key “{key}” (position {kp}) is the query itself: j = i, so {masked_name} = \
                 {scaled_name}"
            )
        } else {
            format!(
                "key “{key}” (position {kp}) comes before query “{query}” (position {qp}): \
                 j < i, so {masked_name} = {scaled_name}"
            )
        };
        (formula, steps)
    } else {
        notes.push(
            "The causal mask is off: every token may look at every token, later ones included."
                .to_string(),
        );
        (
            format!("M{s}[i, j] = Z{s}[i, j]"),
            format!("the causal mask is off, so {masked_name} = {scaled_name}"),
        )
    };
    Some(Work {
        formula,
        steps,
        notes,
        operands: vec![Operand::cell(MatrixId::Head(h, HeadMatrix::Scaled), i, j)],
    })
}

fn softmax(cell: &Cell, h: usize) -> Option<Work> {
    let trace = cell.trace;
    let head = trace.heads.get(h)?;
    let (i, j) = (cell.i, cell.c);
    let row = (0..head.masked.ncols())
        .map(|k| at(&head.masked, i, k))
        .collect::<Option<Vec<_>>>()?;
    let z = *row.get(j)?;
    let t = trace.config.temperature;
    let s = subscript(h + 1);
    let formula = if t == 1.0 {
        format!("A{s}[i, j] = exp(M{s}[i, j] − max_i) / Σ_j′ exp(M{s}[i, j′] − max_i)")
    } else {
        format!("A{s}[i, j] = exp((M{s}[i, j] − max_i) / T) / Σ_j′ exp((M{s}[i, j′] − max_i) / T)")
    };
    let operands = vec![
        Operand::row(MatrixId::Head(h, HeadMatrix::Masked), i),
        Operand::row(MatrixId::Head(h, HeadMatrix::Weights), i),
    ];
    let query = token(trace, i);
    let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut notes = Vec::new();
    if max == f64::NEG_INFINITY || !max.is_finite() {
        let (steps, note) = if max == f64::NEG_INFINITY {
            (
                format!("every key of query “{query}” is masked, so {}", cell.name()),
                "With no key left to attend to, the row's weights are all zero by definition.",
            )
        } else {
            (
                cell.name(),
                "This row has an infinite score: the infinite entries share the weight equally.",
            )
        };
        notes.push(note.to_string());
        return Some(Work {
            formula,
            steps,
            notes,
            operands,
        });
    }
    let exponent = |v: f64| ((v - max) / t).exp();
    let exps: Vec<f64> = row.iter().map(|v| exponent(*v)).collect();
    let total: f64 = exps.iter().sum();
    let call = |v: f64| {
        if v == f64::NEG_INFINITY {
            "exp(−∞)".to_string()
        } else if t == 1.0 {
            format!("exp({} − {})", num(v), after_op(max))
        } else {
            format!("exp(({} − {}) / {})", num(v), after_op(max), t)
        }
    };
    let evaluated = |v: f64, e: f64| {
        if v == f64::NEG_INFINITY {
            "0".to_string()
        } else {
            num(e)
        }
    };
    let calls: Vec<String> = row.iter().map(|v| call(*v)).collect();
    let values: Vec<String> = row
        .iter()
        .zip(&exps)
        .map(|(v, e)| evaluated(*v, *e))
        .collect();
    let numerator = exponent(z);
    let steps = format!(
        "{} / ({}) = {} / ({}) = {} / {}",
        call(z),
        join_terms(&calls),
        evaluated(z, numerator),
        join_terms(&values),
        evaluated(z, numerator),
        num(total)
    );
    notes.push(format!(
        "max_i = {} is the largest score in row “{query}”; subtracting it keeps exp from \
         overflowing and leaves the weights unchanged.",
        num(max)
    ));
    if t != 1.0 {
        notes.push(format!(
            "Temperature T = {}: below 1 it sharpens the row, above 1 it flattens it.",
            t
        ));
    }
    if row.contains(&f64::NEG_INFINITY) {
        notes.push("Masked keys add exp(−∞) = 0.".to_string());
    }
    if let Some(note) = hidden_terms_note(row.len()) {
        notes.push(note);
    } else {
        rounding_note(&mut notes, rounded(numerator) / rounded(total), cell.value);
    }
    Some(Work {
        formula,
        steps,
        notes,
        operands,
    })
}

fn weighted_sum(cell: &Cell, h: usize) -> Option<Work> {
    let trace = cell.trace;
    let head = trace.heads.get(h)?;
    let (i, c) = (cell.i, cell.c);
    let pairs = (0..head.weights.ncols())
        .map(|j| Some((at(&head.weights, i, j)?, at(&head.v, j, c)?)))
        .collect::<Option<Vec<_>>>()?;
    let (sum, mut notes) = dot(&pairs, cell.value);
    let s = subscript(h + 1);
    let query = token(trace, i);
    let column = cell.id.col_label(trace, c);
    notes.insert(
        0,
        format!(
            "A weighted average of the value column {column}, with the attention weights of \
             row “{query}”, which sum to 1."
        ),
    );
    Some(Work {
        formula: format!("C{s}[i, c] = Σ_j A{s}[i, j] · V{s}[j, c]"),
        steps: format!("A{s}[{query}, :] · V{s}[:, {column}] = {sum}"),
        notes,
        operands: vec![
            Operand::row(MatrixId::Head(h, HeadMatrix::Weights), i),
            Operand::col(MatrixId::Head(h, HeadMatrix::V), c),
        ],
    })
}

fn concat(cell: &Cell) -> Option<Work> {
    let trace = cell.trace;
    let head_dim = trace.head_dim();
    if head_dim == 0 {
        return None;
    }
    let (h, c) = (cell.c / head_dim, cell.c % head_dim);
    let context = MatrixId::Head(h, HeadMatrix::Context);
    context.value(trace, cell.i, c)?;
    Some(Work {
        formula: "C[i, c] = Cₕ[i, c − h·d_k], for the head h whose columns hold c".to_string(),
        steps: format!("{} = {}", cell.name(), context.cell_name(trace, cell.i, c)),
        notes: vec![format!(
            "{} of C come from head {}; this cell is copied from it unchanged.",
            capitalised(&columns_text(h, head_dim)),
            h + 1
        )],
        operands: vec![Operand::cell(context, cell.i, c)],
    })
}

/// `a × b + c × d + …`, and the notes it needs.
fn dot(pairs: &[(f64, f64)], value: f64) -> (String, Vec<String>) {
    if pairs.is_empty() {
        return ("0".to_string(), Vec::new());
    }
    let terms: Vec<String> = pairs
        .iter()
        .enumerate()
        .map(|(n, (a, b))| {
            let a = if n == 0 { num(*a) } else { after_op(*a) };
            format!("{a} × {}", after_op(*b))
        })
        .collect();
    let mut notes = Vec::new();
    if let Some(note) = hidden_terms_note(pairs.len()) {
        notes.push(note);
    } else {
        let by_hand: f64 = pairs.iter().map(|(a, b)| rounded(*a) * rounded(*b)).sum();
        rounding_note(&mut notes, by_hand, value);
    }
    (join_terms(&terms), notes)
}

/// Terms joined by ` + `; a long sum keeps its first and last few and counts the rest.
fn join_terms(terms: &[String]) -> String {
    if terms.len() <= MAX_WRITTEN_TERMS {
        return terms.join(" + ");
    }
    let hidden = terms.len() - FIRST_TERMS - LAST_TERMS;
    let mut parts = terms[..FIRST_TERMS].to_vec();
    parts.push(format!("… {hidden} more terms …"));
    parts.extend_from_slice(&terms[terms.len() - LAST_TERMS..]);
    parts.join(" + ")
}

fn hidden_terms_note(count: usize) -> Option<String> {
    (count > MAX_WRITTEN_TERMS).then(|| {
        format!(
            "The sum has {count} terms; {} in the middle are left out above, but the result \
             uses all of them.",
            count - FIRST_TERMS - LAST_TERMS
        )
    })
}

/// Warns when the rounded numbers shown do not add up to the rounded result.
fn rounding_note(notes: &mut Vec<String>, by_hand: f64, value: f64) {
    if num(by_hand) != num(value) {
        notes.push(ROUNDING_NOTE.to_string());
    }
}

/// A number as the heatmaps show it.
fn num(v: f64) -> String {
    format_value(v, DECIMALS)
}

/// A number written after an operator: negative ones in brackets, `+ (−0.42)`, so a minus
/// sign never follows an operator.
fn after_op(v: f64) -> String {
    let text = num(v);
    if text.starts_with('−') {
        format!("({text})")
    } else {
        text
    }
}

/// `v` rounded as it is shown.
fn rounded(v: f64) -> f64 {
    let scale = 10f64.powi(DECIMALS as i32);
    (v * scale).round() / scale
}

fn at(m: &Matrix, r: usize, c: usize) -> Option<f64> {
    m.get((r, c)).copied()
}

/// A dimension as the heatmaps label it, counted from 1: `d3`.
fn dim(index: usize) -> String {
    format!("d{}", index + 1)
}

fn token(trace: &Trace, index: usize) -> String {
    trace
        .tokens
        .get(index)
        .cloned()
        .unwrap_or_else(|| format!("token {}", index + 1))
}

/// `columns d3–d4` (or `column d3`) of head `h`.
fn columns_text(h: usize, head_dim: usize) -> String {
    let first = h * head_dim;
    if head_dim == 1 {
        format!("column {}", dim(first))
    } else {
        format!("columns {}–{}", dim(first), dim(first + head_dim - 1))
    }
}

/// `text` with its first letter capitalised; the texts are plain ASCII, so the Unicode case
/// tables (24 kB of the wasm module) are not needed.
fn capitalised(text: &str) -> String {
    let mut text = text.to_string();
    if let Some(first) = text.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    text
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
        ];
        ids.extend(WeightName::ALL.map(MatrixId::Weight));
        for h in [0, 1, 7, 12] {
            ids.extend(HeadMatrix::ALL.map(|m| MatrixId::Head(h, m)));
        }
        for id in ids {
            for name in id.panel_names() {
                assert_eq!(MatrixId::parse(&name), Some(id), "{name}");
            }
        }
    }

    #[test]
    fn the_projection_copies_of_x_are_x() {
        for name in ["x-q", "x-k", "x-v"] {
            assert_eq!(MatrixId::parse(name), Some(MatrixId::X));
        }
        assert_eq!(
            MatrixId::X.panel_names(),
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
            assert_eq!(MatrixId::parse(name), None, "{name:?}");
        }
    }

    #[test]
    fn head_matrices_are_labelled_with_heads_counted_from_one() {
        assert_eq!(MatrixId::Head(0, HeadMatrix::Scores).label(), "S₁");
        assert_eq!(MatrixId::Head(1, HeadMatrix::KTransposed).label(), "K₂ᵀ");
        assert_eq!(
            MatrixId::Head(1, HeadMatrix::KTransposed).panel_name(),
            "kt-h1"
        );
    }

    #[test]
    fn negative_numbers_after_an_operator_are_bracketed() {
        assert_eq!(after_op(-0.424), "(−0.42)");
        assert_eq!(after_op(0.424), "0.42");
        assert_eq!(after_op(-0.001), "0.00");
    }

    #[test]
    fn long_sums_keep_their_ends_and_count_the_middle() {
        let terms: Vec<String> = (1..=32).map(|n| n.to_string()).collect();
        assert_eq!(
            join_terms(&terms),
            "1 + 2 + 3 + … 27 more terms … + 31 + 32"
        );
        assert_eq!(join_terms(&terms[..8]), "1 + 2 + 3 + 4 + 5 + 6 + 7 + 8");
    }

    #[test]
    fn arrow_keys_move_one_cell_and_stop_at_the_edges() {
        let shape = (3, 4);
        assert_eq!(move_selection(shape, (0, 0), Direction::Up), (0, 0));
        assert_eq!(move_selection(shape, (0, 0), Direction::Left), (0, 0));
        assert_eq!(move_selection(shape, (0, 0), Direction::Down), (1, 0));
        assert_eq!(move_selection(shape, (0, 0), Direction::Right), (0, 1));
        assert_eq!(move_selection(shape, (2, 3), Direction::Down), (2, 3));
        assert_eq!(move_selection(shape, (2, 3), Direction::Right), (2, 3));
        assert_eq!(move_selection(shape, (9, 9), Direction::Up), (1, 3));
        assert_eq!(move_selection((0, 0), (5, 5), Direction::Down), (0, 0));
        assert_eq!(Direction::from_key("ArrowLeft"), Some(Direction::Left));
        assert_eq!(Direction::from_key("Enter"), None);
    }
}
