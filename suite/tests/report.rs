//! The report of a hand-made run folder, checked against the formulas computed by hand.

use std::path::Path;

use giving::{Event, Timestamp, Value};
use giving_log::{LogHeader, LogWriter};
use giving_suite::report::{Report, load_run};

fn process(dir: &Path, stem: &str, success: bool, rates: &[f64]) {
    on_device(dir, stem, None, success, rates);
}

/// A process of a run folder: `{stem}.data` with `rates`, `{stem}.json` as the runner writes it.
fn on_device(dir: &Path, stem: &str, device: Option<usize>, success: bool, rates: &[f64]) {
    let mut log = LogWriter::create(
        dir.join(format!("{stem}.data")),
        &LogHeader::for_this_process(),
    )
    .unwrap();
    for (i, &rate) in rates.iter().enumerate() {
        log.write(&Event::new_at(
            [("rate", Value::F64(rate))],
            Timestamp::from_nanos(i as u64),
        ))
        .unwrap();
    }
    log.close(0).unwrap();
    let outcome = serde_json::json!({ "success": success, "device": device });
    std::fs::write(dir.join(format!("{stem}.json")), outcome.to_string()).unwrap();
}

/// milabench's `report/__init__.py` `_make_row`: `score = (acc if acc > 0 else perf) ×
/// (1 − fail / max(n, 1))`, `acc` = Σ over `summary["per_gpu"]` devices of their trimmed mean
/// (`summary.py` `aggregate` fills `per_gpu` only for a process whose config has a `device`:
/// `per_gpu` plans, not `njobs`). `make_report`: exp(Σ w·ln(score + 1) / Σ w).
#[test]
fn breakdown_and_score_follow_milabench() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("config.json"),
        r#"{"benches": [{"name": "a", "weight": 1.0}, {"name": "b", "weight": 3.0, "plan": {"method": "njobs", "n": 2}}, {"name": "never", "weight": 1.0}]}"#,
    )
    .unwrap();
    std::fs::write(dir.join("system.json"), r#"{"host": "h", "n_cpu": 2}"#).unwrap();
    // a: two devices. D0's 5 rates lose their min and max: mean(10, 20, 30) = 20; D1: mean 40.
    on_device(dir, "a.D0", Some(0), true, &[1.0, 10.0, 20.0, 30.0, 1000.0]);
    on_device(dir, "a.D1", Some(1), true, &[40.0]);
    // b (njobs): one of two processes failed; no device, so acc = 0 and the score is
    // perf × (1 − 1/2) = mean(5, 15) × 0.5 = 5 (not the sum of the job slots).
    process(dir, "b.0", true, &[5.0]);
    process(dir, "b.1", false, &[15.0]);

    let report = Report::new(&load_run(dir).unwrap());
    assert_eq!(
        report.rows.len(),
        2,
        "a benchmark with no process has no row"
    );
    let a = &report.rows[0];
    // ngpu is milabench's: 1 GPU per `per_gpu` process × 1 machine; 2 devices were used.
    assert_eq!(
        (a.bench.as_str(), a.fail, a.n, a.ngpu, a.devices),
        ("a", 0, 2, 1, 2)
    );
    assert!((a.score - 60.0).abs() < 1e-9, "{}", a.score);
    // perf over all 6 rates of a: 1 and 1000 dropped, mean(10, 20, 30, 40) = 25.
    assert_eq!(a.perf.unwrap().mean, 25.0);
    let b = &report.rows[1];
    assert_eq!((b.fail, b.n), (1, 2));
    assert!((b.score - 5.0).abs() < 1e-9, "{}", b.score);
    assert_eq!(report.failure_rate, 0.25);
    assert!(!report.passes());
    let want = ((61f64).ln() * 1.0 + (6f64).ln() * 3.0) / 4.0;
    assert!((report.score.unwrap() - want.exp()).abs() < 1e-9);

    let text = report.to_string();
    assert!(
        text.contains("Breakdown") && text.contains("Failure rate:    25.00% (FAIL)"),
        "{text}"
    );
    assert!(
        text.contains(
            "bench fail   n ngpu         perf   sem%   std% peak_memory        score weight"
        ),
        "{text}"
    );
}

