//! `giving log dump` and `giving log stats` as library functions.

use giving::{Event, Timestamp, Value};
use giving_log::{LogHeader, LogWriter, dump, stats};

fn write(path: &std::path::Path, n: u64, close: bool) {
    let mut header = LogHeader::for_this_process();
    header.start_time = Timestamp::from_nanos(1_000_000_000);
    let mut writer = LogWriter::create(path, &header).unwrap();
    for i in 0..n {
        let mut gpu = std::collections::BTreeMap::new();
        gpu.insert("load".to_owned(), Value::F64(i as f64 / 10.0));
        let mut gpus = std::collections::BTreeMap::new();
        gpus.insert("0".to_owned(), Value::Map(gpu));
        let event = Event::builder()
            .field("step", i)
            .field("loss", 1.0 / (i + 1) as f64)
            .field("gpudata", Value::Map(gpus))
            .time(Timestamp::from_nanos(1_000_000_000 + i * 500_000_000))
            .build();
        writer.write(&event).unwrap();
    }
    if close {
        writer.close(0).unwrap();
    } else {
        writer.flush().unwrap();
    }
}

#[test]
fn dump_prints_text_and_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    write(&path, 3, true);
    let mut out = Vec::new();
    let summary = dump(&path, false, &mut out).unwrap();
    assert_eq!(summary.events, 3);
    assert!(summary.cut.is_none());
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("# giving-log v1 started 1970-01-01 00:00:01.000 UTC"),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[2],
        "+0.500000s  step=1 loss=0.5 gpudata={0: {load: 0.1}}"
    );

    let mut out = Vec::new();
    dump(&path, true, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["header"]["format"], "giving-log");
    assert_eq!(lines[2]["time"], 1_500_000_000u64);
    assert_eq!(lines[2]["data"]["loss"], 0.5);
}

#[test]
fn stats_count_keys_and_summarise_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    write(&path, 11, false);
    let stats = stats(&path).unwrap();
    assert_eq!(stats.events, 11);
    assert_eq!(stats.keys["step"], 11);
    let (first, last) = stats.span.unwrap();
    assert_eq!(last.duration_since(first).as_secs_f64(), 5.0);
    let step = stats.numeric["step"];
    assert_eq!(
        (step.count, step.min, step.max, step.mean),
        (11, 0.0, 10.0, 5.0)
    );
    assert_eq!(stats.numeric["gpudata.0.load"].max, 1.0);
    assert!(
        stats.cut.as_ref().unwrap().is_truncation(),
        "no end record: reported"
    );
    let report = stats.to_string();
    assert!(report.contains("11 events over 5.000 s"), "{report}");
    assert!(report.contains("gpudata.0.load"), "{report}");
    assert!(report.contains("warning:"), "{report}");
}

/// `giving log stats|dump FILE` through [`LogCommand`], as the binary runs it: the health it
/// returns (the exit code), what it printed, and what it warned.
#[cfg(feature = "cli")]
fn run_log(
    command: &str,
    path: &std::path::Path,
) -> (
    Result<giving_log::LogHealth, giving_log::LogError>,
    String,
    String,
) {
    use clap::Parser;
    use giving_log::LogCommand;

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        log: LogCommand,
    }
    let cli = Cli::parse_from(["giving", command, path.to_str().unwrap()]);
    let (mut out, mut warnings) = (Vec::new(), Vec::new());
    let health = cli.log.run_to(&mut out, &mut warnings);
    (
        health,
        String::from_utf8(out).unwrap(),
        String::from_utf8(warnings).unwrap(),
    )
}

/// How long the log that [`write`] writes is with `n` events and no end record.
#[cfg(feature = "cli")]
fn written_len(dir: &std::path::Path, n: u64) -> usize {
    let path = dir.join(format!("prefix-{n}.msgpack"));
    write(&path, n, false);
    std::fs::metadata(&path).unwrap().len() as usize
}

