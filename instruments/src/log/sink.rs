//! [`MsgpackLog`]: the instrument that writes every event of a scope to a log file, on its
//! own thread.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use giving::{Delivery, EventStream, Given, Value};

use super::error::LogError;
use super::header::LogHeader;
use super::writer::{LogSummary, LogWriter};
use crate::overseer::{BoxError, Instrument, Start};

/// When events stop coming, buffered bytes reach the file after this long at most.
const IDLE_FLUSH: Duration = Duration::from_millis(100);

/// Writes every event of a scope to an append-only MessagePack file (format in
/// `docs/log-format.md`): a header record, one record per event with its timestamp, and an end
/// record when the scope ends.
///
/// Events are encoded and written on a dedicated thread (`giving-log`), so the training loop
/// only pays for a queue push; lazy values (a loss tensor) are resolved there. Bytes reach the
/// file when the buffer fills, 100 ms after the events stop, on [`LogHandle::flush`] (the
/// [`Overseer`](crate::Overseer) calls it on Ctrl-C) and when the scope ends; dropping the
/// handle during a panic flushes what was received.
///
/// ```
/// use giving::{give, given};
/// use giving_instruments::log::{LogReader, MsgpackLog};
///
/// let dir = tempfile::tempdir().unwrap();
/// let gv = given();
/// let log = MsgpackLog::in_dir(dir.path()).unwrap().attach(&gv);
/// for step in 0..10u64 {
///     let loss = 1.0 / (step + 1) as f64;
///     give!(step, loss);
/// }
/// gv.finish().unwrap();
/// let summary = log.join().unwrap();
/// assert_eq!(summary.events, 10);
/// assert_eq!(LogReader::open(&summary.path).unwrap().count(), 10);
/// ```
pub struct MsgpackLog {
    path: PathBuf,
    /// `None` once attached.
    writer: Option<LogWriter>,
    header: LogHeader,
    delivery: Delivery,
    /// The running log, when used as an [`Instrument`].
    handle: Option<LogHandle>,
}

impl MsgpackLog {
    /// A log written to `path` (created, or truncated if it exists).
    pub fn create(path: impl AsRef<Path>) -> Result<Self, LogError> {
        let header = LogHeader::for_this_process();
        let writer = LogWriter::create(path, &LogHeader::default())?;
        Ok(Self {
            path: writer.path().to_path_buf(),
            writer: Some(writer),
            header,
            delivery: Delivery::Lossless,
            handle: None,
        })
    }

    /// A log in directory `dir` (created if needed), named `run-<start seconds>-<pid>.msgpack`.
    pub fn in_dir(dir: impl AsRef<Path>) -> Result<Self, LogError> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|source| LogError::Io {
            action: "create directory",
            path: dir.to_path_buf(),
            source,
        })?;
        let header = LogHeader::for_this_process();
        let name = format!(
            "run-{}-{}.msgpack",
            header.start_time.as_nanos() / 1_000_000_000,
            header.pid
        );
        Self::create(dir.join(name))
    }

    /// Records the version of another crate in the header (e.g. `giving-models`, `burn`).
    pub fn crate_version(mut self, name: &str, version: &str) -> Self {
        self.header
            .crate_versions
            .insert(name.to_owned(), version.to_owned());
        self
    }

    /// Adds a field to the header (run name, configuration, …).
    pub fn header_field(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.header.extra.insert(key.to_owned(), value.into());
        self
    }

    /// How the log subscribes (default [`Delivery::Lossless`]: every event; the queue grows if
    /// the disk is slower than the loop). A bounded delivery drops the oldest events instead,
    /// and the end record counts them.
    pub fn delivery(mut self, delivery: Delivery) -> Self {
        self.delivery = delivery;
        self
    }

    /// The file this log writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Subscribes to `gv` now and starts the writer thread. Events given from now on are
    /// written until the scope ends; [`LogHandle::join`] then returns the summary.
    pub fn attach(mut self, gv: &Given) -> LogHandle {
        self.start_writer(gv)
    }

    fn start_writer(&mut self, gv: &Given) -> LogHandle {
        let path = self.path.clone();
        let Some(writer) = self.writer.take() else {
            return LogHandle {
                path: path.clone(),
                thread: None,
                control: Arc::default(),
                spawn_error: Some(LogError::Io {
                    action: "write",
                    path,
                    source: std::io::Error::other("this log was already attached to a scope"),
                }),
            };
        };
        let stream = gv.stream_with(self.delivery);
        // The header was written with placeholder fields at creation; rewrite it now that the
        // builder is done (the buffer has not reached the file yet).
        let writer = writer.with_header(&self.header);
        let control = Arc::new(FlushControl::default());
        let thread_control = control.clone();
        let thread = std::thread::Builder::new()
            .name("giving-log".to_owned())
            .spawn(move || write_loop(writer, stream, &thread_control));
        match thread {
            Ok(thread) => LogHandle {
                path,
                thread: Some(thread),
                control,
                spawn_error: None,
            },
            Err(source) => LogHandle {
                path: path.clone(),
                thread: None,
                control,
                spawn_error: Some(LogError::Io {
                    action: "start the writer thread for",
                    path,
                    source,
                }),
            },
        }
    }
}

