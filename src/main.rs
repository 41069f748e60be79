// Talc is smaller in the wasm module than the default allocator (dlmalloc) and faster.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    attention_lens::app::mount();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    // `args_os`, not `args`: clap refuses an argument that is not UTF-8 instead of panicking.
    std::process::exit(attention_lens::cli::run(std::env::args_os().skip(1)));
}
