//! Reading a log back: [`LogReader`] (an iterator) and [`read`] (a stream).
//!
//! Reading is linear in the file's size and its memory is bounded by the largest record:
//! declared lengths are checked against what remains in the file before anything is
//! reserved, a record that spans several chunks is first measured without decoding it, and
//! the buffer grows by doubling. Bytes that are not a record are skipped up to the next place
//! where a record starts (see [`LogReader`]).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use giving::Event;

use crate::decode::{DecodeError, Decoder, KeyCache, Record};
use crate::error::LogError;
use crate::format::{FORMAT_VERSION, MAX_HEADER, MAX_RECORD};
use crate::header::LogHeader;

/// How much is read from the file at a time (at least: more to double a long record's bytes).
const CHUNK: usize = 256 * 1024;

/// How many damaged regions [`LogReader::damage`] describes (all are counted).
const DAMAGE_KEPT: usize = 100;

/// The end record of a log closed cleanly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogEnd {
    /// How many events the writer wrote.
    pub events: u64,
    /// How many events its subscription dropped (bounded delivery only).
    pub dropped: u64,
}

/// A damaged region of a log: bytes that were not a record, skipped by the reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogDamage {
    /// Where the bad bytes start.
    pub offset: u64,
    /// How many bytes were skipped (to the next record, or to the end of the file).
    pub skipped: u64,
    /// What was wrong at `offset`.
    pub reason: String,
}

/// Reads a log event by event; an [`Iterator`] of `Result<Event, LogError>`.
///
/// Every complete event is yielded, in order, with its original timestamp. If the log is cut
/// (its writer was killed, the disk filled up), the last item is a [`LogError::Truncated`]
/// that says where. Bytes that are not a record (a damaged file) give a
/// [`LogError::Corrupt`] that says where they start and how many bytes were skipped; reading
/// then goes on at the next place where a record starts (a map with `time` and `data`, or
/// `end`, followed by another record or the end of the file), so the events after the damage
/// are still read. [`skipped_bytes`](LogReader::skipped_bytes) and
/// [`damaged_regions`](LogReader::damaged_regions) count the damage.
///
/// ```
/// use giving::event;
/// use giving_log::{LogHeader, LogReader, LogWriter};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("run.msgpack");
/// let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
/// writer.write(&event!(loss = 0.5)).unwrap();
/// writer.close(0).unwrap();
///
/// let events: Vec<_> = LogReader::open(&path).unwrap().collect::<Result<_, _>>().unwrap();
/// assert_eq!(events[0].get_as::<f64>("loss").unwrap(), 0.5);
/// ```
pub struct LogReader {
    path: PathBuf,
    file: Source,
    buf: Vec<u8>,
    /// Where the next record starts in `buf`.
    start: usize,
    /// The file offset of `buf[0]`.
    base: u64,
    eof: bool,
    done: bool,
    /// How long the file is, as far as known: its size when opened, or more if it grew
    /// (`u64::MAX` when it is not a regular file and has no size).
    file_len: u64,
    /// The last record read, if it was an end record: (events, dropped).
    ended: Option<LogEnd>,
    records: u64,
    keys: KeyCache,
    header: LogHeader,
    skipped: u64,
    regions: u64,
    damage: Vec<LogDamage>,
    /// Whether the last damaged region runs to the end of the file (no record followed).
    damaged_to_end: bool,
}

/// Where the bytes come from: a file (which may still be growing) or memory.
enum Source {
    File(File),
    Memory(std::io::Cursor<Vec<u8>>),
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Source::File(file) => file.read(buf),
            Source::Memory(bytes) => bytes.read(buf),
        }
    }
}

/// What stops a record from being read where the reader is.
enum Fault {
    /// The file could not be read.
    Io(LogError),
    /// The bytes are not a whole record.
    Decode(DecodeError),
}

