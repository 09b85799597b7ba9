//! From entries to benchmarks: `matrix:` jobs, `inherits:` chains and placeholders.

use serde_norway::{Mapping, Value};

use super::placeholder::format_value;
use super::source::{Entry, Origin, kind, merge};
use crate::error::ConfigError;

/// Replaces every entry with a `matrix:` by its jobs, one per combination of the matrix's
/// values, with `{var}` filled in the job's name and every string of it.
pub(crate) fn expand_matrices(entries: Vec<Entry>) -> Result<Vec<Entry>, ConfigError> {
    let mut out = Vec::new();
    for entry in entries {
        let Some(matrix) = entry.value.get("matrix") else {
            out.push(entry);
            continue;
        };
        let name = &entry.name;
        let o = &entry.origin;
        let Value::Mapping(matrix) = matrix else {
            return Err(o.error(
                &format!("{name}.matrix"),
                &["matrix"],
                "expected a map of variable → list of values",
            ));
        };
        let mut vars: Vec<(String, Vec<String>)> = Vec::new();
        for (var, values) in matrix {
            let var = var.as_str().unwrap_or_default().to_owned();
            let key = format!("{name}.matrix.{var}");
            let Value::Sequence(values) = values else {
                return Err(o.error(
                    &key,
                    &["matrix", &var],
                    format!("expected a list of values, found {}", kind(values)),
                ));
            };
            let values = values
                .iter()
                .map(|v| {
                    scalar(v).ok_or_else(|| {
                        o.error(
                            &key,
                            &["matrix", &var],
                            format!(
                                "a matrix value must be a string or a number, found {}",
                                kind(v)
                            ),
                        )
                    })
                })
                .collect::<Result<_, _>>()?;
            vars.push((var, values));
        }
        let Some(Value::Mapping(job)) = entry.value.get("job") else {
            return Err(o.error(
                &format!("{name}.job"),
                &["job"],
                "a matrix entry needs a `job:` map, the template of its jobs",
            ));
        };
        for combination in combinations(&vars) {
            let lookup = |var: &str| {
                combination
                    .iter()
                    .find(|(v, _)| v == var)
                    .map(|(_, x)| x.clone())
            };
            let mut value = Value::Mapping(job.clone());
            format_value(&mut value, &lookup, false).map_err(|(path, e)| {
                let refs: Vec<&str> = std::iter::once("job")
                    .chain(path.iter().map(String::as_str))
                    .collect();
                o.error(&format!("{name}.{}", refs.join(".")), &refs, e)
            })?;
            let Value::Mapping(mut value) = value else {
                unreachable!("a map stays a map")
            };
            let Some(Value::String(job_name)) = value.remove("name") else {
                return Err(o.error(&format!("{name}.job.name"), &["job"], "a matrix job needs a `name:` (with the matrix's `{var}`s, so that each job's is unique)"));
            };
            out.push(Entry {
                name: job_name,
                value,
                origin: o.clone(),
            });
        }
    }
    Ok(out)
}

/// Every combination of the variables' values, the first variable varying slowest.
fn combinations(vars: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    vars.iter().fold(vec![Vec::new()], |acc, (var, values)| {
        acc.iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut c = prefix.clone();
                    c.push((var.clone(), v.clone()));
                    c
                })
            })
            .collect()
    })
}

/// A string or a number as text.
pub(crate) fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// An entry with its `inherits:` chain merged under it (the parent first), and the origins of
/// the chain (the entry's first), to find where a key was written.
pub(crate) fn inherit(
    entries: &[Entry],
    index: usize,
) -> Result<(Mapping, Vec<Origin>), ConfigError> {
    let mut chain = vec![index];
    let mut current = index;
    while let Some(parent) = entries[current].value.get("inherits") {
        let e = &entries[current];
        let key = format!("{}.inherits", e.name);
        let Value::String(parent) = parent else {
            return Err(e.origin.error(
                &key,
                &["inherits"],
                format!("expected an entry's name, found {}", kind(parent)),
            ));
        };
        let found = entries.iter().position(|x| &x.name == parent);
        // milabench always has a `_defaults` entry (its `get_base_defaults`: enabled, the group
        // from the name, …, as giving's defaults): a file may inherit it without defining it.
        if found.is_none() && parent == "_defaults" {
            break;
        }
        let Some(found) = found else {
            return Err(e
                .origin
                .error(&key, &["inherits"], format!("no entry named `{parent}`")));
        };
        if chain.contains(&found) {
            let names: Vec<&str> = chain
                .iter()
                .chain([&found])
                .map(|&i| entries[i].name.as_str())
                .collect();
            return Err(e.origin.error(
                &key,
                &["inherits"],
                format!("inherits in a cycle: {}", names.join(" → ")),
            ));
        }
        chain.push(found);
        current = found;
    }
    let mut value = Mapping::new();
    // milabench's `resolve_inheritance`: a child's tags join its parents' (sorted), where
    // any other list replaces.
    let mut tags: Vec<String> = Vec::new();
    for &i in chain.iter().rev() {
        if let Some(Value::Sequence(items)) = entries[i].value.get("tags") {
            tags.extend(items.iter().filter_map(scalar));
        }
        merge(&mut value, entries[i].value.clone());
    }
    if value.contains_key("tags") {
        tags.sort();
        tags.dedup();
        value.insert(
            "tags".into(),
            Value::Sequence(tags.into_iter().map(Value::String).collect()),
        );
    }
    value.remove("inherits");
    Ok((
        value,
        chain.iter().map(|&i| entries[i].origin.clone()).collect(),
    ))
}

/// Fills the system's placeholders (strictly: an unknown one is an error naming its key).
pub(crate) fn fill_system(
    name: &str,
    value: &mut Mapping,
    origins: &[Origin],
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    let mut wrapped = Value::Mapping(std::mem::take(value));
    let result = format_value(&mut wrapped, lookup, true);
    if let Value::Mapping(map) = wrapped {
        *value = map;
    }
    result.map_err(|(path, e)| {
        let refs: Vec<&str> = path.iter().map(String::as_str).collect();
        error_at(name, origins, &refs, e)
    })
}

/// An error at `path` under the benchmark `name`, naming the line in the first file of its
/// chain that writes the key.
pub(crate) fn error_at(
    name: &str,
    origins: &[Origin],
    path: &[&str],
    message: impl Into<String>,
) -> ConfigError {
    let key = std::iter::once(name)
        .chain(path.iter().copied())
        .collect::<Vec<_>>()
        .join(".");
    let origin = origins
        .iter()
        .find(|o| o.line(path).1)
        .unwrap_or(&origins[0]);
    origin.error(&key, path, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_vary_the_last_variable_fastest() {
        let vars = vec![
            ("a".to_owned(), vec!["1".to_owned(), "2".to_owned()]),
            ("b".to_owned(), vec!["x".to_owned(), "y".to_owned()]),
        ];
        let names: Vec<String> = combinations(&vars)
            .iter()
            .map(|c| c.iter().map(|(_, v)| v.as_str()).collect::<String>())
            .collect();
        assert_eq!(names, ["1x", "1y", "2x", "2y"]);
    }
}
