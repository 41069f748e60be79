//! What the training panel says: the goals, the matrices that learn, and a status line that
//! names the numbers on screen.

use crate::attention::{Goal, HeadTarget, LossKind, NamedTarget, OptimizerKind, Task, Trainable};

/// The panel's opening line.
pub const TRAINING_INTRO: &str = "Where do trained weights come from? Pick a goal and let \
gradient descent change the matrices you choose; every stage above follows the new weights.";

/// The goal menu's entry for a target pattern given to every head.
pub fn pattern_label(t: NamedTarget, cross: bool) -> &'static str {
    // In cross-attention the keys are the source's words, and a row past the end of the source
    // looks at its last word.
    match (t, cross) {
        (NamedTarget::Previous, false) => {
            "Pattern: each token looks at the key one position before it (the first at itself)"
        }
        (NamedTarget::Previous, true) => {
            "Pattern: query i looks at source word i−1 (the first query at the first source \
             word, queries past the end of the source at its last word)"
        }
        (NamedTarget::SelfToken, false) => {
            "Pattern: each token looks at the key at its own position"
        }
        (NamedTarget::SelfToken, true) => {
            "Pattern: query i looks at source word i (queries past the end of the source at its \
             last word)"
        }
        (NamedTarget::Next, false) => {
            "Pattern: each token looks at the key one position after it (the last at itself)"
        }
        (NamedTarget::Next, true) => {
            "Pattern: query i looks at source word i+1 (at the last source word once there is \
             none)"
        }
        (NamedTarget::First, false) => "Pattern: every token looks at the first key",
        (NamedTarget::First, true) => "Pattern: every query looks at the first source word",
        (NamedTarget::Uniform, false) => "Pattern: equal weight on every key the token can see",
        (NamedTarget::Uniform, true) => "Pattern: equal weight on every source word",
    }
}

/// The goal menu's entry that gives each head a target of its own.
pub const PER_HEAD_LABEL: &str = "Pattern: a target for each head, named or painted by hand";

/// A pattern as the goal menu names it, short enough for a phone's menu; the sentence under
/// the menu says it whole ([`pattern_label`]).
pub fn pattern_short(t: NamedTarget, cross: bool) -> &'static str {
    match (t, cross) {
        (NamedTarget::Previous, false) => "Pattern: the token before",
        (NamedTarget::Previous, true) => "Pattern: source word i−1",
        (NamedTarget::SelfToken, false) => "Pattern: the token itself",
        (NamedTarget::SelfToken, true) => "Pattern: source word i",
        (NamedTarget::Next, false) => "Pattern: the token after",
        (NamedTarget::Next, true) => "Pattern: source word i+1",
        (NamedTarget::First, false) => "Pattern: the first token",
        (NamedTarget::First, true) => "Pattern: the first source word",
        (NamedTarget::Uniform, _) => "Pattern: equal weights",
    }
}

/// The per-head entry as the goal menu names it.
pub const PER_HEAD_SHORT: &str = "Pattern: one for each head";

/// A task as the goal menu names it; [`task_label`] says it whole.
pub fn task_short(t: Task, cross: bool) -> &'static str {
    match (t, cross) {
        (Task::CopyPrevious, false) => "Task: copy E row i−1",
        (Task::CopyPrevious, true) => "Task: copy E_src row i−1",
        (Task::CopyFirst, false) => "Task: copy E's first row",
        (Task::CopyFirst, true) => "Task: copy E_src's first row",
        (Task::Mean, false) => "Task: mean of visible E rows",
        (Task::Mean, true) => "Task: the mean of E_src's rows",
    }
}

/// The goal in one line, as a worksheet states it: one pattern for every head, each head's
/// own target, or the task (`cross`: the task's target is built from the source).
pub fn goal_description(goal: &Goal, cross: bool) -> String {
    match goal {
        Goal::Pattern(targets) => match targets.as_slice() {
            [HeadTarget::Named(t)] => pattern_label(*t, cross).to_string(),
            [HeadTarget::Painted(_)] => {
                "Pattern: one target painted by hand, the same for every head".to_string()
            }
            targets => format!(
                "Pattern, a target for each head — {}",
                each_head_target(targets, cross)
            ),
        },
        Goal::Task(t) => task_label(*t, cross),
    }
}

