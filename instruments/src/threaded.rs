//! [`SinkThread`]: a sink that runs on a thread of its own (the MessagePack log's writer, the
//! dashboard's drawing), so the training loop never waits for a disk or a terminal.
//!
//! One abstraction for what every such sink needs: start the thread, ask it to flush (and
//! wait, bounded, until it has), ask it to stop, join it, and get its error, or its panic
//! with the payload kept.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{InstrumentError, PanicPayload};

/// How long a Ctrl-C waits for a file sink's thread (log, trace, TensorBoard) to bring what
/// it received to its file.
pub(crate) const INTERRUPT_FLUSH: Duration = Duration::from_secs(2);
/// How long dropping an unfinished file sink waits for the same.
pub(crate) const DROP_FLUSH: Duration = Duration::from_secs(1);

/// What a sink thread and its owners share: flush requests and their completion, and the
/// request to stop. The thread's body receives it and polls it (a blocking loop) or awaits
/// [`flush_requested`](SinkControl::flush_requested) (an async one).
#[derive(Debug, Default)]
pub struct SinkControl {
    wake: tokio::sync::Notify,
    requested: AtomicU64,
    done: Mutex<u64>,
    done_changed: Condvar,
    stop: AtomicBool,
}

/// `done` once the thread has exited: every request counts as served.
const EXITED: u64 = u64::MAX;

impl SinkControl {
    /// Asks the thread to flush and waits up to `timeout` for it; whether it did in time.
    pub fn flush(&self, timeout: Duration) -> bool {
        let generation = self.requested.fetch_add(1, Ordering::SeqCst) + 1;
        self.wake.notify_one();
        let done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        let (done, _) = self
            .done_changed
            .wait_timeout_while(done, timeout, |done| *done < generation)
            .unwrap_or_else(PoisonError::into_inner);
        *done >= generation
    }

    /// Resolves when a flush is asked (for an async body's `select!`); then call
    /// [`pending_flush`](SinkControl::pending_flush) and [`flushed`](SinkControl::flushed).
    pub async fn flush_requested(&self) {
        self.wake.notified().await;
    }

    /// The newest flush request, to pass to [`flushed`](SinkControl::flushed) once served
    /// (`None` when every request has been served).
    pub fn pending_flush(&self) -> Option<u64> {
        let requested = self.requested.load(Ordering::SeqCst);
        let done = *self.done.lock().unwrap_or_else(PoisonError::into_inner);
        (requested > done).then_some(requested)
    }

    /// Reports that every flush request up to `generation` has been served.
    pub fn flushed(&self, generation: u64) {
        let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        *done = (*done).max(generation);
        self.done_changed.notify_all();
    }

