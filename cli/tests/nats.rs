//! `giving train --publish` and `giving watch` against a real `nats-server` on a free loopback
//! port (SKIPPED when `nats-server` is not installed).

mod servers;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use giving::Event;
use giving::vocab::keys;
use giving_log::LogReader;
use servers::{Lines, events_in, free_port, giving_command, nats_jetstream, nats_on, only_file};

/// How many `rate` events each rank gave, in `events`.
fn rates_by_rank(events: &[Event]) -> BTreeMap<u64, usize> {
    let mut counts = BTreeMap::new();
    for event in events.iter().filter(|e| e.has(keys::RATE)) {
        let rank = event
            .get_as::<u64>(keys::RANK)
            .expect("a rank on every fanned-in rate");
        *counts.entry(rank).or_default() += 1;
    }
    counts
}

/// `giving watch URL --run RUN --until-done --log DIR`, once it has subscribed.
fn start_watch(url: &str, run: &str, log: &Path) -> (Child, Lines) {
    servers::start_watch(
        giving_command()
            .args([
                "watch",
                url,
                "--run",
                run,
                "--until-done",
                "--idle",
                "120",
                "--log",
            ])
            .arg(log)
            .arg("--trace")
            .arg(log.with_extension("pftrace")),
    )
}

/// A short MLP run of rank `rank` of 4 publishing to `url`, logging to `log`.
fn start_rank(url: &str, run: &str, rank: u64, steps: u64, log: &Path, extra: &[&str]) -> Child {
    giving_command()
        .args([
            "train",
            "mlp",
            "--batch-size",
            "16",
            "--valid-size",
            "64",
            "--window",
            "5",
        ])
        .args([
            "--rate-skip",
            "0",
            "--every",
            "0",
            "--steps",
            &steps.to_string(),
        ])
        .args(["--train-size", &(steps * 16).to_string()])
        .args([
            "--publish",
            url,
            "--run",
            run,
            "--rank",
            &rank.to_string(),
            "--log",
        ])
        .arg(log)
        .args(extra)
        .env("WORLD_SIZE", "4")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn four_ranks_fan_in_and_the_watcher_sees_every_rate_each_logged() {
    let Some(server) = nats_on(free_port()) else {
        println!("SKIPPED: nats-server is not installed");
        return;
    };
    let url = format!("nats://127.0.0.1:{}", server.port);
    let dir = tempfile::tempdir().unwrap();
    let (mut watch, mut lines) = start_watch(&url, "four", &dir.path().join("watch"));
    let ranks: Vec<Child> = (0..4)
        .map(|rank| {
            let log = dir.path().join(format!("rank{rank}"));
            start_rank(&url, "four", rank, 40, &log, &[])
        })
        .collect();
    for (rank, child) in ranks.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "rank {rank}: {stderr}");
    }
    let status = watch.wait().unwrap();
    assert!(status.success(), "watch: {:?}", lines.drain());

    let watched = rates_by_rank(&events_in(&dir.path().join("watch")));
    for rank in 0..4u64 {
        let local = events_in(&dir.path().join(format!("rank{rank}")));
        let logged = local.iter().filter(|e| e.has(keys::RATE)).count();
        assert!(logged > 0, "rank {rank} logged no rate");
        assert_eq!(
            watched.get(&rank),
            Some(&logged),
            "rank {rank}: {watched:?}"
        );
    }
    // The watcher's timeline has a process per rank.
    let trace = giving_instruments::timeline::read(dir.path().join("watch.pftrace")).unwrap();
    let contents = trace.contents().unwrap();
    for rank in 0..4 {
        let name = format!("rank {rank} (");
        assert!(
            contents.tracks.values().any(|t| t.name.starts_with(&name)),
            "{:?}",
            contents.tracks
        );
    }
    let lines = lines.drain();
    for rank in 0..4 {
        let ended = format!("[rank {rank}] ended");
        assert!(lines.iter().any(|l| l.contains(&ended)), "{lines:?}");
    }
}

