//! The timeline checked with Perfetto's own protos (see `perfetto_check`): clocks, slices that
//! end with the span they began in, structural keys kept off the counter tracks.

use std::path::{Path, PathBuf};

use giving::timeline::Channel;
use giving::{give, iterate, tracepoint};
use giving_instruments::Overseer;
use giving_instruments::timeline::{Trace, TraceFormat};

mod perfetto_check;
use perfetto_check::Summary;

fn traced(dir: &Path, run: impl FnOnce()) -> PathBuf {
    let trace = Trace::in_dir(dir, TraceFormat::Perfetto).unwrap();
    let path = trace.path().to_path_buf();
    let run = Overseer::new().with(trace).run(run);
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    path
}

/// `giving tune`'s shape: a training (epochs of an `iterate` loop and a validation span) in a
/// `training` span, then a tuning session in a `tuning` span whose loop gives `iteration`.
fn train_then_tune() {
    let training = tracepoint!(Channel::thread(), "training");
    for epoch in 0..2u64 {
        give!(epoch, lr = 0.1);
        for (step, _) in iterate("train", 0..5).batch_size(8).enumerate() {
            give!(epoch, global_step = step, loss = 1.0 / (step + 1) as f64);
        }
        let validation = tracepoint!(Channel::thread(), "validation");
        drop(validation);
        give!(epoch, accuracy = 0.5);
    }
    training.end();
    let _tuning = tracepoint!(Channel::thread(), "tuning");
    for iteration in iterate("tune", 0..4u64).batch_size(1) {
        give!(task = "tune", iteration, qos = 90.0 - iteration as f64);
    }
    let _qos = tracepoint!(Channel::thread(), "qos validation");
}

#[test]
fn the_last_epoch_ends_with_the_span_around_the_training() {
    let dir = tempfile::tempdir().unwrap();
    let path = traced(dir.path(), train_then_tune);
    let Some(trace) = Summary::read(&path) else {
        return;
    };
    trace.assert_well_formed();
    let epochs = trace.slices_named("epoch 1");
    assert_eq!(epochs.len(), 1);
    assert_eq!(Summary::parents(epochs[0]), ["training"]);
    let training = trace.slices_named("training")[0];
    assert!(epochs[0]["end"].as_u64() <= training["end"].as_u64());

    // The tuning loop is in the tuning span, in no epoch; its steps too.
    let tune = trace.slices_named("tune");
    assert_eq!(tune.len(), 1);
    assert_eq!(Summary::parents(tune[0]), ["tuning"]);
    for slice in trace.0["slices"].as_array().unwrap() {
        let parents = Summary::parents(slice);
        if parents.contains(&"tuning") {
            assert!(!parents.iter().any(|p| p.starts_with("epoch")), "{slice}");
        }
    }
    assert_eq!(trace.slices_named("qos validation").len(), 1);
    assert_eq!(trace.slices_named("validation").len(), 2);
}

#[test]
fn step_indices_are_not_counter_tracks() {
    let dir = tempfile::tempdir().unwrap();
    let path = traced(dir.path(), train_then_tune);
    let Some(trace) = Summary::read(&path) else {
        return;
    };
    for index in ["iteration", "global_step", "step", "epoch"] {
        assert_eq!(trace.counter_track(index), None, "{index} is charted");
    }
    let qos = trace.counter_track("qos").unwrap();
    assert_eq!(trace.values(&qos), [90.0, 89.0, 88.0, 87.0]);
    assert_eq!(
        trace.values(&trace.counter_track("loss").unwrap()).len(),
        10
    );
}
