//! The outlines of the model and of the trace: what lays out the page rather than filling it
//! with numbers. A view that reads only an outline stays still while a weight or an embedding
//! is edited. The app makes one memo of each, which its views share.

use crate::attention::{Outline, Trace};
use crate::state::{Model, ModelOutline};
use leptos::prelude::*;

/// The app's model and trace, each with its outline.
#[derive(Clone, Copy)]
struct Outlines {
    model: RwSignal<Model>,
    model_outline: Memo<ModelOutline>,
    trace: Memo<Trace>,
    trace_outline: Memo<Outline>,
}

/// Makes the outlines of the app's model and trace, for the views below to share.
pub fn provide_outlines(model: RwSignal<Model>, trace: Memo<Trace>) {
    provide_context(Outlines {
        model,
        model_outline: Memo::new(move |_| model.with(Model::outline)),
        trace,
        trace_outline: Memo::new(move |_| trace.with(Trace::outline)),
    });
}

/// The outline of `model`: the app's, or for another model a memo of its own.
pub fn model_outline(model: RwSignal<Model>) -> Memo<ModelOutline> {
    match use_context::<Outlines>() {
        Some(o) if o.model == model => o.model_outline,
        _ => Memo::new(move |_| model.with(Model::outline)),
    }
}

/// The outline of `trace`: the app's, or for another trace a memo of its own.
pub fn trace_outline(trace: Memo<Trace>) -> Memo<Outline> {
    match use_context::<Outlines>() {
        Some(o) if o.trace == trace => o.trace_outline,
        _ => Memo::new(move |_| trace.with(Trace::outline)),
    }
}
