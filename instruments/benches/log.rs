//! The MessagePack log's throughput for 3-field events, side by side in one run: the format
//! alone (giving-log's `LogWriter` and `LogReader`), and the instrument end to end through a
//! scope (`give` → writer thread → file), so what the instrument adds to the writer shows.
//!
//! Run: `cargo bench -p giving-instruments --bench log`.

// criterion_group! generates a `pub fn benches` with no doc comment (and takes no attribute).
#![expect(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use giving::{Event, Timestamp};
use giving_instruments::Overseer;
use giving_instruments::log::{LogHeader, LogReader, LogWriter, MsgpackLog};

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
    group.bench_function("write 3-field events (LogWriter)", |b| {
        b.iter(|| {
            remove(&path);
            let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
            for event in &events {
                writer.write(event).unwrap();
            }
            black_box(writer.close(0).unwrap());
        });
    });

    remove(&path);
    let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
    for event in &events {
        writer.write(event).unwrap();
    }
    writer.close(0).unwrap();
    group.bench_function("read 3-field events (LogReader)", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for event in LogReader::open(&path).unwrap() {
                black_box(event.unwrap());
                n += 1;
            }
            assert_eq!(n, N);
        });
    });

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
