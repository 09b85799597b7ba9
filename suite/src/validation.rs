//! Validation layers over a run (milabench's `milabench/validation`): each looks at what the
//! run recorded and gives findings; errors make the exit code non-zero, warnings do not.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::report::{ProcessData, RunData};

/// A validation layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// A process failed: the error it reported (`{"$event": "error"}`), else its Rust panic
    /// message or Python traceback, else its exit status. A process stopped early at its own
    /// request (`{"$event": "stop"}`) did not fail.
    Error,
    /// A process gave no rate (milabench: "no training rate retrieved").
    EnsureRate,
    /// A NaN loss (error); no loss, or a loss that did not decrease overall (warnings).
    Loss,
    /// Fewer processes reported events than were planned.
    Planning,
    /// milabench's `usage` layer: per device, a mean GPU load below the benchmark's
    /// `validation.usage` threshold (0.5 by default) is an error, a mean memory use below its
    /// threshold a warning; a warning where thresholds were set and no `gpudata` was recorded.
    Usage,
    /// A process that reported events said nothing about itself (no log header, no `meta`
    /// event) in a run whose runner recorded nothing either (no `system.json`: milabench's
    /// runner writes `meta` itself), or two processes of the run used different versions of
    /// the same package.
    Version,
}

impl Layer {
    /// Every layer this version has.
    pub const ALL: [Layer; 6] = [
        Layer::Error,
        Layer::EnsureRate,
        Layer::Loss,
        Layer::Planning,
        Layer::Usage,
        Layer::Version,
    ];
    /// milabench's defaults.
    pub const DEFAULT: [Layer; 3] = [Layer::Error, Layer::EnsureRate, Layer::Version];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Error => "error",
            Layer::EnsureRate => "ensure_rate",
            Layer::Loss => "loss",
            Layer::Planning => "planning",
            Layer::Usage => "usage",
            Layer::Version => "version",
        }
    }

    /// Parses `error,loss` or `all`.
    ///
    /// ```
    /// use giving_suite::validation::Layer;
    ///
    /// assert_eq!(Layer::parse_list("error,loss").unwrap(), [Layer::Error, Layer::Loss]);
    /// assert_eq!(Layer::parse_list("all").unwrap().len(), 6);
    /// assert!(Layer::parse_list("versions").is_err());
    /// ```
    pub fn parse_list(text: &str) -> Result<Vec<Layer>, String> {
        if text.trim() == "all" {
            return Ok(Self::ALL.to_vec());
        }
        text.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect()
    }
}

impl FromStr for Layer {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| {
                let known: Vec<_> = Self::ALL.iter().map(|l| l.name()).collect();
                format!(
                    "unknown validation layer `{s}` (known: {}, all)",
                    known.join(", ")
                )
            })
    }
}

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Fails the validation.
    Error,
    /// Reported only.
    Warning,
}

/// What a layer found about a benchmark process.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The layer.
    pub layer: Layer,
    /// How serious.
    pub severity: Severity,
    /// `{bench}.{tag}`, or the benchmark's name.
    pub subject: String,
    /// What was found.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "[{}] {level}: {}: {}",
            self.layer.name(),
            self.subject,
            self.message
        )
    }
}

/// Runs `layers` over `run`.
pub fn validate(run: &RunData, layers: &[Layer]) -> Vec<Finding> {
    let mut out = Vec::new();
    for bench in &run.benches {
        for layer in layers {
            let mut find = |severity, subject: String, message: String| {
                out.push(Finding {
                    layer: *layer,
                    severity,
                    subject,
                    message,
                });
            };
            if *layer == Layer::Planning {
                let reporting = bench.processes.iter().filter(|p| p.events > 0).count();
                if reporting < bench.processes.len() {
                    find(
                        Severity::Error,
                        bench.name.clone(),
                        format!(
                            "{reporting} of {} planned processes reported events",
                            bench.processes.len()
                        ),
                    );
                }
                continue;
            }
            for p in &bench.processes {
                let subject = format!("{}.{}", bench.name, p.tag);
                match layer {
                    Layer::Error if !p.success => find(Severity::Error, subject, failure(p)),
                    Layer::EnsureRate if p.rates.iter().sum::<f64>() <= 0.0 => {
                        find(
                            Severity::Error,
                            subject,
                            "no training rate retrieved".to_owned(),
                        );
                    }
                    Layer::Loss => {
                        let nan = p.losses.iter().filter(|l| l.is_nan()).count();
                        if nan > 0 {
                            find(
                                Severity::Error,
                                subject,
                                format!("the loss was NaN {nan} time(s) of {}", p.losses.len()),
                            );
                        } else if p.losses.is_empty() {
                            find(Severity::Warning, subject, "no loss was found".to_owned());
                        } else if let (Some(first), Some(last)) =
                            (p.losses.first(), p.losses.last())
                            && p.losses.len() > 1
                            && last >= first
                        {
                            find(
                                Severity::Warning,
                                subject,
                                format!("the loss did not decrease ({first} → {last})"),
                            );
                        }
                    }
                    Layer::Usage => {
                        for (severity, message) in usage(bench.usage, p) {
                            find(severity, subject.clone(), message);
                        }
                    }
                    // milabench's runner writes `meta` itself: where ours wrote `system.json`
                    // (giving's version, the host) and the command line in `{bench}.{tag}.json`,
                    // a child that says nothing about itself is known all the same.
                    Layer::Version
                        if p.events > 0 && p.meta.is_none() && !runner_knows_meta(run) =>
                    {
                        find(
                            Severity::Error,
                            subject,
                            "no metadata: neither a giving log header nor a `meta` event, and \
                             no `system.json` from the runner, so what ran is unknown"
                                .to_owned(),
                        )
                    }
                    _ => {}
                }
            }
        }
    }
    if layers.contains(&Layer::Version) {
        out.extend(mixed_versions(run));
    }
    out
}

