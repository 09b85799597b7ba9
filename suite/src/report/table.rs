//! The report's rows and its text form.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use super::gpu::memory_and_power;
use super::load::{BenchData, ProcessData, RunData};
use super::stats::{Metrics, global_score};

/// Failure rates up to this pass (milabench's 1%).
const PASS_FAILURE_RATE: f64 = 0.01;

/// One row of the Breakdown table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The benchmark.
    pub bench: String,
    /// Processes that failed, by milabench's rule where the run folder has its `.data` lines
    /// ([`ProcessData::counted_success`]): a stopped process succeeded, else one needs exit 0,
    /// a train rate and no NaN loss.
    pub fail: usize,
    /// Processes run.
    pub n: usize,
    /// milabench's `ngpu` (`summary.py` `ngpu`): `num_machines` × the GPUs of one process —
    /// 1 under `per_gpu` (even on the CPU), every GPU planned under `njobs` (the largest over
    /// its processes' `config` lines; `system.json`'s GPUs in older run folders).
    pub ngpu: usize,
    /// The distinct GPUs its processes were given (0 on the CPU, and under `njobs`): what
    /// `ngpu` meant here before it took milabench's meaning.
    pub devices: usize,
    /// Statistics of every training rate (`task: "train"`) of every process.
    pub perf: Option<Metrics>,
    /// milabench's `peak_memory`, MiB: the largest per-device max of the memory used, after
    /// the min/max trim (as `_summarize` and `_make_row`: per device, load-0 and 1-MiB samples
    /// dropped).
    pub peak_memory: Option<f64>,
    /// milabench's score (`report/__init__.py`, `_make_row`): Σ over device indices of the
    /// mean of the rates its processes gave there (every repetition, every node), or `perf`
    /// under `njobs` (its processes have no device), × (1 − fail/n).
    pub score: f64,
    /// Its weight.
    pub weight: f64,
    /// Whether it counts in the global score (milabench's `enabled`, × the weight): true for
    /// a benchmark that ran, the configuration's for one [`with_config`](Report::with_config)
    /// added.
    pub enabled: bool,
    /// milabench's `energy (Kj)`: the energy of its first process (by tag) only, kJ, as
    /// `summary.py` `_summarize` reads `agg["energy"][0]`; `None` where it has no power.
    pub energy_kj: Option<f64>,
    /// The energy of every process together, kJ (each by milabench's formula): not a
    /// milabench column, kept because `energy_kj` counts one process only.
    pub energy_total_kj: Option<f64>,
    /// milabench's `perf_watt`: `perf` over the first process's mean power in **kW**
    /// (`perf / (energy_kJ / elapsed_s)`: items per kJ).
    pub perf_watt: Option<f64>,
    /// milabench's `median_watt`: the mean over devices of each device's median power, W.
    pub median_watt: Option<f64>,
    /// The base run's `perf` for this benchmark (`--compare`).
    pub perf_base: Option<f64>,
}

/// A run's report: rows, failure rate and global score.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The System section (`system.json`).
    pub system: serde_json::Value,
    /// The Breakdown table, one row per benchmark.
    pub rows: Vec<Row>,
    /// Σ fail / Σ n.
    pub failure_rate: f64,
    /// The weighted geometric mean of the scores + 1 (see [`global_score`]).
    pub score: Option<f64>,
    /// The base run's global score (`--compare`).
    pub score_base: Option<f64>,
}

impl Report {
    /// Computes the report of a run read by [`load_run`](super::load_run).
    pub fn new(run: &RunData) -> Self {
        let machine_gpus = run.system["n_gpu"].as_u64().unwrap_or(0) as usize;
        let rows: Vec<Row> = run
            .benches
            .iter()
            .filter(|b| !b.processes.is_empty())
            .map(|b| {
                let n = b.processes.len();
                let fail = b.processes.iter().filter(|p| !p.counted_success()).count();
                let all: Vec<f64> = b
                    .processes
                    .iter()
                    .flat_map(|p| p.rates.iter().copied())
                    .collect();
                let perf = Metrics::of(&all);
                let score = score(b, perf, fail, n);
                let devices = b
                    .processes
                    .iter()
                    .filter_map(|p| p.device)
                    .collect::<BTreeSet<_>>()
                    .len();
                let ngpu = b
                    .processes
                    .iter()
                    .filter_map(|p| p.record.ngpu())
                    .max()
                    .unwrap_or_else(|| ngpu(b, machine_gpus));
                let (peak_memory, median_watt) =
                    memory_and_power(b.processes.iter().flat_map(|p| &p.gpu.samples));
                // milabench's `agg["energy"][0]`: the first process read (here, by tag).
                let first = b.processes.first();
                Row {
                    bench: b.name.clone(),
                    fail,
                    n,
                    ngpu,
                    devices,
                    perf,
                    peak_memory,
                    score,
                    weight: b.weight,
                    enabled: true,
                    energy_kj: first.and_then(|p| p.gpu.energy_j).map(|j| j / 1000.0),
                    energy_total_kj: sum(b.processes.iter().filter_map(|p| p.gpu.energy_j))
                        .map(|j| j / 1000.0),
                    perf_watt: perf_watt(first, perf),
                    median_watt,
                    perf_base: None,
                }
            })
            .collect();
        let mut report = Self {
            system: run.system.clone(),
            rows,
            failure_rate: 0.0,
            score: None,
            score_base: None,
        };
        report.rescore();
        report
    }

