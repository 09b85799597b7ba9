//! The MessagePack log: round trips, cut files, refused files, other readers.

use std::path::Path;

use giving::{Event, Timestamp, Value};
use giving_log::{self as log, LogError, LogHeader, LogReader, LogWriter};

/// A deterministic pseudo-random sequence (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn three_field_event(i: u64) -> Event {
    Event::builder()
        .field("step", i)
        .field("loss", 1.0 / (i as f64 + 1.0))
        .field("task", "train")
        .time(Timestamp::from_nanos(1_700_000_000_000_000_000 + i * 1_000))
        .build()
}

/// Every kind of value, nested, with edge-case numbers.
fn varied_event(i: u64, rng: &mut Rng) -> Event {
    let r = rng.next();
    let mut map = std::collections::BTreeMap::new();
    map.insert(
        "0".to_owned(),
        Value::from(vec![Value::F64(1.5), Value::U64(80)]),
    );
    map.insert("name".to_owned(), Value::from("gpu"));
    Event::builder()
        .field("i64", (r as i64).wrapping_neg())
        .field("small", Value::I64(i as i64 % 200 - 100))
        .field("pos_i64", Value::I64(i as i64))
        .field("u64", r)
        .field("f", f64::from_bits(r & 0x7fef_ffff_ffff_ffff))
        .field("s", "é".repeat((i % 70) as usize))
        .field("b", Value::Bytes(vec![7; (i % 300) as usize]))
        .field("none", Value::Null)
        .field("flag", i.is_multiple_of(2))
        .field("list", Value::List((0..(i % 20)).map(Value::U64).collect()))
        .field("map", Value::Map(map))
        .time(Timestamp::from_nanos(r))
        .build()
}

fn write_log(path: &Path, events: impl IntoIterator<Item = Event>) -> u64 {
    let mut writer = LogWriter::create(path, &LogHeader::for_this_process()).unwrap();
    for event in events {
        writer.write(&event).unwrap();
    }
    writer.close(0).unwrap().bytes
}

fn assert_same(read: &Event, written: &Event) {
    assert_eq!(read, written);
    assert_eq!(read.time(), written.time());
    let kinds = |e: &Event| e.iter().map(|(_, v)| v.kind()).collect::<Vec<_>>();
    assert_eq!(kinds(read), kinds(written));
}

#[test]
fn a_million_events_read_back_equal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("million.msgpack");
    const N: u64 = 1_000_000;
    write_log(&path, (0..N).map(three_field_event));
    let mut reader = LogReader::open(&path).unwrap();
    for i in 0..N {
        let event = reader.next().unwrap().unwrap();
        assert_same(&event, &three_field_event(i));
    }
    assert!(reader.next().is_none(), "a closed log ends cleanly");
    assert_eq!(reader.end().unwrap().events, N);
}

#[test]
fn every_value_kind_reads_back_equal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("varied.msgpack");
    let events: Vec<Event> = {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        (0..2_000).map(|i| varied_event(i, &mut rng)).collect()
    };
    write_log(&path, events.iter().cloned());
    let read: Vec<Event> = LogReader::open(&path)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(read.len(), events.len());
    for (read, written) in read.iter().zip(&events) {
        assert_same(read, written);
    }
}

