//! JSON as Python's `json` module writes it: NaN and ±Infinity as the bare words `NaN`,
//! `Infinity` and `-Infinity`. milabench reads a run's `.data` lines and writes its summary
//! with Python's `json`, where a NaN loss or an empty metric's NaN is a float, not `null`
//! (`serde_json` would write `null`, which milabench's `isnan` cannot take).

use std::fmt::Write;

use giving::Value;
use giving_log::protocol::python_floats;

/// Appends `value` to `out` as Python's `json.dumps` would write it, compactly (Python
/// reads it the same without `json.dumps`'s spaces).
pub(crate) fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::I64(i) => {
            let _ = write!(out, "{i}");
        }
        Value::U64(u) => {
            let _ = write!(out, "{u}");
        }
        Value::F64(x) => write_float(*x, out),
        Value::Str(s) => write_str(s, out),
        // Python's json cannot write bytes; a list of their values keeps them readable.
        Value::Bytes(bytes) => {
            write_list(bytes.iter().map(|&b| Value::U64(u64::from(b))), out);
        }
        Value::List(items) => write_list(items.iter().cloned(), out),
        Value::Map(map) => {
            out.push('{');
            for (i, (key, value)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(key, out);
                out.push(':');
                write_value(value, out);
            }
            out.push('}');
        }
        // A value that cannot be read is written as missing rather than dropping the line.
        Value::Lazy(_) => match value.resolved() {
            Ok(resolved) if !matches!(resolved, Value::Lazy(_)) => write_value(resolved, out),
            _ => out.push_str("null"),
        },
    }
}

/// Appends `x` as a JSON number, or as Python's word for it when it is not finite.
pub(crate) fn write_float(x: f64, out: &mut String) {
    if x.is_nan() {
        out.push_str("NaN");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        // Rust's shortest round-trip digits, never in exponent form; written in place (the
        // runner writes one line per event of its child).
        let start = out.len();
        let _ = write!(out, "{x}");
        // With its decimal point (`1.0`), so that Python reads a float back.
        if !out[start..].contains('.') {
            out.push_str(".0");
        }
    }
}

/// Appends `s` as a JSON string.
pub(crate) fn write_str(s: &str, out: &mut String) {
    // Most keys and values need no escape: copied as they are, without serde_json's buffer.
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned()));
    }
}

fn write_list(items: impl Iterator<Item = Value>, out: &mut String) {
    out.push('[');
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_value(&item, out);
    }
    out.push(']');
}

/// Reads JSON as Python's `json` writes it: `NaN`, `Infinity` and `-Infinity` outside strings
/// are read as `null` (serde_json has no such numbers; a reader of a summary takes `null` for
/// "no figure", as those are).
pub(crate) fn parse(text: &str) -> serde_json::Result<serde_json::Value> {
    match python_floats(text, |_| "null".to_owned()) {
        Some(nulled) => serde_json::from_str(&nulled),
        None => serde_json::from_str(text),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn text(value: &Value) -> String {
        let mut out = String::new();
        write_value(value, &mut out);
        out
    }

    #[test]
    fn non_finite_floats_are_pythons_words_and_floats_keep_their_point() {
        let list = Value::List(vec![
            Value::F64(f64::NAN),
            Value::F64(f64::INFINITY),
            Value::F64(f64::NEG_INFINITY),
            Value::F64(1.0),
            Value::I64(-3),
        ]);
        assert_eq!(text(&list), "[NaN,Infinity,-Infinity,1.0,-3]");
        let floats = Value::List(vec![Value::F64(1e21), Value::F64(0.1), Value::F64(-2.5e-7)]);
        let written = text(&floats);
        let back: Vec<f64> = serde_json::from_str(&written).unwrap();
        assert_eq!(back, [1e21, 0.1, -2.5e-7], "{written}");
        assert!(
            written.starts_with("[1000000000000000000000.0,"),
            "{written}"
        );
    }

    #[test]
    fn python_words_read_as_null_outside_strings() {
        let v = parse(r#"{"a": NaN, "b": [-Infinity, 1.5], "c": "NaN \" Infinity"}"#).unwrap();
        assert!(v["a"].is_null() && v["b"][0].is_null());
        assert_eq!(v["b"][1], 1.5);
        assert_eq!(v["c"], "NaN \" Infinity");
    }

    #[test]
    fn maps_and_strings_are_escaped_json() {
        let map = Value::Map(BTreeMap::from([
            ("a\"b".to_owned(), Value::from("x\ny")),
            ("n".to_owned(), Value::Null),
            ("t".to_owned(), Value::Bool(true)),
            ("bytes".to_owned(), Value::Bytes(vec![1, 2])),
        ]));
        let written = text(&map);
        assert_eq!(
            written,
            r#"{"a\"b":"x\ny","bytes":[1,2],"n":null,"t":true}"#
        );
        // What serde_json reads back is the same document.
        let back: serde_json::Value = serde_json::from_str(&written).unwrap();
        assert_eq!(back["a\"b"], "x\ny");
    }
}
