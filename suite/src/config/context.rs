//! What a benchmark's `{placeholder}`s are filled with: milabench's `sizer` context
//! (`{cpu_count} {gpu_count} {cpu_per_gpu} {n_worker} {arch} {device_name} {ccl}` and the
//! `{milabench_*}` folders) and giving's own (`{n_gpu} {data} {runs} {giving}`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use serde_norway::{Mapping, Value};

use super::argv::Sizing;
use super::scaling::{Scaling, to_octet};
use super::system::SystemConfig;

/// What a configuration's placeholders are filled with: the machine, the folders, and the
/// system file's settings (docs/suite.md lists the placeholders).
#[derive(Debug, Clone, Default)]
pub struct Placeholders {
    /// `{n_gpu}`, milabench's `{gpu_count}`: GPUs on a node.
    pub n_gpu: usize,
    /// Logical CPUs; milabench's `{cpu_count}` unless the system's `options.cpu.total_count`
    /// says otherwise. `{cpu_per_gpu}` is `{cpu_count} // max(n_gpu, 1)`.
    pub n_cpu: usize,
    /// `{data}`, `{milabench_data}`: where benchmarks find their data.
    pub data: PathBuf,
    /// `{runs}`, `{milabench_runs}`: the folder of runs.
    pub runs: PathBuf,
    /// `{giving}`: the `giving` program running the suite.
    pub giving: PathBuf,
    /// milabench's base folder (`{milabench_base}`; `venv/`, `extra/` and `cache/` are under
    /// it). `None`: the folder holding `runs`.
    pub base: Option<PathBuf>,
    /// The system file (`--system`): its `arch`, `dirs`, `options`, `gpu`, nodes, and what
    /// `${system.…}` reads.
    pub system: Option<SystemConfig>,
    /// The GPUs' vendor found on this machine (`cuda`, `rocm`, `xpu`), when the system file
    /// does not say its `arch`.
    pub arch: Option<String>,
}

impl Placeholders {
    /// milabench's `system` section as `requires_capabilities` and `${system.…}` read it:
    /// the file's, with `gpu.count` (default: `n_gpu`), `arch` and the nodes filled in.
    pub(crate) fn system_value(&self) -> Value {
        let mut system = match self.system.as_ref().map(|s| &s.raw) {
            Some(Value::Mapping(m)) => m.clone(),
            _ => Mapping::new(),
        };
        let mut gpu = match system.get("gpu") {
            Some(Value::Mapping(m)) => m.clone(),
            _ => Mapping::new(),
        };
        if !gpu.contains_key("count") {
            gpu.insert("count".into(), Value::Number(self.n_gpu.into()));
        }
        system.insert("gpu".into(), Value::Mapping(gpu));
        system.insert("arch".into(), Value::String(self.arch()));
        if !system.contains_key("nodes") {
            let local: Mapping = [("name", "local"), ("ip", "127.0.0.1")]
                .into_iter()
                .map(|(k, v)| (Value::from(k), Value::from(v)))
                .collect();
            system.insert("nodes".into(), Value::Sequence(vec![Value::Mapping(local)]));
        }
        Value::Mapping(system)
    }
}

/// A benchmark's folders, as milabench's `pack.dirs`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Dirs {
    /// milabench's base (`{milabench_base}`).
    pub base: PathBuf,
    /// The virtual environment: `{venv}/{install_group}`.
    pub venv: PathBuf,
    /// Data sets.
    pub data: PathBuf,
    /// Runs.
    pub runs: PathBuf,
    /// The benchmark's scratch folder: `{extra}/{group}`.
    pub extra: PathBuf,
    /// Caches (`XDG_CACHE_HOME`, `TORCH_HOME`).
    pub cache: PathBuf,
    /// The definition's folder (`{milabench_code}`), when it has one.
    pub code: Option<PathBuf>,
}

