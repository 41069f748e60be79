//! attention-lens: see multi-head self-attention, one stage at a time.
//!
//! - [`attention`]: the maths core (nalgebra only), which returns a [`attention::Trace`] of every
//!   intermediate matrix, and the arithmetic behind each cell as data.
//! - [`words`]: everything a learner reads, from the stage explanations to the handout.
//! - [`panels`]: the heatmap panels the views draw, by name, and the table of head matrices.
//! - [`plot`]: plotters drawing, generic over the drawing backend.
//! - [`state`]: the learner's model (sentence, settings, edited matrices), free of view code.
//! - [`changes`]: which parameter the learner edited last and which stages it changed unseen.
//! - [`quiz`]: predict-then-reveal questions drawn from a trace, with their answers.
//! - [`formats`]: the scenario file, the share link and the trace export.
//! - `components` and `app`: the Leptos user interface (the `ui` feature, on by default).
//! - [`cli`]: the native `attention-lens` command.

#[cfg(feature = "ui")]
pub mod app;
pub mod attention;
pub mod changes;
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(feature = "ui")]
pub mod components;
pub mod formats;
pub mod panels;
pub mod plot;
pub mod presets;
pub mod quiz;
pub mod state;
pub mod training;
pub mod words;
