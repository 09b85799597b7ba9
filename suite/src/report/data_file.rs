//! Reading a process's `.data` file: milabench's JSON lines (`config`, `meta`, `start`,
//! `data`…, `end`), as the runner writes them and milabench's own runner does, or the giving
//! log that run folders held before (read as far as it goes).

use std::path::Path;

use giving::vocab::{GpuReading, keys};
use giving::{Event, Value};
use giving_log::LogReader;
use giving_log::protocol::{DataDecoder, Incoming};

use super::gpu::{GpuFigures, GpuSample};

/// The `task` whose rates milabench's report counts (`summary.py`: `train_rate`).
const TRAIN: &str = "train";

/// What the runner recorded about a process in its `.data` lines: milabench's view of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcessRecord {
    /// The `config` line: the benchmark's configuration with the process's `tag`, `device`,
    /// `devices` (`None` in a run folder from before the JSON lines).
    pub config: Option<serde_json::Value>,
    /// The `meta` line: the machine, in milabench's `machine_metadata` shape.
    pub machine: Option<serde_json::Value>,
    /// `end.time − start.time`, seconds (milabench's `walltime`).
    pub walltime: Option<f64>,
    /// `end.return_code`: the exit code, or minus the signal that ended it.
    pub return_code: Option<i64>,
    /// Whether a `stop` line is there (voir's early stop).
    pub early_stop: bool,
    /// milabench's `aggregate` rule: a `stop`, or return code 0 with a train rate and no NaN
    /// loss (`None` in a run folder from before the JSON lines).
    pub success: Option<bool>,
}

impl ProcessRecord {
    /// milabench's `ngpu` of the process (`summary.py`): `num_machines` × (the length of
    /// `devices` under `njobs`, else 1); `None` without a `config` line.
    pub fn ngpu(&self) -> Option<usize> {
        let config = self.config.as_ref()?;
        let machines = config["num_machines"].as_u64().unwrap_or(1) as usize;
        let local = if config["plan"]["method"].as_str() == Some("njobs") {
            config["devices"].as_array().map_or(0, Vec::len)
        } else {
            1
        };
        Some(machines * local)
    }

    /// The `device` of its `config` line: the one whose `gpudata` milabench keeps.
    pub fn device(&self) -> Option<usize> {
        self.config.as_ref()?["device"].as_u64().map(|d| d as usize)
    }
}

/// What the report and the validation layers read from a data file.
#[derive(Default)]
pub(crate) struct DataFile {
    /// The rates milabench's report counts: `task: "train"` in JSON lines; in a giving log,
    /// those with that task or none (the runner wrote untagged rates as train ones).
    pub(crate) rates: Vec<f64>,
    pub(crate) losses: Vec<f64>,
    /// The child's events (its `data` and out-of-band lines).
    pub(crate) events: u64,
    /// Rates with their times since the first event, in seconds.
    pub(crate) rate_times: Vec<(f64, f64)>,
    /// Its `gpudata` samples, in order.
    pub(crate) gpu_samples: Vec<GpuSample>,
    pub(crate) record: ProcessRecord,
}

/// Reads `path` in whichever form it is: JSON lines start with `{`, a giving log never does.
pub(crate) fn read_data(path: &Path) -> DataFile {
    match std::fs::read(path) {
        Ok(bytes) if bytes.first() == Some(&b'{') => read_lines(&bytes),
        Ok(_) => read_giving(path),
        Err(_) => DataFile::default(),
    }
}

