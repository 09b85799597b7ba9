//! [`CpuMonitor`]: CPU load and memory of the machine, and of this process, through sysinfo.

use std::collections::BTreeMap;
use std::time::Duration;

use giving::vocab::keys;
use giving::{Event, Given, Value};
use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

use super::{MonitorHandle, Sampler, poll};
use crate::error::{BoxError, InstrumentError};
use crate::overseer::{Instrument, Start};

/// Every interval, gives `cpudata: {load, memory: [used_mb, total_mb]}` (`load` in 0..1, over
/// all cores) and `process: {pid, rss_mb, cpu}` (this process: resident memory, and CPU use in
/// percent of one core), in one event.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
/// use giving::prelude::*;
/// use giving_instruments::{CpuMonitor, Overseer};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// let run = Overseer::new()
///     .with(CpuMonitor::new().interval(Duration::from_millis(10)))
///     .instrument_fn("sink", move |start| {
///         let sink = sink.clone();
///         let samples = start.given().stream().where_(["cpudata", "process"]);
///         start.spawn(samples.for_each(move |e| sink.lock().unwrap().push(e)));
///         Ok(())
///     })
///     .run(|| std::thread::sleep(Duration::from_millis(50)));
/// assert!(run.problems.is_empty());
/// // The first sample comes at once.
/// assert!(seen.lock().unwrap()[0].get_as::<giving::Value>("cpudata").is_ok());
/// ```
#[derive(Debug, Clone)]
pub struct CpuMonitor {
    interval: Duration,
}

impl Default for CpuMonitor {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuMonitor {
    /// A monitor polling every second.
    pub fn new() -> Self {
        Self {
            interval: Duration::from_secs(1),
        }
    }

    /// Polls every `interval`.
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// Starts polling into `gv` (what the [`Overseer`](crate::Overseer) does at start).
    pub(crate) fn attach(&self, gv: &Given) -> MonitorHandle {
        poll(gv, "CPU", self.interval, SysSampler::new())
    }
}

impl Instrument for CpuMonitor {
    fn name(&self) -> &str {
        "cpu-monitor"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        self.attach(start.given()).hand_over(start);
        Ok(())
    }
}

struct SysSampler {
    system: System,
    pid: Pid,
}

impl SysSampler {
    fn new() -> Self {
        Self {
            system: System::new(),
            pid: Pid::from_u32(std::process::id()),
        }
    }
}

const MB: f64 = 1024.0 * 1024.0;

impl Sampler for SysSampler {
    fn sample(&mut self) -> Result<Event, BoxError> {
        self.system.refresh_cpu_usage();
        self.system.refresh_memory();
        self.system.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[self.pid]),
            true,
            ProcessRefreshKind::nothing().with_cpu().with_memory(),
        );
        let mut cpu = BTreeMap::new();
        cpu.insert(
            "load".to_owned(),
            Value::F64(f64::from(self.system.global_cpu_usage()) / 100.0),
        );
        cpu.insert(
            "memory".to_owned(),
            Value::List(vec![
                Value::F64(self.system.used_memory() as f64 / MB),
                Value::F64(self.system.total_memory() as f64 / MB),
            ]),
        );
        let mut process = BTreeMap::new();
        process.insert("pid".to_owned(), Value::U64(u64::from(self.pid.as_u32())));
        if let Some(p) = self.system.process(self.pid) {
            process.insert("rss_mb".to_owned(), Value::F64(p.memory() as f64 / MB));
            process.insert("cpu".to_owned(), Value::F64(f64::from(p.cpu_usage())));
        }
        Ok(Event::builder()
            .field(keys::CPUDATA, Value::Map(cpu))
            .field(keys::PROCESS, Value::Map(process))
            .build())
    }
}
