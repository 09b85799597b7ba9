//! giving against the channels a Rust user would pick instead, in one run, on the same
//! workloads: f64 losses given on the benchmark thread and drained on one other thread —
//! first on the machine as it is, then again with a CPU hog (a busy thread per core, started
//! by this bench), since a training machine is never idle.
//!
//! | workload | giving | peers |
//! |---|---|---|
//! | 1 lossless subscriber | `give!(step, loss)`, `gv.stream()` taken by value (`next`) and by reference (`next_ref`), each event's `loss` read | `(u64, f64)` **by value** through `tokio::sync::mpsc`, `crossbeam-channel` and `flume` (unbounded); an `rtrb` SPSC ring with both sides spinning (the near-limit reference); `Arc<(u64, f64)>` through tokio mpsc and crossbeam; `tokio::sync::broadcast` (lossy) |
//! | 10 lossless subscribers | 10 × `gv.stream()`, by value and by reference | 10 channels of each peer, the tuple by value and as an `Arc`; `broadcast` with 10 receivers |
//! | `key("loss").map.filter.min` | the keyed pipeline off-thread | tokio mpsc of the tuple by value + `StreamExt`, and of an `Arc`; `rxrust` (a synchronous `Subject` on the giving thread) |
//! | one `Bounded(1024)` subscriber | `stream_with(Delivery::Bounded(1024))` | `tokio::sync::broadcast(1024)` |
//!
//! **The honest peer** is the tuple sent by value: a user replacing `give!(step, loss)` by hand
//! sends `(step, loss)`, not an `Arc`. The `Arc` rows stay as the peer for events shared by
//! several consumers. A giving event carries more than the tuple (its timestamp, its call
//! site, named fields of any type); taken by value it is cloned for its subscriber (one atomic
//! increment, and a decrement when dropped); taken by reference, it is read where the scope
//! wrote it, which no channel can offer (a channel hands over what it holds).
//!
//! **Reading the figures.** Each benchmark's time is for `EVENTS` events, from the first send
//! until the consumer has received the last one (a pipeline: until its result is known);
//! criterion's throughput line gives events per second, and time / `EVENTS` is the cost of one
//! event end to end. Compare rows of the same group: they ran in the same process, one after
//! the other. `broadcast` loses what its ring overwrites; its losses are printed once per
//! group (`lost …`), so its figure is not a lossless one. Groups whose name ends in `busy` ran
//! with the hog: four runnable threads on a 2-core machine, so every row slows; what matters
//! is how much each slows against its own quiet figure.
//!
//! At the end, a summary table puts each row's busy figure beside its quiet one (median ns per
//! event over every run of the row, warm-up runs included), with busy / quiet and giving's
//! rows against tokio's and crossbeam's tuple in the same mode. "giving, membarrier refused"
//! is the path taken where the feed cannot be claimed (every append under its lock). The
//! "paced" rows read as the instruments do ([`EventStream::paced`], 100 ms): the giving thread
//! never wakes the reader, which takes what came since its last tick in one batch.
//!
//! Run: `cargo bench -p giving --bench peers`; short: add `-- --warm-up-time 1
//! --measurement-time 3`; one mode: add `quiet` or `busy` (a criterion filter).

// criterion_group! generates a `pub fn benches` with no doc comment (and takes no attribute).
#![expect(missing_docs)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use giving::prelude::*;
use giving::{Delivery, EventStream, give, given};

const EVENTS: u64 = 1_000_000;

/// The paced rows' period: the instruments' (`giving_instruments::SINK_PACE`).
const PACE: Duration = Duration::from_millis(100);

/// What a user sends by hand instead of `give!(step, loss)`.
type Plain = (u64, f64);
/// The same, shared: the peer for an event several consumers hold.
type Shared = Arc<(u64, f64)>;

fn loss(i: u64) -> f64 {
    (i % 1000) as f64 * 0.001
}

