//! [`Overseer`]: runs a training function with instruments attached, in phases, as `voir` does.

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};

use giving::{FinishError, Given, Pipeline, PipelineError};

mod signals;

/// The error type instruments return: anything that can be shown.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The phases of a run, in order (voir's `init`, `parse_args`, `load_script`/`run_script`,
/// `finalize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Instruments add their command-line options ([`Instrument::add_args`]).
    Init,
    /// Options are parsed ([`Instrument::parse_args`]).
    Args,
    /// The scope is open; instruments subscribe and spawn pipelines ([`Instrument::start`]).
    Start,
    /// The training function runs; instruments' pipelines run beside it.
    Run,
    /// The scope has ended and every pipeline finished; sinks are flushed
    /// ([`Instrument::finish`]).
    Finish,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Init => "init",
            Phase::Args => "args",
            Phase::Start => "start",
            Phase::Run => "run",
            Phase::Finish => "finish",
        })
    }
}

/// An instrument that failed (returned an error or panicked): it is reported and switched off,
/// and training goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The instrument's [`name`](Instrument::name).
    pub instrument: String,
    /// When it failed.
    pub phase: Phase,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "instrument `{}` failed during {}: {}",
            self.instrument, self.phase, self.message
        )
    }
}

/// Something attached to a training run by an [`Overseer`]: it may add command-line options,
/// subscribes to the run's scope at start, and flushes at finish. Only
/// [`name`](Instrument::name) and [`start`](Instrument::start) are required.
///
/// ```
/// use giving::prelude::*;
/// use giving::give;
/// use giving_instruments::{BoxError, Instrument, Overseer, Start};
/// use std::sync::{Arc, Mutex};
///
/// /// Keeps the smallest loss.
/// struct BestLoss(Arc<Mutex<Option<f64>>>);
///
/// impl Instrument for BestLoss {
///     fn name(&self) -> &str {
///         "best-loss"
///     }
///     fn start(&mut self, start: &mut Start<'_>) -> Result<(), BoxError> {
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
    /// A short name, used in option help and problem reports.
    fn name(&self) -> &str;

    /// Init phase: adds this instrument's options to the command line.
    fn add_args(&self, command: clap::Command) -> clap::Command {
        command
    }

    /// Args phase: reads this instrument's options.
    fn parse_args(&mut self, matches: &clap::ArgMatches) -> Result<(), BoxError> {
        let _ = matches;
        Ok(())
    }

    /// Start phase: subscribe to the run's scope and spawn pipelines (see [`Start`]).
    fn start(&mut self, start: &mut Start<'_>) -> Result<(), BoxError>;

    /// Finish phase, after the scope ended and every pipeline finished: flush and close sinks.
    fn finish(&mut self) -> Result<(), BoxError> {
        Ok(())
    }
}

type Join = Box<dyn FnOnce() -> Result<(), PipelineError> + Send>;

/// What an instrument gets at start: the run's scope, and a place for its pipelines and its
/// Ctrl-C flush.
pub struct Start<'a> {
    gv: &'a Given,
    training: &'a Given,
    name: &'a str,
    pipelines: &'a mut Vec<(String, Join)>,
    flushers: &'a mut Vec<signals::Flusher>,
    on_close: &'a mut Vec<Box<dyn FnOnce() + Send>>,
}

impl Start<'_> {
    /// The run's scope: subscribe with `stream()`, give with `giver()`, stop the loop with
    /// `stop_token()`.
    pub fn given(&self) -> &Given {
        self.gv
    }

    /// The training loop's own scope, nested in [`given`](Start::given): it receives the same
    /// events from the loop but ends as soon as training returns, *before* the run's scope.
    /// An instrument that derives events from the loop's (such as [`Rate`](crate::Rate))
    /// subscribes and spawns here and gives into [`given`](Start::given): its last events are
    /// given while the run's scope is still open, so every sink receives them.
    pub fn training(&self) -> &Given {
        self.training
    }

    /// Runs a pipeline on the scope; if it panics, the report names this instrument.
    pub fn spawn<F>(&mut self, pipeline: F)
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let pipeline = self.gv.spawn(pipeline);
        self.track(pipeline);
    }

    /// Adds a pipeline spawned elsewhere on this scope to this instrument's report.
    pub fn track<T: Send + 'static>(&mut self, pipeline: Pipeline<T>) {
        self.pipelines.push((
            self.name.to_owned(),
            Box::new(move || pipeline.join().map(drop)),
        ));
    }

    /// Registers a function that writes buffered data out, called when the run is
    /// interrupted (Ctrl-C).
    pub fn on_interrupt(&mut self, flush: impl Fn() + Send + Sync + 'static) {
        self.flushers.push(std::sync::Arc::new(flush));
    }

    /// Registers a function called when training has returned, just before the scope ends
    /// (for pipelines that do not end by themselves when their streams do, such as monitors
    /// that poll on a timer).
    pub fn on_close(&mut self, close: impl FnOnce() + Send + 'static) {
        self.on_close.push(Box::new(close));
    }
}

