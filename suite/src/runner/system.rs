//! What the run folder records about the machine: CPU, GPUs, memory, versions, command line.

use serde::Serialize;

/// Facts about this machine and this run, written to `system.json`.
#[derive(Debug, Clone, Serialize)]
pub struct SystemFacts {
    /// Host name.
    pub host: String,
    /// `linux`, `macos`, …
    pub os: String,
    /// `x86_64`, `aarch64`, …
    pub arch: String,
    /// The CPU's model name.
    pub cpu_model: String,
    /// Logical CPUs.
    pub n_cpu: usize,
    /// Total memory, MiB (0 when unknown).
    pub memory_mb: u64,
    /// GPUs: NVIDIA's seen by the driver (`/proc/driver/nvidia/gpus`), else AMD's
    /// (`rocm-smi`), else Intel's (`xpu-smi`).
    pub n_gpu: usize,
    /// Their vendor, as milabench's arch (`cuda`, `rocm`, `xpu`); `None` without GPUs.
    pub gpu_arch: Option<String>,
    /// The memory of one, MiB, when the vendor's tool says it.
    pub gpu_memory_mib: Option<u64>,
    /// This crate's version.
    pub giving_version: String,
    /// The runner's command line.
    pub command_line: Vec<String>,
}

impl SystemFacts {
    /// Reads them from this machine (Linux's `/proc`; elsewhere what is unknown stays empty).
    pub fn detect() -> Self {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let cpu_model = read("/proc/cpuinfo")
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name")
                    .and_then(|r| r.split_once(':'))
                    .map(|(_, m)| m.trim().to_owned())
            })
            .unwrap_or_default();
        let memory_mb = read("/proc/meminfo")
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|r| r.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024);
        let gpus = super::gpus::detect();
        Self {
            host: read("/proc/sys/kernel/hostname").trim().to_owned(),
            os: std::env::consts::OS.to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
            cpu_model,
            n_cpu: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_mb,
            n_gpu: gpus.as_ref().map_or(0, |g| g.count),
            gpu_arch: gpus.as_ref().map(|g| g.arch.to_owned()),
            gpu_memory_mib: gpus.and_then(|g| g.memory_mib),
            giving_version: env!("CARGO_PKG_VERSION").to_owned(),
            // Secrets (a token flag, a URL's password) masked, as in a log header.
            command_line: giving_log::redact_args(std::env::args()),
        }
    }
}

/// `YYYY-MM-DD_HH-MM-SS` (UTC) for `secs` since the Unix epoch: the time in a run's folder name.
pub(crate) fn folder_time(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}_{:02}-{:02}-{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn folder_time_is_utc_civil_time() {
        assert_eq!(super::folder_time(0), "1970-01-01_00-00-00");
        assert_eq!(
            super::folder_time(1_795_435_200 + 3723),
            "2026-11-23_13-02-03"
        );
        assert_eq!(super::folder_time(951_782_400), "2000-02-29_00-00-00");
    }
}