fn plain(i: u64) -> Plain {
    (i, loss(i))
}

fn shared(i: u64) -> Shared {
    Arc::new((i, loss(i)))
}

/// A busy thread per core while it lives: the machine a training job shares.
struct Hog {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Hog {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..cores)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// The machine a group runs on: as it is, or with a [`Hog`].
#[derive(Clone, Copy)]
enum Machine {
    Quiet = 0,
    Busy = 1,
}

impl Machine {
    fn suffix(self) -> &'static str {
        match self {
            Machine::Quiet => "quiet",
            Machine::Busy => "busy",
        }
    }

    /// The hog, if this machine is busy (it runs until dropped).
    fn load(self) -> Option<Hog> {
        matches!(self, Machine::Busy).then(Hog::start)
    }
}

/// ns per event of every run of each (workload, row), quiet and busy: the summary table that
/// `all` prints at the end puts each row's busy figure beside its quiet one.
type Samples = BTreeMap<(String, String), [Vec<f64>; 2]>;

static SAMPLES: Mutex<Samples> = Mutex::new(BTreeMap::new());

/// A benchmark group `peers/{workload}, {quiet|busy}`: its rows are timed by criterion and
/// filed under `workload` for the summary.
struct Rows<'c> {
    group: BenchmarkGroup<'c, criterion::measurement::WallTime>,
    workload: String,
    machine: Machine,
}

impl<'c> Rows<'c> {
    fn new(c: &'c mut Criterion, workload: &str, machine: Machine) -> Self {
        let mut group = c.benchmark_group(format!("peers/{workload}, {}", machine.suffix()));
        group.throughput(Throughput::Elements(EVENTS));
        group.sample_size(10);
        Self {
            group,
            workload: workload.to_owned(),
            machine,
        }
    }

    /// Runs `bench` as a criterion benchmark timed by the durations it returns, and files each
    /// run's ns per event for the summary.
    fn timed(&mut self, name: &str, bench: impl Fn() -> Duration) {
        let key = (self.workload.clone(), name.to_owned());
        let machine = self.machine as usize;
        self.group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let elapsed = bench();
                        let ns = elapsed.as_nanos() as f64 / EVENTS as f64;
                        SAMPLES.lock().unwrap().entry(key.clone()).or_default()[machine].push(ns);
                        elapsed
                    })
                    .sum()
            })
        });
    }

    fn finish(self) {
        self.group.finish();
    }
}

fn median(samples: &[f64]) -> Option<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied()
}

/// Prints, per workload, each row's median ns per event quiet and busy, busy / quiet, and
/// giving's rows against tokio's and crossbeam's tuple in the same mode: the targets of
/// issue 41 read off one run.
fn print_summary() {
    let samples = SAMPLES.lock().unwrap();
    if samples.is_empty() {
        return;
    }
    let medians = |key: &(String, String)| -> [Option<f64>; 2] {
        samples
            .get(key)
            .map_or([None, None], |[q, b]| [median(q), median(b)])
    };
    let show = |x: Option<f64>| x.map_or("–".to_owned(), |x| format!("{x:.1}"));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "–".to_owned(),
    };
    println!(
        "\nSummary: median ns per event of every run, quiet and busy (a busy thread per core)\n"
    );
    println!(
        "| workload | row | quiet | busy | busy / quiet | vs tokio tuple, quiet / busy | vs crossbeam tuple, quiet / busy |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (workload, row) in samples.keys() {
        let [quiet, busy] = medians(&(workload.clone(), row.clone()));
        let peer = |name: &str| medians(&(workload.clone(), name.to_owned()));
        let (tokio, crossbeam) = (
            peer("tokio mpsc, tuple by value"),
            peer("crossbeam-channel, tuple by value"),
        );
        let against = |p: [Option<f64>; 2]| {
            if row.starts_with("giving") && p.iter().any(Option::is_some) {
                format!("{} / {}", ratio(quiet, p[0]), ratio(busy, p[1]))
            } else {
                String::new()
            }
        };
        println!(
            "| {workload} | {row} | {} | {} | {} | {} | {} |",
            show(quiet),
            show(busy),
            ratio(busy, quiet),
            against(tokio),
            against(crossbeam),
        );
    }
}

