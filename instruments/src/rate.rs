//! [`Rate`]: training throughput in items/s, by milabench's method.

use std::collections::HashMap;
use std::sync::Arc;

use giving::prelude::*;
use giving::{Event, Given, Pipeline, Timestamp, Value};

use crate::overseer::{BoxError, Instrument, Start};

/// Computes rates from step events, without ever syncing the device itself: the pure part of
/// [`Rate`], fed one event at a time (from a live scope, a replayed log or a test).
///
/// The method is milabench's. The host timestamps every step (the events of
/// [`iterate`](giving::iterate)) without waiting for the device; once per window the loop syncs
/// the device and marks that step `synced: true`. A window's rate is the sum of the `batch`
/// sizes of its steps divided by the time between the synced step that closes it and the one
/// that opened it (or the task's start event, `{task, progress: (0, n)}`). Because the device
/// was synced at both ends, queued device work is counted in the window that produced it.
///
/// - Rates are kept per `task` (a missing task counts as `""`).
/// - The first `skip` windows of each task are warm-up and give no rate.
/// - A task whose steps never carry `synced` (a loop that gives `step` and `batch` by hand)
///   gets a window every `unsynced_window` steps.
/// - A step without `batch` counts as one item and the rate's units become `steps/s`.
///
/// ```
/// use std::time::Duration;
/// use giving::{Event, Timestamp};
/// use giving_instruments::RateMeter;
///
/// let mut meter = RateMeter::new(0);
/// let t0 = Timestamp::from_nanos(1_000_000_000);
/// let at = |ms: u64| t0.plus(Duration::from_millis(ms));
/// let start = Event::builder().field("task", "train").field("progress", (0, 4)).time(t0).build();
/// assert!(meter.observe(&start).is_none());
/// for step in 0..4u64 {
///     let event = Event::builder()
///         .field("task", "train")
///         .field("step", step)
///         .field("batch", 32u64)
///         .field("synced", step % 2 == 1) // a window of two steps
///         .time(at(10 * (step + 1)))
///         .build();
///     if let Some(rate) = meter.observe(&event) {
///         assert_eq!(rate.get_as::<f64>("rate").unwrap(), 3200.0); // 64 items / 20 ms
///         assert_eq!(rate.get_as::<String>("units").unwrap(), "items/s");
///     }
/// }
/// ```
#[derive(Debug)]
pub struct RateMeter {
    skip: u64,
    unsynced_window: u64,
    tasks: HashMap<Arc<str>, Window>,
}

#[derive(Debug, Default)]
struct Window {
    start: Option<Timestamp>,
    items: u64,
    steps: u64,
    missing_batch: bool,
    windows: u64,
    saw_synced: bool,
}

impl RateMeter {
    /// A meter that skips the first `skip` windows of each task.
    pub fn new(skip: u64) -> Self {
        Self {
            skip,
            unsynced_window: 10,
            tasks: HashMap::new(),
        }
    }

    /// Steps per window for tasks that never mark `synced` steps (default 10).
    pub fn unsynced_window(mut self, steps: u64) -> Self {
        self.unsynced_window = steps.max(1);
        self
    }

    /// Reads one event; returns the `{task, rate, units}` event when it closes a window past
    /// the warm-up. The rate event has the time of the step that closed the window.
    pub fn observe(&mut self, event: &Event) -> Option<Event> {
        let is_step = event.has("step");
        if !is_step && !event.has("progress") {
            return None;
        }
        let task: Arc<str> = match event.get("task").and_then(Value::as_str) {
            Some(task) => Arc::from(task),
            None => Arc::from(""),
        };
        let unsynced_window = self.unsynced_window;
        let skip = self.skip;
        let window = self.tasks.entry(task.clone()).or_default();
        let time = event.time();
        if !is_step {
            // A task (re)starts: a new epoch's iterator. Its set-up time is not counted.
            window.start = Some(time);
            window.items = 0;
            window.steps = 0;
            window.missing_batch = false;
            return None;
        }
        let Some(start) = window.start else {
            // No start event: this step opens the first window (its own duration is unknown).
            window.start = Some(time);
            return None;
        };
        match event.get("batch").and_then(Value::as_f64) {
            Some(batch) => window.items += batch.max(0.0) as u64,
            None => {
                window.items += 1;
                window.missing_batch = true;
            }
        }
        window.steps += 1;
        let synced = matches!(event.get("synced"), Some(Value::Bool(true)));
        window.saw_synced |= synced;
        let ends = synced || (!window.saw_synced && window.steps >= unsynced_window);
        if !ends {
            return None;
        }
        let seconds = time.duration_since(start).as_secs_f64();
        let items = window.items;
        let units = if window.missing_batch {
            "steps/s"
        } else {
            "items/s"
        };
        window.start = Some(time);
        window.items = 0;
        window.steps = 0;
        window.missing_batch = false;
        window.windows += 1;
        if window.windows <= skip || seconds <= 0.0 {
            return None;
        }
        Some(
            Event::builder()
                .field("task", Value::Str(task))
                .field("rate", items as f64 / seconds)
                .field("units", units)
                .time(time)
                .build(),
        )
    }
}