impl From<LogError> for Fault {
    fn from(error: LogError) -> Self {
        Fault::Io(error)
    }
}

/// What the bytes at a place where reading could resume are.
enum Candidate {
    /// A record, followed by another or by the end of the file.
    Record,
    /// Not a record.
    Not,
    /// More bytes are needed to tell.
    NeedMore,
}

impl LogReader {
    /// Opens a log and reads its header; refuses a file that is not a giving log.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LogError> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(|source| LogError::Io {
            action: "open",
            path: path.clone(),
            source,
        })?;
        let file_len = match file.metadata() {
            Ok(meta) if meta.is_file() => meta.len(),
            _ => u64::MAX,
        };
        Self::from_source(path, Source::File(file), file_len)
    }

    /// Reads a log held in memory (received over a pipe, a socket, a fuzz case); `name`
    /// stands for its path in errors and in [`path`](LogReader::path).
    ///
    /// ```
    /// use giving::event;
    /// use giving_log::{LogHeader, LogReader, LogWriter};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("run.msgpack");
    /// let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
    /// writer.write(&event!(loss = 0.5)).unwrap();
    /// writer.close(0).unwrap();
    ///
    /// let bytes = std::fs::read(&path).unwrap();
    /// let mut reader = LogReader::from_bytes("received", bytes).unwrap();
    /// assert_eq!(reader.by_ref().count(), 1);
    /// assert_eq!(reader.end().unwrap().events, 1);
    /// ```
    pub fn from_bytes(name: impl Into<PathBuf>, bytes: Vec<u8>) -> Result<Self, LogError> {
        let len = bytes.len() as u64;
        Self::from_source(
            name.into(),
            Source::Memory(std::io::Cursor::new(bytes)),
            len,
        )
    }

    fn from_source(path: PathBuf, file: Source, file_len: u64) -> Result<Self, LogError> {
        let mut reader = LogReader {
            path,
            file,
            buf: Vec::with_capacity(CHUNK),
            start: 0,
            base: 0,
            eof: false,
            done: false,
            file_len,
            ended: None,
            records: 0,
            keys: KeyCache::default(),
            header: LogHeader::default(),
            skipped: 0,
            regions: 0,
            damage: Vec::new(),
            damaged_to_end: false,
        };
        reader.header = reader.read_header()?;
        Ok(reader)
    }

    fn not_a_log(&self, reason: impl Into<String>) -> LogError {
        LogError::NotALog {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    fn read_header(&mut self) -> Result<LogHeader, LogError> {
        loop {
            // A header is looked for in the first MAX_HEADER bytes only.
            let window = &self.buf[..self.buf.len().min(MAX_HEADER)];
            let avail = self.file_len.min(MAX_HEADER as u64);
            let mut decoder = Decoder::within(window, avail);
            match decoder.header_fields() {
                Ok(fields) => {
                    self.start = decoder.position();
                    let header = LogHeader::from_fields(fields).map_err(|r| self.not_a_log(r))?;
                    if header.version > FORMAT_VERSION {
                        return Err(LogError::UnsupportedVersion {
                            path: self.path.clone(),
                            version: header.version,
                        });
                    }
                    return Ok(header);
                }
                Err(DecodeError::Invalid(reason)) => {
                    return Err(
                        self.not_a_log(format!("it does not start with a header: {reason}"))
                    );
                }
                Err(DecodeError::Incomplete)
                    if !self.eof && self.buf.len() < MAX_HEADER && self.file_len > 0 =>
                {
                    self.refill()?;
                }
                Err(_) if self.buf.is_empty() && (self.eof || self.file_len == 0) => {
                    return Err(self.not_a_log("the file is empty"));
                }
                Err(_) => {
                    return Err(
                        self.not_a_log("it does not start with a complete giving-log header")
                    );
                }
            }
        }
    }

    /// Reads more of the file after what is not consumed yet: at least [`CHUNK`], and at
    /// least as much as is buffered, so that a long record is re-measured a logarithmic number
    /// of times (reading stays linear in its length).
    fn refill(&mut self) -> Result<(), LogError> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.base += self.start as u64;
            self.start = 0;
        }
        let len = self.buf.len();
        let want = CHUNK.max(len);
        self.buf.resize(len + want, 0);
        let mut filled = 0;
        while filled < want {
            match self.file.read(&mut self.buf[len + filled..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    self.buf.truncate(len + filled);
                    return Err(LogError::Io {
                        action: "read",
                        path: self.path.clone(),
                        source,
                    });
                }
            }
        }
        self.buf.truncate(len + filled);
        self.file_len = self.file_len.max(self.offset() + self.unread() as u64);
        Ok(())
    }

    /// The file offset where the next record starts.
    fn offset(&self) -> u64 {
        self.base + self.start as u64
    }

    /// Bytes buffered after the position.
    fn unread(&self) -> usize {
        self.buf.len() - self.start
    }

    /// How many bytes the file holds from the position on.
    fn avail(&self) -> u64 {
        self.file_len.saturating_sub(self.offset())
    }

    /// Whether the file is longer than it was known to be (it is still being written): then a
    /// record that seemed to run past its end may be complete.
    fn file_grew(&mut self) -> bool {
        let Source::File(file) = &self.file else {
            return false;
        };
        let len = match file.metadata() {
            Ok(meta) if meta.is_file() => meta.len(),
            _ => return false,
        };
        let grew = len > self.file_len;
        if grew {
            self.file_len = len;
            self.eof = false;
        }
        grew
    }

    /// The log's header: format version, start time, command line, host, crate versions.
    pub fn header(&self) -> &LogHeader {
        &self.header
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The end record, once the reader has reached it: `None` while reading, and for a log
    /// whose writer did not close it.
    pub fn end(&self) -> Option<LogEnd> {
        self.ended
    }

    /// How many events have been read so far.
    pub fn events_read(&self) -> u64 {
        self.records
    }

    /// How many bytes were skipped so far because they were not records (0 for an intact
    /// log; a cut at the end is not counted).
    pub fn skipped_bytes(&self) -> u64 {
        self.skipped
    }

    /// How many damaged regions were found so far: each is a [`LogError::Corrupt`] item.
    pub fn damaged_regions(&self) -> u64 {
        self.regions
    }

    /// The damaged regions found so far (the first 100 of them).
    pub fn damage(&self) -> &[LogDamage] {
        &self.damage
    }

    /// Whether the last damaged region runs to the end of the file: no record followed it.
    pub(crate) fn ends_in_damage(&self) -> bool {
        self.damaged_to_end
    }

    /// The capacity of the reader's buffer, in bytes: it stays within about twice the largest
    /// record, whatever the file's size or damage (for tests).
    #[doc(hidden)]
    pub fn buffer_capacity(&self) -> usize {
        self.buf.capacity()
    }

    fn next_event(&mut self) -> Option<Result<Event, LogError>> {
        let mut measured = false;
        loop {
            if self.start == self.buf.len() {
                if self.eof {
                    return self.clean_end();
                }
                if let Err(error) = self.refill() {
                    return Some(Err(error));
                }
                continue;
            }
            let mut decoder = Decoder::within(&self.buf[self.start..], self.avail());
            match decoder.record(&mut self.keys) {
                Ok(Record::Event(event)) => {
                    self.start += decoder.position();
                    self.records += 1;
                    self.ended = None;
                    return Some(Ok(event));
                }
                Ok(Record::End { events, dropped }) => {
                    self.start += decoder.position();
                    self.ended = Some(LogEnd { events, dropped });
                    measured = false;
                }
                // The record goes on past the buffer: measure it, reading what it needs.
                Err(DecodeError::Incomplete) if !measured => match self.await_record() {
                    Ok(()) => measured = true,
                    Err(Fault::Io(error)) => return Some(Err(error)),
                    Err(Fault::Decode(fault)) => return self.after_fault(fault),
                },
                Err(DecodeError::Overrun(_)) if self.file_grew() => measured = false,
                Err(DecodeError::Incomplete) => {
                    let reason = "a record's bytes do not decode as they measure".to_owned();
                    return self.after_fault(DecodeError::Invalid(reason));
                }
                Err(fault) => return self.after_fault(fault),
            }
        }
    }

    /// The file ends on a record boundary: the end of a closed log, or a log whose writer
    /// did not close it.
    fn clean_end(&mut self) -> Option<Result<Event, LogError>> {
        if self.ended.is_some() {
            return None;
        }
        Some(Err(LogError::Truncated {
            path: self.path.clone(),
            offset: self.offset(),
            records: self.records,
            partial: 0,
        }))
    }

    /// Reads until the record at the position is wholly buffered, without decoding it (so a
    /// corrupt length that makes it seem to go on allocates nothing).
    fn await_record(&mut self) -> Result<(), Fault> {
        loop {
            let mut decoder = Decoder::within(&self.buf[self.start..], self.avail());
            match decoder.skip_record() {
                Ok(()) => return Ok(()),
                Err(DecodeError::Incomplete) if self.unread() >= MAX_RECORD => {
                    return Err(Fault::Decode(DecodeError::Invalid(format!(
                        "no record ends within {} MiB",
                        MAX_RECORD >> 20
                    ))));
                }
                Err(DecodeError::Incomplete) if !self.eof => self.refill()?,
                Err(DecodeError::Overrun(_)) if self.file_grew() => {}
                Err(fault) => return Err(Fault::Decode(fault)),
            }
        }
    }

    /// The bytes at the position are not a whole record: skips to the next record and
    /// reports the damage, or reports the cut when no record follows a record that runs past
    /// the end of the file.
    fn after_fault(&mut self, fault: DecodeError) -> Option<Result<Event, LogError>> {
        let offset = self.offset();
        let found = match self.resync() {
            Ok(found) => found,
            Err(error) => {
                self.done = true;
                return Some(Err(error));
            }
        };
        let skipped = self.offset() - offset;
        let reason = match fault {
            DecodeError::Invalid(reason) => reason,
            // Nothing follows a record that runs past the end: the file was cut in it.
            _ if !found => {
                self.done = true;
                return Some(Err(LogError::Truncated {
                    path: self.path.clone(),
                    offset,
                    records: self.records,
                    partial: skipped,
                }));
            }
            DecodeError::Overrun(reason) => format!("{reason} (a corrupt length)"),
            DecodeError::Incomplete => "a record runs past the end of the file".to_owned(),
        };
        self.done = !found;
        self.damaged_to_end = !found;
        Some(Err(self.damaged(offset, skipped, reason)))
    }

    /// Counts a damaged region and describes it.
    fn damaged(&mut self, offset: u64, skipped: u64, reason: String) -> LogError {
        self.skipped += skipped;
        self.regions += 1;
        if self.damage.len() < DAMAGE_KEPT {
            self.damage.push(LogDamage {
                offset,
                skipped,
                reason: reason.clone(),
            });
        }
        LogError::Corrupt {
            path: self.path.clone(),
            offset,
            records: self.records,
            reason,
            skipped,
        }
    }

    /// Moves the position past the bad byte at it to the next place where a record starts:
    /// `true`, or `false` at the end of the file when there is none. The skipped bytes are
    /// dropped from the buffer as the search goes.
    fn resync(&mut self) -> Result<bool, LogError> {
        self.start = (self.start + 1).min(self.buf.len());
        loop {
            match self.buf[self.start..]
                .iter()
                .position(|b| is_map_marker(*b))
            {
                Some(found) => self.start += found,
                None if self.eof => {
                    self.start = self.buf.len();
                    return Ok(false);
                }
                None => {
                    self.start = self.buf.len();
                    self.refill()?;
                    continue;
                }
            }
            match self.candidate() {
                Candidate::Record => return Ok(true),
                Candidate::Not => self.start += 1,
                Candidate::NeedMore if self.eof => self.start += 1,
                Candidate::NeedMore => self.refill()?,
            }
        }
    }

    /// Whether reading can resume at the position: a record is there, followed by another
    /// record (whole, or cut by the end of the file) or by the end of the file. Asking for the
    /// second keeps a stray map inside damaged bytes from passing for a record.
    fn candidate(&self) -> Candidate {
        let avail = self.avail();
        let bytes = &self.buf[self.start..];
        let mut first = Decoder::within(bytes, avail);
        match first.skip_record() {
            Ok(()) => {}
            Err(DecodeError::Incomplete) if bytes.len() < MAX_RECORD => return Candidate::NeedMore,
            Err(_) => return Candidate::Not,
        }
        let len = first.position();
        let mut second = Decoder::within(&bytes[len..], avail - len as u64);
        match second.skip_record() {
            Ok(()) | Err(DecodeError::Overrun(_)) => Candidate::Record,
            Err(DecodeError::Incomplete) if bytes.len() - len < MAX_RECORD => Candidate::NeedMore,
            Err(DecodeError::Incomplete) => Candidate::Record,
            Err(DecodeError::Invalid(_)) => Candidate::Not,
        }
    }
}