impl Dirs {
    /// The `MILABENCH_DIR_*` variables of milabench's `make_env`.
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("VENV", &self.venv),
            ("DATA", &self.data),
            ("RUNS", &self.runs),
            ("EXTRA", &self.extra),
            ("CACHE", &self.cache),
        ]
        .into_iter()
        .map(|(k, v)| (format!("MILABENCH_DIR_{k}"), v.display().to_string()))
        .collect()
    }
}

/// One benchmark's placeholder values.
#[derive(Debug, Clone)]
pub(crate) struct BenchContext<'a> {
    pub(crate) system: &'a Placeholders,
    pub(crate) name: String,
    pub(crate) dirs: Dirs,
}

impl<'a> BenchContext<'a> {
    /// The context of the benchmark `name` of `group` and `install_group`, defined in
    /// `definition` (already made absolute).
    pub(crate) fn new(
        system: &'a Placeholders,
        name: &str,
        group: &str,
        install_group: &str,
        definition: Option<&Path>,
    ) -> Self {
        let sys = system.system.as_ref();
        let dir = |key: &str, default: PathBuf| {
            sys.and_then(|s| s.dirs.get(key).cloned())
                .unwrap_or(default)
        };
        let base = system.milabench_base();
        let dirs = Dirs {
            venv: dir("venv", base.join("venv")).join(install_group),
            data: dir("data", system.data.clone()),
            runs: dir("runs", system.runs.clone()),
            extra: dir("extra", base.join("extra")).join(group),
            cache: dir("cache", base.join("cache")),
            code: definition.map(Path::to_path_buf),
            base,
        };
        Self {
            system,
            name: name.to_owned(),
            dirs,
        }
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<String> {
        let s = self.system;
        let path = |p: &Path| p.display().to_string();
        Some(match name {
            "n_gpu" | "gpu_count" => s.n_gpu.to_string(),
            "cpu_count" => s.cpu_count().to_string(),
            "cpu_per_gpu" => s.cpu_per_gpu().to_string(),
            "n_worker" => s.n_worker().to_string(),
            "arch" => s.arch(),
            "device_name" => device_name(&s.arch()).to_owned(),
            "ccl" => ccl(&s.arch()).to_owned(),
            "data" => path(&s.data),
            "runs" => path(&s.runs),
            "giving" => path(&s.giving),
            "milabench_base" => path(&self.dirs.base),
            "milabench_venv" => path(&self.dirs.venv),
            "milabench_data" => path(&self.dirs.data),
            "milabench_runs" => path(&self.dirs.runs),
            "milabench_extra" => path(&self.dirs.extra),
            "milabench_cache" => path(&self.dirs.cache),
            "milabench_code" | "benchmark_folder" => self.dirs.code.as_deref().map(path)?,
            "milabench_name" => self.name.clone(),
            _ => return None,
        })
    }
}

impl Placeholders {
    /// milabench's base folder: `base`, else the folder holding `runs`.
    pub fn milabench_base(&self) -> PathBuf {
        self.base.clone().unwrap_or_else(|| {
            self.runs
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        })
    }

    /// The accelerator's kind: the system's `arch`, else the one found, else `cuda` with GPUs
    /// and `cpu` without.
    pub fn arch(&self) -> String {
        self.system
            .as_ref()
            .and_then(|s| s.arch.clone())
            .or_else(|| self.arch.clone())
            .unwrap_or_else(|| if self.n_gpu > 0 { "cuda" } else { "cpu" }.to_owned())
    }

    /// milabench's `{cpu_count}`: `options.cpu.total_count` (else this machine's CPUs) less
    /// `reserved_cores`.
    pub fn cpu_count(&self) -> usize {
        let cpu = self.system.as_ref().map(|s| &s.options.cpu);
        let total = cpu.and_then(|c| c.total_count).unwrap_or(self.n_cpu);
        total.saturating_sub(cpu.map_or(0, |c| c.reserved_cores))
    }

    /// milabench's `{cpu_per_gpu}`: `{cpu_count} // max({gpu_count}, 1)` (0 when there are
    /// more GPUs than CPUs, as milabench).
    pub fn cpu_per_gpu(&self) -> usize {
        self.cpu_count() / self.n_gpu.max(1)
    }

