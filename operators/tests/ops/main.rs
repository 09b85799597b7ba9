//! Semantics tests of every generic operator. Time-based tests run on tokio's paused clock and
//! assert the virtual time of every emission (never the wall clock).

#![allow(clippy::needless_range_loop)]

mod combining;
mod filtering;
mod parity;
mod reductions;
mod time;
mod windows;

use std::time::Duration;

use futures::Stream;
use giving_operators::StreamOps;
use tokio::time::{Instant, sleep_until};

/// A stream giving each `(ms, item)` at `ms` milliseconds after its creation, completing at
/// `end_ms` (or right after the last item).
pub fn timed<T>(items: Vec<(u64, T)>, end_ms: Option<u64>) -> impl Stream<Item = T> {
    let start = Instant::now();
    futures::stream::unfold(
        (items.into_iter(), end_ms),
        move |(mut items, end_ms)| async move {
            match items.next() {
                Some((ms, item)) => {
                    sleep_until(start + Duration::from_millis(ms)).await;
                    Some((item, (items, end_ms)))
                }
                None => {
                    if let Some(end) = end_ms {
                        sleep_until(start + Duration::from_millis(end)).await;
                    }
                    None
                }
            }
        },
    )
}

/// Items that are their own timestamp in milliseconds.
pub fn at(times: &[u64]) -> impl Stream<Item = u64> + use<> {
    timed(times.iter().map(|&t| (t, t)).collect(), None)
}

/// Collects `(virtual ms since the call, item)` for every emission of `s`.
pub async fn stamped<S: Stream>(s: S) -> Vec<(u64, S::Item)> {
    let start = Instant::now();
    s.map(move |x| (start.elapsed().as_millis() as u64, x))
        .collect()
        .await
}

/// Deterministic pseudo-random numbers (a 64-bit LCG), for brute-force comparisons.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next number: the top 31 bits of the advanced state.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// An integer in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// `n` milliseconds.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Runs a future to completion on a plain executor (for operators that need no timer).
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures::executor::block_on(f)
}

/// Collects a stream on a plain executor.
pub fn collect<S: Stream>(s: S) -> Vec<S::Item> {
    block_on(s.collect())
}