    /// Asks the thread to stop (it checks [`should_stop`](SinkControl::should_stop), or waits
    /// in [`wait_for_stop`](SinkControl::wait_for_stop)).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake.notify_one();
        // Under the lock, so that a thread between its check and its wait cannot miss it.
        let _done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        self.done_changed.notify_all();
    }

    /// Sleeps up to `timeout` or until the thread is asked to stop; whether it was. For a
    /// blocking body with nothing to do between its periodic tasks: it wakes for the next one
    /// or for the stop, not on a short poll in between (each wake-up of a sink's thread is a
    /// core taken from a training that keeps every core busy).
    ///
    /// ```
    /// use std::time::Duration;
    /// use giving_instruments::SinkControl;
    ///
    /// let control = SinkControl::default();
    /// assert!(!control.wait_for_stop(Duration::from_millis(1)));
    /// control.stop();
    /// assert!(control.wait_for_stop(Duration::from_secs(60)), "returns at once once asked");
    /// ```
    pub fn wait_for_stop(&self, timeout: Duration) -> bool {
        let done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        let _done = self
            .done_changed
            .wait_timeout_while(done, timeout, |_| !self.should_stop())
            .unwrap_or_else(PoisonError::into_inner);
        self.should_stop()
    }

    /// Whether the thread was asked to stop.
    pub fn should_stop(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// A sink running on its own named thread; see the module doc.
///
/// ```
/// use std::time::Duration;
/// use giving_instruments::SinkThread;
///
/// let sink = SinkThread::spawn("giving-example", |control| {
///     let mut flushes = 0;
///     while !control.should_stop() {
///         if let Some(generation) = control.pending_flush() {
///             flushes += 1; // write buffered data out here
///             control.flushed(generation);
///         }
///         std::thread::sleep(Duration::from_millis(1));
///     }
///     Ok(flushes)
/// })
/// .unwrap();
/// assert!(sink.flush(Duration::from_secs(5)));
/// sink.stop();
/// assert_eq!(sink.join().unwrap(), 1);
/// ```
pub struct SinkThread<R> {
    name: String,
    thread: Option<JoinHandle<Result<R, InstrumentError>>>,
    control: Arc<SinkControl>,
}

impl<R: Send + 'static> SinkThread<R> {
    /// Starts `body` on a thread named `name`. The thread's end is reported to every flush
    /// waiter, however the body ends.
    pub fn spawn(
        name: &str,
        body: impl FnOnce(&SinkControl) -> Result<R, InstrumentError> + Send + 'static,
    ) -> Result<Self, InstrumentError> {
        let control = Arc::new(SinkControl::default());
        let thread_control = control.clone();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                /// Marks every flush served when the body ends, even by a panic.
                struct Exit(Arc<SinkControl>);
                impl Drop for Exit {
                    fn drop(&mut self) {
                        self.0.flushed(EXITED);
                    }
                }
                let _exit = Exit(thread_control.clone());
                body(&thread_control)
            })
            .map_err(|source| InstrumentError::Thread {
                thread: name.to_owned(),
                source,
            })?;
        Ok(Self {
            name: name.to_owned(),
            thread: Some(thread),
            control,
        })
    }

    /// Asks the thread to flush and waits up to `timeout`; whether it did in time.
    pub fn flush(&self, timeout: Duration) -> bool {
        self.control.flush(timeout)
    }

    /// A function that flushes this sink from any thread (for Ctrl-C handlers), waiting up to
    /// `timeout`.
    pub fn flusher(&self, timeout: Duration) -> impl Fn() + Send + Sync + 'static {
        let control = self.control.clone();
        move || {
            control.flush(timeout);
        }
    }

    /// Asks the thread to stop.
    pub fn stop(&self) {
        self.control.stop();
    }

    /// Whether the thread has not been joined yet.
    pub fn is_running(&self) -> bool {
        self.thread.is_some()
    }

    /// Joins the thread in `slot`, if one was started, and drops its result: what an
    /// instrument's `finish` does with the sink thread its `start` spawned.
    pub fn join_started(slot: &mut Option<Self>) -> Result<(), InstrumentError> {
        slot.take().map_or(Ok(()), |thread| thread.join().map(drop))
    }

    /// Waits for the thread and returns what it returned; a panic becomes
    /// [`InstrumentError::Panicked`] with its payload.
    pub fn join(mut self) -> Result<R, InstrumentError> {
        self.join_mut()
    }

    fn join_mut(&mut self) -> Result<R, InstrumentError> {
        let Some(thread) = self.thread.take() else {
            return Err(InstrumentError::Joined {
                thread: self.name.clone(),
            });
        };
        thread.join().unwrap_or_else(|payload| {
            let payload = PanicPayload::new(payload);
            Err(InstrumentError::Panicked {
                thread: self.name.clone(),
                message: payload.message().to_owned(),
                payload,
            })
        })
    }
}

impl<R> std::fmt::Debug for SinkThread<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SinkThread")
            .field("name", &self.name)
            .field("running", &self.thread.is_some())
            .finish_non_exhaustive()
    }
}
