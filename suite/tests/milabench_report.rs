//! A run folder read by milabench's own report code: a suite with a `per_gpu` benchmark, an
//! `njobs` one, a failing one, a child writing voir's JSON lines with `gpudata`, and one that
//! ends with `{"$event": "stop"}` runs (Python children writing to `DATA_FD`, no torch); then
//! milabench's `summary.py` and `report/__init__.py` (copied under `tests/data/milabench`, MIT)
//! read the folder, and every benchmark's fail, n, ngpu, perf, score (and the GPU columns),
//! the global score and the failure rate must be ours (`giving_suite::report`), as must the
//! summary JSON (`giving suite summary`) and the score with a configuration's weights
//! (`report --config`).
//!
//! milabench's code needs pandas, numpy and hrepr: they are installed, pinned, into a virtual
//! environment under Cargo's test temporary folder (once; kept for the next runs). Where
//! python3, its venv module or pip cannot be had, the test says `SKIPPED: <why>` and returns.
//! `GIVING_MILABENCH_PYTHON` names a Python that has them already (skips the install).

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use giving_suite::config::{Placeholders, Selection, Suite};
use giving_suite::report::{Report, Row, load_run, load_summary, summary_json};
use giving_suite::runner::{RunOptions, run_suite};
use serde_json::Value;

/// What milabench's report imports beyond the standard library, pinned (milabench's
/// `pyproject.toml` asks `numpy<2`).
const PACKAGES: [&str; 4] = [
    "pandas==2.2.3",
    "numpy==1.26.4",
    "hrepr==0.7.3",
    "ovld==0.3.9",
];

/// The children's shared lines: voir's `JsonlFileLogger` (`json.dumps` + newline on a
/// line-buffered `DATA_FD`), and the GPU this process was given (`CUDA_VISIBLE_DEVICES`).
const PRELUDE: &str = r#"
import json, os, sys, time
out = open(int(os.environ["DATA_FD"]), "w", buffering=1)
def log(data):
    out.write(json.dumps(data) + "\n")
device = int(os.environ.get("CUDA_VISIBLE_DEVICES", "0"))
"#;

/// The benchmarks: name, extra YAML, the child's body after [`PRELUDE`].
const BENCHES: [(&str, &str, &str); 5] = [
    // Rates without a task (the runner writes them under `train`, as giving's children give
    // them), others under `early_stop` that neither report counts, and a falling loss.
    (
        "pergpu",
        "weight: 2",
        r#"
for i in range(7):
    log({"rate": 100.0 + 10 * device + i * (3 if i % 2 else 1)})
    log({"rate": 9999.0, "task": "early_stop"})
    log({"loss": 2.0 / (i + 1), "task": "train"})
"#,
    ),
    // Two jobs sharing the machine: milabench scores them by perf, not per device.
    (
        "jobs",
        "weight: 1\n  plan: {method: njobs, n: 2}",
        r#"
for i in range(6):
    log({"rate": 50.0 + i * i, "task": "train", "units": "items/s"})
"#,
    ),
    // Fails after giving rates: counted, with score 0.
    (
        "fails",
        "weight: 1",
        r#"
for i in range(3):
    log({"rate": 30.0 + i, "task": "train"})
sys.exit(1)
"#,
    ),
    // voir's GPU monitor: `gpudata` for both devices with the sample's time; each process
    // keeps its own device's. The same power on both, so that milabench's "first process"
    // energy does not depend on its directory order.
    (
        "gpu",
        "weight: 1",
        r#"
t0 = 1_700_000_000.0
for i in range(8):
    gpus = {
        str(d): {"memory": [1000.0 + 100 * i + 7 * d, 80000.0], "load": 0.5 + 0.05 * i,
                 "temperature": 60, "power": 200.0 + 10 * i}
        for d in (0, 1)
    }
    log({"task": "main", "gpudata": gpus, "time": t0 + 2.0 * i})
    log({"rate": 200.0 + 20 * device + i, "task": "train"})
"#,
    ),
    // milabench's benchmarks: voir's early stop logs `stop` and the script goes on; the
    // runner ends it (SIGTERM: return code -15) and it counts as a success.
    (
        "stops",
        "weight: 1",
        r#"
for i in range(5):
    log({"rate": 70.0 + i, "task": "train"})
log({"$event": "stop"})
time.sleep(600)
"#,
    ),
];

