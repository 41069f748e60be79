//! The outlines of the model and of the trace: what lays out the page rather than filling it
//! with numbers. A view that reads only an outline stays still while a weight or an embedding
//! is edited. The app makes one of each, which its views share.

use crate::attention::{AttentionError, Outline, Trace};
use crate::state::{Model, ModelOutline};
use leptos::prelude::*;

/// The app's model and trace, each with its outline, and the forward pass the trace keeps the
/// last good result of.
#[derive(Clone, Copy)]
struct Outlines {
    model: RwSignal<Model>,
    model_outline: ReadSignal<ModelOutline>,
    run: Memo<Result<Trace, AttentionError>>,
    trace: Memo<Trace>,
    trace_outline: ReadSignal<Outline>,
}

/// Makes the outlines of the app's model and trace, for the views below to share. `trace`
/// changes only when `run`, the forward pass it keeps the last good result of, does.
pub fn provide_outlines(
    model: RwSignal<Model>,
    run: Memo<Result<Trace, AttentionError>>,
    trace: Memo<Trace>,
) {
    provide_context(Outlines {
        model,
        model_outline: settled(move || model.with(Model::outline)),
        run,
        trace,
        trace_outline: follow_pass(run, trace, Trace::outline),
    });
}

/// The outline of `model`: the app's, or for another model one of its own.
pub fn model_outline(model: RwSignal<Model>) -> ReadSignal<ModelOutline> {
    match use_context::<Outlines>() {
        Some(o) if o.model == model => o.model_outline,
        _ => settled(move || model.with(Model::outline)),
    }
}

/// The outline of `trace`: the app's, or for another trace one of its own.
pub fn trace_outline(trace: Memo<Trace>) -> ReadSignal<Outline> {
    match use_context::<Outlines>() {
        Some(o) if o.trace == trace => o.trace_outline,
        _ => settled(move || trace.with(Trace::outline)),
    }
}

/// What `read` takes from `trace`, changing only when it does (see [`settled`]): a view that
/// reads it is not woken by an edit that leaves it equal. For a trace other than the app's, a
/// memo.
pub fn from_trace<T>(
    trace: Memo<Trace>,
    read: impl Fn(&Trace) -> T + Send + Sync + 'static,
) -> Signal<T>
where
    T: PartialEq + Send + Sync + 'static,
{
    match use_context::<Outlines>() {
        Some(o) if o.trace == trace => follow_pass(o.run, trace, read).into(),
        _ => Memo::new(move |_| trace.with(&read)).into(),
    }
}

/// `read` of `trace`, recomputed when `run` changes. Following the pass itself rather than
/// `trace`, which is one memo further down, brings `trace` up to date once an edit: an
/// immediate effect woken through two memos is woken again while the first of them is brought
/// up to date.
fn follow_pass<T>(
    run: Memo<Result<Trace, AttentionError>>,
    trace: Memo<Trace>,
    read: impl Fn(&Trace) -> T + Send + Sync + 'static,
) -> ReadSignal<T>
where
    T: PartialEq + Send + Sync + 'static,
{
    settled(move || {
        run.track();
        trace.with_untracked(&read)
    })
}