/// Each head's own target, `head 1, the first key; head 2, painted by hand` (`cross`: the keys
/// are the source's words).
pub fn each_head_target(targets: &[HeadTarget], cross: bool) -> String {
    let heads: Vec<String> = targets
        .iter()
        .enumerate()
        .map(|(h, t)| {
            let label = match t {
                HeadTarget::Named(t) if cross => {
                    pattern_label(*t, true).trim_start_matches("Pattern: ")
                }
                HeadTarget::Named(t) => head_target_label(Some(*t), false),
                HeadTarget::Painted(_) => head_target_label(None, false),
            };
            format!("head {}, {label}", h + 1)
        })
        .collect();
    heads.join("; ")
}

/// A head's own menu entry: a named target, or `None` for one painted by hand. In
/// cross-attention (`cross`) the keys are the source's words, counted as the queries are.
pub fn head_target_label(target: Option<NamedTarget>, cross: bool) -> &'static str {
    match (target, cross) {
        (Some(NamedTarget::Previous), false) => "the key one position before (the first at itself)",
        (Some(NamedTarget::SelfToken), false) => "the key at its own position",
        (Some(NamedTarget::Next), false) => "the key one position after (the last at itself)",
        (Some(NamedTarget::First), false) => "the first key",
        (Some(NamedTarget::Uniform), false) => "equal weight on every key it can see",
        (Some(NamedTarget::Previous), true) => {
            "source word i−1 (query 1 at the first; past the source's end, its last)"
        }
        (Some(NamedTarget::SelfToken), true) => "source word i (past the source's end, its last)",
        (Some(NamedTarget::Next), true) => "source word i+1 (past the source's end, its last)",
        (Some(NamedTarget::First), true) => "the first source word",
        (Some(NamedTarget::Uniform), true) => "equal weight on every source word",
        (None, _) => "painted by hand",
    }
}

/// The label of head `head`'s menu, counting heads from 1; in cross-attention (`cross`) the
/// queries are the tokens of the sentence and the keys the source's words.
pub fn head_target_menu(head: usize, cross: bool) -> String {
    if cross {
        format!("Head {}: query i looks at", head + 1)
    } else {
        format!("Head {}: each token looks at", head + 1)
    }
}

/// How the painted target works, for the head whose grid it is above.
pub fn paint_help(head: usize) -> String {
    format!(
        "Head {}'s target A*: click a cell to paint it or clear it. Rows are queries, columns \
keys. Training divides each row by its sum, so a row with two painted keys asks for 0.5 on \
each; the numbers are those target weights.",
        head + 1
    )
}

/// Why the cells above the diagonal cannot be painted while the causal mask is on.
pub const PAINT_MASK_NOTE: &str = "Hatched cells (—) are keys after their query: the causal \
mask sets their scores to −∞, so their weight is always 0, a target cannot ask for any, and \
they cannot be painted.";

/// The accessible name of one cell of a painted target.
pub fn paint_cell_label(query: &str, key: &str, weight: &str, masked: bool) -> String {
    if masked {
        format!("{query} → {key}: hidden by the causal mask, cannot be painted")
    } else {
        format!("{query} → {key}: target weight {weight}")
    }
}

/// The goal menu's entry for a task; its target is built from E_src with a source sentence.
pub fn task_label(t: Task, cross: bool) -> String {
    let e = if cross { "E_src" } else { "E" };
    match t {
        Task::CopyPrevious if cross => "Task: Y row i should equal E_src row i−1 (E_src row 1 \
             for the first row of Y; the last row of E_src for rows whose i−1 is past the end of \
             the source)"
            .into(),
        Task::CopyPrevious => {
            format!("Task: Y row i should equal {e} row i−1 ({e} row 1 for the first)")
        }
        Task::CopyFirst => format!("Task: every row of Y should equal the first row of {e}"),
        Task::Mean if cross => {
            "Task: every row of Y should equal the mean of all E_src rows".into()
        }
        Task::Mean => "Task: Y row i should equal the mean of the E rows it can see".into(),
    }
}

