//! The quiz's words: each kind of question, the feedback after an answer, the tally and the
//! one-line result a learner sends a teacher.

use super::matrices::head_columns;

/// The tolerance a numeric answer is read with, in words.
pub const QUIZ_TOLERANCE: &str = "to two decimals; within ±0.01 counts";

/// What the card says beside the field of a question whose answer is a count.
pub const QUIZ_WHOLE_NUMBER: &str = "a whole number";

/// What the card says while the stage's result is hidden.
pub const QUIZ_HIDDEN: &str = "The result is hidden until you answer.";

/// What the card says while presenting, before the reveal.
pub const QUIZ_PRESENTER_HINT: &str =
    "Let the class guess, then press R (or the clicker's Next) to reveal.";

/// "What is Q[am, d1], to two decimals?"
pub fn cell_prompt(cell: &str) -> String {
    format!("What is {cell}, to two decimals?")
}

/// The question about the split, with several heads of `head_dim` columns, and its choices:
/// each head's columns, `d1–d2` (or `d1` when a head is one column wide).
pub fn split_prompt(head: usize, head_dim: usize, heads: usize) -> (String, Vec<String>) {
    let columns = if head_dim == 1 { "column" } else { "columns" };
    let choices = (0..heads).map(|h| head_columns(h, head_dim)).collect();
    (
        format!("Which {columns} of Q does head {} take?", head + 1),
        choices,
    )
}

/// The question about the split, with one head.
pub const ONE_HEAD_PROMPT: &str = "With one head, how many columns wide is it (d_k)?";

/// What a key is called in a question: a word of the source in cross-attention.
fn key_word(cross: bool) -> &'static str {
    if cross {
        "word of the source"
    } else {
        "key"
    }
}

/// What the keys are called in a question: the source's words in cross-attention.
fn keys_word(cross: bool) -> &'static str {
    if cross {
        "words of the source"
    } else {
        "keys"
    }
}

/// Which key a query scores highest (`cross`: the keys are the source's words); `masked`: a
/// causal mask follows, and the raw scores still include the keys it will hide.
pub fn top_score_prompt(head: usize, query: &str, cross: bool, masked: bool) -> String {
    let when = if masked { ", before the mask" } else { "" };
    format!(
        "In head {}, which {} does the query {} score highest{when}?",
        head + 1,
        key_word(cross),
        quoted(query)
    )
}

/// The question about the divisor.
pub const DIVISOR_PROMPT: &str = "What is every score divided by here, to two decimals?";

/// Why dividing by the square root of the number of keys, `n_keys`, is a mistake, for heads of
/// `d_k` columns (`cross`: the keys are the source's tokens, so it is √src_len). When the two
/// counts happen to be equal, it says so: the divisor used is then the right one.
pub fn seq_len_mistake(d_k: usize, n_keys: usize, cross: bool) -> String {
    let (divisor, counted, keys) = if cross {
        (
            "√src_len",
            "the square root of the number of keys (the source's tokens)",
            "keys",
        )
    } else {
        (
            "√seq_len",
            "the square root of the number of tokens",
            "tokens",
        )
    };
    if d_k == n_keys {
        format!(
            "This setting is a common mistake: it divides by {divisor} = √{n_keys}, {counted}, \
             which here happens to equal the correct √d_k = √{d_k}. With another number of \
             {keys} the two would differ: the size of a dot product depends on d_k, not on how \
             many {keys} there are."
        )
    } else {
        format!(
            "This setting is a common mistake: it divides by {divisor} = √{n_keys}, {counted}, \
             but the size of a dot product depends on d_k = {d_k}, not on how many {keys} there \
             are, so standard attention divides by √d_k = √{d_k}."
        )
    }
}

/// Why no scaling differs from standard attention, for heads of `d_k` columns; with d_k = 1 it
/// does not.
pub fn no_scale_note(d_k: usize) -> String {
    if d_k == 1 {
        "Scaling is off, so the scores are divided by 1. With d_k = 1 standard attention divides \
         by √1 = 1, so leaving the scaling out changes nothing here."
            .to_string()
    } else {
        format!(
            "Scaling is off, so the scores are divided by 1, which differs from standard \
             attention: it divides by √d_k = √{d_k}."
        )
    }
}

/// Which cells of a row the mask hides.
pub fn mask_prompt(head: usize, query: &str) -> String {
    format!(
        "In head {}, which cells of the row of {} become −∞? The answer may be none.",
        head + 1,
        quoted(query)
    )
}

/// The mask question in cross-attention, where no cell is ever hidden: what a cell of the
/// masked scores, named `cell` (`M₁[the, chat]`), holds.
pub fn cross_mask_prompt(cell: &str) -> String {
    format!(
        "Cross-attention has no causal mask: the source is known in full. What is {cell}, to \
         two decimals?"
    )
}

