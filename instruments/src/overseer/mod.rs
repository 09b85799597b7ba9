//! [`Overseer`]: runs a training function with instruments attached, in phases, as `voir` does.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use giving::{FinishError, Given};

mod instrument;
mod outcome;
mod problem;
mod signals;
mod spawned;

pub use instrument::{Instrument, Start};
pub use outcome::Outcome;
pub use problem::{Phase, Problem, Reporter, Run};
pub use spawned::Spawned;

/// The [`INSTRUMENT`](giving::vocab::keys::INSTRUMENT) of the `{problem, instrument}` event an
/// Overseer gives when the training function panicked (before the scope ends, so sinks such
/// as the MLflow run's status see it).
pub const TRAINING: &str = "training";

use crate::error::{InstrumentError, PanicPayload};
use instrument::{FnInstrument, Hooks};

struct Slot {
    instrument: Box<dyn Instrument>,
    active: bool,
}

/// Runs a training function with [`Instrument`]s attached, in [`Phase`]s:
///
/// 1. **init** — [`new`](Overseer::new), [`with`](Overseer::with): instruments are added
///    (built from command-line options by `InstrumentArgs`, feature `cli`);
/// 2. **start** — [`run`](Overseer::run) opens a scope (this thread's, or a global one) and
///    starts every instrument, in the order they were added;
/// 3. **run** — the training function runs in the scope; a panic in it is caught;
/// 4. **finish** — the scope ends (derived events drained first, so every sink gets the last
///    rate), every pipeline is awaited, every instrument flushes.
///
/// An instrument that fails or panics in any phase is reported ([`Problem`], printed to stderr
/// at once) and switched off; training goes on. Ctrl-C, SIGTERM and SIGHUP (on Unix) ask the
/// loop to stop through the scope's stop token and flush the sinks; a second one flushes and
/// exits with 128 + the signal (130 for Ctrl-C).
///
/// ```
/// use giving::iterate;
/// use giving_instruments::{EarlyStop, Overseer, Rate};
///
/// let run = Overseer::new()
///     .with(Rate::new().skip(0))
///     .with(EarlyStop::new(3))
///     .run(|| {
///         let mut steps = 0;
///         for _batch in iterate("train", 0..).batch_size(32).window(5) {
///             steps += 1; // forward, backward, optimizer step
///             std::thread::yield_now();
///         }
///         steps
///     });
/// assert_eq!(run.exit_code(), 0);
/// assert!(run.stopped);
/// assert!(*run.output.as_ref().unwrap() >= 15); // stopped after 3 rate windows of 5 steps
/// ```
pub struct Overseer {
    slots: Vec<Slot>,
    global: bool,
    ctrl_c: bool,
    /// Whether `GIVING_TRACE` may add a trace (libpvti's `PVTI_OPTIONS`).
    trace_env: bool,
    problems: problem::Problems,
}

impl Default for Overseer {
    fn default() -> Self {
        Self::new()
    }
}

impl Overseer {
    /// An overseer with no instrument (init phase).
    pub fn new() -> Self {
        Self {
            slots: Vec::new(),
            global: false,
            ctrl_c: true,
            trace_env: true,
            problems: problem::Problems::new(false),
        }
    }

    /// Adds an instrument; instruments start in the order they are added (a derivation sees
    /// the last outputs of those added before it).
    pub fn with(mut self, instrument: impl Instrument + 'static) -> Self {
        self.add(Box::new(instrument));
        self
    }

    /// Adds every instrument of a list (such as `InstrumentArgs::instruments`).
    pub fn with_all(mut self, instruments: impl IntoIterator<Item = Box<dyn Instrument>>) -> Self {
        for instrument in instruments {
            self.add(instrument);
        }
        self
    }

    /// Adds a boxed instrument.
    pub fn add(&mut self, instrument: Box<dyn Instrument>) -> &mut Self {
        self.slots.push(Slot {
            instrument,
            active: true,
        });
        self
    }

