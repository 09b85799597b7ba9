//! MessagePack encoding of log records: a small hand-written encoder that keeps the exact
//! [`Value`] kind (a non-negative `I64` is written with a signed marker so it reads back as
//! `I64`, not `U64`).
//!
//! The encoder refuses what the reader would refuse ([`MAX_DEPTH`], [`MAX_RECORD`]), so that
//! a log never holds a record its own reader cannot read.

use std::panic::{AssertUnwindSafe, catch_unwind};

use giving::{Event, Value};

use crate::format::{MAX_DEPTH, MAX_RECORD};
use giving::panic_message;

/// Why a value cannot be written (the caller names the field). A boxed `str`, so that the
/// encoder's results stay two words: refusals are rare, values are not.
#[derive(Debug)]
pub(crate) struct Refusal(Box<str>);

impl Refusal {
    #[cold]
    fn new(reason: String) -> Self {
        Self(reason.into_boxed_str())
    }

    /// What is wrong.
    pub(crate) fn into_message(self) -> String {
        self.0.into_string()
    }
}

/// A field that cannot be written: its key, and why.
pub(crate) type FieldRefusal = (String, String);

/// Appends MessagePack bytes to a buffer. Writing into a `Vec` cannot fail; values the reader
/// would refuse are refused instead.
pub(crate) struct Encoder<'a> {
    pub(crate) out: &'a mut Vec<u8>,
    /// The index of the event field being written: after a panic, the field that panicked.
    pub(crate) field: usize,
    /// How many lazy values could not be resolved (written as nil) or panicked.
    pub(crate) unresolved: usize,
}

