//! [`Spawned`]: an instrument's pipeline, reported under its name and joinable by its owner.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures::FutureExt;
use giving::{Pipeline, PipelineError, panic_message};

use super::outcome::Outcome;

/// How a tracked pipeline ended, as its instrument's report needs it: its failure message
/// (`Ok(None)` for a success), or its panic's message.
pub(crate) type Ending = Arc<Mutex<Option<Result<Option<String>, String>>>>;

/// A pipeline started by [`Start::spawn`](crate::Start::spawn) or
/// [`Start::derive`](crate::Start::derive): the Overseer reports its failure under the
/// instrument's name, and whoever keeps this handle can take its output once the run has
/// finished ([`join`](Spawned::join), or `.await`). Dropping it changes nothing.
///
/// ```
/// use giving::prelude::*;
/// use giving::give;
/// use giving_instruments::Overseer;
/// use std::sync::{Arc, Mutex};
///
/// let handle = Arc::new(Mutex::new(None));
/// let keep = handle.clone();
/// let run = Overseer::new()
///     .instrument_fn("best", move |start| {
///         let losses = start.given().stream().key::<f64>("loss");
///         *keep.lock().unwrap() = Some(start.spawn(losses.min()));
///         Ok(())
///     })
///     .run(|| for loss in [0.5, 0.2, 0.4] { give!(loss) });
/// assert!(run.problems.is_empty());
/// let best = handle.lock().unwrap().take().unwrap().join().unwrap();
/// assert_eq!(best, Some(0.2));
/// ```
pub struct Spawned<T> {
    pipeline: Pipeline<T>,
}

impl<T> Spawned<T> {
    /// Blocks until the pipeline has finished (the run's scope ended), and returns its
    /// output. Call it after [`Overseer::run`](crate::Overseer::run) returned: inside the
    /// run, the pipeline is still reading.
    pub fn join(self) -> Result<T, PipelineError> {
        self.pipeline.join()
    }
}

impl<T> Future for Spawned<T> {
    type Output = Result<T, PipelineError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.pipeline).poll(cx)
    }
}

impl<T> std::fmt::Debug for Spawned<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spawned")
            .field("pipeline", &self.pipeline)
            .finish()
    }
}

/// `pipeline`, writing how it ended into `ending` before its output goes on to its handle (a
/// panic goes on too, after its message is written).
pub(crate) async fn recording<F>(pipeline: F, ending: Ending) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Outcome,
{
    let record = |result| {
        *ending.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
    };
    match AssertUnwindSafe(pipeline).catch_unwind().await {
        Ok(output) => {
            record(Ok(output.failure()));
            output
        }
        Err(panic) => {
            record(Err(panic_message(panic.as_ref())));
            std::panic::resume_unwind(panic)
        }
    }
}

impl<T> Spawned<T> {
    pub(crate) fn new(pipeline: Pipeline<T>) -> Self {
        Self { pipeline }
    }
}
