//! Running pipelines: on the caller's tokio runtime, or on a small background runtime that
//! `giving` starts the first time sync code (a burn training loop) spawns one.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::channel::oneshot;
use tokio::runtime::{Handle, Runtime};

/// Why a pipeline produced no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// The pipeline panicked; the panic message is kept.
    #[error("pipeline #{index} panicked: {message}")]
    Panicked {
        /// The pipeline's number in its scope, in spawn order from 0.
        index: usize,
        /// The panic message.
        message: String,
    },
    /// A check ([`Given::check`](crate::Given::check)) failed: its message, which names the
    /// item that failed it.
    #[error("check #{index} failed: {message}")]
    CheckFailed {
        /// The pipeline's number in its scope, in spawn order from 0.
        index: usize,
        /// Why it failed.
        message: String,
    },
    /// The runtime running the pipeline shut down before it finished.
    #[error("pipeline #{index} was cancelled: its runtime shut down")]
    Cancelled {
        /// The pipeline's number in its scope, in spawn order from 0.
        index: usize,
    },
}

/// Why [`Given::finish`](crate::Given::finish) could not wait for every pipeline cleanly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FinishError {
    /// Some pipelines failed; the others finished.
    #[error("{} pipeline(s) failed: {}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Failed(Vec<PipelineError>),
    /// `finish()` was called on a current-thread tokio runtime, which would deadlock waiting for
    /// pipelines that run on that same thread.
    #[error(
        "Given::finish() called inside a current-thread tokio runtime would deadlock; use `finish_async().await`"
    )]
    WouldDeadlock,
}

/// The result of one spawned pipeline: await it, or [`join`](Pipeline::join) it from sync code.
#[must_use = "a pipeline's result is only readable through its handle"]
pub struct Pipeline<T> {
    index: usize,
    result: oneshot::Receiver<Result<T, PipelineError>>,
}

impl<T> Pipeline<T> {
    /// The pipeline's number in its scope, in spawn order from 0 (as its
    /// [`PipelineError`]s name it).
    pub fn index(&self) -> usize {
        self.index
    }

    /// Blocks the calling thread until the pipeline has finished, and returns its output.
    ///
    /// Do not call it on a thread that runs the pipeline's own runtime; await the handle there.
    pub fn join(self) -> Result<T, PipelineError> {
        futures::executor::block_on(self)
    }
}

impl<T> Future for Pipeline<T> {
    type Output = Result<T, PipelineError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let index = self.index;
        self.result
            .poll_unpin(cx)
            .map(|r| r.unwrap_or(Err(PipelineError::Cancelled { index })))
    }
}

impl<T> std::fmt::Debug for Pipeline<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("index", &self.index)
            .finish()
    }
}

/// The pipelines of one scope: how many are still running and which failed.
#[derive(Default)]
pub(crate) struct PipelineSet {
    state: Mutex<SetState>,
    all_done: Condvar,
    notify: tokio::sync::Notify,
}

#[derive(Default)]
struct SetState {
    spawned: usize,
    running: usize,
    failures: Vec<PipelineError>,
}

