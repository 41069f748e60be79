//! The maths and the guide in docs/ against the app's own words: one symbol per meaning, the
//! divisors the app names, and LayerNorm's root written as the app writes it.

// Native tests: the browser target runs its own.
#![cfg(not(target_arch = "wasm32"))]

fn doc(name: &str) -> String {
    let path = format!("{}/docs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_gradient_of_a_is_d_as_in_the_app_and_g_stays_the_activation() {
    for name in ["maths.md", "guide.md"] {
        let text = doc(name);
        assert!(!text.contains("G = ∂L/∂A"), "{name}");
        assert!(!text.contains("(G − rowsum(G ⊙ A"), "{name}");
        assert!(text.contains("(D − rowsum(D ⊙ A"), "{name}");
    }
    assert!(doc("maths.md").contains("`D = ∂L/∂Aₕ`"));
    assert!(doc("maths.md").contains("`G = act(H)`"));
}

#[test]
fn pre_norm_backward_divides_by_the_root_of_the_variance_plus_epsilon() {
    let maths = doc("maths.md");
    assert!(!maths.contains("/ σ`") && !maths.contains("(x − μ)/σ`"));
    assert!(maths.contains("`n̂ = (x − μ)/√(σ² + ε)`"));
    assert!(maths.contains("n̂·mean(ĝ ⊙ n̂)) / √(σ² + ε)`"));
    assert!(maths.contains("σ² being\nthe row's variance"));
}

#[test]
fn the_seq_len_mistake_divides_by_the_root_of_the_keys_and_reads_src_len_with_a_source() {
    let maths = doc("maths.md");
    assert!(maths.contains("divides by the square root of the number of keys,\n√src_len"));
    let guide = doc("guide.md");
    assert!(guide
        .contains("the common tutorial mistake, which reads ÷ √src_len\n  with a source sentence"));
    assert!(guide.contains("mistake; ÷ √src_len with a source sentence) or no scaling"));
}
