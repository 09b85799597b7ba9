//! Structure-aware inputs for the log reader's fuzz target: a fuzz input is not only raw
//! bytes but a recipe — events with nested values, written by the real writer, then damaged
//! the ways files get damaged (a length field overwritten, a bit flipped, a cut, bytes
//! inserted) — so the fuzzer spends its time past the header and inside records.

use std::collections::BTreeMap;
use std::path::Path;

pub mod protocol;
pub mod suite;

use arbitrary::Arbitrary;
use giving::{Event, Timestamp, Value};
use giving_log::{LogHeader, LogReader, LogWriter};

/// A value to give, nested as the fuzzer likes (deep lists test the reader's depth limit).
#[derive(Arbitrary, Debug, Clone)]
pub enum Val {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    I(i64),
    /// An unsigned integer.
    U(u64),
    /// A float (NaN and infinities included).
    F(f64),
    /// A string.
    S(String),
    /// Bytes.
    B(Vec<u8>),
    /// A list.
    L(Vec<Val>),
    /// A map.
    M(Vec<(String, Val)>),
}

impl Val {
    fn value(&self) -> Value {
        match self {
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::I(i) => Value::I64(*i),
            Val::U(u) => Value::U64(*u),
            Val::F(f) => Value::F64(*f),
            Val::S(s) => Value::from(s.as_str()),
            Val::B(b) => Value::Bytes(b.clone()),
            Val::L(items) => Value::List(items.iter().map(Val::value).collect()),
            Val::M(entries) => Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.value()))
                    .collect::<BTreeMap<_, _>>(),
            ),
        }
    }
}

/// How to damage the written bytes.
#[derive(Arbitrary, Debug, Clone)]
pub enum Damage {
    /// Flips one bit.
    Flip { at: usize, bit: u8 },
    /// Cuts the file.
    Cut { at: usize },
    /// Overwrites four bytes with a big-endian length (a msgpack length field gone wrong).
    Length { at: usize, value: u32 },
    /// Inserts bytes.
    Insert { at: usize, bytes: Vec<u8> },
}

/// One fuzz case.
#[derive(Arbitrary, Debug)]
pub enum Case {
    /// Arbitrary bytes as a log file.
    Raw(Vec<u8>),
    /// Events written by the real writer, then damaged.
    Written {
        events: Vec<Vec<(String, Val)>>,
        damage: Vec<Damage>,
        close: bool,
    },
}

impl Case {
    /// The file's bytes for this case.
    pub fn bytes(&self, scratch: &Path) -> Vec<u8> {
        match self {
            Case::Raw(bytes) => bytes.clone(),
            Case::Written {
                events,
                damage,
                close,
            } => {
                let _ = std::fs::remove_file(scratch);
                let Ok(mut writer) = LogWriter::create(scratch, &LogHeader::default()) else {
                    return Vec::new();
                };
                for (i, fields) in events.iter().enumerate() {
                    let fields: Vec<(String, Value)> =
                        fields.iter().map(|(k, v)| (k.clone(), v.value())).collect();
                    let event = Event::new_at(fields, Timestamp::from_nanos(i as u64));
                    // The writer may refuse what its reader would not read (too deep): fine.
                    let _ = writer.write(&event);
                }
                if *close {
                    let _ = writer.close(0);
                } else {
                    let _ = writer.flush();
                }
                let mut bytes = std::fs::read(scratch).unwrap_or_default();
                for d in damage {
                    apply(&mut bytes, d);
                }
                bytes
            }
        }
    }
}

/// Applies `damage` to `bytes`.
pub fn apply(bytes: &mut Vec<u8>, damage: &Damage) {
    if bytes.is_empty() {
        return;
    }
    let len = bytes.len();
    match damage {
        Damage::Flip { at, bit } => bytes[at % len] ^= 1 << (bit % 8),
        Damage::Cut { at } => bytes.truncate(at % (len + 1)),
        Damage::Length { at, value } => {
            let at = at % len;
            for (i, b) in value.to_be_bytes().iter().enumerate() {
                if let Some(slot) = bytes.get_mut(at + i) {
                    *slot = *b;
                }
            }
        }
        Damage::Insert { at, bytes: new } => {
            let at = at % (len + 1);
            bytes.splice(at..at, new.iter().copied().take(64));
        }
    }
}

/// Reads `bytes` as a log, from memory, to the end: must not panic, must end, and never
/// yield more events than bytes. (The file and the memory reader share every line of the
/// decoding; memory keeps the fuzzer off the file system, so it runs millions of cases.)
pub fn read_all(bytes: &[u8]) {
    let Ok(mut reader) = LogReader::from_bytes("fuzz case", bytes.to_vec()) else {
        return;
    };
    let mut events = 0usize;
    for item in reader.by_ref() {
        if item.is_ok() {
            events += 1;
        }
        assert!(events <= bytes.len(), "more events than bytes");
    }
    let _ = reader.end();
}
