//! Fan-in at scale, measured: N simulated ranks publish synthetic events at a set rate to a
//! NATS server through the real publisher ([`NatsPublisher`](crate::NatsPublisher), what
//! `giving train --publish` runs), and one watcher receives them through the real fan-in
//! ([`FanIn::forward`](crate::FanIn::forward) into a scope, what `giving watch` runs).
//!
//! [`FanInBench::measure`] reports what the watcher sustained ([`FanInReport`]): events/s, the
//! CPU time of its thread per event, latency percentiles from each event's timestamp (taken
//! by its rank as it gave it) to its receipt by a subscriber of the watcher's scope, and an
//! account of every event sent: received, rejected, dropped by a publisher, or lost in
//! between. Ranks are threads of this process, so their clock is the watcher's.
//!
//! ```no_run
//! use giving_nats::bench::{FanInBench, FanInReport, NatsServer};
//!
//! let server = NatsServer::start().unwrap();
//! let report = FanInBench::new(8).rate(1000.0).seconds(2.0).measure(&server.url()).unwrap();
//! println!("{}\n{}", FanInReport::TABLE_HEADER, report.table_row());
//! assert!(report.balances());
//! ```
//!
//! See `docs/remote.md`, "Fan-in at scale".

mod error;
mod hog;
mod rank;
mod server;
mod watcher;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use giving::Timestamp;

pub use error::{BenchError, SEQ};
pub use hog::CpuHog;
pub use server::NatsServer;

use rank::{Pace, run_rank};
use watcher::spawn_watcher;

/// How often a simulated rank wakes to give the events due, by default: 10 events per
/// wake-up at 1,000 events/s (see [`FanInBench::tick`]).
pub const DEFAULT_TICK: Duration = Duration::from_millis(10);

/// The run name the simulated ranks publish under.
const RUN: &str = "fanin_bench";
/// How long the ranks' publishers get to connect before the first event is due.
const LEAD_IN: Duration = Duration::from_millis(300);
/// How long the watcher waits for a rank that never ends (its end record lost).
const IDLE: Duration = Duration::from_secs(5);

/// One measurement's settings: how many ranks, how fast, how long, with the machine busy or
/// not.
#[derive(Debug, Clone, PartialEq)]
pub struct FanInBench {
    ranks: u64,
    rate: f64,
    seconds: f64,
    hog: bool,
    tick: Duration,
    nice: i32,
}

impl FanInBench {
    /// `ranks` ranks (at least 1) at 1,000 events/s each for 10 s, woken every
    /// [`DEFAULT_TICK`], on a quiet machine.
    pub fn new(ranks: u64) -> Self {
        Self {
            ranks: ranks.max(1),
            rate: 1000.0,
            seconds: 10.0,
            hog: false,
            tick: DEFAULT_TICK,
            nice: 0,
        }
    }

    /// Events per second per rank (a positive number; others are taken as 1).
    pub fn rate(mut self, rate: f64) -> Self {
        self.rate = if rate.is_finite() && rate > 0.0 {
            rate
        } else {
            1.0
        };
        self
    }

    /// How long each rank publishes, in seconds (at least one event is sent).
    pub fn seconds(mut self, seconds: f64) -> Self {
        self.seconds = if seconds.is_finite() {
            seconds.max(0.0)
        } else {
            0.0
        };
        self
    }

    /// Runs one busy thread per core during the measurement ([`CpuHog`]), as training does.
    pub fn hog(mut self, hog: bool) -> Self {
        self.hog = hog;
        self
    }

    /// Each rank wakes once per `tick` and gives every event due by then together (default
    /// [`DEFAULT_TICK`]; zero: one wake-up per event). A coarser tick costs the simulated ranks
    /// fewer wake-ups and their publishers fewer writes, for the same rate: on a small
    /// machine, one wake-up per event of every rank costs more than the watcher does.
    pub fn tick(mut self, tick: Duration) -> Self {
        self.tick = tick;
        self
    }

    /// Runs the simulated ranks (and their publishers' threads) at this niceness (0 to 19;
    /// default 0), so that the watcher and the server come first on a machine too small to
    /// host the ranks as well, as if they ran elsewhere. The CPU hog keeps niceness 0.
    pub fn nice(mut self, nice: i32) -> Self {
        self.nice = nice.clamp(0, 19);
        self
    }

    /// Events each rank sends.
    pub fn events_per_rank(&self) -> u64 {
        ((self.rate * self.seconds).round() as u64).max(1)
    }

    /// Runs the ranks and the watcher against the server at `url` and reports.
    pub fn measure(&self, url: &str) -> Result<FanInReport, BenchError> {
        let hog = self.hog.then(CpuHog::per_core);
        let (ready, subscribed) = mpsc::channel();
        let watcher = spawn_watcher(url.to_owned(), RUN.to_owned(), self.ranks, IDLE, ready);
        subscribed
            .recv()
            .map_err(|_| BenchError::Watcher("the watcher stopped before subscribing".into()))??;
        let pace = Pace {
            start: Instant::now() + LEAD_IN,
            rate: self.rate,
            events: self.events_per_rank(),
            tick: self.tick,
            nice: self.nice,
        };
        let started = Timestamp::now().plus(LEAD_IN);
        let outcomes: Vec<_> = std::thread::scope(|scope| {
            let ranks: Vec<_> = (0..self.ranks)
                .map(|rank| {
                    let pace = &pace;
                    scope.spawn(move || run_rank(url, RUN, rank, self.ranks, pace))
                })
                .collect();
            ranks
                .into_iter()
                .enumerate()
                .map(|(rank, thread)| {
                    thread.join().unwrap_or_else(|_| {
                        Err(BenchError::Rank {
                            rank: rank as u64,
                            message: "its thread panicked".to_owned(),
                        })
                    })
                })
                .collect()
        });
        let watched = watcher
            .join()
            .map_err(|_| BenchError::Watcher("its thread panicked".to_owned()))??;
        drop(hog);
        let (mut sent, mut dropped, mut published) = (0, 0, 0);
        for outcome in outcomes {
            let outcome = outcome?;
            sent += outcome.sent;
            dropped += outcome.summary.dropped;
            // Its end record is counted as published too.
            published += outcome.summary.published.saturating_sub(1);
        }
        Ok(FanInReport::new(
            self,
            Sent {
                sent,
                published,
                dropped,
            },
            started,
            watched,
        ))
    }
}

