//! Training's goal and settings in a share link: `goal`, `paint`, `train`, `opt` and `lr`, each
//! left out at its default.
//!
//! - `goal`: a task's key (`copy_previous`, `copy_first`, `mean`), or target names joined by
//!   `,` (`self`, `previous`, `next`, `first`, `uniform`, `painted`), one for every head or one
//!   per head; `previous` when absent.
//! - `paint`: the painted targets in head order, each seq_len × n_keys numbers row by row,
//!   joined by `;` (each row is divided by its sum when training reads it).
//! - `train`: the matrices that learn, joined by `,` (`w_q`, `w_k`, `w_v`, `w_o`,
//!   `embeddings`, `source_embeddings`); the loss's defaults when absent.
//! - `opt`: `adam` or `sgd`; `lr`: the learning rate.

use super::fields::{shown, Fields, Notices};
use super::numbers::{number, parse_number, parse_numbers, push_number};
use crate::attention::{
    Goal, HeadTarget, Matrix, NamedTarget, OptimizerKind, Task, Trainable, Training,
};
use crate::state::Model;

/// The name of a painted target in `goal`.
const PAINTED: &str = "painted";

/// Appends the training keys that differ from their defaults, as `(key, value)` pairs.
pub(super) fn write_training(model: &Model, mut pair: impl FnMut(&str, &str)) {
    let training = model.fitted_training();
    let defaults = Training::default();
    if training.goal != defaults.goal {
        match &training.goal {
            Goal::Task(task) => pair("goal", task.key()),
            Goal::Pattern(targets) => {
                let names: Vec<&str> = targets
                    .iter()
                    .map(|t| match t {
                        HeadTarget::Named(n) => n.key(),
                        HeadTarget::Painted(_) => PAINTED,
                    })
                    .collect();
                pair("goal", &names.join(","));
                let painted: Vec<String> = targets
                    .iter()
                    .filter_map(|t| match t {
                        HeadTarget::Painted(m) => Some(row_major(m)),
                        HeadTarget::Named(_) => None,
                    })
                    .collect();
                if !painted.is_empty() {
                    pair("paint", &painted.join(";"));
                }
            }
        }
    }
    if training.train != Training::default_train(training.goal.loss_kind()) {
        let keys: Vec<&str> = training.train.iter().map(|t| t.key()).collect();
        pair("train", &keys.join(","));
    }
    if training.optimizer != defaults.optimizer {
        pair("opt", training.optimizer.key());
    }
    if training.learning_rate.to_bits() != defaults.learning_rate.to_bits() {
        pair("lr", &number(training.learning_rate));
    }
}

fn row_major(m: &Matrix) -> String {
    let mut out = String::new();
    for row in m.row_iter() {
        for x in row.iter() {
            push_number(&mut out, *x);
        }
    }
    out
}

/// Reads the training keys for `model` (whose sentence, heads, source and mask are already
/// read); a part that cannot be used is left at its default with a notice, and settings that
/// do not fit the model (a target on a masked key) give the defaults.
pub(super) fn read_training(fields: &Fields<'_>, model: &Model, notices: &mut Notices) -> Training {
    let defaults = Training::default();
    let goal = fields
        .get("goal")
        .and_then(|raw| read_goal(raw, fields.get("paint"), model, notices))
        .unwrap_or_else(|| defaults.goal.clone());
    let mut training = Training::new(goal);
    if let Some(raw) = fields.get("train") {
        let parsed: Option<Vec<Trainable>> = raw.split(',').map(Trainable::from_key).collect();
        match parsed {
            Some(train) => training.train = train,
            None => notices.add(format!(
                "The link's matrices to train {} are not a list of w_q, w_k, w_v, w_o, \
                 embeddings and source_embeddings: the goal's defaults learn.",
                shown(raw)
            )),
        }
    }
    if let Some(raw) = fields.get("opt") {
        match OptimizerKind::from_key(raw) {
            Some(kind) => training.optimizer = kind,
            None => notices.add(format!(
                "The link's optimizer {} is neither adam nor sgd: Adam is used.",
                shown(raw)
            )),
        }
    }
    if let Some(raw) = fields.get("lr") {
        match parse_number(raw) {
            Some(lr) if lr > 0.0 => training.learning_rate = lr,
            _ => notices.add(format!(
                "The link's learning rate {} is not a number above 0: η = {} is used.",
                shown(raw),
                number(defaults.learning_rate)
            )),
        }
    }
    let inputs = model.inputs();
    // A goal only the causal mask refuses is the app's own state (see
    // `Training::validate_but_the_mask`): the link opens on it.
    match training.validate_but_the_mask(&inputs) {
        Ok(()) => training,
        Err(e) => {
            notices.add(format!(
                "The link's training settings do not fit its model, so training has its \
                 default settings. {e}"
            ));
            defaults
        }
    }
}