/// milabench's JSON lines; a line that cannot be read is skipped (a killed run may be cut).
fn read_lines(bytes: &[u8]) -> DataFile {
    let mut decoder = DataDecoder::new();
    let mut items = decoder.push(bytes);
    items.extend(decoder.finish());
    let mut out = DataFile::default();
    let (mut start, mut end, mut first) = (None, None, None);
    let mut nan_loss = false;
    for item in items {
        let Incoming::Event(line) = item else {
            continue;
        };
        let data = line.get("data").unwrap_or(&Value::Null);
        let time = || match data {
            Value::Map(map) => map.get("time").and_then(Value::as_f64),
            _ => None,
        };
        if line.get("pipe").and_then(Value::as_str) == Some("data") {
            out.events += 1;
        }
        match line.get("event").and_then(Value::as_str) {
            Some("config") => out.record.config = serde_json::to_value(data).ok(),
            Some("meta") => out.record.machine = serde_json::to_value(data).ok(),
            Some("start") => start = time(),
            Some("end") => {
                end = time();
                out.record.return_code = match data {
                    Value::Map(map) => map.get("return_code").and_then(as_i64),
                    _ => None,
                };
            }
            Some("stop") => out.record.early_stop = true,
            Some("data") => {
                let Value::Map(map) = data else { continue };
                let at = time().map(|t| t - *first.get_or_insert(t));
                let task = map.get(keys::TASK).and_then(Value::as_str);
                if let Some(rate) = map.get(keys::RATE).and_then(Value::as_f64)
                    && task == Some(TRAIN)
                {
                    out.rates.push(rate);
                    out.rate_times.push((at.unwrap_or(0.0), rate));
                }
                if let Some(loss) = map.get(keys::LOSS) {
                    let loss = loss.as_f64().unwrap_or(f64::NAN);
                    nan_loss |= loss.is_nan();
                    out.losses.push(loss);
                }
                if let Some(Value::Map(gpus)) = map.get(keys::GPUDATA) {
                    let gpus = gpus
                        .iter()
                        .map(|(index, gpu)| figures(GpuReading::of(index, gpu)))
                        .collect();
                    // milabench takes a sample's time from its line; one without adds no energy.
                    out.gpu_samples.push(GpuSample {
                        at: at.unwrap_or(f64::NAN),
                        gpus,
                    });
                }
            }
            _ => {}
        }
    }
    out.record.walltime = start.zip(end).map(|(s, e)| e - s);
    let record = &mut out.record;
    if record.config.is_some() {
        let nolog = record.config.as_ref().is_some_and(|c| {
            c["tag"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t == "nolog"))
        });
        record.success = Some(
            record.early_stop
                || nolog
                || (record.return_code == Some(0) && !nan_loss && !out.rates.is_empty()),
        );
    }
    out
}

fn as_i64(value: &Value) -> Option<i64> {
    match value {
        Value::I64(i) => Some(*i),
        Value::U64(u) => i64::try_from(*u).ok(),
        _ => None,
    }
}

fn figures(gpu: GpuReading<'_>) -> (String, GpuFigures) {
    (
        gpu.index.to_owned(),
        GpuFigures {
            load: gpu.load,
            memory_used: gpu.memory.map(|(used, _)| used),
            memory_total: gpu.memory.map(|(_, total)| total),
            power: gpu.power,
        },
    )
}

/// A giving log (run folders written before the JSON lines): rates of `task: "train"` or of
/// no task, losses and `gpudata`, timed by the events' own times; what cannot be read is left
/// out (a killed benchmark's log may be cut).
fn read_giving(path: &Path) -> DataFile {
    let mut out = DataFile::default();
    let Ok(reader) = LogReader::open(path) else {
        return out;
    };
    let mut first = None;
    for event in reader.flatten() {
        out.events += 1;
        let t0 = *first.get_or_insert(event.time());
        let at = event.time().as_nanos().saturating_sub(t0.as_nanos()) as f64 / 1e9;
        if let Some(rate) = untagged_or_train_rate(&event) {
            out.rates.push(rate);
            out.rate_times.push((at, rate));
        }
        if let Some(loss) = event.get(keys::LOSS) {
            out.losses.push(loss.as_f64().unwrap_or(f64::NAN));
        }
        let gpus: Vec<_> = GpuReading::all(&event).map(figures).collect();
        if !gpus.is_empty() {
            out.gpu_samples.push(GpuSample { at, gpus });
        }
    }
    out
}

