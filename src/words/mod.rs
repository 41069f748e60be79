//! Everything a learner reads: the stages' names, formulas (as text and as MathML),
//! explanations, shapes and notes; the arithmetic behind a cell; the what-if lab's texts; the
//! handout's sentences; the first minutes' guidance and one-line help; preset claims and menu labels; and how numbers and matrices are written.
//! A teacher who wants to reword the app, or translate it, edits this module.
//!
//! The presets' titles and captions are data: they stay with their numbers in
//! `assets/presets/*.json`. Buttons and headings stay in the markup of their components.
//!
//! It reads the maths in [`crate::attention`] and the panel table in [`crate::panels`], and never
//! the plots or the components, which read it.

mod backward;
pub(crate) mod explain;
mod guide;
mod handout;
mod matrices;
mod number;
mod presets;
mod quiz;
mod running;
mod settings;
mod stages;
mod training;
mod whatif;

pub use backward::explain::explain_back;
pub use backward::GRADIENT_DECIMALS;
pub use backward::{
    back_explanation, back_explanation_in, back_formula, back_formula_mathml, back_label,
    back_note, back_note_of_head, back_part_formula_mathml, back_progress, back_shape_text,
    back_title, goal_error_text, goal_line, unreached_text, GoalSource, BACKWARD_GROUP,
};
pub use explain::{explain, Explanation, NO_CELL};
pub use guide::{
    bias_1_note, edit_note, go_to_stage, kv_heads_label, matrix_help, norm_type_name,
    pairing_label, pairing_note, setting_help, Setting, BUILD_A_HEAD, BUILD_A_HEAD_TITLE,
    CHANGED_BY_EDIT, PLACES_LABEL, PLACE_INPUTS, PLACE_LAB, PLACE_SHARE, PLACE_TRAIN,
    QUIZ_HIDES_PLACE, QUIZ_HIDES_PLACE_EMBED, SHARE_PICTURES, SIDE_LABEL, SKIP_TO_STAGE,
    START_HERE,
};
pub use handout::{
    configuration, configuration_warning, handout_goal_error, handout_goal_text,
    handout_stage_note, handout_title, head_heading, matrix_caption, matrix_symbol,
    rounding_remark, sentences_title, ConfigLine, BACKWARD_STAGES, CONFIGURATION, FORMULA,
    FULLY_MASKED, NOTE, ROW_SUM,
};
pub use matrices::{
    block_param_symbol, cell_kind, cell_name, col_label, dim, hidden_unit, key_token, label,
    row_label, rows_are_keys, token, token_label, token_labels,
};
pub use number::{by_hand_either_way, format_value, rounded, subscript};
pub use presets::{
    claim_broken_text, claim_text, other_sentence_text, own_sentence_text, TEACH_A_HEAD,
};
pub use quiz::{
    back_divisor_note, back_divisor_prompt, cell_prompt, cross_mask_prompt, feedback, mask_prompt,
    no_scale_note, not_a_number, nothing_to_ask, picked_text, quoted, refused_goal_line,
    result_line, revealed, seq_len_mistake, sign_prompt, split_prompt, step_prompt, tally_text,
    tie_note, top_score_prompt, top_weight_prompt, top_weight_value_prompt, unreached_stages_line,
    Unasked, DIVISOR_PROMPT, NONE_OF_THEM, ONE_HEAD_PROMPT, PICK_ONE, QUIZ_HEADING, QUIZ_HIDDEN,
    QUIZ_PRESENTER_HINT, QUIZ_TOLERANCE, QUIZ_WHOLE_NUMBER, SIGN_CHOICES, STEP_CHOICES,
};
pub use running::{
    cached_key_label, decode_cache_choices, decode_cached_prompt, decode_size_note,
    decode_size_prompt, tiles_idle_note, tiles_idle_prompt, tiles_result_note, tiles_result_prompt,
    DECODE_CACHED_NOTE,
};
pub use running::{
    decode_formula, decode_formula_mathml, decode_heading, decode_note, decode_nothing,
    decode_shapes, decode_status, explain_tile, run_cell_note, run_panel_title, tiles_formula,
    tiles_formula_mathml, tiles_heading, tiles_note, tiles_shapes, DecodeLine, RunCell, RunPanel,
    TileCell, DECODE_EXPLANATION, DECODE_NAME, DECODE_OUTPUT_STEP, TILES_EXPLANATION, TILES_NAME,
};
pub use settings::{
    cross_word_order_text, head_count_label, scale_mode_help, scale_mode_label,
    temperature_refusal, word_order_after_switch, word_order_text, TemperatureProblem,
};
pub use stages::{
    activation_name, formula_equation, formula_equations, formula_half, gated_part_name, norm_name,
    projection_part_name, shape_text, stage_explanation, stage_explanation_in, stage_formula,
    stage_formula_mathml, stage_name, stage_name_in, stage_note, stage_progress, stage_rail_name,
    stage_rail_name_in, stage_title,
};
pub use training::{
    goal_description, head_target_label, head_target_menu, large_rate_note, loss_text,
    optimizer_label, optimizer_name, paint_cell_label, paint_help, pattern_label, pattern_short,
    positions_note, positions_on_label, positions_width, sgd_note, status_text,
    task_embeddings_note, task_label, task_short, trainable_label, DIRECTION_NOTE, PAINT_MASK_NOTE,
    PER_HEAD_LABEL, PER_HEAD_SHORT, POSITIONS_NOTE, POSITIONS_ON, RUN_LENGTH_NOTE, TRAINING_INTRO,
    WATCHED_HEAD,
};
pub use whatif::{
    comparison_summary, correct_title, denominators_text, gradient_caption, gradient_number,
    gradient_summary, no_mistake_text, no_mistake_text_for, output_titles, shown_title,
    whatif_explanation, whatif_label, MistakePlace, TutorialMistake, SEQ_LEN_IN_CROSS,
    TUTORIAL_MISTAKES, WHATIF_CROSS_NOTE,
};
