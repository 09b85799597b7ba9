//! Acceptance (issue 24): milabench's own `config/standard.yaml`, copied unchanged, loads and
//! plans every benchmark as milabench's code plans it, on one 8-GPU machine and on two
//! nodes. The reference is `tests/data/milabench/dry-*.jsonl`, recorded once from milabench
//! (see the README there).
//!
//! Compared, for every process milabench plans: the benchmarks and their process count;
//! every variable milabench sets (`MILABENCH_DIR_*`, `OMP_NUM_THREADS`,
//! `CUDA_VISIBLE_DEVICES`, the bench's `env:`) except `MILABENCH_USE_STDOUT` (milabench's
//! runner's own switch); the whole command line, except the name of the voir
//! configuration file (milabench's `extra/voirconf-{tag}-{md5}.json`, ours
//! `{run}/{bench}.{tag}.voirconf.json`, beside the process's other files).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use giving_suite::config::{Placeholders, Selection, Suite, SystemConfig};
use giving_suite::runner::{PlannedProcess, plan_suite};

/// milabench's base folder in the plans.
const BASE: &str = "/mb";

/// Variables not compared: milabench's runner's own switch, and two that vllm's benchfile
/// names with a trailing space (`"FLASHINFER_CACHE_DIR "`), which giving names as FlashInfer
/// reads them.
const ENV_NOT_COMPARED: &[&str] = &[
    "MILABENCH_USE_STDOUT",
    "FLASHINFER_CACHE_DIR ",
    "FLASHINFER_CUBIN_DIR ",
];

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/milabench")
}

/// milabench's plan, `$SRC` and `$BASE` filled in.
fn milabench(file: &str) -> Vec<serde_json::Value> {
    let src = data().display().to_string();
    std::fs::read_to_string(data().join(file))
        .unwrap()
        .lines()
        .map(|l| {
            let l = l.replace("$SRC", &src).replace("$BASE", BASE);
            serde_json::from_str(&l).unwrap()
        })
        .collect()
}

fn ours(system: &str) -> (Vec<PlannedProcess>, Vec<(String, String)>) {
    let system = SystemConfig::load(data().join(system)).unwrap();
    let placeholders = Placeholders {
        n_gpu: 8,
        n_cpu: 2,
        data: format!("{BASE}/data").into(),
        runs: format!("{BASE}/runs").into(),
        giving: "giving".into(),
        base: Some(BASE.into()),
        system: Some(system.clone()),
        arch: None,
    };
    let suite = Suite::load(data().join("config/standard.yaml"), &placeholders).unwrap();
    let plan = plan_suite(
        &suite,
        &Selection::default(),
        8,
        Some(&system),
        Path::new("/mb/runs/dry"),
    )
    .unwrap();
    (plan.processes, plan.skipped)
}

/// The command line without the voir configuration file's name.
fn normalised(argv: &[String]) -> Vec<String> {
    let mut out = argv.to_vec();
    if let Some(i) = out.iter().position(|a| a == "--config")
        && i > 0
        && Path::new(&out[i - 1])
            .file_name()
            .is_some_and(|n| n == "voir")
    {
        out[i + 1] = "VOIRCONF".to_owned();
    }
    out
}

fn by_bench<T>(items: &[T], bench: impl Fn(&T) -> &str) -> BTreeMap<&str, Vec<&T>> {
    let mut map: BTreeMap<&str, Vec<&T>> = BTreeMap::new();
    for item in items {
        map.entry(bench(item)).or_default().push(item);
    }
    map
}

#[test]
fn standard_yaml_plans_as_milabench_on_one_8_gpu_machine() {
    let reference = milabench("dry-8gpu.jsonl");
    let (ours, skipped) = ours("system-8gpu.yaml");
    // milabench plans the multi-node benchmarks and skips them when it runs them (their
    // `requires_capabilities` asks for 2 nodes); giving skips them in the plan.
    let skipped: Vec<&str> = skipped.iter().map(|(b, _)| b.as_str()).collect();
    assert_eq!(
        skipped,
        ["diffusion-nodes", "llm-lora-ddp-nodes", "llm-full-mp-nodes"]
    );
    compare(&reference, &ours, &skipped);
}

#[test]
fn standard_yaml_plans_as_milabench_on_two_nodes() {
    let reference = milabench("dry-2nodes.jsonl");
    let (ours, skipped) = ours("system-2nodes.yaml");
    assert_eq!(skipped, []);
    compare(&reference, &ours, &[]);
    // The multi-node benchmarks have one process a node, rank 1 over ssh in the system's
    // container.
    let node1: Vec<&PlannedProcess> = ours
        .iter()
        .filter(|p| p.node.as_deref() == Some("node1"))
        .collect();
    let names: Vec<&str> = node1.iter().map(|p| p.bench.as_str()).collect();
    assert_eq!(
        names,
        ["diffusion-nodes", "llm-lora-ddp-nodes", "llm-full-mp-nodes"]
    );
    for p in node1 {
        assert_eq!(p.ssh.last().map(String::as_str), Some("192.168.11.12"));
        assert_eq!(&p.argv[..2], ["podman", "run"]);
        assert!(
            p.argv
                .contains(&"ghcr.io/mila-iqia/milabench:cuda-nightly".to_owned())
        );
    }
}

