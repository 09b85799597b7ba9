//! The cost of `#[probe]` when nobody probes: an annotated hot function against the same
//! function plain, per call (a small function, where the call's one relaxed load is the
//! largest share) and over a loop of 1,000 items (where each binding and iteration has its
//! hook). And the cost while a probe is active (`f > x`, and the forms that read more:
//! `f(a) > x`, `outer > f > x`), beside the same function giving the same event by hand with
//! `give!` (every stream drained by a pipeline, as a user's would be).
//!
//! Run: `cargo bench --bench probe`. Exact instruction counts, which do not depend on the
//! machine's load: `valgrind --tool=callgrind` on the bench binary with `--bench --profile-time`
//! (see docs/probes.md).

// criterion_group! generates a `pub fn benches` with no doc comment (and takes no attribute).
#![expect(missing_docs)]
// A probe observes named bindings: returning one is the point of these functions.
#![allow(clippy::let_and_return)]

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{Bencher, BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use giving::given;
use giving::prelude::*;

#[path = "workloads/probe_steps.rs"]
mod probe_steps;
use probe_steps::*;

/// A row whose events (the probe `selector`'s, or every event given when `None`) a pipeline
/// counts: at least one must have come when the row ran (a criterion filter may skip it).
fn counted_row(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    selector: Option<&str>,
    mut run: impl FnMut(&mut Bencher<'_, WallTime>),
) {
    let gv = given();
    let events = match selector {
        Some(selector) => gv.spawn(gv.probe(selector).unwrap().count()),
        None => gv.spawn(gv.stream().count()),
    };
    let mut ran = false;
    group.bench_function(name, |b| {
        ran = true;
        run(b)
    });
    gv.finish().unwrap();
    let counted = events.join().unwrap();
    assert!(!ran || counted > 0, "{name}: no event came");
}

fn per_call(c: &mut Criterion) {
    let mut group = c.benchmark_group("probe/per call");
    group.bench_function("plain", |b| b.iter(|| step_plain(black_box(2.0))));
    group.bench_function("annotated, not probed", |b| {
        b.iter(|| step_annotated(black_box(2.0)))
    });
    let gv = given();
    let probe = gv.probe("sum_annotated > acc").unwrap();
    group.bench_function("annotated, another function probed", |b| {
        b.iter(|| step_annotated(black_box(2.0)))
    });
    drop(probe);
    drop(gv);
    // One event per call, each drained by a pipeline counting them: the probe, then the same
    // event given by hand. The forms that read more than the focus: an argument beside it, an
    // enclosing call.
    counted_row(
        &mut group,
        "annotated, probed (event per call)",
        Some("step_annotated > z"),
        |b| b.iter(|| step_annotated(black_box(2.0))),
    );
    counted_row(
        &mut group,
        "annotated, probed f(a) > x (event per call)",
        Some("step_multi(x) > z"),
        |b| b.iter(|| step_multi(black_box(2.0))),
    );
    counted_row(
        &mut group,
        "annotated, probed outer > f > x (event per call)",
        Some("outer_loop > step_inner > z"),
        |b| {
            b.iter_custom(|iterations| {
                let start = std::time::Instant::now();
                black_box(outer_loop(iterations));
                start.elapsed()
            })
        },
    );
    counted_row(
        &mut group,
        "plain, give! by hand (event per call)",
        None,
        |b| b.iter(|| step_given(black_box(2.0))),
    );
    group.finish();
}

fn per_loop(c: &mut Criterion) {
    let xs: Vec<f64> = (0..1_000).map(f64::from).collect();
    let mut group = c.benchmark_group("probe/loop of 1000");
    group.throughput(Throughput::Elements(xs.len() as u64));
    group.bench_function("plain", |b| b.iter(|| sum_plain(black_box(&xs))));
    group.bench_function("annotated, not probed", |b| {
        b.iter(|| sum_annotated(black_box(&xs)))
    });
    group.finish();
}

criterion_group!(benches, per_call, per_loop);
criterion_main!(benches);