impl Instrument for MsgpackLog {
    fn name(&self) -> &str {
        "msgpack-log"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), BoxError> {
        let handle = self.start_writer(start.given());
        start.on_interrupt(handle.flusher());
        self.handle = Some(handle);
        Ok(())
    }

    /// Waits for the writer (the scope has ended) and reports a write error.
    fn finish(&mut self) -> Result<(), BoxError> {
        match self.handle.take() {
            Some(handle) => handle.join().map(drop).map_err(Into::into),
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for MsgpackLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MsgpackLog")
            .field("path", &self.path())
            .field("delivery", &self.delivery)
            .finish_non_exhaustive()
    }
}

/// A running log: [`join`](LogHandle::join) it after the scope ended.
pub struct LogHandle {
    path: PathBuf,
    thread: Option<JoinHandle<Result<LogSummary, LogError>>>,
    control: Arc<FlushControl>,
    spawn_error: Option<LogError>,
}

impl LogHandle {
    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for the writer to finish — it does once the scope has ended and every event is
    /// written — and returns what the log holds.
    pub fn join(mut self) -> Result<LogSummary, LogError> {
        if let Some(error) = self.spawn_error.take() {
            return Err(error);
        }
        let Some(thread) = self.thread.take() else {
            return Err(LogError::Io {
                action: "write",
                path: self.path.clone(),
                source: std::io::Error::other("the writer was already joined"),
            });
        };
        thread.join().unwrap_or_else(|panic| {
            Err(LogError::Io {
                action: "write",
                path: self.path.clone(),
                source: std::io::Error::other(format!(
                    "the writer thread panicked: {}",
                    panic_text(panic.as_ref())
                )),
            })
        })
    }

    /// Asks the writer to write every event received so far to the file, and waits up to
    /// `timeout` for it. Returns whether it did in time.
    pub fn flush(&self, timeout: Duration) -> bool {
        self.control.flush_now(timeout)
    }

    /// A function that flushes this log from any thread (for Ctrl-C handlers).
    pub fn flusher(&self) -> impl Fn() + Send + Sync + 'static {
        let control = self.control.clone();
        move || {
            control.flush_now(Duration::from_secs(2));
        }
    }
}

impl Drop for LogHandle {
    /// A handle dropped without `join` (a panic unwinding through the loop) still gets what
    /// was received written to the file.
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.control.flush_now(Duration::from_secs(1));
        }
    }
}

impl std::fmt::Debug for LogHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogHandle")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

/// Flush requests from other threads, and their completion.
#[derive(Default)]
struct FlushControl {
    wake: tokio::sync::Notify,
    requested: AtomicU64,
    done: Mutex<u64>,
    done_changed: Condvar,
}

/// `done` once the writer has exited: every request counts as served.
const EXITED: u64 = u64::MAX;

impl FlushControl {
    fn flush_now(&self, timeout: Duration) -> bool {
        let generation = self.requested.fetch_add(1, Ordering::SeqCst) + 1;
        self.wake.notify_one();
        let done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        let (done, _) = self
            .done_changed
            .wait_timeout_while(done, timeout, |done| *done < generation)
            .unwrap_or_else(PoisonError::into_inner);
        *done >= generation
    }

    fn served(&self, generation: u64) {
        let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        *done = (*done).max(generation);
        self.done_changed.notify_all();
    }
}

/// The writer thread: takes events as they come, writes them, flushes when idle or asked.
fn write_loop(
    mut writer: LogWriter,
    mut stream: EventStream,
    control: &FlushControl,
) -> Result<LogSummary, LogError> {
    let result = (|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|source| LogError::Io {
                action: "start the writer runtime for",
                path: writer.path().to_path_buf(),
                source,
            })?;
        runtime.block_on(async {
            loop {
                let next = async {
                    if writer.has_buffered() {
                        tokio::time::timeout(IDLE_FLUSH, stream.next()).await.ok()
                    } else {
                        Some(stream.next().await)
                    }
                };
                tokio::select! {
                    biased;
                    () = control.wake.notified() => {
                        let generation = control.requested.load(Ordering::SeqCst);
                        while let Some(Some(event)) = stream.next().now_or_never() {
                            writer.write(&event)?;
                        }
                        writer.flush()?;
                        control.served(generation);
                    }
                    next = next => match next {
                        Some(Some(event)) => writer.write(&event)?,
                        Some(None) => break,
                        None => writer.flush()?, // idle: write what is buffered
                    },
                }
            }
            Ok(())
        })?;
        let dropped = stream.dropped();
        drop(stream);
        writer.close(dropped)
    })();
    control.served(EXITED);
    result
}
