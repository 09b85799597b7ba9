//! `giving train --tensorboard DIR`, read back with TensorBoard's own `EventAccumulator`
//! (SKIPPED when the `tensorboard` Python package is not installed): the scalars, and a model
//! watch's histograms as the Histograms tab reads them.

mod servers;

use std::path::PathBuf;
use std::process::Command;

use tempfile::TempDir;

use servers::{assert_same_losses, events_in, giving_command, logged_losses, python_has};

const READ_BACK: &str = r#"
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})
acc.Reload()
print(json.dumps({"tags": acc.Tags()["scalars"],
                  "loss": [[s.step, s.value] for s in acc.Scalars("loss")]}))
"#;

/// Histograms read two ways: by the accumulator that keeps them as `HistogramProto`s, and by
/// the one TensorBoard's server uses, which migrates them into the histograms plugin's tensors
/// of `[left, right, count]` rows (what the Histograms tab draws).
const READ_HISTOGRAMS: &str = r#"
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.backend.event_processing import plugin_event_accumulator
from tensorboard.util import tensor_util
acc = EventAccumulator(sys.argv[1], size_guidance={"histograms": 0})
acc.Reload()
tags = acc.Tags()["histograms"]
hists = {t: [{"step": h.step, "num": h.histogram_value.num, "min": h.histogram_value.min,
              "max": h.histogram_value.max, "bucket": list(h.histogram_value.bucket)}
             for h in acc.Histograms(t)] for t in tags}
plugin = plugin_event_accumulator.EventAccumulator(sys.argv[1], size_guidance={"tensors": 0})
plugin.Reload()
tabs = {t: [plugin.SummaryMetadata(t).plugin_data.plugin_name,
            tensor_util.make_ndarray(plugin.Tensors(t)[-1].tensor_proto).tolist()]
        for t in tags}
print(json.dumps({"tags": tags, "hists": hists, "tabs": tabs}))
"#;

/// Runs `giving train ARGS --tensorboard DIR/tb --log DIR/log`, then `script` on the event
/// files; its JSON output, the log's directory and the directory that holds both. `None`
/// (SKIPPED) without the tensorboard Python package.
fn train_and_read(args: &[&str], script: &str) -> Option<(serde_json::Value, PathBuf, TempDir)> {
    if !python_has("tensorboard") {
        println!("SKIPPED: the tensorboard Python package is not installed");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let (tb, log) = (dir.path().join("tb"), dir.path().join("log"));
    let out = giving_command()
        .arg("train")
        .args(args)
        .arg("--tensorboard")
        .arg(&tb)
        .arg("--log")
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let python = Command::new("python3")
        .args(["-c", script])
        .arg(&tb)
        .output()
        .unwrap();
    assert!(
        python.status.success(),
        "{}",
        String::from_utf8_lossy(&python.stderr)
    );
    Some((serde_json::from_slice(&python.stdout).unwrap(), log, dir))
}

#[test]
fn tensorboard_reads_the_logged_losses_at_their_steps() {
    let train = [
        "mlp",
        "--steps",
        "12",
        "--batch-size",
        "16",
        "--train-size",
        "192",
        "--valid-size",
        "32",
        "--every",
        "0",
        "--window",
        "4",
        "--rate-skip",
        "0",
    ];
    let Some((read, log, _dir)) = train_and_read(&train, READ_BACK) else {
        return;
    };
    let tags: Vec<&str> = read["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tags.contains(&"loss") && tags.contains(&"rate"), "{tags:?}");
    let logged = logged_losses(&log);
    assert_eq!(logged.len(), 12);
    assert_same_losses(&read["loss"], &logged);
}

#[test]
fn tensorboard_shows_the_watched_histograms_of_each_parameter() {
    let train = [
        "mlp",
        "--steps",
        "9",
        "--batch-size",
        "16",
        "--train-size",
        "192",
    ];
    let options = ["--valid-size", "32", "--every", "0", "--watch", "4"];
    let Some((read, log, _dir)) = train_and_read(&[&train[..], &options].concat(), READ_HISTOGRAMS)
    else {
        return;
    };

    // Every histogram the watch logged, at its step, with its counts.
    let mut logged = 0;
    for event in events_in(&log) {
        let Some(watched) = giving::vocab::WatchEvent::of(&event) else {
            continue;
        };
        let Some(hist) = event.get("hist") else {
            continue;
        };
        let counts: Vec<f64> = giving::FromValue::from_value(hist).unwrap();
        let label = watched.label();
        let series = read["hists"][&label]
            .as_array()
            .unwrap_or_else(|| panic!("no histogram `{label}` in {}", read["tags"]));
        let at_step = series
            .iter()
            .find(|h| h["step"].as_u64() == Some(watched.step))
            .unwrap_or_else(|| panic!("`{label}` has no step {}", watched.step));
        let read_counts: Vec<f64> = at_step["bucket"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_f64().unwrap())
            .collect();
        assert_eq!(read_counts, counts, "{label} at step {}", watched.step);
        assert_eq!(at_step["num"].as_f64().unwrap(), counts.iter().sum::<f64>());
        // Within an ulp: serde_json's default float parsing may round the last bit.
        let (read_min, min) = (
            at_step["min"].as_f64().unwrap(),
            event.get_as::<f64>("min").unwrap(),
        );
        assert!(
            (read_min - min).abs() <= 1e-15 * min.abs(),
            "{read_min} vs {min}"
        );
        logged += 1;
    }
    // Steps 0, 4 and 8; weights and gradients; three layers' weight and bias.
    assert_eq!(logged, 3 * 2 * 6, "{}", read["tags"]);

    // What the Histograms tab draws: the plugin's rows of [left, right, count], 64 of them, the
    // first from the minimum and the last to the maximum.
    let tab = &read["tabs"]["grad/layers.0.weight"];
    assert_eq!(tab[0], "histograms");
    let rows = tab[1].as_array().unwrap();
    assert_eq!(rows.len(), 64);
    let last = &read["hists"]["grad/layers.0.weight"].as_array().unwrap()[2];
    let (min, max) = (last["min"].as_f64().unwrap(), last["max"].as_f64().unwrap());
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1e-12);
    assert!(close(rows[0][0].as_f64().unwrap(), min), "{rows:?}");
    assert!(close(rows[63][1].as_f64().unwrap(), max), "{rows:?}");
    let total: f64 = rows.iter().map(|r| r[2].as_f64().unwrap()).sum();
    assert_eq!(total, last["num"].as_f64().unwrap());
}
