//! [`TraceWriter`]: events in, trace file out — the recorder, the encoder and the file, with
//! the log's write-out policy (256 KiB, or 200 ms after the first byte buffered).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use giving::Event;

use super::encoder::{Encoder, TraceFormat};
use super::error::TraceError;
use super::model::{Output as _, Process, Recorder};

/// Bytes buffered before they are written out whatever the time.
const WRITE_OUT_BYTES: usize = 256 * 1024;
/// How long bytes wait in the buffer at most (the log's [`FLUSH_EVERY`](crate::log::FLUSH_EVERY)).
pub(crate) const FLUSH_EVERY: Duration = crate::log::FLUSH_EVERY;

/// What a finished trace holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TraceSummary {
    /// Events read from the scope or the logs.
    pub events: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// Writes the timeline of one or more processes to a new file.
pub(crate) struct TraceWriter {
    file: File,
    path: PathBuf,
    encoder: Encoder,
    recorders: Vec<Recorder>,
    first_buffered: Option<Instant>,
    summary: TraceSummary,
}

impl TraceWriter {
    /// A writer of a new file at `path` (an existing file is an error: never overwritten).
    pub(crate) fn create(path: &Path, format: TraceFormat) -> Result<Self, TraceError> {
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|source| TraceError::Io {
                action: "create",
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            file,
            path: path.to_path_buf(),
            encoder: Encoder::new(format),
            recorders: Vec::new(),
            first_buffered: None,
            summary: TraceSummary::default(),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Adds a process whose loop runs on thread `tid` (`thread_name`); its events go to
    /// [`event`](Self::event) with the index returned.
    pub(crate) fn process(&mut self, pid: u32, name: &str, tid: u64, thread_name: &str) -> usize {
        let index = self.recorders.len();
        let process = Process {
            index: u32::try_from(index).unwrap_or(u32::MAX),
            pid,
            name: name.to_owned(),
        };
        self.encoder.process(&process);
        self.recorders
            .push(Recorder::new(&process, tid, thread_name));
        self.mark_buffered();
        index
    }

    /// Records an event of process `index`.
    pub(crate) fn event(&mut self, index: usize, event: &Event) {
        self.summary.events += 1;
        if let Some(recorder) = self.recorders.get_mut(index) {
            recorder.event(event, &mut self.encoder);
        }
        self.mark_buffered();
    }

    fn mark_buffered(&mut self) {
        if self.encoder.buffered() > 0 && self.first_buffered.is_none() {
            self.first_buffered = Some(Instant::now());
        }
    }

    /// When the buffered bytes are due to be written out, if any are buffered.
    pub(crate) fn write_out_deadline(&self) -> Option<Instant> {
        self.first_buffered.map(|first| first + FLUSH_EVERY)
    }

    /// Writes the buffered bytes out if there are many or they have waited long enough.
    pub(crate) fn write_out_if_due(&mut self) -> Result<(), TraceError> {
        let due = self
            .write_out_deadline()
            .is_some_and(|deadline| Instant::now() >= deadline);
        if due || self.encoder.buffered() >= WRITE_OUT_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Hands every buffered byte to the operating system.
    pub(crate) fn flush(&mut self) -> Result<(), TraceError> {
        self.first_buffered = None;
        let bytes = self.encoder.take();
        if bytes.is_empty() {
            return Ok(());
        }
        self.summary.bytes += bytes.len() as u64;
        self.file
            .write_all(&bytes)
            .map_err(|source| TraceError::Io {
                action: "write",
                path: self.path.clone(),
                source,
            })
    }

    /// Closes what is still open (every begin gets its end), ends the file, writes it out.
    pub(crate) fn close(mut self) -> Result<TraceSummary, TraceError> {
        for recorder in &mut self.recorders {
            recorder.finish(&mut self.encoder);
        }
        self.encoder.close();
        self.flush()?;
        Ok(self.summary)
    }
}
