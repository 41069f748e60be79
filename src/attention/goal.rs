//! What a head should learn: a target attention pattern for each head, or a task for the
//! layer's output.
//!
//! ```text
//! pattern   A*_h  (seq_len, n_keys)   rows sum to 1, one per head
//! task      Y* = P·E                  (seq_len, d_model)
//! ```
//!
//! Rows count from 0; `n_keys` is seq_len, or src_len in cross-attention, and every key index
//! is clamped to it. A task's target is built from the token embeddings E without positions
//! (the source's in cross-attention) through a mixing matrix P (seq_len, n_keys) that is itself
//! one of the named patterns: `copy_previous` mixes with `previous`, `copy_first` with `first`
//! and `mean` with `uniform`. So a task asks the layer's output to be what a head with that
//! pattern would give if its values were the plain embeddings.

use super::config::Mask;
use super::error::AttentionError;
use super::forward::Trace;
use super::weights::check_matrix;
use super::Matrix;
use std::fmt;
use std::str::FromStr;

use super::choices::keyed;

/// Which of the two losses a goal uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LossKind {
    /// Cross-entropy of each head's weights against a target pattern.
    Pattern,
    /// Mean squared error of the layer's output against a target built from the embeddings.
    Task,
}

keyed!(LossKind, "loss", [Pattern => "pattern", Task => "task"]);

/// A named attention pattern for one head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamedTarget {
    /// Each token looks at itself: key `min(i, n_keys − 1)`.
    SelfToken,
    /// Each token looks at the one before: key `max(i − 1, 0)`, clamped to the keys.
    Previous,
    /// Each token looks at the one after: key `min(i + 1, n_keys − 1)`.
    Next,
    /// Every token looks at the first: key 0.
    First,
    /// Equal weight on every key the mask leaves visible.
    Uniform,
}

keyed!(NamedTarget, "target", [
    SelfToken => "self",
    Previous => "previous",
    Next => "next",
    First => "first",
    Uniform => "uniform",
]);

impl NamedTarget {
    /// The one key row `row` should look at, or `None` for `uniform`, which spreads its weight.
    pub fn key_for(self, row: usize, n_keys: usize) -> Option<usize> {
        let last = n_keys.saturating_sub(1);
        match self {
            Self::SelfToken => Some(row.min(last)),
            Self::Previous => Some(row.saturating_sub(1).min(last)),
            Self::Next => Some((row + 1).min(last)),
            Self::First => Some(0),
            Self::Uniform => None,
        }
    }

    /// The target pattern, unchecked against the mask; `uniform` shares each row among the
    /// keys the mask leaves visible. (seq_len, n_keys)
    pub fn pattern(self, seq_len: usize, n_keys: usize, mask: Mask) -> Matrix {
        let mut out = Matrix::zeros(seq_len, n_keys);
        if n_keys == 0 {
            return out;
        }
        for i in 0..seq_len {
            match self.key_for(i, n_keys) {
                Some(j) => out[(i, j)] = 1.0,
                None => {
                    let visible = mask.visible(i, n_keys);
                    let share = 1.0 / visible.len().max(1) as f64;
                    out.row_mut(i)
                        .columns_mut(visible.start, visible.len())
                        .fill(share);
                }
            }
        }
        out
    }
}

/// One head's target: a named pattern or one painted by hand.
#[derive(Debug, Clone, PartialEq)]
pub enum HeadTarget {
    /// A named pattern.
    Named(NamedTarget),
    /// Painted weights, any non-negative numbers; each row is divided by its sum.
    /// (seq_len, n_keys)
    Painted(Matrix),
}

impl HeadTarget {
    /// The name an error uses: the named target's key, or `painted`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Named(named) => named.key(),
            Self::Painted(_) => super::error::PAINTED,
        }
    }

    /// This head's target pattern, checked against the mask; rows sum to 1.
    /// (seq_len, n_keys)
    pub fn pattern(
        &self,
        head: usize,
        seq_len: usize,
        n_keys: usize,
        mask: Mask,
    ) -> Result<Matrix, AttentionError> {
        let pattern = match self {
            Self::Named(named) => named.pattern(seq_len, n_keys, mask),
            Self::Painted(painted) => renormalised(head, painted, (seq_len, n_keys))?,
        };
        check_visible(self.name(), head, &pattern, mask)?;
        Ok(pattern)
    }
}

