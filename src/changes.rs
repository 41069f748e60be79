//! Which parameter the learner changed last, and which of the stages it changed they have not
//! looked at since, so that an edit always shows its effect somewhere.
//!
//! The rule: an edit of one parameter marks every stage whose numbers it changes, except the
//! stage on screen (its numbers change in view). Looking at a marked stage clears its mark; the
//! next edit replaces every mark. A change of several parameters at once (loading a preset, a
//! link or a file) is not an edit of one thing: it clears every mark.

use crate::attention::{BlockParam, Parameter, Stage, WeightName, Wiring};
use crate::state::Model;

/// How the model changed between two states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing the forward pass reads changed.
    None,
    /// Exactly one parameter changed.
    One(Parameter),
    /// Several parameters changed at once.
    Many,
}

/// What changed from `before` to `after`. A new d_model resizes every matrix and may pick a
/// new head count, so it counts as that one change.
pub fn change_between(before: &Model, after: &Model) -> Change {
    if before.config.d_model != after.config.d_model {
        let only_width = before.sentence == after.sentence
            && crate::attention::Config {
                d_model: before.config.d_model,
                n_heads: before.config.n_heads,
                ..after.config
            } == before.config;
        return if only_width {
            Change::One(Parameter::DModel)
        } else {
            Change::Many
        };
    }
    // A switch that adds or removes stages is not an edit of one number.
    if before.wiring().cross != after.wiring().cross
        || before.wiring().block != after.wiring().block
    {
        return Change::Many;
    }
    let (b, a) = (&before.config, &after.config);
    let mut changed = Vec::new();
    let mut note = |differs: bool, p: Parameter| {
        if differs {
            changed.push(p);
        }
    };
    note(before.sentence != after.sentence, Parameter::Sentence);
    note(
        before.embedding_overrides != after.embedding_overrides,
        Parameter::Embeddings,
    );
    note(
        b.positional_encoding != a.positional_encoding,
        Parameter::Positional,
    );
    for w in WeightName::ALL {
        note(
            before.weights.get(w) != after.weights.get(w),
            Parameter::Weight(w),
        );
    }
    note(b.n_heads != a.n_heads, Parameter::Heads);
    note(b.scale != a.scale, Parameter::Scale);
    note(b.causal != a.causal, Parameter::Causal);
    note(b.temperature != a.temperature, Parameter::Temperature);
    if after.cross {
        note(before.source != after.source, Parameter::Source);
        note(
            before.source_overrides != after.source_overrides,
            Parameter::SourceEmbeddings,
        );
    }
    if after.block_on {
        let (bb, ab) = (&before.block, &after.block);
        if bb.d_ff() != ab.d_ff() {
            note(true, Parameter::DFf);
        } else {
            for p in BlockParam::ALL {
                note(bb.get(p) != ab.get(p), Parameter::Block(p));
            }
        }
        note(bb.activation != ab.activation, Parameter::Activation);
    }
    match changed.as_slice() {
        [] => Change::None,
        [one] => Change::One(*one),
        _ => Change::Many,
    }
}

/// The last edit and the stages it changed that the learner has not looked at since.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unseen {
    /// The parameter edited last; `None` before any edit or after a change of several.
    pub edit: Option<Parameter>,
    /// The stages it changed that have not been shown since, in order.
    pub stages: Vec<Stage>,
    /// The source and block switches when it was made.
    pub wiring: Wiring,
}

impl Unseen {
    /// After `change` made while `current` is shown, with the switches of `wiring`.
    pub fn after(change: Change, current: Stage, wiring: Wiring) -> Self {
        match change {
            Change::One(p) => Self {
                edit: Some(p),
                stages: p
                    .changed_stages(wiring)
                    .into_iter()
                    .filter(|s| *s != current)
                    .collect(),
                wiring,
            },
            Change::None | Change::Many => Self {
                wiring,
                ..Self::default()
            },
        }
    }

    /// After the learner looked at `stage`.
    pub fn visit(&mut self, stage: Stage) {
        self.stages.retain(|s| *s != stage);
    }

    /// Whether `stage` is marked as changed and not yet seen.
    pub fn is_marked(&self, stage: Stage) -> bool {
        self.stages.contains(&stage)
    }

    /// Where the note on `current` points: when the edit does not change `current`, the next
    /// stage it changes, as long as that stage is still unseen.
    pub fn pointer(&self, current: Stage) -> Option<(Parameter, Stage)> {
        let edit = self.edit?;
        if current.is_changed_by(edit, self.wiring) {
            return None;
        }
        let next = edit.next_stage_after(current, self.wiring)?;
        self.is_marked(next).then_some((edit, next))
    }
}

/// The model as last seen and what is unseen since: the app's record of edits, stepped each
/// time the model or the stage changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Trail {
    model: Model,
    /// The last edit and its unseen stages.
    pub unseen: Unseen,
}

impl Trail {
    /// Before any edit.
    pub fn start(model: &Model) -> Self {
        Self {
            model: model.clone(),
            unseen: Unseen::default(),
        }
    }

