//! MessagePack encoding of log records: a small hand-written encoder that keeps the exact
//! [`Value`] kind (a non-negative `I64` is written with a signed marker so it reads back as
//! `I64`, not `U64`).

use giving::{Event, Value};

/// The longest nesting of lists and maps written or read; deeper values are refused.
pub(crate) const MAX_DEPTH: usize = 128;

/// Appends MessagePack bytes to a buffer. Writing into a `Vec` cannot fail.
pub(crate) struct Encoder<'a> {
    pub(crate) out: &'a mut Vec<u8>,
}

impl Encoder<'_> {
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

    /// Writes a value; a lazy value is resolved here. Returns how many lazy values could not
    /// be resolved (they are written as nil).
    pub(crate) fn value(&mut self, value: &Value, depth: usize) -> usize {
        if depth > MAX_DEPTH {
            self.nil();
            return 0;
        }
        match value {
            Value::Null => self.nil(),
            Value::Bool(b) => self.bool(*b),
            Value::I64(x) => self.sint(*x),
            Value::U64(x) => self.uint(*x),
            Value::F64(x) => self.f64(*x),
            Value::Str(s) => self.str(s),
            Value::Bytes(b) => self.bin(b),
            Value::List(items) => {
                self.array_len(items.len());
                return items.iter().map(|item| self.value(item, depth + 1)).sum();
            }
            Value::Map(map) => {
                self.map_len(map.len());
                let mut failed = 0;
                for (key, item) in map {
                    self.str(key);
                    failed += self.value(item, depth + 1);
                }
                return failed;
            }
            Value::Lazy(lazy) => match lazy.resolve() {
                Ok(resolved) => return self.value(resolved, depth),
                Err(_) => {
                    self.nil();
                    return 1;
                }
            },
        }
        0
    }

    /// Writes an event record `{"time": ns, "data": {fields…}}`; returns the number of lazy
    /// values that could not be resolved.
    pub(crate) fn event(&mut self, event: &Event) -> usize {
        self.out
            .extend_from_slice(&[0x82, 0xa4, b't', b'i', b'm', b'e']);
        self.uint(event.time().as_nanos());
        self.out.extend_from_slice(&[0xa4, b'd', b'a', b't', b'a']);
        self.map_len(event.len());
        let mut failed = 0;
        for (key, value) in event.iter() {
            self.str(key);
            failed += self.value(value, 1);
        }
        failed
    }
}

/// MessagePack lengths are 32-bit; longer strings cannot occur in a log (a single event of
/// 4 GiB), so saturating is only a guard.
fn len_u32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}