impl HeadTarget {
    /// This target with a painted pattern fitted to (seq_len, n_keys): the cells both shapes
    /// have are kept, and a row left with no weight looks at the token itself.
    pub fn fitted(&self, seq_len: usize, n_keys: usize) -> HeadTarget {
        let Self::Painted(painted) = self else {
            return self.clone();
        };
        if painted.shape() == (seq_len, n_keys) {
            return self.clone();
        }
        let mut out = Matrix::zeros(seq_len, n_keys);
        let (rows, cols) = (seq_len.min(painted.nrows()), n_keys.min(painted.ncols()));
        out.view_mut((0, 0), (rows, cols))
            .copy_from(&painted.view((0, 0), (rows, cols)));
        for i in 0..seq_len {
            if n_keys > 0 && out.row(i).iter().all(|v| *v <= 0.0) {
                out.row_mut(i).fill(0.0);
                out[(i, i.min(n_keys - 1))] = 1.0;
            }
        }
        Self::Painted(out)
    }
}

/// A painted target with each row divided by its sum. (seq_len, n_keys)
fn renormalised(
    head: usize,
    painted: &Matrix,
    shape: (usize, usize),
) -> Result<Matrix, AttentionError> {
    check_matrix(
        &format!("Head {}'s painted target", head + 1),
        painted,
        shape,
    )?;
    let mut out = painted.clone();
    for (row, mut cells) in out.row_iter_mut().enumerate() {
        if let Some(col) = cells.iter().position(|v| *v < 0.0) {
            return Err(AttentionError::NegativeTarget {
                head,
                row,
                col,
                detail: Box::default(),
            });
        }
        let sum = cells.sum();
        if sum <= 0.0 {
            return Err(AttentionError::EmptyTargetRow {
                head,
                row,
                detail: Box::default(),
            });
        }
        cells /= sum;
    }
    Ok(out)
}

/// Refuses a pattern with weight on a key after its query when the causal mask is on, and
/// then one with weight on a key before a sliding window.
fn check_visible(
    target: &str,
    head: usize,
    pattern: &Matrix,
    mask: Mask,
) -> Result<(), AttentionError> {
    if !mask.is_on() {
        return Ok(());
    }
    let later =
        |row: usize| ((row + 1)..pattern.ncols()).filter(move |&j| pattern[(row, j)] != 0.0);
    let earlier = |row: usize| {
        (0..pattern.ncols().min(row + 1))
            .filter(move |&j| mask.window_hides(row, j) && pattern[(row, j)] != 0.0)
    };
    let first = |cells: &dyn Fn(usize) -> Vec<usize>| {
        let found = (0..pattern.nrows()).find_map(|row| cells(row).first().map(|&k| (row, k)));
        let count: usize = (0..pattern.nrows()).map(|row| cells(row).len()).sum();
        found.map(|cell| (cell, count))
    };
    if let Some(((row, key), cells)) = first(&|row| later(row).collect()) {
        return Err(AttentionError::TargetOnMaskedKey {
            target: target.to_string(),
            head,
            row,
            key,
            detail: Box::default(),
        }
        .counting(cells));
    }
    if let (Some(window), Some(((row, key), cells))) =
        (mask.window, first(&|row| earlier(row).collect()))
    {
        return Err(AttentionError::TargetOutsideWindow {
            target: target.to_string(),
            head,
            row,
            key,
            window,
            detail: Box::default(),
        }
        .counting(cells));
    }
    Ok(())
}

