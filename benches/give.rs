//! The cost of giving: with nobody listening (`give!`, and the timeline's `tracepoint!` and
//! `instant!`), and end to end to 1 and 10 lossless subscribers
//! draining on other threads.
//!
//! Run: `cargo bench --bench give`. Figures per event are the reported time divided by the
//! element count (criterion prints it as throughput).

// criterion_group! generates a `pub fn benches` with no doc comment (and takes no attribute).
#![expect(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use giving::prelude::*;
use giving::{give, given};

fn give_without_listener(c: &mut Criterion) {
    // The loop body alone, to subtract from the figure below.
    c.bench_function("give!/baseline (empty loop body)", |b| {
        b.iter(|| black_box(0.5f64))
    });
    c.bench_function("give!/no listener", |b| {
        b.iter(|| {
            let loss = black_box(0.5f64);
            give!(loss);
        })
    });
    // A tracepoint and an instant cost what `give!` costs: the name is not even formatted.
    let channel = giving::timeline::Channel::new("bench");
    c.bench_function("tracepoint!/no listener", |b| {
        b.iter(|| {
            let step = black_box(3u64);
            let _span = giving::tracepoint!(channel, "step {step}");
        })
    });
    c.bench_function("instant!/no listener", |b| {
        b.iter(|| {
            let step = black_box(3u64);
            giving::instant!(channel, "mark {step}");
        })
    });
}

/// Gives `events` f64 values to `subscribers` lossless streams, all drained by one consumer
/// thread (as `Given::spawn` runs pipelines on its one background worker), and returns the
/// time from the first give until the consumer has read every event.
fn end_to_end(events: u64, subscribers: usize) -> Duration {
    let gv = given();
    let streams: Vec<_> = (0..subscribers).map(|_| gv.stream()).collect();
    let consumer = std::thread::spawn(move || {
        let drains = streams.into_iter().map(|mut stream| async move {
            let mut received = 0u64;
            while let Some(event) = stream.next().await {
                black_box(&event);
                received += 1;
            }
            received
        });
        futures::executor::block_on(futures::future::join_all(drains))
    });
    let start = Instant::now();
    for i in 0..events {
        let loss = i as f64;
        give!(loss);
    }
    gv.finish().unwrap();
    let received = consumer.join().unwrap();
    let elapsed = start.elapsed();
    assert!(received.iter().all(|&n| n == events));
    elapsed
}

fn give_to_subscribers(c: &mut Criterion) {
    const EVENTS: u64 = 5_000_000;
    let mut group = c.benchmark_group("give!/end to end");
    group.throughput(Throughput::Elements(EVENTS));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for subscribers in [1, 10] {
        group.bench_function(
            format!("{subscribers} lossless subscriber(s), 5M events"),
            |b| b.iter_custom(|iters| (0..iters).map(|_| end_to_end(EVENTS, subscribers)).sum()),
        );
    }
    group.finish();
}

criterion_group!(benches, give_without_listener, give_to_subscribers);
criterion_main!(benches);
