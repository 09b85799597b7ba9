//! `giving probes` and `giving train --probe`: observing the models' variables from the
//! command line, printed and logged.

mod support;
use support::{TINY_MLP, giving};

#[test]
fn probes_lists_the_instrumented_functions_and_their_variables() {
    let (ok, out) = giving(&["probes"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("giving_models::train::fit  (models/src/train.rs:"),
        "{out}"
    );
    assert!(
        out.contains("giving_models::model::cnn::Cnn::forward"),
        "{out}"
    );
    assert!(out.contains("  arguments: self, images"), "{out}");
    assert!(out.contains("#loop_batch, #endloop_batch"), "{out}");
    let (ok, out) = giving(&["probes", "mlp"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("Mlp::forward") && !out.contains("Cnn::forward"),
        "{out}"
    );
}

#[test]
fn train_probe_prints_and_logs_probed_values() {
    let dir = std::env::temp_dir().join(format!("giving-cli-probe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let options = [
        "--steps",
        "3",
        "--every",
        "0",
        "--probe",
        "fit > loss",
        "--probe",
        "fit(epoch) > Mlp::forward(!#value as logits)",
        "--log",
        dir.to_str().unwrap(),
    ];
    let (ok, out) = giving(&[&["train"][..], &TINY_MLP, &options].concat());
    assert!(ok, "{out}");
    let losses: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("[mlp] probe fit > loss: loss="))
        .collect();
    assert_eq!(losses.len(), 3, "one line per step:\n{out}");
    // 3 training steps, then the validation batch: logits, 10 classes per item.
    assert!(
        out.contains("[mlp] probe fit(epoch) > Mlp::forward(!#value as logits): epoch=0 logits=["),
        "{out}"
    );

    let logs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    let (ok, dump) = giving(&["log", "dump", "--json", logs[0].to_str().unwrap()]);
    assert!(ok, "{dump}");
    let logged = dump
        .lines()
        .filter(|l| l.contains("\"probe\":\"fit > loss\""))
        .count();
    assert_eq!(logged, 3, "the probed losses reach the log:\n{dump}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_probe_is_refused_before_training_with_where_and_why() {
    let (ok, out) = giving(&["train", "mlp", "--steps", "1", "--probe", "fit > (loss"]);
    assert!(!ok);
    assert_eq!(
        out.trim(),
        "error: --probe \"fit > (loss\"\n  caused by: selector `fit > (loss`, column 12: expected \
         `>`, `(`, `as` or `)`, found the end"
    );
    let (ok, out) = giving(&["train", "mlp", "--steps", "1", "--probe", "fti > loss"]);
    assert!(!ok);
    assert!(out.contains("closest: fit"), "{out}");
    assert!(
        !out.contains("training on"),
        "refused before the banner:\n{out}"
    );
}

/// Issue 28's acceptance: ptera's wildcard and value condition on the bundled CNN. The bundled
/// models' instrumented functions are `fit` (the training loop) and `Cnn::forward`, so
/// `forward > *` gives every argument and binding of each forward pass, and
/// `fit(epoch=1) > loss` the losses of the second epoch only.
#[test]
fn train_cnn_probes_a_wildcard_and_a_value_condition() {
    let (ok, out) = giving(&[
        "train",
        "cnn",
        "--epochs",
        "2",
        "--batch-size",
        "8",
        "--train-size",
        "16",
        "--valid-size",
        "8",
        "--every",
        "0",
        "--probe",
        "forward > *",
        "--probe",
        "fit(epoch=1) > loss",
    ]);
    assert!(ok, "{out}");
    let forward: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("[cnn] probe forward > *: "))
        .collect();
    // Each forward pass: `self`, `images`, then `x` three times.
    for field in ["self=", "images=", "x="] {
        assert!(
            forward.iter().any(|l| l.starts_with(field)),
            "{field}:\n{out}"
        );
    }
    let losses: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("[cnn] probe fit(epoch=1) > loss: "))
        .collect();
    assert_eq!(losses.len(), 2, "two steps in epoch 1 only:\n{out}");
    assert!(
        losses.iter().all(|l| l.starts_with("epoch=1 loss=")),
        "{out}"
    );
}
