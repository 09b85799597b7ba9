//! One benchmark, typed, from its merged and filled-in map.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use serde_norway::{Mapping, Value};

use super::argv::{Sizing, assemble, resolve};
use super::benchfile::{self, Main};
use super::context::{BenchContext, Dirs};
use super::launcher::Launcher;
use super::resolve::{error_at, scalar};
use super::source::{Origin, kind};
use crate::error::ConfigError;

/// Keys milabench writes that a giving suite accepts and does not use (its benchmarks are
/// installed and prepared by milabench itself): no warning.
const ACCEPTED_UNUSED: &[&str] = &[
    "install-variant",
    "install_variant",
    "url",
    "capabilities",
    "weight_hint",
    "config_base",
    "config_file",
    "dirs",
];

/// A benchmark of a suite, resolved: what to run, how, and for how long.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bench {
    /// Its name (the entry's key, or a matrix job's `name`).
    pub name: String,
    /// The program and its first arguments (`command: [giving, train, mlp]`).
    pub command: Vec<String>,
    /// More arguments, from `argv:` (a map `--flag: value` or a list).
    pub argv: Vec<String>,
    /// Environment variables set for the benchmark.
    pub env: BTreeMap<String, String>,
    /// Selection tags.
    pub tags: Vec<String>,
    /// `false`: never run (default `true`).
    pub enabled: bool,
    /// Its weight in the suite's score (default 0, as milabench's `summary.py`
    /// `config.get("weight", 0)`: a benchmark counts in the global score only when given one).
    pub weight: f64,
    /// After this long, the benchmark is stopped (default 600 s, as milabench).
    #[serde(serialize_with = "seconds")]
    pub max_duration: Duration,
    /// The early-stop options (`voir: {options: {stop, skip, interval}}`).
    pub early_stop: EarlyStopOptions,
    /// `validation.usage` thresholds.
    pub usage: Option<UsageThresholds>,
    /// How many processes, and on which devices.
    pub plan: Plan,
    /// On how many nodes of the system its processes run (milabench's `num_machines`,
    /// default 1: the main node only); each node runs the whole plan.
    pub num_machines: u32,
    /// milabench's benchmark folder (`definition:`, made absolute from the file's folder):
    /// without `command:`, its `main.py` runs under `voir`.
    pub definition: Option<PathBuf>,
    /// milabench's `group` (default: the name): `{milabench_extra}` is `extra/{group}`.
    pub group: String,
    /// milabench's `install_group` (default: the group): `{milabench_venv}` is
    /// `venv/{install_group}`.
    pub install_group: String,
    /// The `voir:` section as written, given to a voir program in its config file.
    pub voir: Option<serde_json::Value>,
    /// milabench's `requires_capabilities`: conditions on the system.
    pub requires_capabilities: Vec<String>,
    /// Why it does not run on this system (a condition of `requires_capabilities` not
    /// satisfied); `None`: it runs.
    pub skip: Option<String>,
    /// Its folders, as milabench's `pack.dirs`.
    pub dirs: Dirs,
    /// Keys giving does not use, kept as written (`use_deepspeed`, `server`, `docker_image`,
    /// …); the suite warns of each.
    pub extra: BTreeMap<String, serde_json::Value>,
    /// How a milabench benchmark (`definition:` without `command:`) is started.
    pub launcher: Launcher,
}

impl Bench {
    /// The full command line: `command` then `argv`.
    pub fn command_line(&self) -> Vec<String> {
        self.command.iter().chain(&self.argv).cloned().collect()
    }
}

/// milabench's `voir.options`: how many rates a benchmark gives before it is asked to stop.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EarlyStopOptions {
    /// Stop after this many rates (`stop: 60`).
    pub stop: Option<u64>,
    /// Warm-up rates not counted (`skip`).
    pub skip: Option<u64>,
    /// The rate's window (`interval: "1s"`), as written.
    pub interval: Option<String>,
}

/// milabench's `validation.usage`: the GPU load and memory a benchmark must reach (0..1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageThresholds {
    /// Minimum mean GPU load.
    pub gpu_load_threshold: f64,
    /// Minimum peak GPU memory, as a fraction of the total.
    pub gpu_mem_threshold: f64,
}

