//! voir's out-of-band events acted on by the runner: Python children write the JSON lines
//! voir writes (`json.dumps(data)` + `\n` on a line-buffered `DATA_FD`, byte for byte as
//! voir 0.2's `JsonlFileLogger`), with `{"$event": "stop"}`, `error` and `phase` among them.
//! Skipped, saying so, where python3 cannot be run.

#![cfg(unix)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use giving::prelude::*;
use giving::vocab::keys;
use giving::{Event, given};
use giving_suite::config::{Placeholders, Selection, Suite};
use giving_suite::report::{Report, load_run};
use giving_suite::runner::{ProcessResult, RunOptions, run_suite};
use giving_suite::validation::{Layer, Severity, validate};

/// What voir writes, as voir writes it: its `JsonlFileLogger` opens `DATA_FD` line-buffered
/// and writes `json.dumps(data)` and a newline; its `Overseer` logs each phase as it starts.
const PRELUDE: &str = r#"
import json, os, signal, sys, time
out = open(int(os.environ["DATA_FD"]), "w", buffering=1)
def log(data):
    out.write(f"{json.dumps(data)}\n")
def phase(name):
    log({"$event": "phase", "$data": {"name": name}})
def rates(n):
    for i in range(n):
        log({"rate": 100.0 + i, "units": "items/s", "task": "train"})
for name in ["init", "parse_args", "load_script", "run_script"]:
    phase(name)
log({"meta": {"python": "3", "voir": "0.2.24"}})
"#;

/// The children, each after [`PRELUDE`].
const CHILDREN: [(&str, &str); 6] = [
    // milabench's benchmarks: early_stop(signal="stop") logs the stop and the script goes on.
    (
        "stops",
        "rates(5)\nlog({\"$event\": \"stop\"})\ntime.sleep(600)\n",
    ),
    // Deaf to SIGTERM: killed after the grace period, still a stop.
    (
        "stubborn",
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nrates(5)\nlog({\"$event\": \"stop\"})\ntime.sleep(600)\n",
    ),
    // Ends by itself right after asking, with a failing status: a stop all the same.
    (
        "ends",
        "rates(5)\nlog({\"$event\": \"stop\"})\nout.flush()\nsys.exit(3)\n",
    ),
    // voir's Overseer on an exception: the error event, then the exception ends the script.
    (
        "raises",
        "rates(2)\nlog({\"$event\": \"error\", \"$data\": {\"type\": \"ValueError\", \"message\": \"bad batch\"}})\nraise ValueError(\"bad batch\")\n",
    ),
    // An error reported by a process that exits 0 still fails it (milabench's error layer).
    (
        "quiet_error",
        "rates(2)\nlog({\"$event\": \"error\", \"$data\": {\"type\": \"RuntimeError\", \"message\": \"lost a worker\"}})\n",
    ),
    // A run to its end: every phase, finalize included.
    ("plain", "rates(3)\nphase(\"finalize\")\n"),
];

/// Generous: a child that reached it was not stopped by its `stop`.
const MAX_DURATION_S: u64 = 300;

fn has_python() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Writes the children and a suite running each, loaded.
fn suite(dir: &Path) -> Suite {
    let mut yaml = String::new();
    for (name, body) in CHILDREN {
        let script = dir.join(format!("{name}.py"));
        std::fs::write(&script, format!("{PRELUDE}{body}")).unwrap();
        yaml += &format!(
            "{name}:\n  command: [python3, \"{}\"]\n  max_duration: {MAX_DURATION_S}\n",
            script.display()
        );
    }
    let file = dir.join("voir.yaml");
    std::fs::write(&file, yaml).unwrap();
    let placeholders = Placeholders {
        n_gpu: 0,
        n_cpu: 1,
        data: dir.join("data"),
        runs: dir.join("runs"),
        giving: "giving".into(),
        ..Default::default()
    };
    Suite::load(&file, &placeholders).unwrap_or_else(|e| panic!("{e}"))
}

fn result<'a>(results: &'a [ProcessResult], bench: &str) -> &'a ProcessResult {
    results
        .iter()
        .find(|r| r.bench == bench)
        .unwrap_or_else(|| panic!("no {bench} in {results:?}"))
}

