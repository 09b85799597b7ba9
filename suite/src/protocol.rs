//! The runner's side of the child-process protocol (`docs/protocol.md`): what a benchmark
//! writes to `DATA_FD` (MessagePack log records, or voir's JSON lines), and voir's data
//! smuggled into stdout as escape sequences.

use std::sync::Arc;

use giving::{Event, Value};
use giving_instruments::log::{LogHeader, StreamDecoder, StreamItem};

/// What a child sent, decoded.
#[derive(Debug)]
pub enum Incoming {
    /// An event.
    Event(Event),
    /// A writer's header (MessagePack form): a run started in the child, with what wrote it.
    Header(Box<LogHeader>),
    /// A writer's end record (MessagePack form): a run ended cleanly.
    End,
    /// Bytes that could not be read: reported, skipped.
    Garbage(String),
}

/// Reads `DATA_FD` in whichever form the child writes: the first byte tells (`{` starts
/// voir's JSON lines; a MessagePack log starts with a map, never with `{`).
///
/// ```
/// use giving_suite::protocol::{DataDecoder, Incoming};
///
/// let mut decoder = DataDecoder::new();
/// let items = decoder.push(b"{\"rate\": 12.5, \"task\": \"train\"}\nnot json\n");
/// assert!(matches!(&items[0], Incoming::Event(e) if e.get("rate").is_some()));
/// assert!(matches!(&items[1], Incoming::Garbage(_)));
/// ```
#[derive(Default)]
pub struct DataDecoder {
    form: Option<Form>,
}

enum Form {
    Msgpack(Box<StreamDecoder>),
    Json(JsonLines),
}

impl DataDecoder {
    /// A decoder that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `bytes`, the next ones read from the pipe.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Incoming> {
        let mut out = Vec::new();
        if bytes.is_empty() {
            return out;
        }
        let form = self.form.get_or_insert_with(|| match bytes[0] {
            b'{' => Form::Json(JsonLines::default()),
            _ => Form::Msgpack(Box::default()),
        });
        match form {
            Form::Json(lines) => lines.push(bytes, &mut out),
            Form::Msgpack(decoder) => {
                decoder.push(bytes);
                while let Some(item) = decoder.next_item() {
                    out.push(match item {
                        StreamItem::Header(header) => Incoming::Header(header),
                        StreamItem::Event(event) => Incoming::Event(event),
                        StreamItem::End { .. } => Incoming::End,
                        StreamItem::Garbage { skipped, reason } => {
                            Incoming::Garbage(format!("{skipped} bytes skipped: {reason}"))
                        }
                    });
                }
            }
        }
        out
    }

    /// The end of the stream: a record or line left incomplete is reported.
    pub fn finish(&mut self) -> Option<Incoming> {
        let pending = match &mut self.form {
            Some(Form::Msgpack(decoder)) => decoder.pending(),
            Some(Form::Json(lines)) => {
                let mut out = Vec::new();
                lines.push(b"\n", &mut out);
                return out.into_iter().next();
            }
            None => 0,
        };
        (pending > 0).then(|| {
            Incoming::Garbage(format!(
                "the stream ended inside a record ({pending} bytes)"
            ))
        })
    }
}

/// voir's JSON lines: one object per line, its keys the event's fields (a line that is not an
/// object is voir's `{"#data": value}`).
#[derive(Default)]
pub struct JsonLines {
    line: Vec<u8>,
}

/// Lines longer than this are garbage (a child that never writes a newline).
const MAX_LINE: usize = 64 << 20;

impl JsonLines {
    /// Decodes the complete lines in `bytes` (with what was buffered before) into `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Incoming>) {
        for piece in bytes.split_inclusive(|&b| b == b'\n') {
            self.line.extend_from_slice(piece);
            if piece.ends_with(b"\n") {
                let line = std::mem::take(&mut self.line);
                if let Some(item) = json_line(&line) {
                    out.push(item);
                }
            } else if self.line.len() > MAX_LINE {
                self.line.clear();
                out.push(Incoming::Garbage(format!(
                    "a line longer than {MAX_LINE} bytes, dropped"
                )));
            }
        }
    }
}

