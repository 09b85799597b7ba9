//! The `giving` binary: a short real training run, and clear errors for bad input.

use std::process::Command;

mod support;
use support::{TINY_MLP, giving};

#[test]
fn train_prints_progress_from_a_pipeline_and_a_summary() {
    let (ok, out) = giving(&[
        "train",
        "mlp",
        "--steps",
        "6",
        "--batch-size",
        "8",
        "--train-size",
        "24",
        "--valid-size",
        "16",
        "--every",
        "2",
        "--seed",
        "3",
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("[mlp] training on flex"), "{out}");
    for step in ["step     2  loss", "step     4  loss", "step     6  loss"] {
        assert!(out.contains(step), "missing `{step}`:\n{out}");
    }
    assert!(out.contains("epoch 1 validation: loss"), "{out}");
    assert!(
        out.contains("[mlp] done: 6 steps in 2 epoch(s), final loss"),
        "{out}"
    );
    assert!(out.contains("images/s"), "{out}");
}

#[test]
fn bad_input_gets_a_clear_error() {
    let (ok, out) = giving(&["train", "resnet"]);
    assert!(!ok);
    assert!(out.contains("unknown model `resnet`"), "{out}");

    let (ok, out) = giving(&["train", "mlp", "--device", "tpu:0"]);
    assert!(!ok);
    assert!(out.contains("unknown backend `tpu`"), "{out}");

    let (ok, out) = giving(&["train", "mlp", "--steps", "3", "--epochs", "2"]);
    assert!(!ok);
    assert!(out.contains("cannot be used with"), "{out}");

    let (ok, out) = giving(&["train", "mlp", "--batch-size", "0"]);
    assert!(!ok);
    assert!(
        out.contains("batch-size must be at least 1, not 0"),
        "{out}"
    );

    // One policy for sizes: a bad value is refused by the settings' `validate()`, with an
    // error that names the setting and its value.
    for (args, refusal) in [
        (
            &["train", "mlp", "--window", "0"][..],
            "window must be at least 1, not 0",
        ),
        (
            &["train", "mlp", "--epochs", "0"][..],
            "epochs must be at least 1, not 0",
        ),
        (
            &["train", "mlp", "--lr=-1"][..],
            "lr must be a positive number, not -1",
        ),
        (
            &["bench", "mlp", "--steps", "0"][..],
            "steps must be at least 1, not 0",
        ),
        (
            &["bench", "mlp", "--repeats", "0"][..],
            "repeats must be at least 1, not 0",
        ),
        (
            &["tune", "--max-iter", "0"][..],
            "max-iter must be at least 1, not 0",
        ),
        (
            &["tune", "--population", "3"][..],
            "population must be at least 4, not 3",
        ),
        (
            &["tune", "--repeats", "0"][..],
            "repeats must be at least 1, not 0",
        ),
        (
            &["tune", "--qos-keep-threshold", "101"][..],
            "qos-keep-threshold must be a QoS between 0 and 100, not 101",
        ),
        (
            &["tune", "--hidden", "0"][..],
            "hidden must be at least 1, not 0",
        ),
        (
            &["tune", "--tune-size", "0"][..],
            "tune-size must be from 1 to 1000000 images, not 0",
        ),
        (
            &["tune", "--test-size", "0"][..],
            "test-size must be from 1 to 1000000 images, not 0",
        ),
        (
            &["tune", "--channels", "0,0"][..],
            "channels must be an even number of convolutions with at least one channel each, not [0, 0]",
        ),
        (
            &["tune", "--epochs", "0"][..],
            "epochs must be at least 1, not 0",
        ),
        (
            &["train", "mlp", "--stop", "0"][..],
            "--stop: must be at least 1 (or omit N for 60), not 0",
        ),
        (
            &["train", "mlp", "--gpu-poll", "0"][..],
            "--gpu-poll: must be a positive number of seconds (the poll interval), not 0",
        ),
        (
            &["train", "mlp", "--cpu-poll", "0"][..],
            "--cpu-poll: must be a positive number of seconds (the poll interval), not 0",
        ),
        (
            &[
                "train",
                "mlp",
                "--publish",
                "nats://127.0.0.1:1",
                "--run",
                "r",
                "--publish-buffer",
                "0",
            ][..],
            "--publish-buffer must be at least 1, not 0",
        ),
        (
            &["watch", "nats://127.0.0.1:1", "--run", "r", "--idle", "0"][..],
            "--idle must be a positive number of seconds, not 0.0",
        ),
        (
            // Finite, but no Duration holds it: refused, not a panic.
            &[
                "watch",
                "nats://127.0.0.1:1",
                "--run",
                "r",
                "--idle",
                "1e300",
            ][..],
            "--idle must be a positive number of seconds, not 1e300",
        ),
    ] {
        let (ok, out) = giving(args);
        assert!(!ok, "{args:?} was accepted: {out}");
        assert!(out.contains(refusal), "{args:?}: {out}");
    }

    for (backend, compiled) in [
        ("wgpu", cfg!(feature = "wgpu")),
        ("cuda", cfg!(feature = "cuda")),
    ] {
        if compiled {
            continue;
        }
        let (ok, out) = giving(&["train", "mlp", "--device", backend]);
        assert!(!ok);
        assert!(out.contains(&format!("--features {backend}")), "{out}");
    }
}

#[test]
fn train_with_instruments_stops_early_logs_and_reads_the_log_back() {
    let dir = std::env::temp_dir().join(format!("giving-cli-log-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let options = [
        "--epochs",
        "50",
        "--window",
        "2",
        "--rate-skip",
        "0",
        "--stop",
        "3",
        "--log",
        dir.to_str().unwrap(),
    ];
    let (ok, out) = giving(&[&["train"][..], &TINY_MLP, &options].concat());
    assert!(ok, "early stop must exit 0:\n{out}");
    assert!(out.contains("(stopped early)"), "{out}");

    let logs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(logs.len(), 1, "one log per run: {logs:?}");
    let log = logs[0].to_str().unwrap();

    let (ok, stats) = giving(&["log", "stats", log]);
    assert!(ok, "{stats}");
    for key in ["loss", "rate", "global_step", "progress"] {
        assert!(stats.contains(key), "stats lack `{key}`:\n{stats}");
    }
    let (ok, dump) = giving(&["log", "dump", "--json", log]);
    assert!(ok, "{dump}");
    let rates = dump.lines().filter(|l| l.contains("\"rate\"")).count();
    assert!(
        rates >= 3,
        "at least the 3 rates that stopped the run:\n{dump}"
    );

    let (ok, out) = giving(&["log", "stats", "Cargo.toml"]);
    assert!(!ok);
    assert!(out.contains("not a giving log"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_diverging_run_is_stopped_at_the_first_non_finite_parameter_with_its_log_whole() {
    let dir = std::env::temp_dir().join(format!("giving-cli-nonfinite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Adam's first step at a learning rate of 1e30 takes the weights past f32's range: the
    // loss is NaN from step 1, the weights at the next watched step (5).
    let options = [
        "--epochs",
        "50",
        "--lr",
        "1e30",
        "--watch",
        "5",
        "--stop-on-nonfinite",
        "--log",
        dir.to_str().unwrap(),
    ];
    let (ok, out) = giving(&[&["train"][..], &TINY_MLP, &options].concat());
    assert!(ok, "a clean stop exits 0:\n{out}");
    assert!(out.contains("(stopped early)"), "{out}");
    assert!(
        out.contains("non-finite values in layers.0.weight weight") && out.contains("at step 5"),
        "the first parameter in forward order, at the first watched step after the NaN:\n{out}"
    );
    let log = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let (ok, dump) = giving(&["log", "dump", "--json", log.to_str().unwrap()]);
    assert!(ok, "{dump}");
    assert!(dump.contains("\"nonfinite\":\"layers.0.weight\""), "{dump}");
    let (ok, stats) = giving(&["log", "stats", log.to_str().unwrap()]);
    assert!(
        ok && stats.contains("end record"),
        "the log is whole:\n{stats}"
    );
    for key in ["param", "norm", "hist", "update_ratio", "nans"] {
        assert!(stats.contains(key), "stats lack `{key}`:\n{stats}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the binary with `RUST_BACKTRACE=1`, as many users have it set.
fn giving_with_backtrace(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_giving"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("run the giving binary");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn errors_print_one_line_with_causes_and_no_backtrace() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_log = dir.path().join("passwd");
    std::fs::write(&not_a_log, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    let (code, stdout, stderr) =
        giving_with_backtrace(&["log", "stats", not_a_log.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains("is not a giving log"), "{stderr}");
    assert!(!stderr.contains("backtrace"), "{stderr}");
    assert!(!stderr.contains("Stack"), "{stderr}");
    assert!(
        stderr.lines().count() <= 3,
        "one error line and its causes:\n{stderr}"
    );

    let (code, _, stderr) = giving_with_backtrace(&["log", "stats", "/no/such/file.msgpack"]);
    assert_eq!(code, Some(1));
    assert!(stderr.starts_with("error: cannot open"), "{stderr}");
    assert!(!stderr.contains("backtrace"), "{stderr}");
}

#[test]
fn usage_errors_exit_with_code_2() {
    let (code, _, stderr) = giving_with_backtrace(&["train", "mlp", "--no-such-flag"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--no-such-flag"), "{stderr}");
}

#[test]
fn a_bad_setting_is_refused_before_the_banner_and_before_any_log_exists() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let (code, stdout, stderr) = giving_with_backtrace(&[
        "train",
        "mlp",
        "--steps",
        "0",
        "--log",
        logs.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stdout.is_empty(), "no banner: {stdout}");
    assert!(stderr.contains("steps must be at least 1"), "{stderr}");
    assert!(!logs.exists(), "no log directory was created");

    let (code, stdout, stderr) = giving_with_backtrace(&["train", "mlp", "--stop", "0"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("--stop: must be at least 1"), "{stderr}");
}

#[test]
fn a_closed_stdout_does_not_panic_the_run() {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_giving"))
        .args([
            "train",
            "mlp",
            "--steps",
            "30",
            "--batch-size",
            "8",
            "--train-size",
            "64",
        ])
        .args(["--valid-size", "16", "--every", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, then close the pipe, as `| head -1` does.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "exit {status}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn sigterm_and_sighup_stop_the_run_cleanly_with_a_complete_log() {
    for (signal, code) in [("TERM", 143), ("HUP", 129)] {
        use std::io::BufRead;
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_giving"))
            .args([
                "train",
                "mlp",
                "--epochs",
                "500",
                "--batch-size",
                "8",
                "--every",
                "5",
            ])
            .args(["--train-size", "64", "--valid-size", "16", "--log"])
            .arg(dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until training runs: a progress line.
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while stdout.read_line(&mut line).unwrap() > 0 && !line.contains(" step ") {
            line.clear();
        }
        assert!(line.contains(" step "), "training never printed a step");
        // Keep reading, so the child never blocks on a full pipe.
        let drain = std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let out = child.wait_with_output().unwrap();
        drain.join().unwrap().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "SIG{signal}: {stderr}");
        let log = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let mut reader = giving_log::LogReader::open(&log).unwrap();
        let events = reader.by_ref().filter(Result::is_ok).count() as u64;
        let end = reader
            .end()
            .expect("SIG{signal}: the log has its end record");
        assert_eq!(end.events, events);
    }
}

#[test]
fn bench_cpu_time_prints_a_row_per_instrument_set() {
    let (ok, out) = giving(&[
        "bench",
        "mlp",
        "--cpu-time",
        "--steps",
        "4",
        "--repeats",
        "1",
        "--batch-size",
        "8",
        "--train-size",
        "64",
    ]);
    assert!(ok, "{out}");
    for set in [
        "| bare |",
        "| rate |",
        "| rate+log |",
        "| rate+log+monitors |",
        "| trace |",
        "| rate+trace |",
        "| rate+dash |",
    ] {
        let row = out
            .lines()
            .find(|l| l.starts_with(set))
            .unwrap_or_else(|| panic!("no row {set}:\n{out}"));
        // Seven cells: name, thread CPU, vs bare, process CPU, vs bare, wall, vs bare.
        assert_eq!(row.matches('|').count(), 8, "{row}");
        assert_eq!(row.matches('%').count(), 3, "{row}");
    }
}

#[test]
fn log_keys_select_what_the_log_keeps() {
    use giving_log::LogReader;

    let dir = tempfile::tempdir().unwrap();
    let options = [
        "--steps",
        "12",
        "--window",
        "2",
        "--rate-skip",
        "0",
        "--log",
        dir.path().to_str().unwrap(),
        "--log-keys",
        "loss,rat?,+task,!val_*",
    ];
    let (ok, out) = giving(&[&["train"][..], &TINY_MLP, &options].concat());
    assert!(ok, "{out}");
    let log = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut reader = LogReader::open(&log).unwrap();
    assert_eq!(
        reader
            .header()
            .extra
            .get("log_keys")
            .and_then(|v| v.as_str()),
        Some("loss,rat?,+task,!val_*")
    );
    let events: Vec<_> = reader.by_ref().map(Result::unwrap).collect();
    let (mut losses, mut rates) = (0, 0);
    for event in &events {
        let keys: Vec<&str> = event.keys().collect();
        assert!(
            keys.iter().all(|k| ["loss", "rate", "task"].contains(k)),
            "a key that was not selected: {event}"
        );
        losses += usize::from(event.has("loss"));
        rates += usize::from(event.has("rate"));
        assert!(
            event.has("loss") || event.has("rate"),
            "context alone: {event}"
        );
    }
    assert_eq!(losses, 12, "one loss per step:\n{events:?}");
    assert!(rates >= 2, "rates are kept:\n{events:?}");

    let (ok, out) = giving(&["train", "mlp", "--log-keys", "loss"]);
    assert!(!ok, "--log-keys without --log is refused");
    assert!(out.contains("--log"), "{out}");
    let (ok, out) = giving(&["train", "mlp", "--log", "x", "--log-keys", "loss,,rate"]);
    assert!(!ok);
    assert!(out.contains("key selection item 2"), "{out}");
}

/// A log whose file cannot grow (the file-size limit, as a full disk) is reported while the
/// run goes on, not when it ends; training finishes, and the exit code says a sink failed.
#[cfg(unix)]
#[test]
fn a_failing_log_is_reported_at_once_and_the_exit_code_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // `trap '' XFSZ`: a write past the limit fails with EFBIG instead of killing the process.
    let script = format!(
        "trap '' XFSZ; ulimit -f 16; exec '{}' train mlp --epochs 30 --batch-size 8 \
         --train-size 64 --valid-size 16 --every 10 --log '{}' 2>&1",
        env!("CARGO_BIN_EXE_giving"),
        dir.path().display()
    );
    let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a requested sink failed:\n{text}"
    );
    let problem = text
        .find("`msgpack-log` failed during run")
        .unwrap_or_else(|| panic!("the failure is reported:\n{text}"));
    let done = text
        .find("[mlp] done:")
        .unwrap_or_else(|| panic!("training goes on to the end:\n{text}"));
    assert!(
        problem < done,
        "reported while training, not at the end:\n{text}"
    );
    assert!(text.contains("File too large"), "{text}");
    assert_eq!(
        text.matches("File too large").count(),
        1,
        "reported once:\n{text}"
    );
}

/// A log directory whose name is not UTF-8 works (the header records the arguments lossily).
#[cfg(unix)]
#[test]
fn a_log_path_that_is_not_utf8_is_used_as_is() {
    use std::os::unix::ffi::OsStrExt;
    let base = tempfile::tempdir().unwrap();
    let dir = base
        .path()
        .join(std::ffi::OsStr::from_bytes(b"runs-\xff\xfe"));
    let out = Command::new(env!("CARGO_BIN_EXE_giving"))
        .args(["train", "mlp", "--steps", "4", "--batch-size", "8"])
        .args(["--train-size", "32", "--valid-size", "16", "--log"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let log = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let reader = giving_log::LogReader::open(&log).unwrap();
    let args = &reader.header().command_line;
    assert!(
        args.iter()
            .any(|a| a.starts_with("runs-") || a.contains("/runs-")),
        "{args:?}"
    );
}
