//! [`MsgpackLog`]: the instrument that writes every event of a scope to a log file, on its
//! own thread.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use giving::{Delivery, EventStream, Given, Value};

use super::error::LogError;
use super::header::LogHeader;
use super::writer::{LogSummary, LogWriter};
use crate::error::InstrumentError;
use crate::overseer::{Instrument, Start};
use crate::threaded::{SinkControl, SinkThread};

/// When events stop coming, buffered bytes reach the file after this long at most.
const IDLE_FLUSH: Duration = Duration::from_millis(100);
/// How long a Ctrl-C waits for the log to reach the file.
const INTERRUPT_FLUSH: Duration = Duration::from_secs(2);
/// How long dropping an unfinished log waits for it to reach the file.
const DROP_FLUSH: Duration = Duration::from_secs(1);

/// Writes every event of a scope to an append-only MessagePack file (format in
/// `docs/log-format.md`): a header record, one record per event with its timestamp, and an end
/// record when the scope ends.
///
/// Events are encoded and written on a dedicated thread (`giving-log`), so the training loop
/// only pays for a queue push; lazy values (a loss tensor) are resolved there. Bytes reach the
/// file when the buffer fills, 100 ms after the events stop, when the
/// [`Overseer`](crate::Overseer) asks on Ctrl-C, and when the scope ends; dropping the log
/// during a panic flushes what was received.
///
/// ```
/// use giving::give;
/// use giving_instruments::Overseer;
/// use giving_instruments::log::{LogReader, MsgpackLog};
///
/// let dir = tempfile::tempdir().unwrap();
/// let log = MsgpackLog::in_dir(dir.path()).unwrap();
/// let path = log.path().to_path_buf();
/// let run = Overseer::new().with(log).run(|| {
///     for step in 0..10u64 {
///         let loss = 1.0 / (step + 1) as f64;
///         give!(step, loss);
///     }
/// });
/// assert!(run.problems.is_empty());
/// let mut reader = LogReader::open(&path).unwrap();
/// assert_eq!(reader.by_ref().count(), 10);
/// assert_eq!(reader.end().unwrap().events, 10);
/// ```
pub struct MsgpackLog {
    path: PathBuf,
    /// `None` once attached.
    writer: Option<LogWriter>,
    header: LogHeader,
    delivery: Delivery,
    /// The writer thread, once started.
    thread: Option<SinkThread<LogSummary>>,
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
            thread: None,
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

    /// Subscribes to `gv` now and starts the writer thread.
    fn start_writer(&mut self, gv: &Given) -> Result<SinkThread<LogSummary>, InstrumentError> {
        let Some(writer) = self.writer.take() else {
            return Err(InstrumentError::Log(LogError::Io {
                action: "write",
                path: self.path.clone(),
                source: std::io::Error::other("this log was already started"),
            }));
        };
        let stream = gv.stream_with(self.delivery);
        // The header was written with placeholder fields at creation; rewrite it now that the
        // builder is done (the buffer has not reached the file yet).
        let writer = writer.with_header(&self.header);
        SinkThread::spawn("giving-log", move |control| {
            write_loop(writer, stream, control).map_err(InstrumentError::Log)
        })
    }
}

impl Instrument for MsgpackLog {
    fn name(&self) -> &str {
        "msgpack-log"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        let thread = self.start_writer(start.given())?;
        start.on_interrupt(thread.flusher(INTERRUPT_FLUSH));
        self.thread = Some(thread);
        Ok(())
    }

    /// Waits for the writer (the scope has ended) and reports a write error.
    fn finish(&mut self) -> Result<(), InstrumentError> {
        match self.thread.take() {
            Some(thread) => thread.join().map(drop),
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

impl Drop for MsgpackLog {
    /// A log dropped without `finish` (a panic unwinding through the loop) still gets what
    /// was received written to the file.
    fn drop(&mut self) {
        if let Some(thread) = &self.thread {
            thread.flush(DROP_FLUSH);
        }
    }
}

/// The writer thread: takes events as they come, writes them, flushes when idle or asked.
fn write_loop(
    mut writer: LogWriter,
    mut stream: EventStream,
    control: &SinkControl,
) -> Result<LogSummary, LogError> {
    {
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
                    () = control.flush_requested() => {
                        if let Some(generation) = control.pending_flush() {
                            while let Some(Some(event)) = stream.next().now_or_never() {
                                writer.write(&event)?;
                            }
                            writer.flush()?;
                            control.flushed(generation);
                        }
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
    }
}
