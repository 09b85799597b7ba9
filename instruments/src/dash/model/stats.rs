//! What the dashboard keeps of each thing it shows: a key's latest value, a task's progress
//! and rate, the whole run's progress, a GPU's and the machine's figures.

use std::time::Duration;

use giving::vocab::{GpuReading, keys};
use giving::{Event, Timestamp, Value};

/// The latest value of one key, how many events carried it, and its units (the `units` field
/// of the same event, as rate events have).
#[derive(Debug, Clone)]
pub(crate) struct KeyStat {
    /// The latest value (possibly lazy: it is read when drawn).
    pub(crate) value: Value,
    /// The units given beside it, if any.
    pub(crate) units: Option<String>,
    /// Events that carried this key.
    pub(crate) count: u64,
}

/// One task's progress and rate (`train`, `valid`, `early_stop`, …).
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskStat {
    /// The task's name (`""` for events without a task).
    pub(crate) name: String,
    /// The latest `progress: (i, n)`.
    pub(crate) progress: Option<(u64, u64)>,
    /// When its current run started (its `progress: (0, n)` event, or its first progress).
    pub(crate) started: Option<Timestamp>,
    /// The time of its latest progress.
    pub(crate) last: Option<Timestamp>,
    /// The latest rate given for it.
    pub(crate) rate: Option<f64>,
    /// The units of its rate (`items/s`).
    pub(crate) units: Option<String>,
    rate_sum: f64,
    rate_count: u64,
}

impl TaskStat {
    /// A task seen for the first time.
    pub(super) fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            ..Self::default()
        }
    }

    /// Records its progress `(i, n)` at `time`; a progress that goes back (a new epoch's
    /// `(0, n)`) starts its run again.
    pub(super) fn progressed(&mut self, (i, n): (u64, u64), time: Timestamp) {
        let restarted = match self.progress {
            Some((last, _)) => i == 0 || i < last,
            None => true,
        };
        if restarted {
            self.started = Some(time);
        }
        self.progress = Some((i, n));
        self.last = Some(time);
    }

    /// Records a (finite) rate given for it, with its units.
    pub(super) fn rated(&mut self, rate: f64, units: Option<String>) {
        self.rate = Some(rate);
        self.rate_sum += rate;
        self.rate_count += 1;
        self.units = units;
    }

    /// The mean of the rates given for this task.
    pub(crate) fn mean_rate(&self) -> Option<f64> {
        (self.rate_count > 0).then(|| self.rate_sum / self.rate_count as f64)
    }

    /// Done fraction in 0..=1 (0 when the total is 0 or unknown).
    pub(crate) fn ratio(&self) -> f64 {
        match self.progress {
            Some((i, n)) if n > 0 => (i as f64 / n as f64).clamp(0.0, 1.0),
            _ => 0.0,
        }
    }

    /// Estimated time left: the time the first `i` steps took, scaled to the `n - i` left.
    pub(crate) fn eta(&self) -> Option<Duration> {
        let (i, n) = self.progress?;
        if i == 0 || i > n {
            return None;
        }
        let elapsed = self.last?.duration_since(self.started?).as_secs_f64();
        let left = elapsed / i as f64 * (n - i) as f64;
        Duration::try_from_secs_f64(left).ok()
    }
}

/// The whole run, across epochs: from `{epoch, epochs, total_steps}` (given at each epoch's
/// start) and `global_step` (given every step).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RunStat {
    /// The latest epoch, from 0.
    pub(crate) epoch: Option<u64>,
    /// The epochs the run plans.
    pub(crate) epochs: Option<u64>,
    /// The steps the run plans over all its epochs.
    pub(crate) total_steps: Option<u64>,
    /// Steps done over the whole run (the latest `global_step` + 1).
    pub(crate) done_steps: Option<u64>,
    /// When the first epoch started.
    pub(crate) started: Option<Timestamp>,
    /// The time of the latest `global_step`.
    pub(crate) last: Option<Timestamp>,
}

impl RunStat {
    /// `(done, total)` steps of the whole run, when the run says how many it plans.
    pub(crate) fn progress(&self) -> Option<(u64, u64)> {
        Some((self.done_steps.unwrap_or(0), self.total_steps?))
    }

