//! One simulated rank: a thread that gives synthetic events at a set rate into a scope whose
//! only instrument is the real [`NatsPublisher`] (what `giving train --publish` runs).

use std::time::{Duration, Instant};

use giving::give;
use giving_instruments::Overseer;

use super::error::BenchError;
use crate::{Identity, NatsPublisher, PublishSummary};

/// What a rank gave and what its publisher did with it.
pub(crate) struct RankOutcome {
    /// Synthetic events given.
    pub(crate) sent: u64,
    /// The publisher's own account (events taken, published, dropped).
    pub(crate) summary: PublishSummary,
}

/// How a rank paces itself.
pub(crate) struct Pace {
    /// When its first event is due.
    pub(crate) start: Instant,
    /// Events per second.
    pub(crate) rate: f64,
    /// How many events it gives.
    pub(crate) events: u64,
    /// Events due within one tick are given together, after one wake-up.
    pub(crate) tick: Duration,
    /// The niceness of the rank's threads (0: as the watcher's).
    pub(crate) nice: i32,
}

/// Sets this thread's niceness; threads it starts afterwards (the publisher's) inherit it.
/// Linux's niceness is per thread: `who = 0` with `PRIO_PROCESS` names the calling thread.
fn lower_priority(nice: i32) {
    if nice == 0 {
        return;
    }
    // SAFETY: setpriority takes plain numbers and changes only the calling thread's
    // scheduling priority; a refusal (EACCES) leaves it as it was, which is only less fair.
    let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
}

/// Runs rank `rank` of `world` on this thread until it has given `pace.events` events, each
/// when due (late ones at once, so the rate holds on average), and its publisher has finished.
pub(crate) fn run_rank(
    url: &str,
    run: &str,
    rank: u64,
    world: u64,
    pace: &Pace,
) -> Result<RankOutcome, BenchError> {
    lower_priority(pace.nice);
    let identity = Identity::new(run)?
        .rank(rank)
        .world_size(world)
        .host("fanin-bench");
    let publisher = NatsPublisher::new(url, identity);
    let summary = publisher.summary();
    // Ranks are not in step: each is offset by its share of one interval.
    let offset = rank as f64 / (world as f64 * pace.rate);
    let outcome = Overseer::new()
        .quiet(true)
        .ctrl_c(false)
        .trace_env(false)
        .with(publisher)
        .run(|| {
            let due =
                |seq: u64| pace.start + Duration::from_secs_f64(offset + seq as f64 / pace.rate);
            let mut seq = 0;
            while seq < pace.events {
                let wake = due(seq);
                let now = Instant::now();
                if wake > now {
                    std::thread::sleep(wake - now);
                }
                // Every event due by the end of this tick (at least the one awaited).
                let until = Instant::now().max(wake) + pace.tick;
                loop {
                    let loss = 1.0 / (seq as f64 + 1.0);
                    // `fanin_seq`: the key the watcher counts ([`super::error::SEQ`]).
                    give!(fanin_seq = seq, loss);
                    seq += 1;
                    if seq == pace.events || due(seq) >= until {
                        break;
                    }
                }
            }
            pace.events
        });
    if let Some(problem) = outcome.problems.first() {
        return Err(BenchError::Rank {
            rank,
            message: problem.to_string(),
        });
    }
    let sent = outcome.output.map_err(|panic| BenchError::Rank {
        rank,
        message: format!("panicked: {}", panic.message()),
    })?;
    let summary = summary
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .ok_or_else(|| BenchError::Rank {
            rank,
            message: "its publisher left no summary".to_owned(),
        })?;
    Ok(RankOutcome { sent, summary })
}
