//! The backward stages' words against the numbers of the backward pass: every note, formula and
//! cell explanation is checked against `Gradients`, with the mask, the scale modes, T, a source,
//! the block in pre-norm, and one and several heads; stages the loss does not reach say so.

// Native tests: the browser target runs its own.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{
    forward, BackMatrix, BackwardPass, Block, Config, Goal, HeadGrad, Init, Inputs, LossKind,
    Matrix, NamedTarget, Norm, Rope, ScaleMode, Source, Stage, Task, Trace, Weights,
};
use attention_lens::words::{
    back_formula, back_formula_mathml, back_label, back_note, back_note_of_head,
    back_part_formula_mathml, back_shape_text, back_title, by_hand_either_way, explain,
    explain_back, format_value, goal_error_text, goal_line, stage_explanation,
    stage_explanation_in, stage_formula, stage_formula_mathml, stage_progress, unreached_text,
    Explanation, GoalSource,
};

/// The switches of one scenario.
#[derive(Debug, Clone, Copy)]
struct Setup {
    n_heads: usize,
    causal: bool,
    scale: ScaleMode,
    temperature: f64,
    cross: bool,
    block: Option<Norm>,
    /// Rotary positions, two key/value heads (with four heads) and a window of 3.
    modern: bool,
}

const BASE: Setup = Setup {
    n_heads: 2,
    causal: true,
    scale: ScaleMode::SqrtHeadDim,
    temperature: 1.0,
    cross: false,
    block: None,
    modern: false,
};

fn setups() -> Vec<Setup> {
    vec![
        BASE,
        Setup {
            n_heads: 1,
            causal: false,
            scale: ScaleMode::SqrtSeqLen,
            temperature: 0.5,
            ..BASE
        },
        Setup {
            n_heads: 4,
            scale: ScaleMode::None,
            temperature: 2.0,
            ..BASE
        },
        Setup {
            causal: false,
            cross: true,
            scale: ScaleMode::SqrtSeqLen,
            ..BASE
        },
        Setup {
            block: Some(Norm::Pre),
            ..BASE
        },
        Setup {
            causal: false,
            cross: true,
            block: Some(Norm::Pre),
            ..BASE
        },
        Setup {
            n_heads: 4,
            modern: true,
            ..BASE
        },
        Setup {
            n_heads: 2,
            modern: true,
            block: Some(Norm::Pre),
            ..BASE
        },
    ]
}

fn trace(s: Setup) -> Trace {
    let config = Config {
        d_model: 8,
        n_heads: s.n_heads,
        causal: s.causal,
        positional_encoding: true,
        scale: s.scale,
        temperature: s.temperature,
        rope: s.modern.then(Rope::default),
        kv_heads: (s.modern && s.n_heads > 1).then_some(s.n_heads / 2),
        window: s.modern.then_some(3),
    };
    let weights = Weights::shaped(Init::Random(5), 8, config.kv_width());
    let mut inputs = Inputs::from_sentence("the cat sat down", config, weights).unwrap();
    if s.cross {
        let mut source = Source::from_sentence("le chat dort", 8).unwrap();
        source.embeddings = source.embeddings.map(|v| v * 0.9);
        inputs.source = Some(source);
    }
    if let Some(norm) = s.block {
        let mut block = Block::new(8, 16);
        block.norm = norm;
        block.ln_1_gamma = Matrix::from_fn(1, 8, |_, c| 0.6 + 0.1 * c as f64);
        inputs.block = Some(block);
    }
    forward(&inputs).unwrap()
}

fn goals() -> [Goal; 3] {
    [
        Goal::named(NamedTarget::Previous),
        Goal::named(NamedTarget::Uniform),
        Goal::Task(Task::CopyPrevious),
    ]
}

fn g3(v: f64) -> String {
    format_value(v, 3)
}

fn f2(v: f64) -> String {
    format_value(v, 2)
}

/// The sign an explanation must put before its result: "≈" when its note says that the rounded
/// numbers written before it give another number, "=" otherwise.
fn sign(e: &Explanation) -> &'static str {
    let redone = e
        .note
        .as_deref()
        .is_some_and(|note| note.contains("Redone with the rounded numbers shown"));
    if redone {
        "≈"
    } else {
        "="
    }
}

/// Every backward matrix this pass holds.
fn present(pass: &BackwardPass, n_heads: usize) -> Vec<BackMatrix> {
    let mut all = vec![
        BackMatrix::TaskTarget,
        BackMatrix::Output,
        BackMatrix::WO,
        BackMatrix::Concat,
        BackMatrix::Q,
        BackMatrix::K,
        BackMatrix::V,
        BackMatrix::WQ,
        BackMatrix::WK,
        BackMatrix::WV,
        BackMatrix::Norm1,
        BackMatrix::X,
        BackMatrix::SourceX,
        BackMatrix::ViaTarget,
        BackMatrix::Embeddings,
        BackMatrix::SourceEmbeddings,
    ];
    for h in 0..n_heads {
        all.push(BackMatrix::TargetPattern(h));
        all.extend(HeadGrad::ALL.map(|g| BackMatrix::Head(h, g)));
    }
    all.retain(|m| m.get(pass).is_some());
    all
}

#[test]
fn every_cell_of_every_gradient_is_explained_with_the_value_the_pass_holds() {
    for s in setups() {
        let t = trace(s);
        for goal in goals() {
            let pass = BackwardPass::new(&t, &goal).unwrap();
            for m in present(&pass, s.n_heads) {
                let values = m.get(&pass).unwrap();
                for i in 0..values.nrows() {
                    for j in 0..values.ncols() {
                        let e = explain_back(&t, &pass, m, i, j)
                            .unwrap_or_else(|| panic!("{s:?} {m:?} ({i}, {j}) not explained"));
                        assert_eq!(e.value, values[(i, j)], "{s:?} {m:?}");
                        let shown = if m.is_gradient() {
                            g3(values[(i, j)])
                        } else {
                            f2(values[(i, j)])
                        };
                        assert!(
                            e.expansion.ends_with(&format!(" {} {shown}", sign(&e))),
                            "{s:?} {m:?}: {}",
                            e.expansion
                        );
                        // A "≈" note names a different number than the one shown.
                        if let Some(note) = &e.note {
                            if let Some(rest) = note.split("≈ ").nth(1) {
                                let redone = rest.split(',').next().unwrap();
                                assert_ne!(redone, shown, "{s:?} {m:?}: {note}");
                            }
                        }
                    }
                }
                assert!(explain_back(&t, &pass, m, values.nrows(), 0).is_none());
            }
        }
    }
}

