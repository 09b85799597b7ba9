//! `giving train --tensorboard DIR`, read back with TensorBoard's own `EventAccumulator`
//! (SKIPPED when the `tensorboard` Python package is not installed).

mod servers;

use std::process::Command;

use giving::vocab::keys;
use giving_instruments::log::LogReader;
use servers::{giving_command, only_file, python_has};

const READ_BACK: &str = r#"
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})
acc.Reload()
print(json.dumps({"tags": acc.Tags()["scalars"],
                  "loss": [[s.step, s.value] for s in acc.Scalars("loss")]}))
"#;

#[test]
fn tensorboard_reads_the_logged_losses_at_their_steps() {
    if !python_has("tensorboard") {
        println!("SKIPPED: the tensorboard Python package is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (tb, log) = (dir.path().join("tb"), dir.path().join("log"));
    let out = giving_command()
        .args([
            "train",
            "mlp",
            "--steps",
            "12",
            "--batch-size",
            "16",
            "--train-size",
            "192",
        ])
        .args([
            "--valid-size",
            "32",
            "--every",
            "0",
            "--window",
            "4",
            "--rate-skip",
            "0",
        ])
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
        .args(["-c", READ_BACK])
        .arg(&tb)
        .output()
        .unwrap();
    assert!(
        python.status.success(),
        "{}",
        String::from_utf8_lossy(&python.stderr)
    );
    let read: serde_json::Value = serde_json::from_slice(&python.stdout).unwrap();
    let tags: Vec<&str> = read["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tags.contains(&"loss") && tags.contains(&"rate"), "{tags:?}");
    let read_losses: Vec<(i64, f64)> = read["loss"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_i64().unwrap(), p[1].as_f64().unwrap()))
        .collect();

    let logged: Vec<(i64, f64)> = LogReader::open(only_file(&log, "msgpack"))
        .unwrap()
        .map(Result::unwrap)
        .filter(|e| e.has(keys::LOSS) && e.has(keys::GLOBAL_STEP))
        .map(|e| {
            let step = e.get_as::<u64>(keys::GLOBAL_STEP).unwrap() as i64;
            (step, e.get_as::<f64>(keys::LOSS).unwrap())
        })
        .collect();
    assert_eq!(logged.len(), 12);
    assert_eq!(read_losses.len(), logged.len(), "{read_losses:?}");
    for ((read_step, read_loss), (step, loss)) in read_losses.iter().zip(&logged) {
        assert_eq!(read_step, step);
        // TensorBoard keeps scalars as 32-bit floats.
        let expected = f64::from(*loss as f32);
        assert!(
            (read_loss - expected).abs() <= 1e-6 * expected.abs(),
            "step {step}: read {read_loss}, logged {loss}"
        );
    }
}
