//! The scenario format round trip, checked with proptest: whatever a scenario holds, its JSON
//! reads back to the same scenario, bit for bit.

// Native tests: proptest is a native dev-dependency.
#![cfg(not(target_arch = "wasm32"))]

use attention_lens::attention::ScaleMode;
use attention_lens::formats::scenario::{Scenario, SCENARIO_VERSION};
use proptest::prelude::*;

/// Any finite `f64`: normal, subnormal and zero, of either sign. JSON has no infinities or NaN.
fn finite() -> impl Strategy<Value = f64> {
    use prop::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO
}

/// Any rows of finite numbers, ragged or empty too: the format reads them; `to_inputs` checks
/// the shape.
fn rows() -> impl Strategy<Value = Option<Vec<Vec<f64>>>> {
    prop::option::of(prop::collection::vec(
        prop::collection::vec(finite(), 0..5),
        0..5,
    ))
}

/// Any text, control characters, quotes, backslashes and emoji included.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[\"\\\\\\n\\t\u{0}-\u{1f}é€😀]{0,12}"]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        (
            prop::option::of(text()),
            prop::option::of(text()),
            text(),
            any::<usize>(),
            any::<usize>(),
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(ScaleMode::ALL.to_vec()),
            finite(),
        ),
        (rows(), rows(), rows(), rows(), rows()),
    )
        .prop_map(
            |(
                (title, caption, sentence, d_model, n_heads, causal, positional, scale, temp),
                (embeddings, w_q, w_k, w_v, w_o),
            )| Scenario {
                version: SCENARIO_VERSION,
                title,
                caption,
                sentence,
                d_model,
                n_heads,
                causal,
                positional_encoding: positional,
                scale,
                temperature: temp,
                embeddings,
                w_q,
                w_k,
                w_v,
                w_o,
                source: None,
                source_embeddings: None,
                block: None,
            },
        )
}

/// Every float of `scenario`, as bits, so that `-0.0` and `0.0` differ.
fn float_bits(scenario: &Scenario) -> Vec<u64> {
    let matrices = [
        &scenario.embeddings,
        &scenario.w_q,
        &scenario.w_k,
        &scenario.w_v,
        &scenario.w_o,
    ];
    std::iter::once(scenario.temperature)
        .chain(matrices.into_iter().flatten().flatten().flatten().copied())
        .map(f64::to_bits)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_scenario_reads_back_from_its_json(scenario in scenario()) {
        let json = scenario.to_json();
        let back = Scenario::from_json(&json)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{json}")))?;
        prop_assert_eq!(&back, &scenario);
        prop_assert_eq!(float_bits(&back), float_bits(&scenario));
        prop_assert_eq!(back.to_json(), json);
    }
}
