//! A Python benchmark under voir (from pip, no torch) runs unchanged in a suite next to a Rust
//! one, and both appear in the report. Skipped, saying so, where voir is not installed
//! (.ci/run installs it).

use std::process::Command;

mod support;
use support::{giving_in as giving, outcome, run_folder};

const BENCH_PY: &str = r#"
import platform
import time
import voir
from giving import give

def main():
    give(meta={"python": platform.python_version(), "voir": voir.__version__})
    for i in voir.iterate("train", range(400), report_batch=True, batch_size=64):
        give(loss=1.0 / (i + 1))
        time.sleep(0.005)

if __name__ == "__main__":
    main()
"#;

/// voir's instruments as a milabench benchmark's voirfile sets them: the options milabench
/// passes in `--config` (stop, skip, interval), forwarded loss, rate and meta, early stop.
const VOIRFILE: &str = r#"
from dataclasses import dataclass

from voir import configurable
from voir.instruments import early_stop, log, rate


@dataclass
class Config:
    stop: int = 0
    skip: int = 0
    interval: str = "1s"


@configurable
def instrument_main(ov, options: Config):
    yield ov.phases.init
    instruments = [
        log("loss", "rate", "units", "meta", context="task"),
        rate(interval=options.interval, skip=options.skip),
    ]
    if options.stop:
        instruments.append(early_stop("rate", n=options.stop, task="train"))
    ov.require(*instruments)
"#;

/// The same `voir.options` reach both: voir through `--config`, giving through its
/// environment (GIVING_STOP, GIVING_RATE_SKIP: without it the MLP would skip 5 windows).
const SUITE: &str = r#"
_options:
  max_duration: 120
  voir: {options: {stop: 3, skip: 0, interval: "10"}}
python:
  inherits: _options
  command: [voir, bench.py]
rust:
  inherits: _options
  command: ["{giving}", train, mlp]
  argv: {--every: 0, --steps: 400}
"#;

fn has_voir() -> bool {
    Command::new("python3")
        .args(["-c", "import voir"])
        .output()
        .is_ok_and(|o| o.status.success())
        && Command::new("voir").arg("--help").output().is_ok()
}

#[test]
fn a_voir_benchmark_runs_next_to_a_rust_one() {
    if !has_voir() {
        eprintln!("SKIPPED: voir is not installed (python3 -m pip install voir)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("bench.py"), BENCH_PY).unwrap();
    std::fs::write(tmp.path().join("voirfile.py"), VOIRFILE).unwrap();
    std::fs::write(tmp.path().join("suite.yaml"), SUITE).unwrap();
    let (ok, out) = giving(
        &["suite", "run", "suite.yaml", "--name", "mixed"],
        tmp.path(),
    );
    assert!(ok, "{out}");
    assert!(out.contains("python.D0: ok"), "{out}");
    assert!(out.contains("rust.D0: ok"), "{out}");
    let dir = run_folder(&tmp.path().join("runs"), "mixed");
    let (ok, report) = giving(&["suite", "report", dir.to_str().unwrap()], tmp.path());
    assert!(ok, "{report}");
    // voir read the options: it stopped after `stop` rates (voir's early_stop stops on the one
    // after the n-th), long before its 400 steps.
    let python = outcome(&dir, "python.D0");
    let rates = python["rates"].as_array().unwrap().len();
    assert!((3..=4).contains(&rates), "{python}");
    assert!(python["events"].as_u64().unwrap() < 200, "{python}");
    assert_eq!(
        python["meta"]["voir"].as_str().map(str::is_empty),
        Some(false)
    );
    assert!(dir.join("python.D0.voirconf.json").is_file());
    let rust = outcome(&dir, "rust.D0");
    assert!(rust["rates"].as_array().unwrap().len() >= 3, "{rust}");
    assert_eq!(
        rust["meta"]["versions"]["giving"],
        env!("CARGO_PKG_VERSION")
    );
    for bench in ["python ", "rust "] {
        let row = report
            .lines()
            .find(|l| l.starts_with(bench))
            .unwrap_or_else(|| panic!("{report}"));
        let cols: Vec<&str> = row.split_whitespace().collect();
        let perf: f64 = cols[4]
            .parse()
            .unwrap_or_else(|_| panic!("no perf for {bench}: {row}"));
        assert!(perf > 0.0, "{row}");
    }
}
