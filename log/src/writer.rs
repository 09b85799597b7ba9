//! [`LogWriter`]: encodes events into a buffer and appends it to the log file.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use giving::{Event, Timestamp};

use crate::encode::{Encoder, FieldRefusal};
use crate::error::LogError;
use crate::header::LogHeader;
use giving::panic_message;

/// The buffer is written to the file once it holds this much.
const BUFFER: usize = 256 * 1024;

/// How long giving-instruments' `MsgpackLog` keeps bytes buffered at most: they are handed
/// to the operating system (`write`, not `fsync`) this long after the first of them was
/// buffered, even while events keep coming, so a run killed with `SIGKILL` loses at most the
/// events the writer received in the last `FLUSH_EVERY`. (`MsgpackLog` receives the run's
/// events in batches every 500 ms, `WRITER_PACE`, and writes each batch out once taken: what a
/// kill loses is bounded by that pace.)
pub const FLUSH_EVERY: Duration = Duration::from_millis(200);

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
/// [`close`](LogWriter::close). giving-instruments' `MsgpackLog` runs one on its own thread;
/// use it directly to convert other data into a log.
///
/// Bytes are buffered and reach the file when 256 KiB are buffered, on
/// [`flush`](LogWriter::flush) and [`close`](LogWriter::close), and, with
/// [`flush_every`](LogWriter::flush_every), at the first write that finds them older than
/// that. An event the reader would refuse (nested deeper than 128, a record over 64 MiB) is
/// refused with [`LogError::Refused`] and nothing of it is written; a lazy value that panics
/// while being read is written as nil, with a field `$error` that says so.
///
/// ```
/// use giving::event;
/// use giving_log::{LogHeader, LogReader, LogWriter};
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
    /// The longest bytes stay buffered, when bounded.
    flush_every: Option<Duration>,
    /// When the oldest buffered byte was buffered (kept only with `flush_every`, and for the
    /// header).
    first_buffered: Option<Instant>,
    /// Written to a descriptor the caller opened (a pipe): never synced, never removed.
    pipe: bool,
    /// Written into a stream that carries other output (stdout): the bytes go out as voir's
    /// smuggled escape sequences.
    smuggle: bool,
}

