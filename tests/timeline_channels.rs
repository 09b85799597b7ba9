//! Channels switched at run time (libpvti's enable/disable/list and its `channels` option),
//! spans begun and ended by label, graph units and heatmaps: the events they give. One test
//! in its own process, since channel switches are process-wide.

use futures::StreamExt;
use giving::timeline::{
    Channel, Graph, Heatmap, disable_channel, enable_channel, enable_only_channels, list_channels,
};
use giving::vocab::{CounterSample, HeatmapSample, SpanEvent, SpanPhase, keys};
use giving::{Event, Given, instant, tracepoint};

/// The events `run` gives, on any thread (a span may end on another thread than its begin).
fn events_of(run: impl FnOnce()) -> Vec<Event> {
    let gv = Given::global();
    let events = gv.stream();
    run();
    gv.finish().unwrap();
    futures::executor::block_on(events.collect())
}

fn names(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| {
            let name = e.get(keys::SPAN_BEGIN).or(e.get(keys::INSTANT))?;
            Some(name.as_str()?.to_owned())
        })
        .collect()
}

#[test]
fn channels_switch_by_name_and_labels_pair_spans() {
    // Disabled channels give nothing; the thread's own track always gives.
    let io = Channel::new("io");
    let compute = Channel::new("compute");
    let events = events_of(|| {
        disable_channel("io");
        let _a = tracepoint!(io, "read");
        instant!(io, "eof");
        io.instant("eof again");
        io.begin("by label");
        let _b = tracepoint!(compute, "matmul");
        let _c = tracepoint!(Channel::thread(), "own");
        Channel::thread().disable();
    });
    assert_eq!(names(&events), ["matmul", "own"]);
    assert!(!io.is_enabled() && Channel::thread().is_enabled());
    assert!(list_channels().contains(&("io".to_owned(), false)));

    // A span open when its channel is disabled still ends.
    enable_channel("io");
    let events = events_of(|| {
        let read = tracepoint!(io, "read");
        io.disable();
        drop(read);
    });
    let phases: Vec<SpanPhase> = events
        .iter()
        .filter_map(|e| SpanEvent::of(e).map(|s| s.phase))
        .collect();
    assert_eq!(phases, [SpanPhase::Begin, SpanPhase::End]);

    // libpvti's `channels` option: only those listed, also for channels named later.
    enable_only_channels(Some(&["compute", "later kept"]));
    let events = events_of(|| {
        let later = Channel::new("later dropped");
        instant!(later, "dropped");
        instant!(Channel::new("later kept"), "kept");
        instant!(io, "io is off");
        instant!(compute, "compute is on");
    });
    assert_eq!(names(&events), ["kept", "compute is on"]);
    let listed = list_channels();
    for (name, enabled) in [("io", false), ("compute", true), ("later dropped", false)] {
        assert!(listed.contains(&(name.to_owned(), enabled)), "{listed:?}");
    }
    enable_only_channels(None::<&[&str]>);
    assert!(list_channels().iter().all(|(_, enabled)| *enabled));

    // Begin and end by label, across closures and threads; the latest begin of a label ends
    // first; the end carries the begin's id and thread.
    let rpc = Channel::new("rpc");
    let events = events_of(|| {
        let on_send = |label: &str| rpc.begin(label);
        on_send("request");
        on_send("request");
        let ended = std::thread::scope(|s| s.spawn(|| rpc.end("request")).join().unwrap());
        assert!(ended);
        assert!(rpc.end("request"));
        assert!(!rpc.end("request"));
    });
    let spans: Vec<SpanEvent<'_>> = events.iter().filter_map(SpanEvent::of).collect();
    assert_eq!(spans.len(), 4);
    assert!(spans.iter().all(|s| s.by_label && s.channel == Some("rpc")));
    assert!(spans.iter().all(|s| s.tid == spans[0].tid));
    assert_eq!(
        spans.iter().map(|s| (s.phase, s.id)).collect::<Vec<_>>(),
        [
            (SpanPhase::Begin, spans[0].id),
            (SpanPhase::Begin, spans[1].id),
            (SpanPhase::End, spans[1].id),
            (SpanPhase::End, spans[0].id),
        ]
    );

    // Graph units and heatmaps.
    let events = events_of(|| {
        Graph::with_unit("Memory", "MB").series("host").add(5.0);
        Graph::with_unit("Loss", "").series("train").add(0.5);
        Heatmap::new("latency", [1.0, 10.0])
            .with_unit("ms")
            .add(&[0.1, 2.0, 20.0, 30.0]);
    });
    let samples: Vec<CounterSample<'_>> = events.iter().filter_map(CounterSample::of).collect();
    assert_eq!(samples[0].unit, Some("MB"));
    assert_eq!(samples[1].unit, None);
    let heat = HeatmapSample::of(&events[2]).unwrap();
    assert_eq!(heat.name, "latency");
    assert_eq!(heat.buckets, ["< 1", "[1, 10)", ">= 10"]);
    assert_eq!((heat.counts, heat.unit), (vec![1, 1, 2], Some("ms")));
}
