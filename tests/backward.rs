//! The backward pass checked the way PyTorch's `gradcheck` checks one: every hand-derived
//! gradient against central finite differences in f64, over scenarios that cover the mask,
//! positions, every scale mode, temperatures other than 1, cross-attention, the block in
//! post-norm and pre-norm, both losses with every target and task, and 1, 2 and 4 heads. Then
//! the conventions (masked cells, refusals) and two optimizer steps worked out by hand.

// Native tests: the browser target runs its own.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::{
    forward, gradients, loss_of, softmax_rows, train, train_step, Activation, AttentionError,
    Block, Config, Goal, HeadTarget, Init, Inputs, Matrix, NamedTarget, Norm, NormType, Objective,
    Optimizer, OptimizerKind, Pairing, Rope, ScaleMode, Source, SplitMix64, Task, Trace, Trainable,
    Weights,
};

/// The relative step of the central differences. They use the five-point stencil, whose error
/// falls as h⁴, so the step can stay large enough that rounding (about 1e-16·L/h) is tiny too.
const H: f64 = 1e-3;

/// The largest relative error accepted, measured as |analytic − numeric| / max(|a|, |n|, FLOOR).
const TOLERANCE: f64 = 1e-6;

/// Below this size a gradient entry is compared absolutely: a cell of 1e-9 whose difference is
/// 1e-12 is not a failure, it is rounding.
const FLOOR: f64 = 1e-3;

// ---------------------------------------------------------------------------------------------
// Scenarios.

/// Where attention sits: a mask, a source, a block.
#[derive(Debug, Clone, Copy)]
struct Wiring {
    causal: bool,
    cross: bool,
    block: Option<Norm>,
    /// Rotary positions, in this pairing.
    rope: Option<Pairing>,
    /// Half as many key/value heads as query heads (one with one query head).
    grouped: bool,
    /// The sliding window, under the causal mask.
    window: Option<usize>,
    /// RMSNorm and SwiGLU in the block: Llama's.
    llama: bool,
}

const BASE: Wiring = Wiring {
    causal: false,
    cross: false,
    block: None,
    rope: None,
    grouped: false,
    window: None,
    llama: false,
};

/// Today's models: rotary positions in both pairings, shared key/value heads, a sliding
/// window, and all of them together in a pre-norm block.
const MODERN: [Wiring; 7] = [
    Wiring {
        causal: true,
        rope: Some(Pairing::Half),
        ..BASE
    },
    Wiring {
        rope: Some(Pairing::Interleaved),
        ..BASE
    },
    Wiring {
        grouped: true,
        ..BASE
    },
    Wiring {
        causal: true,
        window: Some(2),
        ..BASE
    },
    Wiring {
        causal: true,
        rope: Some(Pairing::Half),
        grouped: true,
        window: Some(3),
        ..BASE
    },
    Wiring {
        causal: true,
        block: Some(Norm::Pre),
        rope: Some(Pairing::Interleaved),
        grouped: true,
        llama: true,
        ..BASE
    },
    Wiring {
        block: Some(Norm::Pre),
        llama: true,
        ..BASE
    },
];

const WIRINGS: [Wiring; 7] = [
    Wiring {
        causal: false,
        cross: false,
        block: None,
        ..BASE
    },
    Wiring {
        causal: true,
        cross: false,
        block: None,
        ..BASE
    },
    Wiring {
        causal: false,
        cross: true,
        block: None,
        ..BASE
    },
    Wiring {
        causal: false,
        cross: false,
        block: Some(Norm::Post),
        ..BASE
    },
    Wiring {
        causal: false,
        cross: false,
        block: Some(Norm::Pre),
        ..BASE
    },
    Wiring {
        causal: false,
        cross: true,
        block: Some(Norm::Pre),
        ..BASE
    },
    Wiring {
        causal: true,
        cross: false,
        block: Some(Norm::Pre),
        ..BASE
    },
];

/// The goals checked, by a name for the failure message.
#[derive(Debug, Clone, Copy)]
enum GoalKind {
    Named(NamedTarget),
    /// A random painted target for every head.
    Painted,
    /// A different named target for each head.
    PerHead,
    Task(Task),
}

