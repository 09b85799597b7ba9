//! Typed views of the monitors' events (`gpudata`), exported by `vocab`.

use super::keys;
use crate::{Event, Value};

/// One GPU of a [`GPUDATA`](keys::GPUDATA) event: `{index: {load, memory: [used, total],
/// temperature, power}}`. Each figure is `None` where the sample lacks it (NVML may not report
/// power on every device).
///
/// ```
/// use giving::{Event, Value};
/// use giving::vocab::{GpuReading, keys};
///
/// let gpu = Value::Map([
///     ("load".to_owned(), Value::F64(0.5)),
///     ("memory".to_owned(), Value::List(vec![Value::F64(2048.0), Value::F64(8192.0)])),
///     ("power".to_owned(), Value::F64(250.0)),
/// ].into_iter().collect());
/// let event = Event::new([(keys::GPUDATA, Value::Map([("0".to_owned(), gpu)].into_iter().collect()))]);
/// let readings: Vec<GpuReading> = GpuReading::all(&event).collect();
/// assert_eq!(readings.len(), 1);
/// assert_eq!((readings[0].index, readings[0].load), ("0", Some(0.5)));
/// assert_eq!(readings[0].memory, Some((2048.0, 8192.0)));
/// assert_eq!((readings[0].power, readings[0].temperature), (Some(250.0), None));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuReading<'a> {
    /// The device's index, as the monitor names it (`"0"`).
    pub index: &'a str,
    /// Load in 0..1.
    pub load: Option<f64>,
    /// Memory used and total, in MB.
    pub memory: Option<(f64, f64)>,
    /// Temperature in °C.
    pub temperature: Option<f64>,
    /// Power draw in W.
    pub power: Option<f64>,
}

impl<'a> GpuReading<'a> {
    /// Every GPU of `event`'s `gpudata` (none when it has none, or it is not a map).
    pub fn all(event: &'a Event) -> impl Iterator<Item = GpuReading<'a>> + 'a {
        let gpus = match event.get(keys::GPUDATA) {
            Some(Value::Map(gpus)) => Some(gpus),
            _ => None,
        };
        gpus.into_iter()
            .flatten()
            .map(|(index, gpu)| Self::of(index, gpu))
    }

    /// The reading of device `index` from its map (figures that are absent or not numbers
    /// are `None`).
    pub fn of(index: &'a str, gpu: &Value) -> Self {
        let number = |key: &str| match gpu {
            Value::Map(map) => map.get(key).and_then(Value::as_f64),
            _ => None,
        };
        let memory = match gpu {
            Value::Map(map) => match map.get("memory") {
                Some(Value::List(pair)) if pair.len() == 2 => {
                    pair[0].as_f64().zip(pair[1].as_f64())
                }
                _ => None,
            },
            _ => None,
        };
        Self {
            index,
            load: number("load"),
            memory,
            temperature: number("temperature"),
            power: number("power"),
        }
    }
}