/// How a benchmark is scheduled (`plan: {method, n}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Plan {
    /// One process per GPU (tags `D0`, `D1`, …), or one process where there is none.
    PerGpu,
    /// `n` processes, tags `0` … `n-1`.
    Njobs {
        /// How many.
        n: u32,
    },
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Builds a [`Bench`] from its map, its placeholders filled from `ctx`; errors name the key
/// and where it was written.
pub(crate) fn build(
    name: &str,
    map: &Mapping,
    origins: &[Origin],
    ctx: &BenchContext<'_>,
    sizing: &Sizing,
    warnings: &mut Vec<String>,
) -> Result<Bench, ConfigError> {
    let err = |path: &[&str], message: String| error_at(name, origins, path, message);
    let text = |key: &str| map.get(key).and_then(scalar);
    let group = text("group").unwrap_or_else(|| name.to_owned());
    let mut bench = Bench {
        name: name.to_owned(),
        command: Vec::new(),
        argv: Vec::new(),
        env: BTreeMap::new(),
        tags: Vec::new(),
        enabled: true,
        weight: 0.0,
        max_duration: Duration::from_secs(600),
        early_stop: EarlyStopOptions::default(),
        usage: None,
        plan: Plan::PerGpu,
        num_machines: 1,
        definition: ctx.dirs.code.clone(),
        install_group: text("install_group").unwrap_or_else(|| group.clone()),
        group,
        voir: None,
        requires_capabilities: Vec::new(),
        skip: None,
        dirs: ctx.dirs.clone(),
        extra: BTreeMap::new(),
        launcher: Launcher::Command,
    };
    let mut launcher = None;
    for (key, value) in map {
        let key = key.as_str().unwrap_or_default();
        match key {
            "command" => bench.command = strings(value).ok_or_else(|| {
                err(
                    &[key],
                    format!(
                        "expected a list of strings (the program, then its arguments), found {}",
                        kind(value)
                    ),
                )
            })?,
            "argv" => {
                bench.argv = assemble(value)
                    .and_then(|args| args.iter().map(|a| resolve(a, sizing, name)).collect())
                    .map_err(|m| err(&[key], m))?;
            }
            "env" => {
                let Value::Mapping(vars) = value else {
                    return Err(err(
                        &[key],
                        format!("expected a map NAME: value, found {}", kind(value)),
                    ));
                };
                for (k, v) in vars {
                    let (Some(k), Some(v)) = (k.as_str(), scalar(v)) else {
                        return Err(err(
                            &[key],
                            "expected string names and string or number values".to_owned(),
                        ));
                    };
                    bench.env.insert(k.to_owned(), v);
                }
            }
            "tags" => {
                bench.tags = strings(value).ok_or_else(|| {
                    err(
                        &[key],
                        format!("expected a list of strings, found {}", kind(value)),
                    )
                })?
            }
            "enabled" => {
                bench.enabled = value.as_bool().ok_or_else(|| {
                    err(
                        &[key],
                        format!("expected true or false, found {}", kind(value)),
                    )
                })?
            }
            "weight" => {
                bench.weight = value
                    .as_f64()
                    .filter(|w| w.is_finite() && *w >= 0.0)
                    .ok_or_else(|| err(&[key], "expected a number ≥ 0".to_owned()))?;
            }
            "max_duration" => {
                // `try_from_secs_f64`: a finite number can still be too large for a Duration
                // (1e300 s), which `from_secs_f64` would panic on (found by fuzzing).
                bench.max_duration = value
                    .as_f64()
                    .filter(|s| *s > 0.0)
                    .and_then(|s| Duration::try_from_secs_f64(s).ok())
                    .ok_or_else(|| {
                        err(
                            &[key],
                            "expected a number of seconds > 0 (and below 10^19)".to_owned(),
                        )
                    })?;
            }
            "voir" => {
                bench.early_stop = early_stop(value).map_err(|(path, m)| err(&path, m))?;
                bench.voir = Some(json(value));
            }
            "requires_capabilities" => {
                bench.requires_capabilities = strings(value).ok_or_else(|| {
                    err(
                        &[key],
                        format!("expected a list of conditions, found {}", kind(value)),
                    )
                })?
            }
            // Read above, or by the caller (the definition's folder is made absolute there).
            "group" | "install_group" | "definition" => {}
            "launcher" => {
                launcher = Some(value.as_str().and_then(Launcher::parse).ok_or_else(|| {
                    err(
                        &[key],
                        "expected voir, script, activator, torchrun, torchrun_module, accelerate or torchtune"
                            .to_owned(),
                    )
                })?);
            }
            "validation" => bench.usage = usage(value).map_err(|(path, m)| err(&path, m))?,
            "plan" => bench.plan = plan(value).map_err(|(path, m)| err(&path, m))?,
            "num_machines" => {
                bench.num_machines = value
                    .as_u64()
                    .filter(|n| (1..=4096).contains(n))
                    .ok_or_else(|| {
                        err(
                            &[key],
                            format!("expected a number of nodes from 1, found {}", kind(value)),
                        )
                    })? as u32;
            }
            "job" | "matrix" => {}
            _ if ACCEPTED_UNUSED.contains(&key) => {}
            // milabench's client/server benchmarks (vllm): read below, kept as written.
            "server" | "client" => {
                bench.extra.insert(key.to_owned(), json(value));
            }
            _ => {
                let known = format!("not used by giving (known: {KNOWN}); kept");
                warnings.push(err(&[key], known).to_string());
                bench.extra.insert(key.to_owned(), json(value));
            }
        }
    }
    if let Some(code) = bench
        .definition
        .clone()
        .filter(|_| bench.command.is_empty())
    {
        let folder = code.file_name().unwrap_or_default().to_string_lossy();
        let known = benchfile::of_folder(&folder);
        bench.launcher = launcher.unwrap_or(known.launcher);
        let voir = bench.dirs.venv.join("bin/voir").display().to_string();
        // milabench's `PackCommand`: a folder runs as a module.
        let main = match known.main {
            Main::File(file) => vec![code.join(file).display().to_string()],
            Main::Module(module) => vec!["-m".to_owned(), module.to_owned()],
        };
        let program: Vec<String> = known.program.map(String::from).into_iter().collect();
        bench.command = match bench.launcher {
            Launcher::Voir | Launcher::Torchrun => [vec![voir], main].concat(),
            Launcher::TorchrunModule => [vec!["voir".to_owned()], main].concat(),
            Launcher::Script | Launcher::Activator | Launcher::Accelerate => {
                [program, main].concat()
            }
            // torchtune's recipe is the first of the arguments.
            Launcher::Torchtune | Launcher::Command => Vec::new(),
        };
        let data = bench.dirs.data.display().to_string();
        let cache = bench.dirs.cache.display().to_string();
        bench.argv.extend(
            known
                .tail
                .iter()
                .map(|a| a.replace("{data}", &data).replace("{cache}", &cache)),
        );
        // milabench's `make_env`, then the benchfile's additions; the bench's own `env:`
        // wins, as in its `full_env`.
        let added = known
            .env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.replace("{cache}", &cache)));
        if known.server_client {
            let part = |key: &str| -> Result<Vec<String>, ConfigError> {
                let Some(argv) = map.get(key).and_then(|v| v.get("argv")) else {
                    return Ok(Vec::new());
                };
                assemble(argv)
                    .and_then(|args| args.iter().map(|a| resolve(a, sizing, name)).collect())
                    .map_err(|m| err(&[key, "argv"], m))
            };
            bench.argv = [part("server")?, vec!["--".to_owned()], part("client")?].concat();
        }
        let cpu_per_gpu = ctx.system.cpu_per_gpu();
        for (k, v) in milabench_env(&bench.dirs, cpu_per_gpu)
            .into_iter()
            .chain(added)
        {
            bench.env.entry(k).or_insert(v);
        }
    } else if launcher.is_some() {
        return Err(err(
            &["launcher"],
            "a launcher starts a milabench benchmark: it needs `definition:` and no `command:`"
                .to_owned(),
        ));
    } else if bench.command.is_empty() {
        // milabench leaves such an entry out of every selection (a retired benchmark, a
        // `multirun:` section); giving keeps it, skipped with why, so that a typo shows.
        bench.skip = Some(
            "nothing to run: no `command:` (the program, then its arguments) nor `definition:` (a milabench benchmark's folder)".to_owned(),
        );
    }
    Ok(bench)
}

