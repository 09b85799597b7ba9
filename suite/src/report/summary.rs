//! milabench's summary JSON (`milabench summary RUN -o FILE`, `summary.py` `make_summary`):
//! written from a run ([`summary`]), and read back as a base to compare with
//! ([`Report::from_summary`]).

use std::collections::BTreeMap;
use std::path::Path;

use giving::Value;

use super::gpu::GpuRecord;
use super::load::{BenchData, ProcessData, RunData};
use super::pyjson;
use super::stats::{Metrics, global_score};
use super::table::{Report, Row};
use crate::RunError;

/// milabench's `summary.py` `make_summary` of `run`: one entry per benchmark that ran, by
/// name, with `meta`, `name`, `group`, `n`, `ngpu`, `successes`, `failures`, `train_rate`,
/// `walltime`, `per_gpu`, `gpu_load`, `weight`, `extra`, `enabled` and, where milabench's
/// division works, `energy`, `elpased` (milabench's spelling) and `perf_watt`. Metrics are
/// `{min, q1, median, q3, max, mean, std, sem}`, NaN where there is no sample.
///
/// Where milabench takes "the first" process (`energy`, `elpased`) it takes the first in its
/// directory listing; here the first by tag.
pub fn summary(run: &RunData) -> Value {
    Value::Map(
        run.benches
            .iter()
            .filter(|b| !b.processes.is_empty())
            .map(|b| (b.name.clone(), bench_summary(b, &run.system)))
            .collect(),
    )
}

/// [`summary`] as the text milabench's `json.dump` writes (NaN as `NaN`).
pub fn summary_json(run: &RunData) -> String {
    let mut out = String::new();
    pyjson::write_value(&summary(run), &mut out);
    out.push('\n');
    out
}

fn bench_summary(bench: &BenchData, system: &serde_json::Value) -> Value {
    let last = bench.processes.last();
    let config = last.and_then(|p| p.record.config.as_ref());
    let from_config = |key: &str| config.map(|c| &c[key]).filter(|v| !v.is_null());
    let rates: Vec<f64> = bench
        .processes
        .iter()
        .flat_map(|p| p.rates.clone())
        .collect();
    let perf = Metrics::of(&rates);
    let successes = bench
        .processes
        .iter()
        .filter(|p| p.counted_success())
        .count();
    let walltimes: Vec<f64> = bench
        .processes
        .iter()
        .filter_map(|p| p.record.walltime)
        .collect();
    let ngpu = bench
        .processes
        .iter()
        .filter_map(|p| p.record.ngpu())
        .max()
        .unwrap_or_else(|| {
            let machine = system["n_gpu"].as_u64().unwrap_or(0) as usize;
            bench.num_machines as usize * if bench.njobs { machine } else { 1 }
        });
    let mut entry = BTreeMap::from([
        (
            "meta".to_owned(),
            json_value(last.and_then(|p| p.record.machine.as_ref())),
        ),
        ("name".to_owned(), Value::from(bench.name.as_str())),
        (
            "group".to_owned(),
            from_config("group").map_or_else(|| Value::from(bench.name.as_str()), to_value),
        ),
        ("n".to_owned(), Value::U64(bench.processes.len() as u64)),
        ("ngpu".to_owned(), Value::U64(ngpu as u64)),
        ("successes".to_owned(), Value::U64(successes as u64)),
        (
            "failures".to_owned(),
            Value::U64((bench.processes.len() - successes) as u64),
        ),
        ("train_rate".to_owned(), metrics(perf)),
        ("walltime".to_owned(), metrics(Metrics::of(&walltimes))),
        ("per_gpu".to_owned(), per_gpu(&bench.processes)),
        ("gpu_load".to_owned(), gpu_load(&bench.processes)),
        (
            "weight".to_owned(),
            from_config("weight").map_or(Value::F64(bench.weight), to_value),
        ),
        ("extra".to_owned(), Value::Map(BTreeMap::new())),
        (
            "enabled".to_owned(),
            from_config("enabled").map_or(Value::Bool(true), to_value),
        ),
    ]);
    if let Some(first) = bench.processes.first() {
        entry.extend(energy(&first.gpu, perf));
    }
    Value::Map(entry)
}

