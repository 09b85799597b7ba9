//! Running a suite: one folder per run, `runs/{name}.{time}/`, with each benchmark process's
//! events (`{bench}.{tag}.data`, milabench's JSON lines, and `{bench}.{tag}.giving`, a giving
//! log), output, exit status, the resolved configuration and the machine's facts. See
//! `docs/suite.md`.

mod data_lines;
mod dry;
mod gpus;
mod launch;
mod nats;
mod nodes;
mod plan;
mod preamble;
mod process;
mod ssh;
mod system;
#[cfg(test)]
mod test_bench;
mod wait;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use giving::Giver;
use serde::Serialize;

pub use dry::{PlannedProcess, SuitePlan, plan_suite};
pub use gpus::{Gpus, detect as detect_gpus, parse_rocm_smi, parse_xpu_smi};
pub use nats::NatsRoute;
use nodes::{arch_of, distributed_env, nodes_of};
pub use plan::{ProcessPlan, plan, plan_for, selection_variable};
pub use preamble::Preamble;
pub use process::{ProcessOutcome, ProcessSpec, Remote, run_process};
pub use system::SystemFacts;

use crate::RunError;
use crate::config::{Bench, Node, Selection, Suite, SystemConfig};

/// How a suite runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Where run folders are made (`runs/`).
    pub runs: PathBuf,
    /// The run's name (the folder is `{name}.{time}`); default: the configuration's stem.
    pub name: Option<String>,
    /// How long a process may go on after SIGTERM before SIGKILL (default 5 s).
    pub grace: Duration,
    /// GPUs to plan for.
    pub n_gpu: usize,
    /// How many times every selected benchmark runs (milabench's `--repeat`; at least 1).
    /// Repetitions go in rounds (every benchmark once, then again), so that a slow spell of
    /// the machine does not fall on one benchmark's runs only.
    pub repeat: u32,
    /// Where every event read from a child is given again, with [`BENCH`](giving::vocab::keys::BENCH)
    /// `{bench}.{tag}` added: a live view of the run (`giving suite run --dash`).
    pub forward: Option<Giver>,
    /// The nodes (`--system FILE`): a benchmark runs on its `num_machines` first nodes, the
    /// main one locally and the others over ssh. `None`: this machine only.
    pub system: Option<SystemConfig>,
    /// Set by the caller's signal handler (Ctrl-C): the running processes are stopped as at
    /// their `max_duration`, and no other benchmark starts. A library installs no handler.
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// One benchmark process's result.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessResult {
    /// The benchmark.
    pub bench: String,
    /// The process's tag (`D0`, `0`, …; `D0.R2` for the second repetition when the run
    /// repeats).
    pub tag: String,
    /// The GPU it was given, if any.
    pub device: Option<usize>,
    /// The node it ran on, when the run has a system configuration.
    pub node: Option<String>,
    /// Which repetition it belongs to, from 1.
    pub repeat: u32,
    /// How it went.
    #[serde(flatten)]
    pub outcome: ProcessOutcome,
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// The run folder.
    pub dir: PathBuf,
    /// Every process, in order.
    pub processes: Vec<ProcessResult>,
}

impl RunSummary {
    /// Whether every process succeeded.
    pub fn success(&self) -> bool {
        self.processes.iter().all(|p| p.outcome.success)
    }
}

/// Runs the benchmarks of `suite` that `selection` keeps, one after the other (the processes
/// of one benchmark together), calling `progress` as each process ends.
pub fn run_suite(
    suite: &Suite,
    selection: &Selection,
    options: &RunOptions,
    mut progress: impl FnMut(&ProcessResult),
) -> Result<RunSummary, RunError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let name = options.name.clone().unwrap_or_else(|| {
        suite
            .file
            .file_stem()
            .map_or_else(|| "suite".to_owned(), |s| s.to_string_lossy().into_owned())
    });
    let benches: Vec<&Bench> = suite.selected(selection).collect();
    let gpus = probe_nodes(&benches, options.system.as_ref())?;
    let dir = unique_dir(
        &options
            .runs
            .join(format!("{name}.{}", system::folder_time(now))),
    )?;
    write_json(
        &dir.join("config.json"),
        &serde_json::json!({ "file": suite.file, "benches": benches }),
    )?;
    let facts = SystemFacts::detect();
    write_json(&dir.join("system.json"), &facts)?;
    let meta = preamble::meta(&facts, now_s());
    let mut processes = Vec::new();
    let repeat = options.repeat.max(1);
    for round in 1..=repeat {
        for &bench in &benches {
            if options
                .interrupt
                .as_ref()
                .is_some_and(|i| i.load(Ordering::Relaxed))
            {
                return Ok(RunSummary { dir, processes });
            }
            for result in run_bench(bench, round, repeat, &dir, options, &gpus, &meta)? {
                progress(&result);
                processes.push(result);
            }
        }
    }
    Ok(RunSummary { dir, processes })
}

/// Checks that every benchmark has the nodes it asks for, and asks each node other than the
/// main one, over ssh, how many GPUs it has: before anything runs, so that a missing or
/// unreachable node stops the run at once.
fn probe_nodes(benches: &[&Bench], system: Option<&SystemConfig>) -> Result<NodeGpus, RunError> {
    let mut gpus = NodeGpus::new();
    for bench in benches {
        let nodes = nodes_of(bench, system)?;
        let Some(system) = system else { continue };
        for node in nodes.into_iter().flatten() {
            if !node.main && !gpus.contains_key(&node.name) {
                let n = ssh::probe_gpus(system, node).map_err(|message| RunError::Node {
                    node: node.name.clone(),
                    message,
                })?;
                gpus.insert(node.name.clone(), n);
            }
        }
    }
    Ok(gpus)
}

