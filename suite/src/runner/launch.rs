//! What a benchmark process is started with: its command line, wrapped in milabench's
//! launcher where the benchmark has one (`voir`, `benchrun`/torchrun, `accelerate launch`,
//! torchtune, milabench's activator), and the variables that carry the suite's early-stop
//! options to it.

use std::path::{Path, PathBuf};

use giving_instruments::child::RATE_SKIP;

use crate::config::{Bench, DockerConfig, EarlyStopOptions, Launcher, Plan, TorchrunOptions};

use super::plan::ProcessPlan;

/// A process's command line and variables, and the voir configuration file it reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Launch {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// The bench's variables, the plan's device selection, [`RATE_SKIP`].
    pub env: Vec<(String, String)>,
    /// For a voir benchmark: `{stem}.voirconf.json` and what to write there.
    pub voir_config: Option<(PathBuf, serde_json::Value)>,
}

/// Where a process runs among its benchmark's nodes: what multi-node launchers are told.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Place {
    /// The addresses of the benchmark's nodes, the main one first.
    pub ips: Vec<String>,
    /// This process's node, an index in `ips`.
    pub rank: usize,
    /// The rendezvous port and backend.
    pub torchrun: TorchrunOptions,
    /// The container a node other than the main one runs its process in (the system's
    /// `docker:` with an `image`), as milabench's `DockerRunCommand`.
    pub docker: Option<DockerConfig>,
}

impl Place {
    /// This machine alone, as milabench's default system (`127.0.0.1`).
    pub(crate) fn local() -> Self {
        Self {
            ips: vec!["127.0.0.1".to_owned()],
            rank: 0,
            torchrun: TorchrunOptions::default(),
            docker: None,
        }
    }
}

/// How to start `bench`'s process `plan` at `place`, whose files are `{stem}.*`.
///
/// The early-stop options reach a giving program as `GIVING_STOP` (set by the process
/// runner) and [`RATE_SKIP`]; a voir program gets them as milabench gives them,
/// `voir --config {stem}.voirconf.json …` with the bench's `voir` section.
pub(crate) fn launch_at(bench: &Bench, plan: &ProcessPlan, stem: &Path, place: &Place) -> Launch {
    let mut argv = wrap(bench, plan, place);
    let mut env: Vec<(String, String)> = bench
        .env
        .iter()
        .chain(&plan.env)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(skip) = bench.early_stop.skip {
        env.push((RATE_SKIP.to_owned(), skip.to_string()));
    }
    let config = bench.voir.clone().or_else(|| {
        (bench.early_stop != EarlyStopOptions::default()).then(|| voir_options(&bench.early_stop))
    });
    let voir_at = argv.iter().position(|a| is_voir_program(a));
    let voir_config = voir_at.zip(config).map(|(at, config)| {
        let path = PathBuf::from(format!("{}.voirconf.json", stem.display()));
        argv.splice(
            at + 1..at + 1,
            ["--config".to_owned(), path.display().to_string()],
        );
        (path, config)
    });
    if let Some(docker) = &place.docker {
        argv = in_container(bench, docker, &env, argv);
    }
    Launch {
        argv,
        env,
        voir_config,
    }
}

/// `argv` run in `docker`'s container, as milabench's `DockerRunCommand`: the cache and
/// thread count given as `--env`, paths under milabench's base and install folders
/// rewritten to the container's (`/milabench/results`, `/milabench/milabench`).
fn in_container(
    bench: &Bench,
    docker: &DockerConfig,
    env: &[(String, String)],
    argv: Vec<String>,
) -> Vec<String> {
    let base = bench.dirs.base.display().to_string();
    let install = activator(bench)[0]
        .trim_end_matches("/scripts/activator")
        .to_owned();
    let inside = |arg: &str| {
        arg.replace(&base, "/milabench/results")
            .replace(&install, "/milabench/milabench")
    };
    let mut out = vec![docker.executable.clone(), "run".to_owned()];
    out.extend(docker.args.iter().cloned());
    for name in ["XDG_CACHE_HOME", "OMP_NUM_THREADS"] {
        if let Some((_, v)) = env.iter().rev().find(|(k, _)| k == name) {
            out.extend(["--env".to_owned(), format!("{name}={}", inside(v))]);
        }
    }
    out.extend(docker.image.clone());
    out.extend(argv.iter().map(|a| inside(a)));
    out
}

