//! A suite's configuration, in milabench's YAML: which benchmarks, with which arguments, how
//! scheduled. See `docs/suite.md`.

mod bench;
mod placeholder;
mod resolve;
mod select;
mod source;
mod system;

use std::path::{Path, PathBuf};

pub use bench::{Bench, EarlyStopOptions, Plan, UsageThresholds};
pub use select::Selection;
pub use system::{Node, SystemConfig};

use crate::error::ConfigError;

/// What a configuration's system placeholders are filled with.
#[derive(Debug, Clone)]
pub struct Placeholders {
    /// `{n_gpu}`: GPUs on this machine.
    pub n_gpu: usize,
    /// Logical CPUs; `{cpu_per_gpu}` is this over `max(n_gpu, 1)`.
    pub n_cpu: usize,
    /// `{data}`: where benchmarks find their data.
    pub data: PathBuf,
    /// `{runs}`: the folder of runs.
    pub runs: PathBuf,
    /// `{giving}`: the `giving` program running the suite.
    pub giving: PathBuf,
}

impl Placeholders {
    fn lookup(&self, name: &str) -> Option<String> {
        Some(match name {
            "n_gpu" => self.n_gpu.to_string(),
            "cpu_per_gpu" => (self.n_cpu / self.n_gpu.max(1)).max(1).to_string(),
            "data" => self.data.display().to_string(),
            "runs" => self.runs.display().to_string(),
            "giving" => self.giving.display().to_string(),
            _ => return None,
        })
    }
}

/// A loaded suite: every benchmark that may run (entries starting with `_` are templates and
/// are not here), in the file's order.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The configuration file.
    pub file: PathBuf,
    /// Its benchmarks, disabled ones included (`enabled: false`).
    pub benches: Vec<Bench>,
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
    /// let system = Placeholders { n_gpu: 2, n_cpu: 16, data: "/data".into(), runs: "runs".into(), giving: "giving".into() };
    /// let suite = Suite::load(&file, &system).unwrap();
    /// let names: Vec<_> = suite.benches.iter().map(|b| b.name.as_str()).collect();
    /// assert_eq!(names, ["mlp-bs8", "mlp-bs16"]);
    /// assert_eq!(suite.benches[1].argv, ["--workers", "8", "--batch-size", "16"]);
    /// ```
    pub fn load(file: impl AsRef<Path>, system: &Placeholders) -> Result<Self, ConfigError> {
        let file = file.as_ref();
        let entries = resolve::expand_matrices(source::load_entries(file)?)?;
        let mut benches = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            if entry.name.starts_with('_') {
                continue;
            }
            let (mut value, origins) = resolve::inherit(&entries, index)?;
            resolve::fill_system(&entry.name, &mut value, &origins, &|n| system.lookup(n))?;
            benches.push(bench::build(&entry.name, &value, &origins)?);
        }
        Ok(Self {
            file: file.to_path_buf(),
            benches,
        })
    }

    /// The benchmarks to run: enabled and chosen by `selection`.
    pub fn selected(&self, selection: &Selection) -> impl Iterator<Item = &Bench> + use<'_> {
        let selection = selection.clone();
        self.benches
            .iter()
            .filter(move |b| b.enabled && selection.accepts(b))
    }
}

#[cfg(test)]
mod tests;
