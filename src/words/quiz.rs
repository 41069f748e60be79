//! The quiz's words: each kind of question, the feedback after an answer, the tally and the
//! one-line result a learner sends a teacher.

/// The tolerance a numeric answer is read with, in words.
pub const QUIZ_TOLERANCE: &str = "to two decimals; within ±0.01 counts";

/// What the card says while the stage's result is hidden.
pub const QUIZ_HIDDEN: &str = "The result is hidden until you answer.";

/// What the card says while presenting, before the reveal.
pub const QUIZ_PRESENTER_HINT: &str =
    "Let the class guess, then press R (or the clicker's Next) to reveal.";

/// "What is Q[am, d1], to two decimals?"
pub fn cell_prompt(cell: &str) -> String {
    format!("What is {cell}, to two decimals?")
}

/// The question about the split, with several heads.
pub fn split_prompt(head: usize) -> String {
    format!("Which columns of Q does head {} take?", head + 1)
}

/// The question about the split, with one head.
pub const ONE_HEAD_PROMPT: &str = "With one head, how many columns wide is it (d_k)?";

/// What the keys are called in a question: the source's words in cross-attention.
fn keys_word(cross: bool) -> &'static str {
    if cross {
        "word of the source"
    } else {
        "key"
    }
}

/// Which key a query scores highest (`cross`: the keys are the source's words).
pub fn top_score_prompt(head: usize, query: &str, cross: bool) -> String {
    format!(
        "In head {}, which {} does the query {} score highest?",
        head + 1,
        keys_word(cross),
        quoted(query)
    )
}

/// The question about the divisor.
pub const DIVISOR_PROMPT: &str = "What is every score divided by here, to two decimals?";

/// Why dividing by √seq_len is a mistake, for a head width `d_k`.
pub fn seq_len_mistake(d_k: usize) -> String {
    format!(
        "This setting is a common mistake: the size of a dot product depends on d_k = {d_k}, not on how many tokens there are, so standard attention divides by √{d_k} instead."
    )
}

/// Why no scaling differs from standard attention, for a head width `d_k`.
pub fn no_scale_note(d_k: usize) -> String {
    format!("Scaling is off, which differs from standard attention: it divides by √d_k = √{d_k}.")
}

/// Which cells of a row the mask hides.
pub fn mask_prompt(head: usize, query: &str) -> String {
    format!(
        "In head {}, which cells of the row of {} become −∞? (Check none if none do.)",
        head + 1,
        quoted(query)
    )
}

/// Which key gets the most weight (`cross`: the keys are the source's words).
pub fn top_weight_prompt(head: usize, query: &str, cross: bool) -> String {
    format!(
        "In head {}, which {} gets the most weight in the row of {}?",
        head + 1,
        keys_word(cross),
        quoted(query)
    )
}

/// How much weight the top key gets.
pub fn top_weight_value_prompt(head: usize, query: &str, key: &str) -> String {
    format!(
        "In head {}, the row of {} gives its most weight to {}. How much, to two decimals?",
        head + 1,
        quoted(query),
        quoted(key)
    )
}

/// When several keys tie for the top.
pub fn tie_note(tied: usize) -> String {
    format!("{tied} keys tie for the top: any of them is right.")
}

/// What the card says when Check is pressed before a choice.
pub const PICK_ONE: &str = "Pick one of the choices first.";

/// The quiz card's heading.
pub const QUIZ_HEADING: &str = "Quiz: predict, then look";

/// What an empty set of cells is called.
pub const NONE_OF_THEM: &str = "none";

/// `text` in curly quotes.
pub fn quoted(text: &str) -> String {
    format!("“{text}”")
}

/// The feedback after an answer: right, or what the answer was.
pub fn feedback(right: bool, given: &str, answer: &str) -> String {
    if right {
        format!("Right: {answer}.")
    } else {
        format!("Not quite: you answered {given}; the answer is {answer}.")
    }
}

/// The feedback when the answer was revealed without one (presenter mode).
pub fn revealed(answer: &str) -> String {
    format!("The answer is {answer}.")
}

/// A learner's pick from a list, in words: the choices joined, or `none`.
pub fn picked_text(picked: &[String]) -> String {
    if picked.is_empty() {
        NONE_OF_THEM.to_string()
    } else {
        picked.join(", ")
    }
}

/// "3 answered, 2 right".
pub fn tally_text(answered: usize, right: usize) -> String {
    format!("{answered} answered, {right} right")
}

/// The one line a learner pastes to a teacher: the score, the sentence, and each answer in
/// order, e.g. `attention-lens quiz on “I am hungry”: 2 of 3 right (Input ✓ · Q, K, V ✗ · …)`,
/// then the link that asks the same questions.
pub fn result_line(sentence: &str, answers: &[(&str, bool)], link: &str) -> String {
    let right = answers.iter().filter(|(_, r)| *r).count();
    let marks: Vec<String> = answers
        .iter()
        .map(|(stage, r)| format!("{stage} {}", if *r { "✓" } else { "✗" }))
        .collect();
    let mut line = format!(
        "attention-lens quiz on {}: {right} of {} right",
        quoted(sentence),
        answers.len()
    );
    if !marks.is_empty() {
        line.push_str(&format!(" ({})", marks.join(" · ")));
    }
    if !link.is_empty() {
        line.push_str(&format!(" {link}"));
    }
    line
}

/// A number typed as an answer could not be read.
pub fn not_a_number(text: &str) -> String {
    if text.trim().is_empty() {
        "Type a number first, such as 0.25.".to_string()
    } else {
        format!("“{}” is not a number: type one such as 0.25.", text.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_line_counts_and_lists_each_answer() {
        let line = result_line("I am hungry", &[("Input", true), ("Scores", false)], "");
        assert_eq!(
            line,
            "attention-lens quiz on “I am hungry”: 1 of 2 right (Input ✓ · Scores ✗)"
        );
        assert_eq!(
            result_line("a", &[], "http://x/#v=1"),
            "attention-lens quiz on “a”: 0 of 0 right http://x/#v=1"
        );
    }

    #[test]
    fn cross_attention_questions_name_the_source() {
        assert_eq!(
            top_score_prompt(0, "cat", true),
            "In head 1, which word of the source does the query “cat” score highest?"
        );
        assert!(top_weight_prompt(1, "cat", false).starts_with("In head 2, which key gets"));
    }

    #[test]
    fn feedback_says_the_answer_either_way() {
        assert_eq!(feedback(true, "0.4", "0.42"), "Right: 0.42.");
        assert!(feedback(false, "0.3", "0.42").contains("the answer is 0.42"));
        assert_eq!(picked_text(&[]), "none");
    }
}
