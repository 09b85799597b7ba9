//! OmegaConf's `${…}` interpolation, as milabench resolves its configuration: `${system.arch}`
//! from the root, `${.name}` from the node's own map, `${..num_machines}` from the map above.

use serde_norway::Value;

/// References deeper than this are a cycle (`a: ${b}`, `b: ${a}`).
const MAX_DEPTH: usize = 32;

#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Replaces every `${path}` in the strings of `root`. A string that is one reference takes the
/// referenced value (a number stays a number); a reference inside text is written as text.
/// An error names the string's place and the reference that cannot be found.
pub(crate) fn interpolate(root: &mut Value) -> Result<(), String> {
    let mut places = Vec::new();
    collect(root, &mut Vec::new(), &mut places);
    let mut resolved = Vec::new();
    for at in places {
        let Some(Value::String(text)) = get(root, &at) else {
            continue;
        };
        let value = resolve(root, &at, text, 0)?;
        resolved.push((at, value));
    }
    for (at, value) in resolved {
        if let Some(slot) = get_mut(root, &at) {
            *slot = value;
        }
    }
    Ok(())
}

/// The places of every string holding `${`.
fn collect(value: &Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match value {
        Value::String(s) if s.contains("${") => out.push(at.clone()),
        Value::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(Seg::Index(i));
                collect(item, at, out);
                at.pop();
            }
        }
        Value::Mapping(map) => {
            for (k, v) in map {
                if let Some(k) = k.as_str() {
                    at.push(Seg::Key(k.to_owned()));
                    collect(v, at, out);
                    at.pop();
                }
            }
        }
        Value::Tagged(t) => collect(&t.value, at, out),
        _ => {}
    }
}

fn place(at: &[Seg]) -> String {
    at.iter()
        .map(|s| match s {
            Seg::Key(k) => k.clone(),
            Seg::Index(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

fn resolve(root: &Value, at: &[Seg], text: &str, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!("`{}`: interpolation in a cycle", place(at)));
    }
    let trimmed = text.trim();
    let whole = trimmed.starts_with("${")
        && trimmed.ends_with('}')
        && trimmed[2..].find('}') == Some(trimmed.len() - 3);
    if whole {
        return lookup(root, at, &trimmed[2..trimmed.len() - 1], depth);
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 2..];
        let end = tail
            .find('}')
            .ok_or_else(|| format!("`{}`: unclosed `${{` in {text:?}", place(at)))?;
        let value = lookup(root, at, &tail[..end], depth)?;
        out.push_str(&scalar_text(&value).ok_or_else(|| {
            format!(
                "`{}`: `${{{}}}` is not a string or a number, cannot be part of {text:?}",
                place(at),
                &tail[..end]
            )
        })?);
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(Value::String(out))
}

fn lookup(root: &Value, at: &[Seg], reference: &str, depth: usize) -> Result<Value, String> {
    let dots = reference.chars().take_while(|c| *c == '.').count();
    let mut target: Vec<Seg> = if dots == 0 {
        Vec::new()
    } else {
        // One dot: the map holding the node; each more dot, one map up.
        let keep = at.len().checked_sub(dots).ok_or_else(|| {
            format!(
                "`{}`: `${{{reference}}}` goes above the configuration's root",
                place(at)
            )
        })?;
        at[..keep].to_vec()
    };
    for key in reference[dots..].split('.').filter(|k| !k.is_empty()) {
        let seg = match (get(root, &target), key.parse::<usize>()) {
            (Some(Value::Sequence(_)), Ok(i)) => Seg::Index(i),
            _ => Seg::Key(key.to_owned()),
        };
        target.push(seg);
    }
    let value = get(root, &target).ok_or_else(|| {
        format!(
            "`{}`: `${{{reference}}}` names nothing (looked for `{}`)",
            place(at),
            place(&target)
        )
    })?;
    match value {
        Value::String(s) if s.contains("${") => resolve(root, &target, s, depth + 1),
        other => Ok(other.clone()),
    }
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("None".to_owned()),
        _ => None,
    }
}

fn get<'a>(value: &'a Value, at: &[Seg]) -> Option<&'a Value> {
    at.iter().try_fold(value, |v, seg| match (v, seg) {
        (Value::Mapping(m), Seg::Key(k)) => m.get(k.as_str()),
        (Value::Sequence(items), Seg::Index(i)) => items.get(*i),
        (Value::Tagged(t), _) => get(&t.value, std::slice::from_ref(seg)),
        _ => None,
    })
}

fn get_mut<'a>(value: &'a mut Value, at: &[Seg]) -> Option<&'a mut Value> {
    at.iter().try_fold(value, |v, seg| match (v, seg) {
        (Value::Mapping(m), Seg::Key(k)) => m.get_mut(k.as_str()),
        (Value::Sequence(items), Seg::Index(i)) => items.get_mut(*i),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(yaml: &str) -> Result<Value, String> {
        let mut v: Value = serde_norway::from_str(yaml).unwrap();
        interpolate(&mut v).map(|()| v)
    }

    #[test]
    fn absolute_relative_and_typed_references() {
        let v = run("system: {arch: cuda, docker: {base: /w, image: 'img:${system.arch}', v: '${system.docker.base}/data'}}\nb:\n  name: x\n  group: ${.name}\n  num_machines: 2\n  requires_capabilities: ['len(nodes) >= ${..num_machines}']\n  n: ${.num_machines}\n").unwrap();
        assert_eq!(v["system"]["docker"]["image"], "img:cuda");
        assert_eq!(v["system"]["docker"]["v"], "/w/data");
        assert_eq!(v["b"]["group"], "x");
        assert_eq!(v["b"]["requires_capabilities"][0], "len(nodes) >= 2");
        assert_eq!(v["b"]["n"], Value::Number(2.into()));
    }

    #[test]
    fn chains_resolve_and_missing_or_cyclic_references_are_errors() {
        let v = run("a: ${b}\nb: ${c}-x\nc: 1\n").unwrap();
        assert_eq!(v["a"], "1-x");
        assert!(run("a: ${nope.x}\n").unwrap_err().contains("names nothing"));
        assert!(run("a: ${b}\nb: ${a}\n").unwrap_err().contains("cycle"));
    }
}
