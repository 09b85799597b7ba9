//! [`CpuMonitor`]: CPU load and memory of the machine, and of this process, through sysinfo.

use std::collections::BTreeMap;
use std::time::Duration;

use giving::{Event, Given, Value};
use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

use super::{MonitorHandle, Sampler, poll};
use crate::overseer::{BoxError, Instrument, Start};

/// Every interval, gives `cpudata: {load, memory: [used_mb, total_mb]}` (`load` in 0..1, over
/// all cores) and `process: {pid, rss_mb, cpu}` (this process: resident memory, and CPU use in
/// percent of one core), in one event.
///
/// ```
/// use std::time::Duration;
/// use giving::prelude::*;
/// use giving::given;
/// use giving_instruments::CpuMonitor;
///
/// let gv = given();
/// let seen = gv.spawn(gv.stream().where_(["cpudata", "process"]).take(1).collect::<Vec<_>>());
/// let monitor = CpuMonitor::new().interval(Duration::from_millis(10)).attach(&gv);
/// let first = seen.join().unwrap(); // the first sample comes at once
/// assert!(first[0].get_as::<giving::Value>("cpudata").is_ok());
/// monitor.stop();
/// gv.finish().unwrap();
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

    /// Starts polling into `gv`.
    pub fn attach(&self, gv: &Given) -> MonitorHandle {
        poll(gv, "CPU", self.interval, SysSampler::new())
    }
}

impl Instrument for CpuMonitor {
    fn name(&self) -> &str {
        "cpu-monitor"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), BoxError> {
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
            .field("cpudata", Value::Map(cpu))
            .field("process", Value::Map(process))
            .build())
    }
}