/// A multi-node process's command inside its ssh, container and `env -C DIR - VARS`
/// wrappers, with the container's paths mapped back to the host's.
fn inner(argv: &[String]) -> Vec<String> {
    let image = "ghcr.io/mila-iqia/milabench:cuda-nightly";
    let mut rest = match argv.iter().rposition(|a| a == image) {
        Some(i) => &argv[i + 1..],
        None => argv,
    };
    if rest.first().is_some_and(|a| a == "env") {
        let dash = rest.iter().position(|a| a == "-").unwrap();
        rest = &rest[dash + 1..];
        while rest.first().is_some_and(|a| {
            a.split_once('=')
                .is_some_and(|(k, _)| k.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        }) {
            rest = &rest[1..];
        }
    }
    let src = data().display().to_string();
    let host = |path: &str| {
        for (inside, outside) in [
            ("/milabench/results", BASE.to_owned()),
            ("/milabench/milabench", format!("{src}/milabench")),
        ] {
            if let Some(rest) = path.strip_prefix(inside) {
                return format!("{outside}{rest}");
            }
        }
        path.to_owned()
    };
    rest.iter()
        .map(|a| match a.split_once('=') {
            Some((k, v)) if v.starts_with('/') => format!("{k}={}", host(v)),
            _ => host(a),
        })
        .collect()
}

/// Compares every process of milabench's plan with ours (see the file's comment).
fn compare(reference: &[serde_json::Value], ours: &[PlannedProcess], skipped: &[&str]) {
    let theirs = by_bench(reference, |v| v["bench"].as_str().unwrap());
    let mine = by_bench(ours, |p| p.bench.as_str());
    let planned: Vec<&str> = theirs
        .keys()
        .copied()
        .filter(|b| !skipped.contains(b))
        .collect();
    assert_eq!(mine.keys().copied().collect::<Vec<_>>(), planned);
    let mut differences = Vec::new();
    for bench in planned {
        let (theirs, mine) = (&theirs[bench], &mine[bench]);
        assert_eq!(theirs.len(), mine.len(), "{bench}: processes");
        let several = theirs.len() > 1
            && mine.iter().all(|m| m.node.is_some())
            && mine[0].node != mine[1].node;
        for (t, m) in theirs.iter().zip(mine.iter()) {
            let tag = t["tag"].as_str().unwrap();
            if several {
                // milabench tags a node's process `{bench}.{node}` (`.nolog` off rank 0).
                let node = m.node.as_deref().unwrap();
                assert!(
                    tag.starts_with(&format!("{bench}.{node}")),
                    "{tag} on {node}"
                );
            } else {
                assert_eq!(tag, format!("{bench}.{}", m.tag));
            }
            let env: BTreeMap<&str, &str> = m
                .env
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            for (k, v) in t["env"].as_object().unwrap() {
                if !ENV_NOT_COMPARED.contains(&k.as_str())
                    && env.get(k.as_str()) != v.as_str().as_ref()
                {
                    differences.push(format!("{tag}: {k}={v} (ours {:?})", env.get(k.as_str())));
                }
            }
            let mut argv: Vec<String> = t["argv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_owned())
                .collect();
            let mut ours = m.argv.clone();
            if several {
                // milabench reaches every node, the main one too, over ssh and in the
                // container; giving runs the main node's process itself.
                argv = inner(&argv);
                ours = inner(&ours);
            }
            if normalised(&argv) != normalised(&ours) {
                differences.push(format!(
                    "{tag}:\n  milabench {:?}\n  ours      {:?}",
                    normalised(&argv),
                    normalised(&ours)
                ));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// Every configuration file of milabench's loads, but `retired.yaml`, which milabench cannot
/// load either: its benchmarks inherit `_accelerate_opt` from a file it does not include
/// (milabench's `build_config` stops with `KeyError: '_accelerate_opt'`; giving names the
/// file, the line and the missing entry).
#[test]
fn every_milabench_configuration_loads() {
    let placeholders = Placeholders {
        n_gpu: 8,
        n_cpu: 64,
        ..Default::default()
    };
    let mut loaded = 0;
    for entry in std::fs::read_dir(data().join("config")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let result = Suite::load(&path, &placeholders);
            if path.ends_with("retired.yaml") {
                let e = result.unwrap_err().to_string();
                assert!(e.contains("no entry named `_accelerate_opt`"), "{e}");
                continue;
            }
            if let Err(e) = result {
                panic!("{e}");
            }
            loaded += 1;
        }
    }
    assert_eq!(loaded, 12);
}

/// milabench's own example `config/examples/system.yaml`, unchanged: docker with
/// `${system.…}` references, three nodes, a `multirun:` section.
#[test]
fn milabench_example_system_yaml_loads() {
    let system = SystemConfig::load(data().join("config/examples/system.yaml")).unwrap();
    let names: Vec<&str> = system.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["manager", "node1", "node2"]);
    assert_eq!(system.arch.as_deref(), Some("cuda"));
    let docker = system.docker.unwrap();
    assert_eq!(docker.executable, "podman");
    assert_eq!(
        docker.image.as_deref(),
        Some("ghcr.io/mila-iqia/milabench:cuda-nightly")
    );
    assert!(
        docker
            .args
            .contains(&"/tmp/workspace/data:/milabench/envs/data".to_owned()),
        "{:?}",
        docker.args
    );
}
