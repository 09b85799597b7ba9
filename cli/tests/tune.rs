//! `giving tune` end to end on a tiny network: tune, write configs.json and the plot, apply a
//! configuration back and reproduce its QoS; bad files are refused with a clear error.

mod support;

use std::path::Path;

use serde_json::Value;
use support::{giving, giving_in};

/// A tiny tune: 4 convolutions of 4–8 channels, 256 training images, 60 tuning and test
/// images, 16 iterations.
fn tiny(dir: &Path, out: &str, extra: &[&str]) -> (bool, String) {
    #[rustfmt::skip]
    let mut args = vec![
        "tune", "vgg", "--channels", "4,4,8,8", "--hidden", "16", "--epochs", "1",
        "--train-size", "256", "--tune-size", "60", "--test-size", "60", "--max-iter", "16",
        "--population", "6", "--take-best-n", "3", "--repeats", "1", "--every", "8",
        "--cache", "cache", "--out", out,
    ];
    args.extend_from_slice(extra);
    giving_in(&args, dir)
}

#[test]
fn tunes_writes_results_and_applies_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, text) = tiny(dir.path(), "out", &[]);
    assert!(ok, "{text}");
    assert!(
        text.contains("not cached: training the network first"),
        "{text}"
    );
    assert!(text.contains("[tune] iteration     8"), "{text}");
    let configs = dir.path().join("out/configs.json");
    let png = std::fs::read(dir.path().join("out/configs.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&configs).unwrap()).unwrap();
    let kept = file["configs"].as_array().unwrap();
    assert!(!kept.is_empty(), "the exact configuration is always kept");
    assert_eq!(file["timing"]["iterations"], 16);
    // No `--knobs` on flex: HPVM's FP32 set, the baseline, 18 perforations and 9 samplings.
    let searched = support::searched_knobs(&configs);
    assert_eq!(searched.len(), 28, "{searched:?}");
    assert!(
        searched
            .iter()
            .all(|k| !k.contains("fp16") && !k.starts_with("sparse")),
        "{searched:?}"
    );
    let baseline = file["baseline"]["qos"].as_f64().unwrap();
    for c in kept {
        assert_eq!(c["knobs"].as_array().unwrap().len(), 4);
        let loss = c["qos_loss"].as_f64().unwrap();
        assert!(loss <= 3.0 + 1e-9, "kept beyond the threshold: {c}");
        assert!((baseline - c["qos"].as_f64().unwrap() - loss).abs() < 1e-9);
    }
    assert!(
        kept.iter()
            .any(|c| c["pareto"] == true && c["best"] == true)
    );
    let best = kept.iter().position(|c| c["best"] == true).unwrap();

    // Applying a best configuration runs it again and reproduces both recorded QoS.
    let index = best.to_string();
    let (ok, text) = giving_in(
        &["tune", "apply", "out/configs.json", "--index", &index],
        dir.path(),
    );
    assert!(ok, "{text}");
    assert!(
        text.contains("reproduces the recorded QoS exactly"),
        "{text}"
    );
    let recorded = kept[best]["qos"].as_f64().unwrap();
    assert!(
        text.contains(&format!("tuning qos {recorded:.2}%")),
        "{text}"
    );

    // A second session reuses the cached weights, and predicts QoS with the p1 model: what
    // it keeps after validation was measured within the threshold.
    let (ok, text) = tiny(
        dir.path(),
        "out-p1",
        &[
            "--qos-model",
            "p1",
            "--knobs",
            "perf_row_k2_o0,perf_col_k3_o1,samp_k2_o0",
        ],
    );
    assert!(ok, "{text}");
    assert!(text.contains("cached, reused"), "{text}");
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out-p1/configs.json")).unwrap(),
    )
    .unwrap();
    for c in file["configs"].as_array().unwrap() {
        assert!(c["predicted_qos"].is_number(), "{c}");
        assert!(c["qos_loss"].as_f64().unwrap() <= 3.0 + 1e-9, "{c}");
    }
    assert!(dir.path().join("out-p1/configs.png").is_file());
    // The p1 profile was built (4 layers × 3 knobs) and stored in the cache.
    assert_eq!(file["profile"]["loaded"], false, "{file}");
    assert_eq!(file["profile"]["built"], 12, "{file}");
    assert!(text.contains("qos model profile built (12"), "{text}");
    assert!(text.contains("by the test-set threshold"), "{text}");

    // The same session again loads the stored profile and runs no (layer, knob) pair; then
    // p2 builds its own profile.
    let p1 = [
        "--qos-model",
        "p1",
        "--knobs",
        "perf_row_k2_o0,perf_col_k3_o1,samp_k2_o0",
    ];
    let (ok, text) = tiny(dir.path(), "out-p1-again", &p1);
    assert!(ok, "{text}");
    assert!(text.contains("qos model profile loaded from"), "{text}");
    assert!(text.contains("(0 (layer, knob) pairs run)"), "{text}");
    let (ok, text) = tiny(
        dir.path(),
        "out-p2",
        &["--qos-model", "p2", "--knobs", "perf_row_k2_o0,samp_k3_o2"],
    );
    assert!(ok, "{text}");
    assert!(text.contains("qos model profile built (8"), "{text}");
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out-p2/configs.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(file["settings"]["qos_model"], "p2");
}

