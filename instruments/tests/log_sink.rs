//! The log instrument (`MsgpackLog`): names that never collide, files that are never
//! overwritten, what a scope gives written with its header, and lazy values that panic or
//! events and headers the reader would refuse reported without ending the log. The format
//! itself is tested in giving-log.

use giving::{Event, Value, give};
use giving_instruments::Overseer;
use giving_instruments::log::{LogReader, MsgpackLog};

/// Reads every event of a log that must be whole.
fn read_events(path: &std::path::Path) -> Vec<Event> {
    let mut reader = LogReader::open(path).unwrap();
    let events: Vec<Event> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(reader.end().unwrap().events, events.len() as u64);
    events
}

fn steps(path: &std::path::Path) -> Vec<u64> {
    read_events(path)
        .iter()
        .map(|e| e.get_as::<u64>("step").unwrap())
        .collect()
}

fn give_steps(log: MsgpackLog, n: u64) {
    let run = Overseer::new().with(log).ctrl_c(false).run(|| {
        for step in 0..n {
            give!(step);
        }
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
}

#[test]
fn two_logs_in_one_directory_in_one_second_get_two_files() {
    let dir = tempfile::tempdir().unwrap();
    let first = MsgpackLog::in_dir(dir.path()).unwrap();
    let second = MsgpackLog::in_dir(dir.path()).unwrap();
    let third = MsgpackLog::in_dir(dir.path()).unwrap();
    let paths = [first.path(), second.path(), third.path()].map(|p| p.to_path_buf());
    assert_ne!(paths[0], paths[1]);
    assert_ne!(paths[1], paths[2]);
    assert_ne!(paths[0], paths[2]);
    give_steps(first, 3);
    give_steps(second, 5);
    give_steps(third, 2);
    assert_eq!(steps(&paths[0]), [0, 1, 2], "the first log is kept whole");
    assert_eq!(steps(&paths[1]), [0, 1, 2, 3, 4]);
    assert_eq!(steps(&paths[2]), [0, 1]);
}

#[test]
fn create_refuses_an_existing_file_and_leaves_it_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("precious.msgpack");
    std::fs::write(&path, b"precious").unwrap();
    let error = MsgpackLog::create(&path).unwrap_err();
    assert!(error.to_string().starts_with("cannot create"), "{error}");
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
fn the_log_instrument_survives_a_panicking_lazy_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let run = Overseer::new()
        .with(MsgpackLog::create(&path).unwrap())
        .ctrl_c(false)
        .run(|| {
            for step in 0..10u64 {
                if step == 4 {
                    give!(step, loss = Value::lazy(Panics));
                } else {
                    give!(step, loss = 0.25);
                }
            }
        });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let events = read_events(&path);
    assert_eq!(events.len(), 10, "every event, closed cleanly");
    assert!(
        events[4]
            .get_as::<String>("$error")
            .unwrap()
            .contains("device lost")
    );
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
fn the_log_instrument_skips_a_refused_event_and_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let run = Overseer::new()
        .with(MsgpackLog::create(&path).unwrap())
        .ctrl_c(false)
        .run(|| {
            for step in 0..5u64 {
                if step == 2 {
                    give!(step, deep = nested(300, None));
                } else {
                    give!(step);
                }
            }
        });
    assert_eq!(run.problems.len(), 1, "{:?}", run.problems);
    let message = &run.problems[0].message;
    assert!(
        message.contains("event 3") && message.contains("`deep`"),
        "{message}"
    );
    assert_eq!(
        steps(&path),
        [0, 1, 3, 4],
        "the log goes on, closed cleanly"
    );
}

#[test]
fn a_log_instrument_with_a_refused_header_reports_it_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let log = MsgpackLog::create(&path)
        .unwrap()
        .header_field("format", "mine");
    let run = Overseer::new()
        .with(log)
        .ctrl_c(false)
        .run(|| give!(step = 1u64));
    assert_eq!(run.problems.len(), 1, "{:?}", run.problems);
    assert!(
        run.problems[0].message.contains("field `format`"),
        "{}",
        run.problems[0].message
    );
    assert!(!path.exists());
}

#[test]
fn the_log_instrument_writes_what_a_scope_gives_with_header() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    let log = MsgpackLog::create(&path)
        .unwrap()
        .crate_version("giving-models", "0.1.0")
        .header_field("run", "test");
    let run = giving_instruments::Overseer::new().with(log).run(|| {
        for step in 0..1000u64 {
            giving::give!(step, loss = 0.5, lazy = Value::lazy(Doubled(step)));
        }
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let reader = LogReader::open(&path).unwrap();
    let header = reader.header().clone();
    assert_eq!(header.crate_versions["giving-models"], "0.1.0");
    assert_eq!(header.extra["run"], Value::from("test"));
    assert!(!header.command_line.is_empty());
    let events: Vec<Event> = reader.collect::<Result<_, _>>().unwrap();
    assert_eq!(events.len(), 1000);
    assert_eq!(
        events[7].get_as::<u64>("lazy").unwrap(),
        14,
        "lazy values are resolved"
    );
}

struct Doubled(u64);

impl giving::Resolve for Doubled {
    fn resolve(&self) -> Result<Value, giving::ResolveError> {
        Ok(Value::U64(self.0 * 2))
    }
}