/// The command line with the benchmark's launcher around it, as milabench's commands build
/// it (`milabench/commands/__init__.py`).
fn wrap(bench: &Bench, plan: &ProcessPlan, place: &Place) -> Vec<String> {
    let inner = bench.command_line();
    let nodes = place.ips.len();
    let path = |p: &Path| p.display().to_string();
    let venv_bin = |name: &str| path(&bench.dirs.venv.join("bin").join(name));
    match bench.launcher {
        Launcher::Command | Launcher::Voir | Launcher::Script => inner,
        Launcher::Activator => [activator(bench), inner].concat(),
        // TorchrunAllGPU wraps only a process with several GPUs.
        Launcher::Torchrun if plan.devices > 1 => {
            let mut argv = vec![venv_bin("benchrun")];
            argv.extend(torchrun_args(bench, place));
            argv.push("--".to_owned());
            argv.extend(inner);
            argv
        }
        Launcher::Torchrun => inner,
        // TorchrunAllGPU with `module=True`: `-m` and no `--`.
        Launcher::TorchrunModule if plan.devices > 1 => {
            let mut argv = vec![venv_bin("benchrun")];
            if bench.plan != Plan::PerGpu {
                argv.push("--nproc-per-node=gpu".to_owned());
            }
            argv.push("-m".to_owned());
            argv.extend(inner);
            argv
        }
        Launcher::TorchrunModule => inner,
        Launcher::Accelerate if plan.devices > 1 || nodes > 1 => {
            let mut argv = activator(bench);
            argv.extend(accelerate_args(bench, plan, place));
            argv.extend(inner);
            argv
        }
        Launcher::Accelerate => inner,
        // Torchtune always wraps: its `run` takes torchrun's options.
        Launcher::Torchtune => {
            let mut argv = vec![venv_bin("python")];
            argv.extend(["-m", "torchtune._cli.tune", "run"].map(String::from));
            argv.extend(torchrun_args(bench, place));
            argv.push("--".to_owned());
            argv.extend(inner);
            argv
        }
    }
}

/// milabench's `scripts/activator {venv} {cache}`, which activates the venv then runs the
/// rest: beside the `benchmarks/` folder the definition is in.
fn activator(bench: &Bench) -> Vec<String> {
    let code = bench.definition.as_deref().unwrap_or(Path::new("."));
    let root = code
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."));
    [
        root.join("milabench/scripts/activator"),
        bench.dirs.venv.clone(),
        bench.dirs.cache.clone(),
    ]
    .iter()
    .map(|p| p.display().to_string())
    .collect()
}

/// torchrun's options as `TorchrunAllNodes` gives them: the rendezvous for `njobs` (none per
/// GPU), the node's rank on several nodes, then one process per GPU.
fn torchrun_args(bench: &Bench, place: &Place) -> Vec<String> {
    if bench.plan == Plan::PerGpu {
        return Vec::new();
    }
    let main = &place.ips[0];
    let port = place.torchrun.port;
    let mut args = vec![
        format!("--nnodes={}", place.ips.len()),
        format!("--rdzv-backend={}", place.torchrun.backend),
        format!("--rdzv-endpoint={main}:{port}"),
        format!("--master-addr={main}"),
        format!("--master-port={port}"),
        "--local-ranks-filter=0".to_owned(),
    ];
    if place.ips.len() > 1 {
        let rank = place.rank;
        args.extend([
            format!("--node-rank={rank}"),
            format!("--local-addr={}", place.ips[rank]),
            format!("--rdzv-conf=rank={rank}"),
        ]);
    }
    args.push("--nproc-per-node=gpu".to_owned());
    args
}