/// How a giving subscriber takes its events.
#[derive(Clone, Copy)]
enum Take {
    /// `stream.next()`: each event cloned out (a reference-count increment and decrement).
    ByValue,
    /// `stream.next_ref()`: each event read where the scope wrote it.
    ByReference,
}

/// giving: `subscribers` streams (with `delivery`, [paced](EventStream::paced) by `pace` if
/// given) drained on one consumer thread.
fn giving_fan_out(
    subscribers: usize,
    delivery: Delivery,
    take: Take,
    pace: Option<Duration>,
) -> Duration {
    let gv = given();
    let streams: Vec<EventStream> = (0..subscribers)
        .map(|_| {
            let stream = gv.stream_with(delivery);
            match pace {
                Some(period) => stream.paced(period),
                None => stream,
            }
        })
        .collect();
    let consumer = std::thread::spawn(move || {
        let drains = streams.into_iter().map(|mut stream| async move {
            let mut received = 0u64;
            match take {
                // Each event's loss read, as the channels' receivers take their tuple: a
                // reader that drops events unread never touches the line their fields are on.
                Take::ByValue => {
                    while let Some(event) = stream.next().await {
                        black_box(event.get("loss"));
                        received += 1;
                    }
                }
                Take::ByReference => {
                    while let Some(event) = stream.next_ref().await {
                        black_box(event.get("loss"));
                        received += 1;
                    }
                }
            }
            received
        });
        futures::executor::block_on(futures::future::join_all(drains))
    });
    let start = Instant::now();
    for step in 0..EVENTS {
        let loss = loss(step);
        give!(step, loss);
    }
    gv.finish().unwrap();
    let received = consumer.join().unwrap();
    let elapsed = start.elapsed();
    if delivery == Delivery::Lossless {
        assert!(received.iter().all(|&n| n == EVENTS));
    }
    elapsed
}

/// Sends `EVENTS` messages (`make` makes each) to every sender, then waits for `consumer` to
/// have drained them all: the part every channel peer shares.
fn send_all<Tx, M: Clone>(
    senders: Vec<Tx>,
    make: fn(u64) -> M,
    send: impl Fn(&Tx, M),
    consumer: std::thread::JoinHandle<Vec<u64>>,
) -> Duration {
    let start = Instant::now();
    for i in 0..EVENTS {
        let message = make(i);
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

fn tokio_mpsc<M: Clone + Send + 'static>(subscribers: usize, make: fn(u64) -> M) -> Duration {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..subscribers)
        .map(|_| tokio::sync::mpsc::unbounded_channel::<M>())
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
        make,
        |tx, m| {
            let _ = tx.send(m);
        },
        consumer,
    )
}

/// How many messages `messages` yields, each looked at.
fn count<M>(messages: impl Iterator<Item = M>) -> u64 {
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

fn crossbeam<M: Clone + Send + 'static>(subscribers: usize, make: fn(u64) -> M) -> Duration {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..subscribers)
        .map(|_| crossbeam_channel::unbounded::<M>())
        .unzip();
    let consumer = drain_in_turn(receivers, |rx| count(rx.iter()));
    send_all(
        senders,
        make,
        |tx, m| {
            let _ = tx.send(m);
        },
        consumer,
    )
}

fn flume<M: Clone + Send + 'static>(subscribers: usize, make: fn(u64) -> M) -> Duration {
    let (senders, receivers): (Vec<_>, Vec<_>) =
        (0..subscribers).map(|_| flume::unbounded::<M>()).unzip();
    let consumer = drain_in_turn(receivers, |rx| count(rx.iter()));
    send_all(
        senders,
        make,
        |tx, m| {
            let _ = tx.send(m);
        },
        consumer,
    )
}

