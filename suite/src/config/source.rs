//! Reading configuration files: YAML parsing, `include:` with override, and finding the line
//! of a key so that errors can name it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_norway::{Mapping, Value};

use crate::error::{ConfigError, FILE_KEY};

/// Includes deeper than this are a cycle (a file including itself through others).
const MAX_INCLUDE_DEPTH: usize = 32;

/// The file an entry was written in, kept to name lines in errors.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    pub(crate) file: PathBuf,
    pub(crate) text: Arc<str>,
    /// The top-level key that defined the entry (a matrix job: its matrix entry).
    pub(crate) defined_as: String,
}

impl Origin {
    /// The 1-based line of `path` (keys under the entry), or of the entry itself when the key
    /// is not written in this file.
    pub(crate) fn line(&self, path: &[&str]) -> (Option<usize>, bool) {
        find_line(&self.text, &self.defined_as, path)
    }

    /// An error at `path` under this entry.
    pub(crate) fn error(
        &self,
        key: &str,
        path: &[&str],
        message: impl Into<String>,
    ) -> ConfigError {
        ConfigError {
            file: self.file.clone(),
            line: self.line(path).0,
            key: key.to_owned(),
            message: message.into(),
        }
    }
}

/// A top-level entry of the configuration, after includes.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) value: Mapping,
    pub(crate) origin: Origin,
}

/// Reads `path` and the files it includes, in order: an entry of a later file (the including
/// one) is deep-merged over the entry of the same name from an included file.
pub(crate) fn load_entries(path: &Path) -> Result<Vec<Entry>, ConfigError> {
    let mut entries = Vec::new();
    load_into(path, &mut entries, 0)?;
    Ok(entries)
}

fn load_into(path: &Path, entries: &mut Vec<Entry>, depth: usize) -> Result<(), ConfigError> {
    let file_error = |line, key: &str, message: String| ConfigError {
        file: path.to_path_buf(),
        line,
        key: key.to_owned(),
        message,
    };
    let text: Arc<str> = std::fs::read_to_string(path)
        .map_err(|e| file_error(None, FILE_KEY, format!("cannot read: {e}")))?
        .into();
    let doc: TopLevel = serde_norway::from_str(&text).map_err(|e| {
        file_error(
            e.location().map(|l| l.line()),
            FILE_KEY,
            format!("not valid YAML: {e}"),
        )
    })?;
    let map = match doc {
        TopLevel::Map(map) => map,
        TopLevel::Other(found) => {
            return Err(file_error(
                Some(1),
                FILE_KEY,
                format!("expected a map of benchmarks, found {found}"),
            ));
        }
    };
    let origin = |name: &str| Origin {
        file: path.to_path_buf(),
        text: text.clone(),
        defined_as: name.to_owned(),
    };
    for (key, value) in map {
        let Value::String(name) = key else {
            let o = origin("");
            return Err(ConfigError {
                file: o.file,
                line: None,
                key: format!("{key:?}"),
                message: "a top-level key must be a string (a benchmark's name)".to_owned(),
            });
        };
        if name == "include" {
            let o = origin("include");
            let files = match value {
                Value::String(f) => vec![f],
                Value::Sequence(items) => items
                    .into_iter()
                    .map(|item| match item {
                        Value::String(f) => Ok(f),
                        other => Err(o.error(
                            "include",
                            &[],
                            format!("expected a file name, found {}", kind(&other)),
                        )),
                    })
                    .collect::<Result<_, _>>()?,
                other => {
                    return Err(o.error(
                        "include",
                        &[],
                        format!(
                            "expected a file name or a list of them, found {}",
                            kind(&other)
                        ),
                    ));
                }
            };
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(o.error("include", &[], "includes nest too deep (a cycle?)"));
            }
            let dir = path.parent().unwrap_or(Path::new("."));
            for file in files {
                load_into(&dir.join(file), entries, depth + 1)?;
            }
            continue;
        }
        let value = match expand_dots(value) {
            Value::Mapping(map) => map,
            Value::Null => Mapping::new(),
            other => {
                return Err(origin(&name).error(
                    &name,
                    &[],
                    format!("expected a map of options, found {}", kind(&other)),
                ));
            }
        };
        match entries.iter_mut().find(|e| e.name == name) {
            Some(existing) => {
                merge(&mut existing.value, value);
                existing.origin = origin(&name);
            }
            None => entries.push(Entry {
                origin: origin(&name),
                name,
                value,
            }),
        }
    }
    Ok(())
}

