//! Decoding log records from a stream that arrives in pieces (a pipe): the runner's side of
//! the child-process protocol (`docs/protocol.md`).

use giving::Event;

use crate::decode::{DecodeError, Decoder, KeyCache};
use crate::header::LogHeader;

/// Bytes a stream may still deliver: large enough that a record is never "past the end".
const UNBOUNDED: u64 = u64::MAX / 2;

/// What a [`StreamDecoder`] found.
#[derive(Debug)]
pub enum StreamItem {
    /// A log header: a writer started (a process may write several, one per run).
    Header(Box<LogHeader>),
    /// An event.
    Event(Event),
    /// An end record: a writer closed cleanly after `events` events.
    End {
        /// Events the writer wrote.
        events: u64,
        /// Events its subscription dropped.
        dropped: u64,
    },
    /// Bytes that are not records, skipped: how many, and what the first of them was.
    Garbage {
        /// How many bytes were skipped.
        skipped: usize,
        /// Why the first of them could not be read.
        reason: String,
    },
}

/// Decodes headers, events and end records from bytes pushed as they arrive; bytes that form
/// no record are skipped and reported once per damaged stretch, never fatal.
///
/// ```
/// use giving::event;
/// use giving_log::{LogHeader, LogWriter, StreamDecoder, StreamItem};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("l.msgpack");
/// let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
/// writer.write(&event!(loss = 0.5)).unwrap();
/// writer.close(0).unwrap();
/// let bytes = std::fs::read(&path).unwrap();
///
/// let mut decoder = StreamDecoder::new();
/// let (first, rest) = bytes.split_at(bytes.len() / 2);
/// let mut items = Vec::new();
/// for piece in [first, b"junk".as_slice(), rest] {
///     decoder.push(piece);
///     items.extend(std::iter::from_fn(|| decoder.next_item()));
/// }
/// assert!(matches!(items[0], StreamItem::Header(_)));
/// ```
#[derive(Default)]
pub struct StreamDecoder {
    buf: Vec<u8>,
    start: usize,
    keys: KeyCache,
}

impl StreamDecoder {
    /// A decoder with nothing buffered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes buffered and not yet decoded (a record cut by the end of the stream, when it has
    /// ended).
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The next complete item, or `None` until more bytes are pushed.
    pub fn next_item(&mut self) -> Option<StreamItem> {
        if self.pending() == 0 {
            return None;
        }
        match self.try_at(self.start) {
            Ok(Some((item, len))) => {
                self.start += len;
                Some(item)
            }
            Ok(None) => None,
            Err(reason) => {
                // Skip to the next offset where a record could start (or might, once more
                // bytes arrive).
                let from = self.start;
                let mut at = from + 1;
                while at < self.buf.len() && self.try_at(at).is_err() {
                    at += 1;
                }
                self.start = at;
                Some(StreamItem::Garbage {
                    skipped: at - from,
                    reason,
                })
            }
        }
    }

    /// Decodes at `at`: an item and its length, `None` when more bytes are needed, or why
    /// these bytes are not a record.
    fn try_at(&mut self, at: usize) -> Result<Option<(StreamItem, usize)>, String> {
        let bytes = &self.buf[at..];
        let mut decoder = Decoder::within(bytes, UNBOUNDED);
        let first = match decoder.record(&mut self.keys) {
            Ok(crate::decode::Record::Event(event)) => {
                return Ok(Some((StreamItem::Event(event), decoder.position())));
            }
            Ok(crate::decode::Record::End { events, dropped }) => {
                return Ok(Some((
                    StreamItem::End { events, dropped },
                    decoder.position(),
                )));
            }
            Err(DecodeError::Incomplete) => return Ok(None),
            Err(DecodeError::Invalid(reason) | DecodeError::Overrun(reason)) => reason,
        };
        let mut decoder = Decoder::within(bytes, UNBOUNDED);
        match decoder.header_fields() {
            Ok(fields) => match LogHeader::from_fields(fields) {
                Ok(header) => Ok(Some((
                    StreamItem::Header(Box::new(header)),
                    decoder.position(),
                ))),
                Err(_) => Err(first),
            },
            Err(DecodeError::Incomplete) => Ok(None),
            Err(_) => Err(first),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_between_records_is_skipped_and_reported_once() {
        let mut out = Vec::new();
        let mut enc = crate::encode::Encoder::new(&mut out);
        enc.event(&giving::event!(a = 1u64)).unwrap();
        let record = out.clone();
        let mut decoder = StreamDecoder::new();
        decoder.push(&record);
        decoder.push(b"\xc1\xc1garbage");
        decoder.push(&record);
        let items: Vec<_> = std::iter::from_fn(|| decoder.next_item()).collect();
        assert_eq!(items.len(), 3, "{items:?}");
        assert!(matches!(items[0], StreamItem::Event(_)));
        assert!(
            matches!(items[1], StreamItem::Garbage { skipped: 9, .. }),
            "{items:?}"
        );
        assert!(matches!(items[2], StreamItem::Event(_)));
        assert_eq!(decoder.pending(), 0);
    }

    #[test]
    fn a_record_split_anywhere_waits_for_its_end() {
        let mut out = Vec::new();
        let mut enc = crate::encode::Encoder::new(&mut out);
        enc.event(&giving::event!(loss = 0.5, task = "train"))
            .unwrap();
        for cut in 1..out.len() {
            let mut decoder = StreamDecoder::new();
            decoder.push(&out[..cut]);
            assert!(decoder.next_item().is_none(), "cut at {cut}");
            decoder.push(&out[cut..]);
            assert!(matches!(decoder.next_item(), Some(StreamItem::Event(_))));
        }
    }
}