#[test]
fn a_server_killed_mid_run_costs_counted_drops_and_publishing_resumes() {
    let port = free_port();
    let Some(mut server) = nats_on(port) else {
        println!("SKIPPED: nats-server is not installed");
        return;
    };
    let url = format!("nats://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let (mut watch, mut lines) = start_watch(&url, "outage", &dir.path().join("watch"));
    let local_log = dir.path().join("rank0");
    let mut rank = start_rank(
        &url,
        "outage",
        0,
        600,
        &local_log,
        &["--publish-buffer", "8"],
    );
    assert!(
        lines.wait_for("[rank 0] train", Duration::from_secs(60)),
        "no rate before the outage: {:?}",
        lines.seen
    );
    server.kill();
    std::thread::sleep(Duration::from_secs(3));
    let restarted = giving::Timestamp::now();
    let _server = nats_on(port).expect("nats-server restarts");
    assert!(
        rank.try_wait().unwrap().is_none(),
        "the run ended before the server came back: make it longer"
    );
    let out = rank.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "training went on: {stderr}");
    assert!(
        stderr.contains("unreachable"),
        "the outage is said once: {stderr}"
    );
    assert!(watch.wait().unwrap().success(), "{:?}", lines.drain());

    // Drops are counted and reported in the rank's own stream.
    let local = events_in(&local_log);
    let reported: Vec<u64> = local
        .iter()
        .filter_map(|e| e.get_as::<u64>(giving::vocab::keys::NATS_DROPPED).ok())
        .collect();
    assert!(
        reported.last().is_some_and(|&n| n > 0),
        "drops reported: {reported:?}"
    );
    // Publishing resumed: events given after the restart reached the watcher, the drop
    // report and the end record among them.
    let watched = events_in(&dir.path().join("watch"));
    let after = watched
        .iter()
        .filter(|e| e.has(keys::RATE) && e.time() > restarted)
        .count();
    assert!(after > 0, "no rate given after the restart arrived");
    assert!(
        watched.iter().any(|e| e
            .get_as::<u64>(giving::vocab::keys::NATS_DROPPED)
            .is_ok_and(|n| n > 0)),
        "the drop count reached the watcher"
    );
    let end = watched
        .iter()
        .find(|e| e.has(giving::vocab::keys::RANK_END))
        .expect("the rank's end record arrived");
    assert!(
        end.get_as::<u64>(giving::vocab::keys::NATS_DROPPED)
            .unwrap()
            > 0
    );
    let watched_rates = watched.iter().filter(|e| e.has(keys::RATE)).count();
    let local_rates = local.iter().filter(|e| e.has(keys::RATE)).count();
    assert!(
        watched_rates < local_rates,
        "{watched_rates} of {local_rates}"
    );
}

#[test]
fn watch_ends_on_ctrl_c_with_its_log_closed() {
    let Some(server) = nats_on(free_port()) else {
        println!("SKIPPED: nats-server is not installed");
        return;
    };
    let url = format!("nats://127.0.0.1:{}", server.port);
    let dir = tempfile::tempdir().unwrap();
    let mut child = giving_command()
        .args(["watch", &url, "--run", "forever", "--log"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Lines::of(child.stdout.take().unwrap(), child.stderr.take().unwrap());
    assert!(lines.wait_for("subscribed to", Duration::from_secs(30)));
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{:?}", lines.drain());
    let mut reader = LogReader::open(only_file(dir.path(), "msgpack")).unwrap();
    assert_eq!(reader.by_ref().count(), 0);
    assert!(reader.end().is_some(), "the log was closed");
}

#[test]
fn a_watcher_that_joins_after_the_run_replays_it_from_jetstream() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = nats_jetstream(free_port(), &dir.path().join("store")) else {
        println!("SKIPPED: nats-server is not installed");
        return;
    };
    let url = format!("nats://127.0.0.1:{}", server.port);
    let local = dir.path().join("rank0");
    let rank = start_rank(&url, "kept", 0, 30, &local, &["--publish-store"]);
    let out = rank.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("not kept"), "{stderr}");

    // The run is over: only the stream can tell the watcher about it.
    let watched = dir.path().join("watch");
    let out = giving_command()
        .args([
            "watch",
            &url,
            "--run",
            "kept",
            "--replay",
            "--until-done",
            "--idle",
            "5",
        ])
        .arg("--log")
        .arg(&watched)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    // WORLD_SIZE=4 in start_rank: one rank of four ended; --until-done waits for the others,
    // so the watch ended by --idle.
    let logged = events_in(&local)
        .iter()
        .filter(|e| e.has(keys::RATE))
        .count();
    assert!(logged > 0);
    assert_eq!(
        rates_by_rank(&events_in(&watched)).get(&0),
        Some(&logged),
        "{text}"
    );
    assert!(text.contains("[rank 0] ended"), "{text}");
}