#[test]
fn bad_configs_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    // A knobs file with a PredTuner knob this tuner does not compute (an interpolation rate
    // other than HPVM's): refused before any training, naming the file, the line and the key.
    let knobs = dir.path().join("knobs.json");
    std::fs::write(
        &knobs,
        "[\n  {\"class\": \"FP32Baseline\", \"name\": \"11\"},\n  {\"class\": \"Conv2dSampling\", \"name\": \"261\", \"skip_every\": 2,\n   \"skip_offset\": 0, \"interp_rate\": 0.5, \"use_fp16\": true}\n]\n",
    )
    .unwrap();
    let (ok, text) = giving_in(
        &["tune", "--knobs-file", "knobs.json", "--cache", "cache"],
        dir.path(),
    );
    assert!(!ok);
    for part in ["knobs.json", "line 3", "`interp_rate`"] {
        assert!(text.contains(part), "{part}: {text}");
    }
    assert!(!dir.path().join("cache").exists(), "{text}");
    let path = dir.path().join("configs.json");
    std::fs::write(&path, "{\"format\": 1}").unwrap();
    let (ok, text) = giving(&["tune", "apply", path.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        text.contains("configs.json") && text.contains("missing field"),
        "{text}"
    );
    let (ok, text) = giving(&[
        "tune",
        "apply",
        dir.path().join("nope.json").to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(text.contains("nope.json"), "{text}");
}

#[test]
fn the_vgg16_width_network_is_a_bundled_choice() {
    // Refused for its settings, not for its name: the name is accepted before any training.
    let (ok, text) = giving(&["tune", "vgg16-width", "--max-iter", "0"]);
    assert!(!ok);
    assert!(text.contains("max-iter must be at least 1"), "{text}");
    let (ok, text) = giving(&["tune", "vgg19", "--max-iter", "1"]);
    assert!(!ok);
    assert!(text.contains("vgg16-width"), "{text}");
}

#[test]
fn a_learning_rate_that_cannot_train_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    for lr in ["0", "-1e-3", "nan"] {
        let flag = format!("--lr={lr}");
        let (ok, text) = tiny(dir.path(), "out", &[&flag]);
        assert!(!ok, "--lr {lr}: {text}");
        assert!(text.contains("lr"), "--lr {lr}: {text}");
    }
}

#[test]
fn lists_the_knobs_with_their_cost() {
    let (ok, text) = giving(&["tune", "--list-knobs"]);
    assert!(ok, "{text}");
    for line in [
        "baseline",
        "perf_row_k2_o0",
        "perf_col_k4_o1",
        "samp_k3_o0",
        "perf_col_k4_o3",
        "samp_k4_o3",
        "sparse_row_k3_o0",
        "fp16",
        "perf_fp16_col_k3_o2",
        "samp_fp16_k4_o3",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    let cost = |id: &str| {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id));
        let line = line.unwrap_or_else(|| panic!("{id}: {text}"));
        line.split_whitespace().nth(1).unwrap().to_owned()
    };
    // HPVM's perforation skips one row in 4; the sparse one computes one in 4.
    assert_eq!(cost("perf_row_k4_o0"), "0.750", "{text}");
    assert_eq!(cost("sparse_row_k4_o0"), "0.250", "{text}");
    // One column for the costs, the longest ids included: each ends at the same place.
    let ends: std::collections::BTreeSet<_> = text
        .lines()
        .skip(1)
        .map(|l| l.find('.').expect("a cost on every line") + 4)
        .collect();
    assert_eq!(ends.len(), 1, "costs aligned: {text}");
    // HPVM's FP16 knobs: half the f32 knob's cost, searched only when asked for.
    let line = text
        .lines()
        .find(|l| l.starts_with("samp_fp16_k2_o0"))
        .unwrap();
    assert!(line.contains(" 0.250 ") && line.contains("in f16") && line.contains("--knobs"));
}