/// The variables milabench's `pack.make_env` sets for a run: `MILABENCH_DIR_*`,
/// `OMP_NUM_THREADS` (`{cpu_per_gpu}`) and the caches.
fn milabench_env(dirs: &Dirs, cpu_per_gpu: usize) -> Vec<(String, String)> {
    let path = |p: &std::path::Path| p.display().to_string();
    let mut env = dirs.env();
    env.extend([
        ("OMP_NUM_THREADS".to_owned(), cpu_per_gpu.to_string()),
        ("XDG_CACHE_HOME".to_owned(), path(&dirs.cache)),
        ("TORCH_HOME".to_owned(), path(&dirs.cache)),
        ("HF_HOME".to_owned(), path(&dirs.data)),
        // milabench writes this name with a trailing space (`"HF_HUB_CACHE "`), which no
        // library reads; giving sets the variable it means.
        ("HF_HUB_CACHE".to_owned(), path(&dirs.data.join("hub"))),
    ]);
    env
}

/// The keys a benchmark may have (the others are kept in [`Bench::extra`], with a warning).
pub(crate) const KNOWN: &str = "command, argv, env, tags, enabled, weight, max_duration, voir, validation, plan, num_machines, inherits, definition, group, install_group, requires_capabilities, launcher, server, client";