    /// The failure rate and the global score from the rows: Σ fail / Σ n, and the weighted
    /// geometric mean with weights `weight × enabled` (milabench's `make_report`).
    fn rescore(&mut self) {
        let (fails, runs) = self
            .rows
            .iter()
            .fold((0, 0), |(f, n), r| (f + r.fail, n + r.n));
        self.failure_rate = if runs == 0 {
            0.0
        } else {
            fails as f64 / runs as f64
        };
        let scores: Vec<(f64, f64)> = self
            .rows
            .iter()
            .map(|r| (r.score, if r.enabled { r.weight } else { 0.0 }))
            .collect();
        self.score = global_score(&scores);
    }

    /// This report with the weights of a configuration (milabench's `report --config`,
    /// `make_report(weights=…)`): each benchmark `configured` lists, as `(name, weight,
    /// enabled)`, takes that weight and `enabled`; one that did not run gets a row with n 0
    /// and score 0, which counts in the global score with its weight where it is enabled
    /// (not in the failure rate, as milabench's NaN `fail` does not).
    pub fn with_config(mut self, configured: &[(String, f64, bool)]) -> Self {
        for (name, weight, enabled) in configured {
            match self.rows.iter_mut().find(|r| &r.bench == name) {
                Some(row) => {
                    row.weight = *weight;
                    row.enabled = *enabled;
                }
                None => self.rows.push(Row {
                    bench: name.clone(),
                    fail: 0,
                    n: 0,
                    ngpu: 0,
                    devices: 0,
                    perf: None,
                    peak_memory: None,
                    score: 0.0,
                    weight: *weight,
                    enabled: *enabled,
                    energy_kj: None,
                    energy_total_kj: None,
                    perf_watt: None,
                    median_watt: None,
                    perf_base: None,
                }),
            }
        }
        self.rescore();
        self
    }

    /// This report against `base` (milabench's `--compare`): each benchmark's `perf_base`
    /// (where `base` has it) and the base's global score.
    pub fn compared_to(mut self, base: &Report) -> Self {
        for row in &mut self.rows {
            row.perf_base = base
                .rows
                .iter()
                .find(|b| b.bench == row.bench)
                .and_then(|b| b.perf)
                .map(|m| m.mean);
        }
        self.score_base = base.score;
        self
    }

