//! `giving suite run` end to end: the bundled dev suite, and benchmarks that fail, hang or
//! write garbage to `DATA_FD` (shell one-liners speaking the protocol's forms).

use std::path::{Path, PathBuf};
use std::process::Command;

use giving_log::LogReader;

mod support;
use support::{giving_in as giving, outcome};

/// The one run folder under `runs`.
fn run_dir(runs: &Path) -> PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.into_iter().next().unwrap()
}

#[test]
fn the_dev_suite_runs_and_its_data_files_are_logs() {
    let tmp = tempfile::tempdir().unwrap();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites/dev.yaml");
    let (ok, out) = giving(
        &["suite", "run", config.to_str().unwrap(), "--runs", "runs"],
        tmp.path(),
    );
    assert!(ok, "{out}");
    assert!(out.contains("mlp.D0: ok"), "{out}");
    let dir = run_dir(&tmp.path().join("runs"));
    assert!(
        dir.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("dev.20"),
        "{dir:?}"
    );
    for file in [
        "config.json",
        "system.json",
        "mlp.D0.data",
        "mlp.D0.giving",
        "mlp.D0.json",
        "mlp.D0.stdout",
        "mlp.D0.stderr",
    ] {
        assert!(dir.join(file).is_file(), "missing {file} in {dir:?}");
    }
    // The giving log is closed cleanly, with the child's rates in it.
    let mut reader = LogReader::open(dir.join("mlp.D0.giving")).unwrap();
    let events: Vec<_> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(reader.end().unwrap().events, events.len() as u64);
    let rates = events.iter().filter(|e| e.has("rate")).count();
    assert!(
        rates >= 3,
        "the child stops after 3 rates (GIVING_STOP): {rates}"
    );
    assert!(events.iter().any(|e| e.has("loss")));
    let status = outcome(&dir, "mlp.D0");
    assert_eq!(status["exit_code"], 0);
    assert_eq!(status["rates"].as_array().unwrap().len(), rates);
    // The data file is milabench's JSON lines: config, meta, start, a line per event, end;
    // the child's rates (given without a task) under `task: "train"`.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("mlp.D0.data"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(&kinds[..3], ["config", "meta", "start"]);
    assert_eq!(kinds.last(), Some(&"end"));
    assert_eq!(lines[0]["data"]["tag"], serde_json::json!(["mlp", "D0"]));
    assert_eq!(lines.last().unwrap()["data"]["return_code"], 0);
    let train = lines
        .iter()
        .filter(|l| l["data"]["rate"].is_number() && l["data"]["task"] == "train")
        .count();
    assert_eq!(train, rates);
    assert_eq!(kinds.iter().filter(|k| **k == "data").count(), events.len());
    let stdout = std::fs::read_to_string(dir.join("mlp.D0.stdout")).unwrap();
    assert!(stdout.contains("(stopped early)"), "{stdout}");
    let system: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("system.json")).unwrap()).unwrap();
    assert!(system["n_cpu"].as_u64().unwrap() >= 1);
    let (ok, out) = giving(
        &["log", "stats", dir.join("mlp.D0.giving").to_str().unwrap()],
        tmp.path(),
    );
    assert!(ok, "{out}");

    // The report's score, by hand from the run's own rates: one process, no failure, so the
    // benchmark's score is the mean of its rates (min and max dropped from 5 on), and the
    // global score is exp(1·ln(score + 1) / 1).
    let mut rates: Vec<f64> = events
        .iter()
        .filter_map(|e| e.get("rate")?.as_f64())
        .collect();
    rates.sort_by(f64::total_cmp);
    if rates.len() >= 5 {
        rates = rates[1..rates.len() - 1].to_vec();
    }
    let score = rates.iter().sum::<f64>() / rates.len() as f64;
    let global = (score + 1.0).ln().exp();
    let (ok, out) = giving(&["suite", "report", dir.to_str().unwrap()], tmp.path());
    assert!(ok, "{out}");
    assert!(out.contains("Failure rate:     0.00% (PASS)"), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("mlp "))
        .unwrap_or_else(|| panic!("{out}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        &cols[1..4],
        ["0", "1", "1"],
        "fail n ngpu (milabench's: 1 per `per_gpu` process, even on the CPU): {row}"
    );
    assert_eq!(cols[8], format!("{score:.2}"), "score: {row}");
    assert!(
        out.contains(&format!("Score:        {global:>9.2}")),
        "{out}"
    );
}