fn json_line(line: &[u8]) -> Option<Incoming> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let parsed = serde_json::from_str::<serde_json::Value>(text).or_else(|e| {
        // Python's json writes NaN and ±Infinity as bare words, which JSON has not: read them
        // as marked strings, turned back into floats by `from_json`.
        python_floats(text).map_or(Err(e), |t| serde_json::from_str(&t))
    });
    Some(match parsed {
        Ok(serde_json::Value::Object(map)) => {
            Incoming::Event(Event::new(map.into_iter().map(|(k, v)| (k, from_json(v)))))
        }
        Ok(other) => Incoming::Event(Event::new([("#data", from_json(other))])),
        Err(e) => Incoming::Garbage(format!("not a JSON line ({e}): {}", clip(text))),
    })
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// Marks a string that stood for a float Python writes as a bare word.
const FLOAT_MARK: char = '\u{1}';

/// `text` with Python's `NaN`, `Infinity` and `-Infinity` (outside strings) written as marked
/// strings; `None` when it has none.
fn python_floats(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 16);
    let (mut in_string, mut escaped, mut changed) = (false, false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if let Some(word) = ["NaN", "-Infinity", "Infinity"]
            .into_iter()
            .find(|w| rest.starts_with(w))
        {
            // `\u0001` is FLOAT_MARK, escaped as JSON wants control characters.
            out.push_str(&format!("\"\\u0001{word}\""));
            rest = &rest[word.len()..];
            changed = true;
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    changed.then_some(out)
}

/// A JSON value as a giving value (integers stay integers).
pub fn from_json(value: serde_json::Value) -> Value {
    use serde_json::Value as J;
    match value {
        J::String(s) if s.starts_with(FLOAT_MARK) => match &s[1..] {
            "NaN" => Value::F64(f64::NAN),
            "Infinity" => Value::F64(f64::INFINITY),
            "-Infinity" => Value::F64(f64::NEG_INFINITY),
            _ => Value::Str(Arc::from(s)),
        },
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(b),
        J::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Value::U64(u),
            (None, Some(i)) => Value::I64(i),
            _ => Value::F64(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::String(s) => Value::Str(Arc::from(s)),
        J::Array(items) => Value::List(items.into_iter().map(from_json).collect()),
        J::Object(map) => Value::Map(map.into_iter().map(|(k, v)| (k, from_json(v))).collect()),
    }
}

/// voir's smuggled form: data written into stdout as `ESC [ <hex digits 0-9:;<=>?> z`
/// sequences, which terminals ignore. Splits a stdout stream into its plain output and the
/// smuggled data: voir's JSON lines, or a giving log's bytes (a giving child whose `DATA_FD`
/// is 1), read as [`DataDecoder`] reads a pipe.
#[derive(Default)]
pub struct Unsmuggler {
    code: Vec<u8>,
    coding: bool,
    /// The decoded payloads, one stream: voir's JSON lines or a giving log's bytes.
    data: DataDecoder,
}

impl Unsmuggler {
    /// A decoder that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Splits `bytes`: plain output is appended to `plain`, decoded data to `out`.
    pub fn push(&mut self, bytes: &[u8], plain: &mut Vec<u8>, out: &mut Vec<Incoming>) {
        for &b in bytes {
            if self.coding {
                self.code.push(b);
                // A sequence ends at its first byte outside `0-9:;<=>?` (after `ESC [`).
                let ended = if self.code.len() == 2 {
                    b != b'['
                } else {
                    !(0x30..=0x3f).contains(&b)
                };
                if ended {
                    self.end_code(plain, out);
                }
            } else if b == 0x1b {
                self.coding = true;
                self.code.push(b);
            } else {
                plain.push(b);
            }
        }
    }

    fn end_code(&mut self, plain: &mut Vec<u8>, out: &mut Vec<Incoming>) {
        self.coding = false;
        let code = std::mem::take(&mut self.code);
        let smuggled = code.len() >= 3 && code.ends_with(b"z") && code.starts_with(b"\x1b[");
        let decoded = smuggled.then(|| unhex(&code[2..code.len() - 1])).flatten();
        match decoded {
            Some(data) => out.extend(self.data.push(&data)),
            None => plain.extend_from_slice(&code),
        }
    }
}

/// voir's hex digits are `0123456789:;<=>?` for 0..16.
fn unhex(digits: &[u8]) -> Option<Vec<u8>> {
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| {
            let hi = pair[0].checked_sub(0x30).filter(|d| *d < 16)?;
            let lo = pair[1].checked_sub(0x30).filter(|d| *d < 16)?;
            Some(hi << 4 | lo)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// voir's encoding, for the tests.
    fn smuggle(text: &str) -> Vec<u8> {
        smuggle_bytes(text.as_bytes())
    }

    fn smuggle_bytes(bytes: &[u8]) -> Vec<u8> {
        let mut out = b"\x1b[".to_vec();
        for b in bytes {
            out.push(0x30 + (b >> 4));
            out.push(0x30 + (b & 15));
        }
        out.push(b'z');
        out
    }

    #[test]
    fn a_smuggled_giving_log_is_decoded_across_sequences() {
        use giving_instruments::log::{LogHeader, LogWriter};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l");
        let mut log = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
        log.write(&giving::event!(rate = 9.5)).unwrap();
        log.close(0).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        // Smuggled in two sequences cut mid-record, with plain output between them.
        let (a, b) = bytes.split_at(bytes.len() / 2);
        let mut stdout = smuggle_bytes(a);
        stdout.extend(b"plain\n");
        stdout.extend(smuggle_bytes(b));
        let (mut plain, mut out) = (Vec::new(), Vec::new());
        let mut u = Unsmuggler::new();
        for chunk in stdout.chunks(7) {
            u.push(chunk, &mut plain, &mut out);
        }
        assert_eq!(plain, b"plain\n");
        let kinds: Vec<&str> = out
            .iter()
            .map(|i| match i {
                Incoming::Header(_) => "header",
                Incoming::Event(_) => "event",
                Incoming::End => "end",
                Incoming::Garbage(_) => "garbage",
            })
            .collect();
        assert_eq!(kinds, ["header", "event", "end"]);
    }

    #[test]
    fn smuggled_data_is_split_from_plain_output() {
        let mut stdout = b"hello \x1b[1mbold\x1b[0m\n".to_vec();
        stdout.extend(smuggle("{\"rate\": 3.5}\n"));
        stdout.extend(b"bye\n");
        let (mut plain, mut out) = (Vec::new(), Vec::new());
        let mut u = Unsmuggler::new();
        for chunk in stdout.chunks(3) {
            u.push(chunk, &mut plain, &mut out);
        }
        assert_eq!(
            String::from_utf8(plain).unwrap(),
            "hello \x1b[1mbold\x1b[0m\nbye\n"
        );
        assert_eq!(out.len(), 1);
        let Incoming::Event(e) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(e.get("rate"), Some(&Value::F64(3.5)));
    }

    #[test]
    fn json_lines_split_anywhere_and_garbage_is_reported() {
        let text = b"{\"task\": \"train\", \"progress\": [1, 10]}\n[1,2]\n{oops\n";
        let mut decoder = DataDecoder::new();
        let mut items = Vec::new();
        for chunk in text.chunks(5) {
            items.extend(decoder.push(chunk));
        }
        assert_eq!(items.len(), 3);
        let Incoming::Event(e) = &items[0] else {
            panic!()
        };
        assert_eq!(
            e.get("progress"),
            Some(&Value::List(vec![Value::U64(1), Value::U64(10)]))
        );
        let Incoming::Event(e) = &items[1] else {
            panic!()
        };
        assert!(e.get("#data").is_some());
        assert!(matches!(&items[2], Incoming::Garbage(m) if m.contains("{oops")));
        assert!(decoder.finish().is_none());
    }

    #[test]
    fn python_nan_and_infinity_are_read_as_floats() {
        let items = DataDecoder::new()
            .push(b"{\"loss\": NaN, \"x\": -Infinity, \"s\": \"NaN \\\" NaN\"}\n");
        let Incoming::Event(e) = &items[0] else {
            panic!("{items:?}")
        };
        assert!(e.get("loss").and_then(Value::as_f64).unwrap().is_nan());
        assert_eq!(e.get("x"), Some(&Value::F64(f64::NEG_INFINITY)));
        assert_eq!(e.get("s"), Some(&Value::from("NaN \" NaN")));
    }

    #[test]
    fn msgpack_garbage_is_reported_and_a_cut_record_at_the_end_too() {
        let mut decoder = DataDecoder::new();
        let items = decoder.push(b"\x91\xc1\xc1\xc1");
        assert!(items.iter().all(|i| matches!(i, Incoming::Garbage(_))));
        assert!(!items.is_empty());
        decoder.push(b"\x82");
        assert!(matches!(decoder.finish(), Some(Incoming::Garbage(_))));
    }
}
