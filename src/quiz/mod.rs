//! Predict-then-reveal questions, drawn from a trace: one question about the result of any stage,
//! for any sentence, weights and settings, with its right answer and the cell whose worked
//! arithmetic explains it.
//!
//! A question is chosen by a seed, so the same seed, trace and stage give the same question:
//! a link or a worksheet reproduces it.

mod backward;

pub use backward::why_unasked;

use crate::attention::{
    BackwardPass, BlockMatrix, HeadMatrix, Matrix, MatrixId, Order, ScaleMode, SplitMix64, Stage,
    Trace,
};
use crate::words::{self, format_value, key_token, token};

/// The two decimals a numeric answer is read to, as the heatmaps show numbers.
pub const DECIMALS: usize = 2;

/// How far a numeric answer may be from the value shown to two decimals.
pub const TOLERANCE: f64 = 0.01;

/// What counts as the right answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A number, right within [`TOLERANCE`] of `value` rounded to [`DECIMALS`].
    Number {
        /// The exact value, as the trace holds it.
        value: f64,
    },
    /// A count, right only when exact.
    Count {
        /// How many.
        value: usize,
    },
    /// One of `choices`; any of `accepted` is right (several when values tie).
    Choice {
        /// What the learner picks from.
        choices: Vec<String>,
        /// The right picks, indices into `choices`.
        accepted: Vec<usize>,
    },
    /// A set of `choices`, possibly empty; right when it is exactly `correct`.
    Set {
        /// What the learner picks from.
        choices: Vec<String>,
        /// The right set, indices into `choices`, sorted.
        correct: Vec<usize>,
    },
}

/// What a learner answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// A number.
    Number(f64),
    /// One choice, by index.
    Choice(usize),
    /// Several choices, by index.
    Set(Vec<usize>),
}

/// One question about one stage's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The stage it is about.
    pub stage: Stage,
    /// The question in words.
    pub prompt: String,
    /// The right answer.
    pub answer: Answer,
    /// The cell whose worked arithmetic explains the answer: (matrix, row, column).
    pub cell: (MatrixId, usize, usize),
    /// What else the answer needs said (why a setting is a mistake, a tie).
    pub note: Option<String>,
}

impl Question {
    /// Whether `response` is right.
    pub fn is_right(&self, response: &Response) -> bool {
        match (&self.answer, response) {
            (Answer::Number { value }, Response::Number(x)) => {
                x.is_finite() && (x - shown(*value)).abs() <= TOLERANCE + 1e-9
            }
            (Answer::Count { value }, Response::Number(x)) => *x == *value as f64,
            (Answer::Choice { accepted, .. }, Response::Choice(i)) => accepted.contains(i),
            (Answer::Set { correct, .. }, Response::Set(picked)) => {
                let mut picked = picked.clone();
                picked.sort_unstable();
                picked.dedup();
                picked == *correct
            }
            _ => false,
        }
    }