/// The goal in `raw`, with painted targets from `paint`; `None` (after a notice) when unusable.
fn read_goal(raw: &str, paint: Option<&str>, model: &Model, notices: &mut Notices) -> Option<Goal> {
    if let Some(task) = Task::from_key(raw) {
        return Some(Goal::Task(task));
    }
    let seq_len = model.tokens().len();
    let n_keys = if model.cross {
        model.source_tokens().len()
    } else {
        seq_len
    };
    let mut paintings = paint
        .unwrap_or_default()
        .split(';')
        .filter(|p| !p.is_empty());
    let mut targets = Vec::new();
    for name in raw.split(',') {
        if name == PAINTED {
            let numbers = paintings.next().map(|p| parse_numbers(p, seq_len * n_keys));
            match numbers {
                Some(Ok(values)) => targets.push(HeadTarget::Painted(Matrix::from_row_slice(
                    seq_len, n_keys, &values,
                ))),
                Some(Err(e)) => {
                    notices.add(format!(
                        "The link's painted target {}: each head learns to look at the key \
                         before it.",
                        e.describe_shape((seq_len, n_keys))
                    ));
                    return None;
                }
                None => {
                    notices.add(
                        "The link names a painted target but has no painted numbers (paint): \
                         each head learns to look at the key before it."
                            .to_string(),
                    );
                    return None;
                }
            }
        } else if let Some(named) = NamedTarget::from_key(name) {
            targets.push(HeadTarget::Named(named));
        } else {
            notices.add(format!(
                "The link's training goal {} is not a task (copy_previous, copy_first, mean) \
                 nor a list of targets (self, previous, next, first, uniform, painted): each \
                 head learns to look at the key before it.",
                shown(raw)
            ));
            return None;
        }
    }
    Some(Goal::Pattern(targets))
}

#[cfg(test)]
mod tests {
    use super::super::{decode, encode, history_step, HistoryStep, ShareState};
    use crate::attention::{Goal, HeadTarget, Matrix, NamedTarget, OptimizerKind, Training};
    use crate::formats::scenario::Scenario;
    use crate::state::Model;

    fn painted_model() -> Model {
        let mut model = Model::default();
        model.config.causal = true;
        model.training = Training {
            optimizer: OptimizerKind::Sgd,
            learning_rate: 0.5,
            ..Training::new(Goal::Pattern(vec![
                HeadTarget::Named(NamedTarget::First),
                HeadTarget::Painted(Matrix::from_row_slice(
                    3,
                    3,
                    &[1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                )),
            ]))
        };
        model
    }

    #[test]
    fn a_goal_per_head_with_a_painted_target_round_trips_through_the_link() {
        let state = ShareState {
            model: painted_model(),
            ..ShareState::default()
        };
        let link = encode(&state);
        assert!(
            link.contains("goal=first,painted&paint=1,0,0,1,1,0,0,0,1&opt=sgd&lr=.5"),
            "{link}"
        );
        let back = decode(&link);
        assert_eq!(back.notices, Vec::<String>::new());
        assert_eq!(back.state, state);
        // The default settings write nothing.
        assert_eq!(encode(&ShareState::default()), "v=1");
    }

    #[test]
    fn a_link_keeps_a_goal_only_the_mask_refuses_and_refuses_a_broken_one() {
        // The app reaches this state when the mask is switched on under `next`: its link opens
        // on it, and the stages say why the goal cannot be used.
        let mut model = Model::default();
        model.training.goal = Goal::named(NamedTarget::Next);
        model.config.causal = true;
        let state = ShareState {
            model,
            ..ShareState::default()
        };
        let link = encode(&state);
        let back = decode(&link);
        assert!(back.notices.is_empty(), "{:?}", back.notices);
        assert_eq!(back.state.model.training, state.model.training);
        // A painted row with no weight is broken whatever the mask: the defaults train.
        let empty = decode("v=1&causal=1&goal=painted&paint=1,0,0,0,0,0,0,0,1");
        assert_eq!(empty.state.model.training, Training::default());
        let notice = empty.notices.join(" ");
        assert!(
            notice.contains("do not fit its model") && notice.contains("has no weight"),
            "{notice}"
        );
        let short = decode("v=1&goal=painted&paint=1,2");
        assert_eq!(short.state.model.training, Training::default());
        assert!(
            short.notices[0].contains("painted target has 2 numbers"),
            "{:?}",
            short.notices
        );
        let unknown = decode("v=1&goal=sideways&opt=rmsprop&lr=-1");
        assert_eq!(unknown.notices.len(), 3, "{:?}", unknown.notices);
    }

    #[test]
    fn choosing_a_goal_gets_its_own_history_entry() {
        let before = ShareState::default();
        let after = ShareState {
            model: painted_model(),
            ..ShareState::default()
        };
        let mut mask_only = before.clone();
        mask_only.model.config.causal = true;
        assert_eq!(history_step(&mask_only, &after), HistoryStep::Push);
    }

    #[test]
    fn the_scenario_file_records_a_changed_goal_and_leaves_the_default_out() {
        assert_eq!(Scenario::from_model(&Model::default()).training, None);
        let model = painted_model();
        let scenario = Scenario::from_model(&model);
        assert_eq!(scenario.version, 3);
        let back = Scenario::from_json(&scenario.to_json()).unwrap();
        assert_eq!(back.to_model().unwrap().training, model.training);
    }
}