#[test]
fn the_pattern_gradient_of_m_is_a_minus_a_star_over_heads_rows_and_t_with_the_numbers() {
    for s in setups() {
        let t = trace(s);
        let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
        let (n, heads) = (t.seq_len(), s.n_heads);
        let target = pass.target_pattern(0).unwrap();
        let a = &t.heads[0].weights;
        // Row 2 looks back at key 1 (clamped to the source's keys in cross-attention).
        let (i, j) = (2, 1);
        let e = explain_back(&t, &pass, BackMatrix::Head(0, HeadGrad::Masked), i, j).unwrap();
        let expected = (a[(i, j)] - target[(i, j)]) / ((heads * n) as f64 * s.temperature);
        assert!((e.value - expected).abs() < 1e-15);
        let t_part = if s.temperature != 1.0 {
            format!("·{}", s.temperature)
        } else {
            String::new()
        };
        assert!(
            e.expansion.starts_with(&format!(
                "({} − {}) / ({heads}·{n}{t_part})",
                f2(a[(i, j)]),
                f2(target[(i, j)])
            )),
            "{s:?}: {}",
            e.expansion
        );
        assert_eq!(
            e.formula.contains("·T)"),
            s.temperature != 1.0,
            "{s:?}: {}",
            e.formula
        );
        let formula = back_formula(Stage::BackSoftmax, &t.config, t.wiring(), LossKind::Pattern);
        assert_eq!(formula.contains('T'), s.temperature != 1.0, "{formula}");
    }
}

#[test]
fn the_gradient_of_s_divides_by_the_divisor_in_use_and_masked_cells_say_why_they_are_0() {
    for s in setups() {
        let t = trace(s);
        let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
        let g = &pass.gradients.heads[0];
        let e = explain_back(&t, &pass, BackMatrix::Head(0, HeadGrad::Scores), 1, 0).unwrap();
        let expected_symbol = match (s.scale, s.cross) {
            (ScaleMode::SqrtHeadDim, _) => Some("√d_k"),
            (ScaleMode::SqrtSeqLen, false) => Some("√seq_len"),
            (ScaleMode::SqrtSeqLen, true) => Some("√src_len"),
            (ScaleMode::None, _) => None,
        };
        let formula = back_formula(Stage::BackScale, &t.config, t.wiring(), LossKind::Pattern);
        let title = back_title(Stage::BackScale, &t.config, t.wiring(), LossKind::Pattern);
        match expected_symbol {
            Some(symbol) => {
                let root = match s.scale {
                    ScaleMode::SqrtHeadDim => 8 / s.n_heads,
                    _ => t.n_keys(),
                };
                // A whole root is written exactly; another with four decimals, as it is redone.
                let divisor = (root as f64).sqrt();
                let written = if divisor.fract() == 0.0 {
                    format!("= {} / {divisor}", g3(g.d_masked[(1, 0)]))
                } else {
                    format!(
                        "≈ {} / {}",
                        g3(g.d_masked[(1, 0)]),
                        format_value(divisor, 4)
                    )
                };
                assert_eq!(
                    e.expansion,
                    format!(
                        "{} / √{root} {written} {} {}",
                        g3(g.d_masked[(1, 0)]),
                        sign(&e),
                        g3(g.d_scores[(1, 0)])
                    )
                );
                assert!(e.formula.ends_with(&format!("/ {symbol}")), "{}", e.formula);
                assert!(formula.contains(&format!("/ {symbol}")), "{formula}");
                assert!(title.contains(symbol), "{title}");
                let note = back_note(Stage::BackScale, &t, &pass, GoalSource::Panel).unwrap();
                assert!(
                    // √4 is 2 exactly; other roots are rounded.
                    note.contains(&format!(
                        "{symbol} = √{root} {} {}",
                        if root == 4 { "=" } else { "≈" },
                        f2(t.scale_divisor)
                    )),
                    "{note}"
                );
            }
            None => {
                assert_eq!(g.d_scores, g.d_masked);
                assert!(
                    !formula.contains("∂L/∂Mₕ /") && !formula.contains('√'),
                    "{formula}"
                );
                assert!(back_note(Stage::BackScale, &t, &pass, GoalSource::Panel)
                    .unwrap()
                    .contains("passes on unchanged"));
            }
        }
        assert_eq!(formula.contains("0 where j > i"), s.causal, "{formula}");
        if s.causal {
            let hidden =
                explain_back(&t, &pass, BackMatrix::Head(0, HeadGrad::Scores), 0, 2).unwrap();
            assert_eq!(hidden.value, 0.0);
            assert!(hidden.note.unwrap().contains("causal mask hid it"));
        }
    }
}

#[test]
fn a_weight_gradient_is_the_sum_over_tokens_written_term_by_term_and_the_step_goes_against_it() {
    for s in setups() {
        let t = trace(s);
        for goal in goals() {
            let pass = BackwardPass::new(&t, &goal).unwrap();
            let (r, c) = (3, 5);
            let e = explain_back(&t, &pass, BackMatrix::WQ, r, c).unwrap();
            let input = t.attention_input();
            let d_q = &pass.gradients.d_q;
            let terms: Vec<String> = (0..t.seq_len())
                .map(|i| {
                    let (x, g) = (input[(i, r)], d_q[(i, c)]);
                    let x = if i == 0 || x >= 0.0 {
                        f2(x)
                    } else {
                        format!("({})", f2(x))
                    };
                    let g = if g < 0.0 && g3(g) != "0.000" {
                        format!("({})", g3(g))
                    } else {
                        g3(g)
                    };
                    format!("{x} × {g}")
                })
                .collect();
            assert_eq!(
                e.expansion,
                format!(
                    "{} {} {}",
                    terms.join(" + "),
                    sign(&e),
                    g3(pass.gradients.d_w_q[(r, c)])
                ),
                "{s:?}"
            );
            let reads = if s.block == Some(Norm::Pre) {
                "N₁"
            } else {
                "X"
            };
            assert!(
                e.formula.contains(&format!("Σᵢ {reads}[i, r]")),
                "{}",
                e.formula
            );
            let note = e.note.unwrap();
            assert!(note.contains("against this gradient"), "{note}");
            let v = pass.gradients.d_w_q[(r, c)];
            if v > 0.0 {
                assert!(note.contains("SGD step lowers it"), "{note}");
            } else if v < 0.0 {
                assert!(note.contains("SGD step raises it"), "{note}");
            }
            assert!(!note.contains("direction the weight will move"));
        }
    }
}

#[test]
fn the_backward_explanations_speak_of_rotary_positions_a_pre_norm_block_and_shared_heads_only_where_they_are_on(
) {
    for modern in [false, true] {
        for block in [None, Some(Norm::Post), Some(Norm::Pre)] {
            let setup = Setup {
                n_heads: 4,
                block,
                modern,
                ..BASE
            };
            let t = trace(setup);
            let order = t.wiring().order();
            let scores = stage_explanation_in(Stage::BackScores, order);
            assert_eq!(scores.contains("rotary"), modern, "{setup:?}: {scores}");
            assert_eq!(scores.contains("Q̃ₕK̃ₕᵀ"), modern, "{setup:?}: {scores}");
            assert!(!scores.contains("share"), "{setup:?}: {scores}");
            let input = stage_explanation_in(Stage::BackInput, order);
            assert_eq!(
                input.contains("pre-norm"),
                block == Some(Norm::Pre),
                "{setup:?}: {input}"
            );
            // The note names the heads that share a key/value head, where they do.
            let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
            for (h, shared) in [
                (0, "Query heads 1 and 2 share key/value head 1"),
                (3, "Query heads 3 and 4 share key/value head 2"),
            ] {
                let note =
                    back_note_of_head(Stage::BackScores, &t, &pass, GoalSource::Panel, h).unwrap();
                assert_eq!(note.contains(shared), modern, "{setup:?}, head {h}: {note}");
                assert_eq!(
                    note.contains("share"),
                    modern,
                    "{setup:?}, head {h}: {note}"
                );
            }
        }
    }
}

