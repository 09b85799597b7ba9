//! [`Trace`]: the instrument that writes a scope's timeline to a trace file, on its own thread.

use std::path::{Path, PathBuf};
use std::time::Instant;

use giving::timeline::ThreadInfo;
use giving::{Delivery, EventStream, Given};

use super::encoder::TraceFormat;
use super::error::TraceError;
use super::writer::{TraceSummary, TraceWriter};
use crate::drain::{self, FileSink};
use crate::error::InstrumentError;
use crate::overseer::{Instrument, Reporter, Start};
use crate::threaded::{DROP_FLUSH, INTERRUPT_FLUSH, SinkControl, SinkThread};

/// How many names [`Trace::in_dir`] tries when traces of the same second exist.
const NAME_ATTEMPTS: u32 = 1000;

/// Writes the timeline of a scope — spans, instants, counters, and the epochs, loops, sync
/// windows and steps its loop implies — as a Perfetto trace (or Chrome JSON), on a thread of
/// its own (`giving-trace`). See `docs/timeline.md` for the tracks it draws.
///
/// The training loop pays a queue push per event; lazy values (the loss) are read on the
/// trace's thread. The file is written as it goes, with the log's policy: bytes reach the
/// operating system at the end of each 500-ms batch (`WRITER_PACE`), on Ctrl-C, when the scope ends
/// and when the instrument is dropped unfinished; a process killed mid-run leaves a trace
/// that reads up to its last complete packet. Spans still open at the end are closed there,
/// so every slice has its end.
///
/// ```
/// use giving::{give, iterate};
/// use giving_instruments::Overseer;
/// use giving_instruments::timeline::{Trace, TraceFormat, read};
///
/// let dir = tempfile::tempdir().unwrap();
/// let trace = Trace::in_dir(dir.path(), TraceFormat::Perfetto).unwrap();
/// let path = trace.path().to_path_buf();
/// let run = Overseer::new().with(trace).run(|| {
///     for (step, _) in iterate("train", 0..10).enumerate() {
///         let loss = 1.0 / (step + 1) as f64;
///         give!(loss);
///     }
/// });
/// assert!(run.problems.is_empty());
/// let trace = read(&path).unwrap();
/// assert_eq!(trace.cut_at, None);
/// let counters = trace.packets.iter().filter(|p| {
///     p.track_event.as_ref().is_some_and(|e| e.double_counter_value.is_some())
/// });
/// assert_eq!(counters.count(), 10); // one loss per step
/// ```
pub struct Trace {
    path: PathBuf,
    /// `None` once started.
    writer: Option<TraceWriter>,
    delivery: Delivery,
    thread: Option<SinkThread<TraceSummary>>,
}

impl Trace {
    /// A trace written to `path`, a new file (an existing file is an error, never
    /// overwritten).
    pub fn create(path: impl AsRef<Path>, format: TraceFormat) -> Result<Self, TraceError> {
        let writer = TraceWriter::create(path.as_ref(), format)?;
        Ok(Self {
            path: writer.path().to_path_buf(),
            writer: Some(writer),
            delivery: Delivery::Lossless,
            thread: None,
        })
    }

    /// A new trace in `dir` (created if needed), named by the time and the process id as
    /// libpvti names its files: `trace-<start seconds>-<pid>.<pftrace|json>`, with `-2`, `-3`,
    /// … when traces of the same second exist.
    pub fn in_dir(dir: impl AsRef<Path>, format: TraceFormat) -> Result<Self, TraceError> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|source| TraceError::Io {
            action: "create directory",
            path: dir.to_path_buf(),
            source,
        })?;
        let secs = giving::Timestamp::now().as_nanos() / 1_000_000_000;
        let stem = format!("trace-{secs}-{}", std::process::id());
        let extension = format.extension();
        let mut attempt = 1;
        loop {
            let name = match attempt {
                1 => format!("{stem}.{extension}"),
                n => format!("{stem}-{n}.{extension}"),
            };
            match Self::create(dir.join(name), format) {
                Err(TraceError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::AlreadyExists
                        && attempt < NAME_ATTEMPTS =>
                {
                    attempt += 1;
                }
                created => return created,
            }
        }
    }

    /// How the trace subscribes (default [`Delivery::Lossless`]; a bounded delivery drops the
    /// oldest events when the disk is slower than the loop, and with them slices may lose
    /// their ends — closed at the end of the trace).
    pub fn delivery(mut self, delivery: Delivery) -> Self {
        self.delivery = delivery;
        self
    }

    /// The file this trace writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn start_writer(
        &mut self,
        gv: &Given,
        reporter: Option<Reporter>,
    ) -> Result<SinkThread<TraceSummary>, InstrumentError> {
        let Some(mut writer) = self.writer.take() else {
            return Err(InstrumentError::other(TraceError::Io {
                action: "write",
                path: self.path.clone(),
                source: std::io::Error::other("this trace was already started"),
            }));
        };
        let stream = gv.stream_with(self.delivery).paced(crate::WRITER_PACE);
        // Events without a thread (iterate's, the loop's own) were given where the run runs:
        // the thread starting the instruments is the one that runs the training function.
        let run_thread = ThreadInfo::current();
        writer.process(
            std::process::id(),
            &process_name(),
            run_thread.tid,
            &run_thread.name,
        );
        SinkThread::spawn("giving-trace", move |control| {
            write_loop(writer, stream, control, reporter).map_err(InstrumentError::other)
        })
    }
}