/// Why the embeddings stay fixed under a task: the target is built from E, or in
/// cross-attention from E_src alone, which leaves E out of the target.
pub fn task_embeddings_note(cross: bool) -> &'static str {
    if cross {
        "The target Y* is built from the source's embeddings E_src alone, so E_src stays fixed: \
if it learned, the target would move with every step. Your sentence's embeddings E are not in \
the target and reach Y only through the queries, but a task trains only W_q, W_k, W_v and W_o, \
so E stays fixed too."
    } else {
        "The target Y* is built from the embeddings E, so E stays fixed: if it learned, the \
target would move with every step."
    }
}

/// What a loss measures, with its formula.
pub fn loss_text(kind: LossKind, cross: bool) -> &'static str {
    match kind {
        LossKind::Pattern => {
            "Loss: the cross-entropy of each head's weights Aₕ against the target pattern A*ₕ, \
L = −1/(n_heads·seq_len) · Σₕ Σᵢ Σⱼ A*ₕ[i,j] · log Aₕ[i,j]. It reads only the weights, so W_v \
and W_o get no gradient: ticking them changes nothing. Only the gaps between a row's scores \
move its weights. For a one-hot target a row's term nears 0 as the wanted key's score pulls \
ahead of the others, and is exactly 0 in a row with a single visible key (the first row under \
the causal mask, or every row when there is only one key), whose weight is 1 whatever the scores; \
for equal weight it cannot fall below the target's entropy."
        }
        LossKind::Task if cross => {
            "Loss: the mean squared error of attention's output Y = C·W_o (before any residual \
or feed-forward) against Y*, built from the source's token embeddings E_src alone, without \
positions: L = 1/(seq_len·d_model) · Σ (Y − Y*)²."
        }
        LossKind::Task => {
            "Loss: the mean squared error of attention's output Y = C·W_o (before any residual \
or feed-forward) against Y*, built from the token embeddings E alone, without positions: \
L = 1/(seq_len·d_model) · Σ (Y − Y*)²."
        }
    }
}

/// The checkbox label of a learnable matrix.
pub fn trainable_label(t: Trainable) -> &'static str {
    match t {
        Trainable::WQ => "W_q",
        Trainable::WK => "W_k",
        Trainable::WV => "W_v",
        Trainable::WO => "W_o",
        Trainable::Embeddings => "E",
        Trainable::SourceEmbeddings => "E_src",
    }
}

/// The optimizer menu's entry.
pub fn optimizer_name(kind: OptimizerKind) -> &'static str {
    match kind {
        OptimizerKind::Sgd => "SGD",
        OptimizerKind::Adam => "Adam",
    }
}

/// The optimizer's update rule, under the menu that names it.
pub fn optimizer_label(kind: OptimizerKind) -> &'static str {
    match kind {
        OptimizerKind::Sgd => "SGD: W ← W − η·∂L/∂W",
        OptimizerKind::Adam => "Adam: W ← W − η·m̂/(√v̂ + ε); m, v: moving averages of ∂L/∂W and its square (decay 0.9, 0.999), bias-corrected; ε 10⁻⁸",
    }
}

/// A loss as the status line writes it: four decimals, or three significant digits times a
/// power of ten once four decimals would show only zeros or the number runs past a million (a
/// run whose η is far too large).
pub(crate) fn loss_number(v: f64) -> String {
    if !v.is_finite() || v == 0.0 || (0.001..LARGE_LOSS).contains(&v.abs()) {
        return crate::words::format_value(v, 4);
    }
    crate::words::number::scientific(v)
}

/// From this size on a loss is written with a power of ten.
const LARGE_LOSS: f64 = 1e6;

/// Above this η a note says the steps are likely to overshoot.
const LARGE_RATE: f64 = 10.0;

/// What a learning rate far above the usual ones does, or `None` for a usual one.
pub fn large_rate_note(learning_rate: f64) -> Option<String> {
    (learning_rate > LARGE_RATE).then(|| {
        format!(
            "η = {learning_rate} is far above the usual range (about 0.001 to 1): each step \
             overshoots, and the loss may grow instead of fall."
        )
    })
}

/// The status line: how many steps and the loss when the run started and now, rounded as shown.
pub fn status_text(losses: &[f64]) -> String {
    match losses {
        [] => String::new(),
        [first] => format!("Before training: loss L ≈ {}.", loss_number(*first)),
        [first, .., last] => {
            let steps = losses.len() - 1;
            format!(
                "After {steps} step{}: loss L ≈ {} (≈ {} when this run started).",
                if steps == 1 { "" } else { "s" },
                loss_number(*last),
                loss_number(*first)
            )
        }
    }
}

