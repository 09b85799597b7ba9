//! The `tracing` bridge: spans entered on two threads appear on two thread tracks, nested as
//! they were entered; a `tracing` event's numeric field is charted.

use std::sync::Barrier;

use giving_instruments::timeline::{GivingLayer, TraceFormat, read};
use giving_instruments::{Overseer, Trace};
use tracing_subscriber::layer::SubscriberExt;

#[test]
fn spans_of_two_threads_are_two_thread_tracks_nested_as_entered() {
    let dir = tempfile::tempdir().unwrap();
    let trace = Trace::in_dir(dir.path(), TraceFormat::Perfetto).unwrap();
    let path = trace.path().to_path_buf();
    let subscriber = tracing_subscriber::registry().with(GivingLayer::new());
    // A global scope hears every thread, as a program tracing its worker threads needs.
    let run = Overseer::new().global(true).with(trace).run(|| {
        tracing::subscriber::with_default(subscriber, || {
            let dispatch = tracing::dispatcher::get_default(Clone::clone);
            // Both threads are inside their outer span at once: the tracks overlap in time.
            let together = Barrier::new(2);
            std::thread::scope(|scope| {
                for name in ["loader", "trainer"] {
                    let (dispatch, together) = (dispatch.clone(), &together);
                    std::thread::Builder::new()
                        .name(name.to_owned())
                        .spawn_scoped(scope, move || {
                            tracing::dispatcher::with_default(&dispatch, || {
                                let _outer = tracing::info_span!("outer", thread = name).entered();
                                together.wait();
                                for batch in 0..3u64 {
                                    let _inner = tracing::info_span!("inner", batch).entered();
                                    tracing::info!(queue_depth = batch, "tick");
                                }
                            });
                        })
                        .unwrap();
                }
            });
        });
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);

    let contents = read(&path).unwrap().contents().unwrap();
    let loader = contents.track_named("loader").unwrap();
    let trainer = contents.track_named("trainer").unwrap();
    assert_ne!(loader, trainer);
    for track in [loader, trainer] {
        assert!(contents.tracks[&track].tid.is_some());
        let outer: Vec<usize> = (0..contents.slices.len())
            .filter(|i| contents.slices[*i].track == track && contents.slices[*i].name == "outer")
            .collect();
        assert_eq!(outer.len(), 1);
        let inner: Vec<usize> = (0..contents.slices.len())
            .filter(|i| contents.slices[*i].track == track && contents.slices[*i].name == "inner")
            .collect();
        assert_eq!(inner.len(), 3);
        for (batch, index) in inner.iter().enumerate() {
            assert_eq!(contents.slices[*index].parent, Some(outer[0]));
            assert_eq!(contents.slices[*index].args["batch"], batch.to_string());
        }
        let ticks = contents.instants.iter().filter(|i| i.track == track);
        assert_eq!(ticks.filter(|i| i.name == "tick").count(), 3);
    }
    let outer = contents.slices_named("outer").collect::<Vec<_>>();
    assert!(outer[0].begin < outer[1].end && outer[1].begin < outer[0].end);
    // The events' numeric field, charted: three values from each thread.
    assert_eq!(contents.counter("queue_depth").len(), 6);
}