/// A configuration file's top level: its entries, a later one of the same name replacing an
/// earlier one in its place, as PyYAML reads milabench's files (its `retired.yaml` names some
/// benchmarks twice); nested maps keep refusing duplicates.
enum TopLevel {
    Map(Mapping),
    /// What the document is instead of a map.
    Other(&'static str),
}

impl<'de> serde::Deserialize<'de> for TopLevel {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = TopLevel;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of benchmarks")
            }

            fn visit_unit<E>(self) -> Result<TopLevel, E> {
                Ok(TopLevel::Map(Mapping::new()))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut data: A,
            ) -> Result<TopLevel, A::Error> {
                let mut map = Mapping::new();
                while let Some(key) = data.next_key::<Value>()? {
                    let value: Value = data.next_value()?;
                    map.insert(key, value);
                }
                Ok(TopLevel::Map(map))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut data: A,
            ) -> Result<TopLevel, A::Error> {
                while data.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(TopLevel::Other("a list"))
            }

            fn visit_str<E>(self, _: &str) -> Result<TopLevel, E> {
                Ok(TopLevel::Other("a string"))
            }

            fn visit_bool<E>(self, _: bool) -> Result<TopLevel, E> {
                Ok(TopLevel::Other("a boolean"))
            }

            fn visit_i64<E>(self, _: i64) -> Result<TopLevel, E> {
                Ok(TopLevel::Other("a number"))
            }

            fn visit_u64<E>(self, _: u64) -> Result<TopLevel, E> {
                Ok(TopLevel::Other("a number"))
            }

            fn visit_f64<E>(self, _: f64) -> Result<TopLevel, E> {
                Ok(TopLevel::Other("a number"))
            }
        }

        deserializer.deserialize_any(Visitor)
    }
}

/// Deep-merges `over` into `base` as milabench's `merge.py`: maps merge key by key; a value
/// tagged `!delete` removes the key; a list followed by `{append: [..]}` is extended; anything
/// else replaces.
pub(crate) fn merge(base: &mut Mapping, over: Mapping) {
    for (key, value) in over {
        if is_delete(&value) {
            base.remove(&key);
            continue;
        }
        match (base.get_mut(&key), value) {
            (Some(Value::Mapping(b)), Value::Mapping(o)) => merge(b, o),
            (Some(Value::Sequence(items)), Value::Mapping(o)) if o.contains_key("append") => {
                match o.get("append") {
                    Some(Value::Sequence(more)) => items.extend(more.iter().cloned()),
                    Some(one) => items.push(one.clone()),
                    None => {}
                }
            }
            (_, value) => {
                base.insert(key, cleanup(value));
            }
        }
    }
}

/// milabench's `!expand-dot` maps, everywhere in `value`: a key `a.b: v` is `a: {b: v}`, and
/// `<<<: {..}` splices a map's keys in; the parts merge as includes do.
fn expand_dots(value: Value) -> Value {
    match value {
        Value::Tagged(t) if t.tag == "expand-dot" => match expand_dots(t.value) {
            Value::Mapping(map) => Value::Mapping(expand_map(map)),
            other => other,
        },
        Value::Tagged(mut t) => {
            t.value = expand_dots(t.value);
            Value::Tagged(t)
        }
        Value::Mapping(map) => {
            Value::Mapping(map.into_iter().map(|(k, v)| (k, expand_dots(v))).collect())
        }
        Value::Sequence(items) => Value::Sequence(items.into_iter().map(expand_dots).collect()),
        other => other,
    }
}

fn expand_map(map: Mapping) -> Mapping {
    let mut out = Mapping::new();
    for (key, value) in map {
        let part = match (key.as_str(), value) {
            (Some("<<<"), Value::Mapping(inner)) => expand_map(inner),
            (Some(k), value) if k.contains('.') => {
                let (head, rest) = k.split_once('.').unwrap_or((k, ""));
                let mut inner = Mapping::new();
                inner.insert(rest.into(), value);
                let mut part = Mapping::new();
                part.insert(head.into(), Value::Mapping(expand_map(inner)));
                part
            }
            (_, value) => {
                let mut part = Mapping::new();
                part.insert(key, value);
                part
            }
        };
        merge(&mut out, part);
    }
    out
}

/// Whether `value` is milabench's `!delete` marker.
fn is_delete(value: &Value) -> bool {
    matches!(value, Value::Tagged(t) if t.tag == "delete")
}

/// A value merged in where nothing was: its `!delete`d keys dropped (milabench's `cleanup`).
fn cleanup(value: Value) -> Value {
    match value {
        Value::Mapping(map) => Value::Mapping(
            map.into_iter()
                .filter(|(_, v)| !is_delete(v))
                .map(|(k, v)| (k, cleanup(v)))
                .collect(),
        ),
        Value::Sequence(items) => Value::Sequence(items.into_iter().map(cleanup).collect()),
        other => other,
    }
}