/// `_summarize`'s `energy()`: the first process's `energy` (kJ) and `elpased` (s), and
/// `perf_watt = perf / (energy / elapsed)`; none of them where Python's division raises (an
/// elapsed of 0, or a power of 0 with no train rate: numpy's mean divides by 0 without
/// raising, giving ∞ or NaN).
fn energy(gpu: &GpuRecord, perf: Option<Metrics>) -> Vec<(String, Value)> {
    let energy_kj = gpu.energy_j.unwrap_or(0.0) / 1000.0;
    let elapsed = gpu.elapsed_s;
    if elapsed == 0.0 {
        return Vec::new();
    }
    let kilowatts = energy_kj / elapsed;
    let perf_watt = match perf {
        Some(perf) => perf.mean / kilowatts,
        None if kilowatts == 0.0 => return Vec::new(),
        None => f64::NAN,
    };
    vec![
        ("energy".to_owned(), Value::F64(energy_kj)),
        ("elpased".to_owned(), Value::F64(elapsed)),
        ("perf_watt".to_owned(), Value::F64(perf_watt)),
    ]
}

/// `per_gpu`: the train rates of each device named by a process's config (`njobs` processes
/// name none), pooled over repetitions and nodes.
fn per_gpu(processes: &[ProcessData]) -> Value {
    let mut devices: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for p in processes {
        if let Some(device) = p.record.device().or(p.device) {
            devices.entry(device).or_default().extend(&p.rates);
        }
    }
    Value::Map(
        devices
            .into_iter()
            .filter(|(_, rates)| !rates.is_empty())
            .map(|(device, rates)| (device.to_string(), metrics(Metrics::of(&rates))))
            .collect(),
    )
}

/// `gpu_load`: per device, the memory used, load and power of the kept samples, without
/// those at `memory[0] == 1` or `load == 0` (and those missing a figure, which would fail
/// milabench).
fn gpu_load(processes: &[ProcessData]) -> Value {
    let mut devices: BTreeMap<String, [Vec<f64>; 3]> = BTreeMap::new();
    for sample in processes.iter().flat_map(|p| &p.gpu.samples) {
        for (index, gpu) in &sample.gpus {
            let (Some(used), Some(load), Some(power)) = (gpu.memory_used, gpu.load, gpu.power)
            else {
                continue;
            };
            if used == 1.0 || load == 0.0 {
                continue;
            }
            let [memory, loads, powers] = devices.entry(index.clone()).or_default();
            memory.push(used);
            loads.push(load);
            powers.push(power);
        }
    }
    Value::Map(
        devices
            .into_iter()
            .map(|(index, [memory, load, power])| {
                let figures = [("memory", memory), ("load", load), ("power", power)]
                    .into_iter()
                    .map(|(k, xs)| (k.to_owned(), metrics(Metrics::of(&xs))))
                    .collect();
                (index, Value::Map(figures))
            })
            .collect(),
    )
}

/// `_metrics`: the statistics, or NaN for each where there is no sample.
fn metrics(m: Option<Metrics>) -> Value {
    let nan = f64::NAN;
    let figures = match m {
        Some(m) => [m.min, m.q1, m.median, m.q3, m.max, m.mean, m.std, m.sem],
        None => [nan; 8],
    };
    Value::Map(
        ["min", "q1", "median", "q3", "max", "mean", "std", "sem"]
            .into_iter()
            .zip(figures)
            .map(|(k, x)| (k.to_owned(), Value::F64(x)))
            .collect(),
    )
}

/// Reads a summary JSON file (milabench's `summary`, or `giving suite summary`'s) as the
/// report it stands for ([`Report::from_summary`]); its `NaN`s are read as no figure.
pub fn load_summary(path: &Path) -> Result<Report, RunError> {
    let text = std::fs::read_to_string(path).map_err(|source| RunError::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    })?;
    let summary = pyjson::parse(&text).map_err(|e| RunError::Io {
        action: "parse",
        path: path.to_path_buf(),
        source: e.into(),
    })?;
    Ok(Report::from_summary(&summary))
}

