//! [`LogWriter`]: encodes events into a buffer and appends it to the log file.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use giving::{Event, Timestamp};

use super::encode::Encoder;
use super::error::LogError;
use super::header::LogHeader;

/// The buffer is written to the file once it holds this much.
const BUFFER: usize = 256 * 1024;

/// What a closed log holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSummary {
    /// The file.
    pub path: PathBuf,
    /// Events written.
    pub events: u64,
    /// Events the log's subscription dropped because it fell behind (bounded delivery only).
    pub dropped: u64,
    /// Lazy values that could not be resolved (written as nil).
    pub unresolved: u64,
    /// Size of the file in bytes.
    pub bytes: u64,
}

/// Writes a log file synchronously: the header, then events, then an end record on
/// [`close`](LogWriter::close). [`MsgpackLog`](super::MsgpackLog) runs one on its own thread;
/// use it directly to convert other data into a log.
///
/// ```
/// use giving::event;
/// use giving_instruments::log::{LogHeader, LogReader, LogWriter};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("converted.msgpack");
/// let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
/// writer.write(&event!(loss = 0.25, step = 1u64)).unwrap();
/// let summary = writer.close(0).unwrap();
/// assert_eq!(summary.events, 1);
/// assert_eq!(LogReader::open(&path).unwrap().count(), 1);
/// ```
pub struct LogWriter {
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
    events: u64,
    unresolved: u64,
    bytes: u64,
}

impl LogWriter {
    /// Creates (or truncates) the file and writes the header into the buffer.
    pub fn create(path: impl AsRef<Path>, header: &LogHeader) -> Result<Self, LogError> {
        let path = path.as_ref().to_path_buf();
        let file = File::create(&path).map_err(|source| LogError::Io {
            action: "create",
            path: path.clone(),
            source,
        })?;
        let mut buf = Vec::with_capacity(BUFFER + 4096);
        header.encode(&mut buf);
        Ok(Self {
            path,
            file,
            buf,
            events: 0,
            unresolved: 0,
            bytes: 0,
        })
    }

    /// Replaces the header, as long as nothing has reached the file yet.
    pub(crate) fn with_header(mut self, header: &LogHeader) -> Self {
        if self.bytes == 0 && self.events == 0 {
            self.buf.clear();
            header.encode(&mut self.buf);
        }
        self
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends an event (resolving its lazy values); the bytes reach the file when the buffer
    /// fills up or on [`flush`](LogWriter::flush).
    pub fn write(&mut self, event: &Event) -> Result<(), LogError> {
        let unresolved = Encoder { out: &mut self.buf }.event(event);
        self.unresolved += unresolved as u64;
        self.events += 1;
        if self.buf.len() >= BUFFER {
            self.write_out()?;
        }
        Ok(())
    }

    /// Whether some bytes are buffered and not yet handed to the file.
    pub fn has_buffered(&self) -> bool {
        !self.buf.is_empty()
    }

    fn io_error(&self, source: std::io::Error) -> LogError {
        LogError::Io {
            action: "write",
            path: self.path.clone(),
            source,
        }
    }

    fn write_out(&mut self) -> Result<(), LogError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        if let Err(error) = self.file.write_all(&self.buf) {
            self.buf.clear();
            return Err(self.io_error(error));
        }
        self.bytes += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Hands every buffered byte to the operating system: what was written survives the
    /// process being killed.
    pub fn flush(&mut self) -> Result<(), LogError> {
        self.write_out()?;
        self.file.flush().map_err(|e| self.io_error(e))
    }

    /// Writes the end record (with the count of `dropped` events), flushes and syncs the file.
    pub fn close(mut self, dropped: u64) -> Result<LogSummary, LogError> {
        let mut enc = Encoder { out: &mut self.buf };
        enc.map_len(3);
        enc.str("end");
        enc.uint(Timestamp::now().as_nanos());
        enc.str("events");
        enc.uint(self.events);
        enc.str("dropped");
        enc.uint(dropped);
        self.flush()?;
        self.file.sync_data().map_err(|e| self.io_error(e))?;
        Ok(LogSummary {
            path: self.path.clone(),
            events: self.events,
            dropped,
            unresolved: self.unresolved,
            bytes: self.bytes,
        })
    }
}

impl std::fmt::Debug for LogWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogWriter")
            .field("path", &self.path)
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}