const ODD_SUITE: &str = r#"
_sh:
  command: [sh, -c]
  max_duration: 1
hangs:
  inherits: _sh
  argv: ["exec sleep 30"]
ignores_sigterm:
  inherits: _sh
  argv: ["trap '' TERM; exec sleep 30"]
garbage:
  inherits: _sh
  argv: ["printf '\\301\\301 not msgpack' >&3; printf '{{\"rate\": 2.5}}\\n' >&3"]
# Braces are written twice: argv strings are formatted as milabench's (`{var}`).
json_lines:
  inherits: _sh
  argv: ["printf '{{\"rate\": 5.0, \"task\": \"t\"}}\\nnot json\\n' >&3"]
smuggled:
  inherits: _sh
  # voir's smuggled form: '{"rate": 7}\n' as ESC [ <hex in 0-9:;<=>?> z, between plain lines.
  argv: ["printf 'before\\n\\033[7;2272617465223:20377=0:z\\nafter\\n'"]
# What it starts is killed with it: the late line never reaches the pipe.
leaves_a_child:
  inherits: _sh
  argv: ["(sleep 5; echo '{{\"late\": 1}}' >&3) & exec sleep 30"]
fails:
  inherits: _sh
  # As a Rust panic reads on stderr.
  argv: ["echo \"thread 'main' panicked at src/main.rs:3:5:\" >&2; echo boom >&2; exit 101"]
nan:
  inherits: _sh
  # Python's json writes NaN as a bare word.
  argv: ["printf '{{\"loss\": 2.0}}\\n{{\"loss\": NaN}}\\n' >&3"]
twice:
  inherits: _sh
  plan: {method: njobs, n: 2}
  argv: ["true"]
# voir's early stop (`{"$event": "stop"}`), then a sleep past max_duration: ended at once, a
# success.
early_stop:
  inherits: _sh
  max_duration: 60
  argv: ["printf '{{\"$event\": \"phase\", \"$data\": {{\"name\": \"run_script\"}}}}\\n{{\"rate\": 3.0, \"task\": \"train\"}}\\n{{\"$event\": \"stop\"}}\\n' >&3; exec sleep 30"]
# voir's Overseer when the script raised: the error event, then exit 1.
reports_an_error:
  inherits: _sh
  argv: ["printf '{{\"$event\": \"error\", \"$data\": {{\"type\": \"ValueError\", \"message\": \"bad batch\"}}}}\\n' >&3; exit 1"]
"#;