fn untagged_or_train_rate(event: &Event) -> Option<f64> {
    let rate = event.get(keys::RATE)?.as_f64()?;
    match event.get(keys::TASK) {
        None => Some(rate),
        Some(task) => (task.as_str() == Some(TRAIN)).then_some(rate),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> DataFile {
        read_lines(text.as_bytes())
    }

    const CONFIG: &str = r#"{"event": "config", "data": {"name": "a", "tag": ["a", "D1"], "device": 1, "devices": [1], "plan": {"method": "per_gpu"}, "num_machines": 2}, "pipe": null}"#;

    #[test]
    fn only_train_rates_count_and_a_stop_is_a_success() {
        let f = read(&format!(
            "{CONFIG}\n\
             {{\"event\": \"start\", \"data\": {{\"time\": 10.0}}, \"pipe\": null}}\n\
             {{\"event\": \"data\", \"data\": {{\"rate\": 5.0, \"task\": \"train\", \"time\": 11.0}}, \"pipe\": \"data\"}}\n\
             {{\"event\": \"data\", \"data\": {{\"rate\": 99.0, \"task\": \"early_stop\"}}, \"pipe\": \"data\"}}\n\
             {{\"event\": \"data\", \"data\": {{\"rate\": 98.0}}, \"pipe\": \"data\"}}\n\
             {{\"event\": \"data\", \"data\": {{\"loss\": NaN}}, \"pipe\": \"data\"}}\n\
             {{\"event\": \"stop\", \"data\": null, \"pipe\": \"data\"}}\n\
             {{\"event\": \"end\", \"data\": {{\"time\": 13.5, \"return_code\": -15}}, \"pipe\": null}}\n"
        ));
        assert_eq!(f.rates, [5.0]);
        assert_eq!(f.events, 5);
        assert!(f.losses[0].is_nan());
        let r = &f.record;
        assert_eq!(
            (r.walltime, r.return_code, r.early_stop),
            (Some(3.5), Some(-15), true)
        );
        assert_eq!(r.success, Some(true));
        assert_eq!((r.ngpu(), r.device()), (Some(2), Some(1)));
    }

    /// milabench's `aggregate`: exit 0 is not enough, a train rate is needed and no NaN loss.
    #[test]
    fn exit_zero_without_a_train_rate_or_with_a_nan_loss_fails() {
        let end = r#"{"event": "end", "data": {"time": 1.0, "return_code": 0}, "pipe": null}"#;
        let rate = r#"{"event": "data", "data": {"rate": 5.0, "task": "train"}, "pipe": "data"}"#;
        let nan = r#"{"event": "data", "data": {"loss": NaN}, "pipe": "data"}"#;
        assert_eq!(
            read(&format!("{CONFIG}\n{end}\n")).record.success,
            Some(false)
        );
        assert_eq!(
            read(&format!("{CONFIG}\n{rate}\n{end}\n")).record.success,
            Some(true)
        );
        assert_eq!(
            read(&format!("{CONFIG}\n{rate}\n{nan}\n{end}\n"))
                .record
                .success,
            Some(false)
        );
        let njobs = r#"{"event": "config", "data": {"plan": {"method": "njobs", "n": 2}, "devices": [0, 1, 2]}, "pipe": null}"#;
        assert_eq!(read(njobs).record.ngpu(), Some(3));
        assert_eq!(read(njobs).record.device(), None);
    }

    #[test]
    fn gpudata_is_timed_by_its_line() {
        let f = read(concat!(
            r#"{"event": "data", "data": {"gpudata": {"0": {"memory": [10, 100], "load": 0.5, "power": 200}}, "time": 5.0}, "pipe": "data"}"#,
            "\n",
            r#"{"event": "data", "data": {"gpudata": {"0": {"memory": [20, 100], "load": 0.5, "power": 100}}, "time": 7.0}, "pipe": "data"}"#,
            "\n"
        ));
        let at: Vec<f64> = f.gpu_samples.iter().map(|s| s.at).collect();
        assert_eq!(at, [0.0, 2.0]);
        assert_eq!(f.gpu_samples[1].gpus[0].1.memory_used, Some(20.0));
        assert_eq!(f.record.success, None, "no config line: not a run");
    }
}