/// milabench's `summary.py` `_summarize` writes `"weight": config.get("weight", 0)` and
/// `report/__init__.py` `_make_row` reads `config.get("weight", summary.get("weight", 0))`:
/// a benchmark without a weight weighs 0, so it is left out of the global score
/// exp(Σ w·ln(score + 1) / Σ w) = exp(1·ln(9 + 1) / 1) = 10.
#[test]
fn the_default_weight_is_zero_as_milabench() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("config.json"),
        r#"{"benches": [{"name": "w", "weight": 1.0}, {"name": "unweighted"}]}"#,
    )
    .unwrap();
    on_device(dir, "w.D0", Some(0), true, &[9.0]);
    on_device(dir, "unweighted.D0", Some(0), true, &[99.0]);
    let report = Report::new(&load_run(dir).unwrap());
    assert_eq!(report.rows[1].weight, 0.0);
    assert!((report.score.unwrap() - 10.0).abs() < 1e-9);
}

/// milabench's `summary.py` `aggregate` keys `per_gpu` by `config["device"]` (the index on
/// its node), so the same device on two nodes pools its rates: `_make_row`'s acc =
/// mean(10, 30) + mean(5) = 20 + 5 = 25 (not 10 + 30 + 5).
#[test]
fn the_same_device_on_two_nodes_is_one_device_of_the_score() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("config.json"),
        r#"{"benches": [{"name": "n", "weight": 1.0, "num_machines": 2}]}"#,
    )
    .unwrap();
    on_device(dir, "n.main.D0", Some(0), true, &[10.0]);
    on_device(dir, "n.far.D0", Some(0), true, &[30.0]);
    on_device(dir, "n.far.D1", Some(1), true, &[5.0]);
    let report = Report::new(&load_run(dir).unwrap());
    assert_eq!(report.rows[0].score, 25.0);
}

/// milabench's `summary.py` `ngpu(pack) = node_count(pack) × local_gpu(pack)`: `node_count`
/// is `num_machines` (default 1), `local_gpu` is `len(config["devices"])` under `njobs` (every
/// GPU of the machine, `NJobs` in `commands/__init__.py`) and 1 under `per_gpu`. Here: njobs
/// on 2 machines of 4 GPUs = 2 × 4 = 8; per_gpu on 2 machines = 2 × 1 = 2.
#[test]
fn ngpu_is_milabench_gpus_per_process_times_machines() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("config.json"),
        r#"{"benches": [
            {"name": "jobs", "plan": {"method": "njobs", "n": 2}, "num_machines": 2},
            {"name": "each", "plan": {"method": "per_gpu"}, "num_machines": 2}]}"#,
    )
    .unwrap();
    std::fs::write(dir.join("system.json"), r#"{"n_gpu": 4}"#).unwrap();
    process(dir, "jobs.0", true, &[1.0]);
    process(dir, "jobs.1", true, &[1.0]);
    on_device(dir, "each.D0", Some(0), true, &[1.0]);
    on_device(dir, "each.D1", Some(1), true, &[1.0]);
    let report = Report::new(&load_run(dir).unwrap());
    let got: Vec<(usize, usize)> = report.rows.iter().map(|r| (r.ngpu, r.devices)).collect();
    assert_eq!(got, [(8, 0), (2, 2)]);
}

#[test]
fn repetitions_share_their_device_and_dotted_names_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("config.json"),
        r#"{"benches": [{"name": "r", "weight": 1.0}, {"name": "r.big", "weight": 1.0}]}"#,
    )
    .unwrap();
    // Two repetitions on the CPU: one slot, its mean over both: mean(10, 20, 30) = 20.
    process(dir, "r.D0.R1", true, &[10.0, 20.0]);
    process(dir, "r.D0.R2", true, &[30.0]);
    // `r.big` is its own benchmark, not `r` with the tag `big.D0`.
    on_device(dir, "r.big.D0", Some(3), true, &[7.0]);
    std::fs::write(dir.join("r.D0.R1.voirconf.json"), "{}").unwrap();

    let run = load_run(dir).unwrap();
    let tags: Vec<Vec<&str>> = run
        .benches
        .iter()
        .map(|b| b.processes.iter().map(|p| p.tag.as_str()).collect())
        .collect();
    assert_eq!(tags, [vec!["D0.R1", "D0.R2"], vec!["D0"]]);
    let report = Report::new(&run);
    let r = &report.rows[0];
    // On the CPU too, a `per_gpu` process counts 1 GPU in milabench's ngpu.
    assert_eq!((r.n, r.ngpu, r.devices, r.score), (2, 1, 0, 20.0));
    let big = &report.rows[1];
    assert_eq!(
        (big.bench.as_str(), big.n, big.ngpu, big.devices, big.score),
        ("r.big", 1, 1, 1, 7.0)
    );
}

