//! Writing logs: files that are never overwritten, lazy values that panic, and events or
//! headers the reader would refuse. (The log instrument's side is giving-instruments'
//! `log_sink` test.)

use giving::{Event, Timestamp, Value};
use giving_log::{LogError, LogHeader, LogReader, LogWriter};

/// Reads every event of a log that must be whole.
fn read_events(path: &std::path::Path) -> Vec<Event> {
    let mut reader = LogReader::open(path).unwrap();
    let events: Vec<Event> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(reader.end().unwrap().events, events.len() as u64);
    events
}

#[test]
fn create_refuses_an_existing_file_and_leaves_it_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("precious.msgpack");
    std::fs::write(&path, b"precious").unwrap();
    let error = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap_err();
    match &error {
        LogError::Io {
            action,
            path: named,
            source,
        } => {
            assert_eq!(*action, "create");
            assert_eq!(named, &path);
            assert_eq!(source.kind(), std::io::ErrorKind::AlreadyExists);
        }
        other => panic!("expected an I/O error, got {other}"),
    }
    assert!(error.to_string().contains("precious.msgpack"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
}

/// A lazy value whose reading panics (a tensor on a device that went away).
struct Panics;

impl giving::Resolve for Panics {
    fn resolve(&self) -> Result<Value, giving::ResolveError> {
        panic!("device lost")
    }
}

#[test]
fn a_lazy_value_that_panics_is_written_as_nil_with_an_error_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
    for step in 0..5u64 {
        let loss = if step == 2 {
            Value::lazy(Panics)
        } else {
            Value::F64(0.5)
        };
        let event = Event::builder()
            .field("step", step)
            .field("loss", loss)
            .field("after", "kept")
            .time(Timestamp::from_nanos(1_000 + step))
            .build();
        writer.write(&event).unwrap();
    }
    let summary = writer.close(0).unwrap();
    assert_eq!(summary.events, 5);
    assert_eq!(summary.unresolved, 1, "the panic is counted as unresolved");

    let events = read_events(&path);
    assert_eq!(events.len(), 5);
    let hurt = &events[2];
    assert_eq!(hurt.get("loss"), Some(&Value::Null));
    assert_eq!(hurt.get_as::<String>("after").unwrap(), "kept");
    assert_eq!(hurt.get_as::<u64>("step").unwrap(), 2);
    assert_eq!(
        hurt.get_as::<String>("$error").unwrap(),
        "loss: panicked: device lost"
    );
    assert_eq!(hurt.time(), Timestamp::from_nanos(1_002));
    assert_eq!(events[3].get_as::<f64>("loss").unwrap(), 0.5);
    assert!(events[3].get("$error").is_none());
}

/// A value of `depth` nested lists around `leaf` (none: the innermost list is empty).
fn nested(depth: usize, leaf: Option<Value>) -> Value {
    let mut value = Value::List(leaf.into_iter().collect());
    for _ in 1..depth {
        value = Value::List(vec![value]);
    }
    value
}

#[test]
fn the_writer_refuses_what_its_reader_refuses_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
    // A field's value is at depth 1: the reader reads 128 levels, the last an empty list or a
    // number inside 127 lists.
    let deepest = [nested(128, None), nested(127, Some(Value::U64(7)))];
    let too_deep = [nested(129, None), nested(128, Some(Value::U64(7)))];
    let too_long = Value::Bytes(vec![0; (64 << 20) + 1]);
    let mut written = Vec::new();
    for (i, value) in deepest.iter().enumerate() {
        let event = Event::builder()
            .field("step", i as u64)
            .field("deep", value.clone())
            .build();
        writer.write(&event).unwrap();
        written.push(event);
    }
    for value in too_deep.iter().chain([&too_long]) {
        let event = Event::builder()
            .field("step", 99u64)
            .field("bad", value.clone())
            .build();
        let error = writer.write(&event).unwrap_err();
        let LogError::Refused { record, key, .. } = &error else {
            panic!("expected a refusal, got {error}");
        };
        assert_eq!(
            (record.as_str(), key.as_str()),
            ("event 3", "bad"),
            "{error}"
        );
        assert!(error.to_string().contains("run.msgpack"), "{error}");
    }
    let event = Event::builder().field("step", 2u64).build();
    writer.write(&event).unwrap();
    written.push(event);
    let summary = writer.close(0).unwrap();
    assert_eq!(summary.events, 3, "refused events are not counted");

    let events = read_events(&path);
    assert_eq!(
        events, written,
        "nothing of a refused event reached the file"
    );
}

#[test]
fn a_header_the_reader_would_refuse_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("run", Value::from("x".repeat(2 << 20))),
        ("version", Value::U64(1)),
        ("config", nested(200, None)),
    ];
    for (key, value) in cases {
        let path = dir.path().join(format!("{key}.msgpack"));
        let mut header = LogHeader::for_this_process();
        header.extra.insert(key.to_owned(), value);
        let error = LogWriter::create(&path, &header).unwrap_err();
        assert!(
            matches!(&error, LogError::Refused { record, .. } if record == "the header"),
            "{key}: {error}"
        );
        assert!(!path.exists(), "{key}: no file is left behind");
    }
}