/// Which key gets the most weight (`cross`: the keys are the source's words).
pub fn top_weight_prompt(head: usize, query: &str, cross: bool) -> String {
    format!(
        "In head {}, which {} gets the most weight in the row of {}?",
        head + 1,
        key_word(cross),
        quoted(query)
    )
}

/// How much weight the top keys get: `top` holds the keys that tie for it, all `n_keys` of them
/// when the row is uniform (`cross`: the keys are the source's words).
pub fn top_weight_value_prompt(
    head: usize,
    query: &str,
    top: &[String],
    n_keys: usize,
    cross: bool,
) -> String {
    let (h, q) = (head + 1, quoted(query));
    match top {
        [key] => format!(
            "In head {h}, the row of {q} gives its most weight to {}. How much, to two \
             decimals?",
            quoted(key)
        ),
        _ if top.len() == n_keys => format!(
            "In head {h}, the row of {q} gives every {} the same weight. How much does each \
             get, to two decimals?",
            key_word(cross)
        ),
        _ => format!(
            "In head {h}, {} tie for the most weight in the row of {q}. How much does each get, \
             to two decimals?",
            listed(top)
        ),
    }
}

/// When the keys `tied` tie for the top, all `n_keys` of them when the row is uniform (`cross`:
/// the keys are the source's words).
pub fn tie_note(tied: &[String], n_keys: usize, cross: bool) -> String {
    let any = if tied.len() == 2 {
        "either"
    } else {
        "any of them"
    };
    let who = match n_keys {
        2 if tied.len() == 2 => format!("Both {} tie", keys_word(cross)),
        _ if tied.len() == n_keys => format!("All {n_keys} {} tie", keys_word(cross)),
        _ => format!("{} tie for the top", listed(tied)),
    };
    format!("{who}: {any} is right.")
}

/// `“a”, “b” and “c”`.
fn listed(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| quoted(n)).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
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

/// Why a backward stage asks nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unasked {
    /// The gradients of the goal cannot be computed with the settings on screen.
    NoGradients,
    /// The pattern loss does not reach the output projection's backward stage.
    OutputUnreached,
    /// The pattern loss does not reach the weighted sum's backward stage.
    ValuesUnreached,
    /// Every gradient of the stage shows as 0.000, though not every one is 0.
    TooSmall,
}

/// What the quiz card says at a backward stage that asks nothing, and why.
pub fn nothing_to_ask(why: Unasked) -> &'static str {
    match why {
        Unasked::NoGradients => {
            "No question here: the gradients of this goal cannot be computed with these \
             settings (the backward stages say why), so there is nothing to ask."
        }
        Unasked::OutputUnreached => {
            "No question here: the pattern loss reads only the attention weights A, so no \
             gradient reaches Y, W_o or C: ∂L/∂W_o and ∂L/∂C are exactly 0."
        }
        Unasked::ValuesUnreached => {
            "No question here: the pattern loss reads only the attention weights A, so ∂L/∂Vₕ \
             is exactly 0; ∂L/∂Aₕ comes straight from the loss, at the first backward stage."
        }
        Unasked::TooSmall => {
            "No question here: every gradient at this stage rounds to 0.000 at three decimals, \
             so its sign cannot be read off the heatmaps."
        }
    }
}

/// Why a worksheet holds no backward questions: the goal described as `goal` is refused, for
/// `reason` (the settings, or the target itself).
pub fn refused_goal_line(goal: &str, reason: &str) -> String {
    format!(
        "The sheet asks nothing about the backward stages: the goal “{goal}” is refused, so \
         there are no gradients to ask about. {reason}"
    )
}

/// The worksheet's line on the backward stages its goal's loss does not reach, numbered
/// `stages` as the sheet numbers them.
pub fn unreached_stages_line(stages: &[String]) -> String {
    let (word, verb) = if stages.len() == 1 {
        ("Stage", "asks")
    } else {
        ("Stages", "ask")
    };
    format!(
        "{word} {} {verb} nothing: the pattern loss reads only the attention weights A, so it \
         does not reach W_o, C or V.",
        stages.join(" and ")
    )
}

/// The choices of a question about a gradient's sign.
pub const SIGN_CHOICES: [&str; 3] = ["positive", "negative", "0"];

/// The choices of a question about which way a gradient-descent step moves a weight.
pub const STEP_CHOICES: [&str; 3] = ["up", "down", "stay the same"];

/// "Is ∂L/∂A₁[am, I] positive, negative or 0?"
pub fn sign_prompt(cell: &str) -> String {
    format!("Is {cell} positive, negative or 0?")
}

