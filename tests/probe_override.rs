//! Overridable probes: replacing a value the way milabench wraps a data loader.

// A probe observes named bindings: returning one is the point of these functions.
#![allow(clippy::let_and_return)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use giving::{ProbeError, given};

type Loader = Box<dyn Iterator<Item = Vec<f64>>>;

#[giving::probe(overridable(loader))]
fn train(data: Vec<Vec<f64>>) -> f64 {
    let loader: Loader = Box::new(data.into_iter());
    let mut weight = 0.0;
    for batch in loader {
        let grad = batch.iter().sum::<f64>() / batch.len() as f64;
        weight += 0.1 * grad;
    }
    weight
}

/// A loader that counts the batches it yields.
struct Counting {
    inner: Loader,
    batches: Arc<AtomicUsize>,
}

impl Iterator for Counting {
    type Item = Vec<f64>;

    fn next(&mut self) -> Option<Vec<f64>> {
        let batch = self.inner.next()?;
        self.batches.fetch_add(1, Ordering::Relaxed);
        Some(batch)
    }
}

fn data() -> Vec<Vec<f64>> {
    (0..7).map(|i| vec![f64::from(i); 4]).collect()
}

#[test]
fn a_wrapped_loader_counts_batches_and_the_result_is_unchanged() {
    let baseline = train(data());

    let gv = given();
    let batches = Arc::new(AtomicUsize::new(0));
    let counter = batches.clone();
    let wrapped = gv
        .probe("train > loader")
        .unwrap()
        .override_with(move |loader: Loader| -> Loader {
            Box::new(Counting {
                inner: loader,
                batches: counter.clone(),
            })
        })
        .unwrap();
    let result = train(data());
    assert_eq!(result, baseline);
    assert_eq!(batches.load(Ordering::Relaxed), 7);
    assert_eq!(wrapped.replaced(), 1);
    assert_eq!(wrapped.error(), None);

    // Dropping the override stops it.
    drop(wrapped);
    train(data());
    assert_eq!(batches.load(Ordering::Relaxed), 7);
    gv.finish().unwrap();
}

#[test]
fn an_override_of_another_type_leaves_the_value_and_names_both_types() {
    let baseline = train(data());
    let gv = given();
    let wrong = gv
        .probe("train > loader")
        .unwrap()
        .override_with(|v: Vec<f64>| v)
        .unwrap();
    assert_eq!(train(data()), baseline);
    assert_eq!(wrong.replaced(), 0);
    let error = wrong.error().unwrap();
    assert_eq!(
        error.to_string(),
        "cannot override `loader` in `train` with a function of `alloc::vec::Vec<f64>`: the \
         variable is a `alloc::boxed::Box<dyn core::iter::traits::iterator::Iterator<Item = \
         alloc::vec::Vec<f64>>>`"
    );
}

#[test]
fn only_overridable_focus_variables_can_be_overridden() {
    let gv = given();
    let error = gv
        .probe("train > weight")
        .unwrap()
        .override_with(|w: f64| w)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`weight` in `train` is not overridable: mark it `#[probe(overridable(weight))]` \
         (overridable there: loader)"
    );
    let error = gv
        .probe("train(loader)")
        .unwrap()
        .override_with(|l: Loader| l)
        .unwrap_err();
    assert!(
        matches!(error, ProbeError::OverrideWithoutFocus { .. }),
        "{error}"
    );
}

#[test]
fn an_override_and_a_stream_on_the_same_variable() {
    use giving::prelude::*;
    let gv = given();
    let seen = gv.probe("train > loader").unwrap();
    let _same = gv
        .probe("train > loader")
        .unwrap()
        .override_with(|l: Loader| l)
        .unwrap();
    train(data());
    gv.finish().unwrap();
    let names: Vec<String> = futures::executor::block_on(seen.key::<String>("loader").collect());
    assert_eq!(names.len(), 1);
    assert!(names[0].starts_with("alloc::boxed::Box<dyn"), "{names:?}");
}

#[giving::probe(overridable(scale))]
fn rescale(x: f64) -> f64 {
    let mut scale = 2.0;
    scale += 1.0;
    x * scale
}

/// As in ptera, every assignment of an overridable variable goes through the override, not
/// only its `let`.
#[test]
fn a_mutable_binding_is_overridden_at_each_assignment() {
    let gv = given();
    let half = gv
        .probe("rescale > scale")
        .unwrap()
        .override_with(|s: f64| s / 2.0)
        .unwrap();
    // Bound to 2.0, replaced by 1.0; `+= 1.0` makes 2.0, replaced by 1.0.
    assert_eq!(rescale(10.0), 10.0);
    assert_eq!(half.replaced(), 2);
    drop(half);
    assert_eq!(rescale(10.0), 30.0);
}

/// A dropped override lets go of its closure (and what it captured) at once, although the
/// thread's pooled frame may keep the plan that named its probe.
#[test]
fn a_dropped_override_drops_its_closure() {
    let captured = Arc::new(());
    let gv = given();
    let held = captured.clone();
    let halve = gv
        .probe("rescale > scale")
        .unwrap()
        .override_with(move |s: f64| {
            let _ = &held;
            s / 2.0
        })
        .unwrap();
    assert_eq!(rescale(10.0), 10.0);
    assert_eq!(Arc::strong_count(&captured), 2);
    drop(halve);
    assert_eq!(Arc::strong_count(&captured), 1);
    gv.finish().unwrap();
}

#[giving::probe(overridable(step))]
fn count_up(steps: Vec<u32>) -> u32 {
    let mut last = 0;
    for (n, mut step) in steps.into_iter().enumerate() {
        step += n as u32;
        last = step;
    }
    last
}

/// A `for` variable bound `mut` in a tuple pattern is replaced at each iteration, and its
/// later assignment too.
#[test]
fn a_mutable_for_variable_in_a_tuple_pattern_is_overridden() {
    assert_eq!(count_up(vec![1, 1, 1]), 3);
    let gv = given();
    let doubled = gv
        .probe("count_up > step")
        .unwrap()
        .override_with(|s: u32| s * 2)
        .unwrap();
    // Last iteration: 1 → 2, `+= 2` → 4 → 8.
    assert_eq!(count_up(vec![1, 1, 1]), 8);
    assert_eq!(doubled.replaced(), 6);
    gv.finish().unwrap();
}

// A late initialisation is the point: the form the macro must keep assigned once.
#[giving::probe(overridable(chosen))]
#[allow(clippy::needless_late_init)]
fn choose(flag: bool) -> u32 {
    let chosen;
    if flag {
        chosen = 1;
    } else {
        chosen = 2;
    }
    chosen
}

/// A `let` without a value, assigned once later (in either branch), is overridden at that
/// assignment: the binding stays assigned once, as the compiler requires of a non-`mut` one.
#[test]
fn a_deferred_binding_is_overridden_where_it_is_assigned() {
    use giving::prelude::*;

    assert_eq!(choose(true), 1);
    let gv = given();
    let seen = gv.probe("choose > chosen").unwrap();
    let tenfold = gv
        .probe("choose > chosen")
        .unwrap()
        .override_with(|c: u32| c * 10)
        .unwrap();
    assert_eq!(choose(true), 10);
    assert_eq!(choose(false), 20);
    assert_eq!(tenfold.replaced(), 2);
    drop(tenfold);
    gv.finish().unwrap();
    let seen: Vec<u32> = futures::executor::block_on(seen.key::<u32>("chosen").collect());
    assert_eq!(seen, [10, 20]);
}
