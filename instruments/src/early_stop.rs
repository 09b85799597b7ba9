//! [`EarlyStop`]: ends a training loop cleanly after N observations of a key.

use giving::prelude::*;
use giving::{Event, Given, Pipeline, Value};

use crate::overseer::{BoxError, Instrument, Start};

/// Counts the events that have a key (by default `rate`, as milabench does), gives
/// `{task: "early_stop", progress: (i, n)}` as it counts, and after `n` of them asks the loop
/// to stop through the scope's [`StopToken`](giving::StopToken): [`iterate`](giving::iterate)
/// ends between two steps, the training function returns normally, sinks flush and the
/// process exits with code 0.
///
/// ```
/// use giving::prelude::*;
/// use giving::{given, iterate};
/// use giving_instruments::{EarlyStop, Rate};
///
/// let gv = given();
/// let progress = gv.spawn(gv.stream().where_eq("task", "early_stop").key::<Vec<u64>>("progress").collect::<Vec<_>>());
/// let _rate = Rate::new().skip(0).attach(&gv);
/// let _stop = EarlyStop::new(2).attach(&gv);
/// let mut steps = 0;
/// for _batch in iterate("train", 0..).batch_size(8).window(4) {
///     steps += 1;
///     std::thread::yield_now();
/// }
/// gv.finish().unwrap();
/// assert!(steps >= 8); // two windows of 4 steps, then the loop ended cleanly
/// assert_eq!(progress.join().unwrap()[..2], [vec![1, 2], vec![2, 2]]);
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
            key: "rate".to_owned(),
        }
    }

    /// Counts events with `key` instead of `rate`.
    pub fn key(mut self, key: &str) -> Self {
        self.key = key.to_owned();
        self
    }

    /// Subscribes to `gv` now; stops its loop after `n` events with the key.
    pub fn attach(&self, gv: &Given) -> Pipeline<()> {
        let n = self.n;
        let giver = gv.giver();
        let stop = gv.stop_token();
        let mut count = 0u64;
        let observed = gv.stream().where_([self.key.as_str()]);
        gv.spawn(observed.for_each(move |_| {
            if count >= n {
                return;
            }
            count += 1;
            giver.give(
                Event::builder()
                    .field("task", "early_stop")
                    .field("progress", Value::List(vec![count.into(), n.into()]))
                    .build(),
            );
            if count == n {
                stop.stop();
            }
        }))
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

    fn add_args(&self, command: clap::Command) -> clap::Command {
        <crate::StopArgs as clap::Args>::augment_args(command)
    }

    fn parse_args(&mut self, matches: &clap::ArgMatches) -> Result<(), BoxError> {
        let args = <crate::StopArgs as clap::FromArgMatches>::from_arg_matches(matches)?;
        if let Some(n) = args.stop {
            self.n = n;
        }
        Ok(())
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), BoxError> {
        let pipeline = self.attach(start.given());
        start.track(pipeline);
        Ok(())
    }
}