/// Every head's target pattern, for a sentence of `tokens` attending to `keys`, from a list of
/// one target shared by all heads or one per head; a list of any other length is refused. A
/// refusal names the tokens of the cell it is about, and every head when they share the target;
/// a per-head target on a hidden key also names the later heads whose targets ask for one.
/// n_heads × (seq_len, n_keys)
pub(crate) fn head_patterns(
    targets: &[HeadTarget],
    n_heads: usize,
    tokens: &[String],
    keys: &[String],
    mask: Mask,
) -> Result<Vec<Matrix>, AttentionError> {
    if targets.is_empty() || (targets.len() != 1 && targets.len() != n_heads) {
        return Err(AttentionError::TargetCount {
            count: targets.len(),
            n_heads,
        });
    }
    let shared = targets.len() == 1 && n_heads > 1;
    let pattern = |h: usize| {
        let target = &targets[h.min(targets.len() - 1)];
        target.pattern(h, tokens.len(), keys.len(), mask)
    };
    let mut patterns = Vec::with_capacity(n_heads);
    for h in 0..n_heads {
        match pattern(h) {
            Ok(p) => patterns.push(p),
            Err(e) => {
                let e = e.naming(tokens, keys);
                if shared {
                    return Err(e.shared());
                }
                // Every head's own target that asks for a hidden key is named, so fixing one
                // head does not lead to the next refusal.
                let masked =
                    |e: &AttentionError| matches!(e, AttentionError::TargetOnMaskedKey { .. });
                let also = if masked(&e) {
                    ((h + 1)..n_heads)
                        .filter(|&o| pattern(o).err().is_some_and(|e| masked(&e)))
                        .collect()
                } else {
                    Vec::new()
                };
                return Err(e.also(also));
            }
        }
    }
    Ok(patterns)
}

/// A target for the layer's output, built from the token embeddings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Task {
    /// Row i of the output should be E[max(i − 1, 0)], clamped to the keys.
    CopyPrevious,
    /// Every row should be E[0].
    CopyFirst,
    /// Row i should be the mean of the E rows the mask leaves visible to it.
    Mean,
}

keyed!(Task, "task", [
    CopyPrevious => "copy_previous",
    CopyFirst => "copy_first",
    Mean => "mean",
]);

impl Task {
    /// The pattern whose mix of embedding rows is the target: Y* = P·E.
    pub fn pattern(self) -> NamedTarget {
        match self {
            Self::CopyPrevious => NamedTarget::Previous,
            Self::CopyFirst => NamedTarget::First,
            Self::Mean => NamedTarget::Uniform,
        }
    }

    /// The mixing matrix P. (seq_len, n_keys)
    pub fn mixing(self, seq_len: usize, n_keys: usize, mask: Mask) -> Matrix {
        self.pattern().pattern(seq_len, n_keys, mask)
    }
}

/// What training aims at.
#[derive(Debug, Clone, PartialEq)]
pub enum Goal {
    /// A target pattern for every head: one shared by all heads, or one per head.
    Pattern(Vec<HeadTarget>),
    /// A target for the layer's output.
    Task(Task),
}

impl Goal {
    /// The same named target for every head.
    pub fn named(target: NamedTarget) -> Self {
        Self::Pattern(vec![HeadTarget::Named(target)])
    }

    /// Which loss this goal uses.
    pub fn loss_kind(&self) -> LossKind {
        match self {
            Self::Pattern(_) => LossKind::Pattern,
            Self::Task(_) => LossKind::Task,
        }
    }

    /// This goal fitted to `n_heads` heads and to a (seq_len, n_keys) pattern, so that a
    /// goal chosen for one sentence still applies after the sentence or the heads change: a
    /// per-head list gets one target per head (the last repeated, or the extra ones dropped),
    /// and a painted target keeps the cells the new shape still has, while a row left with no
    /// weight looks at the token itself, which the causal mask always leaves visible.
    pub fn fitted(&self, n_heads: usize, seq_len: usize, n_keys: usize) -> Goal {
        let Self::Pattern(targets) = self else {
            return self.clone();
        };
        let mut targets: Vec<HeadTarget> =
            targets.iter().map(|t| t.fitted(seq_len, n_keys)).collect();
        if targets.len() > 1 && targets.len() != n_heads {
            let last = targets.last().cloned();
            targets.resize(
                n_heads.max(1),
                last.unwrap_or(HeadTarget::Named(NamedTarget::Previous)),
            );
        }
        if targets.is_empty() {
            targets.push(HeadTarget::Named(NamedTarget::Previous));
        }
        Self::Pattern(targets)
    }