#[test]
fn stages_the_pattern_loss_does_not_reach_say_so_and_the_task_reaches_them() {
    let t = trace(BASE);
    let pattern = BackwardPass::new(&t, &Goal::named(NamedTarget::First)).unwrap();
    let task = BackwardPass::new(&t, &Goal::Task(Task::Mean)).unwrap();
    for stage in [Stage::BackOutput, Stage::BackWeightedSum] {
        let said = unreached_text(stage, LossKind::Pattern, GoalSource::Panel).unwrap();
        assert!(said.contains("no gradient reaches Y, W_o, C or the values"));
        assert_eq!(
            back_note(stage, &t, &pattern, GoalSource::Panel).unwrap(),
            said
        );
        assert!(back_title(stage, &t.config, t.wiring(), LossKind::Pattern).contains("not reached"));
        // The formula and the shapes say what is 0, not the title again; the weighted sum's
        // formula leaves out ∂L/∂Aₕ, which comes from the loss, not from ∂L/∂Cₕ.
        let formula = back_formula(stage, &t.config, t.wiring(), LossKind::Pattern);
        assert!(formula.ends_with("= 0"), "{formula}");
        assert!(!formula.contains("∂L/∂Aₕ"), "{formula}");
        let mathml = back_formula_mathml(stage, &t.config, t.wiring(), LossKind::Pattern);
        assert!(mathml.ends_with("<mo>=</mo><mn>0</mn>"), "{mathml}");
        let shapes = back_shape_text(stage, &t.outline(), LossKind::Pattern);
        assert!(
            shapes.ends_with("every entry 0") && !shapes.contains("reached"),
            "{shapes}"
        );
        assert!(unreached_text(stage, LossKind::Task, GoalSource::Panel).is_none());
        assert!(!back_note(stage, &t, &task, GoalSource::Panel)
            .unwrap()
            .contains("not reach"));
        // On paper there is no panel to choose a goal in: the same reason, with the way to see
        // the stage in the app.
        let printed = unreached_text(stage, LossKind::Pattern, GoalSource::Paper).unwrap();
        assert!(printed.contains("no gradient reaches Y, W_o, C or the values"));
        assert!(
            !printed.contains("Choose a task as the goal in"),
            "{printed}"
        );
        assert!(printed.contains("in the app"), "{printed}");
        assert!(unreached_text(stage, LossKind::Task, GoalSource::Paper).is_none());
        // Presenting hides the panel: the words say how to reach it.
        let presented = unreached_text(stage, LossKind::Pattern, GoalSource::Presenter).unwrap();
        assert!(
            presented.contains("leave presenter mode (the Leave button or Esc) and choose a task"),
            "{presented}"
        );
    }
    assert!(goal_line("`first`", GoalSource::Presenter).starts_with("Goal: `first`."));
    assert!(goal_error_text("Why.", GoalSource::Presenter).ends_with("Why. Presenter mode hides “Train the weights” and the inputs (sentence, settings, matrices): leave presenter mode (the Leave button or Esc) to make these changes."));
    for m in [
        BackMatrix::WO,
        BackMatrix::WV,
        BackMatrix::Head(0, HeadGrad::V),
    ] {
        assert!(m.get(&pattern).is_none());
        assert!(explain_back(&t, &pattern, m, 0, 0).is_none());
        assert!(m.get(&task).is_some());
    }
    let projection = back_note(Stage::BackProjection, &t, &pattern, GoalSource::Panel).unwrap();
    assert!(projection.contains("∂L/∂W_v is exactly 0"), "{projection}");
    assert!(!back_formula(
        Stage::BackProjection,
        &t.config,
        t.wiring(),
        LossKind::Pattern
    )
    .contains("W_v"));
    assert!(
        back_formula(Stage::BackProjection, &t.config, t.wiring(), LossKind::Task)
            .contains("∂L/∂W_v = Xᵀ·∂L/∂V")
    );
}

#[test]
fn an_embed_sends_the_reader_to_the_full_view_and_the_full_page_to_the_training_panel() {
    let goal = "Previous token: each token attends to the token before it";
    let panel = goal_line(goal, GoalSource::Panel);
    assert_eq!(
        panel,
        format!("Goal (another can be chosen under “Train the weights”): {goal}.")
    );
    // An embed shows no training panel: its goal is the one its link carries or the default
    // (the line claims neither), and the full view is where another is chosen.
    let link = goal_line(goal, GoalSource::Link);
    assert!(!link.contains("link"), "{link}");
    assert!(link.contains("full view"), "{link}");
    assert!(!link.contains("another can be chosen under"), "{link}");
    assert!(link.ends_with(&format!(": {goal}.")), "{link}");

    let error = "the causal mask hides the key after each query";
    assert!(goal_error_text(error, GoalSource::Panel)
        .starts_with("The goal chosen in “Train the weights”"));
    let embed_error = goal_error_text(error, GoalSource::Link);
    assert!(
        embed_error.starts_with("This embed's goal does not fit its settings"),
        "{embed_error}"
    );
    assert!(embed_error.contains(error));
    assert!(embed_error.ends_with("Open the full view (“Open full view ↗”) to change either."));

    let t = trace(BASE);
    let pattern = BackwardPass::new(&t, &Goal::named(NamedTarget::First)).unwrap();
    for stage in [Stage::BackOutput, Stage::BackWeightedSum] {
        let full = unreached_text(stage, LossKind::Pattern, GoalSource::Panel).unwrap();
        assert!(full.ends_with(
            "Choose a task as the goal under “Train the weights” to see this stage at work."
        ));
        let embed = unreached_text(stage, LossKind::Pattern, GoalSource::Link).unwrap();
        assert!(embed.contains("no gradient reaches Y, W_o, C or the values"));
        assert!(embed.contains("open the full view"), "{embed}");
        assert!(
            !embed.contains("Choose a task as the goal under “Train the weights”"),
            "{embed}"
        );
        assert_eq!(
            back_note(stage, &t, &pattern, GoalSource::Link).unwrap(),
            embed
        );
    }
}

