//! Reading a run folder back: the configuration's weights, each process's outcome
//! (`{bench}.{tag}.json`) and what its `.data` file holds (see [`data_file`](super::data_file)).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::data_file::{ProcessRecord, read_data};
use super::gpu::{GpuRecord, aggregate};
use crate::RunError;

/// One process of a run, as read back.
#[derive(Debug, Clone)]
pub struct ProcessData {
    /// Its tag (`D0`, `0`, …; `D0.R2` for a repetition).
    pub tag: String,
    /// The GPU it was given (`None`: the CPU, or `njobs`).
    pub device: Option<usize>,
    /// Whether it succeeded (from `{bench}.{tag}.json`): it asked to be stopped, or exited 0
    /// without being killed and without reporting an error.
    pub success: bool,
    /// Why it was stopped as a success (`voir early stop`: it sent `{"$event": "stop"}`).
    pub stopped: Option<String>,
    /// The errors it reported (`{"$event": "error"}`), as `{type}: {message}`.
    pub error_events: Vec<String>,
    /// The rates in its data file that milabench's report counts (`task: "train"`; in a run
    /// folder from before the JSON lines, also the rates given without a task).
    pub rates: Vec<f64>,
    /// The losses in its data file (NaN included), in order.
    pub losses: Vec<f64>,
    /// Events in its data file.
    pub events: u64,
    /// Its exit code (`None`: a signal, or it did not start).
    pub exit_code: Option<i64>,
    /// `sigterm` / `sigkill` when the runner ended it (`max_duration`, an interrupt, or the
    /// stop it asked for).
    pub killed: Option<String>,
    /// Its captured stderr (the last 64 KiB).
    pub stderr: String,
    /// `{run}/{bench}.{tag}`: its files, without their extension.
    pub stem: PathBuf,
    /// Its rates with their times, in seconds since its first event (for plots).
    pub rate_times: Vec<(f64, f64)>,
    /// Its `gpudata` as milabench's `aggregate` keeps it: the samples of its device (every
    /// device without one), their energy and the time they span.
    pub gpu: GpuRecord,
    /// What it said about itself (its log header, or its `meta` event), if anything.
    pub meta: Option<serde_json::Value>,
    /// What the runner recorded in its `.data` lines: milabench's configuration, machine,
    /// walltime and verdict.
    pub record: ProcessRecord,
}

impl ProcessData {
    /// Whether milabench's report counts it a success: its rule on the `.data` lines (a
    /// `stop`, or exit 0 with a train rate and no NaN loss) where the run folder has them,
    /// else [`success`](Self::success).
    pub fn counted_success(&self) -> bool {
        self.record.success.unwrap_or(self.success)
    }
}

/// A benchmark of a run, as read back.
#[derive(Debug, Clone)]
pub struct BenchData {
    /// Its name.
    pub name: String,
    /// Its weight in the score (0 where the configuration gives none, as milabench).
    pub weight: f64,
    /// Whether it ran under `plan: {method: njobs}` (its processes share the machine: it is
    /// scored by its `perf`, not per device).
    pub njobs: bool,
    /// On how many nodes it ran (`num_machines`, 1 where not written).
    pub num_machines: u32,
    /// Its `validation.usage` thresholds, as `(gpu_load_threshold, gpu_mem_threshold)`
    /// (`None` where not configured).
    pub usage: Option<(f64, f64)>,
    /// Its processes.
    pub processes: Vec<ProcessData>,
}