/// A bounded SPSC ring (`rtrb`, 4096 slots) with both sides spinning, never parking: near the
/// limit of what handing a tuple between two cores costs. Not a peer a training loop could use
/// as is (a full ring stalls the loop; an empty one burns the consumer's core).
fn spsc_ring() -> Duration {
    let (mut tx, mut rx) = rtrb::RingBuffer::<Plain>::new(4096);
    let consumer = std::thread::spawn(move || {
        let mut received = 0u64;
        while received < EVENTS {
            match rx.pop() {
                Ok(m) => {
                    black_box(m);
                    received += 1;
                }
                Err(_) => std::hint::spin_loop(),
            }
        }
        received
    });
    let start = Instant::now();
    for i in 0..EVENTS {
        let mut message = plain(i);
        while let Err(rtrb::PushError::Full(back)) = tx.push(message) {
            message = back;
            std::hint::spin_loop();
        }
    }
    let received = consumer.join().unwrap();
    let elapsed = start.elapsed();
    assert_eq!(received, EVENTS);
    elapsed
}

/// `tokio::sync::broadcast`: one send for all receivers, but a slow receiver loses what the
/// ring overwrites. Returns the time and the events lost over all receivers.
fn broadcast(subscribers: usize, capacity: usize) -> (Duration, u64) {
    let (tx, _) = tokio::sync::broadcast::channel::<Shared>(capacity);
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
        let _ = tx.send(shared(i));
    }
    drop(tx);
    let lost = consumer.join().unwrap().iter().sum();
    (start.elapsed(), lost)
}

/// `broadcast` as a timed row, its losses summed for [`report_losses`].
fn broadcast_row(rows: &mut Rows<'_>, name: &str, receivers: usize) {
    let lost = AtomicU64::new(0);
    let runs = AtomicU64::new(0);
    rows.timed(name, || {
        let (elapsed, n) = broadcast(receivers, 1024);
        lost.fetch_add(n, Ordering::Relaxed);
        runs.fetch_add(1, Ordering::Relaxed);
        elapsed
    });
    report_losses(&lost, &runs, receivers);
}

fn report_losses(lost: &AtomicU64, runs: &AtomicU64, receivers: usize) {
    let runs = runs.load(Ordering::Relaxed);
    if runs == 0 {
        return; // filtered out
    }
    let share = lost.load(Ordering::Relaxed) as f64 / (runs * EVENTS * receivers as u64) as f64;
    println!(
        "tokio broadcast(1024): lost {:.1}% of the events ({} receivers)",
        100.0 * share,
        receivers
    );
}

fn fan_out(c: &mut Criterion, machine: Machine) {
    let _hog = machine.load();
    for subscribers in [1, 10] {
        let mut group = Rows::new(c, &format!("{subscribers} lossless subscriber(s)"), machine);
        group.timed("giving", || {
            giving_fan_out(subscribers, Delivery::Lossless, Take::ByValue, None)
        });
        if subscribers == 1 {
            // Where `membarrier` is refused (not Linux, a sandbox), every append takes the
            // feed's lock: that path's cost, on the same workload.
            group.timed("giving, membarrier refused", || {
                giving::__private::refuse_membarrier(true);
                let elapsed = giving_fan_out(1, Delivery::Lossless, Take::ByValue, None);
                giving::__private::refuse_membarrier(false);
                elapsed
            });
        }
        group.timed("giving by reference (next_ref)", || {
            giving_fan_out(subscribers, Delivery::Lossless, Take::ByReference, None)
        });
        // The instruments' way (a log, a dashboard, a rate): woken by the pacer's ticks,
        // never by the giving thread, and reading what came meanwhile in one batch.
        group.timed("giving paced (100 ms), by value", || {
            giving_fan_out(subscribers, Delivery::Lossless, Take::ByValue, Some(PACE))
        });
        group.timed("giving paced (100 ms), by reference", || {
            giving_fan_out(
                subscribers,
                Delivery::Lossless,
                Take::ByReference,
                Some(PACE),
            )
        });
        group.timed("tokio mpsc, tuple by value", || {
            tokio_mpsc(subscribers, plain)
        });
        group.timed("crossbeam-channel, tuple by value", || {
            crossbeam(subscribers, plain)
        });
        group.timed("flume, tuple by value", || flume(subscribers, plain));
        if subscribers == 1 {
            group.timed("rtrb SPSC ring, both spinning", spsc_ring);
        }
        group.timed("tokio mpsc, Arc", || tokio_mpsc(subscribers, shared));
        group.timed("crossbeam-channel, Arc", || crossbeam(subscribers, shared));
        broadcast_row(&mut group, "tokio broadcast(1024), lossy", subscribers);
        group.finish();
    }
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
    for step in 0..EVENTS {
        let loss = loss(step);
        give!(step, loss);
    }
    gv.finish().unwrap();
    let min = consumer.join().unwrap();
    let elapsed = start.elapsed();
    assert_eq!(min, Some(expected_min()));
    elapsed
}

