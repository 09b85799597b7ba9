//! `giving train --device wgpu` for real, on Mesa's software Vulkan where there is no GPU:
//! a short run with `--log` writes a complete log (every loss, the end record), and a device
//! that does not exist is a clear error, not a panic; a tuning session searches HPVM's f16
//! knobs by default. Built with `--features wgpu`; says
//! SKIPPED where no Vulkan driver is installed.
#![cfg(feature = "wgpu")]

use giving_log::LogReader;

mod support;
use support::{giving_code as giving, vulkan_available};

#[test]
fn train_on_wgpu_writes_a_complete_log() {
    if !vulkan_available() {
        eprintln!("SKIPPED: no Vulkan driver (apt-get install mesa-vulkan-drivers)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = giving(&[
        "train",
        "mlp",
        "--device",
        "wgpu",
        "--steps",
        "20",
        "--batch-size",
        "16",
        "--train-size",
        "320",
        "--valid-size",
        "32",
        "--window",
        "5",
        "--rate-skip",
        "0",
        "--log",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("training on wgpu"), "{out}");
    let log = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut reader = LogReader::open(&log).unwrap();
    let events: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    let losses: Vec<f64> = events
        .iter()
        .filter_map(|e| e.get_as::<f64>("loss").ok())
        .collect();
    assert_eq!(losses.len(), 20, "every lazy loss was read and logged");
    assert!(losses.iter().all(|l| l.is_finite()), "{losses:?}");
    assert_eq!(
        events.iter().filter(|e| e.has("rate")).count(),
        4,
        "one rate per window"
    );
    let end = reader.end().expect("the log has its end record");
    assert_eq!(end.events, events.len() as u64);
}

#[test]
fn a_wgpu_device_that_does_not_exist_is_a_clear_error() {
    if !vulkan_available() {
        eprintln!("SKIPPED: no Vulkan driver (apt-get install mesa-vulkan-drivers)");
        return;
    }
    let (code, out) = giving(&["train", "mlp", "--device", "wgpu:99", "--steps", "2"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("error: ") && out.contains("wgpu:99"), "{out}");
    assert!(!out.contains("panicked at"), "{out}");
}

#[test]
fn a_tuning_session_on_wgpu_searches_hpvms_f16_knobs_by_default() {
    if !vulkan_available() {
        eprintln!("SKIPPED: no Vulkan driver (apt-get install mesa-vulkan-drivers)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    #[rustfmt::skip]
    let (ok, out) = support::giving_in(&[
        "tune", "vgg", "--device", "wgpu", "--channels", "4,4", "--hidden", "8", "--epochs", "1",
        "--train-size", "64", "--tune-size", "20", "--test-size", "20", "--max-iter", "1",
        "--population", "4", "--take-best-n", "1", "--repeats", "1", "--cache", "cache",
        "--out", "out",
    ], dir.path());
    assert!(ok, "{out}");
    let searched = support::searched_knobs(&dir.path().join("out/configs.json"));
    // HPVM's FP32 set (28 with the baseline) and its f16 set (`fp16` and 27 more); no sparse_*.
    assert_eq!(searched.len(), 56, "{searched:?}");
    for knob in [
        "fp16",
        "perf_fp16_row_k2_o0",
        "samp_fp16_k4_o3",
        "perf_col_k4_o3",
    ] {
        assert!(searched.iter().any(|k| k == knob), "{knob}: {searched:?}");
    }
    assert!(
        !searched.iter().any(|k| k.starts_with("sparse")),
        "{searched:?}"
    );
}