#[test]
fn hanging_failing_and_garbage_writing_benchmarks_are_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("odd.yaml"), ODD_SUITE).unwrap();
    let (ok, out) = giving(
        &[
            "suite",
            "run",
            "odd.yaml",
            "--grace",
            "0.5",
            "--validations",
            "all",
        ],
        tmp.path(),
    );
    assert!(!ok, "a failed benchmark fails the run:\n{out}");
    let dir = run_dir(&tmp.path().join("runs"));

    let hangs = outcome(&dir, "hangs.D0");
    assert_eq!(hangs["killed"], "sigterm", "{hangs}");
    assert_eq!(hangs["signal"], 15);
    let stubborn = outcome(&dir, "ignores_sigterm.D0");
    assert_eq!(stubborn["killed"], "sigkill", "{stubborn}");
    assert_eq!(stubborn["signal"], 9);
    assert!(
        out.contains("hangs.D0: KILLED at max_duration (sigterm)"),
        "{out}"
    );

    let orphan = outcome(&dir, "leaves_a_child.D0");
    assert_eq!(orphan["killed"], "sigterm", "{orphan}");
    assert_eq!(
        orphan["events"], 0,
        "the grandchild was killed with its group: {orphan}"
    );

    let garbage = outcome(&dir, "garbage.D0");
    assert_eq!(garbage["exit_code"], 0);
    assert_eq!(garbage["success"], true);
    assert!(
        !garbage["protocol_errors"].as_array().unwrap().is_empty(),
        "{garbage}"
    );
    // The garbage is in the giving log as a problem event, and a `format_error` line in the
    // data file; the log is whole.
    let data = std::fs::read_to_string(dir.join("garbage.D0.data")).unwrap();
    assert!(data.contains(r#"{"event":"format_error""#), "{data}");
    let mut reader = LogReader::open(dir.join("garbage.D0.giving")).unwrap();
    let events: Vec<_> = reader.by_ref().map(Result::unwrap).collect();
    assert!(events.iter().any(|e| e.has("problem")));
    assert!(reader.end().is_some());

    let json = outcome(&dir, "json_lines.D0");
    assert_eq!(json["rates"], serde_json::json!([5.0]));
    assert_eq!(
        json["protocol_errors"].as_array().unwrap().len(),
        1,
        "{json}"
    );

    let smuggled = outcome(&dir, "smuggled.D0");
    assert_eq!(smuggled["rates"], serde_json::json!([7.0]), "{smuggled}");
    let stdout = std::fs::read_to_string(dir.join("smuggled.D0.stdout")).unwrap();
    assert_eq!(stdout, "before\n\nafter\n");

    let stopped = outcome(&dir, "early_stop.D0");
    assert_eq!(stopped["stopped"], "voir early stop", "{stopped}");
    assert_eq!(stopped["success"], true, "{stopped}");
    assert!(stopped["duration_s"].as_f64().unwrap() < 30.0, "{stopped}");
    assert!(
        out.contains("early_stop.D0: ok (stopped: voir early stop, sigterm), 3 events, 1 rates"),
        "{out}"
    );
    assert!(out.contains(", phase run_script\n"), "{out}");
    assert!(
        out.contains("reports_an_error.D0: FAILED (exit 1), 1 events, no rate, ")
            && out.contains(", error: ValueError: bad batch\n"),
        "{out}"
    );

    let fails = outcome(&dir, "fails.D0");
    assert_eq!(fails["exit_code"], 101);
    // The validation layers, printed after the run.
    for finding in [
        "[error] error: fails.D0: panic: boom (thread 'main' panicked at src/main.rs:3:5:)",
        "[error] error: hangs.D0: killed at max_duration (sigterm)",
        "[error] error: reports_an_error.D0: error event: ValueError: bad batch",
        "[loss] error: nan.D0: the loss was NaN 1 time(s) of 2",
        "[ensure_rate] error: nan.D0: no training rate retrieved",
        "[planning] error: twice: 0 of 2 planned processes reported events",
    ] {
        assert!(out.contains(finding), "missing `{finding}`:\n{out}");
    }
    assert!(dir.join("twice.0.json").is_file() && dir.join("twice.1.json").is_file());
}

#[test]
fn a_malformed_config_names_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("bad.yaml"),
        "a:\n  command: [true]\n  plan: {method: sideways}\n",
    )
    .unwrap();
    let (ok, out) = giving(&["suite", "run", "bad.yaml"], tmp.path());
    assert!(!ok);
    assert!(
        out.contains("error: bad.yaml:3: a.plan.method: unknown method `sideways`"),
        "{out}"
    );
    assert!(!tmp.path().join("runs").exists());
}

#[test]
fn ctrl_c_stops_the_running_benchmark_and_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("slow.yaml"),
        "a:\n  command: [sh, -c, 'exec sleep 60']\nb:\n  command: [true]\n",
    )
    .unwrap();
    let mut runner = Command::new(env!("CARGO_BIN_EXE_giving"))
        .args(["suite", "run", "slow.yaml", "--grace", "1"])
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once `a` runs (its stdout file exists), interrupt the runner as Ctrl-C would.
    let runs = tmp.path().join("runs");
    while !std::fs::read_dir(&runs)
        .ok()
        .and_then(|mut d| d.next())
        .is_some_and(|d| d.unwrap().path().join("a.D0.stdout").exists())
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the runner, our own child, not yet waited for.
    unsafe { libc::kill(runner.id() as libc::pid_t, libc::SIGINT) };
    let status = runner.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let dir = run_dir(&runs);
    let a = outcome(&dir, "a.D0");
    assert_eq!(
        (a["interrupted"].as_bool(), a["killed"].as_str()),
        (Some(true), Some("sigterm")),
        "{a}"
    );
    assert!(
        !dir.join("b.D0.json").exists(),
        "no benchmark starts after an interrupt"
    );
}