/// `accelerate launch`'s options as `AccelerateLaunchCommand` gives them.
fn accelerate_args(bench: &Bench, plan: &ProcessPlan, place: &Place) -> Vec<String> {
    let machines = place.ips.len();
    let flag = |name: &str| bench.extra.get(name).and_then(serde_json::Value::as_bool);
    let mut args = vec![
        "accelerate".to_owned(),
        "launch".to_owned(),
        "--mixed_precision=bf16".to_owned(),
        "--dynamo_backend=no".to_owned(),
        format!("--machine_rank={}", place.rank),
        format!("--num_machines={machines}"),
    ];
    if flag("use_deepspeed") == Some(true) {
        args.extend(
            [
                "--use_deepspeed",
                "--deepspeed_multinode_launcher=standard",
                "--zero_stage=2",
            ]
            .map(String::from),
        );
    } else if plan.devices > 1 {
        args.push("--multi_gpu".to_owned());
    }
    let steps = bench
        .extra
        .get("gradient_accumulation_steps")
        .map_or_else(|| "1".to_owned(), |v| v.to_string());
    // `pack.resolve_argument('--cpus_per_gpu', 4)`: the benchmark's own value, else 4.
    let cpus = bench
        .argv
        .iter()
        .position(|a| a == "--cpus_per_gpu")
        .and_then(|i| bench.argv.get(i + 1))
        .map_or("4", String::as_str);
    args.extend([
        format!("--gradient_accumulation_steps={steps}"),
        format!("--num_cpu_threads_per_process={cpus}"),
        format!("--main_process_ip={}", place.ips[0]),
        format!("--main_process_port={}", place.torchrun.port),
        format!("--num_processes={}", plan.devices * machines),
    ]);
    args
}

/// Whether the program is voir's command line (`voir`, or a path to it).
pub(crate) fn is_voir(argv: &[String]) -> bool {
    argv.first().is_some_and(|p| is_voir_program(p))
}

fn is_voir_program(arg: &str) -> bool {
    Path::new(arg)
        .file_name()
        .is_some_and(|name| name == "voir")
}

/// The `voir` section as milabench writes it for voir: only the options that were set.
fn voir_options(options: &EarlyStopOptions) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    if let Some(stop) = options.stop {
        map.insert("stop".to_owned(), stop.into());
    }
    if let Some(skip) = options.skip {
        map.insert("skip".to_owned(), skip.into());
    }
    if let Some(interval) = &options.interval {
        map.insert("interval".to_owned(), interval.clone().into());
    }
    serde_json::json!({ "options": map })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::runner::test_bench::bench;

    fn launch(bench: &Bench, plan: &ProcessPlan, stem: &Path) -> Launch {
        launch_at(bench, plan, stem, &Place::local())
    }

    fn cpu() -> ProcessPlan {
        ProcessPlan {
            tag: "D0".to_owned(),
            device: None,
            devices: 1,
            env: BTreeMap::new(),
        }
    }

    #[test]
    fn a_voir_benchmark_reads_its_options_from_a_config_file() {
        let b = bench(
            "py:\n  command: [/venv/bin/voir, main.py]\n  argv: [--lr, 1]\n  voir: {options: {stop: 5, interval: 1s}}\n",
        );
        let launch = launch(&b, &cpu(), Path::new("runs/x/py.D0"));
        assert_eq!(
            launch.argv,
            [
                "/venv/bin/voir",
                "--config",
                "runs/x/py.D0.voirconf.json",
                "main.py",
                "--lr",
                "1"
            ]
        );
        let (path, config) = launch.voir_config.unwrap();
        assert_eq!(path, Path::new("runs/x/py.D0.voirconf.json"));
        assert_eq!(
            config,
            serde_json::json!({"options": {"stop": 5, "interval": "1s"}})
        );
        assert!(launch.env.is_empty(), "{:?}", launch.env);
    }

    #[test]
    fn a_giving_benchmark_gets_the_skip_in_its_environment() {
        let b = bench(
            "rs:\n  command: [giving, train, mlp]\n  env: {A: b}\n  voir: {options: {stop: 5, skip: 2}}\n",
        );
        let mut plan = cpu();
        plan.env
            .insert("CUDA_VISIBLE_DEVICES".to_owned(), "1".to_owned());
        let launch = launch(&b, &plan, Path::new("rs.D1"));
        assert_eq!(launch.argv, ["giving", "train", "mlp"]);
        assert_eq!(launch.voir_config, None);
        assert_eq!(
            launch.env,
            [
                ("A".to_owned(), "b".to_owned()),
                ("CUDA_VISIBLE_DEVICES".to_owned(), "1".to_owned()),
                (RATE_SKIP.to_owned(), "2".to_owned())
            ]
        );
    }
}
