//! The `config` and `meta` lines the runner writes at the top of each process's `.data` file,
//! in the shapes milabench's runner gives them (`pack.config` after `PerGPU`/`NJobs`, and
//! `metadata.py`'s `machine_metadata`), so that milabench's `summary.py` reads our runs.

use serde_json::{Value, json};

use super::plan::ProcessPlan;
use super::system::SystemFacts;
use crate::config::{Bench, Plan};

/// What the runner writes before a process's events: milabench's `config` and `meta`.
#[derive(Debug, Clone, Default)]
pub struct Preamble {
    /// The `config` line's data: the benchmark's resolved configuration with milabench's
    /// per-process keys (`tag`, `device`, `devices`, `job-number`).
    pub config: Value,
    /// The `meta` line's data: the machine (`cpu`, `os`, `accelerators`, `date`).
    pub meta: Value,
}

/// milabench's per-process configuration of `bench` for the process `plan` tagged `tag`
/// (`D0`, `n1.D0.R2`) on a machine planned with `n_gpu` GPUs: `tag` is a list (the name, then
/// the tag's parts: the file's stem joined by dots), `group` the name where none is set,
/// `enabled` true (it ran); under `per_gpu` `device` is the GPU (0 for the CPU's process, as
/// milabench's `PerGPU` without GPUs) and `devices` `[device]`; under `njobs` `job-number` is
/// the job and `devices` every GPU planned (milabench's `ngpu` counts them).
pub(crate) fn config(bench: &Bench, plan: &ProcessPlan, tag: &str, n_gpu: usize) -> Value {
    let mut config = serde_json::to_value(bench).unwrap_or_else(|_| json!({}));
    let Some(map) = config.as_object_mut() else {
        return config;
    };
    let mut tags = vec![json!(bench.name)];
    tags.extend(tag.split('.').map(|part| json!(part)));
    map.insert("tag".to_owned(), Value::Array(tags));
    map.entry("group").or_insert_with(|| json!(bench.name));
    map.insert("enabled".to_owned(), json!(true));
    match bench.plan {
        Plan::PerGpu => {
            let device = plan.device.unwrap_or(0);
            map.insert("device".to_owned(), json!(device));
            map.insert("devices".to_owned(), json!([device]));
        }
        Plan::Njobs { .. } => {
            if let Ok(job) = plan.tag.parse::<u64>() {
                map.insert("job-number".to_owned(), json!(job));
            }
            map.insert("devices".to_owned(), json!((0..n_gpu).collect::<Vec<_>>()));
        }
    }
    config
}

/// milabench's `machine_metadata` shape from what the runner knows of this machine:
/// `cpu: {count, brand}`, `os: {sysname, nodename, release, version, machine}`,
/// `accelerators: {arch, gpus: {index: {device, product}}, system}`, `date`, and `giving`
/// with this crate's version where milabench has its own.
pub(crate) fn meta(facts: &SystemFacts, date: f64) -> Value {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    let gpus: serde_json::Map<String, Value> = gpu_products()
        .into_iter()
        .chain(std::iter::repeat(None))
        .take(facts.n_gpu)
        .enumerate()
        .map(|(i, product)| {
            let product = product.unwrap_or_else(|| "NA".to_owned());
            (i.to_string(), json!({ "device": i, "product": product }))
        })
        .collect();
    json!({
        "cpu": { "count": facts.n_cpu, "brand": facts.cpu_model },
        "os": {
            "sysname": facts.os,
            "nodename": facts.host,
            "release": read("/proc/sys/kernel/osrelease"),
            "version": read("/proc/sys/kernel/version"),
            "machine": facts.arch,
        },
        "accelerators": {
            "arch": if facts.n_gpu > 0 { "cuda" } else { "cpu" },
            "gpus": gpus,
            "system": {},
        },
        "date": date,
        "giving": { "version": facts.giving_version, "command_line": facts.command_line },
    })
}

/// The model of each NVIDIA GPU the driver lists (`/proc/driver/nvidia/gpus/*/information`,
/// its `Model:` line), in bus order: milabench's `product`.
fn gpu_products() -> Vec<Option<String>> {
    let Ok(dir) = std::fs::read_dir("/proc/driver/nvidia/gpus") else {
        return Vec::new();
    };
    let mut buses: Vec<_> = dir.flatten().map(|e| e.path()).collect();
    buses.sort();
    buses
        .iter()
        .map(|bus| {
            std::fs::read_to_string(bus.join("information"))
                .ok()?
                .lines()
                .find_map(|l| l.strip_prefix("Model:").map(|m| m.trim().to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::runner::test_bench::bench;

    fn plan(tag: &str, device: Option<usize>) -> ProcessPlan {
        ProcessPlan {
            tag: tag.to_owned(),
            device,
            devices: 1,
            env: BTreeMap::new(),
        }
    }

    /// milabench's `PerGPU`: `tag: [name, "D1"]`, `device: 1`, `devices: [1]`; on the CPU
    /// device 0.
    #[test]
    fn per_gpu_processes_have_milabenchs_device_keys() {
        let b = bench("a: {command: [x], weight: 2}");
        let c = config(&b, &plan("D1", Some(1)), "D1.R2", 2);
        assert_eq!(c["tag"], json!(["a", "D1", "R2"]));
        assert_eq!(
            (c["device"].clone(), c["devices"].clone()),
            (json!(1), json!([1]))
        );
        assert_eq!(
            (c["name"].clone(), c["group"].clone()),
            (json!("a"), json!("a"))
        );
        assert_eq!(
            (c["weight"].clone(), c["enabled"].clone()),
            (json!(2.0), json!(true))
        );
        assert_eq!(c["plan"]["method"], "per_gpu");
        let cpu = config(&b, &plan("D0", None), "D0", 0);
        assert_eq!(cpu["device"], 0);
    }

    /// milabench's `NJobs`: `job-number`, every GPU in `devices`, no `device`.
    #[test]
    fn njobs_processes_list_every_gpu() {
        let b = bench("a: {command: [x], plan: {method: njobs, n: 2}}");
        let c = config(&b, &plan("1", None), "1", 3);
        assert_eq!(c["job-number"], 1);
        assert_eq!(c["devices"], json!([0, 1, 2]));
        assert!(c.get("device").is_none());
        assert_eq!(c["plan"], json!({"method": "njobs", "n": 2}));
    }

    #[test]
    fn meta_has_milabenchs_shape() {
        let mut facts = SystemFacts::detect();
        facts.n_gpu = 2;
        let m = meta(&facts, 1.5);
        assert_eq!(m["cpu"]["count"], facts.n_cpu);
        assert_eq!(m["accelerators"]["gpus"].as_object().unwrap().len(), 2);
        assert!(m["accelerators"]["gpus"]["1"]["product"].is_string());
        assert_eq!(m["os"]["machine"], std::env::consts::ARCH);
        assert_eq!(m["date"], 1.5);
    }
}