fn has_python() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A Python that can import milabench's report code, or why there is none.
fn milabench_python() -> Result<PathBuf, String> {
    if let Some(python) = std::env::var_os("GIVING_MILABENCH_PYTHON") {
        return Ok(PathBuf::from(python));
    }
    if !has_python() {
        return Err("python3 cannot be run here".to_owned());
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("milabench-report-venv");
    let python = venv.join("bin").join("python");
    let ready = venv.join(format!("ready-{}", PACKAGES.join("-")));
    if ready.exists() {
        return Ok(python);
    }
    let run = |command: &mut Command, what: &str| -> Result<(), String> {
        let out = command
            .output()
            .map_err(|e| format!("{what}: cannot run: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
            Err(format!("{what} failed: {}", tail.join(" / ")))
        }
    };
    let _ = std::fs::remove_dir_all(&venv);
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    )?;
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(PACKAGES),
        &format!("pip install {}", PACKAGES.join(" ")),
    )?;
    std::fs::write(&ready, "").map_err(|e| format!("cannot mark the venv ready: {e}"))?;
    Ok(python)
}

/// Writes the children and the suite, loaded.
fn suite(dir: &Path) -> Suite {
    let mut yaml = String::new();
    for (name, extra, body) in BENCHES {
        let script = dir.join(format!("{name}.py"));
        std::fs::write(&script, format!("{PRELUDE}{body}")).unwrap();
        yaml += &format!(
            "{name}:\n  command: [python3, \"{}\"]\n  max_duration: 120\n  {extra}\n",
            script.display()
        );
    }
    let file = dir.join("suite.yaml");
    std::fs::write(&file, yaml).unwrap();
    let placeholders = Placeholders {
        n_gpu: 2,
        n_cpu: 2,
        data: dir.join("data"),
        runs: dir.join("runs"),
        giving: "giving".into(),
        ..Default::default()
    };
    Suite::load(&file, &placeholders).unwrap_or_else(|e| panic!("{e}"))
}

/// milabench's reading of `run`, weighted by `weights` in its `report_weighted` part.
fn milabench_reading(python: &Path, run: &Path, weights: &Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/milabench_report.py");
    let weights_file = run.with_extension("weights.json");
    std::fs::write(&weights_file, weights.to_string()).unwrap();
    let out = Command::new(python)
        .arg(&script)
        .arg(run)
        .arg(&weights_file)
        // No __pycache__ in the source tree.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "milabench's report failed:\n{stderr}");
    // milabench's error_guard prints a traceback and goes on: that is a failure here.
    assert!(
        !stderr.contains("non-fatal error"),
        "milabench's report hit an error:\n{stderr}"
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}:\n{stderr}"))
}

fn close(ours: f64, theirs: &Value, what: &str) {
    let theirs = theirs
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: milabench has {theirs}, ours {ours}"));
    let scale = ours.abs().max(theirs.abs()).max(1.0);
    assert!(
        (ours - theirs).abs() <= 1e-9 * scale,
        "{what}: ours {ours}, milabench {theirs}"
    );
}

fn option_close(ours: Option<f64>, theirs: &Value, what: &str) {
    match ours {
        Some(ours) => close(ours, theirs, what),
        None => assert!(
            theirs.is_null() || theirs == 0,
            "{what}: ours none, milabench {theirs}"
        ),
    }
}

