//! Profiling harness for the give path: `EVENTS` losses given on the main thread and drained
//! on one other thread, by value or by reference, with `SUBSCRIBERS` lossless streams, or
//! through the keyed pipeline of the peers bench (`pipe`: `key("loss").map.filter.min`), or
//! by reference with the reader held off until the loop has given everything (`late`: the
//! giving thread's own cost, with no reader on the lines it writes; it prints the loop's time
//! too). A fourth argument `step` gives `give!(step, loss)` (the peers bench's event) instead
//! of `give!(loss)`; `read` among the arguments reads each event's `loss`. Run under `perf record` or callgrind: `cargo run --release --example
//! give_drain -- ref 10`, `-- late 1 200000 step`.
use giving::prelude::*;
use giving::{give, given};
use std::hint::black_box;
use std::time::Instant;

const EVENTS: u64 = 2_000_000;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next();
    let late = mode.as_deref() == Some("late");
    let by_ref = late || mode.as_deref() == Some("ref");
    let pipe = mode.as_deref() == Some("pipe");
    let subscribers: usize = args.next().map_or(1, |n| n.parse().expect("a count"));
    let events: u64 = args.next().map_or(EVENTS, |n| n.parse().expect("a count"));
    // `give!(step, loss)`, the peers bench's event (the tuple a user would send by hand).
    let rest: Vec<String> = args.collect();
    let with_step = rest.iter().any(|arg| arg == "step");
    // Each event's `loss` read, as a channel's receiver takes its tuple.
    let read = rest.iter().any(|arg| arg == "read");
    for _round in 0..5 {
        let gv = given();
        let streams: Vec<_> = (0..subscribers).map(|_| gv.stream()).collect();
        let (given_all, wait_for_all) = std::sync::mpsc::channel::<()>();
        let consumer = std::thread::spawn(move || {
            if late {
                let _ = wait_for_all.recv();
            }
            let drains = streams.into_iter().map(|mut stream| async move {
                let mut n = 0u64;
                if pipe {
                    let min = stream
                        .key::<f64>("loss")
                        .map(|l| l * 2.0)
                        .filter(|l| *l > 0.5)
                        .min()
                        .await;
                    black_box(min);
                    n = events;
                } else if by_ref {
                    while let Some(e) = stream.next_ref().await {
                        if read {
                            black_box(e.get("loss"));
                        }
                        black_box(e);
                        n += 1;
                    }
                } else {
                    while let Some(e) = stream.next().await {
                        if read {
                            black_box(e.get("loss"));
                        }
                        black_box(&e);
                        n += 1;
                    }
                }
                n
            });
            futures::executor::block_on(futures::future::join_all(drains))
        });
        let start = Instant::now();
        if with_step {
            for step in 0..events {
                let loss = (step % 1000) as f64 * 0.001;
                give!(step, loss);
            }
        } else {
            for i in 0..events {
                let loss = (i % 1000) as f64 * 0.001;
                give!(loss);
            }
        }
        let loop_ns = start.elapsed().as_nanos() as f64 / events as f64;
        drop(given_all);
        gv.finish().unwrap();
        let got = consumer.join().unwrap();
        let ns = start.elapsed().as_nanos() as f64 / events as f64;
        assert!(got.iter().all(|&n| n == events));
        if late {
            println!("{ns:.1} ns/event, the loop alone {loop_ns:.1}");
        } else {
            println!("{ns:.1} ns/event");
        }
    }
}
