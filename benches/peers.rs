//! giving against the channels a Rust user would pick instead, in one run, on the same
//! workloads: f64 losses given on the benchmark thread and drained on one other thread.
//!
//! | workload | giving | peers |
//! |---|---|---|
//! | 1 lossless subscriber | `give!(loss)`, `gv.stream()` taken by value (`next`) and by reference (`next_ref`) | `tokio::sync::mpsc` unbounded, `crossbeam-channel` unbounded, `flume` unbounded, `tokio::sync::broadcast` (lossy) |
//! | 10 lossless subscribers | 10 × `gv.stream()`, by value and by reference | 10 senders of each channel, `broadcast` with 10 receivers |
//! | `key("loss").map.filter.min` | the keyed pipeline off-thread | `tokio::sync::mpsc` + `StreamExt`; `rxrust` (a synchronous `Subject` on the giving thread) |
//! | one `Bounded(1024)` subscriber | `stream_with(Delivery::Bounded(1024))` | `tokio::sync::broadcast(1024)` |
//!
//! A peer's message is `Arc<(u64, f64)>` (a step and a loss), as a user replacing `give!` with
//! a channel would send; a giving event also carries its timestamp and call site. Taken by
//! value, a giving event is cloned for its subscriber as a peer's `Arc` is (one atomic
//! increment, and a decrement when dropped); taken by reference, it is read where the scope
//! wrote it, which no channel can offer (a channel hands over what it holds).
//!
//! **Reading the figures.** Each benchmark's time is for `EVENTS` events, from the first send
//! until the consumer has received the last one (a pipeline: until its result is known);
//! criterion's throughput line gives events per second, and time / `EVENTS` is the cost of one
//! event end to end. Compare rows of the same group: they ran in the same process, one after
//! the other. `broadcast` loses what its ring overwrites; its losses are printed once per
//! group (`lost …`), so its figure is not a lossless one. On a 2-core machine the producer and
//! the consumer each have a core; anything else running skews all rows alike.
//!
//! Run: `cargo bench -p giving --bench peers`; short: add `-- --warm-up-time 1
//! --measurement-time 5`.

// criterion_group! generates a `pub fn benches` with no doc comment (and takes no attribute).
#![expect(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use giving::prelude::*;
use giving::{Delivery, EventStream, give, given};

const EVENTS: u64 = 1_000_000;

type Message = Arc<(u64, f64)>;

fn loss(i: u64) -> f64 {
    (i % 1000) as f64 * 0.001
}

/// Runs `bench` as a criterion benchmark timed by the durations it returns.
fn timed(
    group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    bench: impl Fn() -> Duration,
) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| (0..iters).map(|_| bench()).sum())
    });
}

/// How a giving subscriber takes its events.
#[derive(Clone, Copy)]
enum Take {
    /// `stream.next()`: each event cloned out (a reference-count increment and decrement).
    ByValue,
    /// `stream.next_ref()`: each event read where the scope wrote it.
    ByReference,
}

/// giving: `subscribers` streams (with `delivery`) drained on one consumer thread.
fn giving_fan_out(subscribers: usize, delivery: Delivery, take: Take) -> Duration {
    let gv = given();
    let streams: Vec<EventStream> = (0..subscribers).map(|_| gv.stream_with(delivery)).collect();
    let consumer = std::thread::spawn(move || {
        let drains = streams.into_iter().map(|mut stream| async move {
            let mut received = 0u64;
            match take {
                Take::ByValue => {
                    while let Some(event) = stream.next().await {
                        black_box(&event);
                        received += 1;
                    }
                }
                Take::ByReference => {
                    while let Some(event) = stream.next_ref().await {
                        black_box(event);
                        received += 1;
                    }
                }
            }
            received
        });
        futures::executor::block_on(futures::future::join_all(drains))
    });
    let start = Instant::now();
    for i in 0..EVENTS {
        let loss = loss(i);
        give!(loss);
    }
    gv.finish().unwrap();
    let received = consumer.join().unwrap();
    let elapsed = start.elapsed();
    if delivery == Delivery::Lossless {
        assert!(received.iter().all(|&n| n == EVENTS));
    }
    elapsed
}

/// Sends `EVENTS` messages to every sender, then waits for `consumer` to have drained them
/// all: the part every channel peer shares.
fn send_all<Tx>(
    senders: Vec<Tx>,
    send: impl Fn(&Tx, Message),
    consumer: std::thread::JoinHandle<Vec<u64>>,
) -> Duration {
    let start = Instant::now();
    for i in 0..EVENTS {
        let message = Arc::new((i, loss(i)));
        for tx in &senders {
            send(tx, message.clone());
        }
    }
    drop(senders);
    let received = consumer.join().unwrap();
    let elapsed = start.elapsed();
    assert!(received.iter().all(|&n| n == EVENTS));
    elapsed
}

