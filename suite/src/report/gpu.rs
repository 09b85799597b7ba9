//! A process's GPU figures as milabench's `summary.py` reads them from its `gpudata` samples:
//! the samples of its own device, the energy they add up to and the time they span
//! (`aggregate`), and a benchmark's peak memory and median power (`_summarize`,
//! `report/__init__.py` `_make_row`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::stats::Metrics;

/// One device in one `gpudata` sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GpuFigures {
    /// Load in 0..1.
    pub load: Option<f64>,
    /// Memory used, MiB.
    pub memory_used: Option<f64>,
    /// The device's memory, MiB.
    pub memory_total: Option<f64>,
    /// Power drawn, W.
    pub power: Option<f64>,
}

/// One `gpudata` sample of a process.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuSample {
    /// When, in seconds since the process's first event.
    pub at: f64,
    /// Each device it names (its index, as the monitor names it: NVML's, not the process's
    /// `CUDA_VISIBLE_DEVICES` numbering), with its figures.
    pub gpus: Vec<(String, GpuFigures)>,
}

/// milabench's `aggregate` of a process's `gpudata`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GpuRecord {
    /// The samples kept: with a device, only the samples naming it, reduced to it.
    pub samples: Vec<GpuSample>,
    /// Joules: Σ over the kept samples after the first, Σ over their devices, of the power
    /// × the time since the previous kept sample; `None` when no kept sample has a power.
    pub energy_j: Option<f64>,
    /// Seconds from the first sample (kept or not) to the last kept one.
    pub elapsed_s: f64,
}

/// milabench's `summary.py` `aggregate` over `samples` (in order) of a process given
/// `device` (`None`: every device, as milabench does for `njobs`). A device without a power
/// figure adds nothing to the energy (milabench's `data["power"]` would fail the whole run).
pub fn aggregate(samples: Vec<GpuSample>, device: Option<usize>) -> GpuRecord {
    let first = samples.first().map(|s| s.at);
    let key = device.map(|d| d.to_string());
    let mut kept = Vec::new();
    let mut energy: Option<f64> = None;
    let mut last: Option<f64> = None;
    for mut sample in samples {
        if let Some(key) = &key {
            // A sample without the process's device is skipped, and does not move `last`.
            let Some(gpu) = sample.gpus.into_iter().find(|(index, _)| index == key) else {
                continue;
            };
            sample.gpus = vec![gpu];
        }
        for (_, gpu) in &sample.gpus {
            if let Some(power) = gpu.power {
                // A sample without a time (NaN) adds nothing, nor does the one after it
                // (milabench's `now is not None and last_time is not None`).
                let since = last
                    .filter(|last| !last.is_nan() && !sample.at.is_nan())
                    .map_or(0.0, |last| sample.at - last);
                energy = Some(energy.unwrap_or(0.0) + power * since);
            }
        }
        last = Some(sample.at);
        kept.push(sample);
    }
    GpuRecord {
        samples: kept,
        energy_j: energy,
        elapsed_s: first.zip(last).map_or(0.0, |(first, last)| last - first),
    }
}

