//! Reading a share link: splitting the fragment into fields, reading the version, stage, head
//! and highlighted cell, and the notices for every part that could not be used.

use super::fields::{and_list, quote, shown, Fields, Notices, LISTED};
use super::model::read_model;
use super::panels::panel_shape;
use super::percent::percent_decode;
use super::{Decoded, ShareState, FIRST_QUESTION_SET, LINK_VERSION, MAX_FRAGMENT_LEN};
use crate::attention::{Init, Stage, Weights};
use crate::state::Model;
use crate::words::{label, stage_name};

/// Reads a share-link fragment (with or without its leading `#`). Never fails: unusable parts
/// fall back to their defaults, with one notice each.
pub fn decode(fragment: &str) -> Decoded {
    let mut notices = Notices::default();
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    if fragment.len() > MAX_FRAGMENT_LEN {
        notices.add(format!(
            "This link is too long to read ({} KiB; the most is {} KiB): the default example is shown.",
            fragment.len().div_ceil(1024),
            MAX_FRAGMENT_LEN / 1024
        ));
        return Decoded {
            state: ShareState::default(),
            notices: notices.finish(),
        };
    }
    let fields = Fields::split(fragment);
    let state = read_state(&fields, &mut notices);
    Decoded {
        state,
        notices: notices.finish(),
    }
}

fn read_state(fields: &Fields<'_>, notices: &mut Notices) -> ShareState {
    let newer = read_version(fields, notices);
    // A newer version's extra keys are expected; the version notice already covers them.
    if !newer && fields.unknown > 0 {
        let mut names: Vec<String> = fields.first_unknown.iter().map(|k| shown(k)).collect();
        if fields.unknown > LISTED {
            names.push(format!("{} more", fields.unknown - LISTED));
        }
        let (part, it) = if fields.unknown == 1 {
            ("a part", "it was")
        } else {
            ("parts", "they were")
        };
        notices.add(format!(
            "The link has {part} this version does not know ({}): {it} ignored.",
            and_list(&names)
        ));
    }
    if !fields.repeated.is_empty() {
        let names: Vec<String> = fields.repeated.iter().map(|k| format!("“{k}”")).collect();
        notices.add(format!(
            "The link sets {} more than once: the first value was used.",
            and_list(&names)
        ));
    }

    let mut model = read_model(fields, notices);
    if model.trace().is_err() {
        notices.add(
            "The numbers in the link's matrices are too large to compute attention with: \
             all matrices were reset to their defaults."
                .to_string(),
        );
        let d = model.config.d_model;
        model.weights = Weights::new(Init::Default, d);
        model.embedding_overrides.clear();
        model.source_overrides.clear();
        model.block = crate::attention::Block {
            norm: model.block.norm,
            activation: model.block.activation,
            ..crate::attention::Block::new(d, model.block.d_ff())
        };
        if model.trace().is_err() {
            model = Model::default();
        }
    }

    model.training = super::training::read_training(fields, &model, notices);

    let stage = match fields.get("stage") {
        None => Stage::Input,
        Some(raw) => match Stage::from_key(raw) {
            Some(stage) if stage.position(model.order()).is_some() => stage,
            Some(stage @ (Stage::Decode | Stage::Tiles)) => {
                notices.add(format!(
                    "The link shows the stage {}, which is not switched on here: the first \
                     stage, {}, is shown.",
                    stage_name(stage),
                    stage_name(Stage::Input)
                ));
                Stage::Input
            }
            Some(Stage::Rotary) => {
                notices.add(format!(
                    "The link shows the stage {}, but rotary positions are off: the first stage, \
                     {}, is shown.",
                    stage_name(Stage::Rotary),
                    stage_name(Stage::Input)
                ));
                Stage::Input
            }
            Some(stage) => {
                notices.add(format!(
                    "The link shows the stage {}, which belongs to the transformer block, but \
                     the block is off: the first stage, {}, is shown.",
                    stage_name(stage),
                    stage_name(Stage::Input)
                ));
                Stage::Input
            }
            None => {
                notices.add(format!(
                    "The link's stage {} does not exist: the first stage, {}, is shown.",
                    shown(raw),
                    stage_name(Stage::Input)
                ));
                Stage::Input
            }
        },
    };

    let n_heads = model.config.n_heads;
    let head = match fields.get("head") {
        None => 0,
        Some(raw) => match raw.parse::<usize>() {
            Ok(h) if h < n_heads => h,
            Ok(h) => {
                notices.add(format!(
                    "The link shows head {}, but this model has {n_heads} {}: head 1 is shown.",
                    h.saturating_add(1),
                    if n_heads == 1 { "head" } else { "heads" }
                ));
                0
            }
            Err(_) => {
                notices.add(format!(
                    "The link's head {} is not a head number: head 1 is shown.",
                    shown(raw)
                ));
                0
            }
        },
    };

    let seq_len = model.tokens().len();
    let row = fields
        .get("row")
        .and_then(|raw| match raw.parse::<usize>() {
            Ok(r) if r < seq_len => Some(r),
            _ => {
                notices.add(format!(
                    "The link's row {} is not a token of the sentence, 0 to {}: the view's own \
                 row is shown.",
                    shown(raw),
                    seq_len.saturating_sub(1)
                ));
                None
            }
        });

    let cell = fields
        .get("cell")
        .and_then(|raw| read_cell(raw, &model, notices));

    let quiz = read_quiz(fields, notices);

    ShareState {
        model,
        stage,
        head,
        row,
        cell,
        quiz,
    }
}

