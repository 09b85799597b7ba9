//! The log instrument's throughput for 3-field events, end to end through a scope (`give` →
//! writer thread → file). The format alone (`LogWriter`, `LogReader`) is measured by
//! giving-log's `log` bench.
//!
//! Run: `cargo bench -p giving-instruments --bench log`.

// criterion_group! generates a `pub fn benches` with no doc comment (and takes no attribute).
#![expect(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use giving::{Event, Timestamp};
use giving_instruments::Overseer;
use giving_instruments::log::MsgpackLog;

const N: u64 = 200_000;

fn event(i: u64) -> Event {
    Event::builder()
        .field("step", i)
        .field("loss", 1.0 / (i as f64 + 1.0))
        .field("task", "train")
        .time(Timestamp::from_nanos(1_700_000_000_000_000_000 + i))
        .build()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let events: Vec<Event> = (0..N).map(event).collect();
    let path = dir.path().join("bench.msgpack");

    let mut group = c.benchmark_group("log");
    group.throughput(Throughput::Elements(N));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));

    // Logs are never overwritten: each iteration removes the last one first, inside the timed
    // loop where the writer used to truncate it (an unlink costs less than that truncation).
    let remove = |path: &std::path::Path| {
        let _ = std::fs::remove_file(path);
    };
    group.bench_function("give 3-field events into a logged scope", |b| {
        b.iter(|| {
            remove(&path);
            let log = MsgpackLog::create(&path).unwrap();
            let run = Overseer::new().with(log).ctrl_c(false).run(|| {
                let giver = giving::Giver::current();
                for event in &events {
                    giver.give(event.clone());
                }
            });
            assert!(run.problems.is_empty());
        });
    });

    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