/// A run folder, as read back.
#[derive(Debug, Clone)]
pub struct RunData {
    /// The folder.
    pub dir: PathBuf,
    /// `system.json`, as written.
    pub system: serde_json::Value,
    /// The benchmarks, in the configuration's order.
    pub benches: Vec<BenchData>,
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> RunError + 'a {
    move |source| RunError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

fn json(path: &Path) -> Result<serde_json::Value, RunError> {
    let text = std::fs::read_to_string(path).map_err(io("read", path))?;
    serde_json::from_str(&text).map_err(|e| RunError::Io {
        action: "parse",
        path: path.to_path_buf(),
        source: e.into(),
    })
}

/// Reads the run folder `dir` (as `giving suite run` wrote it).
pub fn load_run(dir: &Path) -> Result<RunData, RunError> {
    let config = json(&dir.join("config.json"))?;
    let system = json(&dir.join("system.json")).unwrap_or(serde_json::Value::Null);
    let mut benches: Vec<BenchData> = config["benches"]
        .as_array()
        .map(|b| b.as_slice())
        .unwrap_or_default()
        .iter()
        .filter_map(|b| {
            Some(BenchData {
                name: b["name"].as_str()?.to_owned(),
                weight: b["weight"].as_f64().unwrap_or(0.0),
                njobs: b["plan"]["method"].as_str() == Some("njobs"),
                num_machines: b["num_machines"]
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(1),
                usage: b["usage"]["gpu_load_threshold"]
                    .as_f64()
                    .zip(b["usage"]["gpu_mem_threshold"].as_f64()),
                processes: Vec::new(),
            })
        })
        .collect();
    let mut outcomes: BTreeMap<(String, String), PathBuf> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(io("read", dir))? {
        let path = entry.map_err(io("read", dir))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        if stem.ends_with(".voirconf") {
            continue;
        }
        // `{bench}.{tag}.json`: the longest benchmark name that starts the stem, since a tag
        // may hold a dot (`D0.R2`) and so may a benchmark's name.
        let bench = benches
            .iter()
            .map(|b| b.name.as_str())
            .filter(|b| stem.len() > b.len() + 1 && stem.starts_with(b))
            .filter(|b| stem.as_bytes()[b.len()] == b'.')
            .max_by_key(|b| b.len());
        if let Some(bench) = bench {
            let tag = &stem[bench.len() + 1..];
            outcomes.insert((bench.to_owned(), tag.to_owned()), path.clone());
        }
    }
    for ((bench, tag), path) in outcomes {
        let Some(data) = benches.iter_mut().find(|b| b.name == bench) else {
            continue;
        };
        let outcome = json(&path)?;
        let data_file = read_data(&dir.join(format!("{bench}.{tag}.data")));
        let device = outcome["device"].as_u64().map(|d| d as usize);
        // milabench keeps the `gpudata` of the device its config names (0 for the CPU's
        // process); older folders have only the outcome's.
        let gpu_device = data_file.record.device().or(device);
        data.processes.push(ProcessData {
            success: outcome["success"].as_bool().unwrap_or(false),
            stopped: outcome["stopped"].as_str().map(str::to_owned),
            error_events: outcome["error_events"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e.as_str().map(str::to_owned))
                .collect(),
            rates: data_file.rates,
            rate_times: data_file.rate_times,
            gpu: aggregate(data_file.gpu_samples, gpu_device),
            losses: data_file.losses,
            events: data_file.events,
            exit_code: outcome["exit_code"].as_i64(),
            device,
            meta: Some(outcome["meta"].clone()).filter(|m| !m.is_null()),
            killed: outcome["killed"].as_str().map(str::to_owned),
            stderr: tail(&dir.join(format!("{bench}.{tag}.stderr"))),
            stem: dir.join(format!("{bench}.{tag}")),
            record: data_file.record,
            tag,
        });
    }
    Ok(RunData {
        dir: dir.to_path_buf(),
        system,
        benches,
    })
}

/// Reads several run folders as one run (milabench's report of several runs): the
/// benchmarks of each, by name, with every folder's processes; the first folder's system.
pub fn load_runs(dirs: &[PathBuf]) -> Result<RunData, RunError> {
    let mut merged: Option<RunData> = None;
    for dir in dirs {
        let run = load_run(dir)?;
        let Some(into) = merged.as_mut() else {
            merged = Some(run);
            continue;
        };
        for bench in run.benches {
            match into.benches.iter_mut().find(|b| b.name == bench.name) {
                Some(known) => known.processes.extend(bench.processes),
                None => into.benches.push(bench),
            }
        }
    }
    merged.ok_or_else(|| RunError::Io {
        action: "read",
        path: PathBuf::new(),
        source: std::io::Error::other("no run folder given"),
    })
}

/// The last 64 KiB of a text file (empty when it cannot be read) (where a panic message or a traceback is).
pub(crate) fn tail(path: &Path) -> String {
    const TAIL: usize = 64 << 10;
    let bytes = std::fs::read(path).unwrap_or_default();
    String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(TAIL)..]).into_owned()
}