#[test]
fn the_loss_notes_carry_the_loss_and_the_largest_gradient_the_pass_holds() {
    let t = trace(BASE);
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    let note = back_note(Stage::BackLoss, &t, &pass, GoalSource::Panel).unwrap();
    assert!(
        note.contains(&format!("L ≈ {}", g3(pass.gradients.loss))),
        "{note}"
    );
    assert!(note.contains("n_heads·n = 2·4 = 8 rows"), "{note}");
    let d_a = &pass.gradients.heads[0].d_weights;
    let largest = d_a
        .iter()
        .fold(0.0f64, |m, v| if v.abs() > m.abs() { *v } else { m });
    assert!(note.contains(&format!("≈ {}", g3(largest))), "{note}");

    let task = BackwardPass::new(&t, &Goal::Task(Task::CopyPrevious)).unwrap();
    let note = back_note(Stage::BackLoss, &t, &task, GoalSource::Panel).unwrap();
    assert!(
        note.contains(&format!("L ≈ {}", g3(task.gradients.loss))),
        "{note}"
    );
    assert!(note.contains("n·d_model = 4·8 = 32"), "{note}");
    let e = explain_back(&t, &task, BackMatrix::Output, 1, 2).unwrap();
    let (target, _) = task.task_target().unwrap();
    assert!(e
        .expansion
        .starts_with(&format!("2 × ({} − ", f2(t.output[(1, 2)]))));
    assert!(e.expansion.contains(&f2(target[(1, 2)]).replace('−', "")));
    assert!(e.expansion.contains("/ (4·8)"), "{}", e.expansion);
}

#[test]
fn the_pattern_gradient_of_a_names_the_target_and_the_weight() {
    let t = trace(BASE);
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    let a = t.heads[1].weights[(3, 2)];
    let e = explain_back(&t, &pass, BackMatrix::Head(1, HeadGrad::Weights), 3, 2).unwrap();
    assert_eq!(
        e.expansion,
        format!(
            "−1.00 / (2·4 × {}) {} {}",
            f2(a),
            sign(&e),
            g3(-1.0 / (8.0 * a))
        )
    );
    let zero = explain_back(&t, &pass, BackMatrix::Head(1, HeadGrad::Weights), 3, 0).unwrap();
    assert_eq!(zero.value, 0.0);
    assert!(zero
        .note
        .unwrap()
        .contains("target puts no weight on this key"));
    assert_eq!(e.title, "Gradient ∂L/∂A₂[down, sat]");
}

/// A number as the explanations write it: `−0.42` or `(−0.42)`.
fn parse(text: &str) -> f64 {
    text.trim_start_matches('(')
        .trim_end_matches(')')
        .replace('−', "-")
        .parse()
        .unwrap_or_else(|_| panic!("{text:?} is not a number"))
}

#[test]
fn every_task_softmax_line_says_approximately_exactly_when_its_written_numbers_miss() {
    let mut missed = 0;
    for s in setups() {
        let t = trace(s);
        let pass = BackwardPass::new(&t, &Goal::Task(Task::CopyPrevious)).unwrap();
        for h in 0..s.n_heads {
            let m = BackMatrix::Head(h, HeadGrad::Masked);
            let values = m.get(&pass).unwrap();
            for i in 0..values.nrows() {
                for j in 0..values.ncols() {
                    let e = explain_back(&t, &pass, m, i, j).unwrap();
                    // a × (g − r) [/ T] = v, redone from the numbers as written.
                    let Some((a, rest)) = e.expansion.split_once(" × (") else {
                        continue;
                    };
                    let (g, rest) = rest.split_once(" − ").unwrap();
                    let (r, rest) = rest.split_once(')').unwrap();
                    let divisor = rest
                        .strip_prefix(" / ")
                        .map_or(1.0, |d| parse(d.split(' ').next().unwrap()));
                    let redone = parse(a) * (parse(g) - parse(r)) / divisor;
                    let either = by_hand_either_way(redone).map(g3);
                    let hits = either.contains(&e.value_text);
                    assert_eq!(
                        sign(&e),
                        if hits { "=" } else { "≈" },
                        "{s:?}: {}",
                        e.expansion
                    );
                    if !hits {
                        missed += 1;
                        let note = e.note.as_deref().unwrap();
                        // Exact where it ends within the digits shown, or one more on a tie,
                        // which a hand may round either way.
                        let exact = ((redone * 1000.0).round() - redone * 1000.0).abs() < 1e-6;
                        let by_hand = if exact {
                            g3(redone)
                        } else if either[0] != either[1] {
                            format_value(redone, 4)
                        } else {
                            format!("≈ {}", either[0])
                        };
                        assert!(
                            note.contains(&format!("comes to {by_hand}, but")),
                            "{s:?}: {} | {note}",
                            e.expansion
                        );
                    }
                }
            }
        }
    }
    assert!(missed > 0, "no task softmax line missed");
}

#[test]
fn a_heads_slice_of_a_gradient_names_its_columns_as_the_cells_are_labelled() {
    let t = trace(BASE);
    let pass = BackwardPass::new(&t, &Goal::Task(Task::CopyPrevious)).unwrap();
    let e = explain_back(&t, &pass, BackMatrix::Head(1, HeadGrad::Context), 0, 0).unwrap();
    assert_eq!(
        e.formula,
        "∂L/∂C₂[i, c] = ∂L/∂C[i, c], for c in head 2's columns d5–d8"
    );
    assert!(e.title.ends_with(", d5]"), "{}", e.title);
    let e = explain_back(&t, &pass, BackMatrix::Q, 0, 4).unwrap();
    assert_eq!(
        e.formula,
        "∂L/∂Q[i, c] = ∂L/∂Q₂[i, c], for c in head 2's columns d5–d8"
    );
}

#[test]
fn the_task_softmax_cell_writes_out_its_row_sum() {
    let t = trace(Setup {
        temperature: 0.5,
        ..BASE
    });
    let pass = BackwardPass::new(&t, &Goal::Task(Task::CopyFirst)).unwrap();
    let (a, g) = (&t.heads[0].weights, &pass.gradients.heads[0].d_weights);
    let rowsum: f64 = (0..4).map(|k| a[(2, k)] * g[(2, k)]).sum();
    let e = explain_back(&t, &pass, BackMatrix::Head(0, HeadGrad::Masked), 2, 1).unwrap();
    assert!(
        e.expansion
            .starts_with(&format!("{} × ({} − ", f2(a[(2, 1)]), g3(g[(2, 1)]))),
        "{}",
        e.expansion
    );
    assert!(
        e.expansion.contains(&format!(") / 0.5 {} ", sign(&e))),
        "{}",
        e.expansion
    );
    let note = e.note.unwrap();
    assert!(
        note.contains(&format!("= {}.", g3(rowsum)))
            || note.contains(&format!("≈ {}.", g3(rowsum))),
        "{note}"
    );
    assert!((e.value - a[(2, 1)] * (g[(2, 1)] - rowsum) / 0.5).abs() < 1e-14);
}

