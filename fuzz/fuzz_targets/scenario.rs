//! Any bytes, read as scenario JSON: parsing, validation and the forward pass return errors,
//! never panic.

#![no_main]

use attention_lens::attention::forward;
use attention_lens::formats::scenario::Scenario;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(scenario) = Scenario::from_json(text) else {
        return;
    };
    if let Ok(inputs) = scenario.to_inputs() {
        let _ = forward(&inputs);
    }
    if let Ok(model) = scenario.to_model() {
        let _ = model.trace();
    }
});
