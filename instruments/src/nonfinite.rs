//! [`StopOnNonFinite`]: stops a run at the first NaN or infinity and names where it appeared.

use giving::vocab::{WatchEvent, keys};
use giving::{Event, Giver};

use crate::error::InstrumentError;
use crate::overseer::{Instrument, Start};

/// Watches the loss and the model watch's statistics (giving-burn's `ModelWatch`,
/// `giving train --watch N`) and, at the first non-finite value, names the first parameter
/// (in the model's order) whose weights or gradient hold NaN or infinite elements at that
/// watched step, gives `{nonfinite, watch, global_step, nans, infs}`, says so on stderr and
/// stops the run cleanly (its log stays whole).
///
/// A non-finite loss at a step that is not watched waits for the next watched step to name
/// the parameter (the loss turns NaN when a parameter does): without a model watch, or when
/// no parameter is non-finite there, it names `"loss"` and its step.
///
/// ```
/// use giving::give;
/// use giving::vocab::keys;
/// use giving_instruments::{Overseer, StopOnNonFinite};
///
/// let run = Overseer::new().with(StopOnNonFinite::new().quiet(true)).run(|| {
///     let mut steps = 0;
///     for _ in giving::iterate("train", 0..) {
///         let loss = if steps == 5 { f64::NAN } else { 1.0 };
///         give!(global_step = steps as u64, loss);
///         steps += 1;
///     }
///     steps
/// });
/// assert!(run.stopped);
/// assert!(*run.output.as_ref().unwrap() >= 6);
/// ```
#[derive(Debug, Clone, Default)]
pub struct StopOnNonFinite {
    quiet: bool,
}

impl StopOnNonFinite {
    /// Stops at the first non-finite value and says so on stderr.
    pub fn new() -> Self {
        Self::default()
    }

    /// Says nothing on stderr (the `nonfinite` event is given all the same).
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }
}

/// Where a non-finite value was found.
#[derive(Debug, Clone, PartialEq)]
struct Found {
    name: String,
    watch: Option<String>,
    step: u64,
    nans: f64,
    infs: f64,
}

/// What has been seen so far: the step of a non-finite loss waiting for a watched step, and
/// whether a model watch gives at all.
#[derive(Debug, Default)]
struct Search {
    loss_at: Option<u64>,
    /// A watched step at or after `loss_at` whose parameters were all finite so far.
    watched_after: Option<u64>,
    watching: bool,
}

impl Search {
    fn observe(&mut self, event: &Event) -> Option<Found> {
        if let Some(watched) = WatchEvent::of(event) {
            if watched.watch == "update" {
                return None;
            }
            self.watching = true;
            let step = watched.step;
            let count = |key| event.get_as::<f64>(key).unwrap_or(0.0);
            let (nans, infs) = (count(keys::NANS), count(keys::INFS));
            if nans + infs > 0.0 {
                return Some(Found {
                    name: watched.param.to_owned(),
                    watch: Some(watched.watch.to_owned()),
                    step,
                    nans,
                    infs,
                });
            }
            if self.loss_at.is_some_and(|at| step >= at) {
                self.watched_after = Some(step);
            }
            return None;
        }
        let loss = event.get_as::<f64>(keys::LOSS).ok()?;
        let step = event.get_as::<u64>(keys::GLOBAL_STEP).unwrap_or(0);
        // The watched step after a non-finite loss has ended with every parameter finite.
        if let (Some(at), Some(watched)) = (self.loss_at, self.watched_after)
            && step > watched
        {
            return Some(Self::loss(at));
        }
        if !loss.is_finite() && self.loss_at.is_none() {
            if !self.watching {
                return Some(Self::loss(step));
            }
            self.loss_at = Some(step);
        }
        None
    }

    /// At the end of the run: a non-finite loss no watched step explained.
    fn end(&self) -> Option<Found> {
        self.loss_at.map(Self::loss)
    }

    fn loss(step: u64) -> Found {
        Found {
            name: keys::LOSS.to_owned(),
            watch: None,
            step,
            nans: 0.0,
            infs: 0.0,
        }
    }
}

