//! A benchmark's processes: how many, their tags and their device variables.

use std::collections::BTreeMap;

use crate::config::{Bench, Plan};

/// One process of a benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessPlan {
    /// Its tag in file names: `D0`, `D1` (per GPU), `0`, `1` (njobs).
    pub tag: String,
    /// The GPU it is given (`CUDA_VISIBLE_DEVICES`, or its arch's variable); `None` on the CPU or
    /// under `njobs`.
    pub device: Option<usize>,
    /// How many GPUs it uses, as milabench's `devices` (1 per GPU, or on the CPU; all the
    /// node's under `njobs`): whether a launcher spreads it over several.
    pub devices: usize,
    /// Variables set for it (the device selection).
    pub env: BTreeMap<String, String>,
}

/// The processes of `bench` on a machine with `n_gpu` GPUs: `per_gpu` gives one per GPU with
/// `CUDA_VISIBLE_DEVICES` (as milabench), or one CPU process `D0` without GPU; `njobs` gives
/// `n` processes tagged `0` … `n-1`, sharing the machine.
///
/// ```
/// use giving_suite::runner::plan;
/// # let mut bench = giving_suite::config::Suite::load(
/// #     { let d = tempfile::tempdir().unwrap(); let f = d.path().join("s.yaml");
/// #       std::fs::write(&f, "a: {command: [x]}").unwrap(); Box::leak(Box::new(d)); f },
/// #     &giving_suite::config::Placeholders { n_gpu: 0, n_cpu: 1, data: "d".into(), runs: "r".into(), giving: "g".into(), ..Default::default() },
/// # ).unwrap().benches.remove(0);
/// let tags: Vec<_> = plan(&bench, 2).into_iter().map(|p| p.tag).collect();
/// assert_eq!(tags, ["D0", "D1"]);
/// assert_eq!(plan(&bench, 0).len(), 1);
/// ```
pub fn plan(bench: &Bench, n_gpu: usize) -> Vec<ProcessPlan> {
    plan_for(bench, n_gpu, "cuda")
}

/// The variable that gives a process its GPU, by accelerator (`arch`), as voir's GPU
/// backends name it for milabench's `PerGPU`.
pub fn selection_variable(arch: &str) -> &'static str {
    match arch {
        "rocm" => "ROCR_VISIBLE_DEVICES",
        "xpu" => "ONEAPI_DEVICE_SELECTOR",
        "hpu" => "HABANA_VISIBLE_MODULES",
        _ => "CUDA_VISIBLE_DEVICES",
    }
}

/// [`plan`] on GPUs of `arch` (`cuda`, `rocm`, `xpu`, `hpu`): a GPU is given by that arch's
/// [`selection_variable`].
///
/// ```
/// use giving_suite::runner::plan_for;
/// # let bench = giving_suite::config::Suite::load(
/// #     { let d = tempfile::tempdir().unwrap(); let f = d.path().join("s.yaml");
/// #       std::fs::write(&f, "a: {command: [x]}").unwrap(); Box::leak(Box::new(d)); f },
/// #     &giving_suite::config::Placeholders { n_gpu: 0, n_cpu: 1, ..Default::default() },
/// # ).unwrap().benches.remove(0);
/// let p = plan_for(&bench, 2, "rocm");
/// assert_eq!(p[1].env["ROCR_VISIBLE_DEVICES"], "1");
/// ```
pub fn plan_for(bench: &Bench, n_gpu: usize, arch: &str) -> Vec<ProcessPlan> {
    let variable = selection_variable(arch);
    match bench.plan {
        Plan::PerGpu if n_gpu == 0 => vec![ProcessPlan {
            tag: "D0".to_owned(),
            device: None,
            devices: 1,
            env: BTreeMap::new(),
        }],
        Plan::PerGpu => (0..n_gpu)
            .map(|i| ProcessPlan {
                tag: format!("D{i}"),
                device: Some(i),
                devices: 1,
                env: BTreeMap::from([(variable.to_owned(), i.to_string())]),
            })
            .collect(),
        Plan::Njobs { n } => (0..n)
            .map(|i| ProcessPlan {
                tag: i.to_string(),
                device: None,
                devices: n_gpu,
                env: BTreeMap::new(),
            })
            .collect(),
    }
}