/// Whether `byte` starts a MessagePack map, as every record does.
fn is_map_marker(byte: u8) -> bool {
    matches!(byte, 0x80..=0x8f | 0xde | 0xdf)
}

impl Iterator for LogReader {
    type Item = Result<Event, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_event();
        // Damage that reading resumed after is not the end; anything else that is not an
        // event is.
        match &item {
            Some(Ok(_)) => {}
            Some(Err(LogError::Corrupt { .. })) if !self.done => {}
            _ => self.done = true,
        }
        item
    }
}

impl std::fmt::Debug for LogReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogReader")
            .field("path", &self.path)
            .field("events_read", &self.records)
            .finish_non_exhaustive()
    }
}

/// Opens a log as a [`Stream`] of its events (see [`LogReader`] for what it yields): a file
/// that is not a giving log is refused here, with an error that says why.
///
/// The stream reads the file in 256 KiB chunks from inside `poll_next` (local files answer
/// quickly); wrap it in `spawn_blocking` if the file is on a slow network mount.
///
/// ```
/// use giving::prelude::*;
/// use giving::event;
/// use giving_log::{self as log, LogHeader, LogWriter};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("run.msgpack");
/// let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
/// for step in 0..3u64 {
///     writer.write(&event!(step)).unwrap();
/// }
/// writer.close(0).unwrap();
///
/// let steps: Vec<u64> = futures::executor::block_on(async {
///     log::read(&path).unwrap().filter_map(Result::ok).key::<u64>("step").collect().await
/// });
/// assert_eq!(steps, vec![0, 1, 2]);
///
/// std::fs::write(dir.path().join("notes.txt"), "hello").unwrap();
/// let error = log::read(dir.path().join("notes.txt")).unwrap_err();
/// assert!(error.to_string().contains("is not a giving log"));
/// ```
pub fn read(path: impl AsRef<Path>) -> Result<LogStream, LogError> {
    LogReader::open(path).map(|reader| LogStream { reader })
}

/// The [`Stream`] of [`read`]: every complete event, an error for each damaged region, then an
/// error if the log is cut.
#[derive(Debug)]
pub struct LogStream {
    reader: LogReader,
}

impl LogStream {
    /// The log's header.
    pub fn header(&self) -> &LogHeader {
        self.reader.header()
    }
}

impl Stream for LogStream {
    type Item = Result<Event, LogError>;

    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.reader.next())
    }
}
