//! A signal reaches every Overseer run of the process, not only the last one registered.
//! Alone in its test binary: it signals its own process.
#![cfg(unix)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use giving::iterate;
use giving_instruments::Overseer;

fn endless(started: &AtomicUsize) -> u64 {
    started.fetch_add(1, Ordering::SeqCst);
    let mut steps = 0;
    for _ in iterate("train", 0..) {
        steps += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    steps
}

#[test]
fn sigint_and_sigterm_stop_every_run_of_the_process() {
    for (signal, name, code) in [(2, "INT", 130), (15, "TERM", 143)] {
        let started = Arc::new(AtomicUsize::new(0));
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let started = started.clone();
                std::thread::spawn(move || Overseer::new().run(|| endless(&started)))
            })
            .collect();
        while started.load(Ordering::SeqCst) < 2 {
            std::thread::sleep(Duration::from_millis(5));
        }
        // Both runs registered before their loops started.
        let sent = std::process::Command::new("kill")
            .args([&format!("-{name}"), &std::process::id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        for run in runs {
            let run = run.join().unwrap();
            assert!(run.stopped, "SIG{name}: the loop was asked to stop");
            assert_eq!(run.signal, Some(signal));
            assert_eq!(run.exit_code(), code);
            assert!(run.output.unwrap() > 0);
        }
    }
}