/// A `gpudata` sample of two devices: `(load, used MiB, total MiB)` each.
fn gpudata(devices: [(f64, f64, f64); 2], at: u64) -> Event {
    let gpus = devices
        .iter()
        .enumerate()
        .map(|(i, &(load, used, total))| {
            let gpu = [
                ("load".to_owned(), Value::F64(load)),
                (
                    "memory".to_owned(),
                    Value::List(vec![Value::F64(used), Value::F64(total)]),
                ),
            ];
            (i.to_string(), Value::Map(gpu.into_iter().collect()))
        })
        .collect();
    Event::new_at([("gpudata", Value::Map(gpus))], Timestamp::from_nanos(at))
}

/// milabench's `validation/usage.py`: per device, mean load below `gpu_load_threshold` is a
/// failure, mean memory used/total below `gpu_mem_threshold` a warning; `summary.py`
/// `aggregate` keeps only a `per_gpu` process's own device. `a.D0` was given device 1:
/// loads 0.4, 0.2 → mean 0.30 < 0.5 (error, max 0.40); memory 600, 200 of 1000 → mean 0.40
/// < 0.5 (warning, max 0.60). Device 0 (loads 0.9) is not its own and is not checked.
#[test]
fn usage_reads_the_thresholds_from_the_config_and_the_load_from_gpudata() {
    use giving_suite::validation::{Layer, Severity, validate};
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("config.json"),
        r#"{"benches": [{"name": "a", "weight": 1.0,
            "usage": {"gpu_load_threshold": 0.5, "gpu_mem_threshold": 0.5}}]}"#,
    )
    .unwrap();
    let mut log = LogWriter::create(dir.join("a.D0.data"), &LogHeader::for_this_process()).unwrap();
    log.write(&gpudata([(0.9, 900.0, 1000.0), (0.4, 600.0, 1000.0)], 1))
        .unwrap();
    log.write(&gpudata([(0.9, 900.0, 1000.0), (0.2, 200.0, 1000.0)], 2))
        .unwrap();
    log.close(0).unwrap();
    std::fs::write(dir.join("a.D0.json"), r#"{"success": true, "device": 1}"#).unwrap();

    let run = load_run(dir).unwrap();
    assert_eq!(run.benches[0].usage, Some((0.5, 0.5)));
    let findings = validate(&run, &[Layer::Usage]);
    let found: Vec<(Severity, &str)> = findings
        .iter()
        .map(|f| (f.severity, f.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                Severity::Error,
                "device 1: mean GPU load 0.30 below 0.5 (max load: 0.40)"
            ),
            (
                Severity::Warning,
                "device 1: mean GPU memory used 0.40 of the total below 0.5 (max use: 0.60)"
            )
        ]
    );
}

/// A `gpudata` sample of two devices drawing `watts` each, load 0.5, `watts × 2` MiB used.
fn powered(watts: [f64; 2], at_s: u64) -> Event {
    let gpus = watts
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let gpu = [
                ("power".to_owned(), Value::F64(w)),
                ("load".to_owned(), Value::F64(0.5)),
                (
                    "memory".to_owned(),
                    Value::List(vec![Value::F64(w * 2.0), Value::F64(1000.0)]),
                ),
            ];
            (i.to_string(), Value::Map(gpu.into_iter().collect()))
        })
        .collect();
    Event::new_at(
        [("gpudata", Value::Map(gpus))],
        Timestamp::from_nanos(at_s * 1_000_000_000),
    )
}

