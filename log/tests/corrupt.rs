//! Damaged logs: the reader reports where the damage is, skips it, reads the events after it,
//! and stays linear in time and bounded in memory whatever a corrupt length declares.

use std::path::Path;

use giving::{Event, Timestamp, Value};
use giving_log::{LogError, LogHeader, LogReader, LogWriter};

/// The reader's buffer must stay below this (its chunk is 256 KiB; the records are tiny).
const BUFFER_BOUND: usize = 4 << 20;

/// A small event with a list (`progress`), whose length is the byte the tests corrupt.
fn small_event(i: u64, n: u64) -> Event {
    Event::builder()
        .field("step", i)
        .field("loss", 1.0 / (i as f64 + 1.0))
        .field("progress", Value::List(vec![Value::U64(i), Value::U64(n)]))
        .field("task", "train")
        .time(Timestamp::from_nanos(1_700_000_000_000_000_000 + i * 1_000))
        .build()
}

/// Writes `n` small events and returns the file offsets of the records `marked` (flushing
/// before each of them to learn it), in order.
fn write_log(path: &Path, n: u64, marked: impl Fn(u64) -> bool) -> Vec<u64> {
    let mut writer = LogWriter::create(path, &LogHeader::for_this_process()).unwrap();
    let mut offsets = Vec::new();
    for i in 0..n {
        if marked(i) {
            writer.flush().unwrap();
            offsets.push(std::fs::metadata(path).unwrap().len());
        }
        writer.write(&small_event(i, n)).unwrap();
    }
    writer.close(0).unwrap();
    offsets
}

/// The offset of the `progress` list's marker (`0x92`: a list of 2) in the record at `record`.
fn progress_marker(bytes: &[u8], record: u64) -> usize {
    let record = record as usize;
    let key = b"\xa8progress\x92";
    let at = bytes[record..]
        .windows(key.len())
        .position(|w| w == key)
        .expect("the record has a progress list");
    record + at + key.len() - 1
}

/// What reading a whole log gave.
struct Read {
    steps: Vec<u64>,
    corrupt: Vec<(u64, u64)>,
    truncated: bool,
    max_buffer: usize,
    skipped_bytes: u64,
    damaged_regions: u64,
}

fn read_all(path: &Path) -> Read {
    let mut reader = LogReader::open(path).unwrap();
    let mut read = Read {
        steps: Vec::new(),
        corrupt: Vec::new(),
        truncated: false,
        max_buffer: 0,
        skipped_bytes: 0,
        damaged_regions: 0,
    };
    while let Some(item) = reader.next() {
        read.max_buffer = read.max_buffer.max(reader.buffer_capacity());
        match item {
            // A changed key or value may go unnoticed: such an event has no `step`, or another.
            Ok(event) => read.steps.extend(event.get_as::<u64>("step").ok()),
            Err(LogError::Corrupt {
                offset, skipped, ..
            }) => read.corrupt.push((offset, skipped)),
            Err(error) if error.is_truncation() => read.truncated = true,
            Err(error) => panic!("an error that is neither damage nor a cut: {error}"),
        }
    }
    read.skipped_bytes = reader.skipped_bytes();
    read.damaged_regions = reader.damaged_regions();
    read
}

#[test]
fn a_corrupt_length_in_a_40_mb_log_is_skipped_and_reading_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.msgpack");
    const N: u64 = 550_000;
    let offsets = write_log(&path, N, |i| i == N / 2 || i == N / 2 + 1);
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 40_000_000, "{} bytes", bytes.len());
    let (damaged, next) = (offsets[0], offsets[1]);
    // The list's one-byte length (a list of 2) becomes a 32-bit length: its next four bytes
    // (the first item, `0xce` and three bytes of N/2) declare some 3.4 billion items.
    let flipped = progress_marker(&bytes, damaged);
    bytes[flipped] = 0xdd;
    std::fs::write(&path, &bytes).unwrap();

    let started = std::time::Instant::now();
    let read = read_all(&path);
    eprintln!(
        "read a {} MB log with a corrupt length in {:.2?}",
        bytes.len() / 1_000_000,
        started.elapsed()
    );
    assert_eq!(
        read.corrupt,
        vec![(damaged, next - damaged)],
        "the damaged record is reported where it is, and skipped up to the next one"
    );
    assert!(damaged <= flipped as u64 && (flipped as u64) < next);
    assert_eq!(read.damaged_regions, 1);
    assert_eq!(read.skipped_bytes, next - damaged);
    assert!(!read.truncated, "the log was closed: no cut");
    let expected: Vec<u64> = (0..N).filter(|i| *i != N / 2).collect();
    assert_eq!(read.steps, expected, "every other event is read, in order");
    assert!(read.steps.len() as f64 >= 0.999 * N as f64);
    assert!(
        read.max_buffer < BUFFER_BOUND,
        "the buffer grew to {} bytes",
        read.max_buffer
    );
}

