//! Traces read back with Perfetto's own Python protos (`summary.py`, the `perfetto` pip
//! package), not with our decoder: what a test asserts here is what Perfetto's messages say.
//! Where `python3` with `perfetto` is missing, [`Summary::read`] says SKIPPED and gives `None`.
//! Shared by the instruments' and the CLI's tests (`#[path]`).

#![allow(dead_code)] // Each test crate uses part of it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The script, next to this file.
const SCRIPT: &str = include_str!("summary.py");

/// The clock every packet's timestamp must name: giving's times are Unix-epoch nanoseconds.
pub const CLOCK: &str = "BUILTIN_CLOCK_REALTIME";

/// A trace's tracks, slices (with the names of the slices they nest in), instants, counters
/// and clocks, as Perfetto's protos read them.
#[derive(Debug)]
pub struct Summary(pub Value);

impl Summary {
    /// The summary of the trace at `path`; `None` (SKIPPED) without Perfetto's protos.
    pub fn read(path: &Path) -> Option<Summary> {
        let probe = Command::new("python3")
            .args([
                "-c",
                "from perfetto.protos.perfetto.trace import perfetto_trace_pb2",
            ])
            .output();
        if !probe.is_ok_and(|out| out.status.success()) {
            eprintln!(
                "SKIPPED: python3 with the `perfetto` package is not available (pip install perfetto)"
            );
            return None;
        }
        let out = Command::new("python3")
            .args(["-c", SCRIPT, path.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "Perfetto's protos could not read {}:\n{}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        Some(Summary(serde_json::from_slice(&out.stdout).unwrap()))
    }

    /// Every slice ended, every end had its begin, every timestamp has its clock, and the
    /// trace's clock is [`CLOCK`].
    pub fn assert_well_formed(&self) {
        let s = &self.0;
        assert_eq!(s["still_open"], Value::Array(vec![]), "slices never ended");
        assert_eq!(s["unmatched_ends"], 0, "ends with no open slice");
        assert_eq!(s["unclocked"], 0, "timestamps with no clock");
        assert_eq!(s["clocks"], serde_json::json!([CLOCK]));
        assert_eq!(s["primary_clock"], CLOCK);
    }

    /// The slices named `name`, by begin time.
    pub fn slices_named(&self, name: &str) -> Vec<&Value> {
        self.0["slices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["name"] == name)
            .collect()
    }

    /// The names of the slices `slice` nests in, outermost first.
    pub fn parents(slice: &Value) -> Vec<&str> {
        slice["parents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect()
    }

    /// The track with uuid `uuid`.
    pub fn track(&self, uuid: &str) -> &Value {
        &self.0["tracks"][uuid]
    }

    /// The uuids of the tracks named `name`.
    pub fn tracks_named(&self, name: &str) -> Vec<String> {
        self.0["tracks"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, t)| t["name"] == name)
            .map(|(uuid, _)| uuid.clone())
            .collect()
    }

    /// The counter track named `name` (one at most), if any.
    pub fn counter_track(&self, name: &str) -> Option<String> {
        let mut found: Vec<String> = self
            .tracks_named(name)
            .into_iter()
            .filter(|uuid| self.track(uuid)["counter"] == true)
            .collect();
        assert!(
            found.len() <= 1,
            "{} counter tracks named {name}",
            found.len()
        );
        found.pop()
    }

    /// The values of counter track `uuid`.
    pub fn values(&self, uuid: &str) -> Vec<f64> {
        match self.0["counters"][uuid].as_array() {
            Some(values) => values.iter().map(|v| v.as_f64().unwrap()).collect(),
            None => Vec::new(),
        }
    }

    /// The names of the instants on track `uuid`.
    pub fn instants_on(&self, uuid: &str) -> Vec<&str> {
        self.0["instants"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["track"].as_u64() == uuid.parse::<u64>().ok())
            .map(|i| i["name"].as_str().unwrap())
            .collect()
    }
}
