//! MessagePack decoding of log records, from a byte slice that may end in the middle of a
//! record: `Incomplete` (more bytes needed) is told apart from `Overrun` (the record would end
//! past the end of the file: cut, or a corrupt length) and from `Invalid` (bytes that no log
//! contains).
//!
//! Declared lengths are checked against what remains in the file and against
//! [`MAX_RECORD`] before anything is read or reserved, so a corrupt length costs nothing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use giving::{Event, Key, Timestamp, Value};

use crate::format::{MAX_DEPTH, MAX_RECORD};

/// Why a record could not be decoded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DecodeError {
    /// The bytes end before the record does; the file has more.
    Incomplete,
    /// The record would end past the end of the file (the message says where): the file was
    /// cut inside it, or a length in it is corrupt.
    Overrun(String),
    /// The bytes are not a record of this format; the message says what was found.
    Invalid(String),
}

type Result<T> = std::result::Result<T, DecodeError>;

/// One record after the header.
pub(crate) enum Record {
    /// An event.
    Event(Event),
    /// The end record written when a log is closed cleanly.
    End {
        /// How many events the writer wrote.
        events: u64,
        /// How many events the writer's subscription dropped.
        dropped: u64,
    },
}

/// Field names seen by a reader, shared as `&'static str` so that reading an event allocates
/// nothing for its keys. Names are interned process-wide, up to [`MAX_INTERNED`] of them;
/// past that, keys are allocated per event.
#[derive(Default)]
pub(crate) struct KeyCache {
    /// The first keys seen, searched linearly: logs have few distinct keys, and comparing a
    /// few short byte strings is faster than hashing.
    recent: Vec<(Box<[u8]>, &'static str)>,
    local: HashMap<Box<[u8]>, &'static str>,
    /// The fields of the record being read (reused, so reading allocates no vector).
    fields: Vec<(Key, Value)>,
}

/// Keys kept in [`KeyCache::recent`].
const RECENT: usize = 32;

const MAX_INTERNED: usize = 4096;

static INTERNED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

impl KeyCache {
    fn key(&mut self, bytes: &[u8]) -> Result<Key> {
        if let Some((_, key)) = self.recent.iter().find(|(k, _)| **k == *bytes) {
            return Ok(Key::from_static(key));
        }
        if let Some(key) = self.local.get(bytes) {
            return Ok(Key::from_static(key));
        }
        let text = utf8(bytes)?;
        let mut interned = INTERNED.lock().unwrap_or_else(PoisonError::into_inner);
        let set = interned.get_or_insert_with(HashSet::new);
        let key: &'static str = match set.get(text) {
            Some(key) => key,
            None if set.len() < MAX_INTERNED => {
                let key: &'static str = Box::leak(text.to_owned().into_boxed_str());
                set.insert(key);
                key
            }
            None => return Ok(Key::from(text.to_owned())),
        };
        if self.recent.len() < RECENT {
            self.recent.push((bytes.into(), key));
        } else {
            self.local.insert(bytes.into(), key);
        }
        Ok(Key::from_static(key))
    }
}

fn utf8(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes)
        .map_err(|_| DecodeError::Invalid("a string is not valid UTF-8".to_owned()))
}

/// A cursor over bytes holding whole or partial records.
pub(crate) struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    /// How many bytes the file holds from `buf[0]` on (at least `buf.len()`).
    avail: u64,
}

impl<'a> Decoder<'a> {
    /// A decoder for `buf`, the first bytes of the `avail` the file holds from there on.
    pub(crate) fn within(buf: &'a [u8], avail: u64) -> Self {
        Self {
            buf,
            pos: 0,
            avail: avail.max(buf.len() as u64),
        }
    }

    /// Bytes consumed so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// How many bytes the file holds after the position.
    fn remaining(&self) -> u64 {
        self.avail - self.pos as u64
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.saturating_add(n);
        match self.buf.get(self.pos..end) {
            Some(bytes) => {
                self.pos = end;
                Ok(bytes)
            }
            None => Err(self.short_of(n)),
        }
    }

    /// Why `n` bytes cannot be taken: the buffer ends first, or the file does.
    #[cold]
    fn short_of(&self, n: usize) -> DecodeError {
        if n as u64 > self.remaining() {
            DecodeError::Overrun(format!(
                "{n} bytes are needed where the file has {} left",
                self.remaining()
            ))
        } else {
            DecodeError::Incomplete
        }
    }

