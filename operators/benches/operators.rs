//! Per-item cost of the generic operators, driven by `futures::stream::iter` (no channel, no
//! runtime overhead except where a clock is needed). Throughput is in items: criterion's
//! `thrpt` line gives items/s, and `time / N` the cost per item.
//!
//! ```text
//! CARGO_TARGET_DIR=target-ops cargo bench -p giving-operators --bench operators -- \
//!     --warm-up-time 1 --measurement-time 3
//! ```

// criterion_group! generates a `pub fn benches` with no doc comment (and takes no attribute).
#![expect(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::executor::block_on;
use futures::stream;
use giving_operators::{ReduceOps, StreamOps};

const N: u64 = 5_000_000;

fn map_filter_min(c: &mut Criterion) {
    let mut g = c.benchmark_group("map_filter_min");
    g.throughput(Throughput::Elements(N));
    g.sample_size(10);
    g.bench_function("5M items", |b| {
        b.iter(|| {
            let min = block_on(
                stream::iter(0..black_box(N))
                    .map(|x| (x % 1000) as f64 * 0.5 - 7.0)
                    .filter(|x| *x > -5.0)
                    .min(),
            );
            black_box(min)
        })
    });
    g.finish();
}

fn rolling(c: &mut Criterion) {
    let mut g = c.benchmark_group("rolling_100");
    g.throughput(Throughput::Elements(N));
    g.sample_size(10);
    g.bench_function("average_rolling", |b| {
        b.iter(|| {
            block_on(
                stream::iter(0..black_box(N))
                    .map(|x| (x % 1000) as f64)
                    .average_rolling(100)
                    .for_each(|x| {
                        black_box(x);
                    }),
            )
        })
    });
    g.bench_function("min_rolling", |b| {
        b.iter(|| {
            block_on(
                stream::iter(0..black_box(N))
                    .map(|x| (x.wrapping_mul(2654435761) % 1000) as f64)
                    .min_rolling(100)
                    .for_each(|x| {
                        black_box(x);
                    }),
            )
        })
    });
    g.bench_function("variance_rolling", |b| {
        b.iter(|| {
            block_on(
                stream::iter(0..black_box(N))
                    .map(|x| (x % 1000) as f64)
                    .variance_rolling(100)
                    .for_each(|x| {
                        black_box(x);
                    }),
            )
        })
    });
    g.finish();
}

fn throttle(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let mut g = c.benchmark_group("throttle");
    g.throughput(Throughput::Elements(N));
    g.sample_size(10);
    g.bench_function("1ms window", |b| {
        b.iter(|| {
            rt.block_on(
                stream::iter(0..black_box(N))
                    .throttle(Duration::from_millis(1))
                    .count(),
            )
        })
    });
    g.finish();
}

fn share(c: &mut Criterion) {
    const M: u64 = 1_000_000;
    let mut g = c.benchmark_group("share");
    g.throughput(Throughput::Elements(M));
    g.sample_size(10);
    g.bench_function("2 consumers", |b| {
        b.iter(|| {
            let a = stream::iter(0..black_box(M)).share();
            let b = a.clone();
            block_on(futures::future::join(a.count(), b.count()))
        })
    });
    g.finish();
}

criterion_group!(benches, map_filter_min, rolling, throttle, share);
criterion_main!(benches);
