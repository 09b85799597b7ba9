//! The report's rows and its text form.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use super::load::RunData;
use super::stats::{Metrics, global_score};

/// Failure rates up to this pass (milabench's 1%).
const PASS_FAILURE_RATE: f64 = 0.01;

/// One row of the Breakdown table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The benchmark.
    pub bench: String,
    /// Processes that failed.
    pub fail: usize,
    /// Processes run.
    pub n: usize,
    /// GPUs it ran on (0 on the CPU).
    pub ngpu: usize,
    /// Statistics of every rate of every process.
    pub perf: Option<Metrics>,
    /// The most GPU memory used, MiB.
    pub peak_memory: Option<f64>,
    /// Σ over devices of the mean of the rates its processes gave there (every repetition),
    /// × (1 − fail/n).
    pub score: f64,
    /// Its weight.
    pub weight: f64,
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
}

impl Report {
    /// Computes the report of a run read by [`load_run`](super::load_run).
    pub fn new(run: &RunData) -> Self {
        let rows: Vec<Row> = run
            .benches
            .iter()
            .filter(|b| !b.processes.is_empty())
            .map(|b| {
                let n = b.processes.len();
                let fail = b.processes.iter().filter(|p| !p.success).count();
                let all: Vec<f64> = b
                    .processes
                    .iter()
                    .flat_map(|p| p.rates.iter().copied())
                    .collect();
                // A device is a process slot of the plan (`D0`, `1`): its repetitions share it.
                let mut devices: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
                for p in &b.processes {
                    let slot = p
                        .tag
                        .split_once(".R")
                        .map_or(p.tag.as_str(), |(slot, _)| slot);
                    devices.entry(slot).or_default().extend(&p.rates);
                }
                let per_device: f64 = devices
                    .values()
                    .filter_map(|rates| Metrics::of(rates))
                    .map(|m| m.mean)
                    .sum::<f64>()
                    // An empty f64 sum is -0.0, which would print as "-0.00".
                    + 0.0;
                let ngpu = b
                    .processes
                    .iter()
                    .filter_map(|p| p.device)
                    .collect::<BTreeSet<_>>()
                    .len();
                Row {
                    bench: b.name.clone(),
                    fail,
                    n,
                    ngpu,
                    perf: Metrics::of(&all),
                    peak_memory: b
                        .processes
                        .iter()
                        .filter_map(|p| p.peak_memory_mb)
                        .reduce(f64::max),
                    score: per_device * (1.0 - fail as f64 / n as f64),
                    weight: b.weight,
                }
            })
            .collect();
        let (fails, runs) = rows.iter().fold((0, 0), |(f, n), r| (f + r.fail, n + r.n));
        let failure_rate = if runs == 0 {
            0.0
        } else {
            fails as f64 / runs as f64
        };
        let score = global_score(&rows.iter().map(|r| (r.score, r.weight)).collect::<Vec<_>>());
        Self {
            system: run.system.clone(),
            rows,
            failure_rate,
            score,
        }
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
        writeln!(
            f,
            "{:<width$} {:>4} {:>3} {:>4} {:>12} {:>6} {:>6} {:>11} {:>12} {:>6}",
            "bench", "fail", "n", "ngpu", "perf", "sem%", "std%", "peak_memory", "score", "weight"
        )?;
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
            writeln!(
                f,
                "{:<width$} {:>4} {:>3} {:>4} {:>12} {:>6} {:>6} {:>11} {:>12.2} {:>6.2}",
                r.bench, r.fail, r.n, r.ngpu, perf, sem, std, memory, r.score, r.weight
            )?;
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
            Some(score) => writeln!(f, "Score:        {score:>9.2}"),
            None => writeln!(f, "Score:              -"),
        }
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}
