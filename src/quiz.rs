//! Predict-then-reveal questions, drawn from a trace: one question about the result of any stage,
//! for any sentence, weights and settings, with its right answer and the cell whose worked
//! arithmetic explains it.
//!
//! A question is chosen by a seed, so the same seed, trace and stage give the same question:
//! a link or a worksheet reproduces it.

use crate::attention::{
    BlockMatrix, HeadMatrix, Matrix, MatrixId, ScaleMode, SplitMix64, Stage, Trace,
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
                let shown = rounded(*value);
                x.is_finite() && (x - shown).abs() <= TOLERANCE + 1e-9
            }
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
            Answer::Choice { choices, accepted } => accepted
                .iter()
                .map(|&i| choices[i].clone())
                .collect::<Vec<_>>()
                .join(" or "),
            Answer::Set { correct, .. } if correct.is_empty() => "none".to_string(),
            Answer::Set { choices, correct } => correct
                .iter()
                .map(|&i| choices[i].clone())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The worked arithmetic of the question's cell, as a clicked cell shows it.
    pub fn worked(&self, trace: &Trace) -> Option<words::Explanation> {
        let (m, r, c) = self.cell;
        words::explain(trace, m, r, c)
    }
}

/// `value` as the heatmaps show it, two decimals.
fn rounded(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// A question about the result of `stage` in `trace`, chosen by `seed`; `None` for a stage the
/// trace does not show.
pub fn question(trace: &Trace, stage: Stage, seed: u64) -> Option<Question> {
    stage.position(trace.norm())?;
    let mut rng = SplitMix64::new(seed ^ (stage.index() as u64).wrapping_mul(0x9E37_79B9_7F4A));
    let mut pick = |n: usize| (rng.next_u64() % n.max(1) as u64) as usize;
    let (seq_len, n_keys, d) = (trace.seq_len(), trace.n_keys(), trace.config.d_model);
    let heads = trace.config.n_heads;
    let h = pick(heads);
    let i = pick(seq_len);
    let q_token = quoted(&token(trace, i));
    let keys: Vec<String> = (0..n_keys).map(|j| key_token(trace, j)).collect();
    let head = &trace.heads[h];
    Some(match stage {
        Stage::Input => number(trace, stage, MatrixId::X, i, pick(d)),
        Stage::Projection => {
            let m = [MatrixId::Q, MatrixId::K, MatrixId::V][pick(3)];
            let rows = if m == MatrixId::Q { seq_len } else { n_keys };
            number(trace, stage, m, pick(rows), pick(d))
        }
        Stage::SplitHeads if heads > 1 => {
            let choices: Vec<String> = (0..heads)
                .map(|k| {
                    let cols = trace.head_columns(k);
                    format!("{}–{}", words::dim(cols.start), words::dim(cols.end - 1))
                })
                .collect();
            Question {
                stage,
                prompt: format!("Which columns of Q does head {} take?", h + 1),
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
            prompt: "With one head, how many columns wide is it (d_k)?".into(),
            answer: Answer::Number {
                value: trace.head_dim() as f64,
            },
            cell: (MatrixId::Head(0, HeadMatrix::Q), i, 0),
            note: None,
        },
        Stage::Scores => top_key(
            trace,
            (stage, MatrixId::Head(h, HeadMatrix::Scores), i),
            format!(
                "In head {}, which key does the query {q_token} score highest?",
                h + 1
            ),
            keys,
        ),
        Stage::Scale => {
            let c = &trace.config;
            let note = match c.scale {
                ScaleMode::SqrtHeadDim => None,
                ScaleMode::SqrtSeqLen => Some(format!(
                    "This setting is a common mistake: the size of a dot product depends on d_k = {}, not on how many tokens there are, so standard attention divides by √{} instead.",
                    c.head_dim(),
                    c.head_dim()
                )),
                ScaleMode::None => Some(format!(
                    "Scaling is off, which differs from standard attention: it divides by √d_k = √{}.",
                    c.head_dim()
                )),
            };
            Question {
                stage,
                prompt: "What is every score divided by here, to two decimals?".into(),
                answer: Answer::Number {
                    value: trace.scale_divisor,
                },
                cell: (MatrixId::Head(h, HeadMatrix::Scaled), i, pick(n_keys)),
                note,
            }
        }
        Stage::Mask => {
            let correct: Vec<usize> = (0..n_keys)
                .filter(|&j| head.masked[(i, j)] == f64::NEG_INFINITY)
                .collect();
            let shown = correct.first().copied().unwrap_or(i.min(n_keys - 1));
            Question {
                stage,
                prompt: format!(
                    "In head {}, which cells of the row of {q_token} become −∞? (Pick none if none do.)",
                    h + 1
                ),
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
                    format!(
                        "In head {}, which key gets the most weight in the row of {q_token}?",
                        h + 1
                    ),
                    keys,
                )
            } else {
                let j = accepted[0];
                Question {
                    prompt: format!(
                        "In head {}, the row of {q_token} gives its most weight to {}. How much, to two decimals?",
                        h + 1,
                        quoted(&keys[j])
                    ),
                    ..number(trace, stage, MatrixId::Head(h, HeadMatrix::Weights), i, j)
                }
            }
        }
        Stage::WeightedSum => {
            let m = MatrixId::Head(h, HeadMatrix::Context);
            number(trace, stage, m, i, pick(trace.head_dim()))
        }
        Stage::Concat => number(trace, stage, MatrixId::Concat, i, pick(d)),
        Stage::OutputProjection => number(trace, stage, MatrixId::Output, i, pick(d)),
        Stage::Activation => {
            let b = trace.block.as_ref()?;
            let width = b.hidden.ncols();
            // A negative hidden number shows what the activation does, when there is one.
            let negative = (0..width).find(|&c| b.hidden[(i, c)] < 0.0);
            let c = negative.unwrap_or_else(|| pick(width));
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
        prompt: format!(
            "What is {}, to two decimals?",
            words::cell_name(trace, matrix, r, c)
        ),
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
    Question {
        stage,
        prompt,
        cell: (matrix, i, accepted.first().copied().unwrap_or(0)),
        note: tie_note(&accepted),
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

fn tie_note(accepted: &[usize]) -> Option<String> {
    (accepted.len() > 1).then(|| {
        format!(
            "{} keys tie for the top: any of them is right.",
            accepted.len()
        )
    })
}

fn quoted(text: &str) -> String {
    format!("“{text}”")
}
