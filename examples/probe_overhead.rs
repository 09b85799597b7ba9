//! What `#[probe]` costs when nobody probes, in instructions: run under callgrind, which counts
//! the same total run after run whatever else the machine does (docs/probes.md).
//!
//! ```text
//! cargo build --release --example probe_overhead
//! valgrind --tool=callgrind --callgrind-out-file=probe.out target/release/examples/probe_overhead
//! callgrind_annotate --inclusive=yes probe.out | grep -E 'step_|sum_'
//! ```
//!
//! Each function is called `CALLS` times; divide its inclusive count by it.

// A probe observes named bindings: returning one is the point of these functions.
#![allow(clippy::let_and_return)]

use std::hint::black_box;

const CALLS: usize = 1_000_000;
const LOOPS: usize = 1_000;

#[inline(never)]
fn step_plain(x: f64) -> f64 {
    let y = x * 1.000_1 + 0.5;
    let z = y.sqrt();
    z
}

#[giving::probe]
#[inline(never)]
fn step_annotated(x: f64) -> f64 {
    let y = x * 1.000_1 + 0.5;
    let z = y.sqrt();
    z
}

#[inline(never)]
fn sum_plain(xs: &[f64]) -> f64 {
    let mut acc = 0.0;
    for x in xs {
        let sq = x * x;
        acc += sq;
    }
    acc
}

#[giving::probe]
#[inline(never)]
fn sum_annotated(xs: &[f64]) -> f64 {
    let mut acc = 0.0;
    for x in xs {
        let sq = x * x;
        acc += sq;
    }
    acc
}

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
    println!("{total}");
}