/// One Breakdown row against milabench's `_make_row`.
fn check_row(row: &Row, theirs: &Value) {
    let what = |column: &str| format!("{}: {column}", row.bench);
    assert_eq!(theirs["n"], row.n, "{}", what("n"));
    assert_eq!(theirs["fail"], row.fail, "{}", what("fail"));
    assert_eq!(theirs["ngpu"], row.ngpu, "{}", what("ngpu"));
    assert_eq!(
        theirs["weight"].as_f64(),
        Some(row.weight),
        "{}",
        what("weight")
    );
    option_close(row.perf.map(|m| m.mean), &theirs["perf"], &what("perf"));
    if let Some(m) = row.perf {
        close(m.std / m.mean, &theirs["std%"], &what("std%"));
        close(m.sem / m.mean, &theirs["sem%"], &what("sem%"));
    }
    close(row.score, &theirs["score"], &what("score"));
    option_close(
        row.peak_memory,
        &theirs["peak_memory"],
        &what("peak_memory"),
    );
    option_close(
        row.median_watt,
        &theirs["median_watt"],
        &what("median_watt"),
    );
    option_close(row.energy_kj, &theirs["energy (Kj)"], &what("energy"));
    option_close(row.perf_watt, &theirs["perf_watt"], &what("perf_watt"));
}

/// The global score and failure rate, as milabench prints them (2 decimals).
fn check_scores(report: &Report, theirs: &Value) {
    let score = report.score.expect("a global score");
    assert_eq!(
        format!("{score:.2}"),
        format!("{:.2}", theirs["score"].as_f64().unwrap()),
        "global score; milabench printed:\n{}",
        theirs["text"]
    );
    assert_eq!(
        format!("{:.2}", report.failure_rate * 100.0),
        format!("{:.2}", theirs["failure_rate_pct"].as_f64().unwrap()),
        "failure rate"
    );
}