/// Which way a step moves a weight, for each optimizer.
pub const DIRECTION_NOTE: &str = "With SGD each step moves a weight against its gradient \
∂L/∂W: a positive gradient means an increase would raise L, so SGD lowers the weight by \
η·∂L/∂W. Adam steps against a moving average of the gradient (m̂), divided weight by weight by the \
square root of a moving average of its square (√v̂), so each weight moves by at most about η a \
step, and a step can even follow the current gradient.";

/// Below this largest gradient no SGD step moves a weight by more than a tenth of η.
const SMALL_GRADIENT: f64 = 0.1;

/// Above this size a gradient is written with a power of ten, as the heatmaps write it.
const LARGE_GRADIENT: f64 = 1e6;

/// The largest gradient entry as the note writes it: "1.000", "≈ 4.316", "≈ 2.00 × 10⁻⁷".
fn gradient_size(g: f64) -> String {
    use crate::words::number::{ends_within, scientific};
    if !(0.001..LARGE_GRADIENT).contains(&g) {
        format!("≈ {}", scientific(g))
    } else if ends_within(g, 3) {
        crate::words::format_value(g, 3)
    } else {
        format!("≈ {}", crate::words::format_value(g, 3))
    }
}

/// How many η an SGD step moves the weight of gradient `g` (at least 1): "η", "2.5 η",
/// "about 4.3 η".
fn times_eta(g: f64) -> String {
    if g == 1.0 {
        return "η".to_string();
    }
    match crate::words::number::exactly(g, 1) {
        Some(exact) => format!("{exact} η"),
        None if g >= LARGE_GRADIENT => format!("about {} η", crate::words::number::scientific(g)),
        None => format!("about {} η", crate::words::format_value(g, 1)),
    }
}

/// What η means for SGD next to Adam, for the `largest` gradient entry in size of the matrices
/// that learn, as the step applies it (a repeated word's rows summed), at the weights on screen
/// (`None` when the loss reaches none of them): whether SGD needs a larger η or a smaller one
/// depends on it, and a low temperature makes it large.
pub fn sgd_note(largest: Option<f64>) -> String {
    let how = "SGD moves each weight by η times its gradient; Adam moves each by at most about \
η, whatever the gradient's size.";
    let Some(g) = largest.filter(|g| g.is_finite()) else {
        return how.to_string();
    };
    if g == 0.0 {
        return format!(
            "{how} The matrices that learn get no gradient here, so neither optimizer moves them."
        );
    }
    let now = format!(
        "The largest gradient entry among the matrices that learn is now {}",
        gradient_size(g)
    );
    if g < SMALL_GRADIENT {
        // η/times is at least g·η: rounded down, so "no more than" stays true.
        let times = crate::words::format_value((1.0 / g).floor(), 0);
        format!(
            "{how} {now}, so at the same η an SGD step moves no weight by more than η/{times}, \
while Adam's steps are typically close to η: SGD needs a far larger η."
        )
    } else if g < 1.0 {
        format!(
            "{how} {now}, below 1, so at the same η every SGD step is smaller than η, while \
Adam's are typically close to η: SGD needs a larger η to move as fast."
        )
    } else {
        let compared = if g > 1.0 {
            "further than Adam would"
        } else {
            "as far as Adam's largest steps"
        };
        format!(
            "{how} {now}, at least 1, so at the same η SGD moves that entry's weight by {}, \
{compared}; a smaller η keeps that weight from overshooting, though weights with small \
gradients then move slowly.",
            times_eta(g)
        )
    }
}

/// Why positions matter for the goals that name a position.
pub const POSITIONS_NOTE: &str = "Positional encoding is off, so a head sees which words there \
are but not where they stand: it can learn a position-based goal only through the words \
themselves, and repeated words defeat it.";

/// The width [`POSITIONS_ON`] gives a model for `tokens` tokens: the encoding is added to the
/// embeddings, so a token's numbers carry both its word and its position, and one head follows
/// "one before" over about 20 tokens at d_model = 8, over 32 at 16.
pub fn positions_width(tokens: usize) -> usize {
    if tokens > 20 {
        16
    } else {
        8
    }
}