fn to_value(json: &serde_json::Value) -> Value {
    giving_log::protocol::from_json(json.clone())
}

fn json_value(json: Option<&serde_json::Value>) -> Value {
    json.map_or(Value::Null, to_value)
}

impl Report {
    /// The report milabench's summary JSON `summary` stands for (see [`load_summary`]): per benchmark its `n`, `failures`, `ngpu`, `train_rate` as `perf`,
    /// `weight`, `enabled`, and the score `_make_row` gives it (Σ of the `per_gpu` means, or
    /// `perf` where that is not positive, × (1 − failures/n)). A base for
    /// [`compared_to`](Report::compared_to).
    pub fn from_summary(summary: &serde_json::Value) -> Self {
        let number = |v: &serde_json::Value| v.as_f64().filter(|x| x.is_finite());
        let rows: Vec<Row> = summary
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, s)| {
                let n = s["n"].as_u64().unwrap_or(0) as usize;
                let fail = s["failures"].as_u64().unwrap_or(0) as usize;
                let t = &s["train_rate"];
                let perf = number(&t["mean"]).map(|mean| Metrics {
                    n,
                    mean,
                    std: number(&t["std"]).unwrap_or(f64::NAN),
                    sem: number(&t["sem"]).unwrap_or(f64::NAN),
                    median: number(&t["median"]).unwrap_or(f64::NAN),
                    max: number(&t["max"]).unwrap_or(f64::NAN),
                    min: number(&t["min"]).unwrap_or(f64::NAN),
                    q1: number(&t["q1"]).unwrap_or(f64::NAN),
                    q3: number(&t["q3"]).unwrap_or(f64::NAN),
                });
                let acc: f64 = s["per_gpu"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter_map(|(_, m)| number(&m["mean"]))
                    .sum();
                let acc = if acc > 0.0 {
                    acc
                } else {
                    perf.map_or(0.0, |m| m.mean)
                };
                Row {
                    bench: name.clone(),
                    fail,
                    n,
                    ngpu: s["ngpu"].as_u64().unwrap_or(0) as usize,
                    devices: 0,
                    perf,
                    peak_memory: None,
                    score: acc * (1.0 - fail as f64 / n.max(1) as f64) + 0.0,
                    weight: s["weight"].as_f64().unwrap_or(0.0),
                    enabled: s["enabled"].as_bool().unwrap_or(false),
                    energy_kj: number(&s["energy"]),
                    energy_total_kj: None,
                    perf_watt: number(&s["perf_watt"]),
                    median_watt: None,
                    perf_base: None,
                }
            })
            .collect();
        let (fails, runs) = rows.iter().fold((0, 0), |(f, n), r| (f + r.fail, n + r.n));
        let scores: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| (r.score, if r.enabled { r.weight } else { 0.0 }))
            .collect();
        Self {
            system: serde_json::Value::Null,
            failure_rate: if runs == 0 {
                0.0
            } else {
                fails as f64 / runs as f64
            },
            score: global_score(&scores),
            score_base: None,
            rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_are_nan_without_samples() {
        let mut text = String::new();
        pyjson::write_value(&metrics(None), &mut text);
        assert!(text.contains("\"mean\":NaN"), "{text}");
    }

    /// `_summarize`'s `energy()`: 360 kJ over 60 s is 6 kW; perf 120 → perf_watt 20. An
    /// elapsed of 0 raises in milabench: no keys.
    #[test]
    fn perf_watt_is_perf_per_kilowatt() {
        let gpu = GpuRecord {
            samples: Vec::new(),
            energy_j: Some(360_000.0),
            elapsed_s: 60.0,
        };
        let perf = Metrics::of(&[120.0]);
        let keys = energy(&gpu, perf);
        assert_eq!(keys[0], ("energy".to_owned(), Value::F64(360.0)));
        assert_eq!(keys[2], ("perf_watt".to_owned(), Value::F64(20.0)));
        let still = GpuRecord {
            elapsed_s: 0.0,
            ..gpu
        };
        assert!(energy(&still, perf).is_empty());
    }
}
