//! milabench's batch sizer (`sizer.py`): with `options.sizer.auto`, `auto_batch(…)` becomes
//! the batch size that fills the GPU's memory, by a line fitted through a table of measured
//! (batch size, memory) pairs per benchmark (`config/scaling/*.yaml`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_norway::Value;

/// The measured memory of each benchmark's batch sizes: `(bytes, batch size)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scaling {
    tables: BTreeMap<String, Vec<(f64, f64)>>,
}

impl Scaling {
    /// Reads a scaling file: milabench's first format (`model: {batch: "4108.75 MiB"}`) or
    /// its second (`observations: [{batch_size, memory, perf}]`).
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let doc: Value = serde_norway::from_str(&text)
            .map_err(|e| format!("{}: not valid YAML: {e}", path.display()))?;
        let mut tables = BTreeMap::new();
        let Value::Mapping(map) = doc else {
            return Ok(Self::default());
        };
        for (name, entry) in map {
            let Some(name) = name.as_str() else { continue };
            let mut points = Vec::new();
            if let Some(Value::Mapping(model)) = entry.get("model") {
                for (size, memory) in model {
                    if let (Some(size), Some(memory)) = (number(size), memory.as_str()) {
                        points.push((to_octet(memory)?, size));
                    }
                }
            } else if let Some(Value::Sequence(observations)) = entry.get("observations") {
                for o in observations {
                    let size = o.get("batch_size").and_then(number);
                    let memory = o.get("memory").and_then(Value::as_str);
                    if let (Some(size), Some(memory)) = (size, memory) {
                        points.push((to_octet(memory)?, size));
                    }
                }
            } else {
                continue;
            }
            tables.insert(name.to_owned(), points);
        }
        Ok(Self { tables })
    }

    /// `Sizer.auto_size`: the batch size of `bench` for `capacity` bytes, rounded as
    /// milabench rounds it (half up, then down to a `multiple`, or to a `power`); 1 when the
    /// benchmark has fewer than two measures.
    pub fn size(
        &self,
        bench: &str,
        capacity: f64,
        multiple: Option<u64>,
        power: Option<u64>,
    ) -> i64 {
        let Some(points) = self.tables.get(bench).filter(|p| p.len() > 1) else {
            return 1;
        };
        // numpy's `polyfit(mem, size, deg=1)`: least squares.
        let n = points.len() as f64;
        let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
        let my = points.iter().map(|p| p.1).sum::<f64>() / n;
        let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        if sxx == 0.0 {
            return 1;
        }
        let slope = sxy / sxx;
        let fitted = my + slope * (capacity - mx);
        let mut size = fitted as i64;
        if size <= 0 {
            return 1;
        }
        if fitted - size as f64 > 0.5 {
            size += 1;
        }
        let mut out = size;
        if let Some(m) = multiple.filter(|m| *m > 0) {
            out = size / m as i64 * m as i64;
        }
        if let Some(p) = power.filter(|p| *p > 1) {
            out = (p as i64).pow((size as f64).log2() as u32);
        }
        out.max(1)
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// milabench's `to_octet`: `"81920 MiB"`, `"64Go"`, `"1.5 GB"` as bytes.
pub fn to_octet(value: &str) -> Result<f64, String> {
    // In milabench's order: the first prefix whose unit the text holds.
    const PREFIXES: &[(&str, i32, Option<i32>)] = &[
        ("T", 12, Some(4)),
        ("G", 9, Some(3)),
        ("M", 6, Some(2)),
        ("k", 3, Some(1)),
        ("h", 2, None),
        ("da", 1, None),
        ("d", -1, None),
        ("c", -2, None),
        ("m", -3, None),
        ("u", -6, None),
        ("n", -9, None),
        ("p", -12, None),
    ];
    let bad = || format!("`{value}` is not an amount of memory");
    let parse = |s: &str| s.trim().parse::<f64>().map_err(|_| bad());
    for (p, decimal, binary) in PREFIXES {
        for unit in ["iB", "io"] {
            if value.contains(&format!("{p}{unit}")) {
                let exp = binary.ok_or_else(bad)?;
                let n = value.len() - p.len() - 2;
                return Ok(parse(&value[..n])? * 1024f64.powi(exp));
            }
        }
        for unit in ["B", "o"] {
            if value.contains(&format!("{p}{unit}")) {
                let n = value.len() - p.len() - 1;
                return Ok(parse(&value[..n])? * 10f64.powi(*decimal));
            }
        }
    }
    parse(&value.replace("io", "").replace('o', ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_amounts_as_milabench_reads_them() {
        assert_eq!(to_octet("81920 MiB").unwrap(), 81920.0 * 1024.0 * 1024.0);
        assert_eq!(to_octet("64Go").unwrap(), 64e9);
        assert_eq!(to_octet("2 GiB").unwrap(), 2.0 * 1024f64.powi(3));
        assert_eq!(to_octet("512").unwrap(), 512.0);
        assert!(to_octet("lots").is_err());
    }
}
