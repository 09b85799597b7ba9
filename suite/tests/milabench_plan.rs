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
//! `{run}/{bench}.{tag}.voirconf.json`, beside the process's other files). Not compared, and
//! why, in `NOT_COMPARED`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use giving_suite::config::{Placeholders, Selection, Suite, SystemConfig};
use giving_suite::runner::{PlannedProcess, plan_suite};

/// milabench's base folder in the plans.
const BASE: &str = "/mb";

/// Benchmarks whose command line is not compared: their `benchfile.py` builds it in code that
/// giving does not read.
const NOT_COMPARED: &[(&str, &str)] = &[
    (
        "focalnet",
        "timm's benchfile runs voir as a module and adds --output and --checkpoint-hist",
    ),
    (
        "llama",
        "its benchfile runs `python main.py … --cache {cache}`",
    ),
    (
        "vllm-dense-physics-gpus",
        "vllm's benchfile joins its `server:` and `client:` argv (kept, unused, by giving)",
    ),
    (
        "vllm-moe-code-gpus",
        "vllm's benchfile joins its `server:` and `client:` argv (kept, unused, by giving)",
    ),
];

/// Variables not compared: milabench's runner's own switch, and those vllm's `benchfile.py`
/// sets in code giving does not know (FlashInfer's caches; milabench writes two of their
/// names with a trailing space).
const ENV_NOT_COMPARED: &[&str] = &[
    "MILABENCH_USE_STDOUT",
    "FLASHINFER_CACHE_DIR ",
    "FLASHINFER_CUBIN_DIR ",
    "FLASHINFER_WORKSPACE_DIR",
    "XDG_CACHE_HOME",
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
    let theirs = by_bench(&reference, |v| v["bench"].as_str().unwrap());
    let mine = by_bench(&ours, |p| p.bench.as_str());
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
        for (t, m) in theirs.iter().zip(mine.iter()) {
            let tag = t["tag"].as_str().unwrap();
            assert_eq!(tag, format!("{bench}.{}", m.tag));
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
            if NOT_COMPARED.iter().any(|(b, _)| *b == bench) {
                continue;
            }
            let argv: Vec<String> = t["argv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_owned())
                .collect();
            if normalised(&argv) != normalised(&m.argv) {
                differences.push(format!(
                    "{tag}:\n  milabench {:?}\n  ours      {:?}",
                    normalised(&argv),
                    normalised(&m.argv)
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
