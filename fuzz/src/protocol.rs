//! Structure-aware inputs for the decoders of what other processes send: a benchmark child's
//! `DATA_FD` stream or smuggled stdout, and the records ranks publish to NATS. A case is a
//! recipe of voir JSON lines (with the keys the runner acts on), giving log records, raw lines
//! and damage, cut into the chunks a pipe hands over.

use arbitrary::Arbitrary;
use giving::{Event, Timestamp, Value};
use giving_log::{LogHeader, encode_end, encode_event, encode_header};

use crate::{Damage, Val, apply};

/// Keys the runner and the fan-in read; the fuzzer picks among them so that its lines reach
/// the code behind them (rates, voir's `$event`s, gpudata, ranks).
const KEYS: [&str; 14] = [
    "rate", "task", "units", "$event", "$data", "loss", "gpudata", "phase", "error", "rank",
    "world_size", "progress", "memory", "load",
];

/// A field: a known key (by index) or one of the fuzzer's, and its value.
#[derive(Arbitrary, Debug, Clone)]
pub struct Field {
    known: Option<u8>,
    key: String,
    value: Val,
}

impl Field {
    fn key(&self) -> String {
        match self.known {
            Some(i) => KEYS[usize::from(i) % KEYS.len()].to_owned(),
            None => self.key.clone(),
        }
    }
}

/// One piece of a child's stream.
#[derive(Arbitrary, Debug, Clone)]
pub enum Piece {
    /// A voir JSON line of these fields.
    Json(Vec<Field>),
    /// A line of arbitrary bytes (newline added).
    Line(Vec<u8>),
    /// A giving log record of these fields (MessagePack).
    Record(Vec<Field>),
    /// A giving log header or end record.
    Header,
    /// An end record.
    End(u64, u64),
    /// Arbitrary bytes, no newline.
    Raw(Vec<u8>),
}

fn json_of(value: &Val) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        Val::Null => J::Null,
        Val::Bool(b) => J::Bool(*b),
        Val::I(i) => J::from(*i),
        Val::U(u) => J::from(*u),
        Val::F(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Val::S(s) => J::String(s.clone()),
        Val::B(b) => J::Array(b.iter().map(|x| J::from(*x)).collect()),
        Val::L(items) => J::Array(items.iter().map(json_of).collect()),
        Val::M(entries) => J::Object(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), json_of(v)))
                .collect(),
        ),
    }
}

fn event_of(fields: &[Field]) -> Event {
    let fields: Vec<(String, Value)> = fields.iter().map(|f| (f.key(), f.value.value())).collect();
    Event::new_at(fields, Timestamp::from_nanos(1))
}

impl Piece {
    /// The piece's bytes, as the child would write them.
    pub fn bytes(&self, out: &mut Vec<u8>) {
        match self {
            Piece::Json(fields) => {
                let object: serde_json::Map<String, serde_json::Value> = fields
                    .iter()
                    .map(|f| (f.key(), json_of(&f.value)))
                    .collect();
                out.extend(serde_json::to_vec(&object).unwrap_or_default());
                out.push(b'\n');
            }
            Piece::Line(bytes) => {
                out.extend(bytes);
                out.push(b'\n');
            }
            // The encoder refuses what its reader would not read (too deep): then nothing.
            Piece::Record(fields) => {
                let _ = encode_event(&event_of(fields), out, "fuzz");
            }
            Piece::Header => {
                let _ = encode_header(&LogHeader::default(), out, "fuzz");
            }
            Piece::End(events, dropped) => encode_end(*events, *dropped, out),
            Piece::Raw(bytes) => out.extend(bytes),
        }
    }
}

/// voir's smuggling of `bytes` into stdout: `ESC [`, two digits `0-9:;<=>?` a byte, `z`.
pub fn smuggle(bytes: &[u8], out: &mut Vec<u8>) {
    out.extend(b"\x1b[");
    for b in bytes {
        out.push(0x30 + (b >> 4));
        out.push(0x30 + (b & 15));
    }
    out.push(b'z');
}

/// A child's stream: pieces written to `DATA_FD`, or smuggled into stdout between plain text,
/// damaged, and read back in chunks of the given sizes.
#[derive(Arbitrary, Debug)]
pub struct ChildCase {
    /// What the child writes.
    pub pieces: Vec<Piece>,
    /// Into stdout, smuggled (with this plain text after each piece), rather than `DATA_FD`.
    pub smuggled: Option<Vec<u8>>,
    /// Damage to the bytes written.
    pub damage: Vec<Damage>,
    /// Chunk sizes the pipe hands over (cycled; 0 read as 1).
    pub chunks: Vec<u8>,
}

impl ChildCase {
    /// The bytes the runner reads.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for piece in &self.pieces {
            match &self.smuggled {
                Some(plain) => {
                    let mut data = Vec::new();
                    piece.bytes(&mut data);
                    smuggle(&data, &mut out);
                    out.extend(plain.iter().take(32));
                }
                None => piece.bytes(&mut out),
            }
        }
        for damage in &self.damage {
            apply(&mut out, damage);
        }
        out
    }

    /// `bytes` cut into the chunks the pipe hands over.
    pub fn split<'a>(&self, bytes: &'a [u8]) -> Vec<&'a [u8]> {
        let mut parts = Vec::new();
        let mut at = 0;
        let mut sizes = self.chunks.iter().cycle();
        while at < bytes.len() {
            let size = if self.chunks.is_empty() {
                bytes.len()
            } else {
                usize::from(*sizes.next().unwrap_or(&1)).max(1)
            };
            let end = (at + size).min(bytes.len());
            parts.push(&bytes[at..end]);
            at = end;
        }
        parts
    }
}

/// Messages received from NATS: each is one subject's payload, as a rank published it or not.
#[derive(Arbitrary, Debug)]
pub struct NatsCase {
    /// `(subject index, pieces, damage)`: the payload of one message.
    pub messages: Vec<(u8, Vec<Piece>, Vec<Damage>)>,
}

/// Subjects a watcher of run `r` receives: ranks, a non-rank token, deep subjects.
pub const SUBJECTS: [&str; 5] = ["giving.r.0", "giving.r.1", "giving.r.7", "giving.r.x", "giving.r.0.0"];

impl NatsCase {
    /// `(subject, payload)` of every message.
    pub fn messages(&self) -> Vec<(&'static str, Vec<u8>)> {
        self.messages
            .iter()
            .map(|(subject, pieces, damage)| {
                let mut payload = Vec::new();
                for piece in pieces {
                    piece.bytes(&mut payload);
                }
                for d in damage {
                    apply(&mut payload, d);
                }
                (SUBJECTS[usize::from(*subject) % SUBJECTS.len()], payload)
            })
            .collect()
    }
}