#[test]
fn repeat_runs_every_benchmark_in_rounds() {
    let tmp = tempfile::tempdir().unwrap();
    // Each process appends its name to `order`, so the rounds can be checked.
    std::fs::write(
        tmp.path().join("twice.yaml"),
        r#"
_sh:
  command: [sh, -c]
  weight: 1
a:
  inherits: _sh
  argv: ["echo a >> order; printf '{{\"rate\": 4.0, \"meta\": {{\"sh\": \"1\"}}}}\n' >&3"]
b:
  inherits: _sh
  argv: ["echo b >> order; printf '{{\"rate\": 8.0, \"meta\": {{\"sh\": \"1\"}}}}\n' >&3"]
"#,
    )
    .unwrap();
    let (ok, out) = giving(&["suite", "run", "twice.yaml", "--repeat", "2"], tmp.path());
    assert!(ok, "{out}");
    assert!(out.contains("a.D0.R2: ok"), "{out}");
    let order = std::fs::read_to_string(tmp.path().join("order")).unwrap();
    assert_eq!(order, "a\nb\na\nb\n");
    let dir = run_dir(&tmp.path().join("runs"));
    assert_eq!(outcome(&dir, "b.D0.R2")["repeat"], 2);
    let (ok, report) = giving(&["suite", "report", dir.to_str().unwrap()], tmp.path());
    assert!(ok, "{report}");
    let row = report.lines().find(|l| l.starts_with("b ")).unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    // Two processes on one slot (the CPU): n 2, ngpu 1 (milabench's: one GPU per `per_gpu`
    // process), the score is their mean rate.
    assert_eq!(&cols[1..5], ["0", "2", "1", "8.00"], "{row}");
    assert_eq!(cols[8], "8.00", "{row}");

    // The HTML page: the report, a plot per benchmark, each process's output, escaped.
    let dir_arg = dir.to_str().unwrap();
    let (ok, out) = giving(
        &[
            "suite",
            "report",
            dir_arg,
            "--compare",
            dir_arg,
            "--html",
            "report.html",
        ],
        tmp.path(),
    );
    assert!(ok, "{out}");
    assert!(
        out.contains("perf_ratio") && out.contains("Score ratio:      1.000"),
        "{out}"
    );
    let page = std::fs::read_to_string(tmp.path().join("report.html")).unwrap();
    assert_eq!(page.matches("<svg").count(), 2, "one plot per benchmark");
    assert!(page.contains("<summary>b.D0.R2 (ok, 1 rates, 1 events)</summary>"));
    assert!(page.contains("Score ratio:      1.000"));
    assert!(!page.contains("src=\"http"), "self-contained");

    // Two run folders report as one run: twice the processes.
    let (ok, _) = giving(&["suite", "run", "twice.yaml", "--select", "b"], tmp.path());
    assert!(ok);
    let mut dirs: Vec<String> = std::fs::read_dir(tmp.path().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_owned())
        .collect();
    dirs.sort();
    let mut args = vec!["suite", "report"];
    args.extend(dirs.iter().map(String::as_str));
    let (ok, report) = giving(&args, tmp.path());
    assert!(ok, "{report}");
    let row = report.lines().find(|l| l.starts_with("b ")).unwrap();
    assert_eq!(row.split_whitespace().nth(2), Some("3"), "{row}");

    // milabench's summary JSON, and the report compared with it: the same run, ratio 1.
    let (ok, out) = giving(
        &["suite", "summary", dir_arg, "-o", "summary.json"],
        tmp.path(),
    );
    assert!(ok, "{out}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["b"]["n"], 2);
    assert_eq!(summary["b"]["train_rate"]["mean"], 8.0);
    let (ok, out) = giving(
        &["suite", "report", dir_arg, "--compare", "summary.json"],
        tmp.path(),
    );
    assert!(ok, "{out}");
    assert!(out.contains("Score ratio:      1.000"), "{out}");

    // `--config`: the second run ran b only; a, configured, counts with score 0 and weight 1:
    // exp((ln(8 + 1) + ln(0 + 1)) / 2) = 3.
    let second = dirs.iter().find(|d| d.as_str() != dir_arg).unwrap();
    let (ok, out) = giving(
        &["suite", "report", second, "--config", "twice.yaml"],
        tmp.path(),
    );
    assert!(ok, "{out}");
    let a = out.lines().find(|l| l.starts_with("a ")).unwrap();
    assert_eq!(a.split_whitespace().nth(2), Some("0"), "n 0: {a}");
    assert!(out.contains("Score:             3.00"), "{out}");

    let (ok, out) = giving(&["suite", "run", "twice.yaml", "--repeat", "0"], tmp.path());
    assert!(
        !ok && out.contains("--repeat must be at least 1, not 0"),
        "{out}"
    );
    let (ok, out) = giving(&["suite", "run", "twice.yaml", "--grace=-1"], tmp.path());
    assert!(
        !ok && out.contains("--grace must be a number of seconds, at least 0, not -1"),
        "{out}"
    );
}

#[test]
fn dash_shows_every_benchmark_as_a_source() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("pair.yaml"),
        r#"
_sh:
  command: [sh, -c]
a:
  inherits: _sh
  plan: {method: njobs, n: 2}
  argv: ["printf '{{\"rate\": 5.0, \"units\": \"items/s\", \"meta\": {{\"sh\": \"1\"}}}}\n' >&3"]
"#,
    )
    .unwrap();
    // Not a terminal: the dashboard prints plain lines, its last one after the run.
    let (ok, out) = giving(&["suite", "run", "pair.yaml", "--dash"], tmp.path());
    assert!(ok, "{out}");
    let last = out
        .lines()
        .rfind(|l| l.contains("| a.0"))
        .unwrap_or_else(|| panic!("no dashboard line:\n{out}"));
    assert!(
        last.contains("| a.0 done rate=5") && last.contains("| a.1 done rate=5"),
        "{last}"
    );
    assert!(out.contains("a.1: ok"), "{out}");
}

