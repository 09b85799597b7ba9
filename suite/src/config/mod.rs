//! A suite's configuration, in milabench's YAML: which benchmarks, with which arguments, how
//! scheduled. See `docs/suite.md`.

mod argv;
mod bench;
mod benchfile;
mod capability;
mod context;
mod interpolate;
mod launcher;
mod placeholder;
mod resolve;
mod scaling;
mod select;
mod source;
mod system;

use std::path::{Path, PathBuf};

use serde_norway::{Mapping, Value};

pub use argv::Sizing;
pub use bench::{Bench, EarlyStopOptions, Plan, UsageThresholds};
pub use context::{Dirs, Placeholders};
pub use launcher::Launcher;
pub use scaling::{Scaling, to_octet};
pub use select::Selection;
pub use system::{
    CpuOptions, DockerConfig, GpuConfig, Node, SizerOptions, SystemConfig, SystemOptions,
    TorchrunOptions,
};

use crate::error::ConfigError;

/// A loaded suite: every benchmark that may run (entries starting with `_` are templates and
/// are not here), in the file's order.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The configuration file.
    pub file: PathBuf,
    /// Its benchmarks, disabled ones included (`enabled: false`).
    pub benches: Vec<Bench>,
    /// What was read and is not used: keys giving does not know, kept in [`Bench::extra`].
    pub warnings: Vec<String>,
}

impl Suite {
    /// Loads `file`, its includes, matrices and inheritance, and fills in the placeholders.
    ///
    /// ```
    /// use giving_suite::config::{Placeholders, Suite};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let file = dir.path().join("suite.yaml");
    /// std::fs::write(&file, "
    /// _base:
    ///   command: [echo]
    ///   argv: {--workers: '{cpu_per_gpu}'}
    /// bs:
    ///   matrix: {size: [8, 16]}
    ///   job: {name: 'mlp-bs{size}', inherits: _base, argv: {--batch-size: '{size}'}}
    /// ").unwrap();
    /// let system = Placeholders { n_gpu: 2, n_cpu: 16, data: "/data".into(), runs: "runs".into(), giving: "giving".into(), ..Default::default() };
    /// let suite = Suite::load(&file, &system).unwrap();
    /// let names: Vec<_> = suite.benches.iter().map(|b| b.name.as_str()).collect();
    /// assert_eq!(names, ["mlp-bs8", "mlp-bs16"]);
    /// assert_eq!(suite.benches[1].argv, ["--workers", "8", "--batch-size", "16"]);
    /// ```
    pub fn load(file: impl AsRef<Path>, system: &Placeholders) -> Result<Self, ConfigError> {
        let file = file.as_ref();
        let entries = resolve::expand_matrices(source::load_entries(file)?)?;
        // milabench's `"*"`: merged over every benchmark, after its inheritance.
        let star = entries.iter().position(|e| e.name == "*");
        let system_value = system.system_value();
        let dir = file.parent().unwrap_or(Path::new("."));
        let sizing = system.sizing(dir).map_err(|message| ConfigError {
            file: file.to_path_buf(),
            line: None,
            key: "options.sizer".to_owned(),
            message,
        })?;
        let mut benches = Vec::new();
        let mut warnings = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            if entry.name.starts_with('_') || entry.name == "*" {
                continue;
            }
            let name = &entry.name;
            let (mut value, origins) = resolve::inherit(&entries, index)?;
            if let Some(star) = star {
                source::merge(&mut value, entries[star].value.clone());
            }
            let value = interpolated(name, value, &system_value, &origins)?;
            let text = |key: &str| value.get(key).and_then(resolve::scalar);
            let group = text("group").unwrap_or_else(|| name.clone());
            let install_group = text("install_group").unwrap_or_else(|| group.clone());
            // Relative to the folder of the file that wrote the benchmark, as milabench's
            // `config_base`.
            let definition = text("definition").map(|d| {
                let dir = entry.origin.file.parent().unwrap_or(Path::new("."));
                absolute(&dir.join(d))
            });
            let ctx = context::BenchContext::new(
                system,
                name,
                &group,
                &install_group,
                definition.as_deref(),
            );
            let mut value = value;
            resolve::fill_system(name, &mut value, &origins, &|n| ctx.lookup(n))?;
            let mut bench = bench::build(name, &value, &origins, &ctx, &sizing, &mut warnings)?;
            if bench.skip.is_none() {
                bench.skip = capability::unsatisfied(&bench.requires_capabilities, &system_value);
            }
            if bench.definition.is_some() {
                let config = milabench_config(&bench, &value, &system_value);
                bench
                    .env
                    .entry("MILABENCH_CONFIG".to_owned())
                    .or_insert(config);
            }
            benches.push(bench);
        }
        Ok(Self {
            file: file.to_path_buf(),
            benches,
            warnings,
        })
    }

    /// The benchmarks to run: enabled, chosen by `selection`, and not skipped by their
    /// `requires_capabilities`.
    pub fn selected(&self, selection: &Selection) -> impl Iterator<Item = &Bench> + use<'_> {
        let selection = selection.clone();
        self.benches
            .iter()
            .filter(move |b| b.enabled && b.skip.is_none() && selection.accepts(b))
    }

    /// The benchmarks `selection` chooses that do not run on this system, with why.
    pub fn skipped(&self, selection: &Selection) -> impl Iterator<Item = (&Bench, &str)> {
        let selection = selection.clone();
        self.benches.iter().filter_map(move |b| {
            let why = b.skip.as_deref()?;
            (b.enabled && selection.accepts(b)).then_some((b, why))
        })
    }
}