    /// The trail once `model` is the model and `stage` is on screen.
    pub fn step(&self, model: &Model, stage: Stage) -> Self {
        let unseen = if self.model == *model {
            let mut unseen = self.unseen.clone();
            unseen.visit(stage);
            unseen
        } else {
            Unseen::after(change_between(&self.model, model), stage, model.wiring())
        };
        Self {
            model: model.clone(),
            unseen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::Init;
    use crate::state::EditTarget;

    fn edited(f: impl FnOnce(&mut Model)) -> (Model, Model) {
        let before = Model::default();
        let mut after = before.clone();
        f(&mut after);
        (before, after)
    }

    #[test]
    fn one_cell_of_one_matrix_is_one_change() {
        let (b, a) = edited(|m| {
            m.set_cell(EditTarget::Weight(WeightName::V), 0, 0, 3.0)
                .unwrap()
        });
        assert_eq!(
            change_between(&b, &a),
            Change::One(Parameter::Weight(WeightName::V))
        );
        let (b, a) = edited(|m| m.set_cell(EditTarget::Embeddings, 1, 2, 3.0).unwrap());
        assert_eq!(change_between(&b, &a), Change::One(Parameter::Embeddings));
    }

    #[test]
    fn settings_are_changes_of_their_own() {
        let (b, a) = edited(|m| m.config.temperature = 2.0);
        assert_eq!(change_between(&b, &a), Change::One(Parameter::Temperature));
        let (b, a) = edited(|m| m.config.causal = true);
        assert_eq!(change_between(&b, &a), Change::One(Parameter::Causal));
        let (b, a) = edited(|m| m.set_n_heads(4).unwrap());
        assert_eq!(change_between(&b, &a), Change::One(Parameter::Heads));
        // A new width resizes the weights: still one change.
        let (b, a) = edited(|m| m.set_d_model(6).unwrap());
        assert_eq!(change_between(&b, &a), Change::One(Parameter::DModel));
    }

    #[test]
    fn a_whole_new_model_is_many_changes_and_no_change_is_none() {
        let (b, a) = edited(|m| {
            m.set_sentence("the cat sat").unwrap();
            m.fill(EditTarget::Weight(WeightName::Q), Init::Identity);
        });
        assert_eq!(change_between(&b, &a), Change::Many);
        let (b, a) = edited(|m| m.seed += 1);
        assert_eq!(change_between(&b, &a), Change::None);
        assert_eq!(
            Unseen::after(Change::Many, Stage::Input, Wiring::default()),
            Unseen::default()
        );
    }

    #[test]
    fn an_edit_marks_the_stages_it_changes_except_the_one_on_screen() {
        let wv = Parameter::Weight(WeightName::V);
        let unseen = Unseen::after(Change::One(wv), Stage::Projection, Wiring::default());
        assert_eq!(
            unseen.stages,
            [
                Stage::SplitHeads,
                Stage::WeightedSum,
                Stage::Concat,
                Stage::OutputProjection
            ]
        );
        assert!(!unseen.is_marked(Stage::Scores));
    }

    #[test]
    fn the_note_points_to_the_next_unseen_stage_until_it_is_seen() {
        let wq = Parameter::Weight(WeightName::Q);
        let mut unseen = Unseen::after(Change::One(wq), Stage::Input, Wiring::default());
        assert_eq!(unseen.pointer(Stage::Input), Some((wq, Stage::Projection)));
        // The edited matrix is in use on stage 4: no note there.
        assert_eq!(unseen.pointer(Stage::Scores), None);
        unseen.visit(Stage::Projection);
        assert!(!unseen.is_marked(Stage::Projection));
        assert!(unseen.is_marked(Stage::OutputProjection));
        assert_eq!(unseen.pointer(Stage::Input), None);
    }

    #[test]
    fn the_trail_marks_an_edit_and_clears_a_mark_on_each_visit() {
        let start = Model::default();
        let trail = Trail::start(&start);
        let mut edited = start.clone();
        edited.config.temperature = 0.5;
        let trail = trail.step(&edited, Stage::Input);
        assert_eq!(trail.unseen.edit, Some(Parameter::Temperature));
        assert_eq!(trail.unseen.stages.len(), 4);
        let trail = trail.step(&edited, Stage::Softmax);
        assert!(!trail.unseen.is_marked(Stage::Softmax));
        assert!(trail.unseen.is_marked(Stage::WeightedSum));
        // Another edit replaces the marks.
        edited.config.causal = true;
        let trail = trail.step(&edited, Stage::Softmax);
        assert_eq!(trail.unseen.edit, Some(Parameter::Causal));
        assert!(trail.unseen.is_marked(Stage::Mask));
    }

    #[test]
    fn past_its_first_stage_the_note_points_forward() {
        let wv = Parameter::Weight(WeightName::V);
        let unseen = Unseen::after(Change::One(wv), Stage::Scale, Wiring::default());
        assert_eq!(unseen.pointer(Stage::Scale), Some((wv, Stage::WeightedSum)));
    }
}