    /// Checks a declared count of items, each at least `min_bytes` long, before reading them:
    /// a count that the rest of the file cannot hold is an overrun.
    fn check_count(&self, len: usize, min_bytes: u64) -> Result<()> {
        if len > MAX_RECORD {
            return Err(DecodeError::Invalid(format!(
                "{len} items are declared: more than a record may hold"
            )));
        }
        if (len as u64).saturating_mul(min_bytes) > self.remaining() {
            return Err(DecodeError::Overrun(format!(
                "{len} items are declared where the file has {} bytes left",
                self.remaining()
            )));
        }
        Ok(())
    }

    /// Checks a declared length of bytes before taking them.
    fn check_len(len: usize) -> Result<usize> {
        if len > MAX_RECORD {
            return Err(DecodeError::Invalid(format!(
                "a length of {len} bytes is declared: more than a record may hold"
            )));
        }
        Ok(len)
    }

    fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn be(&mut self, n: usize) -> Result<u64> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    /// The length that follows a str/bin/array/map marker of `n` length bytes.
    fn len(&mut self, n: usize) -> Result<usize> {
        usize::try_from(self.be(n)?).map_err(|_| DecodeError::Invalid("length too large".into()))
    }

    /// If the next item is a string, its bytes.
    fn str_bytes(&mut self, marker: u8) -> Result<Option<&'a [u8]>> {
        let len = match marker {
            0xa0..=0xbf => usize::from(marker & 0x1f),
            0xd9 => self.len(1)?,
            0xda => self.len(2)?,
            0xdb => Self::check_len(self.len(4)?)?,
            _ => return Ok(None),
        };
        self.take(len).map(Some)
    }

    /// If the next item is a map, its number of entries (each at least two bytes).
    fn map_len(&mut self, marker: u8) -> Result<Option<usize>> {
        let len = match marker {
            0x80..=0x8f => usize::from(marker & 0x0f),
            0xde => self.len(2)?,
            0xdf => self.len(4)?,
            _ => return Ok(None),
        };
        self.check_count(len, 2)?;
        Ok(Some(len))
    }

    /// If the next item is a list, its number of items (each at least one byte).
    fn array_len(&mut self, marker: u8) -> Result<Option<usize>> {
        let len = match marker {
            0x90..=0x9f => usize::from(marker & 0x0f),
            0xdc => self.len(2)?,
            0xdd => self.len(4)?,
            _ => return Ok(None),
        };
        self.check_count(len, 1)?;
        Ok(Some(len))
    }

    /// The length of a bin marker's bytes.
    fn bin_len(&mut self, marker: u8) -> Result<Option<usize>> {
        Ok(match marker {
            0xc4..=0xc6 => Some(Self::check_len(self.len(1 << (marker - 0xc4))?)?),
            _ => None,
        })
    }

    fn uint_field(&mut self, name: &str) -> Result<u64> {
        match self.value(1)? {
            Value::U64(x) => Ok(x),
            Value::I64(x) if x >= 0 => Ok(x as u64),
            other => Err(DecodeError::Invalid(format!(
                "field `{name}` is a {}, not an unsigned integer",
                other.kind()
            ))),
        }
    }

    /// Any value.
    pub(crate) fn value(&mut self, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::Invalid(format!(
                "values nested deeper than {MAX_DEPTH}"
            )));
        }
        let marker = self.byte()?;
        if let Some(bytes) = self.str_bytes(marker)? {
            return Ok(Value::Str(Arc::from(utf8(bytes)?)));
        }
        if let Some(len) = self.map_len(marker)? {
            let mut map = BTreeMap::new();
            for _ in 0..len {
                let key = match self.value(depth + 1)? {
                    Value::Str(s) => s.to_string(),
                    key @ (Value::I64(_) | Value::U64(_) | Value::F64(_) | Value::Bool(_)) => {
                        key.to_string()
                    }
                    other => {
                        return Err(DecodeError::Invalid(format!(
                            "a map key is a {}",
                            other.kind()
                        )));
                    }
                };
                map.insert(key, self.value(depth + 1)?);
            }
            return Ok(Value::Map(map));
        }
        Ok(match marker {
            0x00..=0x7f => Value::U64(u64::from(marker)),
            0xe0..=0xff => Value::I64(i64::from(marker as i8)),
            0xc0 => Value::Null,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xcc => Value::U64(self.be(1)?),
            0xcd => Value::U64(self.be(2)?),
            0xce => Value::U64(self.be(4)?),
            0xcf => Value::U64(self.be(8)?),
            0xd0 => Value::I64(i64::from(self.be(1)? as u8 as i8)),
            0xd1 => Value::I64(i64::from(self.be(2)? as u16 as i16)),
            0xd2 => Value::I64(i64::from(self.be(4)? as u32 as i32)),
            0xd3 => Value::I64(self.be(8)? as i64),
            0xca => Value::F64(f64::from(f32::from_bits(self.be(4)? as u32))),
            0xcb => Value::F64(f64::from_bits(self.be(8)?)),
            0xc4..=0xc6 => {
                let len = self.bin_len(marker)?.unwrap_or(0);
                Value::Bytes(self.take(len)?.to_vec())
            }
            0x90..=0x9f | 0xdc | 0xdd => {
                let len = self.array_len(marker)?.unwrap_or(0);
                // Reserve no more than the buffer can hold (an item is at least one byte): a
                // corrupt length must not reserve gigabytes.
                let mut items = Vec::with_capacity(len.min(self.buf.len() - self.pos));
                for _ in 0..len {
                    items.push(self.value(depth + 1)?);
                }
                Value::List(items)
            }
            0xc1 => return Err(DecodeError::Invalid("byte 0xc1 (never used)".to_owned())),
            _ => {
                return Err(DecodeError::Invalid(format!(
                    "MessagePack extension type (marker 0x{marker:02x}) is not a log value"
                )));
            }
        })
    }

    /// The first record, as a map of fields (the header).
    pub(crate) fn header_fields(&mut self) -> Result<BTreeMap<String, Value>> {
        match self.value(0)? {
            Value::Map(map) => Ok(map),
            other => Err(DecodeError::Invalid(format!(
                "the first record is a {}, not a map",
                other.kind()
            ))),
        }
    }

    /// One record after the header.
    pub(crate) fn record(&mut self, keys: &mut KeyCache) -> Result<Record> {
        let marker = self.byte()?;
        let Some(len) = self.map_len(marker)? else {
            return Err(DecodeError::Invalid(format!(
                "a record starts with byte 0x{marker:02x}, not a map"
            )));
        };
        let mut time = None;
        let mut data = false;
        let mut end = None;
        let mut events = 0;
        let mut dropped = 0;
        for _ in 0..len {
            let marker = self.byte()?;
            let Some(name) = self.str_bytes(marker)? else {
                return Err(DecodeError::Invalid(
                    "a record key is not a string".to_owned(),
                ));
            };
            match name {
                b"time" => time = Some(self.uint_field("time")?),
                b"data" => {
                    self.fields(keys)?;
                    data = true;
                }
                b"end" => end = Some(self.uint_field("end")?),
                b"events" => events = self.uint_field("events")?,
                b"dropped" => dropped = self.uint_field("dropped")?,
                _ => drop(self.value(1)?), // a field of a later version: skipped
            }
        }
        match (time, data, end) {
            (Some(time), true, _) => {
                let time = Timestamp::from_nanos(time);
                Ok(Record::Event(Event::new_at(keys.fields.drain(..), time)))
            }
            (_, _, Some(_)) => Ok(Record::End { events, dropped }),
            _ => Err(DecodeError::Invalid(
                "a record has neither `time` and `data` nor `end`".to_owned(),
            )),
        }
    }

    /// Reads an event's fields into `keys.fields`.
    fn fields(&mut self, keys: &mut KeyCache) -> Result<()> {
        let marker = self.byte()?;
        let Some(len) = self.map_len(marker)? else {
            return Err(DecodeError::Invalid(
                "an event's `data` is not a map".to_owned(),
            ));
        };
        keys.fields.clear();
        for _ in 0..len {
            let marker = self.byte()?;
            let Some(name) = self.str_bytes(marker)? else {
                return Err(DecodeError::Invalid(
                    "an event key is not a string".to_owned(),
                ));
            };
            let key = keys.key(name)?;
            let value = self.value(1)?;
            keys.fields.push((key, value));
        }
        Ok(())
    }

    /// Skips one record, checking its shape (a map with `time` and `data`, or `end`) but
    /// allocating nothing: how far a record extends, before it is decoded, and whether bytes
    /// where reading could resume start a record.
    pub(crate) fn skip_record(&mut self) -> Result<()> {
        let marker = self.byte()?;
        let Some(len) = self.map_len(marker)? else {
            return Err(DecodeError::Invalid(format!(
                "a record starts with byte 0x{marker:02x}, not a map"
            )));
        };
        let (mut time, mut data, mut end) = (false, false, false);
        for _ in 0..len {
            let marker = self.byte()?;
            let Some(name) = self.str_bytes(marker)? else {
                return Err(DecodeError::Invalid(
                    "a record key is not a string".to_owned(),
                ));
            };
            match name {
                b"time" => {
                    self.skip_uint("time")?;
                    time = true;
                }
                b"data" => {
                    self.skip_fields()?;
                    data = true;
                }
                b"end" => {
                    self.skip_uint("end")?;
                    end = true;
                }
                b"events" => self.skip_uint("events")?,
                b"dropped" => self.skip_uint("dropped")?,
                _ => self.skip(1)?,
            }
        }
        if (time && data) || end {
            Ok(())
        } else {
            Err(DecodeError::Invalid(
                "a record has neither `time` and `data` nor `end`".to_owned(),
            ))
        }
    }

    /// Skips an unsigned integer (or a non-negative signed one), the record field `name`.
    fn skip_uint(&mut self, name: &str) -> Result<()> {
        let marker = self.byte()?;
        let size = match marker {
            0x00..=0x7f => 0,
            0xcc..=0xcf => 1 << (marker - 0xcc),
            0xd0..=0xd3 => 1 << (marker - 0xd0),
            _ => return Err(not_uint(name)),
        };
        let bytes = self.take(size)?;
        if marker >= 0xd0 && bytes.first().is_some_and(|b| b & 0x80 != 0) {
            return Err(not_uint(name));
        }
        Ok(())
    }

    /// Skips an event's `data`: a map with string keys.
    fn skip_fields(&mut self) -> Result<()> {
        let marker = self.byte()?;
        let Some(len) = self.map_len(marker)? else {
            return Err(DecodeError::Invalid(
                "an event's `data` is not a map".to_owned(),
            ));
        };
        for _ in 0..len {
            let marker = self.byte()?;
            if self.str_bytes(marker)?.is_none() {
                return Err(DecodeError::Invalid(
                    "an event key is not a string".to_owned(),
                ));
            }
            self.skip(1)?;
        }
        Ok(())
    }

    /// Skips any value, checking what [`value`](Decoder::value) checks except UTF-8.
    fn skip(&mut self, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::Invalid(format!(
                "values nested deeper than {MAX_DEPTH}"
            )));
        }
        let marker = self.byte()?;
        if self.str_bytes(marker)?.is_some() {
            return Ok(());
        }
        if let Some(len) = self.map_len(marker)? {
            for _ in 0..len {
                self.skip(depth + 1)?;
                self.skip(depth + 1)?;
            }
            return Ok(());
        }
        if let Some(len) = self.array_len(marker)? {
            for _ in 0..len {
                self.skip(depth + 1)?;
            }
            return Ok(());
        }
        if let Some(len) = self.bin_len(marker)? {
            self.take(len)?;
            return Ok(());
        }
        let size = match marker {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => 0,
            0xcc..=0xcf => 1 << (marker - 0xcc),
            0xd0..=0xd3 => 1 << (marker - 0xd0),
            0xca => 4,
            0xcb => 8,
            0xc1 => return Err(DecodeError::Invalid("byte 0xc1 (never used)".to_owned())),
            _ => {
                return Err(DecodeError::Invalid(format!(
                    "MessagePack extension type (marker 0x{marker:02x}) is not a log value"
                )));
            }
        };
        self.take(size)?;
        Ok(())
    }
}

fn not_uint(name: &str) -> DecodeError {
    DecodeError::Invalid(format!("field `{name}` is not an unsigned integer"))
}
