//! How many events per second the runner reads from one child's `DATA_FD` pipe and writes to
//! its `.giving` log and its `.data` JSON lines: a log of N 3-field events is written, then
//! `cat` sends it down the pipe.
//!
//! `cargo run --release -p giving-suite --example pipe_throughput [N]`

use std::time::{Duration, Instant};

use giving::{Event, Timestamp, Value};
use giving_log::{LogHeader, LogWriter};
use giving_suite::runner::{ProcessSpec, run_process};

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let source = dir.path().join("source.msgpack");
    let mut log = LogWriter::create(&source, &LogHeader::for_this_process()).expect("create");
    for i in 0..n {
        let fields = [
            ("step", Value::U64(i)),
            ("loss", Value::F64(1.0 / (i + 1) as f64)),
            ("task", Value::from("train")),
        ];
        log.write(&Event::new_at(fields, Timestamp::from_nanos(i)))
            .expect("write");
    }
    log.close(0).expect("close");
    let bytes = std::fs::metadata(&source).map(|m| m.len()).unwrap_or(0);
    for round in 1..=3 {
        let spec = ProcessSpec {
            argv: vec![
                "sh".into(),
                "-c".into(),
                format!("cat '{}' >&3", source.display()),
            ],
            env: Vec::new(),
            stop: None,
            max_duration: Duration::from_secs(600),
            grace: Duration::from_secs(1),
            stem: dir.path().join(format!("bench.{round}")),
            preamble: Default::default(),
            interrupt: None,
            remote: None,
            forward: None,
        };
        let start = Instant::now();
        let outcome = run_process(&spec).expect("run");
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(outcome.events, n, "{:?}", outcome.protocol_errors);
        println!(
            "round {round}: {n} events ({:.0} MB) in {secs:.2} s: {:.2} M events/s",
            bytes as f64 / 1e6,
            n as f64 / secs / 1e6
        );
    }
}