impl Found {
    fn give(&self, giver: &Giver, quiet: bool) {
        let mut event = Event::builder()
            .field(keys::NONFINITE, self.name.as_str())
            .field(keys::GLOBAL_STEP, self.step);
        if let Some(watch) = &self.watch {
            event = event
                .field(keys::WATCH, watch.as_str())
                .field(keys::NANS, self.nans)
                .field(keys::INFS, self.infs);
        }
        giver.give(event.build());
        if !quiet {
            let what = match &self.watch {
                Some(watch) => format!(
                    "{} {watch} ({} NaN, {} infinite)",
                    self.name, self.nans, self.infs
                ),
                None => "the loss".to_owned(),
            };
            eprintln!(
                "giving: non-finite values in {what} at step {}: stopping",
                self.step
            );
        }
    }
}

impl Instrument for StopOnNonFinite {
    fn name(&self) -> &str {
        "stop-on-nonfinite"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        let stop = start.given().stop_token();
        let quiet = self.quiet;
        start.derive(move |events, giver| async move {
            let mut events = events.paced(crate::SINK_PACE);
            let mut search = Search::default();
            while let Some(event) = events.next_ref().await {
                if let Some(found) = search.observe(event) {
                    found.give(&giver, quiet);
                    stop.stop();
                    return;
                }
            }
            if let Some(found) = search.end() {
                found.give(&giver, quiet);
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loss(step: u64, loss: f64) -> Event {
        Event::builder()
            .field(keys::GLOBAL_STEP, step)
            .field(keys::LOSS, loss)
            .build()
    }

    fn watched(step: u64, param: &str, what: &str, nans: f64) -> Event {
        Event::builder()
            .field(keys::GLOBAL_STEP, step)
            .field(keys::PARAM, param)
            .field(keys::WATCH, what)
            .field(keys::NANS, nans)
            .field(keys::INFS, 0.0)
            .build()
    }

    fn first(events: &[Event]) -> Option<Found> {
        let mut search = Search::default();
        events
            .iter()
            .find_map(|e| search.observe(e))
            .or_else(|| search.end())
    }

    #[test]
    fn the_first_non_finite_parameter_of_the_watched_step_is_named() {
        let events = [
            loss(0, 1.0),
            watched(0, "fc1.weight", "weight", 0.0),
            watched(0, "fc1.weight", "grad", 0.0),
            loss(1, f64::NAN), // not watched: wait for step 2
            loss(2, f64::NAN),
            watched(2, "fc1.weight", "weight", 0.0),
            watched(2, "fc1.weight", "grad", 0.0),
            watched(2, "fc2.weight", "weight", 0.0),
            watched(2, "fc2.weight", "grad", 3.0),
            watched(2, "fc3.weight", "weight", 9.0),
        ];
        let found = first(&events).unwrap();
        assert_eq!(
            (
                found.name.as_str(),
                found.watch.as_deref(),
                found.step,
                found.nans
            ),
            ("fc2.weight", Some("grad"), 2, 3.0)
        );
    }

    #[test]
    fn the_loss_is_named_when_no_watched_parameter_is_non_finite() {
        let events = [
            watched(0, "fc1.weight", "weight", 0.0),
            loss(1, f64::INFINITY),
            watched(2, "fc1.weight", "weight", 0.0),
            watched(2, "fc1.weight", "grad", 0.0),
            loss(3, f64::INFINITY),
        ];
        let found = first(&events).unwrap();
        assert_eq!((found.name.as_str(), found.step), ("loss", 1));
        // Without a watch, the loss is named at once; with one but no later watched step,
        // at the end.
        assert_eq!(first(&[loss(0, 1.0), loss(1, f64::NAN)]).unwrap().step, 1);
        let unexplained = [watched(0, "w", "weight", 0.0), loss(1, f64::NAN)];
        assert_eq!(first(&unexplained).unwrap().name, "loss");
        assert_eq!(first(&[loss(0, 1.0), watched(0, "w", "grad", 0.0)]), None);
    }
}
