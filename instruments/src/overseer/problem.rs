//! What a run reports: its [`Phase`]s, the [`Problem`]s of failing instruments, and the
//! [`Run`] outcome.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use giving::Giver;
use giving::vocab::keys;

use crate::error::PanicPayload;

/// The phases of a run, in order (voir's `init`/`parse_args` happen before, when the
/// instruments are built — from options with `InstrumentArgs` — and added with
/// [`Overseer::with`](crate::Overseer::with); then `load_script`/`run_script`, `finalize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// The scope is open; instruments subscribe and spawn pipelines
    /// ([`Instrument::start`](crate::Instrument::start)).
    Start,
    /// The training function runs; instruments' pipelines run beside it.
    Run,
    /// The scope has ended and every pipeline finished; sinks are flushed
    /// ([`Instrument::finish`](crate::Instrument::finish)).
    Finish,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Start => "start",
            Phase::Run => "run",
            Phase::Finish => "finish",
        })
    }
}

/// An instrument that failed (returned an error or panicked): it is reported and switched off,
/// and training goes on.
///
/// It keeps what failed, typed: the instrument's [`error`](Self::error) (an
/// [`InstrumentError`](crate::InstrumentError) when the instrument returned one: downcast it,
/// or follow [`source`](std::error::Error::source)) or its [`panic`](Self::panic) payload;
/// [`message`](Self::message) is the text printed for it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Problem {
    /// The instrument's [`name`](crate::Instrument::name).
    pub instrument: String,
    /// When it failed.
    pub phase: Phase,
    /// What went wrong, as printed (`panicked: …` for a panic).
    pub message: String,
    /// The error the instrument (or the Overseer on its behalf) failed with, when there is a
    /// typed one; also the problem's [`source`](std::error::Error::source). Shared by the
    /// problem's clones.
    pub error: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
    /// The panic, when it panicked (payload kept).
    pub panic: Option<PanicPayload>,
}

impl Problem {
    /// A problem of `instrument` during `phase`, described by `message`.
    pub fn new(instrument: impl Into<String>, phase: Phase, message: impl Into<String>) -> Self {
        Self {
            instrument: instrument.into(),
            phase,
            message: message.into(),
            error: None,
            panic: None,
        }
    }

    /// The problem of an instrument that failed with `error`: its text is the message and the
    /// error itself is kept.
    pub fn from_error(
        instrument: impl Into<String>,
        phase: Phase,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        let message = error.to_string();
        Self {
            error: Some(Arc::new(error)),
            ..Self::new(instrument, phase, message)
        }
    }

    /// Keeps the panic that caused the problem.
    pub fn with_panic(mut self, panic: PanicPayload) -> Self {
        self.panic = Some(panic);
        self
    }
}

/// Problems are equal when they say the same (instrument, phase, message, panic message): an
/// error is compared by its text.
impl PartialEq for Problem {
    fn eq(&self, other: &Self) -> bool {
        self.instrument == other.instrument
            && self.phase == other.phase
            && self.message == other.message
            && self.panic == other.panic
    }
}

impl Eq for Problem {}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "instrument `{}` failed during {}: {}",
            self.instrument, self.phase, self.message
        )
    }
}

/// Its source is the error it failed with, or else its panic.
impl std::error::Error for Problem {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match (&self.error, &self.panic) {
            (Some(error), _) => Some(error.as_ref()),
            (None, Some(panic)) => Some(panic),
            (None, None) => None,
        }
    }
}

/// The outcome of [`Overseer::run`](crate::Overseer::run).
#[derive(Debug)]
#[must_use = "check the outcome: the training function may have panicked"]
pub struct Run<T> {
    /// What the training function returned, or its panic (message and payload: the payload
    /// can be re-raised with [`std::panic::resume_unwind`] after
    /// [`PanicPayload::take`]).
    pub output: Result<T, PanicPayload>,
    /// Every instrument failure, in the order they happened.
    pub problems: Vec<Problem>,
    /// Whether the loop was asked to stop (early stop, Ctrl-C).
    pub stopped: bool,
    /// Whether the run was interrupted by a signal (Ctrl-C, SIGTERM, SIGHUP).
    pub interrupted: bool,
    /// The signal that interrupted the run (2 for Ctrl-C, 15 for SIGTERM, 1 for SIGHUP).
    pub signal: Option<i32>,
}

impl<T> Run<T> {
    /// The process exit code this outcome calls for: 101 (Rust's panic code) when training
    /// panicked; 128 + the signal when a signal stopped it (130 for Ctrl-C, 143 for SIGTERM,
    /// 129 for SIGHUP), as shells report; 1 when training returned but an instrument failed
    /// (a log that stopped being written is not a success); 0 otherwise, also after an early
    /// stop.
    pub fn exit_code(&self) -> i32 {
        match (&self.output, self.signal) {
            (Err(_), _) => 101,
            (Ok(_), Some(signal)) => super::signals::exit_code(signal),
            (Ok(_), None) if !self.problems.is_empty() => 1,
            (Ok(_), None) => 0,
        }
    }
}

/// The problems of a run, shared by the Overseer and the [`Reporter`]s of its instruments.
#[derive(Clone, Default)]
pub(crate) struct Problems {
    list: Arc<Mutex<Vec<Problem>>>,
    quiet: bool,
}

impl Problems {
    pub(crate) fn new(quiet: bool) -> Self {
        Self {
            list: Arc::default(),
            quiet,
        }
    }

    /// Records a problem and prints it at once (unless quiet); a problem already reported
    /// (same instrument, same message: a sink that reported itself mid-run, then failed its
    /// finish with the same error) is not repeated.
    pub(crate) fn report(&self, problem: Problem) -> bool {
        let mut list = self.list.lock().unwrap_or_else(PoisonError::into_inner);
        let repeated = list
            .iter()
            .any(|p| p.instrument == problem.instrument && p.message == problem.message);
        if repeated {
            return false;
        }
        if !self.quiet {
            eprintln!("giving: {problem}");
        }
        list.push(problem);
        true
    }

    pub(crate) fn take(&self) -> Vec<Problem> {
        std::mem::take(&mut *self.list.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Reports an instrument's failure *as it happens* (a sink whose disk filled up mid-run):
/// printed on stderr at once, given into the run's scope as `{problem, instrument}` (so the
/// log and the dashboard show it), and kept in [`Run::problems`]. Training goes on. Get one
/// from [`Start::reporter`](crate::Start::reporter); cheap to clone, usable from any thread.
#[derive(Clone)]
pub struct Reporter {
    instrument: String,
    problems: Problems,
    giver: Giver,
}

impl Reporter {
    pub(crate) fn new(instrument: &str, problems: Problems, giver: Giver) -> Self {
        Self {
            instrument: instrument.to_owned(),
            problems,
            giver,
        }
    }

    /// Reports `error` now, once: the same message again is ignored.
    pub fn report(&self, error: &dyn fmt::Display) {
        let message = error.to_string();
        let problem = Problem::new(self.instrument.clone(), Phase::Run, message.clone());
        if self.problems.report(problem) {
            self.giver.give(
                giving::Event::builder()
                    .field(keys::PROBLEM, message)
                    .field(keys::INSTRUMENT, self.instrument.as_str())
                    .build(),
            );
        }
    }
}

impl fmt::Debug for Reporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reporter")
            .field("instrument", &self.instrument)
            .finish_non_exhaustive()
    }
}