/// The rate instrument: watches a scope's step events and gives `{task, rate, units:
/// "items/s"}` once per window, computed by [`RateMeter`] (milabench's method: host timestamps
/// per step, one device sync per window, the first windows skipped as warm-up).
///
/// The device sync itself is the loop's: [`iterate`](giving::iterate)'s `sync` hook, called
/// once per `window` steps. Rates use the events' timestamps, so a replayed log gives the same
/// rates as the run.
///
/// Rates are given from a pipeline, a little after the steps they measure: the scope they are
/// given into must still be open then. So the loop runs in an inner scope that ends first,
/// and the sinks listen to an outer one, as the [`Overseer`](crate::Overseer) arranges:
///
/// ```
/// use giving::prelude::*;
/// use giving::{given, iterate};
/// use giving_instruments::Rate;
///
/// let run = given(); // the sinks' scope
/// let rates = run.spawn(run.stream().key::<f64>("rate").collect::<Vec<_>>());
/// let training = given(); // nested: receives the loop's events too, ends first
/// let _rate = Rate::new().skip(1).attach_to(&training, &run);
/// for _batch in iterate("train", 0..40).batch_size(16).window(10) {}
/// training.finish().unwrap(); // waits for the rate pipeline: every rate is given
/// run.finish().unwrap();
/// let rates = rates.join().unwrap();
/// assert_eq!(rates.len(), 3); // 4 windows, the first one skipped
/// assert!(rates.iter().all(|r| *r > 0.0));
/// ```
#[derive(Debug)]
pub struct Rate {
    skip: u64,
    unsynced_window: u64,
}

impl Default for Rate {
    fn default() -> Self {
        Self::new()
    }
}

impl Rate {
    /// Warm-up windows skipped by default, per task.
    pub const DEFAULT_SKIP: u64 = 5;

    /// A rate instrument that skips the first [`DEFAULT_SKIP`](Rate::DEFAULT_SKIP) windows.
    pub fn new() -> Self {
        Self {
            skip: Self::DEFAULT_SKIP,
            unsynced_window: 10,
        }
    }

    /// Skips the first `windows` windows of each task (warm-up).
    pub fn skip(mut self, windows: u64) -> Self {
        self.skip = windows;
        self
    }

    /// Steps per window for loops that give no `synced` markers (default 10).
    pub fn unsynced_window(mut self, steps: u64) -> Self {
        self.unsynced_window = steps;
        self
    }

    /// Subscribes to `gv` now and gives rate events into it until it ends. The rates of the
    /// steps that arrive after `gv` ended are lost; see [`attach_to`](Rate::attach_to).
    pub fn attach(&self, gv: &Given) -> Pipeline<()> {
        self.attach_to(gv, gv)
    }

    /// Reads step events from `source` and gives rate events into `target`; the pipeline runs
    /// on `source`, so finishing `source` waits for the last rate to be given.
    pub fn attach_to(&self, source: &Given, target: &Given) -> Pipeline<()> {
        let mut meter = RateMeter::new(self.skip).unsynced_window(self.unsynced_window);
        let giver = target.giver();
        let steps = source.stream().where_any(["step", "progress"]);
        source.spawn(steps.for_each(move |event| {
            if let Some(rate) = meter.observe(&event) {
                giver.give(rate);
            }
        }))
    }
}

impl Instrument for Rate {
    fn name(&self) -> &str {
        "rate"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), BoxError> {
        let pipeline = self.attach_to(start.training(), start.given());
        start.track(pipeline);
        Ok(())
    }
}