    /// The right answer in words: `0.42`, `“hungry”`, `none`, `“am”, “hungry”`.
    pub fn answer_text(&self) -> String {
        match &self.answer {
            Answer::Number { value } => format_value(*value, DECIMALS),
            Answer::Count { value } => value.to_string(),
            Answer::Choice { choices, accepted } => accepted
                .iter()
                .map(|&i| choices[i].clone())
                .collect::<Vec<_>>()
                .join(" or "),
            Answer::Set { correct, .. } if correct.is_empty() => words::NONE_OF_THEM.to_string(),
            Answer::Set { choices, correct } => correct
                .iter()
                .map(|&i| choices[i].clone())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The worked arithmetic of the question's cell, as a clicked cell shows it; a backward
    /// stage's cell needs the `backward` pass the question was drawn from.
    pub fn worked(
        &self,
        trace: &Trace,
        backward: Option<&BackwardPass>,
    ) -> Option<words::Explanation> {
        match self.cell {
            (MatrixId::Back(m), r, c) => words::explain_back(trace, backward?, m, r, c),
            (m, r, c) => words::explain(trace, m, r, c),
        }
    }

    /// The head the question is about, where it is about one head.
    pub fn head(&self) -> Option<usize> {
        use crate::attention::BackMatrix;
        match self.cell.0 {
            MatrixId::Head(h, _)
            | MatrixId::Back(BackMatrix::Head(h, _) | BackMatrix::TargetPattern(h)) => Some(h),
            _ => None,
        }
    }
}

/// `value` as the answer shows it, read back as a typed answer is read: what is marked is what
/// is shown, ties included (0.125 shows as 0.12, so 0.11 counts).
fn shown(value: f64) -> f64 {
    crate::words::rounded(value, DECIMALS)
}

/// A question about the result of forward `stage` in `trace`, chosen by `seed`; `None` for a
/// stage the trace does not show and for the backward stages, which need a pass (see
/// [`backward_question`]).
pub fn question(trace: &Trace, stage: Stage, seed: u64) -> Option<Question> {
    question_in_view(trace, None, stage, seed, InView::default())
}

/// A question about any `stage`, the backward ones read from `backward` (the pass of the goal
/// on screen); `None` for a stage the trace does not show, a backward stage without a pass and
/// one its loss does not reach.
pub fn backward_question(
    trace: &Trace,
    backward: Option<&BackwardPass>,
    stage: Stage,
    seed: u64,
) -> Option<Question> {
    question_in_view(trace, backward, stage, seed, InView::default())
}

/// What a view shows of a stage when it shows less than all of it: a question asks about that.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InView {
    /// The one part of the stage on screen: of the projection, 0, 1 or 2 for Q, K or V
    /// (presenter mode and compact embeds show one at a time); of the output projection's
    /// gradients, one of [`crate::attention::BackMatrix::OUTPUT_RESULTS`]; of the weights'
    /// gradients, one of [`crate::attention::BackMatrix::PROJECTION_RESULTS`]; of the input's
    /// gradients, one of
    /// [`crate::attention::BackMatrix::input_results`] (presenter mode); of a head's gradients on
    /// the way back through the scores, 0 for ∂L/∂Qₕ and 1 for ∂L/∂Kₕ (presenter mode). `None`
    /// for all of them.
    pub part: Option<usize>,
    /// The one head on screen, from 0, where the view steps through heads (presenter mode);
    /// `None` where the question picks the head and the view follows it.
    pub head: Option<usize>,
    /// The query row on screen, from 0: the token a decoding step decodes, the row the tiles
    /// compute. `None` where the question picks it.
    pub row: Option<usize>,
    /// The tiles' block of keys; `None` for [`DEFAULT_TILE`].
    pub block: Option<usize>,
}

/// The block of keys a question about the tiles uses when the view does not say.
pub const DEFAULT_TILE: usize = 2;

/// Whether a trace can be decoded token by token: under the causal mask, without a source, with
/// a token after the first.
pub fn decodable(trace: &Trace) -> bool {
    trace.config.causal && trace.source.is_none() && trace.seq_len() > 1
}

/// The two ways of running attention a sheet also asks about: decoding after `prefill` tokens,
/// and the tiles in blocks of `tile` keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunViews {
    /// The tokens processed at once before decoding; `None` without decoding.
    pub prefill: Option<usize>,
    /// The tiles' block of keys; `None` without the tiles.
    pub tile: Option<usize>,
}

impl RunViews {
    /// The order of the stages `trace` shows with these views: decoding only where it can run.
    pub fn order(self, trace: &Trace) -> Order {
        Order {
            tiles: self.tile.is_some(),
            decode: self.prefill.is_some_and(|p| p < trace.seq_len()) && decodable(trace),
            ..trace.wiring().order()
        }
    }

    /// What a question drawn with `seed` about `stage` asks about: for decoding, a decoded
    /// token (from the prefill on); for the tiles, the block of keys.
    pub fn in_view(self, trace: &Trace, stage: Stage, seed: u64) -> InView {
        let n = trace.seq_len();
        match (stage, self.prefill) {
            (Stage::Decode, Some(p)) if p < n => InView {
                row: Some(p + (seed % (n - p) as u64) as usize),
                ..InView::default()
            },
            (Stage::Tiles, _) => InView {
                block: self.tile,
                ..InView::default()
            },
            _ => InView::default(),
        }
    }
}

