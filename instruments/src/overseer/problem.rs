//! What a run reports: its [`Phase`]s, the [`Problem`]s of failing instruments, and the
//! [`Run`] outcome.

use std::fmt;

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The instrument's [`name`](crate::Instrument::name).
    pub instrument: String,
    /// When it failed.
    pub phase: Phase,
    /// What went wrong.
    pub message: String,
    /// The panic, when it panicked (payload kept).
    pub panic: Option<PanicPayload>,
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

/// The outcome of [`Overseer::run`](crate::Overseer::run).
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
