//! `{bench}.{tag}.data` in milabench's form: one JSON object per line, `{"event", "data",
//! "pipe"}`, as milabench's `DataReporter` writes voir's `LogEntry`s. The runner writes
//! `config`, `meta`, `start` and `end` itself; each event of the child becomes a `data` line,
//! and each of voir's out-of-band lines (`{"$event": NAME, "$data": …}`) an event `NAME`, as
//! voir's `Multiplexer` turns them, so that milabench's `summary.py` sees a `stop`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use giving::vocab::keys;
use giving::{Event, Value};

use crate::report::pyjson::{write_float, write_str, write_value};

/// The `task` milabench's `summary.py` reads rates under (`train_rate`): a rate the child gave
/// without a task is written under it, as voir's rate instruments give theirs.
const TRAIN: &str = "train";

/// The key milabench's `aggregate` takes a `data` line's time from.
const TIME: &str = "time";

/// The writer of one process's `.data` lines.
pub(crate) struct DataLines {
    out: BufWriter<File>,
    line: String,
}

impl DataLines {
    /// Creates (truncates) `path`.
    pub(crate) fn create(path: &Path) -> std::io::Result<Self> {
        Ok(Self {
            out: BufWriter::new(File::create(path)?),
            line: String::new(),
        })
    }

    /// Opens `path` to add lines after what is there (after the writer was lost to a panic).
    pub(crate) fn append(path: &Path) -> std::io::Result<Self> {
        Ok(Self {
            out: BufWriter::new(File::options().append(true).open(path)?),
            line: String::new(),
        })
    }

    /// A line the runner writes (`config`, `meta`, `start`, `end`): `pipe` is `null`.
    pub(crate) fn runner(&mut self, event: &str, data: &serde_json::Value) -> std::io::Result<()> {
        self.line.clear();
        self.line.push_str("{\"event\":");
        write_str(event, &mut self.line);
        self.line.push_str(",\"data\":");
        self.line
            .push_str(&serde_json::to_string(data).unwrap_or_else(|_| "null".to_owned()));
        self.line.push_str(",\"pipe\":null}\n");
        self.out.write_all(self.line.as_bytes())
    }

    /// `start`: the command line and the wall-clock time, as voir's `Multiplexer` writes it.
    pub(crate) fn start(&mut self, argv: &[String]) -> std::io::Result<()> {
        let data = serde_json::json!({ "command": argv, "time": now() });
        self.runner("start", &data)
    }

    /// `end`: the command line, the time and the return code (`-signal` when a signal ended
    /// the process, as Python's `Popen.returncode`; `null` when it never started).
    pub(crate) fn end(&mut self, argv: &[String], return_code: Option<i64>) -> std::io::Result<()> {
        let data =
            serde_json::json!({ "command": argv, "time": now(), "return_code": return_code });
        self.runner("end", &data)?;
        self.out.flush()
    }

    /// A line for an event the child sent: its own `$event` when it is one of voir's
    /// out-of-band lines, else a `data` line with the event's fields, `task: "train"` added to
    /// a rate that has no task, and `time` (the event's, in seconds since the epoch) added
    /// where the child gave none.
    pub(crate) fn child(&mut self, event: &Event) -> std::io::Result<()> {
        self.line.clear();
        match event.get(keys::VOIR_EVENT).and_then(Value::as_str) {
            Some(name) => {
                self.line.push_str("{\"event\":");
                write_str(name, &mut self.line);
                self.line.push_str(",\"data\":");
                write_value(
                    event.get(keys::VOIR_DATA).unwrap_or(&Value::Null),
                    &mut self.line,
                );
                self.line.push_str(",\"pipe\":\"data\"");
                // voir spreads a line's other keys over the entry; the entry's own keep theirs.
                for (key, value) in event.iter() {
                    if ![keys::VOIR_EVENT, keys::VOIR_DATA, "event", "data", "pipe"].contains(&key)
                    {
                        self.line.push(',');
                        write_str(key, &mut self.line);
                        self.line.push(':');
                        write_value(value, &mut self.line);
                    }
                }
                self.line.push_str("}\n");
            }
            None => {
                self.line.push_str("{\"event\":\"data\",\"data\":{");
                let mut first = true;
                let mut field = |line: &mut String, key: &str| {
                    if !first {
                        line.push(',');
                    }
                    first = false;
                    write_str(key, line);
                    line.push(':');
                };
                for (key, value) in event.iter() {
                    field(&mut self.line, key);
                    write_value(value, &mut self.line);
                }
                if event.has(keys::RATE) && !event.has(keys::TASK) {
                    field(&mut self.line, keys::TASK);
                    write_str(TRAIN, &mut self.line);
                }
                if !event.has(TIME) {
                    field(&mut self.line, TIME);
                    write_float(event.time().as_secs_f64(), &mut self.line);
                }
                self.line.push_str("},\"pipe\":\"data\"}\n");
            }
        }
        self.out.write_all(self.line.as_bytes())
    }

    /// What could not be read from the child, as voir's `format_error` entry.
    pub(crate) fn format_error(&mut self, message: &str) -> std::io::Result<()> {
        let data = serde_json::json!({ "type": "ProtocolError", "message": message });
        self.runner("format_error", &data)
    }
}

/// Seconds since the epoch, as Python's `time.time()`.
fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

#[cfg(test)]
mod tests {
    use giving::Timestamp;

    use super::*;

    fn lines(write: impl FnOnce(&mut DataLines)) -> Vec<serde_json::Value> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.D0.data");
        let mut out = DataLines::create(&path).unwrap();
        write(&mut out);
        // The buffer is written as the writer is dropped.
        drop(out);
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn an_untagged_rate_is_trains_and_every_data_line_has_a_time() {
        let at = Timestamp::from_nanos(1_500_000_000);
        let read = lines(|out| {
            out.child(&Event::new_at([("rate", 12.5)], at)).unwrap();
            out.child(&Event::new_at(
                [
                    ("rate", Value::F64(3.0)),
                    ("task", Value::from("early_stop")),
                ],
                at,
            ))
            .unwrap();
            out.child(&Event::new_at([("loss", 0.5), ("time", 7.0)], at))
                .unwrap();
        });
        assert_eq!(
            read[0],
            serde_json::json!({"event": "data", "pipe": "data",
                "data": {"rate": 12.5, "task": "train", "time": 1.5}})
        );
        assert_eq!(read[1]["data"]["task"], "early_stop");
        // The child's own time is kept.
        assert_eq!(
            read[2]["data"],
            serde_json::json!({"loss": 0.5, "time": 7.0})
        );
    }

    #[test]
    fn voirs_out_of_band_lines_become_their_own_events() {
        let read = lines(|out| {
            out.child(&Event::new([("$event", "stop")])).unwrap();
            let phase = Value::Map([("name".to_owned(), Value::from("run_script"))].into());
            out.child(&Event::new([
                ("$event", Value::from("phase")),
                ("$data", phase),
            ]))
            .unwrap();
            out.start(&["x".to_owned()]).unwrap();
            out.end(&["x".to_owned()], Some(-15)).unwrap();
        });
        assert_eq!(
            read[0],
            serde_json::json!({"event": "stop", "data": null, "pipe": "data"})
        );
        assert_eq!(read[1]["data"]["name"], "run_script");
        assert_eq!(read[2]["event"], "start");
        assert_eq!(read[2]["data"]["command"], serde_json::json!(["x"]));
        assert_eq!(read[3]["data"]["return_code"], -15);
        assert!(read[3]["pipe"].is_null());
    }
}
