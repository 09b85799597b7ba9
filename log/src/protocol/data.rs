//! [`DataDecoder`]: a child's `DATA_FD` stream, MessagePack log records or voir's JSON lines
//! (the first byte tells which).

use crate::protocol::incoming::Incoming;
use crate::protocol::json::JsonLines;
use crate::stream::{StreamDecoder, StreamItem};

/// Reads `DATA_FD` in whichever form the child writes: the first byte tells (`{` starts
/// voir's JSON lines; a MessagePack log starts with a map, never with `{`).
///
/// ```
/// use giving_log::protocol::{DataDecoder, Incoming};
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

#[cfg(test)]
mod tests {
    use giving::Value;

    use super::*;

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
