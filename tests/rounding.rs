//! One rounding rule for what is shown and what is marked: a numeric quiz answer is shown to two
//! decimals as the heatmaps show it, and marked within ±0.01 of exactly that shown number, also
//! at the ±0.005 boundaries where rounding half up and rounding half to even disagree.

use attention_lens::attention::{MatrixId, Stage};
use attention_lens::plot::parse_cell;
use attention_lens::quiz::{Answer, Question, Response, TOLERANCE};

/// A question whose right answer is `value`.
fn asking_for(value: f64) -> Question {
    Question {
        stage: Stage::Softmax,
        prompt: String::new(),
        answer: Answer::Number { value },
        cell: (MatrixId::X, 0, 0),
        note: None,
    }
}

#[test]
fn a_number_is_marked_around_the_value_it_is_shown_as_at_half_cent_boundaries() {
    // Exact binary ties (0.125, 0.375, 0.625, 1.125) and decimal ones a hair off a tie.
    for value in [
        0.125, -0.125, 0.135, -0.135, 0.115, 0.375, -0.375, 0.625, 1.125, 0.005, -0.005, 2.675,
        1.005,
    ] {
        let q = asking_for(value);
        let shown = parse_cell(&q.answer_text()).expect("the answer is shown as a number");
        let right = |x: f64| q.is_right(&Response::Number(x));
        let text = q.answer_text();
        assert!(right(shown), "{value} shown as {text}");
        assert!(right(shown + TOLERANCE), "{value}: {text} + 0.01 counts");
        assert!(right(shown - TOLERANCE), "{value}: {text} − 0.01 counts");
        assert!(
            !right(shown + 2.0 * TOLERANCE),
            "{value}: {text} + 0.02 does not"
        );
        assert!(
            !right(shown - 2.0 * TOLERANCE),
            "{value}: {text} − 0.02 does not"
        );
    }
}

#[test]
fn an_eighth_is_shown_as_0_12_and_0_11_counts_while_0_14_does_not() {
    let q = asking_for(0.125);
    assert_eq!(q.answer_text(), "0.12");
    assert!(q.is_right(&Response::Number(0.11)));
    assert!(q.is_right(&Response::Number(0.13)));
    assert!(!q.is_right(&Response::Number(0.14)));
    let q = asking_for(-0.125);
    assert_eq!(q.answer_text(), "−0.12");
    assert!(q.is_right(&Response::Number(-0.11)));
    assert!(!q.is_right(&Response::Number(-0.14)));
}