    /// The goal made concrete for `trace`'s sentence, source and mask.
    pub fn objective(&self, trace: &Trace) -> Result<Objective, AttentionError> {
        let (seq_len, n_keys) = (trace.seq_len(), trace.n_keys());
        let mask = trace.config.mask();
        match self {
            Self::Pattern(targets) => {
                let n_heads = trace.heads.len();
                let patterns =
                    head_patterns(targets, n_heads, &trace.tokens, trace.key_tokens(), mask)?;
                Ok(Objective::Pattern(patterns))
            }
            Self::Task(task) => {
                let mixing = task.mixing(seq_len, n_keys, mask);
                let source = trace
                    .source
                    .as_ref()
                    .map_or(&trace.embeddings, |s| &s.embeddings);
                // (seq_len, n_keys)·(n_keys, d_model) → (seq_len, d_model)
                let target = &mixing * source;
                Ok(Objective::Task {
                    task: *task,
                    mixing,
                    target,
                })
            }
        }
    }
}

/// A goal made concrete for one input: the numbers the loss compares against.
#[derive(Debug, Clone, PartialEq)]
pub enum Objective {
    /// One target pattern A*_h per head, rows summing to 1. n_heads × (seq_len, n_keys)
    Pattern(Vec<Matrix>),
    /// The layer's output should equal `target`.
    Task {
        /// The task.
        task: Task,
        /// P, which mixes the embedding rows into the target. (seq_len, n_keys)
        mixing: Matrix,
        /// Y* = P·E (E_src in cross-attention). (seq_len, d_model)
        target: Matrix,
    },
}

