//! [`GpuMonitor`]: load, memory, temperature and power of every NVIDIA GPU, through NVML.

use std::collections::BTreeMap;
use std::sync::Once;
use std::time::Duration;

use giving::vocab::keys;
use giving::{Event, Given, Value};
use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::TemperatureSensor;

use super::{MonitorHandle, Sampler, poll};
use crate::error::{BoxError, InstrumentError};
use crate::overseer::{Instrument, Start};

/// Every interval, gives `gpudata: {index: {memory: [used_mb, total_mb], load, temperature,
/// power}}` for every GPU NVML sees: `load` in 0..1, `temperature` in °C, `power` in W (a
/// reading the GPU does not offer is null). Where NVML is absent (no NVIDIA driver), it prints
/// one notice on stderr and gives nothing.
///
/// ```
/// use giving_instruments::{GpuMonitor, Overseer};
///
/// // A notice on stderr where there is no GPU; training goes on either way.
/// let run = Overseer::new().with(GpuMonitor::new()).run(|| 42);
/// assert_eq!(run.output, Ok(42));
/// assert!(run.problems.is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct GpuMonitor {
    interval: Duration,
}

impl Default for GpuMonitor {
    fn default() -> Self {
        Self::new()
    }
}

impl GpuMonitor {
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

    /// Starts polling into `gv` (what the [`Overseer`](crate::Overseer) does at start); where NVML is absent, prints the notice (once per process)
    /// and returns a handle that does nothing.
    pub(crate) fn attach(&self, gv: &Given) -> MonitorHandle {
        match NvmlSampler::new() {
            Ok(sampler) => poll(gv, "GPU", self.interval, sampler),
            Err(error) => {
                static NOTICE: Once = Once::new();
                NOTICE.call_once(|| {
                    eprintln!("giving: GPU monitor off: NVML is not available ({error})");
                });
                MonitorHandle::inert()
            }
        }
    }
}

impl Instrument for GpuMonitor {
    fn name(&self) -> &str {
        "gpu-monitor"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        self.attach(start.given()).hand_over(start);
        Ok(())
    }
}

struct NvmlSampler {
    nvml: Nvml,
    count: u32,
}

impl NvmlSampler {
    fn new() -> Result<Self, nvml_wrapper::error::NvmlError> {
        let nvml = Nvml::init()?;
        let count = nvml.device_count()?;
        Ok(Self { nvml, count })
    }
}

const MB: f64 = 1024.0 * 1024.0;

impl Sampler for NvmlSampler {
    fn sample(&mut self) -> Result<Event, BoxError> {
        let mut gpus = BTreeMap::new();
        for index in 0..self.count {
            let device = self.nvml.device_by_index(index)?;
            let mut gpu = BTreeMap::new();
            let memory = match device.memory_info() {
                Ok(m) => Value::List(vec![
                    Value::F64(m.used as f64 / MB),
                    Value::F64(m.total as f64 / MB),
                ]),
                Err(_) => Value::Null,
            };
            gpu.insert("memory".to_owned(), memory);
            let load = device
                .utilization_rates()
                .map_or(Value::Null, |u| Value::F64(f64::from(u.gpu) / 100.0));
            gpu.insert("load".to_owned(), load);
            let temperature = device
                .temperature(TemperatureSensor::Gpu)
                .map_or(Value::Null, |t| Value::F64(f64::from(t)));
            gpu.insert("temperature".to_owned(), temperature);
            let power = device
                .power_usage()
                .map_or(Value::Null, |mw| Value::F64(f64::from(mw) / 1000.0));
            gpu.insert("power".to_owned(), power);
            gpus.insert(index.to_string(), Value::Map(gpu));
        }
        Ok(Event::builder()
            .field(keys::GPUDATA, Value::Map(gpus))
            .build())
    }
}
