//! Log format throughput for 3-field events: encoding and writing (`LogWriter`), and reading
//! back (`LogReader`). The instrument end to end (`give` → writer thread → file) is measured by
//! giving-instruments' `log` bench.
//!
//! Run: `cargo bench -p giving-log --bench log`.

// criterion_group! generates a `pub fn benches` with no doc comment (and takes no attribute).
#![expect(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use giving::{Event, Timestamp};
use giving_log::{LogHeader, LogReader, LogWriter};

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
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
