//! The [`Instrument`] trait and [`Start`], what an instrument gets when the run starts.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, PoisonError};

use giving::{EventStream, Given, Giver, Pipeline, PipelineError};

use super::outcome::Outcome;
use super::spawned::{Ending, Spawned, recording};

use super::problem::{Problems, Reporter};
use super::signals::Flusher;
use crate::error::InstrumentError;

/// Something attached to a training run by an [`Overseer`](crate::Overseer): it subscribes to
/// the run's scope at start and flushes at finish. Only [`name`](Instrument::name) and
/// [`start`](Instrument::start) are required. This is the one way to attach an instrument:
/// [`Overseer::with`](crate::Overseer::with) (or
/// [`instrument_fn`](crate::Overseer::instrument_fn) for a closure). Command-line options are
/// not the instrument's business: `InstrumentArgs` (feature `cli`) builds instruments from
/// them.
///
/// ```
/// use giving::prelude::*;
/// use giving::give;
/// use giving_instruments::{Instrument, InstrumentError, Overseer, Start};
/// use std::sync::{Arc, Mutex};
///
/// /// Keeps the smallest loss.
/// struct BestLoss(Arc<Mutex<Option<f64>>>);
///
/// impl Instrument for BestLoss {
///     fn name(&self) -> &str {
///         "best-loss"
///     }
///     fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
///         let best = self.0.clone();
///         let losses = start.given().stream().key::<f64>("loss");
///         start.spawn(async move { *best.lock().unwrap() = losses.min().await });
///         Ok(())
///     }
/// }
///
/// let best = Arc::new(Mutex::new(None));
/// let run = Overseer::new().with(BestLoss(best.clone())).run(|| {
///     for loss in [0.5, 0.2, 0.4] {
///         give!(loss);
///     }
/// });
/// assert_eq!(run.exit_code(), 0);
/// assert_eq!(*best.lock().unwrap(), Some(0.2));
/// ```
pub trait Instrument: Send {
    /// A short name, used in problem reports.
    fn name(&self) -> &str;

    /// Start phase: subscribe to the run's scope and spawn pipelines (see [`Start`]).
    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError>;

    /// Finish phase, after the scope ended and every pipeline finished: flush and close sinks.
    fn finish(&mut self) -> Result<(), InstrumentError> {
        Ok(())
    }
}

/// A tracked pipeline: whose it is, and how to learn how it ended.
pub(crate) struct Tracked {
    pub(crate) instrument: String,
    pub(crate) join: Box<dyn FnOnce() -> Result<Option<String>, PipelineError> + Send>,
}

/// What the instruments register while they start.
#[derive(Default)]
pub(crate) struct Hooks {
    pub(crate) pipelines: Vec<Tracked>,
    pub(crate) flushers: Vec<Flusher>,
    pub(crate) on_close: Vec<Box<dyn FnOnce() + Send>>,
}

/// What an instrument gets at start: the run's scope, and a place for its pipelines and its
/// Ctrl-C flush.
pub struct Start<'a> {
    pub(crate) gv: &'a Given,
    pub(crate) name: &'a str,
    pub(crate) hooks: &'a mut Hooks,
    pub(crate) problems: &'a Problems,
}