/// [`POSITIONS_NOTE`], and where `d_model` is narrower than [`positions_width`] for `tokens`
/// tokens, why the button widens the model.
pub fn positions_note(d_model: usize, tokens: usize) -> String {
    let wide = positions_width(tokens);
    if d_model >= wide {
        return POSITIONS_NOTE.to_string();
    }
    format!(
        "{POSITIONS_NOTE} Added to the embeddings, the encoding shares a token's {d_model} \
numbers with its word, so the button also widens the model to d_model = {wide}, room for both \
over {tokens} tokens. The numbers already in the matrices and the embeddings stay; the new rows \
and columns get those a fresh d_model = {wide} model starts with."
    )
}

/// The button beside [`positions_note`].
pub fn positions_on_label(d_model: usize, tokens: usize) -> String {
    let wide = positions_width(tokens);
    if d_model >= wide {
        POSITIONS_ON.to_string()
    } else {
        format!("{POSITIONS_ON}, at d_model = {wide}")
    }
}

/// Above the head shown beside the loss curve.
pub const WATCHED_HEAD: &str =
    "The head's weights Aₕ (they change when W_q, W_k or the embeddings learn)";

/// The button beside [`POSITIONS_NOTE`] that gives the head what the goal needs.
pub const POSITIONS_ON: &str = "Switch positional encoding on";

