//! Structure-aware suite configurations: milabench-shaped YAML (benchmarks with the keys the
//! loader reads, placeholders, interpolations, `auto_batch`/`expr` arguments, the `"*"` entry,
//! `inherits` chains) and `system.yaml` files, so that the fuzzer spends its time past the YAML
//! parser, in the loader's merging, resolution and planning.

use arbitrary::Arbitrary;
use serde_json::{Map, Value as J};

/// Keys of a benchmark entry, as milabench's files use them.
const BENCH_KEYS: [&str; 22] = [
    "inherits", "command", "definition", "argv", "tags", "weight", "plan", "method", "n",
    "num_machines", "voir", "max_duration", "enabled", "requires_capabilities", "install_group",
    "group", "<<<", "!delete", "launcher", "env", "njobs", "per_gpu",
];

/// Strings milabench's files hold: placeholders, interpolations, sizer and expression calls.
const STRINGS: [&str; 18] = [
    "{cpu_count}", "{gpu_count}", "{n_worker}", "{cpu_per_gpu}", "{arch}", "{milabench_data}",
    "{milabench_base}", "{benchmark_folder}", "${..num_machines}", "${dirs.data}",
    "auto_batch(64)", "auto(8)", "expr(2 * {gpu_count})", "{unknown}", "${", "python", "main.py",
    "len(nodes) >= 2",
];

/// Keys of a `system.yaml`.
const SYSTEM_KEYS: [&str; 12] = [
    "arch", "nodes", "docker", "options", "gpu", "dirs", "name", "ip", "main", "user", "port",
    "capacity",
];

/// A YAML value.
#[derive(Arbitrary, Debug)]
pub enum YVal {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// One of milabench's strings, by index.
    Known(u8),
    /// Any string.
    Str(String),
    /// A list.
    List(Vec<YVal>),
    /// A mapping with benchmark keys (by index) or free keys.
    Map(Vec<(Key, YVal)>),
}

/// A mapping key.
#[derive(Arbitrary, Debug)]
pub enum Key {
    /// A benchmark key, by index.
    Bench(u8),
    /// A system key, by index.
    System(u8),
    /// Any key.
    Free(String),
}

impl Key {
    fn text(&self) -> String {
        match self {
            Key::Bench(i) => BENCH_KEYS[usize::from(*i) % BENCH_KEYS.len()].to_owned(),
            Key::System(i) => SYSTEM_KEYS[usize::from(*i) % SYSTEM_KEYS.len()].to_owned(),
            Key::Free(text) => text.clone(),
        }
    }
}

impl YVal {
    fn json(&self, depth: usize) -> J {
        if depth > 6 {
            return J::Null;
        }
        match self {
            YVal::Null => J::Null,
            YVal::Bool(b) => J::Bool(*b),
            YVal::Int(i) => J::from(*i),
            YVal::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            YVal::Known(i) => J::String(STRINGS[usize::from(*i) % STRINGS.len()].to_owned()),
            YVal::Str(s) => J::String(s.clone()),
            YVal::List(items) => J::Array(items.iter().map(|v| v.json(depth + 1)).collect()),
            YVal::Map(entries) => J::Object(map(entries, depth + 1)),
        }
    }
}

fn map(entries: &[(Key, YVal)], depth: usize) -> Map<String, J> {
    entries
        .iter()
        .map(|(k, v)| (k.text(), v.json(depth)))
        .collect()
}

/// A suite file and maybe a system file, or raw text for either.
#[derive(Arbitrary, Debug)]
pub struct SuiteCase {
    /// Benchmarks: name index (`b0`…`b7`, `"*"` for 8) and entries.
    pub benches: Vec<(u8, Vec<(Key, YVal)>)>,
    /// The system file's top-level entries.
    pub system: Option<Vec<(Key, YVal)>>,
    /// Raw text in place of the suite file.
    pub raw_suite: Option<String>,
    /// Raw text in place of the system file.
    pub raw_system: Option<String>,
}

impl SuiteCase {
    /// The suite file's text.
    pub fn suite_yaml(&self) -> String {
        if let Some(raw) = &self.raw_suite {
            return raw.clone();
        }
        let mut top = Map::new();
        for (name, entries) in &self.benches {
            let name = match name % 9 {
                8 => "*".to_owned(),
                i => format!("b{i}"),
            };
            top.insert(name, J::Object(map(entries, 0)));
        }
        serde_norway::to_string(&J::Object(top)).unwrap_or_default()
    }

    /// The system file's text, if any.
    pub fn system_yaml(&self) -> Option<String> {
        if let Some(raw) = &self.raw_system {
            return Some(raw.clone());
        }
        let entries = self.system.as_ref()?;
        let mut top = Map::new();
        top.insert("system".to_owned(), J::Object(map(entries, 0)));
        serde_norway::to_string(&J::Object(top)).ok()
    }
}
