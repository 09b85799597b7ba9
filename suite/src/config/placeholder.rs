//! `{name}` placeholders in strings, as Python's `str.format` that milabench uses: `{{` and
//! `}}` are literal braces; a string whose braces hold something other than a name
//! (`{"image":10}`, JSON) is kept as written, as milabench keeps an argument it cannot format.

use serde_norway::Value;

/// Replaces the placeholders that `lookup` knows. With `strict`, an unknown one is an error
/// (its name); without, it is left as written (matrix variables are filled in before the
/// system's).
pub(crate) fn format(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    strict: bool,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            // Escapes survive a lenient pass, for the strict pass to read.
            out.push_str(if strict { &tail[..1] } else { &tail[..2] });
            rest = &tail[2..];
        } else if let Some(name) = tail.strip_prefix('{') {
            let Some(end) = name.find('}') else {
                return Err(format!("unclosed `{{` in {text:?}"));
            };
            let name = &name[..end];
            if !is_identifier(name) {
                return Ok(text.to_owned());
            }
            match lookup(name) {
                Some(value) => out.push_str(&value),
                None if strict => return Err(format!("unknown placeholder `{{{name}}}`")),
                None => out.push_str(&tail[..end + 2]),
            }
            rest = &tail[end + 2..];
        } else {
            return Err(format!("unmatched `}}` in {text:?} (write `}}}}`)"));
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Whether `name` is a Python identifier (what a placeholder is named).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Formats every string in `value` (keys included), returning the path of the first failure.
pub(crate) fn format_value(
    value: &mut Value,
    lookup: &dyn Fn(&str) -> Option<String>,
    strict: bool,
) -> Result<(), (Vec<String>, String)> {
    match value {
        Value::String(s) => *s = format(s, lookup, strict).map_err(|e| (Vec::new(), e))?,
        Value::Sequence(items) => {
            for item in items {
                format_value(item, lookup, strict)?;
            }
        }
        Value::Mapping(map) => {
            let old = std::mem::take(map);
            for (mut key, mut item) in old {
                let name = key.as_str().unwrap_or_default().to_owned();
                let at = |(mut path, e): (Vec<String>, String)| {
                    path.insert(0, name.clone());
                    (path, e)
                };
                format_value(&mut key, lookup, strict).map_err(at)?;
                format_value(&mut item, lookup, strict).map_err(at)?;
                map.insert(key, item);
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<String> {
        (name == "n_gpu").then(|| "2".to_owned())
    }

    #[test]
    fn known_placeholders_are_filled_and_braces_escape() {
        assert_eq!(format("-j{n_gpu}", &vars, true).unwrap(), "-j2");
        assert_eq!(format("{{x}} {n_gpu}", &vars, true).unwrap(), "{x} 2");
        assert_eq!(
            format("{{x}} {other}", &vars, false).unwrap(),
            "{{x}} {other}"
        );
    }

    #[test]
    fn unknown_or_broken_placeholders_are_errors_when_strict() {
        assert_eq!(
            format("{nope}", &vars, true).unwrap_err(),
            "unknown placeholder `{nope}`"
        );
        assert!(
            format("{n_gpu", &vars, true)
                .unwrap_err()
                .contains("unclosed")
        );
        assert!(format("a}", &vars, true).unwrap_err().contains("unmatched"));
    }

    #[test]
    fn braces_around_other_than_a_name_keep_the_string() {
        assert_eq!(
            format("{n_gpu} {\"image\":10}", &vars, true).unwrap(),
            "{n_gpu} {\"image\":10}"
        );
    }
}