/// How long a run lasts.
pub const RUN_LENGTH_NOTE: &str = "Train takes up to 60 steps a second and pauses by itself after \
1000 steps; Reset returns to the weights from when the run started.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrow_model_is_widened_to_room_for_word_and_position() {
        assert_eq!(positions_width(11), 8);
        assert_eq!(positions_width(32), 16);
        let note = positions_note(4, 11);
        assert!(note.starts_with(POSITIONS_NOTE), "{note}");
        assert!(note.contains("a token's 4 numbers"), "{note}");
        assert!(
            note.contains("d_model = 8, room for both over 11 tokens"),
            "{note}"
        );
        assert_eq!(
            positions_on_label(4, 11),
            format!("{POSITIONS_ON}, at d_model = 8")
        );
        assert!(positions_note(8, 32).contains("d_model = 16"));
        assert_eq!(positions_note(8, 11), POSITIONS_NOTE);
        assert_eq!(positions_on_label(16, 32), POSITIONS_ON);
    }

    #[test]
    fn a_learning_rate_far_above_the_usual_gets_a_note() {
        assert_eq!(large_rate_note(0.1), None);
        assert_eq!(large_rate_note(10.0), None);
        let note = large_rate_note(1e9).unwrap();
        assert!(
            note.starts_with("η = 1000000000 is far above the usual range"),
            "{note}"
        );
    }

    #[test]
    fn the_status_names_the_steps_and_both_losses() {
        assert_eq!(status_text(&[1.0986]), "Before training: loss L ≈ 1.0986.");
        assert_eq!(
            status_text(&[1.0986, 0.5]),
            "After 1 step: loss L ≈ 0.5000 (≈ 1.0986 when this run started)."
        );
        assert!(status_text(&[2.0, 1.0, 0.25]).starts_with("After 2 steps: loss L ≈ 0.2500"));
        assert!(status_text(&[2.0, 0.000213]).contains("L ≈ 2.13 × 10⁻⁴ "));
        // A run that blew up writes its loss with a power of ten, not a hundred digits.
        assert!(status_text(&[2.0, 3.1e100]).contains("L ≈ 3.10 × 10¹⁰⁰ "));
        assert!(status_text(&[2.0, 999_999.0]).contains("L ≈ 999999.0000 "));
    }

    #[test]
    fn each_heads_target_is_listed_without_brackets_inside_brackets() {
        let goal = Goal::Pattern(vec![
            HeadTarget::Named(NamedTarget::Previous),
            HeadTarget::Named(NamedTarget::Next),
            HeadTarget::Painted(crate::attention::Matrix::identity(2, 2)),
        ]);
        let text = goal_description(&goal, false);
        assert_eq!(
            text,
            "Pattern, a target for each head — head 1, the key one position before (the first \
             at itself); head 2, the key one position after (the last at itself); head 3, \
             painted by hand"
        );
        let mut depth = 0i32;
        for c in text.chars() {
            depth += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            assert!((0..=1).contains(&depth), "{text}");
        }
    }

    #[test]
    fn the_task_loss_text_names_the_embeddings_its_target_is_built_from() {
        let own = loss_text(LossKind::Task, false);
        assert!(
            own.contains("token embeddings E alone") && !own.contains("E_src"),
            "{own}"
        );
        let source = loss_text(LossKind::Task, true);
        assert!(source.contains("embeddings E_src alone"), "{source}");
    }

    #[test]
    fn the_pattern_loss_text_says_where_l_reaches_0_and_that_only_score_gaps_matter() {
        let text = loss_text(LossKind::Pattern, false);
        assert!(!text.contains("as the scores grow"), "{text}");
        assert!(
            text.contains("Only the gaps between a row's scores"),
            "{text}"
        );
        assert!(
            text.contains(
                "exactly 0 in a row with a single visible key (the first row under the causal mask"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_task_note_says_only_e_src_is_in_a_cross_attention_target() {
        let cross = task_embeddings_note(true);
        assert!(!cross.contains("no embeddings learn"), "{cross}");
        assert!(
            cross.contains("built from the source's embeddings E_src alone"),
            "{cross}"
        );
        assert!(cross.contains("E are not in the target"), "{cross}");
        let own = task_embeddings_note(false);
        assert!(
            own.contains("built from the embeddings E, so E stays fixed"),
            "{own}"
        );
    }

    #[test]
    fn the_sgd_note_says_a_far_larger_eta_only_when_the_gradients_are_small() {
        let small = sgd_note(Some(0.0437));
        assert!(small.contains("now ≈ 0.044"), "{small}");
        assert!(small.contains("no weight by more than η/22"), "{small}");
        assert!(small.contains("SGD needs a far larger η"), "{small}");
        let middle = sgd_note(Some(0.5));
        assert!(middle.contains("now 0.500, below 1"), "{middle}");
        assert!(!middle.contains("far larger"), "{middle}");
        assert!(!sgd_note(None).contains("far larger"));
        assert!(sgd_note(Some(0.0)).contains("no gradient"));
        let tiny = sgd_note(Some(2e-7));
        assert!(
            tiny.contains("≈ 2.00 × 10⁻⁷") && tiny.contains("η/5000000"),
            "{tiny}"
        );
    }

    #[test]
    fn a_large_gradient_names_its_entry_and_how_far_sgd_moves_that_weight() {
        let large = sgd_note(Some(4.3163));
        assert!(
            large.ends_with(
                "The largest gradient entry among the matrices that learn is now ≈ 4.316, at \
                 least 1, so at the same η SGD moves that entry's weight by about 4.3 η, further \
                 than Adam would; a smaller η keeps that weight from overshooting, though weights \
                 with small gradients then move slowly."
            ),
            "{large}"
        );
        assert!(!large.contains("larger η"), "{large}");
        let one = sgd_note(Some(1.0));
        assert!(one.contains("now 1.000, at least 1"), "{one}");
        assert!(
            one.contains("by η, as far as Adam's largest steps;"),
            "{one}"
        );
        assert!(!one.contains("above 1"), "{one}");
        assert!(sgd_note(Some(2.5)).contains("by 2.5 η, further"));
        let huge = sgd_note(Some(3.2e9));
        assert!(huge.contains("now ≈ 3.20 × 10⁹"), "{huge}");
        assert!(huge.contains("about 3.20 × 10⁹ η"), "{huge}");
    }

    #[test]
    fn every_goal_has_its_own_label() {
        let labels: std::collections::BTreeSet<_> = NamedTarget::ALL
            .iter()
            .flat_map(|t| [pattern_label(*t, false), pattern_label(*t, true)])
            .map(String::from)
            .chain(Task::ALL.iter().map(|t| task_label(*t, false)))
            .collect();
        assert_eq!(labels.len(), 2 * NamedTarget::ALL.len() + Task::ALL.len());
        assert!(task_label(Task::CopyFirst, true).contains("the first row of E_src"));
        assert!(labels.iter().all(|l| !l.contains("row 0")));
    }
}