#[cfg(feature = "cli")]
#[test]
fn a_clean_log_is_clean_with_exit_code_0() {
    use giving_log::LogHealth;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    write(&path, 1000, true);
    let (health, out, _) = run_log("stats", &path);
    assert_eq!(health.unwrap(), LogHealth::Clean);
    assert_eq!(LogHealth::Clean.exit_code(), 0);
    assert!(
        out.contains("end record: 1000 events written, 0 dropped"),
        "{out}"
    );
    assert!(!out.contains("warning"), "{out}");
    let (health, out, warnings) = run_log("dump", &path);
    assert_eq!(health.unwrap(), LogHealth::Clean);
    assert_eq!(out.lines().count(), 1001);
    assert_eq!(warnings, "");

    let stats = stats(&path).unwrap();
    assert_eq!(
        stats.end.map(|end| (end.events, end.dropped)),
        Some((1000, 0))
    );
    assert_eq!(stats.end_matches(), Some(true));
}

#[cfg(feature = "cli")]
#[test]
fn a_cut_log_is_cut_with_exit_code_3() {
    use giving_log::LogHealth;

    let dir = tempfile::tempdir().unwrap();
    // No end record: the writer was killed at a record boundary.
    let path = dir.path().join("unclosed.msgpack");
    write(&path, 10, false);
    let size = std::fs::metadata(&path).unwrap().len();
    let (health, out, _) = run_log("stats", &path);
    assert_eq!(health.unwrap(), LogHealth::Cut);
    assert_eq!(LogHealth::Cut.exit_code(), 3);
    let expected = format!(
        "no end record: the log was cut at byte {size} (the run was killed or is still running)"
    );
    assert!(out.contains(&expected), "{out}");
    let (health, _, warnings) = run_log("dump", &path);
    assert_eq!(health.unwrap(), LogHealth::Cut);
    assert!(warnings.contains(&expected), "{warnings}");

    // Cut in the middle of a record.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.msgpack");
    std::fs::write(&cut, &bytes[..bytes.len() - 5]).unwrap();
    let (health, out, _) = run_log("stats", &cut);
    assert_eq!(health.unwrap(), LogHealth::Cut);
    assert!(out.contains("9 events"), "{out}");
    let stats = stats(&cut).unwrap();
    assert!(stats.end.is_none() && stats.end_matches().is_none());
}

#[cfg(feature = "cli")]
#[test]
fn a_damaged_or_miscounted_log_is_corrupt_with_exit_code_4() {
    use giving_log::LogHealth;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.msgpack");
    write(&path, 100, true);
    let clean = std::fs::read(&path).unwrap();
    // The first record starts after the header, and ends where a log of one event does.
    let at = written_len(dir.path(), 0);
    let record = written_len(dir.path(), 1) - at;

    // The first record's first byte (its map marker) is damaged.
    let mut bytes = clean.clone();
    bytes[at] = 0xc1;
    let damaged = dir.path().join("damaged.msgpack");
    std::fs::write(&damaged, &bytes).unwrap();
    let (health, out, _) = run_log("stats", &damaged);
    assert_eq!(health.unwrap(), LogHealth::Corrupt);
    assert_eq!(LogHealth::Corrupt.exit_code(), 4);
    assert!(out.contains("99 events"), "{out}");
    assert!(
        out.contains(&format!("bytes skipped at offsets {at}")),
        "{out}"
    );
    assert!(
        out.contains("the end record counts 100 events, 99 were read"),
        "{out}"
    );
    let (health, _, warnings) = run_log("dump", &damaged);
    assert_eq!(health.unwrap(), LogHealth::Corrupt);
    assert!(warnings.contains("damaged: "), "{warnings}");

    // A whole record is missing: nothing is damaged, but the end record counts it.
    let mut bytes = clean[..at].to_vec();
    bytes.extend_from_slice(&clean[at + record..]);
    let miscounted = dir.path().join("miscounted.msgpack");
    std::fs::write(&miscounted, &bytes).unwrap();
    let (health, out, _) = run_log("stats", &miscounted);
    assert_eq!(health.unwrap(), LogHealth::Corrupt);
    assert!(!out.contains("damaged"), "{out}");
    let stats = stats(&miscounted).unwrap();
    assert_eq!(stats.end_matches(), Some(false));
    assert_eq!(stats.damaged_regions, 0);

    // A file that is not a log is an error, not a health.
    let not_a_log = dir.path().join("notes.txt");
    std::fs::write(&not_a_log, "hello").unwrap();
    assert!(run_log("stats", &not_a_log).0.is_err());
}