impl Start<'_> {
    /// The run's scope: subscribe with `stream()`, stop the loop with `stop_token()`.
    pub fn given(&self) -> &Given {
        self.gv
    }

    /// Runs a sink pipeline on the run's scope; its failure (an `Err` output or a panic) is
    /// reported under this instrument's name, and the returned handle gives its output once
    /// the run has finished (keep it or drop it).
    pub fn spawn<F>(&mut self, pipeline: F) -> Spawned<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Outcome,
    {
        let ending = Ending::default();
        let pipeline = self.gv.spawn(recording(pipeline, ending.clone()));
        self.track_ending(pipeline.index(), ending);
        Spawned::new(pipeline)
    }

    /// Runs a pipeline that derives events from the run's and gives them back into it (a
    /// rate, a stop's progress): see [`Given::derive`]. Every sink receives its last outputs,
    /// and it sees the last outputs of the instruments started before it.
    ///
    /// ```
    /// use giving::prelude::*;
    /// use giving::{Event, give};
    /// use giving_instruments::Overseer;
    /// use std::sync::{Arc, Mutex};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = seen.clone();
    /// let run = Overseer::new()
    ///     .instrument_fn("count", |start| {
    ///         start.derive(|events, giver| async move {
    ///             let n = events.where_(["loss"]).count().await;
    ///             giver.give(Event::builder().field("losses", n).build());
    ///         });
    ///         Ok(())
    ///     })
    ///     .instrument_fn("sink", move |start| {
    ///         let counts = start.given().stream().key::<u64>("losses");
    ///         let sink = sink.clone();
    ///         start.spawn(counts.for_each(move |n| sink.lock().unwrap().push(n)));
    ///         Ok(())
    ///     })
    ///     .run(|| for loss in [0.3, 0.2] { give!(loss) });
    /// assert!(run.problems.is_empty());
    /// assert_eq!(*seen.lock().unwrap(), vec![2]); // given after training ended, still received
    /// ```
    pub fn derive<D, F>(&mut self, derive: D) -> Spawned<F::Output>
    where
        D: FnOnce(EventStream, Giver) -> F,
        F: Future + Send + 'static,
        F::Output: Outcome,
    {
        let ending = Ending::default();
        let pipeline = self
            .gv
            .derive(|events, giver| recording(derive(events, giver), ending.clone()));
        self.track_ending(pipeline.index(), ending);
        Spawned::new(pipeline)
    }

    /// Reports how the pipeline `index` ended, from what [`recording`] wrote.
    fn track_ending(&mut self, index: usize, ending: Ending) {
        self.hooks.pipelines.push(Tracked {
            instrument: self.name.to_owned(),
            join: Box::new(move || {
                match ending.lock().unwrap_or_else(PoisonError::into_inner).take() {
                    Some(Ok(failure)) => Ok(failure),
                    Some(Err(message)) => Err(PipelineError::Panicked { index, message }),
                    None => Err(PipelineError::Cancelled { index }),
                }
            }),
        });
    }

    /// Adds a pipeline spawned elsewhere on this scope to this instrument's report.
    pub fn track<T: Outcome>(&mut self, pipeline: Pipeline<T>) {
        self.hooks.pipelines.push(Tracked {
            instrument: self.name.to_owned(),
            join: Box::new(move || pipeline.join().map(|output| output.failure())),
        });
    }

    /// A [`Reporter`] for failures that happen while the run goes on (a sink thread whose
    /// writes fail): reported at once, not only at finish.
    pub fn reporter(&self) -> Reporter {
        Reporter::new(self.name, self.problems.clone(), self.gv.giver())
    }

    /// Registers a function that writes buffered data out, called when the run is
    /// interrupted (Ctrl-C, SIGTERM, SIGHUP).
    pub fn on_interrupt(&mut self, flush: impl Fn() + Send + Sync + 'static) {
        self.hooks.flushers.push(Arc::new(flush));
    }

    /// Registers a function called when training has returned, just before the scope ends
    /// (for pipelines that do not end by themselves when their streams do, such as monitors
    /// that poll on a timer).
    pub fn on_close(&mut self, close: impl FnOnce() + Send + 'static) {
        self.hooks.on_close.push(Box::new(close));
    }
}

impl fmt::Debug for Start<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Start")
            .field("instrument", &self.name)
            .finish()
    }
}

/// A function used as an instrument: see [`Overseer::instrument_fn`](crate::Overseer::instrument_fn).
pub(crate) struct FnInstrument<F> {
    pub(crate) name: String,
    pub(crate) start: F,
}

impl<F> Instrument for FnInstrument<F>
where
    F: FnMut(&mut Start<'_>) -> Result<(), InstrumentError> + Send,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        (self.start)(start)
    }
}