#[test]
fn a_giving_child_whose_data_fd_is_stdout_smuggles_its_log_there() {
    // As behind ssh, which forwards only stdout: the child is told DATA_FD=1 (and its pipe
    // is closed), so its log goes into stdout as voir's escape sequences.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("ssh_like.yaml"),
        r#"
mlp:
  command: [sh, -c, 'DATA_FD=1 exec "$0" train mlp --steps 40 --every 0 --rate-skip 0 3>&-', "{giving}"]
"#,
    )
    .unwrap();
    let (ok, out) = giving(&["suite", "run", "ssh_like.yaml"], tmp.path());
    assert!(ok, "{out}");
    let dir = run_dir(&tmp.path().join("runs"));
    let mlp = outcome(&dir, "mlp.D0");
    assert!(!mlp["rates"].as_array().unwrap().is_empty(), "{mlp}");
    assert!(
        mlp["protocol_errors"].as_array().unwrap().is_empty(),
        "{mlp}"
    );
    assert_eq!(mlp["meta"]["versions"]["giving"], env!("CARGO_PKG_VERSION"));
    let stdout = std::fs::read_to_string(dir.join("mlp.D0.stdout")).unwrap();
    assert!(stdout.contains("[mlp] training on"), "{stdout}");
    assert!(
        !stdout.contains('\u{1b}'),
        "the smuggled data was taken out: {stdout}"
    );
    // The giving log holds what was smuggled.
    let events = LogReader::open(dir.join("mlp.D0.giving")).unwrap().count();
    assert_eq!(events as u64, mlp["events"].as_u64().unwrap());
}