/// milabench's `MILABENCH_CONFIG` for a benchmark of a `definition`: its resolved
/// configuration as JSON, with `name`, `tag`, `dirs` and the `system` section, what
/// milabench's benchmarks read there (dinov2's voirfile reads the nodes).
fn milabench_config(bench: &Bench, value: &Mapping, system: &Value) -> String {
    let mut config = match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let dirs = &bench.dirs;
    let path = |p: &Path| serde_json::Value::from(p.display().to_string());
    config.insert("name".to_owned(), bench.name.clone().into());
    config.insert("tag".to_owned(), serde_json::json!([bench.name]));
    config.insert(
        "dirs".to_owned(),
        serde_json::json!({
            "venv": path(&dirs.venv), "data": path(&dirs.data), "runs": path(&dirs.runs),
            "extra": path(&dirs.extra), "cache": path(&dirs.cache), "base": path(&dirs.base),
        }),
    );
    if let Some(code) = &bench.definition {
        config.insert("definition".to_owned(), path(code));
    }
    config.insert(
        "system".to_owned(),
        serde_json::to_value(system).unwrap_or_default(),
    );
    serde_json::Value::Object(config).to_string()
}

/// `value` with OmegaConf's `${…}` resolved, seen as milabench sees it: beside `system`.
fn interpolated(
    name: &str,
    value: Mapping,
    system: &Value,
    origins: &[source::Origin],
) -> Result<Mapping, ConfigError> {
    let mut root = Mapping::new();
    root.insert("system".into(), system.clone());
    root.insert(name.into(), Value::Mapping(value));
    let mut root = Value::Mapping(root);
    interpolate::interpolate(&mut root).map_err(|e| resolve::error_at(name, origins, &[], e))?;
    let Value::Mapping(mut root) = root else {
        unreachable!("a map stays a map")
    };
    match root.remove(name) {
        Some(Value::Mapping(value)) => Ok(value),
        _ => unreachable!("the benchmark stays a map"),
    }
}

/// `path` made absolute and without `..`, as Python's `Path.resolve` (without following links:
/// the folder need not exist).
fn absolute(path: &Path) -> PathBuf {
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests;
