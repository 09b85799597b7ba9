//! [`EarlyStop`]: ends a training loop cleanly after N observations of a key.

use giving::prelude::*;
use giving::vocab::{ProgressEvent, keys};

use crate::error::InstrumentError;
use crate::overseer::{Instrument, Start};

/// Counts the events that have a key (by default `rate`, as milabench does), gives
/// `{task: "early_stop", progress: (i, n)}` as it counts, and after `n` of them asks the loop
/// to stop through the scope's [`StopToken`](giving::StopToken): [`iterate`](giving::iterate)
/// ends between two steps, the training function returns normally, sinks flush and the
/// process exits with code 0.
///
/// It is a [derivation](giving::Given::derive): started after [`Rate`](crate::Rate), it counts
/// every rate, the last ones included, and its last `progress` reaches every sink.
///
/// ```
/// use giving::iterate;
/// use giving_instruments::{EarlyStop, Overseer, Rate};
///
/// let run = Overseer::new()
///     .with(Rate::new().skip(0))
///     .with(EarlyStop::new(2))
///     .run(|| {
///         let mut steps = 0;
///         for _batch in iterate("train", 0..).batch_size(8).window(4) {
///             steps += 1;
///             std::thread::yield_now();
///         }
///         steps
///     });
/// assert!(run.stopped);
/// assert!(*run.output.as_ref().unwrap() >= 8); // two windows of 4 steps, then a clean end
/// ```
#[derive(Debug, Clone)]
pub struct EarlyStop {
    n: u64,
    key: String,
}

impl EarlyStop {
    /// Observations counted by default (milabench's `stop: 60`).
    pub const DEFAULT_N: u64 = 60;

    /// Stops after `n` events with the key `rate`.
    pub fn new(n: u64) -> Self {
        Self {
            n,
            key: keys::RATE.to_owned(),
        }
    }

    /// Counts events with `key` instead of `rate`.
    pub fn key(mut self, key: &str) -> Self {
        self.key = key.to_owned();
        self
    }
}

impl Default for EarlyStop {
    fn default() -> Self {
        Self::new(Self::DEFAULT_N)
    }
}

impl Instrument for EarlyStop {
    fn name(&self) -> &str {
        "early-stop"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        let n = self.n;
        let stop = start.given().stop_token();
        let key = self.key.clone();
        let mut count = 0u64;
        start.derive(move |events, giver| {
            events
                .paced(crate::SINK_PACE)
                .where_([key.as_str()])
                .for_each(move |_| {
                    if count >= n {
                        return;
                    }
                    count += 1;
                    giver.give(ProgressEvent::event(keys::EARLY_STOP_TASK, count, n));
                    if count == n {
                        stop.stop();
                    }
                })
        });
        Ok(())
    }
}
