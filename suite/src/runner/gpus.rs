//! The GPUs of this machine, by vendor: NVIDIA's from the driver's `/proc` folder, AMD's
//! from `rocm-smi --showmeminfo vram --json`, Intel's from `xpu-smi discovery -j`, as
//! milabench asks cuda, rocm and xpu in turn.

use std::process::Command;

use serde_json::Value;

/// The GPUs found, of one vendor.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpus {
    /// milabench's arch: `cuda`, `rocm` or `xpu`.
    pub arch: &'static str,
    /// How many.
    pub count: usize,
    /// The memory of the first, MiB, when the tool says it.
    pub memory_mib: Option<u64>,
}

/// Finds this machine's GPUs: NVIDIA's, else AMD's, else Intel's; `None` without any (or
/// without the vendor's tool).
pub fn detect() -> Option<Gpus> {
    let nvidia = std::fs::read_dir("/proc/driver/nvidia/gpus").map_or(0, |d| d.count());
    if nvidia > 0 {
        return Some(Gpus {
            arch: "cuda",
            count: nvidia,
            memory_mib: None,
        });
    }
    let run = |program: &str, args: &[&str]| {
        let out = Command::new(program).args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    if let Some(text) = run("rocm-smi", &["--showmeminfo", "vram", "--json"]) {
        return parse_rocm_smi(&text).ok().filter(|g| g.count > 0);
    }
    run("xpu-smi", &["discovery", "-j"])
        .and_then(|text| parse_xpu_smi(&text).ok())
        .filter(|g| g.count > 0)
}

/// `rocm-smi … --json`: an object with a `cardN` entry a GPU; the memory from
/// `VRAM Total Memory (B)`.
pub fn parse_rocm_smi(text: &str) -> Result<Gpus, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("rocm-smi: not JSON: {e}"))?;
    let cards: Vec<&Value> = doc
        .as_object()
        .ok_or("rocm-smi: expected an object of cards")?
        .iter()
        .filter(|(k, _)| k.starts_with("card"))
        .map(|(_, v)| v)
        .collect();
    let memory_mib = cards.first().and_then(|c| {
        let bytes = c.get("VRAM Total Memory (B)")?;
        let bytes = bytes
            .as_u64()
            .or_else(|| bytes.as_str()?.trim().parse().ok())?;
        Some(bytes / (1024 * 1024))
    });
    Ok(Gpus {
        arch: "rocm",
        count: cards.len(),
        memory_mib,
    })
}

/// `xpu-smi discovery -j`: `{"device_list": [..]}`, a device each; the memory from
/// `memory_physical_size_byte`.
pub fn parse_xpu_smi(text: &str) -> Result<Gpus, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("xpu-smi: not JSON: {e}"))?;
    let devices = doc
        .get("device_list")
        .and_then(Value::as_array)
        .ok_or("xpu-smi: no `device_list`")?;
    let memory_mib = devices.first().and_then(|d| {
        let bytes = d.get("memory_physical_size_byte")?;
        let bytes = bytes
            .as_u64()
            .or_else(|| bytes.as_str()?.trim().parse().ok())?;
        Some(bytes / (1024 * 1024))
    });
    Ok(Gpus {
        arch: "xpu",
        count: devices.len(),
        memory_mib,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> String {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gpus/");
        std::fs::read_to_string(format!("{dir}{name}")).unwrap()
    }

    #[test]
    fn amd_gpus_from_rocm_smi() {
        let gpus = parse_rocm_smi(&sample("rocm-smi-meminfo.json")).unwrap();
        assert_eq!(gpus.arch, "rocm");
        assert_eq!(gpus.count, 8);
        assert_eq!(gpus.memory_mib, Some(196_592));
        assert!(parse_rocm_smi("GPU[0] : x").is_err());
    }

    #[test]
    fn intel_gpus_from_xpu_smi() {
        let gpus = parse_xpu_smi(&sample("xpu-smi-discovery.json")).unwrap();
        assert_eq!(gpus.arch, "xpu");
        assert_eq!(gpus.count, 2);
        assert_eq!(gpus.memory_mib, Some(65_536));
        assert!(parse_xpu_smi("{}").is_err());
    }
}
