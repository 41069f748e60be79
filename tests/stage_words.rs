//! The stages' words, read with the switches flipped: every divisor, symbol and input a text
//! names is the one the maths used, no text says what is false for the settings on screen, and
//! no paragraph runs longer than a lecturer would say in one breath.

use attention_lens::attention::whatif::WhatIf;
use attention_lens::attention::{
    forward, Activation, Block, Config, Init, Inputs, Norm, ScaleMode, Source, Stage, Trace,
    Weights,
};
use attention_lens::words::{
    activation_name, handout_stage_note, no_mistake_text_for, scale_mode_label, setting_help,
    stage_explanation, stage_formula, stage_note, stage_title, whatif_explanation, word_order_text,
    Setting, SEQ_LEN_IN_CROSS,
};

/// The longest paragraph a learner reads in one go, in words.
const MAX_WORDS: usize = 90;

/// A layer's switches, as the settings panel sets them.
#[derive(Debug, Clone, Copy)]
struct Switches {
    config: Config,
    source: Option<&'static str>,
    block: Option<(Norm, Activation)>,
}

fn run(sentence: &str, s: Switches) -> Trace {
    let weights = Weights::new(Init::Default, s.config.d_model);
    let mut inputs = Inputs::from_sentence(sentence, s.config, weights).unwrap();
    inputs.source = s
        .source
        .map(|text| Source::from_sentence(text, s.config.d_model).unwrap());
    inputs.block = s.block.map(|(norm, activation)| {
        let mut block = Block::new(s.config.d_model, 2 * s.config.d_model);
        block.norm = norm;
        block.activation = activation;
        block
    });
    forward(&inputs).unwrap()
}

/// Every combination of the switches the texts talk about: mask, positions, each scale mode,
/// T ≠ 1, a source, no block or a post-norm or pre-norm one, ReLU or GELU, one head or several.
fn every_switch() -> Vec<Switches> {
    let mut all = Vec::new();
    for scale in ScaleMode::ALL {
        for (causal, positional) in [(false, false), (true, false), (false, true), (true, true)] {
            for (d_model, n_heads) in [(4, 1), (4, 2), (8, 8)] {
                for source in [None, Some("le chat noir dort")] {
                    for block in [
                        None,
                        Some((Norm::Post, Activation::Relu)),
                        Some((Norm::Pre, Activation::Gelu)),
                    ] {
                        let temperature = if causal { 0.5 } else { 1.0 };
                        all.push(Switches {
                            config: Config {
                                d_model,
                                n_heads,
                                causal: causal && source.is_none(),
                                positional_encoding: positional,
                                scale,
                                temperature,
                                ..Config::default()
                            },
                            source,
                            block,
                        });
                    }
                }
            }
        }
    }
    all
}

fn paragraphs(text: &str) -> impl Iterator<Item = &str> {
    text.split("\n\n")
}

fn words(paragraph: &str) -> usize {
    paragraph.split_whitespace().count()
}

/// Everything the stage shows in words for `trace`: title, formula, explanation and note.
fn stage_words(stage: Stage, trace: &Trace) -> String {
    let (c, w) = (&trace.config, trace.wiring());
    format!(
        "{}\n{}\n{}\n{}",
        stage_title(stage, c, w),
        stage_formula(stage, c, w),
        stage_explanation(stage),
        stage_note(stage, trace).unwrap_or_default()
    )
}

