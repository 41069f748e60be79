//! Questions about the backward stages, read from a [`BackwardPass`]: the sign of a gradient
//! cell, which way one plain gradient-descent step moves a weight, and what the gradient is
//! divided by on its way back through the scale.

use super::{Answer, InView, Question};
use crate::attention::{
    BackMatrix, BackwardPass, HeadGrad, LossKind, MatrixId, ScaleMode, Stage, Trace, WeightName,
};
use crate::words;

/// A gradient no larger than this is 0: what is left of sums that cancel exactly.
const ZERO: f64 = 1e-12;

/// A gradient at least this large does not show as 0 at the heatmaps' three decimals.
const SHOWN: f64 = 5e-4;

/// Positive, negative or 0: the index of the choice in [`words::SIGN_CHOICES`].
fn sign(v: f64) -> usize {
    if v > ZERO {
        0
    } else if v < -ZERO {
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
        Stage::BackOutput => step_question(trace, pass, stage, WeightName::O, pick),
        Stage::BackWeightedSum => {
            let m = [HeadGrad::Weights, HeadGrad::V][pick(2)];
            sign_question(trace, pass, stage, head(m), pick)
        }
        Stage::BackSoftmax => sign_question(trace, pass, stage, head(HeadGrad::Masked), pick),
        Stage::BackScale => divisor_question(trace, pass, h, pick),
        Stage::BackScores => {
            let m = [HeadGrad::Q, HeadGrad::K][pick(2)];
            sign_question(trace, pass, stage, head(m), pick)
        }
        Stage::BackProjection => {
            let names: &[WeightName] = if task {
                &[WeightName::Q, WeightName::K, WeightName::V]
            } else {
                &[WeightName::Q, WeightName::K]
            };
            step_question(trace, pass, stage, names[pick(names.len())], pick)
        }
        Stage::BackInput => {
            let m = if trace.source.is_some() && pick(2) == 0 {
                BackMatrix::SourceEmbeddings
            } else {
                BackMatrix::Embeddings
            };
            sign_question(trace, pass, stage, m, pick)
        }
        _ => None,
    }
}

/// A cell of `m` worth asking about: one the mask leaves visible whose value shows as what it
/// is (0, or clear of 0 at three decimals); a non-zero one every other time when there is one.
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
    let all: Vec<(usize, usize, f64)> = (0..values.nrows())
        .flat_map(|i| (0..values.ncols()).map(move |j| (i, j)))
        .filter(|&(i, j)| !hidden(i, j))
        .map(|(i, j)| (i, j, values[(i, j)]))
        .collect();
    let clear: Vec<_> = all
        .iter()
        .copied()
        .filter(|(_, _, v)| v.abs() >= SHOWN || v.abs() <= ZERO)
        .collect();
    let non_zero: Vec<_> = clear
        .iter()
        .copied()
        .filter(|(_, _, v)| v.abs() > ZERO)
        .collect();
    let from = match (pick(2), non_zero.is_empty(), clear.is_empty()) {
        (0, false, _) => non_zero,
        (_, _, false) => clear,
        _ => all,
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
    Some(Question {
        stage,
        prompt: words::step_prompt(&words::cell_name(trace, MatrixId::Weight(weight), r, c)),
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
    let mode_note = match config.scale {
        ScaleMode::SqrtHeadDim => None,
        ScaleMode::SqrtSeqLen => Some(words::seq_len_mistake(
            config.head_dim(),
            trace.n_keys(),
            cross,
        )),
        ScaleMode::None => Some(words::no_scale_note(config.head_dim())),
    };
    let note = match mode_note {
        Some(n) => format!("{} {n}", words::BACK_DIVISOR_NOTE),
        None => words::BACK_DIVISOR_NOTE.to_string(),
    };
    Some(Question {
        stage: Stage::BackScale,
        prompt: words::back_divisor_prompt(
            &words::back_label(BackMatrix::Head(h, HeadGrad::Masked)),
            &words::back_label(m),
            masked,
        ),
        answer: Answer::Number {
            value: trace.scale_divisor,
        },
        cell: (MatrixId::Back(m), r, c),
        note: Some(note),
    })
}