impl<'a> Encoder<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        Self {
            out,
            field: 0,
            unresolved: 0,
        }
    }

    pub(crate) fn nil(&mut self) {
        self.out.push(0xc0);
    }

    pub(crate) fn bool(&mut self, b: bool) {
        self.out.push(if b { 0xc3 } else { 0xc2 });
    }

    pub(crate) fn uint(&mut self, x: u64) {
        if x < 0x80 {
            self.out.push(x as u8);
        } else if x <= 0xff {
            self.out.extend_from_slice(&[0xcc, x as u8]);
        } else if x <= 0xffff {
            self.out.push(0xcd);
            self.out.extend_from_slice(&(x as u16).to_be_bytes());
        } else if x <= 0xffff_ffff {
            self.out.push(0xce);
            self.out.extend_from_slice(&(x as u32).to_be_bytes());
        } else {
            self.out.push(0xcf);
            self.out.extend_from_slice(&x.to_be_bytes());
        }
    }

    /// A signed integer, always with a signed marker (or a negative fixint), so readers that
    /// keep the distinction read it back as signed.
    pub(crate) fn sint(&mut self, x: i64) {
        if (-32..0).contains(&x) {
            self.out.push(x as i8 as u8);
        } else if i8::try_from(x).is_ok() {
            self.out.extend_from_slice(&[0xd0, x as i8 as u8]);
        } else if let Ok(x) = i16::try_from(x) {
            self.out.push(0xd1);
            self.out.extend_from_slice(&x.to_be_bytes());
        } else if let Ok(x) = i32::try_from(x) {
            self.out.push(0xd2);
            self.out.extend_from_slice(&x.to_be_bytes());
        } else {
            self.out.push(0xd3);
            self.out.extend_from_slice(&x.to_be_bytes());
        }
    }

    pub(crate) fn f64(&mut self, x: f64) {
        self.out.push(0xcb);
        self.out.extend_from_slice(&x.to_be_bytes());
    }

    pub(crate) fn str(&mut self, s: &str) {
        let len = s.len();
        if len < 32 {
            self.out.push(0xa0 | len as u8);
        } else if len <= 0xff {
            self.out.extend_from_slice(&[0xd9, len as u8]);
        } else if len <= 0xffff {
            self.out.push(0xda);
            self.out.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            self.out.push(0xdb);
            self.out.extend_from_slice(&len_u32(len).to_be_bytes());
        }
        self.out.extend_from_slice(s.as_bytes());
    }

    fn bin(&mut self, b: &[u8]) {
        let len = b.len();
        if len <= 0xff {
            self.out.extend_from_slice(&[0xc4, len as u8]);
        } else if len <= 0xffff {
            self.out.push(0xc5);
            self.out.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            self.out.push(0xc6);
            self.out.extend_from_slice(&len_u32(len).to_be_bytes());
        }
        self.out.extend_from_slice(b);
    }

    pub(crate) fn array_len(&mut self, len: usize) {
        if len < 16 {
            self.out.push(0x90 | len as u8);
        } else if len <= 0xffff {
            self.out.push(0xdc);
            self.out.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            self.out.push(0xdd);
            self.out.extend_from_slice(&len_u32(len).to_be_bytes());
        }
    }

    pub(crate) fn map_len(&mut self, len: usize) {
        if len < 16 {
            self.out.push(0x80 | len as u8);
        } else if len <= 0xffff {
            self.out.push(0xde);
            self.out.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            self.out.push(0xdf);
            self.out.extend_from_slice(&len_u32(len).to_be_bytes());
        }
    }

    /// Writes a value; a lazy value is resolved here (one that cannot be is written as nil,
    /// and counted in [`unresolved`](Encoder::unresolved)). Refuses a value nested deeper than
    /// [`MAX_DEPTH`] or longer than a record may be; then the bytes written so far are
    /// garbage, for the caller to discard.
    pub(crate) fn value(&mut self, value: &Value, depth: usize) -> Result<(), Refusal> {
        if depth > MAX_DEPTH {
            return Err(Refusal::new(format!(
                "values nested deeper than {MAX_DEPTH} cannot be read back"
            )));
        }
        match value {
            Value::Null => self.nil(),
            Value::Bool(b) => self.bool(*b),
            Value::I64(x) => self.sint(*x),
            Value::U64(x) => self.uint(*x),
            Value::F64(x) => self.f64(*x),
            Value::Str(s) => {
                fits_in_record(s.len(), "a string")?;
                self.str(s);
            }
            Value::Bytes(b) => {
                fits_in_record(b.len(), "a byte string")?;
                self.bin(b);
            }
            Value::List(items) => self.list(items, depth)?,
            Value::Map(map) => self.map(map, depth)?,
            Value::Lazy(lazy) => match lazy.resolve() {
                Ok(resolved) => self.value(resolved, depth)?,
                Err(_) => {
                    self.nil();
                    self.unresolved += 1;
                }
            },
        }
        Ok(())
    }

    fn list(&mut self, items: &[Value], depth: usize) -> Result<(), Refusal> {
        fits_in_record(items.len(), "a list")?;
        self.array_len(items.len());
        for item in items {
            self.value(item, depth + 1)?;
        }
        Ok(())
    }

    fn map(
        &mut self,
        map: &std::collections::BTreeMap<String, Value>,
        depth: usize,
    ) -> Result<(), Refusal> {
        fits_in_record(map.len(), "a map")?;
        self.map_len(map.len());
        for (key, item) in map {
            fits_in_record(key.len(), "a map key")?;
            self.str(key);
            self.value(item, depth + 1)?;
        }
        Ok(())
    }

    /// Writes `{"time": ns, "data": {` with room for `fields` fields.
    fn event_start(&mut self, event: &Event, fields: usize) {
        self.out
            .extend_from_slice(&[0x82, 0xa4, b't', b'i', b'm', b'e']);
        self.uint(event.time().as_nanos());
        self.out.extend_from_slice(&[0xa4, b'd', b'a', b't', b'a']);
        self.map_len(fields);
    }

    /// Writes an event record `{"time": ns, "data": {fields…}}`, or says which field cannot
    /// be written and why. [`field`](Encoder::field) follows the field being written, so that
    /// a caller catching a panic knows which one panicked.
    pub(crate) fn event(&mut self, event: &Event) -> Result<(), FieldRefusal> {
        let start = self.out.len();
        self.event_start(event, event.len());
        for (index, (key, value)) in event.iter().enumerate() {
            self.field = index;
            self.str(key);
            if let Err(reason) = self.value(value, 1) {
                return Err((key.to_owned(), reason.into_message()));
            }
        }
        self.within_record(start, event)
    }

    /// Refuses the event record that starts at `start` if it is longer than a record may be,
    /// naming its longest field. Checked once the event is written: every string, list and
    /// map longer than a record is refused before it is copied.
    fn within_record(&self, start: usize, event: &Event) -> Result<(), FieldRefusal> {
        let len = self.out.len() - start;
        if len <= MAX_RECORD {
            return Ok(());
        }
        Err((
            longest_field(event),
            format!(
                "the event is {len} bytes, longer than a record may be ({} MiB)",
                MAX_RECORD >> 20
            ),
        ))
    }

    /// Writes an event whose field number `panicked` panicked while being resolved: that
    /// field as nil, every other field as usual (a field that panics in turn is nil too), and
    /// a last field `$error` that says which fields panicked and with what message. Each
    /// panic counts as an unresolved value.
    pub(crate) fn event_after_panic(
        &mut self,
        event: &Event,
        panicked: usize,
        message: &str,
    ) -> Result<(), FieldRefusal> {
        let start = self.out.len();
        self.event_start(event, event.len() + 1);
        let mut errors = Vec::new();
        for (index, (key, value)) in event.iter().enumerate() {
            let field_start = self.out.len();
            let written = if index == panicked {
                Err(message.to_owned())
            } else {
                catch_unwind(AssertUnwindSafe(|| {
                    self.str(key);
                    self.value(value, 1)
                }))
                .map_err(|panic| panic_message(panic.as_ref()))
            };
            match written {
                Ok(Ok(())) => {}
                Ok(Err(reason)) => return Err((key.to_owned(), reason.into_message())),
                Err(message) => {
                    self.out.truncate(field_start);
                    self.str(key);
                    self.nil();
                    self.unresolved += 1;
                    errors.push(format!("{key}: panicked: {message}"));
                }
            }
        }
        self.str(ERROR_FIELD);
        self.str(&errors.join("; "));
        self.within_record(start, event)
    }
}