/// milabench's `summary.py`: `aggregate` keeps a `per_gpu` process's own device and adds
/// `power × (now − last_time)` per kept sample after the first (`energy / 1000`: kJ);
/// `_summarize` reads the *first* process's `energy[0]` and `elapsed[0]` and gives
/// `perf_watt = perf["mean"] / (energy[0] / elapsed[0])` (perf per kW); `report/__init__.py`
/// `_make_row`: `median_watt` = mean over devices of `gpu_load[device]["power"]["median"]`.
///
/// Here `a.D0` (device 0: 100, 200, 100 W at 0, 1, 2 s) has 200 × 1 + 100 × 1 = 300 J over
/// 2 s: energy 0.3 kJ, perf_watt = 600 / (0.3 / 2) = 4000; `a.D1` (device 1: 50 W flat)
/// has 100 J, so every process together is 0.4 kJ (ours, `energy_total_kj`).
/// median_watt = (median(100, 200, 100) + median(50, 50, 50)) / 2 = (100 + 50) / 2 = 75.
#[test]
fn energy_and_perf_watt_come_from_power_samples_and_compare_adds_ratios() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("config.json"),
        r#"{"benches": [{"name": "a", "weight": 1.0}, {"name": "cpu", "weight": 1.0}]}"#,
    )
    .unwrap();
    for (stem, device) in [("a.D0", 0), ("a.D1", 1)] {
        let mut log = LogWriter::create(
            dir.join(format!("{stem}.data")),
            &LogHeader::for_this_process(),
        )
        .unwrap();
        for (t, w) in [(0, 100.0), (1, 200.0), (2, 100.0)] {
            log.write(&powered([w, 50.0], t)).unwrap();
        }
        if device == 0 {
            log.write(&Event::new_at(
                [("rate", Value::F64(600.0))],
                Timestamp::from_nanos(2_000_000_000),
            ))
            .unwrap();
        }
        log.close(0).unwrap();
        let outcome = serde_json::json!({"success": true, "device": device});
        std::fs::write(dir.join(format!("{stem}.json")), outcome.to_string()).unwrap();
    }
    process(dir, "cpu.D0", true, &[3.0]);

    let report = Report::new(&load_run(dir).unwrap());
    let a = &report.rows[0];
    let close = |x: Option<f64>, want: f64| x.is_some_and(|x| (x - want).abs() < 1e-9);
    assert!(close(a.energy_kj, 0.3), "{:?}", a.energy_kj);
    assert!(close(a.energy_total_kj, 0.4), "{:?}", a.energy_total_kj);
    assert!(close(a.perf_watt, 4000.0), "{:?}", a.perf_watt);
    assert!(close(a.median_watt, 75.0), "{:?}", a.median_watt);
    // Device 0 used 200, 400, 200 MiB (fewer than 5 samples: none trimmed).
    assert_eq!(a.peak_memory, Some(400.0));
    assert_eq!(
        (report.rows[1].energy_kj, report.rows[1].perf_watt),
        (None, None)
    );
    let text = report.to_string();
    assert!(
        text.contains("energy (kJ)  perf_watt median_watt"),
        "{text}"
    );
    assert!(!text.contains("perf_base"), "{text}");

    // Against a base where `a` was half as fast and `cpu` absent.
    let base_dir = tempfile::tempdir().unwrap();
    let base_dir = base_dir.path();
    std::fs::write(
        base_dir.join("config.json"),
        r#"{"benches": [{"name": "a", "weight": 1.0}]}"#,
    )
    .unwrap();
    on_device(base_dir, "a.D0", Some(0), true, &[300.0]);
    let base = Report::new(&load_run(base_dir).unwrap());
    let compared = report.clone().compared_to(&base);
    assert_eq!(compared.rows[0].perf_base, Some(300.0));
    assert_eq!(compared.rows[1].perf_base, None);
    let text = compared.to_string();
    let row = text.lines().find(|l| l.starts_with("a ")).unwrap();
    assert!(row.ends_with("300.00      2.000"), "{row}");
    let ratio = report.score.unwrap() / base.score.unwrap();
    assert!(
        text.contains(&format!("Score ratio:  {ratio:>9.3}")),
        "{text}"
    );
}