#[test]
fn a_cut_file_keeps_every_complete_record_and_reports_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.msgpack");
    let mut rng = Rng(42);
    let events: Vec<Event> = (0..300).map(|i| varied_event(i, &mut rng)).collect();
    // Where each record ends: flush after each one and read the file's size.
    let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
    writer.flush().unwrap();
    let size = || std::fs::metadata(&path).unwrap().len();
    let header_end = size();
    let mut ends = Vec::new();
    for event in &events {
        writer.write(event).unwrap();
        writer.flush().unwrap();
        ends.push(size());
    }
    writer.close(0).unwrap();
    let bytes = std::fs::read(&path).unwrap();

    let cut_path = dir.path().join("cut.msgpack");
    let mut cuts: Vec<u64> = (0..300)
        .map(|_| header_end + rng.next() % (bytes.len() as u64 - header_end))
        .collect();
    cuts.extend([
        header_end,
        ends[0],
        ends[0] + 1,
        ends[299],
        bytes.len() as u64 - 1,
    ]);
    for cut in cuts {
        std::fs::write(&cut_path, &bytes[..cut as usize]).unwrap();
        let mut kept = 0;
        let mut error = None;
        for item in LogReader::open(&cut_path).unwrap() {
            match item {
                Ok(event) => {
                    assert_same(&event, &events[kept]);
                    kept += 1;
                }
                Err(e) => error = Some(e),
            }
        }
        let complete = ends.iter().filter(|end| **end <= cut).count();
        assert_eq!(
            kept, complete,
            "cut at {cut}: every complete record is kept"
        );
        let error = error.expect("a cut log reports the cut");
        let LogError::Truncated {
            offset,
            records,
            partial,
            ..
        } = error
        else {
            panic!("cut at {cut}: expected a truncation, got {error}");
        };
        assert_eq!(records as usize, kept);
        let last_end = if kept == 0 {
            header_end
        } else {
            ends[kept - 1]
        };
        assert_eq!(offset, last_end, "cut at {cut}");
        assert_eq!(offset + partial, cut, "the cut is reported where it is");
    }
}

#[test]
fn a_log_without_end_record_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
    writer.write(&three_field_event(0)).unwrap();
    writer.flush().unwrap();
    let items: Vec<_> = LogReader::open(&path).unwrap().collect();
    assert_eq!(items.len(), 2);
    let error = items[1].as_ref().unwrap_err();
    assert!(error.is_truncation());
    assert!(
        error.to_string().contains("without its end record"),
        "{error}"
    );
    drop(writer);
}

#[test]
fn random_files_are_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("random.bin");
    let mut rng = Rng(7);
    for len in [0usize, 1, 5, 100, 10_000] {
        for _ in 0..20 {
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            let error = LogReader::open(&path).unwrap_err();
            assert!(matches!(error, LogError::NotALog { .. }), "{error}");
            let message = error.to_string();
            assert!(message.contains("random.bin") && message.contains("is not a giving log"));
        }
    }
    std::fs::write(&path, b"{\"format\": \"json\"}").unwrap();
    let error = log::read(&path).unwrap_err();
    assert!(error.to_string().contains("is not a giving log"), "{error}");
    let error = LogReader::open(dir.path().join("missing")).unwrap_err();
    assert!(error.to_string().starts_with("cannot open"), "{error}");
}

#[test]
fn a_future_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v9.msgpack");
    let header = LogHeader {
        version: 9,
        ..LogHeader::for_this_process()
    };
    LogWriter::create(&path, &header).unwrap().close(0).unwrap();
    let error = LogReader::open(&path).unwrap_err();
    assert!(matches!(
        error,
        LogError::UnsupportedVersion { version: 9, .. }
    ));
}

#[test]
fn python_msgpack_reads_the_log() {
    let python = std::process::Command::new("python3")
        .args(["-c", "import msgpack"])
        .output();
    if !matches!(&python, Ok(out) if out.status.success()) {
        eprintln!("SKIPPED: python3 with the `msgpack` package is not available");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let mut rng = Rng(3);
    let mut events: Vec<Event> = (0..100).map(three_field_event).collect();
    events.push(varied_event(5, &mut rng));
    write_log(&path, events.iter().cloned());
    let script = r#"
import json, sys, msgpack
with open(sys.argv[1], "rb") as f:
    records = list(msgpack.Unpacker(f, raw=False, strict_map_key=False))
header, body, end = records[0], records[1:-1], records[-1]
assert header["format"] == "giving-log" and header["version"] == 1, header
assert end["events"] == len(body), end
print(json.dumps({"n": len(body), "first": body[0], "last_keys": list(body[-1]["data"])}))
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["n"], 101);
    assert_eq!(report["first"]["time"], 1_700_000_000_000_000_000u64);
    assert_eq!(report["first"]["data"]["task"], "train");
    assert_eq!(report["first"]["data"]["loss"], 1.0);
    let keys: Vec<&str> = events[100].keys().collect();
    assert_eq!(report["last_keys"], serde_json::json!(keys));
}