fn json(value: &Value) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

fn strings(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Sequence(items) => items.iter().map(scalar).collect(),
        Value::String(s) => Some(vec![s.clone()]),
        _ => None,
    }
}

type Located<T> = Result<T, (Vec<&'static str>, String)>;

fn early_stop(value: &Value) -> Located<EarlyStopOptions> {
    let mut out = EarlyStopOptions::default();
    let Some(options) = value.get("options") else {
        return Ok(out);
    };
    // `least`: the smallest value the option takes (docs/architecture.md, "Sizes": a stop
    // after 0 rates would stop nothing; 0 windows skipped skips none).
    let count = |key: &'static str, least: u64| -> Located<Option<u64>> {
        match options.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().filter(|n| *n >= least).map(Some).ok_or_else(|| {
                let found = match v {
                    Value::Number(n) => n.to_string(),
                    other => kind(other).to_owned(),
                };
                (
                    vec!["voir", "options", key],
                    format!("expected a whole number from {least}, found {found}"),
                )
            }),
        }
    };
    out.stop = count("stop", 1)?;
    out.skip = count("skip", 0)?;
    out.interval = options.get("interval").and_then(scalar);
    Ok(out)
}

fn usage(value: &Value) -> Located<Option<UsageThresholds>> {
    let Some(usage) = value.get("usage") else {
        return Ok(None);
    };
    let fraction = |key: &'static str| -> Located<f64> {
        match usage.get(key) {
            // milabench's `UsageCheck.gpu_*_threshold`: `.get(key, 0.5)`.
            None => Ok(0.5),
            Some(v) => v
                .as_f64()
                .filter(|x| (0.0..=1.0).contains(x))
                .ok_or_else(|| {
                    (
                        vec!["validation", "usage", key],
                        "expected a fraction in 0..1".to_owned(),
                    )
                }),
        }
    };
    Ok(Some(UsageThresholds {
        gpu_load_threshold: fraction("gpu_load_threshold")?,
        gpu_mem_threshold: fraction("gpu_mem_threshold")?,
    }))
}

fn plan(value: &Value) -> Located<Plan> {
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .map(|m| m.replace('-', "_"));
    match method.as_deref() {
        Some("per_gpu") => Ok(Plan::PerGpu),
        Some("njobs") => {
            let n = value
                .get("n")
                .and_then(Value::as_u64)
                .filter(|n| (1..=4096).contains(n));
            let n = n.ok_or_else(|| {
                (
                    vec!["plan", "n"],
                    "`njobs` needs `n`, a number of processes from 1".to_owned(),
                )
            })?;
            Ok(Plan::Njobs { n: n as u32 })
        }
        Some(other) => Err((
            vec!["plan", "method"],
            format!("unknown method `{other}` (known: per_gpu, njobs)"),
        )),
        None => Err((
            vec!["plan"],
            "expected `method: per_gpu` or `method: njobs` with `n`".to_owned(),
        )),
    }
}
