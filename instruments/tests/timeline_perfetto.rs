//! The timeline checked with Perfetto's own protos (see `perfetto_check`): clocks, slices that
//! end with the span they began in, structural keys kept off the counter tracks, graph units,
//! heatmaps, spans begun and ended by label.

use std::path::{Path, PathBuf};

use giving::timeline::{Channel, Graph, Heatmap};
use giving::{give, iterate, tracepoint};
use giving_instruments::Overseer;
use giving_instruments::timeline::{Trace, TraceFormat};

mod perfetto_check;
use perfetto_check::Summary;

fn traced(dir: &Path, run: impl FnOnce()) -> PathBuf {
    traced_on(dir, false, run)
}

/// Traced with events of every thread (`global`) or of the running one only.
fn traced_on(dir: &Path, global: bool, run: impl FnOnce()) -> PathBuf {
    let trace = Trace::in_dir(dir, TraceFormat::Perfetto).unwrap();
    let path = trace.path().to_path_buf();
    let run = Overseer::new().global(global).with(trace).run(run);
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

#[test]
fn graph_units_name_their_counter_tracks_unit() {
    let dir = tempfile::tempdir().unwrap();
    let path = traced(dir.path(), || {
        let memory = Graph::with_unit("Memory", "MB");
        memory.series("host").add(512.0);
        memory.series("host").add(640.0);
        Graph::new("Loss").series("Training Loss").add(0.5);
    });
    let Some(trace) = Summary::read(&path) else {
        return;
    };
    trace.assert_well_formed();
    let host = trace.counter_track("host").unwrap();
    assert_eq!(trace.track(&host)["unit_name"], "MB");
    assert_eq!(trace.values(&host), [512.0, 640.0]);
    let group = trace.track(&host)["parent"].to_string();
    assert_eq!(trace.track(&group)["name"], "Memory");
    let loss = trace.counter_track("Training Loss").unwrap();
    assert_eq!(trace.track(&loss)["unit_name"], serde_json::Value::Null);
}

#[test]
fn a_heatmap_is_a_counter_track_per_bucket_under_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = traced(dir.path(), || {
        let latency = Heatmap::new("latency", [1.0, 10.0]).with_unit("ms");
        latency.add(&[0.5, 2.0, 3.0, 50.0]);
        latency.add_i64(&[5, 20, 30]);
    });
    let Some(trace) = Summary::read(&path) else {
        return;
    };
    trace.assert_well_formed();
    let group = trace.tracks_named("latency");
    assert_eq!(group.len(), 1);
    let rows = [
        ("< 1 ms", [1.0, 0.0]),
        ("[1, 10) ms", [2.0, 1.0]),
        (">= 10 ms", [1.0, 2.0]),
    ];
    for (bucket, counts) in rows {
        let track = trace.counter_track(bucket).unwrap();
        assert_eq!(
            trace.track(&track)["parent"].to_string(),
            group[0],
            "{bucket}"
        );
        assert_eq!(trace.track(&track)["unit_name"], "count");
        assert_eq!(trace.values(&track), counts, "{bucket}");
    }
    // The sample's lists are not charted as counters of their own.
    assert_eq!(trace.counter_track("counts.0"), None);
}

#[test]
fn spans_begun_and_ended_by_label_pair_up_across_callbacks_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let ended_elsewhere = std::sync::OnceLock::new();
    let path = traced_on(dir.path(), true, || {
        let rpc = Channel::new("rpc callbacks");
        let on_send = |label: &str| rpc.begin(label);
        let on_reply = |label: &str| rpc.end(label);
        on_send("request");
        on_send("request"); // nested: the next end closes this one
        on_send("upload");
        assert!(on_reply("request"));
        assert!(on_reply("upload"));
        // Ended on another thread: drawn on the thread that began it.
        std::thread::scope(|s| {
            s.spawn(|| {
                let before = giving::Timestamp::now();
                assert!(Channel::new("rpc callbacks").end("request"));
                ended_elsewhere
                    .set((before, giving::Timestamp::now()))
                    .unwrap();
            });
        });
        assert!(!on_reply("request"));
    });
    let Some(trace) = Summary::read(&path) else {
        return;
    };
    trace.assert_well_formed();
    // Each label on a track of its own under the channel's: the upload overlaps the inner
    // request without nesting in it, which one track could not draw.
    let requests = trace.slices_named("request");
    assert_eq!(requests.len(), 2);
    assert_eq!(Summary::parents(requests[0]), Vec::<&str>::new());
    assert_eq!(Summary::parents(requests[1]), ["request"]);
    assert!(requests[1]["end"].as_u64() <= requests[0]["end"].as_u64());
    // The outer request ended when the other thread ended it, not at the end of the trace.
    let (before, after) = ended_elsewhere.get().unwrap();
    let end = requests[0]["end"].as_u64().unwrap();
    assert!(before.as_nanos() <= end && end <= after.as_nanos());
    let upload = trace.slices_named("upload");
    assert_eq!(Summary::parents(upload[0]), Vec::<&str>::new());
    assert!(upload[0]["begin"].as_u64() >= requests[1]["begin"].as_u64());
    assert!(upload[0]["end"].as_u64() >= requests[1]["end"].as_u64());
    let channel = trace.tracks_named("rpc callbacks");
    assert_eq!(channel.len(), 1);
    for (slice, label) in [(requests[0], "request"), (upload[0], "upload")] {
        let track = trace.track(&slice["track"].to_string());
        assert_eq!(track["name"], label);
        assert_eq!(track["parent"].to_string(), channel[0]);
    }
    // On the thread that began them (the channel's parent), not the one that ended one.
    let thread = trace.track(&channel[0])["parent"].to_string();
    let here = giving::timeline::ThreadInfo::current();
    assert_eq!(trace.track(&thread)["name"], &*here.name);
}