/// The `version` layer across the run: a package whose version differs between processes.
fn mixed_versions(run: &RunData) -> Vec<Finding> {
    // package → version → the first process seen with it.
    let mut seen: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for bench in &run.benches {
        for p in &bench.processes {
            for (package, version) in versions(p.meta.as_ref()) {
                seen.entry(package)
                    .or_default()
                    .entry(version)
                    .or_insert_with(|| format!("{}.{}", bench.name, p.tag));
            }
        }
    }
    seen.into_iter()
        .filter(|(_, versions)| versions.len() > 1)
        .map(|(package, versions)| Finding {
            layer: Layer::Version,
            severity: Severity::Error,
            subject: package,
            message: format!(
                "different versions in one run: {}",
                versions
                    .iter()
                    .map(|(version, first)| format!("{version} ({first})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
        .collect()
}

/// The package versions a process reported: its header's `versions`, or the string values of
/// a `meta` event (`{"torch": "2.4.0"}`), or of its `versions` map.
fn versions(meta: Option<&serde_json::Value>) -> Vec<(String, String)> {
    let Some(meta) = meta else {
        return Vec::new();
    };
    let map = meta
        .get("versions")
        .and_then(serde_json::Value::as_object)
        .or_else(|| meta.as_object());
    map.into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
        .collect()
}

/// Whether the runner recorded what ran (`system.json` with giving's version), as milabench's
/// runner writes the `meta` event itself.
fn runner_knows_meta(run: &RunData) -> bool {
    run.system["giving_version"].is_string()
}

/// milabench's thresholds where a benchmark sets none (`validation/usage.py`, `UsageCheck`).
const DEFAULT_USAGE_THRESHOLDS: (f64, f64) = (0.5, 0.5);

/// The `usage` layer for one process, as milabench's `validation/usage.py`: per device, the
/// mean load over its samples below `gpu_load_threshold` is an error, the mean memory
/// used/total below `gpu_mem_threshold` a warning (a missing load or memory counts 0, as
/// milabench's `.get("load", 0)` and `.get("memory", [0, 1])`). Thresholds not configured are
/// milabench's 0.5. The samples are the process's own device's (milabench's monitor sees
/// only the process's `CUDA_VISIBLE_DEVICES`; ours sees every GPU through NVML). Without
/// `gpudata`, a warning where thresholds were configured (milabench says nothing).
fn usage(configured: Option<(f64, f64)>, p: &ProcessData) -> Vec<(Severity, String)> {
    let (load_threshold, memory_threshold) = configured.unwrap_or(DEFAULT_USAGE_THRESHOLDS);
    if p.gpu.samples.is_empty() {
        return configured
            .map(|_| {
                (
                    Severity::Warning,
                    "no GPU usage was recorded (no `gpudata`: run it with a GPU monitor)"
                        .to_owned(),
                )
            })
            .into_iter()
            .collect();
    }
    // device → (Σ load, Σ memory fraction, max load, max memory fraction, samples).
    let mut devices: BTreeMap<&str, (f64, f64, f64, f64, usize)> = BTreeMap::new();
    for sample in &p.gpu.samples {
        for (index, gpu) in &sample.gpus {
            let load = gpu.load.unwrap_or(0.0);
            let memory = match (gpu.memory_used, gpu.memory_total) {
                (Some(used), Some(total)) if total > 0.0 => used / total,
                _ => 0.0,
            };
            let d = devices.entry(index).or_insert((0.0, 0.0, 0.0, 0.0, 0));
            *d = (
                d.0 + load,
                d.1 + memory,
                d.2.max(load),
                d.3.max(memory),
                d.4 + 1,
            );
        }
    }
    let mut out = Vec::new();
    for (device, (load, memory, max_load, max_memory, count)) in devices {
        let (load, memory) = (load / count as f64, memory / count as f64);
        if load < load_threshold {
            out.push((
                Severity::Error,
                format!(
                    "device {device}: mean GPU load {load:.2} below {load_threshold} (max load: \
                     {max_load:.2})"
                ),
            ));
        }
        if memory < memory_threshold {
            out.push((
                Severity::Warning,
                format!(
                    "device {device}: mean GPU memory used {memory:.2} of the total below \
                     {memory_threshold} (max use: {max_memory:.2})"
                ),
            ));
        }
    }
    out
}

/// Why a process failed: the errors it reported (`$event: error`, as milabench's `error` layer
/// shows them), else from its stderr a Rust panic's message or a Python traceback's last line,
/// else how it ended.
fn failure(p: &ProcessData) -> String {
    if !p.error_events.is_empty() {
        return format!("error event: {}", p.error_events.join("; "));
    }
    let lines: Vec<&str> = p.stderr.lines().collect();
    if let Some(i) = lines.iter().rposition(|l| l.contains("panicked at")) {
        let message = lines.get(i + 1).map_or("", |m| m.trim());
        return format!("panic: {message} ({})", lines[i].trim());
    }
    if let Some(i) = lines
        .iter()
        .rposition(|l| l.starts_with("Traceback (most recent call last)"))
    {
        let last = lines[i..]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty() && !l.starts_with(' '))
            .unwrap_or(&"");
        return format!("Python exception: {}", last.trim());
    }
    match (&p.killed, p.exit_code) {
        (Some(how), _) => format!("killed at max_duration ({how})"),
        (None, Some(code)) => format!("exit code {code}"),
        (None, None) => "ended by a signal, or did not start".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::BenchData;

    fn process(
        tag: &str,
        success: bool,
        rates: &[f64],
        losses: &[f64],
        stderr: &str,
    ) -> ProcessData {
        ProcessData {
            tag: tag.to_owned(),
            success,
            stopped: None,
            error_events: Vec::new(),
            rates: rates.to_vec(),
            losses: losses.to_vec(),
            events: (rates.len() + losses.len()) as u64,
            exit_code: Some(if success { 0 } else { 101 }),
            killed: None,
            stderr: stderr.to_owned(),
            device: None,
            meta: None,
            stem: tag.into(),
            rate_times: Vec::new(),
            gpu: Default::default(),
            record: Default::default(),
        }
    }

    fn run(processes: Vec<ProcessData>) -> RunData {
        RunData {
            dir: "r".into(),
            system: serde_json::Value::Null,
            benches: vec![BenchData {
                name: "b".into(),
                weight: 1.0,
                njobs: false,
                num_machines: 1,
                usage: None,
                processes,
            }],
        }
    }

    #[test]
    fn error_names_the_panic_message_and_the_traceback() {
        let r = run(vec![
            process(
                "D0",
                false,
                &[],
                &[],
                "noise\nthread 'main' panicked at src/main.rs:3:5:\nloss exploded\nnote: run with RUST_BACKTRACE=1\n",
            ),
            process(
                "D1",
                false,
                &[],
                &[],
                "Traceback (most recent call last):\n  File \"x.py\", line 1\n    boom()\nValueError: bad batch\n",
            ),
            process("D2", true, &[1.0], &[], ""),
        ]);
        let found = validate(&r, &[Layer::Error]);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].subject, "b.D0");
        assert_eq!(
            found[0].message,
            "panic: loss exploded (thread 'main' panicked at src/main.rs:3:5:)"
        );
        assert_eq!(found[1].message, "Python exception: ValueError: bad batch");
    }

    #[test]
    fn error_names_the_error_event_first_and_a_stopped_process_did_not_fail() {
        let mut reported = process(
            "D0",
            false,
            &[],
            &[],
            "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad batch\n",
        );
        reported.error_events = vec!["ValueError: bad batch".to_owned()];
        let mut stopped = process("D1", true, &[1.0], &[], "");
        stopped.stopped = Some("voir early stop".to_owned());
        stopped.killed = Some("sigterm".to_owned());
        stopped.exit_code = None;
        let found = validate(&run(vec![reported, stopped]), &[Layer::Error]);
        let found: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            found,
            ["[error] error: b.D0: error event: ValueError: bad batch"]
        );
    }

    #[test]
    fn loss_flags_nan_as_an_error_and_rising_or_absent_as_warnings() {
        let r = run(vec![
            process("D0", true, &[1.0], &[2.0, f64::NAN], ""),
            process("D1", true, &[1.0], &[1.0, 2.0], ""),
            process("D2", true, &[1.0], &[], ""),
            process("D3", true, &[1.0], &[2.0, 1.0], ""),
        ]);
        let found = validate(&r, &[Layer::Loss]);
        let got: Vec<_> = found
            .iter()
            .map(|f| (f.subject.as_str(), f.severity))
            .collect();
        assert_eq!(
            got,
            [
                ("b.D0", Severity::Error),
                ("b.D1", Severity::Warning),
                ("b.D2", Severity::Warning)
            ]
        );
    }

    #[test]
    fn ensure_rate_and_planning() {
        let mut silent = process("1", true, &[], &[], "");
        silent.events = 0;
        let mut reporting = process("0", true, &[3.0], &[], "");
        reporting.meta = Some(serde_json::json!({"giving": "0.1.0"}));
        let r = run(vec![reporting, silent]);
        let found = validate(&r, &Layer::ALL);
        let layers: Vec<_> = found
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.layer)
            .collect();
        assert_eq!(layers, [Layer::EnsureRate, Layer::Planning]);
        assert_eq!(
            found.last().unwrap().message,
            "1 of 2 planned processes reported events"
        );
    }

    #[test]
    fn version_wants_metadata_and_one_version_per_package() {
        let mut header = process("D0", true, &[3.0], &[], "");
        header.meta = Some(serde_json::json!({
            "command_line": ["giving", "train"],
            "pid": 7,
            "versions": {"giving": "0.1.0", "giving-instruments": "0.1.0"}
        }));
        let mut voir = process("D1", true, &[3.0], &[], "");
        voir.meta = Some(serde_json::json!({"giving": "0.2.0", "torch": "2.4.0"}));
        let silent = process("D2", true, &[3.0], &[], "");
        let mut known = run(vec![header.clone(), silent.clone()]);
        known.system = serde_json::json!({"giving_version": "0.1.0"});
        assert!(
            validate(&known, &[Layer::Version]).is_empty(),
            "the runner's system.json knows what ran, as milabench's runner writes `meta`"
        );
        let found: Vec<String> = validate(&run(vec![header, voir, silent]), &[Layer::Version])
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [
                "[version] error: b.D2: no metadata: neither a giving log header nor a `meta` \
                 event, and no `system.json` from the runner, so what ran is unknown",
                "[version] error: giving: different versions in one run: 0.1.0 (b.D0), 0.2.0 (b.D1)"
            ]
        );
    }

    /// A process's samples of one device: `(load, used MiB)` of 1000 MiB each.
    fn sampled(tag: &str, samples: &[(f64, f64)]) -> ProcessData {
        use crate::report::{GpuFigures, GpuSample};
        let mut p = process(tag, true, &[10.0], &[], "");
        p.gpu.samples = samples
            .iter()
            .enumerate()
            .map(|(i, &(load, used))| GpuSample {
                at: i as f64,
                gpus: vec![(
                    "0".to_owned(),
                    GpuFigures {
                        load: Some(load),
                        memory_used: Some(used),
                        memory_total: Some(1000.0),
                        power: None,
                    },
                )],
            })
            .collect();
        p
    }

    /// milabench's `validation/usage.py` `Layer.report`: per device, `avg_load / count <
    /// gpu_load_threshold` fails (`failed += 1`), `avg_mem / count < gpu_mem_threshold` only
    /// warns (`warn += 1`); thresholds default to 0.5 (`UsageCheck`). `busy`: loads 0.9, 0.7
    /// (mean 0.8), memory 0.7, 0.5 (mean 0.6): nothing. `idle`: loads 0.2, 0.4 (mean 0.3 <
    /// 0.5: error), memory 0.1, 0.9 (mean 0.5, not below 0.5 although its peak is 0.9 — and
    /// below 0.6: a warning once the threshold is 0.6).
    #[test]
    fn usage_fails_on_load_warns_on_memory_with_milabench_defaults() {
        let busy = sampled("D0", &[(0.9, 700.0), (0.7, 500.0)]);
        let idle = sampled("D1", &[(0.2, 100.0), (0.4, 900.0)]);
        let blind = process("D2", true, &[10.0], &[], "");
        let mut r = run(vec![busy, idle, blind]);
        let found: Vec<String> = validate(&r, &[Layer::Usage])
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            ["[usage] error: b.D1: device 0: mean GPU load 0.30 below 0.5 (max load: 0.40)"],
            "milabench's defaults; no gpudata and no thresholds: nothing"
        );
        r.benches[0].usage = Some((0.5, 0.6));
        let found = validate(&r, &[Layer::Usage]);
        let got: Vec<(&str, Severity)> = found
            .iter()
            .map(|f| (f.subject.as_str(), f.severity))
            .collect();
        assert_eq!(
            got,
            [
                ("b.D1", Severity::Error),
                ("b.D1", Severity::Warning),
                ("b.D2", Severity::Warning)
            ]
        );
        assert_eq!(
            found[1].message,
            "device 0: mean GPU memory used 0.50 of the total below 0.6 (max use: 0.90)"
        );
    }
}
