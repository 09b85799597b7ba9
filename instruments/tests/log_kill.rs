//! A run killed with SIGKILL keeps its log up to the write-out bound: `MsgpackLog` reads the
//! run's events every `WRITER_PACE` (500 ms) and hands each batch to the operating system once
//! it has taken it (within a batch, `FLUSH_EVERY` after the first byte buffered), even while
//! events keep coming.
//!
//! The run to kill is this test binary itself, started again in "child mode": the parent test
//! re-executes `current_exe()` with an environment variable naming the log, so that the child
//! runs only [`child_gives_events_until_killed`].

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use giving::give;
use giving_instruments::log::{LogError, LogReader, MsgpackLog};
use giving_instruments::{Overseer, WRITER_PACE};

/// Set in the child's environment to the log it writes; unset, the child test does nothing.
const CHILD_LOG: &str = "GIVING_LOG_KILL_CHILD";
/// What the child prints once its first event is given, so the parent times the kill from the
/// run's start and not from the process's (slower, under load) start-up.
const READY: &str = "giving-log-kill-child-ready";
/// How long the child may take to start (a debug build on a loaded machine).
const START_WITHIN: Duration = Duration::from_secs(120);
/// How long the child runs before the parent kills it.
const RUN_FOR: Duration = Duration::from_secs(3);
/// The write-out bound is the writer's pace; allow 500 ms more for scheduling on a loaded
/// machine.
const KEPT_WITHIN: Duration = WRITER_PACE.saturating_add(Duration::from_millis(500));

/// Child mode: gives `{elapsed_ms}` every 100 µs, forever, into a scope logged by
/// `MsgpackLog`. Does nothing in a normal test run.
#[test]
fn child_gives_events_until_killed() {
    let Some(path) = std::env::var_os(CHILD_LOG) else {
        return;
    };
    let start = Instant::now();
    let log = MsgpackLog::create(&path).unwrap();
    // The loop never ends: the parent kills this process.
    let run = Overseer::new().with(log).ctrl_c(false).run(|| {
        let mut announced = false;
        loop {
            let elapsed_ms = start.elapsed().as_millis() as u64;
            give!(elapsed_ms);
            if !announced {
                println!("{READY}");
                announced = true;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    });
    panic!("the endless run returned: {:?}", run.problems);
}

/// Kills the child when the parent test fails before killing it.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_child(log: &Path) -> KillOnDrop {
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_gives_events_until_killed", "--nocapture"])
        .args(["--test-threads", "1"])
        .env(CHILD_LOG, log)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    KillOnDrop(child)
}

/// Waits until the child prints [`READY`] (after the test harness's own words, on the same
/// line), or fails after [`START_WITHIN`] so that a broken child never hangs the test.
fn wait_until_ready(child: &mut KillOnDrop) {
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.contains(READY) {
                let _ = tx.send(());
                break;
            }
        }
    });
    rx.recv_timeout(START_WITHIN)
        .expect("the child gives its first event and says so");
}

/// What a log holds so far: how many events, the `elapsed_ms` of the last, and how it ends.
struct Kept {
    events: u64,
    last_ms: u64,
    ending: Option<LogError>,
    damaged_regions: u64,
}

fn read_kept(path: &Path) -> Kept {
    let mut reader = LogReader::open(path).unwrap();
    let mut kept = Kept {
        events: 0,
        last_ms: 0,
        ending: None,
        damaged_regions: 0,
    };
    for item in reader.by_ref() {
        match item {
            Ok(event) => {
                kept.events += 1;
                kept.last_ms = event.get_as::<u64>("elapsed_ms").unwrap();
            }
            Err(error) => kept.ending = Some(error),
        }
    }
    kept.damaged_regions = reader.damaged_regions();
    kept
}

#[test]
fn a_killed_run_keeps_every_event_older_than_the_write_out_bound() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.msgpack");
    let mut child = spawn_child(&path);
    wait_until_ready(&mut child);
    let ready = Instant::now();
    // While the child runs: what it gave up to KEPT_WITHIN ago is already in the file (the
    // child's clock started before `ready`, so its `elapsed_ms` are at least the parent's).
    for probe in [1500, 2000, 2500] {
        std::thread::sleep(Duration::from_millis(probe).saturating_sub(ready.elapsed()));
        let at = ready.elapsed().as_millis() as u64;
        let kept = read_kept(&path);
        assert!(
            kept.last_ms + KEPT_WITHIN.as_millis() as u64 >= at,
            "{at} ms into the run, the last event in the file was given at {} ms",
            kept.last_ms
        );
    }
    std::thread::sleep(RUN_FOR.saturating_sub(ready.elapsed()));
    // `Child::kill` is SIGKILL on Unix: nothing in the child runs after it.
    child.0.kill().unwrap();
    child.0.wait().unwrap();

    let kept = read_kept(&path);
    eprintln!(
        "killed run: {} events kept, the last given {} ms after the start",
        kept.events, kept.last_ms
    );
    let ending = kept
        .ending
        .expect("a killed log has no end record: the reader reports it");
    assert!(ending.is_truncation(), "a cut, not an error: {ending}");
    assert_eq!(kept.damaged_regions, 0, "killing a writer damages nothing");
    let bound = (RUN_FOR - KEPT_WITHIN).as_millis() as u64;
    assert!(
        kept.last_ms >= bound,
        "every event given up to {} ms before the kill is in the log; the last one kept was \
         given at {} ms of {} ms",
        KEPT_WITHIN.as_millis(),
        kept.last_ms,
        RUN_FOR.as_millis()
    );
}