impl Objective {
    /// Which loss this objective uses.
    pub fn loss_kind(&self) -> LossKind {
        match self {
            Self::Pattern(_) => LossKind::Pattern,
            Self::Task { .. } => LossKind::Task,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(m: &Matrix) -> Vec<Vec<f64>> {
        m.row_iter().map(|r| r.iter().copied().collect()).collect()
    }

    #[test]
    fn named_targets_point_at_their_keys_and_clamp_to_them() {
        let previous = NamedTarget::Previous.pattern(3, 3, Mask::NONE);
        assert_eq!(
            rows(&previous),
            [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
        );
        // Four queries, two source keys: `self` and `next` stop at the last key.
        let own = NamedTarget::SelfToken.pattern(4, 2, Mask::NONE);
        assert_eq!(own.column(1).sum(), 3.0);
        let next = NamedTarget::Next.pattern(4, 2, Mask::NONE);
        assert_eq!(rows(&next)[0], [0.0, 1.0]);
        assert_eq!(
            NamedTarget::First.pattern(2, 3, Mask::NONE).column(0).sum(),
            2.0
        );
    }

    #[test]
    fn uniform_spreads_over_the_keys_the_mask_leaves_visible() {
        let causal = NamedTarget::Uniform.pattern(3, 3, Mask::CAUSAL);
        assert_eq!(rows(&causal)[1], [0.5, 0.5, 0.0]);
        let open = NamedTarget::Uniform.pattern(2, 4, Mask::NONE);
        assert_eq!(rows(&open)[0], [0.25; 4]);
    }

    #[test]
    fn a_window_refuses_targets_behind_it_and_shares_uniform_inside_it() {
        let window = Mask {
            causal: true,
            window: Some(2),
        };
        let uniform = NamedTarget::Uniform.pattern(4, 4, window);
        assert_eq!(rows(&uniform)[3], [0.0, 0.0, 0.5, 0.5]);
        let tokens: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let first = [HeadTarget::Named(NamedTarget::First)];
        let err = head_patterns(&first, 1, &tokens, &tokens, window).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(
                err,
                AttentionError::TargetOutsideWindow { row: 2, key: 0, .. }
            ),
            "{text}"
        );
        assert!(
            text.contains("sliding window hides")
                && text.contains("outside its window of 2 tokens"),
            "{text}"
        );
        assert!(
            text.contains("row 3 (“c”)") && text.contains("(the first of 2"),
            "{text}"
        );
        let previous = [HeadTarget::Named(NamedTarget::Previous)];
        assert!(head_patterns(&previous, 1, &tokens, &tokens, window).is_ok());
        let alone = Mask {
            window: Some(1),
            ..window
        };
        assert!(head_patterns(&previous, 1, &tokens, &tokens, alone).is_err());
    }

    #[test]
    fn next_under_the_causal_mask_names_the_target_and_the_mask() {
        let err = HeadTarget::Named(NamedTarget::Next)
            .pattern(0, 3, 3, Mask::CAUSAL)
            .unwrap_err();
        assert!(matches!(
            err,
            AttentionError::TargetOnMaskedKey { row: 0, key: 1, .. }
        ));
        let text = err.to_string();
        assert!(
            text.contains("`next`") && text.contains("causal mask"),
            "{text}"
        );
    }

    #[test]
    fn painted_rows_are_renormalised_and_bad_paint_is_refused() {
        let painted = Matrix::from_row_slice(2, 2, &[1.0, 3.0, 0.0, 2.0]);
        let target = HeadTarget::Painted(painted)
            .pattern(0, 2, 2, Mask::NONE)
            .unwrap();
        assert_eq!(rows(&target), [[0.25, 0.75], [0.0, 1.0]]);
        let empty = HeadTarget::Painted(Matrix::zeros(2, 2));
        assert!(matches!(
            empty.pattern(1, 2, 2, Mask::NONE),
            Err(AttentionError::EmptyTargetRow {
                head: 1,
                row: 0,
                ..
            })
        ));
        let negative = HeadTarget::Painted(Matrix::from_row_slice(1, 2, &[1.0, -1.0]));
        assert!(negative.pattern(0, 1, 2, Mask::NONE).is_err());
        let wrong = HeadTarget::Painted(Matrix::from_element(3, 2, 1.0));
        assert!(matches!(
            wrong.pattern(0, 2, 2, Mask::NONE),
            Err(AttentionError::WrongShape { .. })
        ));
    }

    #[test]
    fn a_goal_fits_a_new_sentence_and_a_new_number_of_heads() {
        let painted = HeadTarget::Painted(Matrix::from_row_slice(2, 2, &[1.0, 0.0, 1.0, 1.0]));
        let goal = Goal::Pattern(vec![HeadTarget::Named(NamedTarget::First), painted.clone()]);
        // Three tokens, four heads: the painted rows are kept, the new row looks at itself
        // (key 2), and the last target fills the new heads.
        let Goal::Pattern(fitted) = goal.fitted(4, 3, 3) else {
            panic!("a pattern stays a pattern")
        };
        assert_eq!(fitted.len(), 4);
        assert_eq!(fitted[0], HeadTarget::Named(NamedTarget::First));
        let HeadTarget::Painted(m) = &fitted[3] else {
            panic!("the painted target stays painted")
        };
        assert_eq!(rows(m), [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
        // One token: the painted row keeps its first key.
        let one = Goal::Pattern(vec![painted]).fitted(2, 1, 1);
        assert_eq!(
            one,
            Goal::Pattern(vec![HeadTarget::Painted(Matrix::from_element(1, 1, 1.0))])
        );
        // A shared target and a task are left as they are.
        let shared = Goal::named(NamedTarget::Next);
        assert_eq!(shared.fitted(8, 5, 5), shared);
        assert_eq!(
            Goal::Task(Task::Mean).fitted(2, 3, 3),
            Goal::Task(Task::Mean)
        );
    }

    #[test]
    fn a_refused_target_names_its_tokens_its_heads_and_how_many_cells_break_the_mask() {
        let tokens: Vec<String> = ["I", "am", "hungry"].map(String::from).to_vec();
        let refusal = |targets: Vec<HeadTarget>, n_heads: usize| {
            head_patterns(&targets, n_heads, &tokens, &tokens, Mask::CAUSAL)
                .unwrap_err()
                .to_string()
        };
        let shared = refusal(vec![HeadTarget::Named(NamedTarget::Next)], 2);
        assert!(
            shared.starts_with(
                "The `next` target puts weight on a key the causal mask hides: in every head, \
                 row 1 (“I”) puts weight on key 2 (“am”), a later token (the first of 2 such \
                 cells)."
            ),
            "{shared}"
        );
        let own = refusal(
            vec![
                HeadTarget::Named(NamedTarget::SelfToken),
                HeadTarget::Named(NamedTarget::Next),
                HeadTarget::Named(NamedTarget::Next),
                HeadTarget::Named(NamedTarget::Uniform),
            ],
            4,
        );
        assert!(own.contains(": in head 2, row 1 (“I”)"), "{own}");
        assert!(
            own.contains("Head 3's target puts weight on a hidden key too. Switch the causal mask off, or give each of these heads a target"),
            "{own}"
        );
        let all = refusal(vec![HeadTarget::Named(NamedTarget::Next); 3], 3);
        assert!(
            all.contains(": in head 1, row 1 (“I”)")
                && all.contains("The targets of heads 2 and 3 put weight on hidden keys too."),
            "{all}"
        );
        let painted = Matrix::from_row_slice(3, 3, &[1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
        let one = refusal(vec![HeadTarget::Painted(painted.clone())], 1);
        assert!(
            one.starts_with(
                "Head 1's painted target puts weight on a key the causal mask hides: row 1 (“I”) \
                 puts weight on key 3 (“hungry”), a later token."
            ),
            "{one}"
        );
        assert!(
            one.ends_with(
                "keeping a key in every row (switch the mask off to repaint, then on again)."
            ),
            "{one}"
        );
        let everyone = refusal(vec![HeadTarget::Painted(painted)], 2);
        assert!(
            everyone.starts_with("The painted target every head shares puts weight"),
            "{everyone}"
        );
        let empty = Matrix::from_row_slice(3, 3, &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
        let empty = refusal(vec![HeadTarget::Painted(empty)], 2);
        assert_eq!(
            empty,
            "Row 2 (“am”) of the painted target every head shares has no weight: paint at least \
             one key in every row."
        );
        let count = AttentionError::TargetCount {
            count: 2,
            n_heads: 1,
        };
        assert_eq!(
            count.to_string(),
            "There are 2 targets for 1 head: give exactly one."
        );
    }

    #[test]
    fn keys_round_trip_and_unknown_ones_list_the_choices() {
        for target in NamedTarget::ALL {
            assert_eq!(NamedTarget::from_key(target.key()), Some(*target));
        }
        for task in Task::ALL {
            assert_eq!(task.key().parse::<Task>(), Ok(*task));
        }
        assert_eq!("task".parse::<LossKind>(), Ok(LossKind::Task));
        let err = "before".parse::<NamedTarget>().unwrap_err();
        assert!(
            err.contains("self, previous, next, first or uniform"),
            "{err}"
        );
    }

    #[test]
    fn tasks_mix_embedding_rows_as_their_patterns_do() {
        assert_eq!(
            Task::Mean.mixing(3, 3, Mask::CAUSAL),
            NamedTarget::Uniform.pattern(3, 3, Mask::CAUSAL)
        );
        let e = Matrix::from_row_slice(3, 2, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let copy = Task::CopyPrevious.mixing(3, 3, Mask::NONE) * &e;
        assert_eq!(rows(&copy), [[1.0, 2.0], [1.0, 2.0], [3.0, 4.0]]);
    }
}
