//! The Chrome trace-event JSON encoder (`--trace-format json`): the JSON array format, one
//! event per line, written as it goes. A file cut after a line still loads in Perfetto and
//! `chrome://tracing`, which accept the array without its closing `]`.

use std::collections::HashMap;
use std::fmt::Write as _;

use giving::{Timestamp, Value};
use serde_json::json;

use super::model::{Args, Counter, Output, Process, Track};

/// Pseudo thread ids of channel tracks (JSON has no child tracks): far above real tids.
const CHANNEL_TIDS: u64 = 1 << 32;

/// Encodes records as trace-event JSON into a buffer the sink drains.
#[derive(Default)]
pub(crate) struct JsonEncoder {
    out: String,
    started: bool,
    pids: HashMap<u32, u32>,
    /// Tracks already named, with the tid they are written under.
    tids: HashMap<Track, u64>,
}

impl JsonEncoder {
    /// Takes the bytes encoded so far.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out).into_bytes()
    }

    /// Bytes encoded and not yet taken.
    pub(crate) fn buffered(&self) -> usize {
        self.out.len()
    }

    /// The closing of the array, once nothing more comes.
    pub(crate) fn close(&mut self) {
        if !self.started {
            self.out.push('[');
        }
        self.out.push_str("\n]\n");
    }

    fn line(&mut self, event: serde_json::Value) {
        self.out.push_str(if self.started { ",\n" } else { "[\n" });
        self.started = true;
        let _ = write!(self.out, "{event}");
    }

    fn pid(&mut self, process: u32) -> u32 {
        match self.pids.get(&process) {
            Some(pid) => *pid,
            None => {
                self.process(&Process {
                    index: process,
                    pid: process,
                    name: format!("process {process}"),
                });
                self.pids[&process]
            }
        }
    }

    /// The pid and tid a track is written under; its name is written the first time.
    fn ids(&mut self, track: &Track) -> (u32, u64) {
        let pid = self.pid(track.process);
        if let Some(tid) = self.tids.get(track) {
            return (pid, *tid);
        }
        let (tid, name) = match (&track.channel, &track.lane) {
            (None, None) => (track.tid, track.thread_name.to_string()),
            // A channel, or a label's track: a pseudo-thread named by its path.
            (channel, lane) => {
                let mut name = track.thread_name.to_string();
                for part in [channel, lane].into_iter().flatten() {
                    name.push_str(" / ");
                    name.push_str(part);
                }
                (CHANNEL_TIDS + self.tids.len() as u64, name)
            }
        };
        self.line(json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}}));
        self.tids.insert(track.clone(), tid);
        (pid, tid)
    }
}

impl Output for JsonEncoder {
    fn process(&mut self, process: &Process) {
        if self.pids.contains_key(&process.index) {
            return;
        }
        // Two logs of one pid (a merge) stay two processes.
        let taken = self.pids.values().any(|pid| *pid == process.pid);
        let pid = if taken {
            process
                .pid
                .wrapping_add(process.index.wrapping_mul(1 << 22))
        } else {
            process.pid
        };
        self.pids.insert(process.index, pid);
        self.line(
            json!({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": process.name}}),
        );
    }

    fn begin(&mut self, at: Timestamp, track: &Track, name: &str, args: &Args) {
        let (pid, tid) = self.ids(track);
        self.line(json!({
            "ph": "B", "name": name, "cat": category(track), "ts": micros(at),
            "pid": pid, "tid": tid, "args": object(args),
        }));
    }

    fn end(&mut self, at: Timestamp, track: &Track) {
        let (pid, tid) = self.ids(track);
        self.line(json!({"ph": "E", "ts": micros(at), "pid": pid, "tid": tid}));
    }

    fn instant(&mut self, at: Timestamp, track: &Track, name: &str, args: &Args) {
        let (pid, tid) = self.ids(track);
        self.line(json!({
            "ph": "i", "s": "t", "name": name, "cat": category(track), "ts": micros(at),
            "pid": pid, "tid": tid, "args": object(args),
        }));
    }

    fn counter(&mut self, at: Timestamp, counter: &Counter, value: f64) {
        let pid = self.pid(counter.process);
        // A graph is one counter event with a series per argument, as Chrome draws them.
        let (name, series) = match &counter.group {
            Some(group) => (group.to_string(), counter.name.as_str()),
            None => (counter.name.clone(), "value"),
        };
        self.line(json!({
            "ph": "C", "name": name, "ts": micros(at), "pid": pid, "args": {series: value},
        }));
    }
}

fn category(track: &Track) -> &str {
    track.channel.as_deref().unwrap_or("giving")
}

/// Microseconds, the unit of trace-event JSON, keeping the nanoseconds as decimals.
fn micros(at: Timestamp) -> serde_json::Value {
    let nanos = at.as_nanos();
    serde_json::Value::from(nanos as f64 / 1000.0)
}

fn object(args: &Args) -> serde_json::Value {
    let map = args
        .iter()
        .map(|(key, value)| (key.clone(), to_json(value)))
        .collect::<serde_json::Map<_, _>>();
    serde_json::Value::Object(map)
}

fn to_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::I64(i) => (*i).into(),
        Value::U64(u) => (*u).into(),
        Value::F64(x) => {
            serde_json::Number::from_f64(*x).map_or(serde_json::Value::Null, Into::into)
        }
        Value::Str(s) => s.to_string().into(),
        Value::List(items) => items.iter().map(to_json).collect(),
        other => other.to_string().into(),
    }
}