/// The GPUs of the nodes other than the main one, by name, as they reported them.
type NodeGpus = std::collections::HashMap<String, usize>;

/// One process to start: its node, its plan slot and its tag.
struct Placement<'a> {
    node: Option<&'a Node>,
    node_rank: usize,
    plan: ProcessPlan,
    tag: String,
    /// The GPUs planned on its node (milabench's `devices` under `njobs`).
    n_gpu: usize,
}

/// Runs the processes of one repetition of `bench` together, on each of its nodes; their
/// results in node then plan order.
fn run_bench(
    bench: &Bench,
    round: u32,
    repeat: u32,
    dir: &Path,
    options: &RunOptions,
    gpus: &NodeGpus,
    meta: &serde_json::Value,
) -> Result<Vec<ProcessResult>, RunError> {
    let nodes = nodes_of(bench, options.system.as_ref())?;
    let place = dry::place_of(&nodes, options.system.as_ref());
    let several = nodes.len() > 1;
    let mut placements = Vec::new();
    for (node_rank, node) in nodes.into_iter().enumerate() {
        // The main node is this machine; another plans with the GPUs it reported.
        let n_gpu = node
            .and_then(|n| gpus.get(&n.name).copied())
            .unwrap_or(options.n_gpu);
        for p in plan_for(bench, n_gpu, &arch_of(options.system.as_ref())) {
            // With several nodes the node's name leads the tag: `n1.D0`, `n1.D0.R2`.
            let mut tag = match node {
                Some(node) if several => format!("{}.{}", node.name, p.tag),
                _ => p.tag.clone(),
            };
            if repeat > 1 {
                tag = format!("{tag}.R{round}");
            }
            placements.push(Placement {
                node,
                node_rank,
                plan: p,
                tag,
                n_gpu,
            });
        }
    }
    let cwd = std::env::current_dir().map_err(|source| RunError::Io {
        action: "find",
        path: PathBuf::from("."),
        source,
    })?;
    let results: Vec<Result<ProcessResult, RunError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = placements
            .into_iter()
            .map(|placement| {
                let Placement {
                    node,
                    node_rank,
                    plan: p,
                    tag,
                    n_gpu,
                } = placement;
                let stem = dir.join(format!("{}.{tag}", bench.name));
                let place = launch::Place {
                    rank: node_rank,
                    docker: dry::remote_docker(options.system.as_ref(), node),
                    ..place.clone()
                };
                let mut launch = launch::launch_at(bench, &p, &stem, &place);
                let mut remote = None;
                if let (Some(system), Some(node)) = (&options.system, node) {
                    launch.env.extend(distributed_env(system, node_rank));
                    if !node.main {
                        // voir speaks only through DATA_FD: it keeps the smuggled stdout.
                        let nats = system
                            .nats
                            .as_ref()
                            .filter(|_| !launch::is_voir(&launch.argv))
                            .map(|url| NatsRoute {
                                url: url.clone(),
                                run: subject_token(&format!(
                                    "{}-{}-{tag}",
                                    dir_name(dir),
                                    bench.name
                                )),
                            });
                        remote = Some(Remote {
                            ssh: ssh::ssh_argv(system, node),
                            cwd: cwd.clone(),
                            nats,
                        });
                    }
                }
                let spec = ProcessSpec {
                    argv: launch.argv,
                    env: launch.env,
                    stop: bench.early_stop.stop,
                    max_duration: bench.max_duration,
                    grace: options.grace,
                    forward: options
                        .forward
                        .clone()
                        .map(|giver| (giver, format!("{}.{tag}", bench.name))),
                    stem,
                    preamble: Preamble {
                        config: preamble::config(bench, &p, &tag, n_gpu),
                        meta: meta.clone(),
                    },
                    interrupt: options.interrupt.clone(),
                    remote,
                };
                let (bench, device) = (bench.name.clone(), p.device);
                let node = node.map(|n| n.name.clone());
                scope.spawn(move || {
                    if let Some((path, config)) = &launch.voir_config {
                        write_json(path, config)?;
                    }
                    let outcome = run_process(&spec)?;
                    let result = ProcessResult {
                        bench,
                        tag,
                        device,
                        node,
                        repeat: round,
                        outcome,
                    };
                    write_json(&process::file(&spec.stem, "json"), &result)?;
                    Ok(result)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    results.into_iter().collect()
}

/// Seconds since the epoch (milabench's `meta.date`).
fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// The run folder's name (`dev.2026-11-24_01-02-03`).
fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// `text` as one NATS subject token: what is not a letter, a digit, `-` or `_` becomes `_`.
fn subject_token(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Creates `base`, or `base.2`, `base.3`, … when it exists.
fn unique_dir(base: &Path) -> Result<PathBuf, RunError> {
    if let Some(parent) = base.parent() {
        std::fs::create_dir_all(parent).map_err(|source| RunError::Io {
            action: "create",
            path: parent.to_path_buf(),
            source,
        })?;
    }
    for n in 1..1000 {
        let dir = if n == 1 {
            base.to_path_buf()
        } else {
            PathBuf::from(format!("{}.{n}", base.display()))
        };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => {
                return Err(RunError::Io {
                    action: "create",
                    path: dir,
                    source,
                });
            }
        }
    }
    Err(RunError::Io {
        action: "create",
        path: base.to_path_buf(),
        source: std::io::Error::other("too many runs of that name"),
    })
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<(), RunError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| RunError::Io {
        action: "serialise",
        path: path.to_path_buf(),
        source: e.into(),
    })?;
    std::fs::write(path, text + "\n").map_err(|source| RunError::Io {
        action: "write",
        path: path.to_path_buf(),
        source,
    })
}