    /// Adds a function as an instrument: it is called at start (voir's `instrument_*`
    /// functions).
    ///
    /// ```
    /// use giving::prelude::*;
    /// use giving::give;
    /// use giving_instruments::Overseer;
    ///
    /// let run = Overseer::new()
    ///     .instrument_fn("print-loss", |start| {
    ///         let losses = start.given().stream().key::<f64>("loss");
    ///         start.spawn(losses.for_each(|loss| println!("loss: {loss}")));
    ///         Ok(())
    ///     })
    ///     .run(|| give!(loss = 0.5));
    /// assert!(run.problems.is_empty());
    /// ```
    pub fn instrument_fn<F>(self, name: &str, start: F) -> Self
    where
        F: FnMut(&mut Start<'_>) -> Result<(), InstrumentError> + Send + 'static,
    {
        self.with(FnInstrument {
            name: name.to_owned(),
            start,
        })
    }

    /// Receive the events of every thread (a global scope) instead of the calling thread's
    /// (and the threads it carries its scope to). Default: false.
    pub fn global(mut self, global: bool) -> Self {
        self.global = global;
        self
    }

    /// Handle Ctrl-C, SIGTERM and SIGHUP (Unix): stop the loop cleanly and flush the sinks.
    /// Default: true.
    pub fn ctrl_c(mut self, handle: bool) -> Self {
        self.ctrl_c = handle;
        self
    }

    /// Whether the run is traced when the environment asks for it
    /// ([`TRACE_ENV`](crate::timeline::TRACE_ENV), `GIVING_TRACE='{"enable": true,
    /// "directory": "traces"}'`): one trace file per run, named by time and pid, added after
    /// the other instruments. A variable that cannot be used is reported as a problem of the
    /// `trace` instrument; training goes on. Default: true.
    pub fn trace_env(mut self, follow: bool) -> Self {
        self.trace_env = follow;
        self
    }

    /// Do not print problems to stderr as they happen (they are still in [`Run::problems`]).
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.problems = problem::Problems::new(quiet);
        self
    }

    fn report(&mut self, problem: Problem) {
        self.problems.report(problem);
    }

