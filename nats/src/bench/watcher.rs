//! The watcher: the fan-in `giving watch` runs ([`FanIn::forward`] into a scope), on a thread
//! of its own whose CPU time is measured, and a subscriber of that scope that stamps each
//! event's receipt.

use std::collections::HashMap;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use cpu_time::ThreadTime;
use futures::StreamExt;
use giving::vocab::keys;
use giving::{Event, Timestamp};

use super::error::{BenchError, SEQ};
use crate::{FanIn, Until};

/// What the watcher received.
pub(crate) struct Watched {
    /// Synthetic events received.
    pub(crate) received: u64,
    /// Received again or out of its rank's order (both would be fan-in bugs).
    pub(crate) misordered: u64,
    /// Received after a gap in its rank's sequence: a loss before the rank's last event.
    pub(crate) gaps: u64,
    /// Each received event's latency, from its rank's timestamp to its receipt, nanoseconds.
    pub(crate) latencies: Vec<u64>,
    /// When the last one was received.
    pub(crate) last: Option<Timestamp>,
    /// Records the fan-in rejected.
    pub(crate) rejected: u64,
    /// Events the fan-in gave into the scope (the synthetic ones and the ranks' ends).
    pub(crate) forwarded: u64,
    /// CPU time of the watcher's thread while it forwarded.
    pub(crate) cpu: Duration,
}

/// The subscriber's count.
#[derive(Default)]
struct Tally {
    received: u64,
    misordered: u64,
    gaps: u64,
    latencies: Vec<u64>,
    last: Option<Timestamp>,
    next: HashMap<u64, u64>,
}

impl Tally {
    fn take(mut self, event: &Event) -> Self {
        let Ok(seq) = event.get_as::<u64>(SEQ) else {
            return self;
        };
        let now = Timestamp::now();
        self.received += 1;
        let nanos = now.duration_since(event.time()).as_nanos();
        self.latencies
            .push(u64::try_from(nanos).unwrap_or(u64::MAX));
        self.last = Some(now);
        let rank = event.get_as::<u64>(keys::RANK).unwrap_or(u64::MAX);
        let next = self.next.entry(rank).or_default();
        // A gap is a loss (counted by the totals); going back is a duplicate or a reordering.
        if seq < *next {
            self.misordered += 1;
        } else {
            if seq > *next {
                self.gaps += 1;
            }
            *next = seq + 1;
        }
        self
    }
}

/// Starts the watcher of run `run` on `url`; `ready` says when it is subscribed (or why it
/// could not be). It ends when every one of `world` ranks has ended, or nothing arrived for
/// `idle`.
pub(crate) fn spawn_watcher(
    url: String,
    run: String,
    world: u64,
    idle: Duration,
    ready: mpsc::Sender<Result<(), BenchError>>,
) -> JoinHandle<Result<Watched, BenchError>> {
    // Named, so that a profile (perf's `--comm`) finds it.
    let watcher = std::thread::Builder::new().name("fanin-watcher".to_owned());
    let spawned = watcher.spawn(move || {
        let setup = || -> Result<_, BenchError> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(BenchError::Runtime)?;
            let fan_in = runtime.block_on(FanIn::connect(&url, &run))?;
            Ok((runtime, fan_in.world_size(world)))
        };
        let (runtime, mut fan_in) = match setup() {
            Ok(ready_to_go) => ready_to_go,
            Err(error) => {
                let _ = ready.send(Err(BenchError::Watcher(error.to_string())));
                return Err(error);
            }
        };
        let gv = giving::given();
        // Spawned outside the watcher's runtime: on giving's background runtime, as the
        // instruments of `giving watch` are, not on the thread measured.
        let tally = gv.spawn(
            gv.stream()
                .fold(Tally::default(), |tally, event| async move {
                    tally.take(&event)
                }),
        );
        let _ = ready.send(Ok(()));
        let until = Until {
            done: true,
            idle: Some(idle),
            stop: None,
        };
        let cpu = ThreadTime::now();
        let forwarded = runtime.block_on(fan_in.forward(&gv.giver(), &until));
        let cpu = cpu.elapsed();
        let rejected = fan_in.rejected();
        gv.finish()
            .map_err(|error| BenchError::Watcher(error.to_string()))?;
        let tally = tally
            .join()
            .map_err(|error| BenchError::Watcher(error.to_string()))?;
        Ok(Watched {
            received: tally.received,
            misordered: tally.misordered,
            gaps: tally.gaps,
            latencies: tally.latencies,
            last: tally.last,
            rejected,
            forwarded,
            cpu,
        })
    });
    spawned.expect("spawn the watcher's thread")
}