/// The key of the event's field that takes the most bytes (for a refusal, so rarely).
#[cold]
fn longest_field(event: &Event) -> String {
    let mut scratch = Vec::new();
    let mut longest = (0, "");
    for (key, value) in event.iter() {
        scratch.clear();
        // This only measures: a refusal or a panic (a lazy value read again) ends the field.
        let _ = catch_unwind(AssertUnwindSafe(|| {
            Encoder::new(&mut scratch).value(value, 1)
        }));
        if scratch.len() + key.len() >= longest.0 {
            longest = (scratch.len() + key.len(), key);
        }
    }
    longest.1.to_owned()
}

/// The field added to an event whose lazy value panicked while being read.
pub(crate) const ERROR_FIELD: &str = "$error";

/// Refuses a string, list or map of `len` bytes or items: it cannot fit in a record (a
/// MessagePack length is 32-bit, which this bound also keeps).
fn fits_in_record(len: usize, what: &str) -> Result<(), Refusal> {
    if len > MAX_RECORD {
        return Err(Refusal::new(format!(
            "{what} of {len} bytes or items is longer than a record may be ({} MiB)",
            MAX_RECORD >> 20
        )));
    }
    Ok(())
}

/// MessagePack lengths are 32-bit; longer ones are refused before they are written (see
/// [`MAX_RECORD`]), so saturating is only a guard.
fn len_u32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}
