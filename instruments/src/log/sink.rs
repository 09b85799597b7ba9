//! [`MsgpackLog`]: the instrument that writes every event of a scope to a log file, on its
//! own thread.

use std::path::{Path, PathBuf};
use std::time::Instant;

use giving::{Delivery, EventStream, Given, Value};
use giving_log::{FLUSH_EVERY, LogError, LogHeader, LogSummary, LogWriter};

use crate::drain::{self, FileSink};
use crate::error::InstrumentError;
use crate::overseer::{Instrument, Reporter, Start};
use crate::select::KeySelection;
use crate::threaded::{DROP_FLUSH, INTERRUPT_FLUSH, SinkControl, SinkThread};

/// How many names [`MsgpackLog::in_dir`] tries when logs of the same second exist.
const NAME_ATTEMPTS: u32 = 1000;

/// Writes every event of a scope to an append-only MessagePack file (format in
/// `docs/log-format.md`): a header record, one record per event with its timestamp, and an end
/// record when the scope ends.
///
/// Events are encoded and written on a dedicated thread (`giving-log`), so the training loop
/// only pays for a queue push; lazy values (a loss tensor) are resolved there. The thread reads
/// the run's events every [`WRITER_PACE`](crate::WRITER_PACE) (500 ms) and hands each batch to
/// the operating system (`write`, not `fsync`) once it has taken it; within a long batch, when
/// 256 KiB are buffered or [`FLUSH_EVERY`] (200 ms) after the first byte was. A run killed
/// with `SIGKILL` keeps every event given more than about 500 ms before.
/// They are also written when the [`Overseer`](crate::Overseer) asks on Ctrl-C and when the
/// scope ends; dropping the log during a panic flushes what was received.
///
/// A lazy value that panics while being read is written as nil, with a field `$error` naming
/// it, and counted as unresolved. An event the reader would refuse (values nested deeper
/// than 128, a record over 64 MiB) is not written: the log goes on, and the first such
/// refusal ([`LogError::Refused`]) is the instrument's error when the scope ends.
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
    /// The keys written (`None`: every key of every event).
    keys: Option<KeySelection>,
    /// The writer thread, once started.
    thread: Option<SinkThread<LogSummary>>,
}

impl MsgpackLog {
    /// A log written to `path`, a new file: an existing file is never overwritten (that is an
    /// error, `cannot create`).
    pub fn create(path: impl AsRef<Path>) -> Result<Self, LogError> {
        let header = LogHeader::for_this_process();
        let writer = LogWriter::create(path, &LogHeader::default())?.flush_every(FLUSH_EVERY);
        Ok(Self {
            path: writer.path().to_path_buf(),
            writer: Some(writer),
            header,
            delivery: Delivery::Lossless,
            keys: None,
            thread: None,
        })
    }

    /// A log written to a file or pipe the caller opened (the child-process protocol's
    /// `DATA_FD`); `name` names it in errors. Such a writer never removes what it writes to.
    /// With `smuggled`, the bytes go out as voir's escape sequences (the descriptor is stdout).
    pub(crate) fn to_open_file(
        name: PathBuf,
        file: std::fs::File,
        smuggled: bool,
    ) -> Result<Self, LogError> {
        let mut writer = LogWriter::to_open_file(name, file)?.flush_every(FLUSH_EVERY);
        if smuggled {
            writer = writer.smuggled();
        }
        Ok(Self {
            path: writer.path().to_path_buf(),
            writer: Some(writer),
            header: LogHeader::for_this_process(),
            delivery: Delivery::Lossless,
            keys: None,
            thread: None,
        })
    }

