//! `giving bench fanin` against a real `nats-server` on a loopback port: the table's rows and
//! their account (SKIPPED when `nats-server` is not installed).

mod servers;

use servers::{free_port, giving_command, installed, nats_on};

/// The table rows (`| 2 | 200 | no | …`) of an output, split into their cells.
fn rows(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| ranks"))
        .map(|line| {
            line.trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect()
}

/// Column of the table header (docs/remote.md): ranks, events/s per rank, CPU hog, sent,
/// received events/s, watcher CPU µs/event, p50, p99, max, dropped, rejected, lost.
fn cell(row: &[String], column: usize) -> f64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("cell {column} of {row:?} is not a number"))
}

#[test]
fn a_bench_through_a_named_server_reports_a_row_per_rank_count_with_every_event_accounted() {
    let Some(server) = nats_on(free_port()) else {
        println!("SKIPPED: nats-server is not installed");
        return;
    };
    let url = format!("nats://127.0.0.1:{}", server.port);
    let output = giving_command()
        .args(["bench", "fanin", "--ranks", "1,3", "--rate", "200"])
        .args(["--seconds", "1", "--server", &url])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains(&url), "the server is named: {stdout}");
    let rows = rows(&stdout);
    assert_eq!(rows.len(), 2, "{stdout}");
    for (row, ranks) in rows.iter().zip([1.0, 3.0]) {
        assert_eq!(cell(row, 0), ranks, "{row:?}");
        assert_eq!(cell(row, 1), 200.0, "{row:?}");
        assert_eq!(row[2], "no", "{row:?}");
        // 200 events/s for 1 s from each rank, and nothing lost on a quiet loopback.
        assert_eq!(cell(row, 3), 200.0 * ranks, "{row:?}");
        let (dropped, rejected, lost) = (cell(row, 9), cell(row, 10), cell(row, 11));
        assert_eq!((dropped, rejected, lost), (0.0, 0.0, 0.0), "{row:?}");
        let (p50, p99, max) = (cell(row, 6), cell(row, 7), cell(row, 8));
        assert!(p50 <= p99 && p99 <= max, "percentiles in order: {row:?}");
    }
}

#[test]
fn a_bench_starts_its_own_server_when_none_is_named() {
    if !installed("nats-server", &["--version"]) {
        println!("SKIPPED: nats-server is not installed");
        return;
    }
    let output = giving_command()
        .args(["bench", "fanin", "--ranks", "2", "--rate", "100"])
        .args(["--seconds", "0.5", "--tick-ms", "0"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("nats://127.0.0.1:"), "{stdout}");
    let rows = rows(&stdout);
    assert_eq!(rows.len(), 1, "{stdout}");
    assert_eq!(cell(&rows[0], 3), 100.0, "2 ranks × 50 events: {stdout}");
}

#[test]
fn bad_fan_in_settings_are_refused_naming_the_flag() {
    for (args, flag) in [
        (&["--rate", "0"][..], "--rate"),
        (&["--ranks", "0"][..], "--ranks"),
        (&["--seconds", "nan"][..], "--seconds"),
        (&["--nice", "20"][..], "--nice"),
    ] {
        let output = giving_command()
            .args(["bench", "fanin"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
    }
    // `bench` still needs a model when no subcommand is given.
    let output = giving_command().arg("bench").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("<MODEL>"), "{stderr}");
}
