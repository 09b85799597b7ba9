//! [`Rate`]: training throughput in items/s, by milabench's method.

use std::collections::HashMap;
use std::sync::Arc;

use giving::prelude::*;
use giving::vocab::{ProgressEvent, RateEvent, StepEvent, keys};
use giving::{Event, Timestamp};

use crate::child::RATE_SKIP;
use crate::error::InstrumentError;
use crate::overseer::{Instrument, Start};

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
        let step = StepEvent::of(event);
        let task = match (&step, ProgressEvent::of(event)) {
            (Some(step), _) => step.task,
            (None, Some(progress)) => progress.task,
            (None, None) => return None,
        };
        let unsynced_window = self.unsynced_window;
        let skip = self.skip;
        let window = match self.tasks.get_mut(task) {
            Some(window) => window,
            None => self.tasks.entry(Arc::from(task)).or_default(),
        };
        let time = event.time();
        let Some(step) = step else {
            // A task (re)starts: a new epoch's iterator. Its set-up time is not counted.
            window.start = Some(time);
            window.items = 0;
            window.steps = 0;
            window.missing_batch = false;
            return None;
        };
        let Some(start) = window.start else {
            // No start event: this step opens the first window (its own duration is unknown).
            window.start = Some(time);
            return None;
        };
        match step.batch {
            Some(batch) => window.items += batch,
            None => {
                window.items += 1;
                window.missing_batch = true;
            }
        }
        window.steps += 1;
        window.saw_synced |= step.synced;
        let ends = step.synced || (!window.saw_synced && window.steps >= unsynced_window);
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
        let reading = RateEvent {
            task,
            rate: items as f64 / seconds,
            units,
        };
        Some(reading.event(time))
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
/// Rates are given from a [derivation](giving::Given::derive), a little after the steps they
/// measure: the scope's sinks still receive the last ones at finish.
///
/// ```
/// use giving::iterate;
/// use giving_instruments::{Overseer, Rate};
/// use std::sync::{Arc, Mutex};
///
/// let rates = Arc::new(Mutex::new(Vec::new()));
/// let sink = rates.clone();
/// let run = Overseer::new()
///     .with(Rate::new().skip(1))
///     .instrument_fn("rates", move |start| {
///         use giving::prelude::*;
///         let sink = sink.clone();
///         let rates = start.given().stream().key::<f64>("rate");
///         start.spawn(rates.for_each(move |rate| sink.lock().unwrap().push(rate)));
///         Ok(())
///     })
///     .run(|| for _batch in iterate("train", 0..40).batch_size(16).window(10) {});
/// assert!(run.problems.is_empty());
/// let rates = rates.lock().unwrap();
/// assert_eq!(rates.len(), 3); // 4 windows, the first one skipped
/// assert!(rates.iter().all(|r| *r > 0.0));
/// ```
#[derive(Debug)]
pub struct Rate {
    /// `None`: [`RATE_SKIP`]'s value when a suite set it, else [`Rate::DEFAULT_SKIP`].
    skip: Option<u64>,
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

    /// A rate instrument that skips the first [`DEFAULT_SKIP`](Rate::DEFAULT_SKIP) windows, or
    /// as many as the suite that started this process asks in [`RATE_SKIP`] (milabench's
    /// `voir.options.skip`).
    pub fn new() -> Self {
        Self {
            skip: None,
            unsynced_window: 10,
        }
    }

    /// Skips the first `windows` windows of each task (warm-up), whatever [`RATE_SKIP`] says.
    pub fn skip(mut self, windows: u64) -> Self {
        self.skip = Some(windows);
        self
    }

    /// The warm-up windows this instrument will skip: set by [`skip`](Rate::skip), else by
    /// [`RATE_SKIP`], else [`DEFAULT_SKIP`](Rate::DEFAULT_SKIP).
    fn windows_to_skip(&self) -> Result<u64, InstrumentError> {
        if let Some(skip) = self.skip {
            return Ok(skip);
        }
        match std::env::var(RATE_SKIP) {
            Err(_) => Ok(Self::DEFAULT_SKIP),
            Ok(value) => value.trim().parse().map_err(|_| {
                InstrumentError::other(format!(
                    "{RATE_SKIP}={value:?}: expected a whole number of warm-up windows"
                ))
            }),
        }
    }

    /// Steps per window for loops that give no `synced` markers (default 10).
    pub fn unsynced_window(mut self, steps: u64) -> Self {
        self.unsynced_window = steps;
        self
    }
}

impl Instrument for Rate {
    fn name(&self) -> &str {
        "rate"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        let mut meter =
            RateMeter::new(self.windows_to_skip()?).unsynced_window(self.unsynced_window);
        start.derive(|events, giver| {
            // Computed from the events' own timestamps: reading them a tick late changes
            // nothing but when the rate is given.
            events
                .paced(crate::SINK_PACE)
                .where_any([keys::STEP, keys::PROGRESS])
                .for_each(move |event| {
                    if let Some(rate) = meter.observe(&event) {
                        giver.give(rate);
                    }
                })
        });
        Ok(())
    }
}