#[test]
fn in_pre_norm_the_input_gradient_goes_through_ln1_and_says_so() {
    let t = trace(Setup {
        block: Some(Norm::Pre),
        ..BASE
    });
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    assert!(pass.gradients.d_norm_1.is_some());
    let e = explain_back(&t, &pass, BackMatrix::X, 1, 3).unwrap();
    assert!(e.formula.contains("ĝ = ∂L/∂N₁[i, :] ⊙ γ₁"), "{}", e.formula);
    assert_eq!(e.value, pass.gradients.d_x[(1, 3)]);
    let note = back_note(Stage::BackInput, &t, &pass, GoalSource::Panel).unwrap();
    assert!(
        note.contains("Pre-norm: attention read N₁ = LN₁(X)"),
        "{note}"
    );
    assert!(
        back_title(Stage::BackInput, &t.config, t.wiring(), LossKind::Pattern)
            .contains("through LN₁")
    );
    // Post-norm: N₁ comes after attention, so the input gradient is the projections' sum.
    let post = trace(Setup {
        block: Some(Norm::Post),
        ..BASE
    });
    let pass = BackwardPass::new(&post, &Goal::named(NamedTarget::Previous)).unwrap();
    let e = explain_back(&post, &pass, BackMatrix::X, 1, 3).unwrap();
    assert!(e
        .formula
        .starts_with("∂L/∂X[i, r] = Σ_c ∂L/∂Q[i, c]·W_q[r, c] + Σ_c ∂L/∂K[i, c]·W_k[r, c]"));
    assert!(
        !back_note(Stage::BackInput, &post, &pass, GoalSource::Panel)
            .unwrap()
            .contains("Pre-norm")
    );
}

#[test]
fn with_a_source_the_keys_gradient_lands_on_the_source_and_the_task_target_path_too() {
    let s = Setup {
        causal: false,
        cross: true,
        ..BASE
    };
    let t = trace(s);
    let pass = BackwardPass::new(&t, &Goal::Task(Task::Mean)).unwrap();
    let g = &pass.gradients;
    let e = explain_back(&t, &pass, BackMatrix::SourceEmbeddings, 2, 1).unwrap();
    let via = g.d_embeddings_via_target.as_ref().unwrap()[(2, 1)];
    assert_eq!(
        e.expansion,
        format!(
            "{} + {} = {}",
            g3(g.d_source_x.as_ref().unwrap()[(2, 1)]),
            if via < 0.0 {
                format!("({})", g3(via))
            } else {
                g3(via)
            },
            g3(g.d_source_embeddings.as_ref().unwrap()[(2, 1)])
        )
    );
    // The sentence's own embeddings get attention's path only: the target is the source's.
    let own = explain_back(&t, &pass, BackMatrix::Embeddings, 0, 0).unwrap();
    assert!(!own.formula.contains("Πᵀ"), "{}", own.formula);
    assert!(e.formula.ends_with(" + (Πᵀ·∂L/∂Y*)[i, c]"), "{}", e.formula);
    let x = explain_back(&t, &pass, BackMatrix::X, 0, 0).unwrap();
    assert_eq!(x.formula, "∂L/∂X[i, r] = Σ_c ∂L/∂Q[i, c]·W_q[r, c]");
    let note = back_note(Stage::BackInput, &t, &pass, GoalSource::Panel).unwrap();
    assert!(note.contains("built from E_src"), "{note}");
    assert!(note.contains("why E_src cannot learn a task"), "{note}");
    assert!(!note.contains("the embeddings cannot learn"), "{note}");
    assert!(back_title(Stage::BackInput, &t.config, t.wiring(), LossKind::Task).contains("E_src"));
}

#[test]
fn a_target_the_mask_hides_gives_no_backward_pass_and_no_panic() {
    let t = trace(BASE);
    let err = BackwardPass::new(&t, &Goal::named(NamedTarget::Next)).unwrap_err();
    assert!(err.to_string().contains("next"), "{err}");
}

#[test]
fn the_backward_stages_follow_the_forward_ones_and_count_among_themselves() {
    for block in [None, Some(Norm::Post), Some(Norm::Pre)] {
        let last = *Stage::sequence(block).last().unwrap();
        assert_eq!(last.next_in(block), Some(Stage::BackLoss));
        assert_eq!(Stage::BackLoss.prev_in(block), Some(last));
    }
    assert_eq!(stage_progress(Stage::BackSoftmax, None), "Backward 4 of 8");
    assert_eq!(stage_progress(Stage::Softmax, None), "Stage 7 of 10");
    for stage in Stage::BACKWARD {
        assert!(!stage_explanation(stage).is_empty());
        assert!(!stage_explanation(stage).contains("direction the weight will move"));
    }
}

#[test]
fn a_link_to_a_backward_stage_and_a_gradient_cell_reads_back_without_a_notice() {
    use attention_lens::formats::permalink::{decode, encode};
    let fragment = "v=1&causal=1&stage=back-scale&head=1&cell=d_scores-h1.2.1";
    let decoded = decode(fragment);
    assert!(decoded.notices.is_empty(), "{:?}", decoded.notices);
    assert_eq!(decoded.state.stage, Stage::BackScale);
    assert_eq!(decoded.state.cell, Some(("d_scores-h1".to_string(), 2, 1)));
    assert_eq!(encode(&decoded.state), fragment);
    // A cell beyond the gradient's shape is dropped with a notice, as for a forward panel.
    let decoded = decode("v=1&stage=back-projection&cell=d_w_q.9.0");
    assert_eq!(decoded.notices.len(), 1, "{:?}", decoded.notices);
    assert_eq!(decoded.state.cell, None);
}

#[test]
fn the_projection_note_says_an_sgd_step_goes_against_the_largest_gradient() {
    let t = trace(BASE);
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    let g = &pass.gradients.d_w_q;
    let (mut r, mut c) = (0, 0);
    for i in 0..8 {
        for j in 0..8 {
            if g[(i, j)].abs() > g[(r, c)].abs() {
                (r, c) = (i, j);
            }
        }
    }
    let v = g[(r, c)];
    let times = if v < 0.0 {
        format!("({})", g3(v))
    } else {
        g3(v)
    };
    let note = back_note(Stage::BackProjection, &t, &pass, GoalSource::Panel).unwrap();
    assert!(
        note.contains(&format!(
            "∂L/∂W_q[d{}, d{}] ≈ {}. If W_q is ticked to learn, a plain SGD step with learning rate η would change W_q[d{}, d{}] by −η × {times}, against the gradient",
            r + 1,
            c + 1,
            g3(v),
            r + 1,
            c + 1
        )),
        "{note}"
    );
}