/// The number after `√` in `text`, and the value after it (`√5 ≈ 2.236` or `√4 = 2`).
fn roots(text: &str) -> Vec<(usize, f64)> {
    let mut found = Vec::new();
    for (i, _) in text.match_indices('√') {
        let rest = &text[i + '√'.len_utf8()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(n) = digits.parse::<usize>() else {
            continue;
        };
        let after = rest[digits.len()..].trim_start();
        let Some(value) = after
            .strip_prefix("≈ ")
            .or_else(|| after.strip_prefix("= "))
        else {
            continue;
        };
        let number: String = value
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        found.push((n, number.trim_end_matches('.').parse().unwrap()));
    }
    found
}

#[test]
fn in_cross_attention_the_scale_note_names_root_src_len_the_divisor_used() {
    // Three tokens attend to a five-token source: the maths divides by √5, not √3.
    let t = run(
        "the cat sat",
        Switches {
            config: Config {
                scale: ScaleMode::SqrtSeqLen,
                ..Config::default()
            },
            source: Some("le chat est très assis"),
            block: None,
        },
    );
    assert!((t.scale_divisor - 5f64.sqrt()).abs() < 1e-12);
    let note = stage_note(Stage::Scale, &t).unwrap();
    assert!(note.contains("√src_len"), "{note}");
    assert!(note.contains("divided by √5 ≈ 2.236"), "{note}");
    assert!(!note.contains("√3"), "{note}");
    assert!(
        note.contains("Standard attention would divide by √2 ≈ 1.414"),
        "{note}"
    );
}

#[test]
fn every_divisor_a_scale_text_names_is_the_one_the_maths_used() {
    for s in every_switch() {
        let t = run("a rose is a rose", s);
        let note = stage_note(Stage::Scale, &t).unwrap();
        let dk = t.config.head_dim();
        let named = roots(&note);
        assert!(!named.is_empty(), "{s:?}: {note}");
        for (n, value) in &named {
            assert!(
                (value - (*n as f64).sqrt()).abs() < 0.0005,
                "{s:?}: √{n} is not {value}: {note}"
            );
        }
        // The first root named is what every score was divided by; any other is √d_k.
        let (first, _) = named[0];
        match t.config.scale {
            ScaleMode::SqrtHeadDim | ScaleMode::None => assert_eq!(first, dk, "{note}"),
            ScaleMode::SqrtSeqLen => {
                assert_eq!(first, t.n_keys(), "{s:?}: {note}");
                assert!((t.scale_divisor - (first as f64).sqrt()).abs() < 1e-12);
                assert_eq!(
                    note.contains("√src_len"),
                    s.source.is_some(),
                    "{s:?}: {note}"
                );
            }
        }
        // Any other root is the standard √d_k, or the divisor again.
        for (n, _) in &named[1..] {
            assert!(*n == dk || *n == first, "{s:?}: {note}");
        }
        let title = stage_title(Stage::Scale, &t.config, t.wiring());
        let formula = stage_formula(Stage::Scale, &t.config, t.wiring());
        if t.config.scale == ScaleMode::SqrtSeqLen && s.source.is_some() {
            assert!(title.contains("√src_len") && formula.contains("√src_len"));
        }
        // The setting's own label and the lab's summary of it name the divisor the stage uses.
        let cross = s.source.is_some();
        let label = scale_mode_label(t.config.scale, cross);
        let lab = no_mistake_text_for(&t.config, cross, t.n_keys());
        if t.config.scale == ScaleMode::SqrtSeqLen {
            let (used, other) = if cross {
                ("√src_len", "seq_len")
            } else {
                ("√seq_len", "src_len")
            };
            for text in [label, lab.as_str(), note.as_str()] {
                assert!(
                    text.contains(used) && !text.contains(other),
                    "{s:?}: {text}"
                );
            }
        }
    }
}

#[test]
fn the_scale_stage_says_root_d_k_divides_the_spread_exactly_and_gives_about_1_only_for_unit_variance(
) {
    let text = stage_explanation(Stage::Scale);
    assert!(!text.contains("brings that back to about 1"), "{text}");
    assert!(text.contains("divides the spread of the scores by exactly √d_k"));
    assert!(text.contains("For such unit-variance components"));
    let t = run(
        "I am hungry",
        Switches {
            config: Config::default(),
            source: None,
            block: None,
        },
    );
    let note = stage_note(Stage::Scale, &t).unwrap();
    assert!(
        note.contains("Each spread is divided by exactly √2 ≈ 1.414"),
        "{note}"
    );
    assert!(note.contains(
        "expected near 1 if the queries' and keys' components were independent with mean 0 and \
         variance 1"
    ));
    // Which is what the numbers on screen show: the ratio is exact, the result is not 1.
    for head in &t.heads {
        let (before, after) = head.score_spread();
        assert!((before / after - 2f64.sqrt()).abs() < 1e-12);
    }
}

#[test]
fn gelu_is_named_as_the_tanh_approximation_and_described_by_its_true_shape() {
    assert_eq!(
        activation_name(Activation::Gelu),
        "GELU (tanh approximation)"
    );
    let text = stage_explanation(Stage::Activation);
    assert!(!text.contains("slightly shrunk"), "{text}");
    assert!(
        text.contains("keeps under half of any negative number"),
        "{text}"
    );
    assert!(
        text.contains("dips to about −0.17 near x ≈ −0.75"),
        "{text}"
    );
    // The numbers the text quotes are those of the function computed.
    let gelu = |x: f64| Activation::Gelu.apply(x);
    assert!((gelu(1.0) - 0.84).abs() < 0.005 && (gelu(3.0) - 3.0).abs() < 0.005);
    let (lowest_x, lowest) = (-3000..0)
        .map(|i| f64::from(i) / 1000.0)
        .map(|x| (x, gelu(x)))
        .fold((0.0, 0.0), |a, b| if b.1 < a.1 { b } else { a });
    assert!((lowest + 0.17).abs() < 0.005 && (lowest_x + 0.75).abs() < 0.005);
    for i in 1..3000 {
        let x = -f64::from(i) / 100.0;
        assert!(gelu(x) / x < 0.5, "GELU keeps half or more of {x}");
    }
    let mut switches = Switches {
        config: Config::default(),
        source: None,
        block: Some((Norm::Post, Activation::Gelu)),
    };
    let t = run("I am hungry", switches);
    let formula = stage_formula(Stage::Activation, &t.config, t.wiring());
    assert!(formula.contains("≈ H·Φ(H)"), "{formula}");
    assert_eq!(
        stage_title(Stage::Activation, &t.config, t.wiring()),
        "Activation: GELU (tanh approximation)"
    );
    let note = stage_note(Stage::Activation, &t).unwrap();
    assert!(note.contains("tanh approximation"), "{note}");
    switches.block = Some((Norm::Post, Activation::Relu));
    let t = run("I am hungry", switches);
    assert!(!stage_note(Stage::Activation, &t).unwrap().contains("GELU"));
}

#[test]
fn without_the_activation_the_network_is_one_affine_map_not_one_matrix_product() {
    let text = stage_explanation(Stage::Activation);
    assert!(!text.contains("one matrix product"), "{text}");
    assert!(text.contains("one affine map"), "{text}");
    assert!(text.contains("x·(W₁W₂) + (b₁W₂ + b₂)"), "{text}");
}

#[test]
fn the_mask_belongs_to_decoder_only_models_and_bert_looks_both_ways() {
    let text = stage_explanation(Stage::Mask);
    assert!(
        !text.contains("In a language model a token may not"),
        "{text}"
    );
    assert!(text.contains("decoder-only"), "{text}");
    assert!(
        text.contains("BERT") && text.contains("both ways"),
        "{text}"
    );
    assert!(whatif_explanation(WhatIf::NoCausalMask).contains("BERT"));
}

#[test]
fn the_divisor_is_root_d_k_and_the_mistake_is_root_seq_len_not_the_sentence_length() {
    let text = stage_explanation(Stage::Scale);
    assert!(!text.contains("divisor is the head width"), "{text}");
    assert!(!text.contains("dividing by the sentence length"), "{text}");
    assert!(text.contains("Dividing by √seq_len"), "{text}");
    assert!(text.contains("√src_len"), "{text}");
    let lab = whatif_explanation(WhatIf::ScaleBySeqLen);
    assert!(lab.contains("divided by √seq_len"), "{lab}");
    assert!(SEQ_LEN_IN_CROSS.contains("√src_len"));
}

#[test]
fn huge_logits_are_those_of_large_trained_models() {
    let text = whatif_explanation(WhatIf::UnstableSoftmax);
    assert!(!text.contains("untrained or unscaled"), "{text}");
    assert!(text.contains("large trained models"), "{text}");
}

#[test]
fn reordering_the_tokens_moves_columns_of_scores_and_weights_as_well_as_rows() {
    let text = word_order_text(false, false);
    assert!(!text.contains("nothing else changes"), "{text}");
    assert!(text.contains("columns of the scores and weights"), "{text}");
    // In cross-attention, reordering the source moves the columns.
    let t = run(
        "the cat",
        Switches {
            config: Config::default(),
            source: Some("le chat"),
            block: None,
        },
    );
    let note = stage_note(Stage::Input, &t).unwrap();
    assert!(
        note.contains("reorder the source and the columns of the scores and weights move"),
        "{note}"
    );
}

#[test]
fn with_the_block_on_y_is_the_attention_sub_layers_output_not_the_layers() {
    let text = stage_explanation(Stage::OutputProjection);
    assert!(!text.contains("Finally"), "{text}");
    assert!(!text.contains("This is the layer's output"), "{text}");
    let plain = Switches {
        config: Config::default(),
        source: None,
        block: None,
    };
    let t = run("I am hungry", plain);
    assert!(stage_note(Stage::OutputProjection, &t)
        .unwrap()
        .contains("Y is this layer's output"));
    for norm in [Norm::Post, Norm::Pre] {
        let t = run(
            "I am hungry",
            Switches {
                block: Some((norm, Activation::Relu)),
                ..plain
            },
        );
        let note = stage_note(Stage::OutputProjection, &t).unwrap();
        assert!(note.contains("Y is not the end"), "{note}");
        assert!(note.contains("Y is the output of the first"), "{note}");
        assert!(!note.contains("this layer's output"), "{note}");
    }
}

#[test]
fn in_pre_norm_with_a_source_the_keys_and_values_read_x_src_not_n1() {
    let t = run(
        "the cat sat",
        Switches {
            config: Config::default(),
            source: Some("le chat"),
            block: Some((Norm::Pre, Activation::Relu)),
        },
    );
    let note = stage_note(Stage::Norm1, &t).unwrap();
    assert!(!note.contains("attention reads N₁, not X."), "{note}");
    assert!(
        note.contains("Attention's queries read N₁, not X"),
        "{note}"
    );
    assert!(note.contains("keys and values read X_src"), "{note}");
    let projection = stage_note(Stage::Projection, &t).unwrap();
    assert!(
        projection.contains("queries are computed from N₁"),
        "{projection}"
    );
    assert!(
        projection.contains("keys and values come from X_src"),
        "{projection}"
    );
    // Without a source, all three read N₁.
    let t = run(
        "the cat sat",
        Switches {
            config: Config::default(),
            source: None,
            block: Some((Norm::Pre, Activation::Relu)),
        },
    );
    assert!(stage_note(Stage::Norm1, &t)
        .unwrap()
        .contains("queries, keys and values all read N₁"));
}

#[test]
fn cross_attention_says_where_it_lives_and_defines_alignment() {
    let t = run(
        "the black cat",
        Switches {
            config: Config::default(),
            source: Some("le chat noir"),
            block: None,
        },
    );
    let projection = stage_note(Stage::Projection, &t).unwrap();
    assert!(projection.contains("each decoder layer runs masked self-attention"));
    assert!(projection.contains("keys and values come from the encoder's output"));
    assert!(projection.contains("X_src stand in for that output"));
    let softmax = stage_note(Stage::Softmax, &t).unwrap();
    assert!(softmax.contains("soft alignment: how that token shares its attention"));
    // Self-attention says none of it.
    let own = run(
        "the black cat",
        Switches {
            config: Config::default(),
            source: None,
            block: None,
        },
    );
    assert!(stage_note(Stage::Projection, &own).is_none());
    assert!(!stage_note(Stage::Softmax, &own)
        .unwrap()
        .contains("alignment"));
}

#[test]
fn pre_norm_says_why_it_exists_and_that_gpt_2_adds_a_final_layer_norm() {
    let t = run(
        "I am hungry",
        Switches {
            config: Config::default(),
            source: None,
            block: Some((Norm::Pre, Activation::Relu)),
        },
    );
    let note = stage_note(Stage::Norm1, &t).unwrap();
    assert!(note.contains("deep stacks train more steadily"), "{note}");
    assert!(note.contains("GPT-2 adds one final LayerNorm after its last block"));
    let last = stage_note(Stage::Residual2, &t).unwrap();
    assert!(last.contains("final LayerNorm"), "{last}");
}

#[test]
fn the_residual_stream_and_the_sub_layer_are_defined_before_they_are_used() {
    for norm in [Norm::Post, Norm::Pre] {
        let t = run(
            "I am hungry",
            Switches {
                config: Config::default(),
                source: None,
                block: Some((norm, Activation::Relu)),
            },
        );
        // Everything read, in the order of the stages.
        let read: String = t
            .stages()
            .iter()
            .map(|&s| stage_words(s, &t))
            .collect::<Vec<_>>()
            .join("\n");
        for (term, definition) in [
            (
                "residual stream",
                "the residual stream, the running row per token",
            ),
            ("sub-layer", "two sub-layers"),
        ] {
            let used = read.find(term).unwrap_or_else(|| panic!("{term} unused"));
            let defined = read
                .find(definition)
                .unwrap_or_else(|| panic!("{norm:?}: {term} never defined"));
            assert!(
                defined <= used + term.len() + 20,
                "{norm:?}: “{term}” is used before it is defined:\n{}",
                &read[..used + term.len()]
            );
        }
    }
}

#[test]
fn each_part_of_the_block_says_why_it_is_there() {
    for (stage, why) in [
        (Stage::Residual1, "gives gradients a short path"),
        (Stage::Norm1, "Why: rows grow or shrink"),
        (Stage::Hidden, "Why it is there"),
        (Stage::Activation, "would collapse into one affine map"),
    ] {
        let text = stage_explanation(stage);
        assert!(text.contains(why), "{stage:?}: {text}");
        assert!(!text.contains("a range it can work with"), "{stage:?}");
    }
}

#[test]
fn no_stage_or_what_if_paragraph_runs_longer_than_a_lecturer_says_in_one_breath() {
    let mut texts: Vec<(String, String)> = Stage::EVERY
        .iter()
        .map(|s| (format!("{s:?}"), stage_explanation(*s).to_string()))
        .collect();
    texts.extend(
        WhatIf::ALL
            .iter()
            .map(|w| (w.key().to_string(), whatif_explanation(*w).to_string())),
    );
    for s in every_switch() {
        let t = run("I am hungry", s);
        for stage in t.stages() {
            if let Some(note) = stage_note(stage, &t) {
                texts.push((format!("{stage:?} note for {s:?}"), note));
            }
        }
    }
    for (name, text) in texts {
        for p in paragraphs(&text) {
            assert!(
                words(p) <= MAX_WORDS,
                "{name}: a paragraph of {} words: {p}",
                words(p)
            );
        }
    }
}

#[test]
fn with_one_head_no_text_names_a_second_head() {
    for s in every_switch().into_iter().filter(|s| s.config.n_heads == 1) {
        let t = run("I am hungry", s);
        for stage in t.stages() {
            let read = stage_words(stage, &t);
            for second in ["head 2", "C₂", "Q₂", "A₂"] {
                assert!(!read.contains(second), "{stage:?} {s:?}: {read}");
            }
        }
    }
}

#[test]
fn every_note_follows_the_switches_on_screen() {
    for s in every_switch() {
        let t = run("the cat saw the dog", s);
        let w = t.wiring();
        for stage in t.stages() {
            let read = stage_words(stage, &t);
            let note = stage_note(stage, &t).unwrap_or_default();
            if w.cross {
                // The mask is off and the keys are the source's.
                assert!(!note.contains("−∞ and drawn hatched"), "{stage:?}: {note}");
            }
            if w.block.is_some() {
                assert!(!read.contains("this layer's output"), "{stage:?}: {read}");
            }
            if w.block != Some(Norm::Pre) {
                assert!(!note.contains("N₁, not X"), "{stage:?}: {note}");
            }
            if !t.config.causal || w.cross {
                assert!(
                    !note.contains("Cells above the diagonal"),
                    "{stage:?}: {note}"
                );
            }
            if t.config.temperature == 1.0 {
                assert!(!note.contains("Temperature T ="), "{stage:?}: {note}");
            }
        }
        if t.config.n_heads == 1 {
            let split = stage_note(Stage::SplitHeads, &t).unwrap();
            assert!(split.contains("nothing to cut"), "{split}");
        }
    }
}

/// “hello” through a block of d_ff = 2 whose b₁ is `b_1`, so the signs of H are chosen.
fn hello_with_bias(b_1: [f64; 2], activation: Activation) -> Trace {
    let config = Config::default();
    let mut inputs =
        Inputs::from_sentence("hello", config, Weights::new(Init::Default, config.d_model))
            .unwrap();
    let mut block = Block::new(config.d_model, 2);
    block.activation = activation;
    block.b_1 = attention_lens::attention::Matrix::from_row_slice(1, 2, &b_1);
    inputs.block = Some(block);
    forward(&inputs).unwrap()
}

#[test]
fn when_every_hidden_number_is_negative_relu_is_said_to_zero_them_all() {
    let t = hello_with_bias([-100.0, -100.0], Activation::Relu);
    let note = stage_note(Stage::Activation, &t).unwrap();
    assert!(
        note.starts_with(
            "All of H's 2 numbers are negative, so ReLU sets every one to 0 and G is all zeros."
        ),
        "{note}"
    );
    assert!(!note.contains("the others pass unchanged"), "{note}");
    // One negative number of two is counted in the singular.
    let t = hello_with_bias([100.0, -100.0], Activation::Relu);
    let note = stage_note(Stage::Activation, &t).unwrap();
    assert!(
        note.starts_with("1 of H's 2 numbers is negative, and ReLU set it to 0"),
        "{note}"
    );
}

#[test]
fn with_no_negative_hidden_number_gelu_is_said_to_halve_numbers_near_zero() {
    // GELU(0.1) ≈ 0.054: near 0 it keeps about half, which is not “a little” shrinking.
    assert!((Activation::Gelu.apply(0.1) - 0.054).abs() < 0.001);
    let t = hello_with_bias([100.0, 100.0], Activation::Gelu);
    let note = stage_note(Stage::Activation, &t).unwrap();
    assert!(!note.contains("a little"), "{note}");
    assert!(
        note.contains(
            "GELU shrinks each positive one: numbers near 0 to about half, large ones hardly at all."
        ),
        "{note}"
    );
}

#[test]
fn a_block_with_a_source_says_a_decoder_layer_has_three_sub_layers() {
    let decoder = "A Transformer decoder layer has three sub-layers: masked self-attention, cross-attention, feed-forward. This block leaves out the first, so X stands in for its output.";
    // The static words hold for every wiring: they speak of the block shown.
    assert!(!stage_explanation(Stage::Residual1).contains("It has two sub-layers"));
    let help = setting_help(Setting::Block);
    assert!(
        !help.contains("a Transformer block's two sub-layers"),
        "{help}"
    );
    assert!(
        help.contains("has a third, masked self-attention"),
        "{help}"
    );
    for norm in [Norm::Post, Norm::Pre] {
        for source in [Some("le chat noir"), None] {
            let t = run(
                "the black cat",
                Switches {
                    config: Config::default(),
                    source,
                    block: Some((norm, Activation::Relu)),
                },
            );
            let mut stages = vec![Stage::OutputProjection, Stage::Residual1];
            if norm == Norm::Pre {
                stages.push(Stage::Norm1);
            }
            for stage in stages {
                let note = stage_note(stage, &t).unwrap();
                assert_eq!(
                    note.contains(decoder),
                    source.is_some(),
                    "{norm:?} {stage:?} {source:?}: {note}"
                );
            }
        }
    }
}

#[test]
fn in_post_norm_the_gradients_short_path_is_said_to_cross_each_norm_layernorm_or_rmsnorm() {
    let text = stage_explanation(Stage::Residual1);
    assert!(!text.contains("short path straight back"), "{text}");
    assert!(
        text.contains("(in post-norm it passes through each norm on the way)"),
        "{text}"
    );
    let second = stage_explanation(Stage::Residual2);
    assert!(
        second.contains("through each norm, in post-norm"),
        "{second}"
    );
}

#[test]
fn the_cross_attention_weights_are_a_soft_alignment_and_not_trained() {
    let t = run(
        "the black cat",
        Switches {
            config: Config::default(),
            source: Some("le chat noir"),
            block: None,
        },
    );
    let softmax = stage_note(Stage::Softmax, &t).unwrap();
    assert!(!softmax.contains("picks out the source words that translate it"));
    assert!(
        softmax.contains("Each row is a soft alignment"),
        "{softmax}"
    );
    assert!(
        softmax.contains("some heads come close to the word alignment"),
        "{softmax}"
    );
    assert!(softmax.contains("are not trained"), "{softmax}");
    let sum = stage_note(Stage::WeightedSum, &t).unwrap();
    assert!(!sum.contains("weighted by its alignment"), "{sum}");
}

#[test]
fn in_cross_attention_the_seq_len_mistake_says_a_word_added_to_the_source_changes_the_divisor() {
    assert!(
        SEQ_LEN_IN_CROSS
            .contains("adding a word to the source, not to your sentence, changes the divisor"),
        "{SEQ_LEN_IN_CROSS}"
    );
}

#[test]
fn when_seq_len_equals_d_k_the_scale_note_says_the_divisors_agree_without_would() {
    let t = run(
        "I am",
        Switches {
            config: Config {
                scale: ScaleMode::SqrtSeqLen,
                ..Config::default()
            },
            source: None,
            block: None,
        },
    );
    let note = stage_note(Stage::Scale, &t).unwrap();
    assert!(!note.contains("would divide by"), "{note}");
    assert!(
        note.contains(
            "Here the two happen to agree: standard attention divides by √d_k = √2 ≈ 1.414 too."
        ),
        "{note}"
    );
}

#[test]
fn the_scale_note_gives_unit_variance_as_enough_for_a_spread_near_1_not_as_required() {
    for s in every_switch() {
        let t = run("the cat saw the dog", s);
        let note = stage_note(Stage::Scale, &t).unwrap_or_default();
        // Unit variance is sufficient (with independence), not necessary: never “only if”.
        assert!(!note.contains("only if"), "{note}");
        if note.contains("expected near 1") {
            assert!(
                note.contains("independent with mean 0 and variance 1"),
                "{note}"
            );
            assert!(note.contains("these weights need not give that"), "{note}");
            assert_eq!(t.config.scale, ScaleMode::SqrtHeadDim, "{note}");
        }
    }
}

#[test]
fn with_one_token_the_mask_notes_say_there_is_nothing_above_the_diagonal() {
    for causal in [true, false] {
        let t = run(
            "hello",
            Switches {
                config: Config {
                    causal,
                    ..Config::default()
                },
                source: None,
                block: None,
            },
        );
        let note = stage_note(Stage::Mask, &t).unwrap();
        assert!(
            note.contains("With one token there is nothing above the diagonal"),
            "{note}"
        );
        assert!(!note.contains("Cells above the diagonal"), "{note}");
        assert!(!note.contains("every token sees every other"), "{note}");
        assert!(!note.contains("to see −∞"), "{note}");
        let handout = handout_stage_note(&t, Stage::Mask, 3);
        if causal {
            assert!(
                handout.contains(
                    "With one token there is nothing above the diagonal: the mask hides nothing."
                ),
                "{handout}"
            );
        }
        assert!(!handout.contains("entries above the diagonal"), "{handout}");
    }
    // Two tokens keep the hatched cells.
    let t = run(
        "hello there",
        Switches {
            config: Config {
                causal: true,
                ..Config::default()
            },
            source: None,
            block: None,
        },
    );
    let note = stage_note(Stage::Mask, &t).unwrap();
    assert!(note.contains("Cells above the diagonal"), "{note}");
    assert!(handout_stage_note(&t, Stage::Mask, 3).contains("entries above the diagonal"));
}

#[test]
fn counts_of_one_are_singular_and_one_pair_is_the_same_in_both_pairings() {
    use attention_lens::attention::{Pairing, Rope, ROPE_THETA};
    use attention_lens::words::shape_text;
    for (d_model, n_heads) in [(4, 1), (4, 2), (8, 2)] {
        for pairing in [Pairing::Half, Pairing::Interleaved] {
            let config = Config {
                d_model,
                n_heads,
                rope: Some(Rope {
                    theta: ROPE_THETA,
                    pairing,
                }),
                ..Config::default()
            };
            let s = Switches {
                config,
                source: None,
                block: None,
            };
            let t = run("I am hungry", s);
            let outline = t.outline();
            for stage in t.stages() {
                let shapes = shape_text(stage, &outline);
                for plural in ["1 heads", "1 pairs"] {
                    assert!(!shapes.contains(plural), "{stage:?} {s:?}: {shapes}");
                }
            }
            let note = stage_note(Stage::Rotary, &t).unwrap();
            let d_k = d_model / n_heads;
            // With d_k = 2 both pairings pair columns 1 and 2: no score changes with the other.
            assert_eq!(
                note.contains("are the same pairing"),
                d_k == 2,
                "{s:?}: {note}"
            );
            assert_eq!(
                note.contains("pairing instead would change"),
                d_k > 2,
                "{s:?}: {note}"
            );
        }
    }
}

#[test]
fn with_the_mask_off_every_token_sees_every_token_itself_included() {
    let t = run(
        "the cat sat",
        Switches {
            config: Config {
                causal: false,
                ..Config::default()
            },
            source: None,
            block: None,
        },
    );
    let note = stage_note(Stage::Mask, &t).unwrap();
    assert!(
        note.contains("every token sees every token, itself included"),
        "{note}"
    );
}
