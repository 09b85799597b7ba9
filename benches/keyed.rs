//! Keyed pipelines end to end: events given with `give!` on the benchmark thread, a keyed
//! pipeline consuming them on another thread, timed from the first give until the pipeline's
//! result is known.
//!
//! - `key::<f64>("loss").map(..).filter(..).min()` (target ≤ 50 ns per event);
//! - `key::<f64>("loss").average_rolling(100)` (target ≤ 60 ns per event);
//! - `key::<f64>("loss").throttle(1 ms)`, on a tokio runtime (the time operators need one).
//!
//! A second group runs the same pipelines over events already in memory, on one thread: the
//! operators' own cost, apart from the give → queue → consumer-thread handoff of the core.
//!
//! Run: `cargo bench -p giving --bench keyed`; short run:
//! `cargo bench -p giving --bench keyed -- --warm-up-time 1 --measurement-time 5`.
//! Figures per event are the reported time divided by the element count (criterion prints it
//! as throughput).

// criterion_group! generates a `pub fn benches` with no doc comment (and takes no attribute).
#![expect(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use giving::prelude::*;
use giving::{Event, EventStream, event, give, given};

const EVENTS: u64 = 5_000_000;

/// How the consumer thread runs its pipeline.
#[derive(Clone, Copy)]
enum Executor {
    /// `futures::executor::block_on`.
    Plain,
    /// A current-thread tokio runtime with the time driver (for time operators).
    Tokio,
}

/// Gives `events` losses while `pipeline` consumes them on another thread; returns the time
/// from the first give until the pipeline's result, and the result.
fn end_to_end<T, F, Fut>(events: u64, executor: Executor, pipeline: F) -> (Duration, T)
where
    F: FnOnce(EventStream) -> Fut + Send + 'static,
    Fut: Future<Output = T>,
    T: Send + 'static,
{
    let gv = given();
    let stream = gv.stream();
    let consumer = std::thread::spawn(move || match executor {
        Executor::Plain => futures::executor::block_on(pipeline(stream)),
        Executor::Tokio => tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("tokio runtime")
            .block_on(pipeline(stream)),
    });
    let start = Instant::now();
    for i in 0..events {
        let loss = (i % 1000) as f64 * 0.001;
        give!(loss);
    }
    gv.finish().unwrap();
    let result = consumer.join().unwrap();
    (start.elapsed(), result)
}

/// What the `min` pipeline must find: the smallest doubled loss above 0.5.
fn expected_min() -> Option<f64> {
    (0..1000)
        .map(|i| i as f64 * 0.001 * 2.0)
        .filter(|l| *l > 0.5)
        .reduce(f64::min)
}

fn keyed_pipelines(c: &mut Criterion) {
    let mut group = c.benchmark_group("keyed/end to end");
    group.throughput(Throughput::Elements(EVENTS));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));

    // Reference: the same handoff with no operator at all (as benches/give.rs measures it).
    group.bench_function("count only (reference), 5M events", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let (elapsed, n) = end_to_end(EVENTS, Executor::Plain, |s| s.count());
                    assert_eq!(n, EVENTS as usize);
                    elapsed
                })
                .sum()
        })
    });

    group.bench_function("key.map.filter.min, 5M events", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let (elapsed, min) = end_to_end(EVENTS, Executor::Plain, |s| {
                        s.key::<f64>("loss")
                            .map(|l| l * 2.0)
                            .filter(|l| *l > 0.5)
                            .min()
                    });
                    assert_eq!(min, expected_min());
                    elapsed
                })
                .sum()
        })
    });

    group.bench_function("key.average_rolling(100), 5M events", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let (elapsed, n) = end_to_end(EVENTS, Executor::Plain, |s| {
                        s.key::<f64>("loss")
                            .average_rolling(100)
                            .inspect(|a| {
                                black_box(a);
                            })
                            .count()
                    });
                    assert_eq!(n, EVENTS as usize);
                    elapsed
                })
                .sum()
        })
    });

    group.bench_function("key.throttle(1ms), 5M events", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let (elapsed, n) = end_to_end(EVENTS, Executor::Tokio, |s| {
                        s.key::<f64>("loss")
                            .throttle(Duration::from_millis(1))
                            .count()
                    });
                    assert!(n >= 1);
                    elapsed
                })
                .sum()
        })
    });

    group.finish();
}

/// The operators alone, on one thread: the same pipelines over events already in memory, so the
/// figure is the pipeline's own cost per event, without the give → queue → consumer handoff.
fn pipelines_only(c: &mut Criterion) {
    const IN_MEMORY: u64 = 1_000_000;
    let events: Vec<Event> = (0..IN_MEMORY)
        .map(|i| {
            let loss = (i % 1000) as f64 * 0.001;
            event!(loss)
        })
        .collect();
    let source = || futures::stream::iter(events.iter().cloned());
    let mut group = c.benchmark_group("keyed/pipeline only");
    group.throughput(Throughput::Elements(IN_MEMORY));
    group.sample_size(10);
    group.bench_function("count only (reference), 1M events", |b| {
        b.iter(|| {
            let n = futures::executor::block_on(source().count());
            assert_eq!(n, IN_MEMORY as usize);
        })
    });
    group.bench_function("key.map.filter.min, 1M events", |b| {
        b.iter(|| {
            let min = futures::executor::block_on(
                source()
                    .key::<f64>("loss")
                    .map(|l| l * 2.0)
                    .filter(|l| *l > 0.5)
                    .min(),
            );
            assert_eq!(min, expected_min());
        })
    });
    group.bench_function("key.average_rolling(100), 1M events", |b| {
        b.iter(|| {
            let n = futures::executor::block_on(
                source()
                    .key::<f64>("loss")
                    .average_rolling(100)
                    .inspect(|a| {
                        black_box(a);
                    })
                    .count(),
            );
            assert_eq!(n, IN_MEMORY as usize);
        })
    });
    group.finish();
}

criterion_group!(benches, keyed_pipelines, pipelines_only);
criterion_main!(benches);