#[test]
fn the_task_targets_mixing_matrix_is_pi_so_p_stays_the_positions() {
    // Positional encoding is on: X = E + P, and the task's target Y* = Π·E.
    let t = trace(BASE);
    let pass = BackwardPass::new(&t, &Goal::Task(Task::CopyPrevious)).unwrap();
    let formula = back_formula(Stage::BackInput, &t.config, t.wiring(), LossKind::Task);
    assert!(formula.ends_with("∂L/∂E = ∂L/∂X + Πᵀ·∂L/∂Y*"), "{formula}");
    let mathml = back_formula_mathml(Stage::BackInput, &t.config, t.wiring(), LossKind::Task);
    assert!(
        mathml.contains("<msup><mi mathvariant=\"normal\">Π</mi><mi>T</mi></msup>"),
        "{mathml}"
    );
    assert!(!mathml.contains("<mi>P</mi>"), "{mathml}");
    assert_eq!(back_label(BackMatrix::ViaTarget), "Πᵀ·∂L/∂Y*");
    let note = back_note(Stage::BackInput, &t, &pass, GoalSource::Panel).unwrap();
    assert!(
        note.contains("The positions P are added constants"),
        "{note}"
    );
    assert!(note.contains("Y* = Π·E"), "{note}");
    assert!(!note.contains("Pᵀ"), "{note}");
    let target = explain_back(&t, &pass, BackMatrix::TaskTarget, 2, 1).unwrap();
    assert_eq!(target.formula, "Y*[i, c] = Σⱼ Π[i, j] · E[j, c]");
    let target_note = target.note.unwrap_or_default();
    assert!(
        target_note.contains("Π mixes the rows of E"),
        "{target_note}"
    );
    let via = explain_back(&t, &pass, BackMatrix::ViaTarget, 1, 0).unwrap();
    assert!(
        via.formula
            .starts_with("(Πᵀ·∂L/∂Y*)[j, c] = Σᵢ Π[i, j] · ∂L/∂Y*[i, c]"),
        "{}",
        via.formula
    );
    let e = explain_back(&t, &pass, BackMatrix::Embeddings, 1, 0).unwrap();
    assert!(e.formula.ends_with(" + (Πᵀ·∂L/∂Y*)[i, c]"), "{}", e.formula);
    let e_note = e.note.unwrap_or_default();
    assert!(
        e_note.contains("X = E + P and the positions are constants"),
        "{e_note}"
    );
}

#[test]
fn at_a_very_low_temperature_no_explanation_divides_by_a_rounded_zero_or_prints_endless_digits() {
    // T = 0.05 drives some weights to about 10⁻⁸⁰: the pattern loss's ∂L/∂A is then huge, and
    // a weight shown as 0.00 cannot be divided by.
    let t = trace(Setup {
        temperature: 0.05,
        causal: false,
        ..BASE
    });
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    let mut huge = 0;
    for m in present(&pass, BASE.n_heads) {
        let values = m.get(&pass).unwrap();
        for i in 0..values.nrows() {
            for j in 0..values.ncols() {
                let e = explain_back(&t, &pass, m, i, j).unwrap();
                let text = format!("{} {}", e.expansion, e.note.clone().unwrap_or_default());
                assert!(!text.contains("∞"), "{m:?} ({i}, {j}): {text}");
                let longest = text
                    .split(|c: char| !c.is_ascii_digit())
                    .map(str::len)
                    .max()
                    .unwrap_or(0);
                assert!(longest <= 12, "{m:?} ({i}, {j}): {text}");
                if values[(i, j)].abs() >= 1e6 {
                    huge += 1;
                    assert!(e.value_text.contains(" × 10"), "{}", e.value_text);
                }
            }
        }
    }
    assert!(huge > 0, "the setup makes some gradient huge");
}

#[test]
fn presenter_mode_gives_each_gradient_shown_alone_its_own_equations() {
    // Presenting one gradient at a time, the header shows that gradient's equations: together
    // the parts make the stage's formula, each equation once, and each names its gradient.
    // The setups include a source with a pre-norm block: five gradients, ∂L/∂X with its ĝ.
    for setup in setups() {
        let t = trace(setup);
        let (c, w) = (&t.config, t.wiring());
        for kind in [LossKind::Task, LossKind::Pattern] {
            for stage in [Stage::BackOutput, Stage::BackProjection, Stage::BackInput] {
                let whole = back_formula_mathml(stage, c, w, kind);
                let mut results = BackMatrix::shown_alone(stage, w);
                // The pattern loss reaches neither of the output's gradients nor W_v.
                if kind == LossKind::Pattern {
                    results.retain(|m| {
                        !matches!(m, BackMatrix::WO | BackMatrix::Concat | BackMatrix::WV)
                    });
                }
                if results.is_empty() {
                    continue;
                }
                let parts: Vec<String> = results
                    .iter()
                    .map(|&m| {
                        back_part_formula_mathml(stage, c, w, kind, m)
                            .unwrap_or_else(|| panic!("{setup:?} {kind:?} {stage:?}: {m:?}"))
                    })
                    .collect();
                let sep = "<mo>,</mo><mspace width=\"1em\"/>";
                let equations = |f: &str| {
                    let mut e: Vec<String> = f.split(sep).map(str::to_string).collect();
                    e.sort();
                    e
                };
                assert_eq!(
                    equations(&parts.join(sep)),
                    equations(&whole),
                    "{setup:?} {kind:?} {stage:?}"
                );
                for (m, part) in results.iter().zip(&parts) {
                    let name = back_label(*m).replace("∂L/∂", "");
                    let base = name.trim_end_matches('ₕ').split(['_', '₁']).next().unwrap();
                    assert!(
                        part.contains(&format!("<mo>∂</mo><mi>{base}</mi>"))
                            || part.contains(&format!("<mo>∂</mo><msub><mi>{base}</mi>")),
                        "{setup:?} {stage:?} {m:?}: {part}"
                    );
                }
            }
        }
    }
}

/// The trace of `sentence` with the mask as given and `source` for cross-attention.
fn small_trace(sentence: &str, causal: bool, source: Option<&str>) -> Trace {
    let config = Config {
        d_model: 4,
        n_heads: 2,
        causal,
        positional_encoding: true,
        scale: ScaleMode::SqrtHeadDim,
        temperature: 1.0,
        ..Config::default()
    };
    let mut inputs =
        Inputs::from_sentence(sentence, config, Weights::new(Init::Random(3), 4)).unwrap();
    inputs.source = source.map(|s| Source::from_sentence(s, 4).unwrap());
    forward(&inputs).unwrap()
}

#[test]
fn the_loss_note_says_where_l_reaches_0_and_that_only_the_gaps_between_scores_matter() {
    let goal = Goal::named(NamedTarget::Previous);
    let note = |t: &Trace| {
        let pass = BackwardPass::new(t, &goal.fitted(2, t.seq_len(), t.n_keys())).unwrap();
        (
            back_note(Stage::BackLoss, t, &pass, GoalSource::Panel).unwrap(),
            pass.gradients.loss,
        )
    };
    // Under the mask the first row sees one key: its weight is exactly 1, its term 0.
    let (masked, _) = note(&small_trace("the cat sat", true, None));
    assert!(!masked.contains("never reaches"), "{masked}");
    assert!(masked.contains("gaps between its scores"), "{masked}");
    assert!(
        masked.contains("the first row sees only its own key under the causal mask"),
        "{masked}"
    );
    // Without the mask no row has a single key, and L stays above 0.
    let (open, loss) = note(&small_trace("the cat sat", false, None));
    assert!(loss > 0.0);
    assert!(
        open.contains("No row here has a single visible key"),
        "{open}"
    );
    assert!(!open.contains("first row"), "{open}");
    // One token, or a one-token source: every row has one key, and L is 0 whatever the weights.
    for (t, why) in [
        (
            small_trace("hello", true, None),
            "the sentence has one token",
        ),
        (
            small_trace("hello", false, None),
            "the sentence has one token",
        ),
        (
            small_trace("the cat sat", false, Some("chat")),
            "the source has one token",
        ),
    ] {
        let (text, loss) = note(&t);
        assert_eq!(loss, 0.0);
        assert!(text.contains("L = 0 for any weights"), "{text}");
        assert!(text.contains(why), "{text}");
        assert!(!text.contains("stays above 0"), "{text}");
    }
}