fn tokio_mpsc(subscribers: usize) -> Duration {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..subscribers)
        .map(|_| tokio::sync::mpsc::unbounded_channel::<Message>())
        .unzip();
    let consumer = std::thread::spawn(move || {
        let drains = receivers.into_iter().map(|mut rx| async move {
            let mut received = 0u64;
            while let Some(m) = rx.recv().await {
                black_box(&m);
                received += 1;
            }
            received
        });
        futures::executor::block_on(futures::future::join_all(drains))
    });
    send_all(
        senders,
        |tx, m| {
            let _ = tx.send(m);
        },
        consumer,
    )
}

/// How many messages `messages` yields, each looked at.
fn count(messages: impl Iterator<Item = Message>) -> u64 {
    messages.fold(0, |n, m| {
        black_box(m);
        n + 1
    })
}

/// A blocking channel's receivers drained by one consumer thread, each in turn (they are
/// unbounded, so the producer never waits for it).
fn drain_in_turn<Rx: Send + 'static>(
    receivers: Vec<Rx>,
    count: fn(&Rx) -> u64,
) -> std::thread::JoinHandle<Vec<u64>> {
    std::thread::spawn(move || receivers.iter().map(count).collect())
}

/// A blocking channel peer: one channel per subscriber (`channel` makes one), each drained in
/// turn by one consumer thread, sent to by `send`.
fn blocking_peer<Tx, Rx: Send + 'static>(
    subscribers: usize,
    channel: fn() -> (Tx, Rx),
    count: fn(&Rx) -> u64,
    send: fn(&Tx, Message),
) -> Duration {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..subscribers).map(|_| channel()).unzip();
    send_all(senders, send, drain_in_turn(receivers, count))
}

fn crossbeam(subscribers: usize) -> Duration {
    blocking_peer(
        subscribers,
        crossbeam_channel::unbounded::<Message>,
        |rx| count(rx.iter()),
        |tx, m| {
            let _ = tx.send(m);
        },
    )
}

fn flume(subscribers: usize) -> Duration {
    blocking_peer(
        subscribers,
        flume::unbounded::<Message>,
        |rx| count(rx.iter()),
        |tx, m| {
            let _ = tx.send(m);
        },
    )
}

/// `tokio::sync::broadcast`: one send for all receivers, but a slow receiver loses what the
/// ring overwrites. Returns the time and the events lost over all receivers.
fn broadcast(subscribers: usize, capacity: usize) -> (Duration, u64) {
    let (tx, _) = tokio::sync::broadcast::channel::<Message>(capacity);
    let receivers: Vec<_> = (0..subscribers).map(|_| tx.subscribe()).collect();
    let consumer = std::thread::spawn(move || {
        let drains = receivers.into_iter().map(|mut rx| async move {
            use tokio::sync::broadcast::error::RecvError;
            let mut lost = 0u64;
            loop {
                match rx.recv().await {
                    Ok(m) => {
                        black_box(&m);
                    }
                    Err(RecvError::Lagged(n)) => lost += n,
                    Err(RecvError::Closed) => return lost,
                }
            }
        });
        futures::executor::block_on(futures::future::join_all(drains))
    });
    let start = Instant::now();
    for i in 0..EVENTS {
        let _ = tx.send(Arc::new((i, loss(i))));
    }
    drop(tx);
    let lost = consumer.join().unwrap().iter().sum();
    (start.elapsed(), lost)
}

fn fan_out(c: &mut Criterion) {
    for subscribers in [1, 10] {
        let mut group = c.benchmark_group(format!("peers/{subscribers} lossless subscriber(s)"));
        group.throughput(Throughput::Elements(EVENTS));
        group.sample_size(10);
        timed(&mut group, "giving", || {
            giving_fan_out(subscribers, Delivery::Lossless, Take::ByValue)
        });
        timed(&mut group, "giving by reference (next_ref)", || {
            giving_fan_out(subscribers, Delivery::Lossless, Take::ByReference)
        });
        timed(&mut group, "tokio mpsc unbounded", || {
            tokio_mpsc(subscribers)
        });
        timed(&mut group, "crossbeam-channel unbounded", || {
            crossbeam(subscribers)
        });
        timed(&mut group, "flume unbounded", || flume(subscribers));
        let lost = std::sync::atomic::AtomicU64::new(0);
        let runs = std::sync::atomic::AtomicU64::new(0);
        timed(&mut group, "tokio broadcast(1024), lossy", || {
            let (elapsed, n) = broadcast(subscribers, 1024);
            lost.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            elapsed
        });
        report_losses(&lost, &runs, subscribers);
        group.finish();
    }
}

