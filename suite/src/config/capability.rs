//! milabench's `requires_capabilities`: Python conditions on the system
//! (`"gpu['count'] > 1"`, `"len(nodes) >= 2"`), evaluated before a benchmark runs.

use serde_norway::Value;

/// The first condition of `conditions` the system does not satisfy, with why (one that cannot
/// be read counts as not satisfied, naming what could not be read). `system` is milabench's
/// `system` section; `gpu.count` and `nodes` are filled in by the caller.
pub(crate) fn unsatisfied(conditions: &[String], system: &Value) -> Option<String> {
    conditions.iter().find_map(|c| match eval(c, system) {
        Ok(true) => None,
        Ok(false) => Some(format!("requires_capabilities: `{c}` is not satisfied")),
        Err(e) => Some(format!(
            "requires_capabilities: `{c}` cannot be evaluated: {e}"
        )),
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Term {
    Num(f64),
    Text(String),
}

fn eval(condition: &str, system: &Value) -> Result<bool, String> {
    // `a or b`, `a and b`: Python's precedence, `and` first.
    for clause in condition.split(" or ") {
        let mut all = true;
        for part in clause.split(" and ") {
            all &= comparison(part.trim(), system)?;
        }
        if all {
            return Ok(true);
        }
    }
    Ok(false)
}

fn comparison(text: &str, system: &Value) -> Result<bool, String> {
    for op in ["==", "!=", ">=", "<=", ">", "<"] {
        if let Some((a, b)) = text.split_once(op) {
            let (a, b) = (term(a.trim(), system)?, term(b.trim(), system)?);
            return match (a, b) {
                (Term::Num(a), Term::Num(b)) => Ok(match op {
                    "==" => a == b,
                    "!=" => a != b,
                    ">=" => a >= b,
                    "<=" => a <= b,
                    ">" => a > b,
                    _ => a < b,
                }),
                (Term::Text(a), Term::Text(b)) if op == "==" => Ok(a == b),
                (Term::Text(a), Term::Text(b)) if op == "!=" => Ok(a != b),
                _ => Err(format!("`{text}` compares a number with a string")),
            };
        }
    }
    match term(text, system)? {
        Term::Num(n) => Ok(n != 0.0),
        Term::Text(t) => Ok(!t.is_empty()),
    }
}

fn term(text: &str, system: &Value) -> Result<Term, String> {
    if let Ok(n) = text.parse::<f64>() {
        return Ok(Term::Num(n));
    }
    for q in ['\'', '"'] {
        if let Some(inner) = text.strip_prefix(q).and_then(|t| t.strip_suffix(q)) {
            return Ok(Term::Text(inner.to_owned()));
        }
    }
    if let Some(inner) = text.strip_prefix("len(").and_then(|t| t.strip_suffix(')')) {
        return match lookup(inner.trim(), system)? {
            Value::Sequence(items) => Ok(Term::Num(items.len() as f64)),
            Value::Mapping(map) => Ok(Term::Num(map.len() as f64)),
            Value::String(s) => Ok(Term::Num(s.chars().count() as f64)),
            _ => Err(format!("`{inner}` has no length")),
        };
    }
    match lookup(text, system)? {
        Value::Number(n) => n
            .as_f64()
            .map(Term::Num)
            .ok_or_else(|| format!("`{text}` is not a number")),
        Value::String(s) => Ok(Term::Text(s.clone())),
        Value::Bool(b) => Ok(Term::Num(f64::from(u8::from(*b)))),
        _ => Err(format!("`{text}` is not a number or a string")),
    }
}

/// `name`, `name['key']`, `name["key"][0]`: a value of the system section.
fn lookup<'a>(path: &str, system: &'a Value) -> Result<&'a Value, String> {
    let (name, mut rest) = path.split_at(path.find('[').unwrap_or(path.len()));
    let mut value = system
        .get(name)
        .ok_or_else(|| format!("the system has no `{name}`"))?;
    while let Some(inner) = rest.strip_prefix('[') {
        let end = inner
            .find(']')
            .ok_or_else(|| format!("unclosed `[` in `{path}`"))?;
        let key = inner[..end].trim().trim_matches(['\'', '"']);
        value = match key.parse::<usize>() {
            Ok(i) if value.is_sequence() => value.get(i),
            _ => value.get(key),
        }
        .ok_or_else(|| format!("`{path}` names nothing"))?;
        rest = &inner[end + 1..];
    }
    if !rest.is_empty() {
        return Err(format!("cannot read `{path}`"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milabench_conditions_on_gpus_and_nodes() {
        let system: Value =
            serde_norway::from_str("gpu: {count: 1}\nnodes: [{name: a}]\narch: cuda\n").unwrap();
        let check = |c: &str| unsatisfied(&[c.to_owned()], &system);
        assert_eq!(
            check("gpu['count'] > 1").unwrap(),
            "requires_capabilities: `gpu['count'] > 1` is not satisfied"
        );
        assert!(check("len(nodes) >= 2").is_some());
        assert_eq!(check("len(nodes) >= 1"), None);
        assert_eq!(check("arch == 'cuda' and gpu[\"count\"] == 1"), None);
        assert_eq!(check("arch == 'rocm' or len(nodes) == 1"), None);
        assert!(
            check("cuda.is_available()")
                .unwrap()
                .contains("cannot be evaluated")
        );
    }
}