/// The question about one plain gradient-descent step on `weight` (`W_q[d1, d2]`) of the matrix
/// `matrix` (`W_q`), whether or not the goal trains it.
pub fn step_prompt(matrix: &str, weight: &str) -> String {
    format!(
        "If {matrix} learned by plain gradient descent, W ← W − η·∂L/∂W with η > 0, would one \
         step on this loss move {weight} up, down, or leave it the same?"
    )
}

/// The question about the divisor on the way back: what each cell of `from` (`∂L/∂M₁`) is
/// divided by to give the same cell of `to` (`∂L/∂S₁`); `masked`: the causal mask hides some
/// cells, whose gradient is 0.
pub fn back_divisor_prompt(from: &str, to: &str, masked: bool) -> String {
    let which = if masked {
        " that the mask leaves visible"
    } else {
        ""
    };
    format!(
        "Going back through the scale, each cell of {from}{which} is divided by what number to \
         give the same cell of {to}, to two decimals?"
    )
}

/// Why the gradient goes back through the scale divided by `divisor_text` (`√d_k = √2`), the
/// forward pass's divisor, or (`None`: scaling is off) undivided, for heads `d_k` wide; `t`: the
/// temperature, which the softmax's backward has already divided `from` (`∂L/∂M₁`) by.
pub fn back_divisor_note(divisor_text: Option<&str>, d_k: usize, t: f64, from: &str) -> String {
    let mut note = match divisor_text {
        Some(divisor) => format!(
            "The scores were divided by {divisor} on the way forward, so the chain rule divides \
             their gradient by the same number on the way back."
        ),
        None if d_k == 1 => "Scaling is off: the forward pass divided the scores by 1, that is \
             not at all, so the gradient goes back undivided; with d_k = 1 standard attention \
             divides by √1 = 1 too."
            .to_string(),
        None => format!(
            "Scaling is off: the forward pass divided the scores by 1, that is not at all, so \
             the gradient goes back undivided. Standard attention divides by √d_k = √{d_k}."
        ),
    };
    if t != 1.0 {
        note.push_str(&format!(
            " The temperature T = {} is not part of this divisor: the softmax's backward already \
             divided {from} by T.",
            super::format_value(t, 2)
        ));
    }
    note
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
            top_score_prompt(0, "cat", true, false),
            "In head 1, which word of the source does the query “cat” score highest?"
        );
        assert_eq!(
            top_score_prompt(1, "cat", false, true),
            "In head 2, which key does the query “cat” score highest, before the mask?"
        );
        assert!(top_weight_prompt(1, "cat", false).starts_with("In head 2, which key gets"));
    }

    #[test]
    fn ties_name_the_tied_keys_and_a_uniform_row_names_them_all() {
        let keys = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(
            tie_note(&keys(&["the (1)", "the (4)"]), 5, false),
            "“the (1)” and “the (4)” tie for the top: either is right."
        );
        assert_eq!(
            tie_note(&keys(&["a", "b", "c"]), 5, false),
            "“a”, “b” and “c” tie for the top: any of them is right."
        );
        assert_eq!(
            tie_note(&keys(&["a", "b"]), 2, true),
            "Both words of the source tie: either is right."
        );
        assert_eq!(
            top_weight_value_prompt(0, "I", &keys(&["a", "b", "c"]), 3, false),
            "In head 1, the row of “I” gives every key the same weight. How much does each get, \
             to two decimals?"
        );
        assert!(top_weight_value_prompt(0, "I", &keys(&["a"]), 3, false)
            .contains("gives its most weight to “a”."));
    }

    #[test]
    fn the_divisor_of_the_mistake_is_the_root_of_the_number_of_keys() {
        let cross = seq_len_mistake(4, 5, true);
        assert!(
            cross.contains("√src_len = √5") && cross.contains("√d_k = √4"),
            "{cross}"
        );
        let own = seq_len_mistake(4, 3, false);
        assert!(
            own.contains("√seq_len = √3") && own.contains("√d_k = √4"),
            "{own}"
        );
    }

    #[test]
    fn a_head_one_column_wide_is_asked_about_one_column() {
        let (prompt, choices) = split_prompt(1, 1, 3);
        assert_eq!(prompt, "Which column of Q does head 2 take?");
        assert_eq!(choices, ["d1", "d2", "d3"]);
        let (prompt, choices) = split_prompt(0, 2, 2);
        assert_eq!(prompt, "Which columns of Q does head 1 take?");
        assert_eq!(choices, ["d1–d2", "d3–d4"]);
    }

    #[test]
    fn feedback_says_the_answer_either_way() {
        assert_eq!(feedback(true, "0.4", "0.42"), "Right: 0.42.");
        assert!(feedback(false, "0.3", "0.42").contains("the answer is 0.42"));
        assert_eq!(picked_text(&[]), "none");
    }
}
