//! A Python benchmark under voir (from pip, no torch) runs unchanged in a suite next to a Rust
//! one, and both appear in the report. Skipped, saying so, where voir is not installed
//! (.ci/run installs it).

use std::process::Command;

mod support;
use support::giving_in as giving;

const BENCH_PY: &str = r#"
import time
import voir
from giving import give

def main():
    for i in voir.iterate("train", range(60), report_batch=True, batch_size=64):
        give(loss=1.0 / (i + 1))
        time.sleep(0.005)

if __name__ == "__main__":
    main()
"#;

/// voir's instruments, as a milabench benchmark's voirfile sets them: forward loss and rate.
const VOIRFILE: &str = r#"
from voir.instruments import log, rate

def instrument_main(ov):
    yield ov.phases.init
    ov.require(log("loss", "rate", "units", context="task"), rate(interval=5))
"#;

const SUITE: &str = r#"
python:
  command: [voir, bench.py]
  max_duration: 120
rust:
  command: ["{giving}", train, mlp]
  max_duration: 120
  voir: {options: {stop: 2}}
  argv: {--every: 0, --rate-skip: 0, --steps: 200}
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
    let dir = std::fs::read_dir(tmp.path().join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let (ok, report) = giving(&["suite", "report", dir.to_str().unwrap()], tmp.path());
    assert!(ok, "{report}");
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
