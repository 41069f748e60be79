//! How long the core's `forward` takes, over the sizes the app allows.
//!
//!   cargo bench --bench forward                 the whole grid (about a minute on 2 cores)
//!   cargo bench --bench forward -- s32_d16      only the benchmarks whose id contains `s32_d16`
//!
//! Benchmark ids read `forward/s{seq_len}_d{d_model}_h{n_heads}`. The grid is every
//! seq_len in 4, 8, 16, 32 with every d_model in 4, 8, 16 and every head count in 1, 2, 4, 8 that
//! divides it: 44 points. Each point is short (20 samples over about a second), which is plenty
//! for inputs this small; pass criterion's own flags after `--` to measure longer.
//!
//! A stress size, `forward/stress_s256_d64_h8`, would show how the cost grows far beyond the
//! app's limits, but `forward` refuses it (see `stress`).

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use attention_lens::attention::{
        forward, forward_within, toy_embeddings, Config, Init, Inputs, Limits, Weights,
    };
    use criterion::{BenchmarkId, Criterion, Throughput};
    use std::hint::black_box;
    use std::time::Duration;

    const SEQ_LENS: [usize; 4] = [4, 8, 16, 32];
    const D_MODELS: [usize; 3] = [4, 8, 16];
    const HEADS: [usize; 4] = [1, 2, 4, 8];

    /// The benchmark settings unless the command line overrides them.
    pub fn criterion() -> Criterion {
        Criterion::default()
            .sample_size(20)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_millis(800))
            .nresamples(10_000)
            .without_plots()
            .configure_from_args()
    }

    /// `seq_len` distinct words: every token gets its own embedding row.
    fn words(seq_len: usize) -> Vec<String> {
        (0..seq_len).map(|i| format!("w{i}")).collect()
    }

    /// Inputs of the given size with the default weights and switches, built field by field so
    /// that no tokenizer or limit stands between the benchmark and `forward`.
    fn inputs(seq_len: usize, d_model: usize, n_heads: usize) -> Inputs {
        let tokens = words(seq_len);
        let embeddings = toy_embeddings(&tokens, d_model);
        Inputs {
            tokens,
            embeddings,
            weights: Weights::new(Init::Default, d_model),
            config: Config {
                d_model,
                n_heads,
                ..Config::default()
            },
            source: None,
            block: None,
        }
    }

    /// The grid of sizes the app allows.
    pub fn grid(c: &mut Criterion) {
        let mut group = c.benchmark_group("forward");
        for seq_len in SEQ_LENS {
            for d_model in D_MODELS {
                for n_heads in HEADS.into_iter().filter(|h| d_model % h == 0) {
                    let inputs = inputs(seq_len, d_model, n_heads);
                    if let Err(err) = forward(&inputs) {
                        panic!("forward refused s{seq_len} d{d_model} h{n_heads}: {err}");
                    }
                    // One "element" is one token, so criterion also reports tokens per second.
                    group.throughput(Throughput::Elements(seq_len as u64));
                    group.bench_with_input(
                        BenchmarkId::from_parameter(format!("s{seq_len}_d{d_model}_h{n_heads}")),
                        &inputs,
                        |b, inputs| b.iter(|| forward(black_box(inputs))),
                    );
                }
            }
        }
        group.finish();
    }

    /// seq_len 256, d_model 64, 8 heads: eight times the app's longest sentence and four times
    /// its widest model.
    ///
    /// Far beyond the app's limits (256 tokens, d_model 64), so the grid's growth can be read
    /// against a size where it dominates; `Limits::NONE` lifts the size checks only.
    pub fn stress(c: &mut Criterion) {
        const SEQ_LEN: usize = 256;
        const D_MODEL: usize = 64;
        const N_HEADS: usize = 8;
        let inputs = inputs(SEQ_LEN, D_MODEL, N_HEADS);
        let id = format!("stress_s{SEQ_LEN}_d{D_MODEL}_h{N_HEADS}");
        let mut group = c.benchmark_group("forward");
        // Each call is far slower than on the grid: fewer, longer samples.
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(2));
        group.throughput(Throughput::Elements(SEQ_LEN as u64));
        group.bench_with_input(BenchmarkId::from_parameter(id), &inputs, |b, inputs| {
            b.iter(|| forward_within(black_box(inputs), &Limits::NONE))
        });
        group.finish();
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let mut c = native::criterion();
    native::grid(&mut c);
    native::stress(&mut c);
    c.final_summary();
}

/// Criterion does not build for wasm32; this keeps `--all-targets` checks on wasm32 working.
#[cfg(target_arch = "wasm32")]
fn main() {}