/// The ranks' side of the account.
struct Sent {
    sent: u64,
    published: u64,
    dropped: u64,
}

/// What one measurement found. Every event sent is accounted for:
/// `sent = received + rejected + dropped + lost`.
#[derive(Debug, Clone, PartialEq)]
pub struct FanInReport {
    /// Simulated ranks.
    pub ranks: u64,
    /// Events per second each rank was set to send.
    pub rate: f64,
    /// Whether a busy thread per core ran meanwhile.
    pub hog: bool,
    /// Synthetic events the ranks gave.
    pub sent: u64,
    /// Records the ranks' publishers handed to their connections (their end records not
    /// counted; with no drop, [`sent`](Self::sent)).
    pub published: u64,
    /// Synthetic events the watcher received.
    pub received: u64,
    /// Records the fan-in rejected (not records, or not from a rank of the run).
    pub rejected: u64,
    /// Events the ranks' publishers dropped and counted (buffer full while the server was
    /// unreachable, a lagging subscription, the server still down at the end).
    pub dropped: u64,
    /// Events sent but neither received, rejected nor dropped: lost between a publisher and the
    /// watcher (a slow consumer's messages discarded by the server or the client).
    pub lost: u64,
    /// Events received more than once or out of their rank's order.
    pub misordered: u64,
    /// Events received after a gap in their rank's sequence (with losses, whether they were
    /// in the middle of a rank's stream rather than at its end).
    pub gaps: u64,
    /// Synthetic events received per second, from the first event's due time to the last
    /// receipt.
    pub events_per_second: f64,
    /// CPU time of the watcher's thread (receiving, decoding, giving into its scope) per event
    /// it forwarded, in microseconds.
    pub cpu_us_per_event: f64,
    /// Median latency from a rank's timestamp to the watcher's receipt.
    pub p50: Duration,
    /// 99th percentile of that latency.
    pub p99: Duration,
    /// Its largest value.
    pub max: Duration,
}

impl FanInReport {
    /// The header of [`table_row`](Self::table_row)'s Markdown table.
    pub const TABLE_HEADER: &str = "| ranks | events/s per rank | CPU hog | sent | received events/s | watcher CPU µs/event | p50 ms | p99 ms | max ms | dropped | rejected | lost |\n|---|---|---|---|---|---|---|---|---|---|---|---|";

    fn new(
        bench: &FanInBench,
        Sent {
            sent,
            published,
            dropped,
        }: Sent,
        started: Timestamp,
        watched: watcher::Watched,
    ) -> Self {
        let mut latencies = watched.latencies;
        latencies.sort_unstable();
        let percentile = |p: usize| {
            let index = (latencies.len() * p / 100).min(latencies.len().saturating_sub(1));
            Duration::from_nanos(latencies.get(index).copied().unwrap_or(0))
        };
        let span = watched
            .last
            .map_or(Duration::ZERO, |last| last.duration_since(started));
        let per_second = if span.is_zero() {
            0.0
        } else {
            watched.received as f64 / span.as_secs_f64()
        };
        let cpu_us_per_event = if watched.forwarded == 0 {
            0.0
        } else {
            watched.cpu.as_secs_f64() * 1e6 / watched.forwarded as f64
        };
        Self {
            ranks: bench.ranks,
            rate: bench.rate,
            hog: bench.hog,
            sent,
            published,
            received: watched.received,
            rejected: watched.rejected,
            dropped,
            lost: sent.saturating_sub(watched.received + watched.rejected + dropped),
            misordered: watched.misordered,
            gaps: watched.gaps,
            events_per_second: per_second,
            cpu_us_per_event,
            p50: percentile(50),
            p99: percentile(99),
            max: Duration::from_nanos(latencies.last().copied().unwrap_or(0)),
        }
    }

    /// Whether every event sent is accounted for, none twice, none out of order.
    pub fn balances(&self) -> bool {
        self.received + self.rejected + self.dropped + self.lost == self.sent
            && self.misordered == 0
    }

    /// Whether the watcher kept up: nothing dropped, rejected or lost, and a p99 latency
    /// under 100 ms (the fan-in target of `docs/remote.md`).
    pub fn kept_up(&self) -> bool {
        self.balances() && self.received == self.sent && self.p99 < Duration::from_millis(100)
    }

    /// One row of the Markdown table headed by [`TABLE_HEADER`](Self::TABLE_HEADER).
    pub fn table_row(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        format!(
            // The latencies to one precision: max rounded coarser than p99 could read below it.
            "| {} | {:.0} | {} | {} | {:.0} | {:.1} | {:.2} | {:.2} | {:.2} | {} | {} | {} |",
            self.ranks,
            self.rate,
            if self.hog { "yes" } else { "no" },
            self.sent,
            self.events_per_second,
            self.cpu_us_per_event,
            ms(self.p50),
            ms(self.p99),
            ms(self.max),
            self.dropped,
            self.rejected,
            self.lost,
        )
    }
}