#[test]
fn stop_error_and_phase_are_acted_on() {
    if !has_python() {
        eprintln!("SKIPPED: python3 cannot be run here");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite(tmp.path());
    let gv = given();
    let forwarded = gv.spawn(gv.stream().collect::<Vec<Event>>());
    let options = RunOptions {
        runs: tmp.path().join("runs"),
        name: Some("voir".to_owned()),
        grace: Duration::from_secs(1),
        n_gpu: 0,
        repeat: 1,
        forward: Some(gv.giver()),
        system: None,
        interrupt: None,
    };
    let summary = run_suite(&suite, &Selection::default(), &options, |_| {}).unwrap();
    gv.finish().unwrap();
    let forwarded = forwarded.join().unwrap();
    let results = &summary.processes;
    assert_eq!(results.len(), CHILDREN.len());

    // `stop`: ended at once by SIGTERM (Python's default handler dies of it), a success, its
    // rates kept; its phases up to the one it was stopped in.
    let stops = &result(results, "stops").outcome;
    assert!(stops.success, "{stops:?}");
    assert_eq!(stops.stopped.as_deref(), Some("voir early stop"));
    assert_eq!((stops.killed, stops.signal), (Some("sigterm"), Some(15)));
    assert!(!stops.interrupted);
    assert!(
        stops.duration_s < 60.0,
        "stopped after {} s: it ran toward its max_duration",
        stops.duration_s
    );
    assert_eq!(stops.rates, [100.0, 101.0, 102.0, 103.0, 104.0]);
    assert_eq!(
        stops.phases,
        ["init", "parse_args", "load_script", "run_script"]
    );
    assert!(stops.error_events.is_empty());

    // Deaf to SIGTERM: SIGKILL after the 1 s grace, a success all the same.
    let stubborn = &result(results, "stubborn").outcome;
    assert!(stubborn.success, "{stubborn:?}");
    assert_eq!(stubborn.killed, Some("sigkill"));
    assert_eq!(stubborn.stopped.as_deref(), Some("voir early stop"));
    assert!(
        (1.0..60.0).contains(&stubborn.duration_s),
        "{}",
        stubborn.duration_s
    );

    // Ended by itself after the stop (exit 3, or SIGTERM if the runner was quicker).
    let ends = &result(results, "ends").outcome;
    assert!(ends.success, "{ends:?}");
    assert_eq!(ends.stopped.as_deref(), Some("voir early stop"));
    assert!(
        ends.exit_code == Some(3) || ends.signal == Some(15),
        "{ends:?}"
    );

    // `error`: failed, with the message the child sent.
    let raises = &result(results, "raises").outcome;
    assert!(!raises.success);
    assert_eq!(raises.exit_code, Some(1));
    assert_eq!(raises.error_events, ["ValueError: bad batch"]);
    assert_eq!(raises.stopped, None);
    let quiet = &result(results, "quiet_error").outcome;
    assert_eq!(quiet.exit_code, Some(0));
    assert!(
        !quiet.success,
        "an error event fails the process: {quiet:?}"
    );

    // A run to its end: every phase recorded, the last one finalize.
    let plain = &result(results, "plain").outcome;
    assert!(plain.success, "{plain:?}");
    assert_eq!(
        plain.phases,
        [
            "init",
            "parse_args",
            "load_script",
            "run_script",
            "finalize"
        ]
    );
    assert_eq!((plain.stopped.as_deref(), plain.killed), (None, None));

    // The record says it all, as written to `{bench}.{tag}.json`.
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(summary.dir.join("stops.D0.json")).unwrap())
            .unwrap();
    assert_eq!(record["stopped"], "voir early stop");
    assert_eq!(record["success"], true);
    assert_eq!(record["phases"][3], "run_script");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(summary.dir.join("raises.D0.json")).unwrap())
            .unwrap();
    assert_eq!(record["error_events"][0], "ValueError: bad batch");

    // The dashboard's events: each phase given again with the process's name and `phase`.
    let phases: Vec<(&str, &str)> = forwarded
        .iter()
        .filter_map(|e| Some((e.get(keys::BENCH)?.as_str()?, e.get(keys::PHASE)?.as_str()?)))
        .filter(|(bench, _)| *bench == "plain.D0")
        .collect();
    assert_eq!(
        phases,
        [
            ("plain.D0", "init"),
            ("plain.D0", "parse_args"),
            ("plain.D0", "load_script"),
            ("plain.D0", "run_script"),
            ("plain.D0", "finalize")
        ]
    );

    // The report: the stopped processes count as run, not failed, with their rates; the
    // error layer names the errors the children sent and nothing else.
    let run = load_run(&summary.dir).unwrap();
    let report = Report::new(&run);
    let row = |bench: &str| {
        report
            .rows
            .iter()
            .find(|r| r.bench == bench)
            .unwrap_or_else(|| panic!("no row {bench}"))
    };
    for bench in ["stops", "stubborn", "ends"] {
        let r = row(bench);
        assert_eq!((r.fail, r.n), (0, 1), "{bench}");
        // 5 rates, 100..=104: milabench drops the min and the max, mean of 101, 102, 103.
        assert_eq!(r.perf.map(|p| (p.n, p.mean)), Some((3, 102.0)), "{bench}");
        assert_eq!(r.score, 102.0, "{bench}");
    }
    // The `fail` column has milabench's meaning (`summary.py` `aggregate`): `quiet_error`
    // exited 0 with train rates, so milabench's report counts it a success; the error layer
    // below still reports its error (and its `{bench}.{tag}.json` says it failed).
    assert_eq!((row("raises").fail, row("quiet_error").fail), (1, 0));
    assert!(!result(results, "quiet_error").outcome.success);
    let errors: Vec<(String, String)> = validate(&run, &[Layer::Error])
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.subject, f.message))
        .collect();
    assert_eq!(
        errors,
        [
            (
                "raises.D0".to_owned(),
                "error event: ValueError: bad batch".to_owned()
            ),
            (
                "quiet_error.D0".to_owned(),
                "error event: RuntimeError: lost a worker".to_owned()
            ),
        ]
    );
}