fn report_losses(
    lost: &std::sync::atomic::AtomicU64,
    runs: &std::sync::atomic::AtomicU64,
    receivers: usize,
) {
    let runs = runs.load(std::sync::atomic::Ordering::Relaxed).max(1);
    let lost = lost.load(std::sync::atomic::Ordering::Relaxed);
    let share = lost as f64 / (runs * EVENTS * receivers as u64) as f64;
    println!(
        "tokio broadcast(1024): lost {:.1}% of the events ({} receivers)",
        100.0 * share,
        receivers
    );
}

/// The smallest doubled loss above 0.5: what every pipeline must find.
fn expected_min() -> f64 {
    (0..1000)
        .map(|i| i as f64 * 0.001 * 2.0)
        .filter(|l| *l > 0.5)
        .fold(f64::INFINITY, f64::min)
}

fn giving_pipeline() -> Duration {
    let gv = given();
    let stream = gv.stream();
    let consumer = std::thread::spawn(move || {
        futures::executor::block_on(
            stream
                .key::<f64>("loss")
                .map(|l| l * 2.0)
                .filter(|l| *l > 0.5)
                .min(),
        )
    });
    let start = Instant::now();
    for i in 0..EVENTS {
        let loss = loss(i);
        give!(loss);
    }
    gv.finish().unwrap();
    let min = consumer.join().unwrap();
    let elapsed = start.elapsed();
    assert_eq!(min, Some(expected_min()));
    elapsed
}

fn tokio_pipeline() -> Duration {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Message>();
    let consumer = std::thread::spawn(move || {
        // Spelled out: giving's prelude has operators of the same names.
        use futures::StreamExt;
        let losses = tokio_stream::wrappers::UnboundedReceiverStream::new(rx);
        let doubled = StreamExt::map(losses, |m| m.1 * 2.0);
        let kept = StreamExt::filter(doubled, |l| std::future::ready(*l > 0.5));
        futures::executor::block_on(StreamExt::fold(kept, f64::INFINITY, |min, l| {
            std::future::ready(min.min(l))
        }))
    });
    let start = Instant::now();
    for i in 0..EVENTS {
        let _ = tx.send(Arc::new((i, loss(i))));
    }
    drop(tx);
    let min = consumer.join().unwrap();
    let elapsed = start.elapsed();
    assert_eq!(min, expected_min());
    elapsed
}

/// rxrust: a synchronous pipeline, run by the giving thread itself on every `next`.
fn rxrust_pipeline() -> Duration {
    use rxrust::prelude::*;
    let mut min = f64::INFINITY;
    let start = Instant::now();
    {
        let mut subject = LocalSubject::new();
        subject
            .clone()
            .map(|m: Message| m.1 * 2.0)
            .filter(|l| *l > 0.5)
            .min()
            .subscribe(|m| min = m);
        for i in 0..EVENTS {
            subject.next(Arc::new((i, loss(i))));
        }
        subject.complete();
    }
    let elapsed = start.elapsed();
    assert_eq!(min, expected_min());
    elapsed
}

fn pipelines(c: &mut Criterion) {
    let mut group = c.benchmark_group("peers/key.map.filter.min");
    group.throughput(Throughput::Elements(EVENTS));
    group.sample_size(10);
    timed(&mut group, "giving", giving_pipeline);
    timed(&mut group, "tokio mpsc + StreamExt", tokio_pipeline);
    timed(
        &mut group,
        "rxrust LocalSubject (same thread)",
        rxrust_pipeline,
    );
    group.finish();
}

fn bounded(c: &mut Criterion) {
    let mut group = c.benchmark_group("peers/one Bounded(1024) subscriber");
    group.throughput(Throughput::Elements(EVENTS));
    group.sample_size(10);
    timed(&mut group, "giving Bounded(1024)", || {
        giving_fan_out(1, Delivery::Bounded(1024), Take::ByValue)
    });
    let lost = std::sync::atomic::AtomicU64::new(0);
    let runs = std::sync::atomic::AtomicU64::new(0);
    timed(&mut group, "tokio broadcast(1024)", || {
        let (elapsed, n) = broadcast(1, 1024);
        lost.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        elapsed
    });
    report_losses(&lost, &runs, 1);
    group.finish();
}

fn no_listener(c: &mut Criterion) {
    let mut group = c.benchmark_group("peers/nobody listening");
    group.bench_function("give! (no scope open)", |b| {
        b.iter(|| {
            let loss = black_box(0.5f64);
            give!(loss);
        })
    });
    group.bench_function("empty loop body (baseline)", |b| {
        b.iter(|| black_box(0.5f64))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(2));
    targets = fan_out, pipelines, bounded, no_listener
}
criterion_main!(benches);