/// Every byte of a few records replaced by a few values (bit flips, and markers with long
/// lengths): reading ends, loses at most the changed record and the next, reports damage no
/// earlier than the changed record and no later than the next, and never buffers much.
#[test]
fn any_one_changed_byte_loses_at_most_two_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.msgpack");
    const N: u64 = 300;
    let records = write_log(&path, N, |_| true);
    let clean = std::fs::read(&path).unwrap();
    let damaged_path = dir.path().join("damaged.msgpack");
    for record in 150..153 {
        for at in records[record] as usize..records[record + 1] as usize {
            let old = clean[at];
            let news = [
                old ^ 0x01,
                old ^ 0x08,
                old ^ 0x80,
                0xc1,
                0xda,
                0xdb,
                0xdc,
                0xdd,
                0xdf,
            ];
            for new in news.into_iter().filter(|new| *new != old) {
                let mut bytes = clean.clone();
                bytes[at] = new;
                std::fs::write(&damaged_path, &bytes).unwrap();
                let read = read_all(&damaged_path);
                let case = format!("byte {at} (record {record}): 0x{old:02x} -> 0x{new:02x}");
                let missing: Vec<u64> = (0..N).filter(|i| !read.steps.contains(i)).collect();
                assert!(
                    missing
                        .iter()
                        .all(|i| *i == record as u64 || *i == record as u64 + 1),
                    "{case}: only the changed record and the next may be lost: {missing:?}"
                );
                assert!(!read.truncated, "{case}: a closed log is not cut");
                for (offset, _) in &read.corrupt {
                    assert!(
                        records[record] <= *offset && *offset < records[record + 2],
                        "{case}: damage reported at byte {offset}"
                    );
                }
                assert!(read.max_buffer < BUFFER_BOUND, "{case}");
            }
        }
    }
}

#[test]
fn garbage_after_the_last_record_is_damage_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
    for i in 0..10 {
        writer.write(&small_event(i, 10)).unwrap();
    }
    writer.flush().unwrap();
    let end = std::fs::metadata(&path).unwrap().len();
    drop(writer);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&[0xc1; 100]);
    std::fs::write(&path, &bytes).unwrap();

    let mut reader = LogReader::open(&path).unwrap();
    let items: Vec<_> = reader.by_ref().collect();
    assert_eq!(items.len(), 11, "ten events, then the damage, then nothing");
    match &items[10] {
        Err(LogError::Corrupt {
            offset,
            skipped,
            records,
            ..
        }) => {
            assert_eq!((*offset, *skipped, *records), (end, 100, 10));
        }
        other => panic!("expected the damage, got {other:?}"),
    }
    assert_eq!(reader.skipped_bytes(), 100);
    assert_eq!(reader.damage()[0].offset, end);
}

#[test]
fn a_string_longer_than_the_file_reserves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let offsets = write_log(&path, 1000, |i| i == 500);
    let mut bytes = std::fs::read(&path).unwrap();
    // `"task": "train"` (fixstr of 5) becomes a str 32 of `b"trai"` = 1.9 GB: more than the
    // file holds and than a record may be.
    let record = offsets[0] as usize;
    let key = b"\xa4task\xa5";
    let at = record + bytes[record..].windows(6).position(|w| w == key).unwrap() + 5;
    bytes[at] = 0xdb;
    std::fs::write(&path, &bytes).unwrap();
    let read = read_all(&path);
    assert_eq!(read.corrupt.len(), 1);
    assert_eq!(read.corrupt[0].0, offsets[0]);
    assert_eq!(read.steps.len(), 999);
    assert!(read.max_buffer < BUFFER_BOUND);
}