/// tokio mpsc + `StreamExt`, the loss read from the message with `loss_of`.
fn tokio_pipeline<M: Send + 'static>(make: fn(u64) -> M, loss_of: fn(&M) -> f64) -> Duration {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<M>();
    let consumer = std::thread::spawn(move || {
        // Spelled out: giving's prelude has operators of the same names.
        use futures::StreamExt;
        let messages = tokio_stream::wrappers::UnboundedReceiverStream::new(rx);
        let doubled = StreamExt::map(messages, move |m| loss_of(&m) * 2.0);
        let kept = StreamExt::filter(doubled, |l| std::future::ready(*l > 0.5));
        futures::executor::block_on(StreamExt::fold(kept, f64::INFINITY, |min, l| {
            std::future::ready(min.min(l))
        }))
    });
    let start = Instant::now();
    for i in 0..EVENTS {
        let _ = tx.send(make(i));
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
            .map(|m: Plain| m.1 * 2.0)
            .filter(|l| *l > 0.5)
            .min()
            .subscribe(|m| min = m);
        for i in 0..EVENTS {
            subject.next(plain(i));
        }
        subject.complete();
    }
    let elapsed = start.elapsed();
    assert_eq!(min, expected_min());
    elapsed
}

fn pipelines(c: &mut Criterion, machine: Machine) {
    let _hog = machine.load();
    let mut group = Rows::new(c, "key.map.filter.min", machine);
    group.timed("giving", giving_pipeline);
    group.timed("tokio mpsc + StreamExt, tuple by value", || {
        tokio_pipeline(plain, |m| m.1)
    });
    group.timed("tokio mpsc + StreamExt, Arc", || {
        tokio_pipeline(shared, |m| m.1)
    });
    group.timed("rxrust LocalSubject (same thread)", rxrust_pipeline);
    group.finish();
}

fn bounded(c: &mut Criterion, machine: Machine) {
    let _hog = machine.load();
    let mut group = Rows::new(c, "one Bounded(1024) subscriber", machine);
    group.timed("giving Bounded(1024)", || {
        giving_fan_out(1, Delivery::Bounded(1024), Take::ByValue, None)
    });
    broadcast_row(&mut group, "tokio broadcast(1024)", 1);
    group.finish();
}

fn no_listener(c: &mut Criterion) {
    let mut group = c.benchmark_group("peers/nobody listening, quiet");
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

/// Every workload on the quiet machine, then on the busy one.
fn all(c: &mut Criterion) {
    for machine in [Machine::Quiet, Machine::Busy] {
        fan_out(c, machine);
        pipelines(c, machine);
        bounded(c, machine);
    }
    no_listener(c);
    print_summary();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    targets = all
}
criterion_main!(benches);