#[test]
fn the_loss_note_says_the_gradient_of_a_wanted_weight_is_negative_and_grows_in_size() {
    let t = trace(BASE);
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    let note = back_note(Stage::BackLoss, &t, &pass, GoalSource::Panel).unwrap();
    assert!(!note.contains("the larger the gradient"), "{note}");
    assert!(
        note.contains("Where the target puts weight it is negative")
            && note.contains("the larger it grows in size: the more negative it is"),
        "{note}"
    );
    // Every cell the target wants is negative, and a smaller weight gives a larger size.
    let (d_a, a) = (&pass.gradients.heads[0].d_weights, &t.heads[0].weights);
    let wanted: Vec<(f64, f64)> = (0..t.seq_len())
        .flat_map(|i| (0..t.n_keys()).map(move |j| (i, j)))
        .filter(|&(i, j)| d_a[(i, j)] != 0.0)
        .map(|(i, j)| (a[(i, j)], d_a[(i, j)]))
        .collect();
    assert!(wanted.iter().all(|&(_, g)| g < 0.0));
    for &(a1, g1) in &wanted {
        for &(a2, g2) in &wanted {
            if a1 < a2 {
                assert!(g1.abs() > g2.abs());
            }
        }
    }
}

/// Whether every σ in `text` is squared: `σ²`, `σᵢ²`, or in MathML `<msup><mi>σ</mi>`.
fn sigma_only_squared(text: &str) -> bool {
    let plain = text.replace("<msup><mi>σ</mi><mn>2</mn></msup>", "");
    let chars: Vec<char> = plain.chars().collect();
    chars.iter().enumerate().all(|(n, &c)| {
        c != 'σ'
            || chars.get(n + 1) == Some(&'²')
            || (chars.get(n + 1) == Some(&'ᵢ') && chars.get(n + 2) == Some(&'²'))
    })
}

#[test]
fn sigma_is_the_square_root_of_the_variance_forward_and_backward() {
    // The forward pass writes √(σ² + ε) with σ² the variance; the backward keeps that meaning.
    let setup = Setup {
        block: Some(Norm::Pre),
        ..BASE
    };
    let t = trace(setup);
    let (c, w) = (&t.config, t.wiring());
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    let mut texts = vec![
        back_formula(Stage::BackInput, c, w, LossKind::Pattern),
        back_formula_mathml(Stage::BackInput, c, w, LossKind::Pattern),
        back_note(Stage::BackInput, &t, &pass, GoalSource::Panel).unwrap(),
        stage_formula(Stage::Norm1, c, w),
        stage_formula_mathml(Stage::Norm1, c, w),
        stage_explanation(Stage::Norm1).to_string(),
    ];
    let norm_1 =
        attention_lens::attention::MatrixId::Block(attention_lens::attention::BlockMatrix::Norm1);
    for e in [
        explain_back(&t, &pass, BackMatrix::X, 1, 3).unwrap(),
        explain(&t, norm_1, 1, 3).unwrap(),
    ] {
        texts.extend([e.formula, e.expansion, e.note.unwrap_or_default()]);
    }
    for text in &texts {
        assert!(sigma_only_squared(text), "{text}");
    }
    let e = explain_back(&t, &pass, BackMatrix::X, 1, 3).unwrap();
    assert!(e.formula.contains(") / √(σ² + ε),"), "{}", e.formula);
    let note = e.note.unwrap();
    assert!(note.contains("n̂[c] = (X − μ)/√(σ² + ε)"), "{note}");
    assert!(note.contains("σ² is its variance, ε = 0.00001"), "{note}");
}

#[test]
fn an_exact_product_of_the_settings_is_written_exactly_and_a_rounded_one_with_approx() {
    // n_heads·n·T = 2·3·0.3 is 1.8, though its float is 1.7999999999999998.
    let note = |temperature: f64| {
        let config = Config {
            d_model: 4,
            n_heads: 2,
            causal: false,
            positional_encoding: true,
            scale: ScaleMode::SqrtHeadDim,
            temperature,
            ..Config::default()
        };
        let inputs =
            Inputs::from_sentence("the cat sat", config, Weights::new(Init::Random(3), 4)).unwrap();
        let t = forward(&inputs).unwrap();
        let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
        back_note(Stage::BackSoftmax, &t, &pass, GoalSource::Panel).unwrap()
    };
    let exact = note(0.3);
    assert!(exact.contains("(n_heads·n·T = 2·3·0.3)"), "{exact}");
    assert!(exact.contains("divided by 1.8:"), "{exact}");
    assert!(!exact.contains("≈ 1.80"), "{exact}");
    assert!(note(0.5).contains("divided by 3:"));
    assert!(note(0.125).contains("divided by 0.75:"));
    // 2·3·0.3333 = 1.9998 ends within four places; a longer T is rounded, and says so.
    assert!(note(0.3333).contains("divided by 1.9998:"));
    // 2·3·0.1234567 = 0.7407402: three significant digits, not two decimals.
    assert!(note(0.123_456_7).contains("divided by ≈ 0.741:"));
}

#[test]
fn a_rounded_product_of_the_settings_keeps_three_significant_digits() {
    // n_heads·n·T = 2·3·0.01234 = 0.07404: "≈ 0.07" would be 5% off.
    let config = Config {
        d_model: 4,
        n_heads: 2,
        causal: false,
        positional_encoding: true,
        scale: ScaleMode::SqrtHeadDim,
        temperature: 0.01234,
        ..Config::default()
    };
    let inputs =
        Inputs::from_sentence("the cat sat", config, Weights::new(Init::Random(3), 4)).unwrap();
    let t = forward(&inputs).unwrap();
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    let note = back_note(Stage::BackSoftmax, &t, &pass, GoalSource::Panel).unwrap();
    assert!(note.contains("(n_heads·n·T = 2·3·0.01234)"), "{note}");
    assert!(note.contains("divided by ≈ 0.0740:"), "{note}");
}

#[test]
fn a_huge_gradient_in_a_note_is_written_as_the_heatmap_writes_it_with_approx() {
    // T = 0.01 on the opening scenario: the weight of a key the target wants all but
    // underflows, and ∂L/∂A = −A*/(n_heads·n·A) grows to about −1.08 × 10³².
    let mut model = attention_lens::state::Model::default();
    model.config.temperature = 0.01;
    let t = model.trace().unwrap();
    let goal = model.fitted_training().goal;
    let pass = BackwardPass::new(&t, &goal).unwrap();
    let d_a = &pass.gradients.heads[0].d_weights;
    let largest = d_a
        .iter()
        .fold(0.0f64, |m, v| if v.abs() > m.abs() { *v } else { m });
    assert!(
        largest.abs() >= 1e6,
        "the setup makes ∂L/∂A₁ huge: {largest}"
    );
    let shown = "−1.08 × 10³²";
    assert_eq!(format!("{largest:.2e}"), "-1.08e32");
    let note = back_note(Stage::BackLoss, &t, &pass, GoalSource::Panel).unwrap();
    assert!(note.contains(&format!("≈ {shown}.")), "{note}");
    let longest = note
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    assert!(longest <= 12, "{note}");
}

