//! voir's JSON lines ([`JsonLines`]): one object per line, read into events; [`from_json`]
//! turns a JSON value into a giving value.

use std::sync::Arc;

use giving::{Event, Value};

use crate::protocol::incoming::Incoming;

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
        // `\u0001` is FLOAT_MARK, escaped as JSON wants control characters.
        python_floats(text, |word| format!("\"\\u0001{word}\""))
            .map_or(Err(e), |t| serde_json::from_str(&t))
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

/// `text` with each of Python's bare `NaN`, `Infinity` and `-Infinity` (outside strings, where
/// Python's `json` writes them and JSON has no such numbers) replaced by what `replace` makes
/// of the word; `None` when it has none.
///
/// ```
/// use giving_log::protocol::python_floats;
///
/// let text = r#"{"loss": NaN, "note": "NaN", "max": -Infinity}"#;
/// assert_eq!(
///     python_floats(text, |_| "null".to_owned()).as_deref(),
///     Some(r#"{"loss": null, "note": "NaN", "max": null}"#)
/// );
/// assert_eq!(python_floats("[1, 2]", |_| "null".to_owned()), None);
/// ```
pub fn python_floats(text: &str, replace: impl Fn(&str) -> String) -> Option<String> {
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
            out.push_str(&replace(word));
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
