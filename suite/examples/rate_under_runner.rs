//! Whether running under the suite's runner changes a benchmark's own rate: the bundled MLP
//! trains alone (its events to a `--log` file) and under the runner (its events down
//! `DATA_FD`, read and logged by the runner), alternately. Both write the same records; what
//! differs is who reads them — a file, or the runner decoding and re-logging them.
//!
//! Wall-clock rates on a shared 2-core machine swing far more than 1% between runs, so the
//! figures that decide are CPU times (docs/architecture.md, "Measuring overhead"): the child's CPU time
//! per run alone and under the runner (what the benchmark itself spends), and the CPU time
//! the runner spends reading it, as a fraction of the child's (what it takes from the
//! machine). The mean rates are printed too.
//!
//! `cargo build --release -p giving-cli && cargo run --release -p giving-suite --example
//! rate_under_runner [GIVING_BINARY] [ROUNDS]` (default `target/release/giving`, 7 rounds).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use giving::Value;
use giving_log::LogReader;
use giving_suite::runner::{ProcessSpec, run_process};

/// The training run both ways: long enough for a dozen rates after a warm-up window.
const TRAIN: [&str; 9] = [
    "train",
    "mlp",
    "--steps",
    "1200",
    "--every",
    "0",
    "--rate-skip",
    "2",
    "--seed=3",
];

fn main() {
    let mut args = std::env::args().skip(1);
    let giving = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "target/release/giving".into()),
    );
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    assert!(giving.is_file(), "{}: build it first", giving.display());
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (mut child_ratios, mut runner_shares, mut rate_ratios) =
        (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        // Alternate which goes first, so a trend of the machine does not favour one side.
        let (alone, runner) = if round % 2 == 1 {
            let a = alone(&giving, dir.path(), round);
            (a, under_runner(&giving, dir.path(), round))
        } else {
            let r = under_runner(&giving, dir.path(), round);
            (alone(&giving, dir.path(), round), r)
        };
        let child_ratio = runner.child_cpu / alone.child_cpu;
        let runner_share = runner.runner_cpu / runner.child_cpu;
        let rate_ratio = runner.rate / alone.rate;
        println!(
            "round {round}: child CPU alone {:.3} s, under the runner {:.3} s (×{child_ratio:.4}); \
             runner CPU {:.4} s = {:.3}% of the child's; rate alone {:.0}, under the runner {:.0} items/s",
            alone.child_cpu,
            runner.child_cpu,
            runner.runner_cpu,
            100.0 * runner_share,
            alone.rate,
            runner.rate
        );
        child_ratios.push(child_ratio);
        runner_shares.push(runner_share);
        rate_ratios.push(rate_ratio);
    }
    println!("over {rounds} rounds, median (min, max):");
    println!(
        "  child CPU under the runner / alone: {}",
        summary(&mut child_ratios, 1.0)
    );
    println!(
        "  runner CPU, % of the child's:       {}",
        summary(&mut runner_shares, 100.0)
    );
    println!(
        "  wall rate under the runner / alone: {}",
        summary(&mut rate_ratios, 1.0)
    );
}

/// What one run measured.
struct Measured {
    /// Mean items/s.
    rate: f64,
    /// The child's user + system CPU time, s.
    child_cpu: f64,
    /// This process's CPU time meanwhile (the runner's reader and writer threads), s.
    runner_cpu: f64,
}

/// `median (min, max)` of `xs × scale`.
fn summary(xs: &mut [f64], scale: f64) -> String {
    xs.sort_by(f64::total_cmp);
    format!(
        "{:.4} ({:.4}, {:.4})",
        scale * xs[xs.len() / 2],
        scale * xs[0],
        scale * xs[xs.len() - 1]
    )
}

/// User + system CPU seconds of `who` (`RUSAGE_SELF`, or `RUSAGE_CHILDREN`: the children
/// waited for so far).
fn cpu(who: libc::c_int) -> f64 {
    // SAFETY: getrusage fills the struct it is given; a zeroed rusage is a valid value.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// A run alone: its mean rate read from its log.
fn alone(giving: &Path, dir: &Path, round: usize) -> Measured {
    let logs = dir.join(format!("alone.{round}"));
    let (children, own) = (cpu(libc::RUSAGE_CHILDREN), cpu(libc::RUSAGE_SELF));
    let status = Command::new(giving)
        .args(TRAIN)
        .arg("--log")
        .arg(&logs)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run giving");
    assert!(status.success(), "the run alone failed: {status}");
    let (child_cpu, runner_cpu) = (
        cpu(libc::RUSAGE_CHILDREN) - children,
        cpu(libc::RUSAGE_SELF) - own,
    );
    let log = std::fs::read_dir(&logs)
        .expect("the log folder")
        .map(|e| e.expect("an entry").path())
        .next()
        .expect("a log");
    let rates: Vec<f64> = LogReader::open(&log)
        .expect("open the log")
        .flatten()
        .filter_map(|e| e.get("rate").and_then(Value::as_f64))
        .collect();
    Measured {
        rate: mean(&rates),
        child_cpu,
        runner_cpu,
    }
}

/// A run under the runner: its mean rate as the runner recorded it.
fn under_runner(giving: &Path, dir: &Path, round: usize) -> Measured {
    let mut argv = vec![giving.display().to_string()];
    argv.extend(TRAIN.iter().map(|a| a.to_string()));
    let spec = ProcessSpec {
        argv,
        env: Vec::new(),
        stop: None,
        max_duration: Duration::from_secs(600),
        grace: Duration::from_secs(5),
        stem: dir.join(format!("runner.{round}")),
        preamble: Default::default(),
        interrupt: None,
        remote: None,
        forward: None,
    };
    let (children, own) = (cpu(libc::RUSAGE_CHILDREN), cpu(libc::RUSAGE_SELF));
    let outcome = run_process(&spec).expect("run under the runner");
    let (child_cpu, runner_cpu) = (
        cpu(libc::RUSAGE_CHILDREN) - children,
        cpu(libc::RUSAGE_SELF) - own,
    );
    assert!(
        outcome.success,
        "the run under the runner failed: {outcome:?}"
    );
    Measured {
        rate: mean(&outcome.rates),
        child_cpu,
        runner_cpu,
    }
}

fn mean(rates: &[f64]) -> f64 {
    assert!(!rates.is_empty(), "no rate");
    rates.iter().sum::<f64>() / rates.len() as f64
}
