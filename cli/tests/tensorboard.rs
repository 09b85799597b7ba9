//! `giving train --tensorboard DIR`, read back with TensorBoard's own `EventAccumulator`
//! (SKIPPED when the `tensorboard` Python package is not installed).

mod servers;

use std::process::Command;

use servers::{assert_same_losses, giving_command, logged_losses, python_has};

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
    let logged = logged_losses(&log);
    assert_eq!(logged.len(), 12);
    assert_same_losses(&read["loss"], &logged);
}