/// A YAML value's kind, for messages.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a map",
        Value::Tagged(_) => "a tagged value",
    }
}

/// The 1-based line where `path` is written under the top-level key `entry`, by indentation;
/// the second item says whether the whole path was found (else the line is the deepest part
/// found, or the entry's).
fn find_line(text: &str, entry: &str, path: &[&str]) -> (Option<usize>, bool) {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| is_key(l, entry, Some(0))) else {
        return (None, false);
    };
    let mut found = start;
    let mut indent = 0;
    'keys: for key in path {
        for (i, line) in lines.iter().enumerate().skip(found + 1) {
            let content = line.trim_start();
            if content.is_empty() || content.starts_with('#') {
                continue;
            }
            let this = line.len() - content.len();
            if this <= indent {
                break;
            }
            if is_key(line, key, None) {
                found = i;
                indent = this;
                continue 'keys;
            }
        }
        return (Some(found + 1), false);
    }
    (Some(found + 1), true)
}

/// Whether `line` writes the key `key` (plain or quoted), at column `column` if given.
fn is_key(line: &str, key: &str, column: Option<usize>) -> bool {
    let content = line.trim_start();
    if column.is_some_and(|c| line.len() - content.len() != c) {
        return false;
    }
    let content = content.strip_prefix("- ").unwrap_or(content);
    [
        format!("{key}:"),
        format!("\"{key}\":"),
        format!("'{key}':"),
    ]
    .iter()
    .any(|k| content.starts_with(k.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_found_by_indentation() {
        let text = "a:\n  argv:\n    --x: 1\nb:\n  argv: [1]\n  plan:\n    method: njobs\n";
        assert_eq!(find_line(text, "b", &["plan", "method"]), (Some(7), true));
        assert_eq!(find_line(text, "a", &["argv", "--x"]), (Some(3), true));
        // `plan` is not under `a`: the deepest part found is the entry itself.
        assert_eq!(find_line(text, "a", &["plan"]), (Some(1), false));
        assert_eq!(find_line(text, "c", &[]), (None, false));
    }

    #[test]
    fn a_later_top_level_entry_replaces_an_earlier_one_as_pyyaml() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.yaml");
        std::fs::write(&file, "a: {x: 1}\nb: {y: 2}\na: {z: 3}\n").unwrap();
        let entries = load_entries(&file).unwrap();
        let names: Vec<_> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        let want: Mapping = serde_norway::from_str("z: 3").unwrap();
        assert_eq!(entries[0].value, want);
        std::fs::write(&file, "- a\n").unwrap();
        let e = load_entries(&file).unwrap_err();
        assert!(
            e.to_string()
                .contains("expected a map of benchmarks, found a list"),
            "{e}"
        );
    }

    #[test]
    fn expand_dot_maps_nest_dotted_keys_and_splice() {
        let v: Value = serde_norway::from_str(
            "!expand-dot\nargv.--lr: 1\nargv.--bs: 2\n<<<: {plan.method: njobs, plan.n: 2}\nx: 3\n",
        )
        .unwrap();
        let want: Value =
            serde_norway::from_str("argv: {--lr: 1, --bs: 2}\nplan: {method: njobs, n: 2}\nx: 3\n")
                .unwrap();
        assert_eq!(expand_dots(v), want);
    }

    #[test]
    fn merge_is_deep() {
        let mut base: Mapping = serde_norway::from_str("x: {a: 1, b: 2}\ny: [1]").unwrap();
        let over: Mapping = serde_norway::from_str("x: {b: 3}\ny: [2]").unwrap();
        merge(&mut base, over);
        let want: Mapping = serde_norway::from_str("x: {a: 1, b: 3}\ny: [2]").unwrap();
        assert_eq!(base, want);
    }

    #[test]
    fn delete_and_append_merge_as_milabench() {
        let mut base: Mapping = serde_norway::from_str("x: {a: 1, b: 2}\ny: [1]\nz: 3").unwrap();
        let over: Mapping = serde_norway::from_str(
            "x:\n  b: !delete\ny: {append: [2, 3]}\nz: !delete\nw:\n  k: !delete\n  l: 1\n",
        )
        .unwrap();
        merge(&mut base, over);
        let want: Mapping = serde_norway::from_str("x: {a: 1}\ny: [1, 2, 3]\nw: {l: 1}").unwrap();
        assert_eq!(base, want);
    }
}