    /// Runs one phase of one active instrument, catching errors and panics; a failing
    /// instrument is switched off.
    fn phase(
        &mut self,
        index: usize,
        phase: Phase,
        call: impl FnOnce(&mut dyn Instrument) -> Result<(), InstrumentError>,
    ) {
        let slot = &mut self.slots[index];
        if !slot.active {
            return;
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| call(slot.instrument.as_mut())));
        let name = slot.instrument.name().to_owned();
        let problem = match outcome {
            Ok(Ok(())) => return,
            Ok(Err(error)) => Problem::from_error(name, phase, error),
            Err(payload) => {
                let payload = PanicPayload::new(payload);
                Problem::new(name, phase, format!("panicked: {}", payload.message()))
                    .with_panic(payload)
            }
        };
        slot.active = false;
        self.report(problem);
    }

    /// Start, run and finish phases: opens the scope, starts the instruments, runs `train` in
    /// the scope, then ends the scope, waits for every pipeline and finishes every instrument.
    ///
    /// Call it from sync code (a `main`, a test), not from inside an async task: finishing
    /// blocks until the pipelines are done.
    pub fn run<T>(self, train: impl FnOnce() -> T) -> Run<T> {
        self.run_with(|_| train())
    }

    /// [`run`](Overseer::run), handing `train` the run's scope: a pipeline the training code
    /// spawns there sees every event the instruments see (their rates, a stop's progress),
    /// where a [`given`](giving::given) opened inside `train` would hear only this thread.
    /// Return its handle from `train` and join it once `run_with` has returned (the scope has
    /// ended then, so its streams are complete); joining inside `train` would wait forever.
    ///
    /// ```
    /// use giving::prelude::*;
    /// use giving::{give, iterate};
    /// use giving_instruments::{Overseer, Rate};
    ///
    /// let run = Overseer::new().with(Rate::new().skip(0)).run_with(|gv| {
    ///     let rates = gv.spawn(gv.stream().key::<f64>("rate").count());
    ///     for _ in iterate("train", 0..40).batch_size(8).window(10) {
    ///         give!(loss = 0.5);
    ///     }
    ///     rates
    /// });
    /// let rates = run.output.unwrap().join().unwrap();
    /// assert_eq!(rates, 4); // one per window of 10 steps, given by the Rate instrument
    /// ```
    pub fn run_with<T>(mut self, train: impl FnOnce(&Given) -> T) -> Run<T> {
        // A suite's child streams its events to the runner (`DATA_FD`, docs/protocol.md).
        for child in crate::child::from_env() {
            match child {
                Ok(instrument) => {
                    self.add(instrument);
                }
                Err(error) => self.report(Problem::from_error("suite-child", Phase::Start, error)),
            }
        }
        let gv = if self.global {
            Given::global()
        } else {
            giving::given()
        };
        if self.trace_env {
            match crate::timeline::Trace::from_env() {
                Ok(Some(trace)) => {
                    self.add(Box::new(trace));
                }
                Ok(None) => {}
                Err(error) => self.report(Problem::from_error("trace", Phase::Start, error)),
            }
        }
        let mut hooks = self.start_all(&gv);
        let interrupts = self.watch_interrupts(&gv, std::mem::take(&mut hooks.flushers));
        let output = catch_unwind(AssertUnwindSafe(|| train(&gv))).map_err(PanicPayload::new);
        if let Err(panic) = &output {
            let message = panic.message();
            gv.giver().give(
                giving::Event::builder()
                    .field(
                        giving::vocab::keys::PROBLEM,
                        format!("training panicked: {message}"),
                    )
                    .field(giving::vocab::keys::INSTRUMENT, TRAINING)
                    .build(),
            );
        }
        let signal = interrupts.and_then(signals::Interrupts::uninstall);
        let stopped = gv.stop_token().is_stopped();
        self.finish_all(gv, hooks);
        Run {
            output,
            problems: self.problems.take(),
            stopped,
            interrupted: signal.is_some(),
            signal,
        }
    }

    /// Start phase: every instrument, in order.
    fn start_all(&mut self, gv: &Given) -> Hooks {
        let mut hooks = Hooks::default();
        let problems = self.problems.clone();
        for index in 0..self.slots.len() {
            self.phase(index, Phase::Start, |instrument| {
                let name = instrument.name().to_owned();
                instrument.start(&mut Start {
                    gv,
                    name: &name,
                    hooks: &mut hooks,
                    problems: &problems,
                })
            });
        }
        hooks
    }

    fn watch_interrupts(
        &mut self,
        gv: &Given,
        flushers: Vec<signals::Flusher>,
    ) -> Option<signals::Interrupts> {
        if !self.ctrl_c {
            return None;
        }
        match signals::Interrupts::install(gv.stop_token(), flushers) {
            Ok(interrupts) => Some(interrupts),
            Err(error) => {
                self.report(Problem::from_error("ctrl-c", Phase::Start, error));
                None
            }
        }
    }

    /// Finish phase: stop the timers, end the scope (derivations drain first), report every
    /// failed pipeline under its instrument's name, then let the instruments flush.
    fn finish_all(&mut self, gv: Given, hooks: Hooks) {
        for close in hooks.on_close {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(close)) {
                let panic = PanicPayload::new(panic);
                let message = format!("panicked on close: {}", panic.message());
                self.report(Problem::new("(on close)", Phase::Finish, message).with_panic(panic));
            }
        }
        let finished = gv.finish();
        let mut attributed = 0;
        for tracked in hooks.pipelines {
            let problem = match (tracked.join)() {
                Ok(None) => continue,
                Ok(Some(failure)) => Problem::new(tracked.instrument, Phase::Run, failure),
                Err(error) => {
                    attributed += 1;
                    Problem::from_error(tracked.instrument, Phase::Run, error)
                }
            };
            self.report(problem);
        }
        match finished {
            Ok(()) => {}
            Err(FinishError::Failed(failed)) if failed.len() > attributed => {
                let others: Vec<String> = failed.iter().map(ToString::to_string).collect();
                self.report(Problem::new("(pipelines)", Phase::Run, others.join("; ")));
            }
            Err(FinishError::Failed(_)) => {}
            Err(error) => self.report(Problem::from_error("(scope)", Phase::Finish, error)),
        }
        for index in 0..self.slots.len() {
            self.phase(index, Phase::Finish, |instrument| instrument.finish());
        }
    }
}

impl fmt::Debug for Overseer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.slots.iter().map(|s| s.instrument.name()).collect();
        f.debug_struct("Overseer")
            .field("instruments", &names)
            .field("global", &self.global)
            .finish_non_exhaustive()
    }
}