impl Instrument for Trace {
    fn name(&self) -> &str {
        "trace"
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

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace")
            .field("path", &self.path)
            .field("delivery", &self.delivery)
            .finish_non_exhaustive()
    }
}

impl Drop for Trace {
    /// A trace dropped without `finish` (a panic unwinding) still gets what was received
    /// written to the file.
    fn drop(&mut self) {
        if let Some(thread) = &self.thread {
            thread.flush(DROP_FLUSH);
        }
    }
}

/// The process's name as the trace shows it: the program's file name.
fn process_name() -> String {
    std::env::args_os()
        .next()
        .map(PathBuf::from)
        .and_then(|program| {
            program
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "giving".to_owned())
}

/// The writer's state: the first failed write is reported at once, and later events are
/// taken and discarded, so the subscription does not grow while training goes on.
struct Sink {
    writer: TraceWriter,
    failed: Option<TraceError>,
    reporter: Option<Reporter>,
    /// The trace's process of each rank fanned in (events with a `rank`, from NATS).
    ranks: std::collections::HashMap<u64, usize>,
}

impl FileSink for Sink {
    fn write(&mut self, event: &giving::Event) {
        if self.failed.is_none() {
            let process = self.process_of(event);
            self.writer.event(process, event);
            let result = self.writer.write_out_if_due();
            self.check(result);
        }
    }

    fn flush(&mut self) {
        if self.failed.is_none() {
            let result = self.writer.flush();
            self.check(result);
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
    /// The trace process of `event`: this process's (0), or, for an event of a rank fanned in
    /// from other processes (it has a [`RANK`](giving::vocab::keys::RANK)), a process of its
    /// own named `rank R (host)`, so that each rank's steps, epochs and spans have their own
    /// tracks.
    fn process_of(&mut self, event: &giving::Event) -> usize {
        use giving::vocab::keys;
        let Ok(rank) = event.get_as::<u64>(keys::RANK) else {
            return 0;
        };
        if let Some(&index) = self.ranks.get(&rank) {
            return index;
        }
        let name = match event.get(keys::HOST).and_then(giving::Value::as_str) {
            Some(host) => format!("rank {rank} ({host})"),
            None => format!("rank {rank}"),
        };
        let pid = u32::try_from(rank).unwrap_or(u32::MAX);
        let index = self.writer.process(pid, &name, 0, &format!("rank {rank}"));
        self.ranks.insert(rank, index);
        index
    }

    fn check(&mut self, result: Result<(), TraceError>) {
        if let Err(error) = result {
            if let Some(reporter) = &self.reporter {
                reporter.report(&error);
            }
            self.failed = Some(error);
        }
    }
}

/// The writer thread: takes events as they come, writes them out when due or asked, closes
/// the trace when the scope ends.
fn write_loop(
    writer: TraceWriter,
    mut stream: EventStream,
    control: &SinkControl,
    reporter: Option<Reporter>,
) -> Result<TraceSummary, TraceError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|source| TraceError::Io {
            action: "start the writer runtime for",
            path: writer.path().to_path_buf(),
            source,
        })?;
    let mut sink = Sink {
        writer,
        failed: None,
        reporter,
        ranks: std::collections::HashMap::new(),
    };
    runtime.block_on(drain::run(&mut sink, &mut stream, control));
    drop(stream);
    match sink.failed {
        Some(error) => Err(error),
        None => sink.writer.close(),
    }
}