#[test]
fn a_row_with_a_single_visible_key_says_its_gradient_of_a_goes_no_further() {
    // Under the causal mask the first row sees only itself: A = A* = 1 there, so
    // ∂L/∂A₁[the, the] = −1/(2·4) = −0.125 while ∂L/∂M₁[the, the] = 1·(D − D)/T = 0.
    let t = trace(BASE);
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    let head = &pass.gradients.heads[0];
    assert_eq!(head.d_weights[(0, 0)], -0.125);
    assert_eq!(head.d_masked[(0, 0)], 0.0);
    let note = back_note(Stage::BackLoss, &t, &pass, GoalSource::Panel).unwrap();
    assert!(
        note.contains(
            "In a row with a single visible key the weight is held at 1 whatever the scores, so \
             ∂L/∂A₁[the, the] = −1/(n_heads·n) = −1/8 = −0.125 goes no further: the softmax's \
             backward turns it into 0."
        ),
        "{note}"
    );
    // A one-token source: every row sees one key and L = 0, yet ∂L/∂A is not 0.
    let config = Config {
        d_model: 4,
        n_heads: 2,
        causal: false,
        positional_encoding: true,
        scale: ScaleMode::SqrtHeadDim,
        temperature: 1.0,
        ..Config::default()
    };
    let mut inputs =
        Inputs::from_sentence("the cat sat", config, Weights::new(Init::Random(3), 4)).unwrap();
    inputs.source = Some(Source::from_sentence("chat", 4).unwrap());
    let t = forward(&inputs).unwrap();
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::First)).unwrap();
    let note = back_note(Stage::BackLoss, &t, &pass, GoalSource::Panel).unwrap();
    assert!(note.contains("L = 0 for any weights"), "{note}");
    assert!(
        note.contains(
            "Every row here has a single visible key, whose weight is held at 1 whatever the \
             scores, so ∂L/∂Aₕ there, −1/(n_heads·n) = −1/6 ≈ −0.167 (e.g. ∂L/∂A₁[the, chat]), \
             goes no further: the softmax's backward turns it into 0."
        ),
        "{note}"
    );
    // Without the mask and with two keys or more, no row is held.
    let t = trace(Setup {
        causal: false,
        ..BASE
    });
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    let note = back_note(Stage::BackLoss, &t, &pass, GoalSource::Panel).unwrap();
    assert!(!note.contains("goes no further"), "{note}");
}

#[test]
fn with_a_source_the_seq_len_mistake_note_says_the_source_sets_the_divisor() {
    let s = Setup {
        causal: false,
        cross: true,
        scale: ScaleMode::SqrtSeqLen,
        ..BASE
    };
    let t = trace(s);
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    let note = back_note(Stage::BackScale, &t, &pass, GoalSource::Panel).unwrap();
    assert!(note.contains("divided by √src_len = √3"), "{note}");
    assert!(
        note.contains(
            "not with the number of keys; ÷√src_len also changes every score, and so every \
             gradient, when a word is added to the source (a word added to your sentence leaves \
             it alone)."
        ),
        "{note}"
    );
    assert!(!note.contains("÷√seq_len"), "{note}");
    let own = trace(Setup { cross: false, ..s });
    let pass = BackwardPass::new(&own, &Goal::named(NamedTarget::Previous)).unwrap();
    let note = back_note(Stage::BackScale, &own, &pass, GoalSource::Panel).unwrap();
    assert!(
        note.contains(
            "÷√seq_len also changes every score, and so every gradient, when a word is added."
        ),
        "{note}"
    );
}

#[test]
fn the_pre_norm_cell_writes_n_hat_and_the_root_with_enough_places_and_redoes_the_sum_with_them() {
    let t = trace(Setup {
        block: Some(Norm::Pre),
        ..BASE
    });
    let pass = BackwardPass::new(&t, &Goal::named(NamedTarget::Previous)).unwrap();
    let g = &pass.gradients;
    let x = &t.x;
    let gamma = &t.block.as_ref().unwrap().params.ln_1_gamma;
    let d_model = x.ncols();
    for row in 0..x.nrows() {
        let mean = x.row(row).iter().sum::<f64>() / d_model as f64;
        let var = x.row(row).iter().map(|v| (v - mean).powi(2)).sum::<f64>() / d_model as f64;
        let sd = (var + 0.00001).sqrt();
        let d_n = g.d_norm_1.as_ref().unwrap();
        let g_hat: Vec<f64> = (0..d_model)
            .map(|c| d_n[(row, c)] * gamma[(0, c)])
            .collect();
        let n_hat: Vec<f64> = (0..d_model).map(|c| (x[(row, c)] - mean) / sd).collect();
        let mean_g = g_hat.iter().sum::<f64>() / d_model as f64;
        let mean_gn = g_hat.iter().zip(&n_hat).map(|(a, b)| a * b).sum::<f64>() / d_model as f64;
        for col in 0..d_model {
            let e = explain_back(&t, &pass, BackMatrix::X, row, col).unwrap();
            let note = e.note.clone().unwrap();
            let sign = |v: f64, d: usize| {
                let scaled = v * 10f64.powi(d as i32);
                if (scaled - scaled.round()).abs() < 1e-9 {
                    "="
                } else {
                    "≈"
                }
            };
            let n_text = format_value(n_hat[col], 3);
            let sd_text = format_value(sd, 4);
            assert!(
                note.contains(&format!("for this cell {} {n_text};", sign(n_hat[col], 3))),
                "{note}"
            );
            assert!(
                note.contains(&format!("√(σ² + ε) {} {sd_text},", sign(sd, 4))),
                "{note}"
            );
            let n_written = if n_text.starts_with('−') {
                format!("({n_text})")
            } else {
                n_text.clone()
            };
            assert!(
                e.expansion.contains(&format!(" − {n_written} × "))
                    && e.expansion.contains(&format!(") / {sd_text} ")),
                "{}",
                e.expansion
            );
            // Redone with the numbers as written, the sum lands on the value shown or the note
            // says what it comes to.
            let r = |v: f64, d: usize| parse(&format_value(v, d));
            let by_hand =
                (r(g_hat[col], 3) - r(mean_g, 3) - r(n_hat[col], 3) * r(mean_gn, 3)) / r(sd, 4);
            let matches = by_hand_either_way(by_hand)
                .iter()
                .any(|v| g3(*v) == g3(e.value));
            assert_eq!(
                !matches,
                note.contains("Redone with the rounded numbers shown"),
                "{} {note}",
                e.expansion
            );
        }
    }
}
