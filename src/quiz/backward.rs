//! Questions about the backward stages, read from a [`BackwardPass`]: the sign of a gradient
//! cell, which way one plain gradient-descent step moves a weight, and what the gradient is
//! divided by on its way back through the scale.

use super::{Answer, InView, Question};
use crate::attention::{
    BackMatrix, BackwardPass, HeadGrad, LossKind, MatrixId, ScaleMode, Stage, Trace, WeightName,
};
use crate::words::{self, Unasked};

/// A gradient at least this large does not show as 0 at the heatmaps' three decimals.
const SHOWN: f64 = 5e-4;

/// The share of the matrix's largest gradient in size that a non-zero cell asked about has at
/// least: a large gradient keeps its sign when it is redone with the rounded numbers shown.
const LARGE: f64 = 0.25;

/// Positive, negative or 0: the index of the choice in [`words::SIGN_CHOICES`]. Only cells that
/// are exactly 0 or clear of 0 at three decimals are asked about (see [`cell`]).
fn sign(v: f64) -> usize {
    if v > 0.0 {
        0
    } else if v < 0.0 {
        1
    } else {
        2
    }
}

/// Up, down or the same: the index of the choice in [`words::STEP_CHOICES`] for a weight whose
/// gradient is `v`. The step goes against the gradient, so a positive one lowers the weight.
fn step(v: f64) -> usize {
    [1, 0, 2][sign(v)]
}

/// Whether the loss of `pass` reaches backward `stage`: only a task's reaches the output
/// projection and the weighted sum.
pub(super) fn reaches(pass: &BackwardPass, stage: Stage) -> bool {
    stage.is_backward()
        && (pass.loss_kind() == LossKind::Task
            || !matches!(stage, Stage::BackOutput | Stage::BackWeightedSum))
}

/// Why backward `stage` asks nothing, when it does not: the goal's gradients are missing (no
/// `pass`), its loss does not reach the stage, or every gradient there shows as 0.000.
pub fn why_unasked(pass: Option<&BackwardPass>, stage: Stage) -> Option<Unasked> {
    if !stage.is_backward() {
        return None;
    }
    let Some(pass) = pass else {
        return Some(Unasked::NoGradients);
    };
    Some(match stage {
        _ if reaches(pass, stage) => Unasked::TooSmall,
        Stage::BackOutput => Unasked::OutputUnreached,
        _ => Unasked::ValuesUnreached,
    })
}

/// A question about backward `stage` for `pass`, drawing from `pick` (a number below its
/// argument); `None` when the loss does not reach the stage.
pub(super) fn question(
    trace: &Trace,
    pass: &BackwardPass,
    stage: Stage,
    in_view: InView,
    pick: &mut dyn FnMut(usize) -> usize,
) -> Option<Question> {
    let heads = trace.config.n_heads;
    let drawn = pick(heads);
    let h = in_view.head.map_or(drawn, |h| h.min(heads - 1));
    let task = pass.loss_kind() == LossKind::Task;
    let head = |g| BackMatrix::Head(h, g);
    if !reaches(pass, stage) {
        return None;
    }
    match stage {
        Stage::BackLoss if task => sign_question(trace, pass, stage, BackMatrix::Output, pick),
        Stage::BackLoss => sign_question(trace, pass, stage, head(HeadGrad::Weights), pick),
        // On screen alone, ∂L/∂C asks which way it points, as the other activations' do.
        Stage::BackOutput if in_view.part == Some(1) => {
            sign_question(trace, pass, stage, BackMatrix::Concat, pick)
        }
        Stage::BackOutput => step_question(trace, pass, stage, WeightName::O, pick),
        Stage::BackWeightedSum => {
            let m = [HeadGrad::Weights, HeadGrad::V][pick(2)];
            sign_question(trace, pass, stage, head(m), pick)
        }
        Stage::BackSoftmax => sign_question(trace, pass, stage, head(HeadGrad::Masked), pick),
        Stage::BackScale => divisor_question(trace, pass, h, pick),
        Stage::BackScores => {
            // Presenting, a head's ∂L/∂Qₕ (part 0) and ∂L/∂Kₕ (part 1) are steps of their own.
            let drawn = pick(2);
            let m = [HeadGrad::Q, HeadGrad::K][in_view.part.map_or(drawn, |p| p.min(1))];
            sign_question(trace, pass, stage, head(m), pick)
        }
        Stage::BackProjection => {
            let names: &[WeightName] = if task {
                &[WeightName::Q, WeightName::K, WeightName::V]
            } else {
                &[WeightName::Q, WeightName::K]
            };
            let drawn = names[pick(names.len())];
            // On screen alone, ∂L/∂W_v under the pattern loss is a sentence: nothing to ask.
            let name = match in_view.part {
                Some(p) => *names.get(p)?,
                None => drawn,
            };
            step_question(trace, pass, stage, name, pick)
        }
        Stage::BackInput => {
            let drawn = if trace.source.is_some() && pick(2) == 0 {
                BackMatrix::SourceEmbeddings
            } else {
                BackMatrix::Embeddings
            };
            let m = match in_view.part {
                Some(p) => {
                    let results = BackMatrix::shown_alone(stage, trace.wiring());
                    results[p.min(results.len() - 1)]
                }
                None => drawn,
            };
            sign_question(trace, pass, stage, m, pick)
        }
        _ => None,
    }
}