    /// Whether the failure rate passes (≤ 1%).
    pub fn passes(&self) -> bool {
        self.failure_rate <= PASS_FAILURE_RATE
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "System")?;
        writeln!(f, "------")?;
        let s = &self.system;
        let field = |k: &str| match &s[k] {
            serde_json::Value::String(v) => v.clone(),
            serde_json::Value::Null => "?".to_owned(),
            other => other.to_string(),
        };
        writeln!(
            f,
            "  host: {}   os: {} {}   giving {}",
            field("host"),
            field("os"),
            field("arch"),
            field("giving_version")
        )?;
        writeln!(
            f,
            "  cpu: {} ({} logical)   memory: {} MiB   gpus: {}",
            field("cpu_model"),
            field("n_cpu"),
            field("memory_mb"),
            field("n_gpu")
        )?;
        writeln!(f)?;
        writeln!(f, "Breakdown")?;
        writeln!(f, "---------")?;
        let width = self
            .rows
            .iter()
            .map(|r| r.bench.len())
            .max()
            .unwrap_or(5)
            .max(5);
        let energy = self.rows.iter().any(|r| r.energy_kj.is_some());
        let compare = self.score_base.is_some() || self.rows.iter().any(|r| r.perf_base.is_some());
        write!(
            f,
            "{:<width$} {:>4} {:>3} {:>4} {:>12} {:>6} {:>6} {:>11} {:>12} {:>6}",
            "bench", "fail", "n", "ngpu", "perf", "sem%", "std%", "peak_memory", "score", "weight"
        )?;
        if energy {
            write!(
                f,
                " {:>12} {:>10} {:>11}",
                "energy (kJ)", "perf_watt", "median_watt"
            )?;
        }
        if compare {
            write!(f, " {:>12} {:>10}", "perf_base", "perf_ratio")?;
        }
        writeln!(f)?;
        for r in &self.rows {
            let (perf, sem, std) = match r.perf {
                Some(m) if m.mean != 0.0 => (
                    format!("{:.2}", m.mean),
                    pct(m.sem / m.mean),
                    pct(m.std / m.mean),
                ),
                Some(m) => (format!("{:.2}", m.mean), "-".to_owned(), "-".to_owned()),
                None => ("-".to_owned(), "-".to_owned(), "-".to_owned()),
            };
            let memory = r
                .peak_memory
                .map_or_else(|| "-".to_owned(), |m| format!("{m:.0}"));
            write!(
                f,
                "{:<width$} {:>4} {:>3} {:>4} {:>12} {:>6} {:>6} {:>11} {:>12.2} {:>6.2}",
                r.bench, r.fail, r.n, r.ngpu, perf, sem, std, memory, r.score, r.weight
            )?;
            if energy {
                write!(
                    f,
                    " {:>12} {:>10} {:>11}",
                    fixed(r.energy_kj, 3),
                    fixed(r.perf_watt, 3),
                    fixed(r.median_watt, 3)
                )?;
            }
            if compare {
                let ratio = r.perf.zip(r.perf_base).map(|(p, b)| p.mean / b);
                write!(f, " {:>12} {:>10}", fixed(r.perf_base, 2), fixed(ratio, 3))?;
            }
            writeln!(f)?;
        }
        writeln!(f)?;
        writeln!(f, "Scores")?;
        writeln!(f, "------")?;
        let verdict = if self.passes() { "PASS" } else { "FAIL" };
        writeln!(
            f,
            "Failure rate: {:>8.2}% ({verdict})",
            self.failure_rate * 100.0
        )?;
        match self.score {
            Some(score) => writeln!(f, "Score:        {score:>9.2}")?,
            None => writeln!(f, "Score:              -")?,
        }
        if let Some(base) = self.score_base {
            writeln!(f, "Base score:   {base:>9.2}")?;
            if let Some(score) = self.score {
                writeln!(f, "Score ratio:  {:>9.3}", score / base)?;
            }
        }
        Ok(())
    }
}

/// milabench's `perf_watt` (`summary.py` `_summarize`): `perf["mean"] / (energy[0] /
/// elapsed[0])`, the first process's energy in kJ over its sampled seconds: `perf` per kW.
/// `None` where that power is not positive (milabench's division fails and prints 0).
fn perf_watt(first: Option<&ProcessData>, perf: Option<Metrics>) -> Option<f64> {
    let first = first?;
    let kilowatts = first.gpu.energy_j? / 1000.0 / first.gpu.elapsed_s;
    (kilowatts.is_finite() && kilowatts > 0.0).then_some(perf?.mean / kilowatts)
}

/// milabench's `ngpu` (`summary.py`: `ngpu(pack) = node_count(pack) × local_gpu(pack)`,
/// `local_gpu` is `len(config["devices"])` under `njobs` — every GPU of the machine — and 1
/// otherwise), with `machine_gpus` the GPUs of the machine that ran it (`system.json`).
fn ngpu(bench: &BenchData, machine_gpus: usize) -> usize {
    let local = if bench.njobs { machine_gpus } else { 1 };
    bench.num_machines as usize * local
}

/// milabench's score of a benchmark (`report/__init__.py`, `_make_row`): `acc` is Σ over its
/// devices of the mean of the rates given there (`per_gpu`: every process has a device, the
/// CPU's process counts as device 0), 0 under `njobs` (no process has a device, so
/// `summary.py`'s `per_gpu` is empty); the score is `(acc if acc > 0 else perf)` × (1 − fail/n).
fn score(bench: &BenchData, perf: Option<Metrics>, fail: usize, n: usize) -> f64 {
    let acc = if bench.njobs {
        0.0
    } else {
        // `summary.py` keys `per_gpu` by `config["device"]`: repetitions, and the same device
        // index on several nodes, pool their rates; the CPU's process is milabench's device 0.
        let mut devices: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for p in &bench.processes {
            devices
                .entry(p.device.unwrap_or(0))
                .or_default()
                .extend(&p.rates);
        }
        devices
            .values()
            .filter_map(|rates| Metrics::of(rates))
            .map(|m| m.mean)
            .sum::<f64>()
    };
    let acc = if acc > 0.0 {
        acc
    } else {
        perf.map_or(0.0, |m| m.mean)
    };
    // An empty f64 sum is -0.0, which would print as "-0.00".
    acc * (1.0 - fail as f64 / n.max(1) as f64) + 0.0
}

/// `x` with `digits` decimals, or `-`.
fn fixed(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "-".to_owned(), |x| format!("{x:.digits$}"))
}

/// The sum of `xs`, `None` when there is none.
fn sum(xs: impl Iterator<Item = f64>) -> Option<f64> {
    xs.fold(None, |acc, x| Some(acc.unwrap_or(0.0) + x))
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}