    /// Done fraction of the whole run in 0..=1 (0 when unknown).
    pub(crate) fn ratio(&self) -> f64 {
        match self.progress() {
            Some((i, n)) if n > 0 => (i as f64 / n as f64).clamp(0.0, 1.0),
            _ => 0.0,
        }
    }

    /// Estimated time left for the whole run: the time its steps so far took, scaled to the
    /// steps left (validation included, as it is part of the time so far).
    pub(crate) fn eta(&self) -> Option<Duration> {
        let (i, n) = self.progress()?;
        if i == 0 || i > n {
            return None;
        }
        let elapsed = self.last?.duration_since(self.started?).as_secs_f64();
        Duration::try_from_secs_f64(elapsed / i as f64 * (n - i) as f64).ok()
    }

    /// `epoch 2/5` (one-based, as people count epochs), or `epoch 2` without a total.
    pub(crate) fn epoch_label(&self) -> Option<String> {
        let epoch = self.epoch? + 1;
        Some(match self.epochs {
            Some(n) => format!("epoch {epoch}/{n}"),
            None => format!("epoch {epoch}"),
        })
    }

    /// Reads the run-wide keys of `event`.
    pub(super) fn observe(&mut self, event: &Event) {
        let number = |key| event.get_as::<u64>(key).ok();
        if let Some(epoch) = number(keys::EPOCH) {
            self.epoch = Some(epoch);
            self.started.get_or_insert(event.time());
        }
        if let Some(epochs) = number(keys::EPOCHS) {
            self.epochs = Some(epochs);
        }
        if let Some(total) = number(keys::TOTAL_STEPS) {
            self.total_steps = Some(total);
        }
        if let Some(step) = number(keys::GLOBAL_STEP) {
            self.done_steps = Some(step + 1);
            self.last = Some(event.time());
            self.started.get_or_insert(event.time());
        }
    }
}

/// One GPU of a `gpudata` event.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct GpuStat {
    /// Load in 0..1.
    pub(crate) load: Option<f64>,
    /// Memory used and total, in MB.
    pub(crate) memory: Option<(f64, f64)>,
    /// Temperature in °C.
    pub(crate) temperature: Option<f64>,
    /// Power in W.
    pub(crate) power: Option<f64>,
}

impl From<&GpuReading<'_>> for GpuStat {
    fn from(gpu: &GpuReading<'_>) -> Self {
        Self {
            load: gpu.load,
            memory: gpu.memory,
            temperature: gpu.temperature,
            power: gpu.power,
        }
    }
}

/// The machine and process figures of a `cpudata`/`process` event.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CpuStat {
    /// Machine CPU load in 0..1.
    pub(crate) load: Option<f64>,
    /// Machine memory used and total, in MB.
    pub(crate) memory: Option<(f64, f64)>,
    /// This process's resident memory, in MB.
    pub(crate) rss_mb: Option<f64>,
    /// This process's CPU use, in percent of one core.
    pub(crate) process_cpu: Option<f64>,
}

impl CpuStat {
    /// Reads the `cpudata` (machine) and `process` figures an event carries.
    pub(super) fn observe(&mut self, cpudata: Option<&Value>, process: Option<&Value>) {
        if let Some(c) = cpudata {
            self.load = field_f64(c, "load");
            self.memory = field(c, "memory").and_then(pair);
        }
        if let Some(p) = process {
            self.rss_mb = field_f64(p, "rss_mb");
            self.process_cpu = field_f64(p, "cpu");
        }
    }
}

fn field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value.resolved().ok()? {
        Value::Map(map) => map.get(key),
        _ => None,
    }
}

fn field_f64(value: &Value, key: &str) -> Option<f64> {
    field(value, key).and_then(Value::as_f64)
}

fn pair(value: &Value) -> Option<(f64, f64)> {
    match value.resolved().ok()? {
        Value::List(items) if items.len() == 2 => Some((items[0].as_f64()?, items[1].as_f64()?)),
        _ => None,
    }
}
