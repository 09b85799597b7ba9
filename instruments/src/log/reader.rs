//! Reading a log back: [`LogReader`] (an iterator) and [`read`] (a stream).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use giving::Event;

use super::decode::{DecodeError, Decoder, KeyCache, Record};
use super::error::LogError;
use super::header::{FORMAT_VERSION, LogHeader};

/// How much is read from the file at a time.
const CHUNK: usize = 256 * 1024;

/// A header larger than this is not looked for: the file is refused.
const MAX_HEADER: usize = 1 << 20;

/// The end record of a log closed cleanly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogEnd {
    /// How many events the writer wrote.
    pub events: u64,
    /// How many events its subscription dropped (bounded delivery only).
    pub dropped: u64,
}

/// Reads a log event by event; an [`Iterator`] of `Result<Event, LogError>`.
///
/// Every complete event is yielded, in order, with its original timestamp. If the log is cut
/// (its writer was killed, the disk filled up), the last item is a [`LogError::Truncated`]
/// that says where; bytes that are not a record end it with [`LogError::Corrupt`].
///
/// ```
/// use giving::event;
/// use giving_instruments::log::{LogHeader, LogReader, LogWriter};
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
    file: File,
    buf: Vec<u8>,
    /// Where the next record starts in `buf`.
    start: usize,
    /// The file offset of `buf[0]`.
    base: u64,
    eof: bool,
    done: bool,
    /// The last record read, if it was an end record: (events, dropped).
    ended: Option<LogEnd>,
    records: u64,
    keys: KeyCache,
    header: LogHeader,
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
        let mut reader = LogReader {
            path,
            file,
            buf: Vec::with_capacity(CHUNK),
            start: 0,
            base: 0,
            eof: false,
            done: false,
            ended: None,
            records: 0,
            keys: KeyCache::default(),
            header: LogHeader::default(),
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
            let mut decoder = Decoder::new(&self.buf);
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
                Err(DecodeError::Incomplete) if self.eof || self.buf.len() >= MAX_HEADER => {
                    return Err(self.not_a_log(if self.buf.is_empty() {
                        "the file is empty".to_owned()
                    } else {
                        "it does not start with a complete giving-log header".to_owned()
                    }));
                }
                Err(DecodeError::Incomplete) => self.refill()?,
            }
        }
    }

    /// Reads more of the file after what is not consumed yet.
    fn refill(&mut self) -> Result<(), LogError> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.base += self.start as u64;
            self.start = 0;
        }
        let len = self.buf.len();
        self.buf.resize(len + CHUNK, 0);
        let read = loop {
            match self.file.read(&mut self.buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    self.buf.truncate(len);
                    return Err(LogError::Io {
                        action: "read",
                        path: self.path.clone(),
                        source,
                    });
                }
            }
        };
        self.buf.truncate(len + read);
        self.eof = read == 0;
        Ok(())
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

    fn next_event(&mut self) -> Option<Result<Event, LogError>> {
        loop {
            let mut decoder = Decoder::new(&self.buf[self.start..]);
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
                }
                Err(DecodeError::Incomplete) if !self.eof => {
                    if let Err(error) = self.refill() {
                        return Some(Err(error));
                    }
                }
                Err(DecodeError::Incomplete) => {
                    let partial = (self.buf.len() - self.start) as u64;
                    if partial == 0 && self.ended.is_some() {
                        return None;
                    }
                    return Some(Err(LogError::Truncated {
                        path: self.path.clone(),
                        offset: self.base + self.start as u64,
                        records: self.records,
                        partial,
                    }));
                }
                Err(DecodeError::Invalid(reason)) => {
                    return Some(Err(LogError::Corrupt {
                        path: self.path.clone(),
                        offset: self.base + self.start as u64,
                        records: self.records,
                        reason,
                    }));
                }
            }
        }
    }
}

impl Iterator for LogReader {
    type Item = Result<Event, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_event();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
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
/// use giving_instruments::log::{self, LogHeader, LogWriter};
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

/// The [`Stream`] of [`read`]: every complete event, then an error if the log is cut.
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