/// A real voir benchmark, as milabench's are: its voirfile's `early_stop` sends
/// `signal="stop"` (benchmate's `voirfile_monitor`), so voir only logs `{"$event": "stop"}`
/// and the script would go on for minutes.
const VOIR_BENCH: &str = r#"
import time
import voir

def main():
    for i in voir.iterate("train", range(100000), report_batch=True, batch_size=64):
        time.sleep(0.005)

if __name__ == "__main__":
    main()
"#;

/// voir's instruments as benchmate's voirfile sets them, with the options milabench passes in
/// `--config`.
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
    ov.require(
        log("rate", "units", "loss", context="task"),
        rate(interval=options.interval, skip=options.skip),
        early_stop("rate", n=options.stop, task="train", signal="stop"),
    )
"#;

fn has_voir() -> bool {
    Command::new("python3")
        .args(["-c", "import voir"])
        .output()
        .is_ok_and(|o| o.status.success())
        && Command::new("voir").arg("--help").output().is_ok()
}

#[test]
fn a_real_voir_early_stop_ends_the_benchmark_as_a_success() {
    if !has_voir() {
        eprintln!("SKIPPED: voir cannot be imported (python3 -m pip install voir; .ci/run does)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("bench.py"), VOIR_BENCH).unwrap();
    std::fs::write(dir.join("voirfile.py"), VOIRFILE).unwrap();
    // voir finds its voirfile in the folder it starts in: the test's own, so run it from
    // there with `cd`.
    let file = dir.join("suite.yaml");
    std::fs::write(
        &file,
        format!(
            "bench:\n  command: [sh, -c, 'cd \"$0\" && exec voir \"$@\"', \"{}\", --config, voirconf.json, bench.py]\n  max_duration: {MAX_DURATION_S}\n",
            dir.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("voirconf.json"),
        r#"{"options": {"stop": 3, "skip": 0, "interval": "10"}}"#,
    )
    .unwrap();
    let placeholders = Placeholders {
        n_gpu: 0,
        n_cpu: 1,
        data: dir.join("data"),
        runs: dir.join("runs"),
        giving: "giving".into(),
        ..Default::default()
    };
    let suite = Suite::load(&file, &placeholders).unwrap_or_else(|e| panic!("{e}"));
    let options = RunOptions {
        runs: dir.join("runs"),
        name: Some("voir".to_owned()),
        grace: Duration::from_secs(5),
        n_gpu: 0,
        repeat: 1,
        forward: None,
        system: None,
        interrupt: None,
    };
    let summary = run_suite(&suite, &Selection::default(), &options, |_| {}).unwrap();
    let o = &summary.processes[0].outcome;
    let stderr = std::fs::read_to_string(summary.dir.join("bench.D0.stderr")).unwrap();
    assert!(o.success, "{o:?}\n{stderr}");
    assert_eq!(o.stopped.as_deref(), Some("voir early stop"), "{stderr}");
    assert_eq!(o.killed, Some("sigterm"));
    // early_stop logs its stop on the rate after the 3rd; 100,000 steps would take minutes.
    assert!((3..=5).contains(&o.rates.len()), "{:?}\n{stderr}", o.rates);
    assert!(o.duration_s < 60.0, "{}", o.duration_s);
    assert_eq!(o.phases.last().map(String::as_str), Some("run_script"));
    let report = Report::new(&load_run(&summary.dir).unwrap());
    assert_eq!((report.rows[0].fail, report.rows[0].n), (0, 1));
    assert!(report.rows[0].perf.is_some_and(|p| p.mean > 0.0));
}