/// What `compute` gives, as a signal that changes only when the value does.
///
/// A memo gives its readers the same value, but whenever one of its sources changes, every view
/// that reads it, and every view that reads those, is woken to check it again, even when the
/// value comes out equal. Here an immediate effect recomputes the value as soon as a source
/// changes, before any view runs, and sets the signal only when the value is new: an edit that
/// leaves it equal wakes none of its readers.
pub fn settled<T>(compute: impl Fn() -> T + Send + Sync + 'static) -> ReadSignal<T>
where
    T: PartialEq + Send + Sync + 'static,
{
    let value = RwSignal::new(untrack(&compute));
    ImmediateEffect::new_scoped(move || {
        let next = compute();
        if value.with_untracked(|v| *v != next) {
            value.set(next);
        }
    });
    value.read_only()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::WeightName;
    use crate::state::EditTarget;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// The app's wiring: a model, its forward pass, the last good trace and their outlines,
    /// with a count of the times the trace was brought up to date.
    fn wired() -> (
        RwSignal<Model>,
        ReadSignal<ModelOutline>,
        ReadSignal<Outline>,
        Arc<AtomicUsize>,
    ) {
        let model = RwSignal::new(Model::default());
        let updates = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&updates);
        let run = Memo::new(move |prev: Option<&Result<Trace, _>>| {
            let previous = prev.and_then(|r| r.as_ref().ok());
            model.with(|m| m.trace_after(previous))
        });
        let trace = Memo::new(move |prev: Option<&Trace>| {
            counted.fetch_add(1, Ordering::SeqCst);
            match run.get() {
                Ok(t) => t,
                Err(_) => prev.cloned().expect("the default model runs"),
            }
        });
        provide_outlines(model, run, trace);
        (model, model_outline(model), trace_outline(trace), updates)
    }

    #[test]
    fn an_edit_updates_the_trace_once_and_leaves_the_outlines_as_they_were() {
        let owner = Owner::new();
        owner.set();
        let (model, model_outline, trace_outline, updates) = wired();
        // Readers of each outline, counting the times they run.
        let woken = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&woken);
        let _reader = ImmediateEffect::new(move || {
            model_outline.track();
            trace_outline.track();
            count.fetch_add(1, Ordering::SeqCst);
        });
        let (updates_before, woken_before) =
            (updates.load(Ordering::SeqCst), woken.load(Ordering::SeqCst));

        model.update(|m| {
            m.set_cell(EditTarget::Weight(WeightName::Q), 0, 0, 0.75)
                .unwrap();
        });

        assert_eq!(updates.load(Ordering::SeqCst), updates_before + 1);
        assert_eq!(woken.load(Ordering::SeqCst), woken_before);
    }

    #[test]
    fn a_new_sentence_reaches_both_outlines_before_anything_reads_them() {
        let owner = Owner::new();
        owner.set();
        let (model, model_outline, trace_outline, _) = wired();

        model.update(|m| m.set_sentence("one two three four five").unwrap());

        assert_eq!(model_outline.with_untracked(|o| o.tokens.len()), 5);
        assert_eq!(trace_outline.with_untracked(|o| o.tokens.len()), 5);
    }

    #[test]
    fn a_refused_model_keeps_the_last_good_outline_of_the_trace() {
        let owner = Owner::new();
        owner.set();
        let (model, _, trace_outline, _) = wired();
        let before = trace_outline.get_untracked();

        // A model the pass refuses: a head count that does not divide d_model.
        model.update(|m| m.config.n_heads = m.config.d_model + 1);

        assert!(model.with_untracked(Model::trace).is_err());
        assert_eq!(trace_outline.get_untracked(), before);
    }

    #[test]
    fn a_matrix_taken_from_the_trace_reaches_its_readers_only_when_it_changes() {
        let owner = Owner::new();
        owner.set();
        let (model, _, _, _) = wired();
        let trace = use_context::<Outlines>().expect("provided").trace;
        let k = from_trace(trace, |t| t.k.clone());
        let woken = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&woken);
        let _reader = ImmediateEffect::new(move || {
            k.track();
            count.fetch_add(1, Ordering::SeqCst);
        });
        let before = woken.load(Ordering::SeqCst);
        let k_before = k.get_untracked();

        // W_q does not reach K.
        model.update(|m| {
            m.set_cell(EditTarget::Weight(WeightName::Q), 0, 0, 0.75)
                .unwrap();
        });
        assert_eq!(woken.load(Ordering::SeqCst), before);

        // W_k does.
        model.update(|m| {
            m.set_cell(EditTarget::Weight(WeightName::K), 0, 0, 0.75)
                .unwrap();
        });
        assert_eq!(woken.load(Ordering::SeqCst), before + 1);
        assert_ne!(k.get_untracked(), k_before);
        assert_eq!(
            k.get_untracked(),
            model.with_untracked(|m| m.trace().unwrap().k)
        );
    }
}