#[test]
fn milabenchs_report_reads_our_run_as_we_do() {
    let python = match milabench_python() {
        Ok(python) => python,
        Err(why) => {
            eprintln!("SKIPPED: milabench's report code cannot be run: {why}");
            return;
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite(tmp.path());
    let options = RunOptions {
        runs: tmp.path().join("runs"),
        name: Some("mb".to_owned()),
        grace: Duration::from_secs(2),
        n_gpu: 2,
        repeat: 1,
        forward: None,
        system: None,
        interrupt: None,
    };
    let run = run_suite(&suite, &Selection::default(), &options, |_| {}).unwrap();
    // per_gpu: 2 processes each for pergpu, fails, gpu, stops; njobs: 2.
    assert_eq!(run.processes.len(), 10);

    let configured = vec![
        ("pergpu".to_owned(), 2.0, true),
        ("jobs".to_owned(), 1.0, true),
        ("fails".to_owned(), 1.0, true),
        ("gpu".to_owned(), 0.5, true),
        ("stops".to_owned(), 1.0, true),
        // Configured, not run: counts with score 0 and weight 3.
        ("never".to_owned(), 3.0, true),
        ("disabled".to_owned(), 5.0, false),
    ];
    let weights: serde_json::Map<String, Value> = configured
        .iter()
        .map(|(name, weight, enabled)| {
            let entry = serde_json::json!({"name": name, "group": name, "weight": weight, "enabled": enabled});
            (name.clone(), entry)
        })
        .collect();
    let theirs = milabench_reading(&python, &run.dir, &Value::Object(weights));

    let data = load_run(&run.dir).unwrap();
    let report = Report::new(&data);
    let rows = &theirs["report"]["rows"];
    assert_eq!(
        rows.as_object().unwrap().len(),
        report.rows.len(),
        "milabench's rows: {rows}"
    );
    for row in &report.rows {
        check_row(row, &rows[&row.bench]);
    }
    check_scores(&report, &theirs["report"]);
    // What the suite was built to show, so that a reading that agrees by accident fails.
    let ours = |bench: &str| report.rows.iter().find(|r| r.bench == bench).unwrap();
    assert_eq!((ours("fails").fail, ours("fails").score), (2, 0.0));
    assert_eq!((ours("stops").fail, ours("stops").n), (0, 2));
    assert_eq!((ours("jobs").ngpu, ours("pergpu").ngpu), (2, 1));
    assert!(ours("gpu").energy_kj.is_some_and(|e| e > 0.0));
    assert!(
        ours("pergpu").perf.unwrap().mean < 200.0,
        "early_stop rates were counted"
    );

    // `report --config`: the configuration's weights, and the configured benchmarks that did
    // not run.
    let weighted = Report::new(&data).with_config(&configured);
    let rows = &theirs["weighted"]["rows"];
    for row in weighted.rows.iter().filter(|r| r.n > 0) {
        check_row(row, &rows[&row.bench]);
    }
    let never = weighted.rows.iter().find(|r| r.bench == "never").unwrap();
    assert_eq!((never.n, never.score, never.weight), (0, 0.0, 3.0));
    assert!(
        rows["never"]["n"].is_null(),
        "milabench's row: {}",
        rows["never"]
    );
    check_scores(&weighted, &theirs["weighted"]);
    assert!(
        weighted.score < report.score,
        "a bench not run lowers the score"
    );

    // `giving suite summary`: milabench's summary, key for key.
    let ours_summary: Value = {
        let path = tmp.path().join("summary.json");
        std::fs::write(&path, summary_json(&data)).unwrap();
        // NaN is written as Python writes it (`NaN`): read here as null, as the script does.
        let text = std::fs::read_to_string(&path).unwrap();
        check_summary_reads_back(&path, &report);
        serde_json::from_str(&text.replace("NaN", "null")).unwrap()
    };
    check_summary(&ours_summary, &theirs["summary"]);
}

/// Our summary against milabench's `make_summary`, figure for figure.
fn check_summary(ours: &Value, theirs: &Value) {
    let (ours, theirs) = (ours.as_object().unwrap(), theirs.as_object().unwrap());
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    for (bench, t) in theirs {
        let o = &ours[bench];
        let mut keys: Vec<_> = t.as_object().unwrap().keys().collect();
        let mut our_keys: Vec<_> = o.as_object().unwrap().keys().collect();
        keys.sort();
        our_keys.sort();
        assert_eq!(our_keys, keys, "{bench}: keys");
        for key in [
            "name",
            "group",
            "n",
            "ngpu",
            "successes",
            "failures",
            "weight",
            "enabled",
        ] {
            assert_eq!(o[key], t[key], "{bench}: {key}");
        }
        numbers(
            &o["train_rate"],
            &t["train_rate"],
            &format!("{bench}.train_rate"),
        );
        numbers(&o["per_gpu"], &t["per_gpu"], &format!("{bench}.per_gpu"));
        numbers(&o["gpu_load"], &t["gpu_load"], &format!("{bench}.gpu_load"));
        for key in ["energy", "elpased", "perf_watt"] {
            numbers(&o[key], &t[key], &format!("{bench}.{key}"));
        }
        assert_eq!(o["meta"]["cpu"], t["meta"]["cpu"], "{bench}: meta");
        // walltime: both from the same start and end lines, read by two JSON parsers that
        // may round an epoch time of 1.7e9 s 1 ulp (2.4e-7 s) apart.
        for (k, v) in t["walltime"].as_object().unwrap() {
            let ours = o["walltime"][k].as_f64().unwrap();
            assert!(
                (ours - v.as_f64().unwrap()).abs() < 1e-6,
                "{bench}.walltime.{k}"
            );
        }
    }
}

/// Every number in `theirs` is the one at the same place in `ours` (nulls: NaN on both).
fn numbers(ours: &Value, theirs: &Value, at: &str) {
    match theirs {
        Value::Object(map) => {
            assert_eq!(
                ours.as_object().map(|o| o.len()),
                Some(map.len()),
                "{at}: {ours} vs {theirs}"
            );
            for (k, v) in map {
                numbers(&ours[k], v, &format!("{at}.{k}"));
            }
        }
        Value::Null => assert!(ours.is_null(), "{at}: ours {ours}, milabench NaN"),
        other => close(ours.as_f64().unwrap_or(f64::NAN), other, at),
    }
}

/// `report --compare summary.json` reads the summary back as the report it stands for.
fn check_summary_reads_back(path: &Path, report: &Report) {
    let base = load_summary(path).unwrap();
    for row in &report.rows {
        let b = base.rows.iter().find(|b| b.bench == row.bench).unwrap();
        assert_eq!(
            (b.n, b.fail, b.ngpu),
            (row.n, row.fail, row.ngpu),
            "{}",
            row.bench
        );
        close(b.score, &Value::from(row.score), &row.bench);
    }
    let (ours, theirs) = (report.score.unwrap(), base.score.unwrap());
    close(ours, &Value::from(theirs), "base score");
}