impl fmt::Debug for Start<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Start")
            .field("instrument", &self.name)
            .finish()
    }
}

/// The outcome of [`Overseer::run`].
#[derive(Debug)]
#[must_use = "check the outcome: the training function may have panicked"]
pub struct Run<T> {
    /// What the training function returned, or its panic message.
    pub output: Result<T, String>,
    /// Every instrument failure, in the order they happened.
    pub problems: Vec<Problem>,
    /// Whether the loop was asked to stop (early stop, Ctrl-C).
    pub stopped: bool,
    /// Whether the run was interrupted by Ctrl-C.
    pub interrupted: bool,
}

impl<T> Run<T> {
    /// The process exit code this outcome calls for: 0 when training returned (also after an
    /// early stop), 130 after Ctrl-C, 101 (Rust's panic code) when training panicked.
    /// Instrument problems do not change it: they are reported.
    pub fn exit_code(&self) -> i32 {
        match (&self.output, self.interrupted) {
            (Err(_), _) => 101,
            (Ok(_), true) => 130,
            (Ok(_), false) => 0,
        }
    }
}

/// A function used as an instrument: see [`Overseer::instrument_fn`].
struct FnInstrument<F> {
    name: String,
    start: F,
}

impl<F> Instrument for FnInstrument<F>
where
    F: FnMut(&mut Start<'_>) -> Result<(), BoxError> + Send,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), BoxError> {
        (self.start)(start)
    }
}

struct Slot {
    instrument: Box<dyn Instrument>,
    active: bool,
}