/// A benchmark's `(peak_memory, median_watt)` from its processes' kept samples, as
/// milabench's `_summarize` and `_make_row`: per device (samples of every process pooled by
/// device index), the samples with `memory[0] == 1` or `load == 0` are dropped; then
/// `peak_memory` is the largest per-device max of the memory used and `median_watt` the mean
/// of the per-device medians of the power (each after the min/max trim of
/// [`Metrics::of`]). A sample without memory or load is left out too (milabench would fail).
pub fn memory_and_power<'a>(
    samples: impl Iterator<Item = &'a GpuSample>,
) -> (Option<f64>, Option<f64>) {
    let mut devices: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for sample in samples {
        for (index, gpu) in &sample.gpus {
            let (Some(used), Some(load)) = (gpu.memory_used, gpu.load) else {
                continue;
            };
            if used == 1.0 || load == 0.0 {
                continue;
            }
            let (memory, power) = devices.entry(index).or_default();
            memory.push(used);
            power.extend(gpu.power);
        }
    }
    let peak = devices
        .values()
        .filter_map(|(memory, _)| Metrics::of(memory))
        .map(|m| m.max)
        .reduce(f64::max);
    let medians: Vec<f64> = devices
        .values()
        .filter_map(|(_, power)| Metrics::of(power))
        .map(|m| m.median)
        .collect();
    let median_watt =
        (!medians.is_empty()).then(|| medians.iter().sum::<f64>() / medians.len() as f64);
    (peak, median_watt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at: f64, gpus: &[(&str, f64)]) -> GpuSample {
        GpuSample {
            at,
            gpus: gpus
                .iter()
                .map(|&(i, w)| {
                    let figures = GpuFigures {
                        load: Some(0.5),
                        memory_used: Some(100.0),
                        memory_total: Some(1000.0),
                        power: Some(w),
                    };
                    (i.to_owned(), figures)
                })
                .collect(),
        }
    }

    /// milabench's `summary.py` `aggregate` with `config["device"] = 1`: the first sample
    /// (t = 0) lacks device 1 and is skipped but sets `first_time`; then 100 W at t = 1
    /// (no previous kept sample: adds 0), 200 W at t = 3 (200 × (3 − 1) = 400 J), 300 W at
    /// t = 4 (300 × 1 = 300 J): 700 J; elapsed = 4 − 0 = 4 s. Without a device, every device
    /// counts: t = 1 adds (100 + 10) × 1 = 110 J over the same samples.
    #[test]
    fn energy_is_power_times_the_time_since_the_previous_kept_sample() {
        let samples = vec![
            sample(0.0, &[("0", 10.0)]),
            sample(1.0, &[("0", 10.0), ("1", 100.0)]),
            sample(3.0, &[("0", 10.0), ("1", 200.0)]),
            sample(4.0, &[("0", 10.0), ("1", 300.0)]),
        ];
        let one = aggregate(samples.clone(), Some(1));
        assert_eq!(
            (one.energy_j, one.elapsed_s, one.samples.len()),
            (Some(700.0), 4.0, 3)
        );
        assert!(
            one.samples
                .iter()
                .all(|s| s.gpus.len() == 1 && s.gpus[0].0 == "1")
        );
        let all = aggregate(samples, None);
        // t=1: 110 × 1; t=3: 210 × 2; t=4: 310 × 1.
        assert_eq!(all.energy_j, Some(110.0 + 420.0 + 310.0));
        assert_eq!(aggregate(Vec::new(), None), GpuRecord::default());
    }

    /// milabench's `summary.py` `_summarize` then `report/__init__.py` `_make_row`: per
    /// device, samples with `memory[0] == 1` or `load == 0` are dropped, then `_metrics`
    /// sorts and drops the min and the max (5 samples or more): device "0" used
    /// 100, 900, 300, 200, 400 MiB (and 5000 at load 0, dropped) → kept 200, 300, 400 → max 400
    /// (not 900); device "1" used 1 MiB (dropped) and 250 → 250. peak_memory = max(400, 250).
    /// Power: device "0" 10, 90, 30, 20, 40 W → kept 20, 30, 40 → median 30; device "1" → 60;
    /// median_watt = (30 + 60) / 2 = 45.
    #[test]
    fn peak_memory_and_median_watt_come_after_the_trim() {
        let gpu = |load: f64, used: f64, power: f64| GpuFigures {
            load: Some(load),
            memory_used: Some(used),
            memory_total: Some(1000.0),
            power: Some(power),
        };
        let mut samples: Vec<GpuSample> = [100.0, 900.0, 300.0, 200.0, 400.0]
            .iter()
            .enumerate()
            .map(|(i, &used)| GpuSample {
                at: i as f64,
                gpus: vec![("0".to_owned(), gpu(0.5, used, used / 10.0))],
            })
            .collect();
        samples.push(GpuSample {
            at: 5.0,
            gpus: vec![
                ("0".to_owned(), gpu(0.0, 5000.0, 500.0)),
                ("1".to_owned(), gpu(0.5, 1.0, 999.0)),
            ],
        });
        samples.push(GpuSample {
            at: 6.0,
            gpus: vec![("1".to_owned(), gpu(0.5, 250.0, 60.0))],
        });
        assert_eq!(memory_and_power(samples.iter()), (Some(400.0), Some(45.0)));
        assert_eq!(memory_and_power([].iter()), (None, None));
    }
}