    /// A new log in directory `dir` (created if needed), named
    /// `run-<start seconds>-<pid>.msgpack`, or `run-<start seconds>-<pid>-<n>.msgpack` (`n`
    /// from 2) when logs of the same second exist: two logs opened in one second get two
    /// files.
    pub fn in_dir(dir: impl AsRef<Path>) -> Result<Self, LogError> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|source| LogError::Io {
            action: "create directory",
            path: dir.to_path_buf(),
            source,
        })?;
        let header = LogHeader::for_this_process();
        let stem = format!(
            "run-{}-{}",
            header.start_time.as_nanos() / 1_000_000_000,
            header.pid
        );
        let mut attempt = 1;
        loop {
            let name = match attempt {
                1 => format!("{stem}.msgpack"),
                n => format!("{stem}-{n}.msgpack"),
            };
            match Self::create(dir.join(name)) {
                Err(error) if already_exists(&error) && attempt < NAME_ATTEMPTS => attempt += 1,
                created => return created,
            }
        }
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

    /// Writes only the keys `keys` selects, and only the events with one of them (voir's
    /// `log(*patterns, context=…)`; see [`KeySelection`]). Events are filtered on the writer
    /// thread, not the training thread; the header records the selection under `log_keys`.
    ///
    /// ```
    /// use giving::give;
    /// use giving_instruments::Overseer;
    /// use giving_instruments::log::{LogReader, MsgpackLog};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let log = MsgpackLog::in_dir(dir.path()).unwrap().keys("loss,+step".parse().unwrap());
    /// let path = log.path().to_path_buf();
    /// Overseer::new().with(log).run(|| {
    ///     for step in 0..4u64 {
    ///         let (loss, lr) = (1.0 / (step + 1) as f64, 0.1);
    ///         give!(step, loss, lr);
    ///         give!(step);
    ///     }
    /// });
    /// let events: Vec<_> = LogReader::open(&path).unwrap().map(Result::unwrap).collect();
    /// assert_eq!(events.len(), 4);
    /// assert_eq!(events[3].keys().collect::<Vec<_>>(), ["step", "loss"]);
    /// ```
    pub fn keys(mut self, keys: KeySelection) -> Self {
        self.header
            .extra
            .insert("log_keys".to_owned(), Value::from(keys.as_str()));
        self.keys = Some(keys);
        self
    }

    /// The file this log writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Subscribes to `gv` now and starts the writer thread.
    fn start_writer(
        &mut self,
        gv: &Given,
        reporter: Option<Reporter>,
    ) -> Result<SinkThread<LogSummary>, InstrumentError> {
        let Some(writer) = self.writer.take() else {
            return Err(InstrumentError::Log(LogError::Io {
                action: "write",
                path: self.path.clone(),
                source: std::io::Error::other("this log was already started"),
            }));
        };
        let stream = gv.stream_with(self.delivery).paced(crate::WRITER_PACE);
        // The header was written with placeholder fields at creation; rewrite it now that the
        // builder is done (the buffer has not reached the file yet).
        let writer = writer.with_header(&self.header)?;
        let keys = self.keys.clone();
        SinkThread::spawn("giving-log", move |control| {
            let sink = Sink {
                writer,
                keys,
                refused: None,
                failed: None,
                reporter,
            };
            write_loop(sink, stream, control).map_err(InstrumentError::Log)
        })
    }
}

impl Instrument for MsgpackLog {
    fn name(&self) -> &str {
        "msgpack-log"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        let thread = self.start_writer(start.given(), Some(start.reporter()))?;
        start.on_interrupt(thread.flusher(INTERRUPT_FLUSH));
        self.thread = Some(thread);
        Ok(())
    }

    /// Waits for the writer (the scope has ended) and reports a write error.
    fn finish(&mut self) -> Result<(), InstrumentError> {
        SinkThread::join_started(&mut self.thread)
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

/// Whether creating a log failed because its file exists.
fn already_exists(error: &LogError) -> bool {
    match error {
        LogError::Io { source, .. } => source.kind() == std::io::ErrorKind::AlreadyExists,
        _ => false,
    }
}

/// What the writer thread owns: the file, the key selection, and what went wrong.
struct Sink {
    writer: LogWriter,
    keys: Option<KeySelection>,
    /// The first event the reader would refuse, reported once the log is closed.
    refused: Option<LogError>,
    /// The write that failed (a full disk): reported at once; nothing is written after it.
    failed: Option<LogError>,
    /// Where a failure is reported as it happens (the Overseer's run).
    reporter: Option<Reporter>,
}

impl FileSink for Sink {
    /// Writes the selected part of an event. An event the reader would refuse is skipped, and
    /// the first refusal kept; after a failed write, events are taken and discarded, so the
    /// subscription does not grow while the run goes on.
    fn write(&mut self, event: &giving::Event) {
        if self.failed.is_some() {
            return;
        }
        let selected;
        let event = match &self.keys {
            None => event,
            Some(keys) => match keys.apply(event) {
                Some(event) => {
                    selected = event;
                    &selected
                }
                None => return,
            },
        };
        match self.writer.write(event) {
            Ok(()) => {}
            Err(error @ LogError::Refused { .. }) => {
                self.refused.get_or_insert(error);
            }
            Err(error) => self.fail(error),
        }
    }

    /// Hands buffered bytes to the operating system.
    fn flush(&mut self) {
        if self.failed.is_none()
            && let Err(error) = self.writer.flush()
        {
            self.fail(error);
        }
    }

    fn write_out_deadline(&self) -> Option<Instant> {
        match self.failed {
            None => self.writer.write_out_deadline(),
            Some(_) => None,
        }
    }
}

impl Sink {
    /// Reports a failed write now (stderr, a `{problem, instrument}` event, the run's
    /// problems), not when the run ends.
    fn fail(&mut self, error: LogError) {
        if let Some(reporter) = &self.reporter {
            reporter.report(&error);
        }
        self.failed = Some(error);
    }
}

/// The writer thread: takes events as they come, writes them, writes buffered bytes out when
/// they are due or when asked. The first failed write is returned once the scope has ended
/// (the file is left without an end record: a reader sees a cut log, which it is); else the
/// first event the reader would refuse.
fn write_loop(
    mut sink: Sink,
    mut stream: EventStream,
    control: &SinkControl,
) -> Result<LogSummary, LogError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|source| LogError::Io {
            action: "start the writer runtime for",
            path: sink.writer.path().to_path_buf(),
            source,
        })?;
    runtime.block_on(drain::run(&mut sink, &mut stream, control));
    let dropped = stream.dropped();
    drop(stream);
    if let Some(error) = sink.failed {
        return Err(error);
    }
    let summary = sink.writer.close(dropped)?;
    match sink.refused {
        Some(error) => Err(error),
        None => Ok(summary),
    }
}