impl LogWriter {
    /// Creates the file and writes the header into the buffer. An existing file is never
    /// overwritten: it is an error (`cannot create`), and the file is left as it was. A
    /// header the reader would refuse (over 1 MiB, an extra field named like a standard one
    /// or nested deeper than 128) is [`LogError::Refused`].
    pub fn create(path: impl AsRef<Path>, header: &LogHeader) -> Result<Self, LogError> {
        let path = path.as_ref().to_path_buf();
        let mut buf = Vec::with_capacity(BUFFER + 4096);
        if let Err((key, reason)) = header.encode(&mut buf) {
            return Err(refused(&path, "the header".to_owned(), key, reason));
        }
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|source| LogError::Io {
                action: "create",
                path: path.clone(),
                source,
            })?;
        Self::with_file(path, file, buf)
    }

    /// A writer to a file (or pipe) opened by the caller, `name` naming it in errors: a
    /// child's `DATA_FD`. Nothing is synced, and the file is never removed (not even when
    /// [`with_header`](LogWriter::with_header) refuses a header). The header is the default
    /// one until [`with_header`](LogWriter::with_header) replaces it.
    pub fn to_open_file(name: PathBuf, file: File) -> Result<Self, LogError> {
        let mut buf = Vec::with_capacity(BUFFER + 4096);
        if let Err((key, reason)) = LogHeader::default().encode(&mut buf) {
            return Err(refused(&name, "the header".to_owned(), key, reason));
        }
        let mut writer = Self::with_file(name, file, buf)?;
        writer.pipe = true;
        Ok(writer)
    }

    fn with_file(path: PathBuf, file: File, buf: Vec<u8>) -> Result<Self, LogError> {
        Ok(Self {
            path,
            file,
            buf,
            events: 0,
            unresolved: 0,
            bytes: 0,
            flush_every: None,
            first_buffered: Some(Instant::now()),
            pipe: false,
            smuggle: false,
        })
    }

    /// Writes the log's bytes as voir's smuggled escape sequences (`ESC [`, the bytes in hex
    /// with the digits `0-9:;<=>?`, `z`), for a stream that carries other output too: a
    /// child's stdout when a launcher (ssh) forwards nothing else. Each sequence fits one
    /// atomic pipe write, so lines the program prints meanwhile never cut one.
    pub fn smuggled(mut self) -> Self {
        self.smuggle = true;
        self
    }

    /// Bounds how long bytes stay buffered: each write hands them to the operating system once
    /// the oldest is `age` old (one clock read per write). giving-instruments' `MsgpackLog`
    /// uses [`FLUSH_EVERY`], and also writes them out on a timer when events stop coming.
    pub fn flush_every(mut self, age: Duration) -> Self {
        self.flush_every = Some(age);
        self
    }

    /// Replaces the header, as long as nothing has reached the file yet. A header the reader
    /// would refuse is an error, and the (empty) file is removed (unless the caller opened it,
    /// [`to_open_file`](LogWriter::to_open_file)). Once bytes have been written, the header
    /// stays as it was.
    pub fn with_header(mut self, header: &LogHeader) -> Result<Self, LogError> {
        if self.bytes == 0 && self.events == 0 {
            self.buf.clear();
            if let Err((key, reason)) = header.encode(&mut self.buf) {
                // Nothing will ever be written: leave no empty file behind (best effort).
                drop(self.file);
                if !self.pipe {
                    let _ = std::fs::remove_file(&self.path);
                }
                return Err(refused(&self.path, "the header".to_owned(), key, reason));
            }
            self.first_buffered = Some(Instant::now());
        }
        Ok(self)
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends an event (resolving its lazy values); the bytes reach the file when the buffer
    /// fills up, when they are older than [`flush_every`](LogWriter::flush_every), or on
    /// [`flush`](LogWriter::flush). An event the reader would refuse is not written
    /// ([`LogError::Refused`]); the writer stays usable.
    pub fn write(&mut self, event: &Event) -> Result<(), LogError> {
        let start = self.buf.len();
        let unresolved = match self.encode(event) {
            Ok(unresolved) => unresolved,
            Err((key, reason)) => {
                self.buf.truncate(start);
                let record = format!("event {}", self.events + 1);
                return Err(refused(&self.path, record, key, reason));
            }
        };
        self.unresolved += unresolved as u64;
        self.events += 1;
        self.write_out_if_due()
    }

    /// Encodes an event into the buffer; returns how many lazy values could not be resolved.
    /// A lazy value that panics while being read does not end the log: the event is written
    /// again with that value as nil and an `$error` field.
    fn encode(&mut self, event: &Event) -> Result<usize, FieldRefusal> {
        let start = self.buf.len();
        let mut enc = Encoder::new(&mut self.buf);
        let encoded = catch_unwind(AssertUnwindSafe(|| enc.event(event)));
        if let Ok(encoded) = encoded {
            return encoded.map(|()| enc.unresolved);
        }
        let panicked = enc.field;
        let message = encoded
            .err()
            .map(|panic| panic_message(panic.as_ref()))
            .unwrap_or_default();
        self.buf.truncate(start);
        let mut enc = Encoder::new(&mut self.buf);
        enc.event_after_panic(event, panicked, &message)?;
        Ok(enc.unresolved)
    }

    /// Writes the buffer out if it is full, or older than `flush_every`.
    fn write_out_if_due(&mut self) -> Result<(), LogError> {
        if self.buf.len() >= BUFFER {
            return self.write_out();
        }
        let Some(age) = self.flush_every else {
            return Ok(());
        };
        let now = Instant::now();
        match self.first_buffered {
            Some(first) if now.saturating_duration_since(first) >= age => self.write_out(),
            Some(_) => Ok(()),
            None => {
                self.first_buffered = Some(now);
                Ok(())
            }
        }
    }

    /// When the buffered bytes must be written out, with
    /// [`flush_every`](LogWriter::flush_every): for a timer that writes them out when no
    /// event comes to do it.
    pub fn write_out_deadline(&self) -> Option<Instant> {
        match (self.first_buffered, self.flush_every) {
            (Some(first), Some(age)) if !self.buf.is_empty() => Some(first + age),
            _ => None,
        }
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
        self.first_buffered = None;
        let written = if self.smuggle {
            write_smuggled(&mut self.file, &self.buf)
        } else {
            self.file.write_all(&self.buf)
        };
        if let Err(error) = written {
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
        let mut enc = Encoder::new(&mut self.buf);
        enc.map_len(3);
        enc.str("end");
        enc.uint(Timestamp::now().as_nanos());
        enc.str("events");
        enc.uint(self.events);
        enc.str("dropped");
        enc.uint(dropped);
        self.flush()?;
        // A pipe (the suite protocol's `DATA_FD`) cannot be synced, and need not be.
        if !self.pipe {
            self.file.sync_data().map_err(|e| self.io_error(e))?;
        }
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

/// Bytes of payload per smuggled sequence: `ESC [`, two digits per byte and `z` stay within
/// `PIPE_BUF` (4096), the size of a write that other writers to the pipe cannot cut.
const SMUGGLED_CHUNK: usize = 2046;

/// Writes `bytes` to `out` as smuggled escape sequences, one write each.
fn write_smuggled(out: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    let mut sequence = Vec::with_capacity(2 * SMUGGLED_CHUNK + 3);
    for chunk in bytes.chunks(SMUGGLED_CHUNK) {
        sequence.clear();
        sequence.extend_from_slice(b"\x1b[");
        for b in chunk {
            sequence.push(0x30 + (b >> 4));
            sequence.push(0x30 + (b & 15));
        }
        sequence.push(b'z');
        out.write_all(&sequence)?;
    }
    Ok(())
}

/// The error for a record that is not written.
fn refused(path: &Path, record: String, key: String, reason: String) -> LogError {
    LogError::Refused {
        path: path.to_path_buf(),
        record,
        key,
        reason,
    }
}