    /// milabench's `{n_worker}`: `options.cpu.n_workers`, else `{cpu_per_gpu}` within
    /// `options.cpu.min ..= max` (2 ..= 16).
    pub fn n_worker(&self) -> usize {
        let defaults = super::system::CpuOptions::default();
        let cpu = self.system.as_ref().map_or(&defaults, |s| &s.options.cpu);
        cpu.n_workers
            .unwrap_or_else(|| self.cpu_per_gpu().max(cpu.min).min(cpu.max))
    }

    /// How `auto(…)` and `auto_batch(…)` resolve on this system; `config_dir` holds the
    /// suite's file (milabench's `scaling/` folder is beside it).
    pub(crate) fn sizing(&self, config_dir: &Path) -> Result<Sizing, String> {
        let Some(s) = &self.system else {
            return Ok(Sizing::default());
        };
        let sizer = &s.options.sizer;
        let mut sizing = Sizing {
            cpu_enabled: s.options.cpu.enabled,
            batch_auto: sizer.auto > 0,
            batch_mult: sizer.mult,
            batch_add: sizer.add,
            batch_size: sizer.batch_size,
            multiple: sizer.multiple,
            power: sizer.power,
            ..Sizing::default()
        };
        let table_needed = sizing.batch_auto
            && sizer.mult.is_none()
            && sizer.add.is_none()
            && sizer.batch_size.is_none();
        if table_needed {
            let file = sizer
                .config
                .clone()
                .unwrap_or_else(|| config_dir.join("scaling/default.yaml"));
            sizing.scaling = Some(std::sync::Arc::new(Scaling::load(&file)?));
            let capacity = sizer
                .capacity
                .as_ref()
                .filter(|c| c.as_str() != "All")
                .or(s.gpu.capacity.as_ref());
            sizing.capacity = capacity.map(|c| to_octet(c)).transpose()?;
        }
        Ok(sizing)
    }
}

/// milabench's `arch_to_device`: the torch device of an arch.
pub(crate) fn device_name(arch: &str) -> &str {
    match arch {
        "rocm" => "cuda",
        "cuda" | "xpu" | "hpu" | "ipu" | "mps" | "xla" | "cpu" => arch,
        _ => "cpu",
    }
}

/// milabench's collective library of an arch.
pub(crate) fn ccl(arch: &str) -> &'static str {
    match arch {
        "cuda" => "nccl",
        "rocm" => "rccl",
        "hpu" => "hccl",
        "xpu" => "ccl",
        _ => "gloo",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SystemConfig;

    #[test]
    fn milabench_placeholders_from_the_system_and_the_benchmark() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("system.yaml");
        std::fs::write(&file, "system:\n  arch: rocm\n  options: {cpu: {total_count: 66, reserved_cores: 2}}\n  dirs: {cache: /c}\n  nodes: [{name: a, ip: x}]\n").unwrap();
        let p = Placeholders {
            n_gpu: 8,
            n_cpu: 2,
            data: "/b/data".into(),
            runs: "/b/runs".into(),
            giving: "giving".into(),
            base: None,
            system: Some(SystemConfig::load(&file).unwrap()),
            arch: None,
        };
        let c = BenchContext::new(&p, "bert", "hf", "torch", Some(Path::new("/src/hf")));
        let get = |n: &str| c.lookup(n).unwrap();
        assert_eq!(get("cpu_count"), "64");
        assert_eq!(get("cpu_per_gpu"), "8");
        assert_eq!(get("n_worker"), "8");
        assert_eq!(get("gpu_count"), "8");
        assert_eq!(get("device_name"), "cuda");
        assert_eq!(get("ccl"), "rccl");
        assert_eq!(get("milabench_base"), "/b");
        assert_eq!(get("milabench_venv"), "/b/venv/torch");
        assert_eq!(get("milabench_extra"), "/b/extra/hf");
        assert_eq!(get("milabench_cache"), "/c");
        assert_eq!(get("milabench_code"), "/src/hf");
        assert_eq!(get("milabench_name"), "bert");
        assert_eq!(c.lookup("nope"), None);
    }
}
