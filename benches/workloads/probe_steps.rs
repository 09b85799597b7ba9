//! The functions `benches/probe.rs` and `examples/probe_overhead.rs` measure, in one place so
//! that criterion's times and callgrind's counts are of the same code: a small step plain,
//! annotated, annotated to be probed (alone, with an argument, and called from an annotated
//! loop), and giving by hand; a loop plain and annotated.
// Each includer uses a part of them.
#![allow(dead_code)]
// A probe observes named bindings: returning one is the point of these functions.
#![allow(clippy::let_and_return)]

use giving::give;

#[inline(never)]
pub(crate) fn step_plain(x: f64) -> f64 {
    let y = x * 1.000_1 + 0.5;
    let z = y.sqrt();
    z
}

#[giving::probe]
#[inline(never)]
pub(crate) fn step_annotated(x: f64) -> f64 {
    let y = x * 1.000_1 + 0.5;
    let z = y.sqrt();
    z
}

/// `step_annotated`'s copy that runs under a probe `step_probed > z`.
#[giving::probe]
#[inline(never)]
pub(crate) fn step_probed(x: f64) -> f64 {
    let y = x * 1.000_1 + 0.5;
    let z = y.sqrt();
    z
}

/// `step_plain` giving its `z` by hand.
#[inline(never)]
pub(crate) fn step_given(x: f64) -> f64 {
    let y = x * 1.000_1 + 0.5;
    let z = y.sqrt();
    give!(z);
    z
}

#[inline(never)]
pub(crate) fn sum_plain(xs: &[f64]) -> f64 {
    let mut acc = 0.0;
    for x in xs {
        let sq = x * x;
        acc += sq;
    }
    acc
}

#[giving::probe]
#[inline(never)]
pub(crate) fn sum_annotated(xs: &[f64]) -> f64 {
    let mut acc = 0.0;
    for x in xs {
        let sq = x * x;
        acc += sq;
    }
    acc
}

/// `step_probed` again, for a probe that also reads an argument: `step_multi(x) > z`.
#[giving::probe]
#[inline(never)]
pub(crate) fn step_multi(x: f64) -> f64 {
    let y = x * 1.000_1 + 0.5;
    let z = y.sqrt();
    z
}

/// `step_probed` again, called from `outer_loop`, for `outer_loop > step_inner > z`.
#[giving::probe]
#[inline(never)]
pub(crate) fn step_inner(x: f64) -> f64 {
    let y = x * 1.000_1 + 0.5;
    let z = y.sqrt();
    z
}

/// Calls `step_inner` `n` times: the enclosing function of `outer_loop > step_inner > z`.
#[giving::probe]
#[inline(never)]
pub(crate) fn outer_loop(n: u64) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        total += step_inner(std::hint::black_box(i as f64));
    }
    total
}