/// Runs a training function with [`Instrument`]s attached, in [`Phase`]s:
///
/// 1. **init** — [`new`](Overseer::new), [`with`](Overseer::with): instruments are added and
///    may add command-line options ([`command`](Overseer::command));
/// 2. **args** — [`parse_args`](Overseer::parse_args): they read them;
/// 3. **start** — [`run`](Overseer::run) opens a scope (this thread's, or a global one) and
///    starts every instrument;
/// 4. **run** — the training function runs in the scope; a panic in it is caught;
/// 5. **finish** — the scope ends, every pipeline is awaited, every instrument flushes.
///
/// An instrument that fails or panics in any phase is reported ([`Problem`], printed to stderr
/// at once) and switched off; training goes on. Ctrl-C (on Unix) asks the loop to stop
/// through the scope's stop token and flushes the sinks; a second Ctrl-C flushes and exits
/// with code 130.
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
    quiet: bool,
    problems: Vec<Problem>,
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
            quiet: false,
            problems: Vec::new(),
        }
    }

    /// Adds an instrument.
    pub fn with(mut self, instrument: impl Instrument + 'static) -> Self {
        self.add(Box::new(instrument));
        self
    }

    /// Adds every instrument of a list (such as [`InstrumentArgs::instruments`](crate::InstrumentArgs::instruments)).
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
        F: FnMut(&mut Start<'_>) -> Result<(), BoxError> + Send + 'static,
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

    /// Handle Ctrl-C (Unix): stop the loop cleanly and flush the sinks. Default: true.
    pub fn ctrl_c(mut self, handle: bool) -> Self {
        self.ctrl_c = handle;
        self
    }

    /// Do not print problems to stderr as they happen (they are still in [`Run::problems`]).
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    fn report(&mut self, instrument: &str, phase: Phase, message: String) {
        let problem = Problem {
            instrument: instrument.to_owned(),
            phase,
            message,
        };
        if !self.quiet {
            eprintln!("giving: {problem}");
        }
        self.problems.push(problem);
    }

    /// Init phase: `command` with every instrument's options added.
    pub fn command(&self, command: clap::Command) -> clap::Command {
        self.slots
            .iter()
            .fold(command, |command, slot| slot.instrument.add_args(command))
    }

    /// Args phase: every instrument reads its options from `matches` (parsed with
    /// [`command`](Overseer::command)). An instrument that fails is reported and switched off.
    pub fn parse_args(&mut self, matches: &clap::ArgMatches) -> &mut Self {
        for index in 0..self.slots.len() {
            self.phase(index, Phase::Args, |instrument| {
                instrument.parse_args(matches)
            });
        }
        self
    }

    /// Init and args phases from a command line: builds a command named after `argv[0]` with
    /// the instruments' options, parses `argv` and hands the matches to the instruments.
    ///
    /// ```
    /// use giving_instruments::{EarlyStop, Overseer};
    ///
    /// let ov = Overseer::new().with(EarlyStop::new(60)).parse_from(["train", "--stop", "5"]);
    /// assert!(ov.is_ok());
    /// let error = Overseer::new().with(EarlyStop::new(60)).parse_from(["train", "--stop", "x"]);
    /// assert!(error.unwrap_err().to_string().contains("--stop"));
    /// ```
    pub fn parse_from<I, S>(mut self, argv: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = S>,
        S: Into<std::ffi::OsString> + Clone,
    {
        let matches = self
            .command(clap::Command::new("train").no_binary_name(false))
            .try_get_matches_from(argv)?;
        self.parse_args(&matches);
        Ok(self)
    }

    /// Runs one phase of one active instrument, catching errors and panics.
    fn phase<R>(
        &mut self,
        index: usize,
        phase: Phase,
        call: impl FnOnce(&mut dyn Instrument) -> Result<R, BoxError>,
    ) -> Option<R> {
        let slot = &mut self.slots[index];
        if !slot.active {
            return None;
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| call(slot.instrument.as_mut())));
        let message = match outcome {
            Ok(Ok(value)) => return Some(value),
            Ok(Err(error)) => error.to_string(),
            Err(panic) => format!("panicked: {}", panic_text(panic.as_ref())),
        };
        slot.active = false;
        let name = slot.instrument.name().to_owned();
        self.report(&name, phase, message);
        None
    }

    /// Start, run and finish phases: opens the scope, starts the instruments, runs `train` in
    /// the scope, then ends the scope, waits for every pipeline and finishes every instrument.
    ///
    /// Call it from sync code (a `main`, a test), not from inside an async task: finishing
    /// blocks until the pipelines are done.
    pub fn run<T>(mut self, train: impl FnOnce() -> T) -> Run<T> {
        let open = || {
            if self.global {
                Given::global()
            } else {
                giving::given()
            }
        };
        // The run's scope, and nested in it the training loop's, which ends first (see
        // `Start::training`).
        let gv = open();
        let training = open();
        let mut pipelines = Vec::new();
        let mut flushers = Vec::new();
        let mut on_close = Vec::new();
        for index in 0..self.slots.len() {
            self.phase(index, Phase::Start, |instrument| {
                let name = instrument.name().to_owned();
                instrument.start(&mut Start {
                    gv: &gv,
                    training: &training,
                    name: &name,
                    pipelines: &mut pipelines,
                    flushers: &mut flushers,
                    on_close: &mut on_close,
                })
            });
        }

        let interrupts = if self.ctrl_c {
            match signals::Interrupts::install(gv.stop_token(), flushers) {
                Ok(interrupts) => Some(interrupts),
                Err(error) => {
                    self.report("ctrl-c", Phase::Start, error.to_string());
                    None
                }
            }
        } else {
            None
        };

        let output =
            catch_unwind(AssertUnwindSafe(train)).map_err(|panic| panic_text(panic.as_ref()));
        let interrupted = interrupts.is_some_and(|i| i.uninstall());
        let stopped = gv.stop_token().is_stopped();

        // Finish: end the scope, wait for the pipelines, then let instruments flush.
        for close in on_close {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(close)) {
                let message = format!("panicked on close: {}", panic_text(panic.as_ref()));
                self.report("(on close)", Phase::Finish, message);
            }
        }
        let finished_training = training.finish();
        let finished = gv.finish();
        let mut attributed = 0;
        for (name, join) in pipelines {
            if let Err(error) = join() {
                attributed += 1;
                self.report(&name, Phase::Run, error.to_string());
            }
        }
        let mut failures = Vec::new();
        for finished in [finished_training, finished] {
            match finished {
                Ok(()) => {}
                Err(FinishError::Failed(failed)) => failures.extend(failed),
                Err(error) => self.report("(scope)", Phase::Finish, error.to_string()),
            }
        }
        if failures.len() > attributed {
            let others: Vec<String> = failures.iter().map(ToString::to_string).collect();
            self.report("(pipelines)", Phase::Run, others.join("; "));
        }
        for index in 0..self.slots.len() {
            self.phase(index, Phase::Finish, |instrument| instrument.finish());
        }
        Run {
            output,
            problems: self.problems,
            stopped,
            interrupted,
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

pub(crate) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}