/// The stages a question can be asked about: the forward stages `trace` shows with `views`,
/// then, with a `backward` pass, the backward stages its loss reaches.
pub fn asking_stages(
    trace: &Trace,
    backward: Option<&BackwardPass>,
    views: RunViews,
) -> Vec<Stage> {
    let mut stages = Stage::sequence(views.order(trace));
    if let Some(pass) = backward {
        stages.extend(
            Stage::BACKWARD
                .iter()
                .filter(|&&s| backward::reaches(pass, s)),
        );
    }
    stages
}

/// [`question`] for a view that shows only `in_view` of the stage: a question about the
/// projection asks about the product on screen, a question about one head about the head on
/// screen. The seed draws the rest as [`question`] does.
pub fn question_in_view(
    trace: &Trace,
    backward: Option<&BackwardPass>,
    stage: Stage,
    seed: u64,
    in_view: InView,
) -> Option<Question> {
    let part = in_view.part;
    // Decoding and the tiles are views any trace that allows them has; the rest must be shown.
    let shown = match stage {
        Stage::Tiles => true,
        Stage::Decode => decodable(trace),
        _ => stage.position(trace.wiring().order()).is_some(),
    };
    if !shown {
        return None;
    }
    // Each part a presenter steps through draws its own cell: Q, K and V at the projection are
    // three questions, not one cell asked three times.
    let part_salt = part.map_or(0, |p| (p as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
    let mut rng =
        SplitMix64::new(seed ^ (stage.index() as u64).wrapping_mul(0x9E37_79B9_7F4A) ^ part_salt);
    let mut pick = |n: usize| (rng.next_u64() % n.max(1) as u64) as usize;
    if stage.is_backward() {
        return backward::question(trace, backward?, stage, in_view, &mut pick);
    }
    let (seq_len, n_keys, d) = (trace.seq_len(), trace.n_keys(), trace.config.d_model);
    let heads = trace.config.n_heads;
    let cross = trace.source.is_some();
    let h = in_view.head.map_or(pick(heads), |h| h.min(heads - 1));
    let i = pick(seq_len);
    let q_name = token(trace, i);
    let keys: Vec<String> = (0..n_keys).map(|j| key_token(trace, j)).collect();
    let head = &trace.heads[h];
    Some(match stage {
        Stage::Input => number(trace, stage, MatrixId::X, i, pick(d)),
        Stage::Projection => {
            let drawn = pick(3);
            let m = [MatrixId::Q, MatrixId::K, MatrixId::V][part.map_or(drawn, |p| p.min(2))];
            // K and V are n_kv_heads·d_k wide when key/value heads are shared.
            let (rows, cols) = if m == MatrixId::Q {
                (seq_len, d)
            } else {
                (n_keys, trace.config.kv_width())
            };
            number(trace, stage, m, pick(rows), pick(cols))
        }
        Stage::SplitHeads if heads > 1 => {
            let (prompt, choices) = words::split_prompt(h, trace.head_dim(), heads);
            Question {
                stage,
                prompt,
                answer: Answer::Choice {
                    choices,
                    accepted: vec![h],
                },
                cell: (MatrixId::Head(h, HeadMatrix::Q), i, 0),
                note: None,
            }
        }
        Stage::SplitHeads => Question {
            stage,
            prompt: words::ONE_HEAD_PROMPT.into(),
            answer: Answer::Number {
                value: trace.head_dim() as f64,
            },
            cell: (MatrixId::Head(0, HeadMatrix::Q), i, 0),
            note: None,
        },
        // A turned cell, worked out from its pair and its position's angle.
        Stage::Rotary => {
            let m = if pick(2) == 0 {
                HeadMatrix::QRope
            } else {
                HeadMatrix::KRope
            };
            number(
                trace,
                stage,
                MatrixId::Head(h, m),
                i,
                pick(trace.head_dim()),
            )
        }
        Stage::Scores => top_key(
            trace,
            (stage, MatrixId::Head(h, HeadMatrix::Scores), i),
            words::top_score_prompt(h, &q_name, cross, trace.config.causal),
            keys,
        ),
        Stage::Scale => {
            let c = &trace.config;
            let note = match c.scale {
                ScaleMode::SqrtHeadDim => None,
                ScaleMode::SqrtSeqLen => Some(words::seq_len_mistake(c.head_dim(), n_keys, cross)),
                ScaleMode::None => Some(words::no_scale_note(c.head_dim())),
            };
            Question {
                stage,
                prompt: words::DIVISOR_PROMPT.into(),
                answer: Answer::Number {
                    value: trace.scale_divisor,
                },
                cell: (MatrixId::Head(h, HeadMatrix::Scaled), i, pick(n_keys)),
                note,
            }
        }
        // No cell is hidden in cross-attention: a question whose answer is always "none"
        // would teach nothing, so it asks what the masked scores hold.
        Stage::Mask if cross => {
            let m = MatrixId::Head(h, HeadMatrix::Masked);
            let j = pick(n_keys);
            Question {
                prompt: words::cross_mask_prompt(&words::cell_name(trace, m, i, j)),
                ..number(trace, stage, m, i, j)
            }
        }
        Stage::Mask => {
            let correct: Vec<usize> = (0..n_keys)
                .filter(|&j| head.masked[(i, j)] == f64::NEG_INFINITY)
                .collect();
            let shown = correct.first().copied().unwrap_or(i.min(n_keys - 1));
            Question {
                stage,
                prompt: words::mask_prompt(h, &q_name),
                answer: Answer::Set {
                    choices: keys,
                    correct,
                },
                cell: (MatrixId::Head(h, HeadMatrix::Masked), i, shown),
                note: None,
            }
        }
        Stage::Softmax => {
            let accepted = argmax(head.weights.row(i).iter().copied());
            if pick(2) == 0 {
                top_key(
                    trace,
                    (stage, MatrixId::Head(h, HeadMatrix::Weights), i),
                    words::top_weight_prompt(h, &q_name, cross),
                    keys,
                )
            } else {
                let top: Vec<String> = accepted.iter().map(|&j| keys[j].clone()).collect();
                Question {
                    prompt: words::top_weight_value_prompt(h, &q_name, &top, n_keys, cross),
                    ..number(
                        trace,
                        stage,
                        MatrixId::Head(h, HeadMatrix::Weights),
                        i,
                        accepted[0],
                    )
                }
            }
        }
        Stage::WeightedSum => {
            let m = MatrixId::Head(h, HeadMatrix::Context);
            number(trace, stage, m, i, pick(trace.head_dim()))
        }
        Stage::Decode => {
            let i = in_view.row.unwrap_or(i).clamp(1, seq_len.saturating_sub(1));
            let c = &trace.config;
            let rope = trace.wiring().rope;
            let key = if rope {
                HeadMatrix::KRope
            } else {
                HeadMatrix::K
            };
            // The new token's key, as the cache of its key/value head is named when clicked.
            let per_group = heads / c.n_kv_heads().max(1);
            let owner = h / per_group.max(1) * per_group.max(1);
            let cell = (MatrixId::Head(owner, key), i, 0);
            if pick(2) == 0 {
                Question {
                    stage,
                    prompt: words::decode_cached_prompt(&trace.tokens, i),
                    answer: Answer::Set {
                        choices: words::decode_cache_choices(rope),
                        correct: vec![1, 2],
                    },
                    cell,
                    note: Some(words::DECODE_CACHED_NOTE.into()),
                }
            } else {
                Question {
                    stage,
                    prompt: words::decode_size_prompt(trace, i),
                    answer: Answer::Count {
                        value: 2 * (i + 1) * c.n_kv_heads() * c.head_dim(),
                    },
                    cell,
                    note: Some(words::decode_size_note(trace, i)),
                }
            }
        }
        Stage::Tiles => {
            let i = in_view.row.unwrap_or(i).min(seq_len - 1);
            let block = in_view.block.unwrap_or(DEFAULT_TILE).max(1);
            let blocks = n_keys.div_ceil(block);
            let hidden_key = |j: usize| head.masked[(i, j)] == f64::NEG_INFINITY;
            let idle: Vec<usize> = (0..blocks)
                .filter(|b| (b * block..((b + 1) * block).min(n_keys)).all(hidden_key))
                .collect();
            // The window is named only where it hides a key of a block that changes nothing.
            let by_window = trace.config.window.is_some_and(|w| {
                idle.iter()
                    .any(|b| (b * block..((b + 1) * block).min(n_keys)).any(|j| j + w <= i))
            });
            match (pick(2), idle.first()) {
                // The worked cell is a key of the first block that changes nothing.
                (0, Some(&b)) => Question {
                    stage,
                    prompt: words::tiles_idle_prompt(&trace.tokens, h, i, block, blocks, by_window),
                    answer: Answer::Count { value: idle.len() },
                    cell: (MatrixId::Head(h, HeadMatrix::Masked), i, b * block),
                    note: Some(words::tiles_idle_note(by_window)),
                },
                _ => {
                    let m = MatrixId::Head(h, HeadMatrix::Context);
                    let col = pick(trace.head_dim());
                    Question {
                        prompt: words::tiles_result_prompt(trace, h, i, col, block),
                        note: Some(words::tiles_result_note(
                            &words::cell_name(trace, m, i, col),
                            blocks,
                        )),
                        ..number(trace, stage, m, i, col)
                    }
                }
            }
        }
        Stage::Concat => number(trace, stage, MatrixId::Concat, i, pick(d)),
        Stage::OutputProjection => number(trace, stage, MatrixId::Output, i, pick(d)),
        Stage::Activation => {
            let b = trace.block.as_ref()?;
            let width = b.hidden.ncols();
            // Negative and other hidden numbers are asked about equally often, whichever are
            // more: each shows a different side of the activation.
            let (negative, other): (Vec<usize>, Vec<usize>) =
                (0..width).partition(|&c| b.hidden[(i, c)] < 0.0);
            let side = match (negative.is_empty(), other.is_empty(), pick(2)) {
                (false, true, _) | (false, false, 0) => negative,
                _ => other,
            };
            let c = side[pick(side.len())];
            number(trace, stage, MatrixId::Block(BlockMatrix::Activated), i, c)
        }
        block_stage => {
            let b = trace.block.as_ref()?;
            let m = match block_stage {
                Stage::Residual1 => BlockMatrix::Sum1,
                Stage::Norm1 => BlockMatrix::Norm1,
                Stage::Hidden => BlockMatrix::Hidden,
                Stage::FeedForward => BlockMatrix::Ffn,
                Stage::Residual2 => BlockMatrix::Sum2,
                _ => BlockMatrix::Norm2,
            };
            let width = m.of(b).ncols();
            number(trace, stage, MatrixId::Block(m), i, pick(width))
        }
    })
}

/// "What is cell (r, c) of `matrix`, to two decimals?"
fn number(trace: &Trace, stage: Stage, matrix: MatrixId, r: usize, c: usize) -> Question {
    let value = matrix.value(trace, r, c).unwrap_or(0.0);
    Question {
        stage,
        prompt: words::cell_prompt(&words::cell_name(trace, matrix, r, c)),
        answer: Answer::Number { value },
        cell: (matrix, r, c),
        note: None,
    }
}

/// "Which key is largest in row `i` of `matrix`?", any of tied keys being right.
fn top_key(
    trace: &Trace,
    (stage, matrix, i): (Stage, MatrixId, usize),
    prompt: String,
    keys: Vec<String>,
) -> Question {
    let values = matrix.get(trace).unwrap_or_else(|| Matrix::zeros(0, 0));
    let accepted = argmax(values.row(i).iter().copied());
    let tied: Vec<String> = accepted.iter().map(|&j| keys[j].clone()).collect();
    Question {
        stage,
        prompt,
        cell: (matrix, i, accepted.first().copied().unwrap_or(0)),
        note: (tied.len() > 1).then(|| words::tie_note(&tied, keys.len(), trace.source.is_some())),
        answer: Answer::Choice {
            choices: keys,
            accepted,
        },
    }
}

/// The indices of the largest values; several when they tie.
fn argmax(values: impl Iterator<Item = f64>) -> Vec<usize> {
    let values: Vec<f64> = values.collect();
    let top = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| **v == top)
        .map(|(j, _)| j)
        .collect()
}

/// The seed of the quiz's question set `set` (`qn` in a link): with the same numbers, the same
/// set asks the same questions, in the app and on `worksheet --quiz-set`.
pub fn quiz_seed(set: u64) -> u64 {
    set.wrapping_mul(0xD6E8_FEB8_6659_FD93)
}

/// How one stage's question ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The question, as it was asked.
    pub question: Question,
    /// What the learner answered, in words; `None` when it was revealed without an answer.
    pub given: Option<String>,
    /// Whether the answer was right; `None` when revealed without one.
    pub right: Option<bool>,
}