impl PipelineSet {
    fn state(&self) -> std::sync::MutexGuard<'_, SetState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn spawn<F>(self: &Arc<Self>, future: F) -> Pipeline<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_with(future, None)
    }

    /// [`spawn`](PipelineSet::spawn), also marking `done` complete when the pipeline ends.
    pub(crate) fn spawn_with<F>(
        self: &Arc<Self>,
        future: F,
        done: Option<Arc<Completion>>,
    ) -> Pipeline<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_judged(future, done, |_| None)
    }

    /// [`spawn`](PipelineSet::spawn) of a check: an `Err` output is a failure that
    /// [`Given::finish`](crate::Given::finish) reports, as a panic is.
    pub(crate) fn spawn_checked<F, T, E>(self: &Arc<Self>, future: F) -> Pipeline<F::Output>
    where
        F: Future<Output = Result<T, E>> + Send + 'static,
        T: Send + 'static,
        E: std::fmt::Display + Send + 'static,
    {
        self.spawn_judged(future, None, |output| {
            output.as_ref().err().map(ToString::to_string)
        })
    }

    /// Spawns `future`; `failed` says whether its output is a failure, and why.
    fn spawn_judged<F>(
        self: &Arc<Self>,
        future: F,
        done: Option<Arc<Completion>>,
        failed: fn(&F::Output) -> Option<String>,
    ) -> Pipeline<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let index = {
            let mut state = self.state();
            state.running += 1;
            state.spawned += 1;
            state.spawned - 1
        };
        let (sender, result) = oneshot::channel();
        let mut guard = EndGuard {
            set: self.clone(),
            failure: None,
            done,
        };
        let task = async move {
            let outcome = AssertUnwindSafe(future)
                .catch_unwind()
                .await
                .map_err(|panic| PipelineError::Panicked {
                    index,
                    message: panic_message(panic.as_ref()),
                });
            match &outcome {
                Err(error) => guard.failure = Some(error.clone()),
                Ok(output) => {
                    if let Some(message) = failed(output) {
                        guard.failure = Some(PipelineError::CheckFailed { index, message });
                    }
                }
            }
            let _ = sender.send(outcome);
            drop(guard);
        };
        match Handle::try_current() {
            Ok(handle) => drop(handle.spawn(task)),
            Err(_) => drop(background().spawn(task)),
        }
        Pipeline { index, result }
    }

    fn ended(&self, failure: Option<PipelineError>) {
        let mut state = self.state();
        state.running -= 1;
        state.failures.extend(failure);
        if state.running == 0 {
            self.all_done.notify_all();
            self.notify.notify_waiters();
        }
    }

    fn outcome(state: &mut SetState) -> Result<(), FinishError> {
        if state.failures.is_empty() {
            Ok(())
        } else {
            Err(FinishError::Failed(std::mem::take(&mut state.failures)))
        }
    }

    pub(crate) fn wait(&self) -> Result<(), FinishError> {
        if self.state().running == 0 {
            return Self::outcome(&mut self.state());
        }
        blocking(|| self.wait_blocking())
    }

    fn wait_blocking(&self) -> Result<(), FinishError> {
        let mut state = self.state();
        while state.running > 0 {
            state = self
                .all_done
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        Self::outcome(&mut state)
    }

    pub(crate) async fn wait_async(&self) -> Result<(), FinishError> {
        loop {
            let notified = self.notify.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.state();
                if state.running == 0 {
                    return Self::outcome(&mut state);
                }
            }
            notified.await;
        }
    }
}

/// Marks a pipeline ended when its task ends, however it ends: normally, by a panic caught
/// above, or by the runtime dropping the task.
struct EndGuard {
    set: Arc<PipelineSet>,
    failure: Option<PipelineError>,
    done: Option<Arc<Completion>>,
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if let Some(done) = &self.done {
            done.complete();
        }
        self.set.ended(self.failure.take());
    }
}

/// Whether one pipeline has ended, waitable from sync and async code alike (for the
/// derivations a scope drains before it finishes).
#[derive(Default)]
pub(crate) struct Completion {
    done: Mutex<bool>,
    all_done: Condvar,
    notify: tokio::sync::Notify,
}

impl Completion {
    fn complete(&self) {
        *self.done.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.all_done.notify_all();
        self.notify.notify_waiters();
    }

    fn is_complete(&self) -> bool {
        *self.done.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Blocks until the pipeline has ended; see [`blocking`] for runtimes.
    pub(crate) fn wait(&self) -> Result<(), FinishError> {
        if self.is_complete() {
            return Ok(());
        }
        blocking(|| {
            let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
            while !*done {
                done = self
                    .all_done
                    .wait(done)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            Ok(())
        })
    }

    pub(crate) async fn wait_async(&self) {
        loop {
            let notified = self.notify.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.is_complete() {
                return;
            }
            notified.await;
        }
    }
}

/// Runs `wait` on this thread, which may be a tokio worker: allowed on a multi-thread runtime
/// (through `block_in_place`), refused on a current-thread one, where the pipelines waited for
/// run on this very thread.
fn blocking<T>(wait: impl FnOnce() -> Result<T, FinishError>) -> Result<T, FinishError> {
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread => {
            Err(FinishError::WouldDeadlock)
        }
        Ok(_) => tokio::task::block_in_place(wait),
        Err(_) => wait(),
    }
}

/// The message of a caught panic (what `catch_unwind` or `JoinHandle::join` returned): the
/// `&str` or `String` given to `panic!`, or `(no message)` for any other payload. One wording
/// for every crate that reports a panic (pipelines, the Overseer, the log's `$error`).
///
/// ```
/// let caught = std::panic::catch_unwind(|| panic!("device {}", "lost")).unwrap_err();
/// assert_eq!(giving::panic_message(caught.as_ref()), "device lost");
/// let caught = std::panic::catch_unwind(|| panic!("literal")).unwrap_err();
/// assert_eq!(giving::panic_message(caught.as_ref()), "literal");
/// let caught = std::panic::catch_unwind(|| std::panic::panic_any(7u8)).unwrap_err();
/// assert_eq!(giving::panic_message(caught.as_ref()), "(no message)");
/// ```
pub fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

/// The runtime for pipelines spawned from sync code: one worker thread, so pipelines take
/// little from the training loop, started the first time it is needed.
fn background() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("giving-pipelines")
            .enable_all()
            .build()
            .expect("giving could not start its background runtime (could not spawn a thread)")
    })
}
