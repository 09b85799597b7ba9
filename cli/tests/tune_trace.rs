//! `giving tune --trace` read with Perfetto's own protos (issue 30, item 6): the training's
//! last epoch ends with the training, the tuner's validation has a name of its own, the
//! `iteration` index is no counter track, and every timestamp names its clock.

mod support;

#[path = "../../instruments/tests/perfetto_check/mod.rs"]
mod perfetto_check;

use perfetto_check::Summary;
use support::giving_in;

#[test]
fn a_tuning_trace_closes_its_epochs_and_names_its_spans_apart() {
    let dir = tempfile::tempdir().unwrap();
    // The CLI tune test's tiny network, trained here (empty cache), with the P1 model so
    // that the session has its validation stage.
    #[rustfmt::skip]
    let args = [
        "tune", "vgg", "--channels", "4,4,8,8", "--hidden", "16", "--epochs", "2",
        "--train-size", "128", "--tune-size", "40", "--test-size", "40", "--max-iter", "12",
        "--population", "6", "--take-best-n", "3", "--repeats", "1", "--every", "0",
        "--qos-model", "p1", "--cache", "cache", "--out", "out", "--trace", "tune.pftrace",
    ];
    let (ok, text) = giving_in(&args, dir.path());
    assert!(ok, "{text}");
    let Some(trace) = Summary::read(&dir.path().join("tune.pftrace")) else {
        return;
    };
    // No slice left open, every end matched, every timestamp with its clock.
    trace.assert_well_formed();

    let training = trace.slices_named("training");
    assert_eq!(training.len(), 1);
    for epoch in ["epoch 0", "epoch 1"] {
        let slices = trace.slices_named(epoch);
        assert_eq!(slices.len(), 1, "{epoch}");
        assert_eq!(Summary::parents(slices[0]), ["training"], "{epoch}");
        assert!(slices[0]["end"].as_u64() <= training[0]["end"].as_u64());
    }
    let tuning = trace.slices_named("tuning");
    assert_eq!(tuning.len(), 1);
    assert!(training[0]["end"].as_u64() <= tuning[0]["begin"].as_u64());
    assert_eq!(Summary::parents(tuning[0]), Vec::<&str>::new());
    for name in ["tune", "qos_model_init", "qos validation", "measurement"] {
        let slices = trace.slices_named(name);
        assert_eq!(slices.len(), 1, "{name}");
        assert_eq!(Summary::parents(slices[0]), ["tuning"], "{name}");
    }
    // The training's validations, one per epoch, and none in the tuning.
    let validations = trace.slices_named("validation");
    assert_eq!(validations.len(), 2);
    assert!(
        validations
            .iter()
            .all(|v| Summary::parents(v)[0] == "training")
    );

    assert_eq!(trace.counter_track("iteration"), None);
    let qos = trace.counter_track("qos").unwrap();
    assert_eq!(trace.values(&qos).len(), 12);
}
