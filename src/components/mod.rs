//! The Leptos user interface, one component per file. Components read the one trace the app
//! computes; none of them redoes the maths.

mod attention_lines;
mod context;
mod deferred;
mod download;
mod explain_panel;
mod export;
mod fit;
mod handout;
mod heatmap;
mod help;
mod in_sight;
pub(crate) mod keyboard;
mod matrix_editor;
mod menu;
mod outline;
mod paragraphs;
mod pause;
pub(crate) mod perf;
mod places;
mod player;
pub(crate) mod presenter;
mod preset_picker;
mod quiz;
mod resized;
mod sentence_input;
mod settings;
mod share;
mod stage_rail;
mod stage_view;
mod swipe;
mod target_painter;
mod training_head;
mod training_panel;
mod whatif_lab;
mod window_size;

pub use attention_lines::AttentionLines;
pub use context::{
    backward_context, provide_ui_context, run_context, BackwardContext, Place, RunContext,
    Selection, SelectionContext, UiContext,
};
pub use explain_panel::{provide_selection, ExplainPanel};
pub use export::{import_file, ExportMenu};
pub use handout::Handout;
pub use heatmap::{HeatmapView, PanelData};
pub use help::Help;
pub use matrix_editor::MatrixEditors;
pub use menu::{close_menus, close_menus_on_escape, close_menus_on_press_outside};
pub use outline::{from_trace, model_outline, provide_outlines, settled, trace_outline};
pub use paragraphs::Paragraphs;
pub use places::{PlaceBody, PlacesBar};

pub use fit::{fit_stage, numbers_to_fit};
pub use presenter::{set_fullscreen, step_with_clicker, PresenterBar};
pub use preset_picker::PresetPicker;
pub use quiz::{provide_quiz, quiz_context, QuizCard, QuizContext, QuizToggle};
pub use sentence_input::SentenceInput;
pub use settings::Settings;
pub use share::{
    drop_page_option, full_view_href, point_at_full_view, post_height_to_parent,
    post_step_to_parent, sync_with_url, ShareButtons, Shared,
};
pub use stage_rail::{EditNote, StageControls, StageRail};
pub use stage_view::StageView;
pub use swipe::{open_stages_at_their_top, step_on_swipe};
pub use target_painter::TargetPainter;
pub use training_head::TrainingHead;
pub use training_panel::{goal_text, provide_trainer, TrainingButtons, TrainingPanel};
pub use whatif_lab::WhatIfLab;