/// A cell of `m` worth asking about: one the mask leaves visible that is exactly 0, or clear
/// of 0 at three decimals and large among the matrix's gradients, so that its sign reads the
/// same from the rounded numbers shown; a non-zero one every other time when there is one.
/// `None` when every visible cell shows as 0.000 without being 0.
fn cell(
    trace: &Trace,
    pass: &BackwardPass,
    m: BackMatrix,
    pick: &mut dyn FnMut(usize) -> usize,
) -> Option<(usize, usize, f64)> {
    let values = m.get(pass)?;
    let hidden = |i: usize, j: usize| match m {
        BackMatrix::Head(h, HeadGrad::Weights | HeadGrad::Masked | HeadGrad::Scores) => trace
            .heads
            .get(h)
            .is_some_and(|head| head.masked[(i, j)] == f64::NEG_INFINITY),
        _ => false,
    };
    let visible: Vec<(usize, usize, f64)> = (0..values.nrows())
        .flat_map(|i| (0..values.ncols()).map(move |j| (i, j)))
        .filter(|&(i, j)| !hidden(i, j))
        .map(|(i, j)| (i, j, values[(i, j)]))
        .collect();
    let largest = visible.iter().fold(0.0f64, |a, &(_, _, v)| a.max(v.abs()));
    let floor = SHOWN.max(LARGE * largest);
    let non_zero: Vec<_> = visible
        .iter()
        .copied()
        .filter(|(_, _, v)| v.abs() >= floor)
        .collect();
    let asked: Vec<_> = visible
        .iter()
        .copied()
        .filter(|(_, _, v)| *v == 0.0 || v.abs() >= floor)
        .collect();
    let from = if pick(2) == 0 && !non_zero.is_empty() {
        non_zero
    } else {
        asked
    };
    (!from.is_empty()).then(|| from[pick(from.len())])
}

/// "Is ∂L/∂Mₕ[i, j] positive, negative or 0?"
fn sign_question(
    trace: &Trace,
    pass: &BackwardPass,
    stage: Stage,
    m: BackMatrix,
    pick: &mut dyn FnMut(usize) -> usize,
) -> Option<Question> {
    let (r, c, v) = cell(trace, pass, m, pick)?;
    let id = MatrixId::Back(m);
    Some(Question {
        stage,
        prompt: words::sign_prompt(&words::cell_name(trace, id, r, c)),
        answer: Answer::Choice {
            choices: words::SIGN_CHOICES.map(String::from).to_vec(),
            accepted: vec![sign(v)],
        },
        cell: (id, r, c),
        note: None,
    })
}

/// "Does W_q[d1, d2] go up, go down or stay the same at one gradient-descent step?"
fn step_question(
    trace: &Trace,
    pass: &BackwardPass,
    stage: Stage,
    weight: WeightName,
    pick: &mut dyn FnMut(usize) -> usize,
) -> Option<Question> {
    let m = match weight {
        WeightName::Q => BackMatrix::WQ,
        WeightName::K => BackMatrix::WK,
        WeightName::V => BackMatrix::WV,
        WeightName::O => BackMatrix::WO,
    };
    let (r, c, v) = cell(trace, pass, m, pick)?;
    // The cell's worked arithmetic says which way the step goes, and how Adam differs.
    let matrix = MatrixId::Weight(weight);
    Some(Question {
        stage,
        prompt: words::step_prompt(
            &words::label(matrix),
            &words::cell_name(trace, matrix, r, c),
        ),
        answer: Answer::Choice {
            choices: words::STEP_CHOICES.map(String::from).to_vec(),
            accepted: vec![step(v)],
        },
        cell: (MatrixId::Back(m), r, c),
        note: None,
    })
}

/// "∂L/∂Mₕ is divided by what to give ∂L/∂Sₕ?": the forward pass's divisor.
fn divisor_question(
    trace: &Trace,
    pass: &BackwardPass,
    h: usize,
    pick: &mut dyn FnMut(usize) -> usize,
) -> Option<Question> {
    let m = BackMatrix::Head(h, HeadGrad::Scores);
    let (r, c, _) = cell(trace, pass, m, pick)?;
    let config = &trace.config;
    let cross = trace.source.is_some();
    let masked = config.causal && !cross;
    let d_k = config.head_dim();
    let n_keys = trace.n_keys();
    let from = words::back_label(BackMatrix::Head(h, HeadGrad::Masked));
    let divisor = match (config.scale, cross) {
        (ScaleMode::SqrtHeadDim, _) => Some(format!("√d_k = √{d_k}")),
        (ScaleMode::SqrtSeqLen, false) => Some(format!("√seq_len = √{n_keys}")),
        (ScaleMode::SqrtSeqLen, true) => Some(format!("√src_len = √{n_keys}")),
        (ScaleMode::None, _) => None,
    };
    let mut note = words::back_divisor_note(divisor.as_deref(), d_k, config.temperature, &from);
    if config.scale == ScaleMode::SqrtSeqLen {
        note.push(' ');
        note.push_str(&words::seq_len_mistake(d_k, n_keys, cross));
    }
    Some(Question {
        stage: Stage::BackScale,
        prompt: words::back_divisor_prompt(&from, &words::back_label(m), masked),
        answer: Answer::Number {
            value: trace.scale_divisor,
        },
        cell: (MatrixId::Back(m), r, c),
        note: Some(note),
    })
}
