//! [`InstrumentError`]: what can go wrong in an instrument, typed; [`PanicPayload`]: a caught
//! panic, message and payload kept.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::log::LogError;

/// Any error, for user instruments and samplers that wrap their own.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An error of an instrument: reported by the [`Overseer`](crate::Overseer) as a
/// [`Problem`](crate::Problem), never fatal to training.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstrumentError {
    /// The MessagePack log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// An option's value cannot be used (`--log`, `--gpu-poll`, …).
    #[error("{option}: {message}")]
    Option {
        /// The option, as written on the command line.
        option: &'static str,
        /// What is wrong with its value.
        message: String,
    },
    /// A sink or monitor thread could not be started.
    #[error("cannot start the `{thread}` thread: {source}")]
    Thread {
        /// The thread's name.
        thread: String,
        /// The system's error.
        source: std::io::Error,
    },
    /// A sink thread panicked.
    #[error("the `{thread}` thread panicked: {message}")]
    Panicked {
        /// The thread's name.
        thread: String,
        /// The panic message.
        message: String,
        /// The panic itself.
        payload: PanicPayload,
    },
    /// A sink thread was joined twice.
    #[error("the `{thread}` thread was already joined")]
    Joined {
        /// The thread's name.
        thread: String,
    },
    /// A monitor's sampler failed; the monitor stopped.
    #[error("{monitor} monitor stopped: {source}")]
    Sampler {
        /// The monitor's name.
        monitor: String,
        /// The sampler's error.
        source: BoxError,
    },
    /// The terminal could not be used by the dashboard.
    #[error("dashboard: {0}")]
    Terminal(std::io::Error),
    /// A probe could not be opened.
    #[error(transparent)]
    Probe(#[from] giving::ProbeError),
    /// Any other error (user instruments).
    #[error(transparent)]
    Other(BoxError),
}

impl InstrumentError {
    /// Wraps any error (for instruments written outside this crate).
    pub fn other(error: impl Into<BoxError>) -> Self {
        InstrumentError::Other(error.into())
    }
}

/// A caught panic: its message, and the payload itself for whoever wants to re-raise it.
/// Clones share the payload.
#[derive(Clone)]
pub struct PanicPayload {
    message: String,
    payload: Arc<Mutex<Option<Box<dyn Any + Send>>>>,
}

impl PanicPayload {
    /// Keeps `payload` (what `catch_unwind` or `JoinHandle::join` returned).
    pub fn new(payload: Box<dyn Any + Send>) -> Self {
        Self {
            message: giving::panic_message(payload.as_ref()),
            payload: Arc::new(Mutex::new(Some(payload))),
        }
    }

    /// The panic message (`(no message)` when the payload is not a string).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Takes the payload (once; `None` afterwards), e.g. to `std::panic::resume_unwind` it.
    pub fn take(&self) -> Option<Box<dyn Any + Send>> {
        self.payload
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

impl PartialEq for PanicPayload {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message
    }
}

impl Eq for PanicPayload {}

/// The panic message, as `panic!` was given it.
impl fmt::Display for PanicPayload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PanicPayload {}

impl fmt::Debug for PanicPayload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PanicPayload")
            .field("message", &self.message)
            .finish_non_exhaustive()
    }
}