fn goal_kinds() -> Vec<GoalKind> {
    let mut kinds: Vec<GoalKind> = NamedTarget::ALL
        .iter()
        .map(|t| GoalKind::Named(*t))
        .collect();
    kinds.extend([GoalKind::Painted, GoalKind::PerHead]);
    kinds.extend(Task::ALL.iter().map(|t| GoalKind::Task(*t)));
    kinds
}

/// A `rows × cols` matrix of uniform draws in `[-half, half)`.
fn random(rng: &mut SplitMix64, rows: usize, cols: usize, half: f64) -> Matrix {
    Matrix::from_fn(rows, cols, |_, _| rng.next_symmetric(half, 12))
}

fn tokens(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// Scenario `k` with `wiring`: the switches not set by the wiring cycle with `k`, so every
/// scale mode meets every head count and both settings of the positions.
fn scenario(k: usize, wiring: Wiring) -> Inputs {
    let mut rng = SplitMix64::new(1000 + k as u64);
    let n_heads = [1, 2, 4][(k / 3) % 3];
    let d_model = if n_heads == 4 && (k.is_multiple_of(2) || wiring.rope.is_some()) {
        8
    } else {
        4
    };
    let config = Config {
        d_model,
        n_heads,
        causal: wiring.causal,
        positional_encoding: k.is_multiple_of(2),
        scale: ScaleMode::ALL[k % 3],
        temperature: [1.0, 0.7, 1.6][(k / 9) % 3],
        rope: wiring.rope.map(|pairing| Rope {
            theta: [10_000.0, 100.0, 7.5][k % 3],
            pairing,
        }),
        kv_heads: wiring.grouped.then_some((n_heads / 2).max(1)),
        window: wiring.window,
    };
    let kv_width = config.kv_width();
    let seq_len = 3 + k % 3;
    let weights = Weights {
        w_q: random(&mut rng, d_model, d_model, 1.0),
        w_k: random(&mut rng, d_model, kv_width, 1.0),
        w_v: random(&mut rng, d_model, kv_width, 1.0),
        w_o: random(&mut rng, d_model, d_model, 1.0),
    };
    let source = wiring.cross.then(|| {
        // Shorter and longer than the sentence, so the targets' clamping is exercised.
        let src_len = [2, 5, 4][k % 3];
        Source {
            tokens: tokens("s", src_len),
            embeddings: random(&mut rng, src_len, d_model, 1.0),
        }
    });
    let block = wiring.block.map(|norm| {
        let mut block = Block::new(d_model, 2 * d_model);
        block.norm = norm;
        // γ away from 1 and β away from 0, so LayerNorm's backward meets both.
        block.ln_1_gamma = random(&mut rng, 1, d_model, 0.5).add_scalar(1.0);
        if wiring.llama {
            block.norm_type = NormType::RmsNorm;
            block.activation = Activation::Swiglu;
        } else {
            block.ln_1_beta = random(&mut rng, 1, d_model, 0.5);
        }
        block
    });
    Inputs {
        tokens: tokens("t", seq_len),
        embeddings: random(&mut rng, seq_len, d_model, 1.0),
        weights,
        config,
        source,
        block,
    }
}

/// The goal of `kind` for `inputs`.
fn goal(kind: GoalKind, inputs: &Inputs, seed: u64) -> Goal {
    let n_heads = inputs.config.n_heads;
    match kind {
        GoalKind::Named(target) => Goal::named(target),
        GoalKind::PerHead => {
            let cycle = [
                NamedTarget::Previous,
                NamedTarget::SelfToken,
                NamedTarget::Uniform,
                NamedTarget::First,
            ];
            Goal::Pattern(
                (0..n_heads)
                    .map(|h| HeadTarget::Named(cycle[h % 4]))
                    .collect(),
            )
        }
        GoalKind::Painted => {
            let mut rng = SplitMix64::new(seed);
            let seq_len = inputs.seq_len();
            let n_keys = inputs.source.as_ref().map_or(seq_len, |s| s.tokens.len());
            let mask = inputs.config.mask();
            Goal::Pattern(
                (0..n_heads)
                    .map(|_| {
                        let mut paint = random(&mut rng, seq_len, n_keys, 1.0).abs();
                        for i in 0..seq_len {
                            for j in 0..n_keys {
                                if mask.hides(i, j) {
                                    paint[(i, j)] = 0.0;
                                }
                            }
                            // Some cells left unpainted, as a learner would.
                            if i % 2 == 1 && n_keys > 1 {
                                paint[(i, 0)] = 0.0;
                            }
                            // Every row keeps a key it can see.
                            if !(0..n_keys).any(|j| paint[(i, j)] > 0.0) {
                                paint[(i, i.min(n_keys - 1))] = 0.5;
                            }
                        }
                        HeadTarget::Painted(paint)
                    })
                    .collect(),
            )
        }
        GoalKind::Task(task) => Goal::Task(task),
    }
}

/// Every (scenario, goal) pair checked, except `next` under the causal mask and `first` and
/// the per-head targets (which use `first`) under a window, which are refused.
fn cases() -> Vec<(String, Inputs, Goal)> {
    let mut out = Vec::new();
    let mut k = 0;
    for kind in goal_kinds() {
        for wiring in WIRINGS.into_iter().chain(MODERN) {
            k += 1;
            if wiring.causal && matches!(kind, GoalKind::Named(NamedTarget::Next)) {
                continue;
            }
            if wiring.window.is_some()
                && matches!(
                    kind,
                    GoalKind::Named(NamedTarget::First) | GoalKind::PerHead
                )
            {
                continue;
            }
            let inputs = scenario(k, wiring);
            let goal = goal(kind, &inputs, k as u64);
            let name = format!("case {k}: {kind:?} with {wiring:?}, {:?}", inputs.config);
            out.push((name, inputs, goal));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Finite differences.

/// The relative error of `analytic` against `numeric`, with [`FLOOR`] below which it is
/// absolute.
fn relative_error(analytic: f64, numeric: f64) -> f64 {
    (analytic - numeric).abs() / analytic.abs().max(numeric.abs()).max(FLOOR)
}

/// Largest error seen, and where, over a whole run.
#[derive(Default)]
struct Worst {
    error: f64,
    at: String,
}

impl Worst {
    fn check(&mut self, label: impl Fn() -> String, analytic: f64, numeric: f64) {
        let error = relative_error(analytic, numeric);
        assert!(
            error < TOLERANCE,
            "{}: analytic {analytic:e}, numeric {numeric:e}, relative error {error:e}",
            label()
        );
        if error > self.error {
            self.error = error;
            self.at = label();
        }
    }
}

/// The five-point central difference of `f` at `m[(i, j)]`, with a step of `H` times the
/// entry's size (at least 0.1).
fn central(m: &Matrix, i: usize, j: usize, f: impl FnMut(&Matrix) -> f64) -> f64 {
    central_with(m, i, j, H * m[(i, j)].abs().max(0.1), f)
}

/// The five-point central difference of `f` at `m[(i, j)]` with step `h`.
fn central_with(m: &Matrix, i: usize, j: usize, h: f64, mut f: impl FnMut(&Matrix) -> f64) -> f64 {
    let mut moved = m.clone();
    let mut at = |offset: f64| {
        moved[(i, j)] = m[(i, j)] + offset;
        f(&moved)
    };
    // f' ≈ (8·(f(x + h) − f(x − h)) − (f(x + 2h) − f(x − 2h))) / 12h, exact for quartics.
    let near = at(h) - at(-h);
    let far = at(2.0 * h) - at(-2.0 * h);
    (8.0 * near - far) / (12.0 * h)
}

/// Checks `analytic` (or zeros when the loss does not reach the matrix) against the central
/// differences of the loss over every entry of the matrix `pick` chooses in the inputs.
fn check_input_matrix(
    worst: &mut Worst,
    name: &str,
    matrix: &str,
    inputs: &Inputs,
    goal: &Goal,
    analytic: Option<&Matrix>,
    pick: fn(&mut Inputs) -> &mut Matrix,
) {
    let mut probe = inputs.clone();
    let base = pick(&mut probe).clone();
    for i in 0..base.nrows() {
        for j in 0..base.ncols() {
            let numeric = central(&base, i, j, |moved| {
                *pick(&mut probe) = moved.clone();
                loss_of(&probe, goal).expect("moved inputs stay valid")
            });
            let a = analytic.map_or(0.0, |m| m[(i, j)]);
            worst.check(|| format!("{name}: {matrix}[{i}, {j}]"), a, numeric);
        }
    }
}

/// The loss written out from the weights of every head, head `h`'s replaced by `a`: the
/// formulas of the issue, independent of the core's loss code.
fn loss_from_weights(trace: &Trace, objective: &Objective, h: usize, a: &Matrix) -> f64 {
    let weights = |g: usize| if g == h { a } else { &trace.heads[g].weights };
    let n_heads = trace.heads.len();
    match objective {
        Objective::Pattern(targets) => {
            let mut total = 0.0;
            for (g, target) in targets.iter().enumerate() {
                for (t, w) in target.iter().zip(weights(g).iter()) {
                    if *t != 0.0 {
                        total -= t * w.ln();
                    }
                }
            }
            total / (n_heads * trace.seq_len()) as f64
        }
        Objective::Task { target, .. } => {
            let head_dim = trace.head_dim();
            let mut concat = Matrix::zeros(trace.seq_len(), trace.config.d_model);
            for g in 0..n_heads {
                // (seq_len, n_keys)·(n_keys, head_dim) → (seq_len, head_dim)
                let context = weights(g) * &trace.heads[g].v;
                concat
                    .columns_mut(g * head_dim, head_dim)
                    .copy_from(&context);
            }
            let output = concat * &trace.weights.w_o;
            (output - target).map(|v| v * v).sum() / (trace.seq_len() * trace.config.d_model) as f64
        }
    }
}

/// The loss from head `h`'s raw scores `s` onwards: scale, mask, softmax, then as above.
fn loss_from_scores(trace: &Trace, objective: &Objective, h: usize, s: &Matrix) -> f64 {
    let mut masked = s / trace.scale_divisor;
    for i in 0..masked.nrows() {
        for j in 0..masked.ncols() {
            if !visible(&trace.config, i, j) {
                masked[(i, j)] = f64::NEG_INFINITY;
            }
        }
    }
    let (a, _) = softmax_rows(&masked, trace.config.temperature);
    loss_from_weights(trace, objective, h, &a)
}

/// Whether query `i` sees key `j`: written out from the definition, not the core's mask.
fn visible(config: &Config, i: usize, j: usize) -> bool {
    !config.causal || (j <= i && config.window.is_none_or(|w| i - j < w))
}

#[test]
fn every_gradient_agrees_with_central_finite_differences() {
    let mut worst = Worst::default();
    let cases = cases();
    assert!(cases.len() >= 120, "{} cases", cases.len());
    for (name, inputs, goal) in &cases {
        let grads = gradients(inputs, goal).unwrap_or_else(|e| panic!("{name}: {e}"));
        let trace = forward(inputs).unwrap();
        let objective = goal.objective(&trace).unwrap();
        assert_eq!(grads.loss, loss_of(inputs, goal).unwrap());

        check_input_matrix(
            &mut worst,
            name,
            "w_q",
            inputs,
            goal,
            Some(&grads.d_w_q),
            |x| &mut x.weights.w_q,
        );
        check_input_matrix(
            &mut worst,
            name,
            "w_k",
            inputs,
            goal,
            Some(&grads.d_w_k),
            |x| &mut x.weights.w_k,
        );
        // A pattern loss does not reach W_v or W_o: the differences must vanish there too.
        check_input_matrix(
            &mut worst,
            name,
            "w_v",
            inputs,
            goal,
            grads.d_w_v.as_ref(),
            |x| &mut x.weights.w_v,
        );
        check_input_matrix(
            &mut worst,
            name,
            "w_o",
            inputs,
            goal,
            grads.d_w_o.as_ref(),
            |x| &mut x.weights.w_o,
        );
        check_input_matrix(
            &mut worst,
            name,
            "embeddings",
            inputs,
            goal,
            Some(&grads.d_embeddings),
            |x| &mut x.embeddings,
        );
        if inputs.source.is_some() {
            let d_source = grads
                .d_source_embeddings
                .as_ref()
                .expect("a source's gradient");
            check_input_matrix(
                &mut worst,
                name,
                "source_embeddings",
                inputs,
                goal,
                Some(d_source),
                |x| match &mut x.source {
                    Some(source) => &mut source.embeddings,
                    None => unreachable!("checked above"),
                },
            );
        } else {
            assert!(grads.d_source_embeddings.is_none(), "{name}");
        }

        for (h, (head, g)) in trace.heads.iter().zip(&grads.heads).enumerate() {
            for i in 0..head.weights.nrows() {
                for j in 0..head.weights.ncols() {
                    if !visible(&inputs.config, i, j) {
                        continue;
                    }
                    let label = |m: &str| format!("{name}: head {h} {m}[{i}, {j}]");
                    // A weight can be tiny and log A curves sharply there, so the pattern
                    // loss's step follows the weight's own size; the task loss is quadratic in
                    // A, where any step is exact up to rounding.
                    let step = match objective {
                        Objective::Pattern(_) => H * head.weights[(i, j)],
                        Objective::Task { .. } => H,
                    };
                    let numeric = central_with(&head.weights, i, j, step, |a| {
                        loss_from_weights(&trace, &objective, h, a)
                    });
                    worst.check(|| label("d_weights"), g.d_weights[(i, j)], numeric);
                    let numeric = central(&head.scores, i, j, |s| {
                        loss_from_scores(&trace, &objective, h, s)
                    });
                    worst.check(|| label("d_scores"), g.d_scores[(i, j)], numeric);
                }
            }
        }
    }
    println!(
        "largest relative error over {} cases: {:e} at {}",
        cases.len(),
        worst.error,
        worst.at
    );
}

#[test]
fn the_task_gradient_of_the_embeddings_keeps_its_two_paths_apart() {
    for wiring in [WIRINGS[0], WIRINGS[2]] {
        let inputs = scenario(4, wiring);
        let g = gradients(&inputs, &Goal::Task(Task::CopyPrevious)).unwrap();
        let via_target = g.d_embeddings_via_target.as_ref().unwrap();
        let (total, through_attention) = match (&g.d_source_embeddings, &g.d_source_x) {
            (Some(total), Some(attention)) => {
                // The target is built from the source, so the sentence's E has one path only.
                assert_eq!(g.d_embeddings, g.d_x);
                (total, attention)
            }
            _ => (&g.d_embeddings, &g.d_x),
        };
        assert!(((through_attention + via_target) - total).amax() < 1e-15);
        assert!(via_target.amax() > 0.0);
    }
}

// ---------------------------------------------------------------------------------------------
// Conventions and refusals.

#[test]
fn masked_cells_of_every_head_gradient_are_zero_for_every_loss() {
    for kind in goal_kinds() {
        if matches!(kind, GoalKind::Named(NamedTarget::Next)) {
            continue;
        }
        for k in 0..3 {
            let inputs = scenario(k, WIRINGS[1]);
            let goal = goal(kind, &inputs, 7);
            let g = gradients(&inputs, &goal).unwrap();
            for head in &g.heads {
                for m in [
                    &head.d_weights,
                    &head.d_masked,
                    &head.d_scaled,
                    &head.d_scores,
                ] {
                    for i in 0..m.nrows() {
                        for j in (i + 1)..m.ncols() {
                            assert_eq!(m[(i, j)], 0.0, "{kind:?}: cell ({i}, {j})");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn next_under_the_causal_mask_is_refused_with_both_named() {
    let inputs = scenario(2, WIRINGS[1]);
    let err = gradients(&inputs, &Goal::named(NamedTarget::Next)).unwrap_err();
    assert!(matches!(err, AttentionError::TargetOnMaskedKey { .. }));
    let text = err.to_string();
    assert!(
        text.contains("`next`") && text.contains("causal mask"),
        "{text}"
    );
    // A painted target with weight after the diagonal is refused the same way.
    let seq_len = inputs.seq_len();
    let painted = Goal::Pattern(vec![HeadTarget::Painted(Matrix::from_element(
        seq_len, seq_len, 1.0,
    ))]);
    let err = gradients(&inputs, &painted).unwrap_err().to_string();
    assert!(
        err.contains("painted target puts weight on a key the causal mask hides"),
        "{err}"
    );
}

#[test]
fn a_target_list_must_fit_one_head_or_every_head() {
    let inputs = scenario(3, WIRINGS[0]);
    assert_eq!(inputs.config.n_heads, 2);
    let three = Goal::Pattern(vec![HeadTarget::Named(NamedTarget::First); 3]);
    assert_eq!(
        gradients(&inputs, &three),
        Err(AttentionError::TargetCount {
            count: 3,
            n_heads: 2
        })
    );
}

#[test]
fn a_task_refuses_to_train_either_embeddings() {
    let mut inputs = scenario(0, WIRINGS[2]);
    let before = inputs.clone();
    let mut adam = Optimizer::new(OptimizerKind::Adam, 0.01).unwrap();
    for matrix in [Trainable::Embeddings, Trainable::SourceEmbeddings] {
        let goal = Goal::Task(Task::Mean);
        let err = train(&mut inputs, &goal, &[Trainable::WQ, matrix], &mut adam, 3).unwrap_err();
        assert_eq!(
            err,
            AttentionError::TaskTrainsEmbeddings {
                task: "mean".into(),
                name: matrix.key().into()
            }
        );
        assert!(err.to_string().contains("cannot learn"), "{err}");
        // In cross-attention the target is the source's alone: the rule, not the target,
        // keeps the sentence's embeddings fixed.
        assert!(
            err.to_string()
                .contains("a task trains only w_q, w_k, w_v and w_o")
                && err
                    .to_string()
                    .contains("from the source's alone in cross-attention"),
            "{err}"
        );
    }
    assert_eq!(inputs, before, "a refused run changes nothing");
    // Without a source there are no source embeddings to train.
    let mut plain = scenario(0, WIRINGS[0]);
    let goal = Goal::named(NamedTarget::First);
    assert_eq!(
        train_step(&mut plain, &goal, &[Trainable::SourceEmbeddings], &mut adam),
        Err(AttentionError::NoSourceToTrain)
    );
}

#[test]
fn a_pattern_loss_can_train_the_embeddings_and_the_source_s() {
    let mut inputs = scenario(5, WIRINGS[5]);
    let before = inputs.clone();
    let mut sgd = Optimizer::new(OptimizerKind::Sgd, 0.5).unwrap();
    let goal = Goal::named(NamedTarget::First);
    let train_all = [Trainable::Embeddings, Trainable::SourceEmbeddings];
    let losses = train(&mut inputs, &goal, &train_all, &mut sgd, 5).unwrap();
    assert!(losses[5] < losses[0], "{losses:?}");
    assert_ne!(inputs.embeddings, before.embeddings);
    assert_ne!(
        inputs.source.as_ref().unwrap().embeddings,
        before.source.as_ref().unwrap().embeddings
    );
    assert_eq!(inputs.weights, before.weights);
}

#[test]
fn adam_teaches_a_random_head_to_look_back() {
    let config = Config {
        d_model: 8,
        n_heads: 2,
        positional_encoding: true,
        ..Config::default()
    };
    let mut inputs = Inputs::from_sentence(
        "the quick brown fox jumps over the lazy dog",
        config,
        Weights::new(Init::Random(5), 8),
    )
    .unwrap();
    let goal = Goal::named(NamedTarget::Previous);
    let mut adam = Optimizer::new(OptimizerKind::Adam, 0.1).unwrap();
    let losses = train(
        &mut inputs,
        &goal,
        &[Trainable::WQ, Trainable::WK],
        &mut adam,
        150,
    )
    .unwrap();
    assert!(losses[150] < 0.25 * losses[0], "{losses:?}");
    let trace = forward(&inputs).unwrap();
    for head in &trace.heads {
        for i in 0..trace.seq_len() {
            let row = head.weights.row(i);
            let argmax = (0..row.len())
                .max_by(|&a, &b| row[a].total_cmp(&row[b]))
                .unwrap();
            assert_eq!(argmax, i.saturating_sub(1), "row {i}: {row}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Two optimizer steps worked by hand.

/// One token "a" with embedding [1, 0], d_model 2, one head, W_v = I, and a task copying the
/// first token, so Y* = [1, 0]. With one token the softmax is [1], C = X·W_v = [1, 0] and
/// Y = C·W_o is W_o's first row [o₁, o₂]: L = ((o₁ − 1)² + o₂²)/2, and
/// ∂L/∂W_o = Cᵀ·∂L/∂Y has first row [o₁ − 1, o₂] and a second row of zeros.
fn one_token(w_o_first_row: [f64; 2]) -> Inputs {
    let config = Config {
        d_model: 2,
        n_heads: 1,
        ..Config::default()
    };
    let [o1, o2] = w_o_first_row;
    Inputs {
        tokens: vec!["a".into()],
        embeddings: Matrix::from_row_slice(1, 2, &[1.0, 0.0]),
        weights: Weights {
            w_q: Matrix::from_row_slice(2, 2, &[0.3, -0.2, 0.1, 0.4]),
            w_k: Matrix::from_row_slice(2, 2, &[-0.5, 0.2, 0.7, 0.1]),
            w_v: Matrix::identity(2, 2),
            w_o: Matrix::from_row_slice(2, 2, &[o1, o2, 0.3, -0.4]),
        },
        config,
        source: None,
        block: None,
    }
}

fn assert_near(label: &str, actual: f64, expected: f64, tol: f64) {
    assert!(
        (actual - expected).abs() <= tol,
        "{label}: {actual} vs {expected}"
    );
}

#[test]
fn two_adam_steps_match_the_hand_worked_numbers() {
    // W_o's first row starts at [0.5, 0.2], lr = 0.1, β₁ = 0.9, β₂ = 0.999, ε = 1e-8.
    //
    // Step 1: g = [−0.5, 0.2], L = (0.25 + 0.04)/2 = 0.145.
    //   m = 0.1·g = [−0.05, 0.02];  v = 0.001·g² = [0.00025, 0.00004]
    //   m̂ = m/0.1 = g;  v̂ = v/0.001 = g², √v̂ = [0.5, 0.2]
    //   Δ = −0.1·m̂/(√v̂ + ε) = [0.1·0.5/0.50000001, −0.1·0.2/0.20000001]
    //     = [0.099999998, −0.0999999950]: Adam's first step is lr·sign(g), whatever |g|.
    //   o = [0.599999998, 0.1000000050]
    // Step 2: g = [−0.400000002, 0.100000005], L = (0.1600000016 + 0.0100000010)/2 = 0.0850000013
    //   m = 0.9·[−0.05, 0.02] + 0.1·g = [−0.0850000002, 0.0280000005]
    //   v = 0.999·[0.00025, 0.00004] + 0.001·g² = [0.00040975, 0.00004996]   (to 1e-12)
    //   m̂ = m/(1 − 0.81) = [−0.447368422, 0.147368424]
    //   v̂ = v/(1 − 0.998001) = [0.204977490, 0.024992496], √v̂ = [0.452744398, 0.158090154]
    //   Δ = −0.1·m̂/√v̂ = [0.098812578, −0.093217959]
    //   o = [0.698812576, 0.006782046]
    // After: g = [−0.301187424, 0.006782046], L = (0.090713862 + 0.000045996)/2 = 0.045379930
    let mut inputs = one_token([0.5, 0.2]);
    let goal = Goal::Task(Task::CopyFirst);
    let mut adam = Optimizer::new(OptimizerKind::Adam, 0.1).unwrap();
    let w_o = |inputs: &Inputs| (inputs.weights.w_o[(0, 0)], inputs.weights.w_o[(0, 1)]);

    let loss_0 = train_step(&mut inputs, &goal, &[Trainable::WO], &mut adam).unwrap();
    assert_near("L before", loss_0, 0.145, 1e-15);
    let (o1, o2) = w_o(&inputs);
    assert_near("o₁ after step 1", o1, 0.599_999_998, 1e-12);
    assert_near("o₂ after step 1", o2, 0.100_000_005, 1e-12);
    let state = adam.adam_state(Trainable::WO).unwrap();
    assert_near("m", state.m[(0, 0)], -0.05, 1e-15);
    assert_near("v", state.v[(0, 1)], 0.00004, 1e-15);

    let loss_1 = train_step(&mut inputs, &goal, &[Trainable::WO], &mut adam).unwrap();
    assert_near("L after step 1", loss_1, 0.085_000_001_3, 1e-12);
    let (o1, o2) = w_o(&inputs);
    assert_near("o₁ after step 2", o1, 0.698_812_576, 1e-9);
    assert_near("o₂ after step 2", o2, 0.006_782_046, 1e-9);
    assert_near(
        "L after step 2",
        loss_of(&inputs, &goal).unwrap(),
        0.045_379_930,
        1e-9,
    );

    // The second row has no gradient (C's second column is 0), so m = v = 0 and it stays.
    assert_eq!(inputs.weights.w_o[(1, 0)], 0.3);
    assert_eq!(inputs.weights.w_o[(1, 1)], -0.4);
    // W_q and W_k were not chosen.
    assert_eq!(inputs.weights.w_q, one_token([0.5, 0.2]).weights.w_q);
}

#[test]
fn two_sgd_steps_match_the_hand_worked_numbers() {
    // lr = 0.5, W_o's first row [0.5, 0.2]:
    //   g = [−0.5, 0.2]    L = 0.145          o = [0.5, 0.2] − 0.5·g   = [0.75, 0.1]
    //   g = [−0.25, 0.1]   L = 0.03625        o = [0.75, 0.1] − 0.5·g  = [0.875, 0.05]
    //   g = [−0.125, 0.05] L = (0.015625 + 0.0025)/2 = 0.0090625
    let mut inputs = one_token([0.5, 0.2]);
    let goal = Goal::Task(Task::CopyFirst);
    let mut sgd = Optimizer::new(OptimizerKind::Sgd, 0.5).unwrap();
    let losses = train(&mut inputs, &goal, &[Trainable::WO], &mut sgd, 2).unwrap();
    for (got, want) in losses.iter().zip([0.145, 0.03625, 0.0090625]) {
        assert_near("loss", *got, want, 1e-15);
    }
    assert_near("o₁", inputs.weights.w_o[(0, 0)], 0.875, 1e-15);
    assert_near("o₂", inputs.weights.w_o[(0, 1)], 0.05, 1e-15);
    assert_eq!(sgd.steps(), 2);
}

#[test]
fn a_diverging_step_keeps_the_weights_the_moments_and_the_step_count() {
    // Y = [1, 5] against Y* = E[0] = [1, 0]: ∂L/∂W_o[0,1] = 2·5/2 = 5, and SGD's step of
    // η·5 with η the largest float is past what a float can hold.
    let mut inputs = one_token([1.0, 5.0]);
    let goal = Goal::Task(Task::CopyFirst);
    let mut sgd = Optimizer::new(OptimizerKind::Sgd, f64::MAX).unwrap();
    let train_wo = [Trainable::WO];
    let weights = inputs.weights.clone();
    for _ in 0..2 {
        let err = train_step(&mut inputs, &goal, &train_wo, &mut sgd).unwrap_err();
        assert!(
            matches!(err, AttentionError::TrainingDiverged { step: 1 }),
            "{err:?}"
        );
        assert_eq!(sgd.steps(), 0);
        assert_eq!(inputs.weights, weights);
    }
}

#[test]
fn the_sgd_note_asks_for_a_far_larger_eta_only_where_the_gradients_are_small() {
    use attention_lens::attention::{forward, largest_gradient, BackwardPass, Config, Inputs};
    use attention_lens::state::Model;
    use attention_lens::words::sgd_note;
    // The default model and goal with SGD at T = 1 and at T = 0.1, which divides the softmax's
    // gradients by T, and after Adam has trained it, where the gradients are small.
    let note = |inputs: &Inputs| {
        let training = Model::default().fitted_training();
        let trace = forward(inputs).unwrap();
        let pass = BackwardPass::new(&trace, &training.goal).unwrap();
        let largest = largest_gradient(&pass.gradients, &training.train).unwrap();
        (sgd_note(Some(largest)), largest)
    };
    let model = Model::default();
    let (plain, g) = note(&model.inputs());
    assert!((0.1..1.0).contains(&g), "{g}");
    assert!(
        plain.contains("SGD needs a larger η to move as fast"),
        "{plain}"
    );
    assert!(!plain.contains("far larger"), "{plain}");

    let mut sharp = model.clone();
    sharp
        .set_config(Config {
            temperature: 0.1,
            ..model.config
        })
        .unwrap();
    let (hot, g) = note(&sharp.inputs());
    assert!(g > 1.0, "{g}");
    assert!(!hot.contains("larger η"), "{hot}");
    assert!(
        hot.contains("further than Adam would; a smaller η keeps"),
        "{hot}"
    );

    let training = model.fitted_training();
    let mut trained = model.inputs();
    let mut adam = Optimizer::new(OptimizerKind::Adam, 0.05).unwrap();
    train(
        &mut trained,
        &training.goal,
        &training.train,
        &mut adam,
        100,
    )
    .unwrap();
    let (settled, g) = note(&trained);
    assert!(g < 0.1, "{g}");
    assert!(settled.contains("SGD needs a far larger η"), "{settled}");
}
