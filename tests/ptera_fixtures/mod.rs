//! The fixtures and helpers that `tests/probe_ptera.rs` and `tests/probe_ptera_more.rs` share:
//! ptera 1.4.1's `test_probe.py` and `test_interpret.py` functions, with the same names and
//! arithmetic, and how a test reads a probe's events.

// Each test program uses its own part of these.
#![allow(dead_code)]

use futures::executor::block_on;
use giving::prelude::*;
use giving::{Event, Given, Probe, given};

/// The events of `probe`, after ending `gv`, as `key=value` lines.
pub fn events(gv: Given, probe: Probe) -> Vec<String> {
    gv.finish().unwrap();
    block_on(probe.collect::<Vec<Event>>())
        .iter()
        .map(|e| e.to_string())
        .collect()
}

/// One probe's events while `run` runs.
pub fn probed(selector: &str, run: impl FnOnce()) -> Vec<String> {
    let gv = given();
    let probe = gv.probe(selector).unwrap();
    run();
    events(gv, probe)
}

// --- test_probe.py's fixtures ---

#[giving::probe(overridable(a))]
pub fn f(x: i64) -> i64 {
    let a = x * x;
    a + 1
}

#[giving::probe]
pub fn g(x: i64) -> i64 {
    let a = -x;
    a + 1
}

#[giving::probe]
pub fn recurso(n: u64) -> u64 {
    if n == 0 { 1 } else { n * recurso(n - 1) }
}

// --- test_interpret.py's fixtures ---

/// ptera tags `a` and `b` `@Bouffe`; here their written type is.
pub type Bouffe = i64;

#[giving::probe(overridable(x))]
pub fn brie(x: i64, y: i64) -> i64 {
    let a: Bouffe = x * x;
    let b: Bouffe = y * y;
    a + b
}

#[giving::probe]
pub fn extra(cheese: i64) -> i64 {
    cheese + 1
}

#[giving::probe]
pub fn double_brie(x1: i64, y1: i64) -> i64 {
    let a = brie(x1, x1 + 1);
    let b = brie(y1, y1 + 1);
    let aa = extra(a);
    let bb = extra(b);
    aa + bb
}

#[giving::probe(overridable(rval))]
pub fn square(x: i64) -> i64 {
    let rval = x * x;
    rval
}

#[giving::probe]
pub fn sumsquares(x: i64, y: i64) -> i64 {
    let xx = square(x);
    let yy = square(y);
    let rval = xx + yy;
    rval
}