/// Where the answer to a question is kept: its stage and, where the view steps through a stage
/// one part or one head at a time (presenter mode, a compact embed's Q, K or V), which one, so
/// that every step asks its own question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    stage: Stage,
    part: Option<usize>,
    head: Option<usize>,
}

impl Slot {
    /// The slot of `question`, asked about what `shown` shows of its stage.
    pub fn of(question: &Question, shown: InView) -> Self {
        Self {
            stage: question.stage,
            part: shown.part,
            head: shown.head.and(question.head()),
        }
    }
}

/// A quiz in one page: which questions are revealed, and every answer so far for the tally.
/// Nothing of it leaves the page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Session {
    revealed: Vec<(Slot, Outcome)>,
    answers: Vec<(Stage, bool)>,
}

impl Session {
    /// How the question kept in `slot` ended, once answered or revealed.
    pub fn outcome(&self, slot: Slot) -> Option<&Outcome> {
        self.revealed
            .iter()
            .find(|(s, _)| *s == slot)
            .map(|(_, o)| o)
    }

    fn settle(&mut self, slot: Slot, outcome: Outcome) {
        self.revealed.retain(|(s, _)| *s != slot);
        self.revealed.push((slot, outcome));
    }

    /// Marks `response` (written `given`) to `question`, kept in `slot`, reveals it, counts it,
    /// and says whether it was right. A slot already revealed is left as it is.
    pub fn answer(
        &mut self,
        question: Question,
        slot: Slot,
        response: &Response,
        given: String,
    ) -> bool {
        if let Some(o) = self.outcome(slot) {
            return o.right.unwrap_or(false);
        }
        let right = question.is_right(response);
        self.answers.push((question.stage, right));
        self.settle(
            slot,
            Outcome {
                question,
                given: Some(given),
                right: Some(right),
            },
        );
        right
    }

    /// Reveals `question`, kept in `slot`, without an answer, as a teacher does after the class
    /// guessed; the tally is unchanged.
    pub fn reveal(&mut self, question: Question, slot: Slot) {
        if self.outcome(slot).is_none() {
            self.settle(
                slot,
                Outcome {
                    question,
                    given: None,
                    right: None,
                },
            );
        }
    }

    /// Hides every step of `stage` again, for another question.
    pub fn ask_again(&mut self, stage: Stage) {
        self.revealed.retain(|(s, _)| s.stage != stage);
    }

    /// Whether any question is revealed.
    pub fn any_revealed(&self) -> bool {
        !self.revealed.is_empty()
    }

    /// Hides every question again (the numbers changed); the tally stays.
    pub fn hide_all(&mut self) {
        self.revealed.clear();
    }

    /// Every answer so far, in order: the stage and whether it was right.
    pub fn answers(&self) -> &[(Stage, bool)] {
        &self.answers
    }

    /// How many answers were right.
    pub fn right(&self) -> usize {
        self.answers.iter().filter(|(_, r)| *r).count()
    }
}
