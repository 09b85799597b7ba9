//! `giving suite plan`: every process a run would start, with its command line and
//! variables, started nowhere (milabench's `dry`).

use std::path::Path;

use serde::Serialize;

use super::launch::{self, Place};
use super::nodes::{arch_of, distributed_env, nodes_of};
use super::plan::plan_for;
use super::ssh;
use crate::RunError;
use crate::config::{Selection, Suite, SystemConfig};

/// One process of a plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedProcess {
    /// Its benchmark.
    pub bench: String,
    /// Its tag (`D0`, `0`, `node1.0`).
    pub tag: String,
    /// The node it runs on, when the plan has a system.
    pub node: Option<String>,
    /// How it is reached: `ssh … HOST` for a node other than the main one, else nothing.
    pub ssh: Vec<String>,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// The variables set for it (beside those it inherits).
    pub env: Vec<(String, String)>,
    /// The voir configuration file and what is written there.
    pub voir_config: Option<(std::path::PathBuf, serde_json::Value)>,
}

impl PlannedProcess {
    /// One line of JSON in the shape of the milabench plan recorded in giving's tests
    /// (`bench`, `tag` as `{bench}.{tag}`, `argv`, `env` as an object), with `node` and
    /// `ssh`: to diff the two.
    pub fn json_line(&self) -> String {
        let env: serde_json::Map<String, serde_json::Value> = self
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into()))
            .collect();
        serde_json::json!({
            "bench": self.bench,
            "tag": format!("{}.{}", self.bench, self.tag),
            "node": self.node,
            "ssh": self.ssh,
            "argv": self.argv,
            "env": env,
        })
        .to_string()
    }
}

/// A suite's plan: the processes in run order, and the selected benchmarks this system does
/// not run, with why.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SuitePlan {
    /// The processes, benchmark by benchmark, node by node.
    pub processes: Vec<PlannedProcess>,
    /// `(bench, why)` for those not run: a `requires_capabilities` condition not met, or
    /// nothing to run.
    pub skipped: Vec<(String, String)>,
}

impl SuitePlan {
    /// The skipped benchmarks as JSON lines (`{"bench", "skipped": why}`).
    pub fn skipped_json_lines(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|(bench, why)| serde_json::json!({ "bench": bench, "skipped": why }).to_string())
            .collect()
    }
}

/// Plans the benchmarks of `suite` that `selection` keeps, each node with `n_gpu` GPUs, their
/// files in `run_dir` (a run's folder), as `run_suite` would start them.
pub fn plan_suite(
    suite: &Suite,
    selection: &Selection,
    n_gpu: usize,
    system: Option<&SystemConfig>,
    run_dir: &Path,
) -> Result<SuitePlan, RunError> {
    let mut out = SuitePlan::default();
    for (bench, why) in suite.skipped(selection) {
        out.skipped.push((bench.name.clone(), why.to_owned()));
    }
    for bench in suite.selected(selection) {
        let nodes = nodes_of(bench, system)?;
        let place = place_of(&nodes, system);
        let several = nodes.len() > 1;
        for (rank, node) in nodes.iter().enumerate() {
            for p in plan_for(bench, n_gpu, &arch_of(system)) {
                let tag = match node {
                    Some(node) if several => format!("{}.{}", node.name, p.tag),
                    _ => p.tag.clone(),
                };
                let stem = run_dir.join(format!("{}.{tag}", bench.name));
                let place = Place {
                    rank,
                    docker: remote_docker(system, *node),
                    ..place.clone()
                };
                let mut launch = launch::launch_at(bench, &p, &stem, &place);
                let mut remote = Vec::new();
                if let (Some(system), Some(node)) = (system, node) {
                    launch.env.extend(distributed_env(system, rank));
                    if !node.main {
                        remote = ssh::ssh_argv(system, node);
                    }
                }
                out.processes.push(PlannedProcess {
                    bench: bench.name.clone(),
                    tag,
                    node: node.map(|n| n.name.clone()),
                    ssh: remote,
                    argv: launch.argv,
                    env: launch.env,
                    voir_config: launch.voir_config,
                });
            }
        }
    }
    Ok(out)
}

/// The launchers' view of a benchmark's nodes (rank 0's).
pub(crate) fn place_of(
    nodes: &[Option<&crate::config::Node>],
    system: Option<&SystemConfig>,
) -> Place {
    let local = Place::local();
    Place {
        ips: nodes
            .iter()
            .map(|n| n.map_or_else(|| local.ips[0].clone(), |n| n.ip.clone()))
            .collect(),
        rank: 0,
        torchrun: system.map_or(local.torchrun, |s| s.options.torchrun.clone()),
        docker: None,
    }
}

/// The container a process on `node` runs in: the system's `docker:` with an image, on a
/// node other than the main one (the main node runs the suite, in or out of a container).
pub(crate) fn remote_docker(
    system: Option<&SystemConfig>,
    node: Option<&crate::config::Node>,
) -> Option<crate::config::DockerConfig> {
    let docker = system?.docker.as_ref()?;
    (node.is_some_and(|n| !n.main) && docker.image.is_some()).then(|| docker.clone())
}