/// Reads `quiz` and its question set `qn`: `None` when the quiz is off.
fn read_quiz(fields: &Fields<'_>, notices: &mut Notices) -> Option<u64> {
    let on = match fields.get("quiz") {
        None | Some("0") => false,
        Some("1") => true,
        Some(raw) => {
            notices.add(format!(
                "The link's quiz setting {} is neither 0 nor 1: the quiz is off.",
                shown(raw)
            ));
            false
        }
    };
    let set = fields.get("qn").map(|raw| match raw.parse::<u64>() {
        Ok(n) if n >= FIRST_QUESTION_SET => n,
        _ => {
            notices.add(format!(
                "The link's question set {} is not a whole number from 1: set 1 is asked.",
                shown(raw)
            ));
            FIRST_QUESTION_SET
        }
    });
    if !on {
        if set.is_some() {
            notices.add(
                "The link names a question set, but the quiz is off: it was ignored.".to_string(),
            );
        }
        return None;
    }
    Some(set.unwrap_or(FIRST_QUESTION_SET))
}

/// Reads `v`; true when the link comes from a newer version.
fn read_version(fields: &Fields<'_>, notices: &mut Notices) -> bool {
    let Some(raw) = fields.get("v") else {
        return false;
    };
    match raw.parse::<u64>() {
        Ok(v) if v == u64::from(LINK_VERSION) => false,
        Ok(v) if v > u64::from(LINK_VERSION) => {
            notices.add(format!(
                "This link was made by a newer version (v={v}); what could be read was loaded."
            ));
            true
        }
        _ => {
            notices.add(format!(
                "The link's version {} is not one this app knows; what could be read was loaded.",
                shown(raw)
            ));
            false
        }
    }
}

/// Reads `panel.row.col` and checks it against the panels `model` shows.
/// What a page says of a link whose highlighted cell belongs to `panel`, which the stage on
/// show does not draw (in an `embed`, its view of the stage): the cell is not highlighted.
pub fn cell_off_stage(panel: &str, embed: bool) -> String {
    let matrix = matrix_named(panel);
    if embed {
        format!(
            "This embed's address highlights a cell of {matrix}, which its view of this stage \
             does not draw: no cell is highlighted."
        )
    } else {
        format!(
            "The link highlights a cell of {matrix}, which this stage does not draw: no cell is \
             highlighted."
        )
    }
}

/// The matrix a link's `panel` names, by its symbol as the heatmaps title it (A₁, not
/// `weights-h0`); a name the app does not know, quoted as the link wrote it.
fn matrix_named(panel: &str) -> String {
    crate::panels::parse(panel).map_or_else(|| quote(panel), label)
}

fn read_cell(raw: &str, model: &Model, notices: &mut Notices) -> Option<(String, usize, usize)> {
    let mut parts = raw.rsplitn(3, '.');
    let (col, row, panel) = (parts.next(), parts.next(), parts.next());
    let parsed = match (panel.and_then(percent_decode), row, col) {
        (Some(panel), Some(row), Some(col)) => row
            .parse::<usize>()
            .ok()
            .zip(col.parse::<usize>().ok())
            .map(|(row, col)| (panel, row, col)),
        _ => None,
    };
    let Some((panel, row, col)) = parsed else {
        notices.add(format!(
            "The link's highlighted cell {} should read panel.row.column: no cell is highlighted.",
            shown(raw)
        ));
        return None;
    };
    let Some((rows, cols)) = panel_shape(model, &panel) else {
        notices.add(format!(
            "The link highlights a cell of {}, which this model does not show: \
             no cell is highlighted.",
            matrix_named(&panel)
        ));
        return None;
    };
    if row >= rows || col >= cols {
        notices.add(format!(
            "The link highlights row {}, column {} of {}, which has {rows} rows and {cols} \
             columns: no cell is highlighted.",
            row.saturating_add(1),
            col.saturating_add(1),
            matrix_named(&panel)
        ));
        return None;
    }
    Some((panel, row, col))
}
