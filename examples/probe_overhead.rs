//! What `#[probe]` costs when nobody probes, and per event while probed beside the same event
//! given by hand with `give!`, in instructions: run under callgrind, which counts the same
//! total run after run whatever else the machine does (docs/probes.md).
//!
//! ```text
//! cargo build --release --example probe_overhead
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='probe_overhead::probe_steps::step_multi' \
//!     --callgrind-out-file=probe.out target/release/examples/probe_overhead
//! callgrind_annotate probe.out | grep 'PROGRAM TOTALS'
//! ```
//!
//! (one run per function, `probe_steps::step_probed` and the others named in full: the total
//! is then everything run inside it).
//!
//! Each `step_` function is called `CALLS` times, except those that give an event per call
//! (`step_probed` under `step_probed > z`, `step_multi` under `step_multi(x) > z`,
//! `step_inner` under `outer_loop > step_inner > z`, and `step_given`), called `EVENTS` times;
//! divide a function's inclusive count by its calls.

// A probe observes named bindings: returning one is the point of these functions.
#![allow(clippy::let_and_return)]

use std::hint::black_box;

use giving::given;
use giving::prelude::*;

#[path = "../benches/workloads/probe_steps.rs"]
mod probe_steps;
use probe_steps::*;

const CALLS: usize = 1_000_000;
const EVENTS: usize = 100_000;
const LOOPS: usize = 1_000;

fn main() {
    let mut total = 0.0;
    for i in 0..CALLS {
        total += step_plain(black_box(i as f64));
    }
    for i in 0..CALLS {
        total += step_annotated(black_box(i as f64));
    }
    let xs: Vec<f64> = (0..1_000).map(f64::from).collect();
    for _ in 0..LOOPS {
        total += sum_plain(black_box(&xs));
    }
    for _ in 0..LOOPS {
        total += sum_annotated(black_box(&xs));
    }
    // One event per call, drained by a pipeline as a user's stream would be.
    let gv = given();
    let probed = gv.spawn(gv.probe("step_probed > z").unwrap().count());
    for i in 0..EVENTS {
        total += step_probed(black_box(i as f64));
    }
    gv.finish().unwrap();
    let gv = given();
    let multi = gv.spawn(gv.probe("step_multi(x) > z").unwrap().count());
    for i in 0..EVENTS {
        total += step_multi(black_box(i as f64));
    }
    gv.finish().unwrap();
    let gv = given();
    let nested = gv.spawn(gv.probe("outer_loop > step_inner > z").unwrap().count());
    total += outer_loop(black_box(EVENTS as u64));
    gv.finish().unwrap();
    let gv = given();
    let given_by_hand = gv.spawn(gv.stream().count());
    for i in 0..EVENTS {
        total += step_given(black_box(i as f64));
    }
    gv.finish().unwrap();
    assert_eq!(probed.join().unwrap(), EVENTS);
    assert_eq!(multi.join().unwrap(), EVENTS);
    assert_eq!(nested.join().unwrap(), EVENTS);
    assert_eq!(given_by_hand.join().unwrap(), EVENTS);
    println!("{total}");
}
