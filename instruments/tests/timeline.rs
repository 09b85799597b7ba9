//! The timeline: tracepoints, instants, graphs and a loop's implied slices written as a
//! Perfetto trace (and Chrome JSON), read back as a viewer would; cut traces; logs converted.

use std::path::{Path, PathBuf};

use giving::timeline::{Channel, Graph};
use giving::{give, instant, iterate, tracepoint};
use giving_instruments::log::MsgpackLog;
use giving_instruments::timeline::{Contents, TraceFormat, TraceOptions, convert, decode, read};
use giving_instruments::{Overseer, Trace};

/// A loop shaped like the models': per epoch `{epoch, lr}`, an `iterate` loop giving a loss
/// per step, a validation span, then `{epoch, accuracy}`.
fn train(epochs: u64, steps: usize) {
    let app = Channel::new("MNIST Application");
    let events = Channel::new("Instant Events");
    let loss_graph = Graph::new("Loss").series("Training Loss");
    for epoch in 0..epochs {
        let lr = 0.1 / (epoch + 1) as f64;
        give!(epoch, lr);
        instant!(events, "Epoch {epoch} begin");
        let _epoch_span = tracepoint!(app, "Epoch {epoch}");
        for (i, _batch) in iterate("train", 0..steps)
            .batch_size(32)
            .window(4)
            .enumerate()
        {
            let loss = 1.0 / (i + 1) as f64;
            give!(epoch, loss);
            loss_graph.add(loss);
        }
        let validation = tracepoint!(Channel::thread(), "validation");
        drop(validation);
        give!(epoch, accuracy = 0.5);
    }
}

fn traced(dir: &Path, format: TraceFormat, run: impl FnOnce()) -> PathBuf {
    let trace = Trace::in_dir(dir, format).unwrap();
    let path = trace.path().to_path_buf();
    let run = Overseer::new().with(trace).run(run);
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    path
}

/// The run thread's track: the thread track of the thread that ran the Overseer.
fn run_track(contents: &Contents) -> u64 {
    let tid = giving::timeline::ThreadInfo::current().tid;
    contents.thread_track(i32::try_from(tid).unwrap()).unwrap()
}

#[test]
fn steps_nest_in_their_loop_window_and_epoch_on_the_run_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = traced(dir.path(), TraceFormat::Perfetto, || train(2, 10));
    let decoded = read(&path).unwrap();
    assert_eq!(decoded.cut_at, None);
    let contents = decoded.contents().unwrap();
    let main = run_track(&contents);

    let steps: Vec<usize> = (0..contents.slices.len())
        .filter(|i| contents.slices[*i].name == "step")
        .collect();
    assert_eq!(steps.len(), 20);
    for (n, index) in steps.iter().enumerate() {
        let step = &contents.slices[*index];
        assert_eq!(step.track, main);
        assert_eq!(step.args["step"], (n % 10).to_string());
        assert_eq!(step.args["batch"], "32");
        let chain: Vec<&str> = contents
            .ancestors(*index)
            .map(|s| s.name.as_str())
            .collect();
        let epoch = format!("epoch {}", n / 10);
        assert_eq!(chain, ["sync window", "train", epoch.as_str()], "step {n}");
        let parent = contents.ancestors(*index).last().unwrap();
        assert!(parent.begin <= step.begin && step.end <= parent.end);
    }
    // Windows of 4 steps: 4, 4, 2 per epoch.
    assert_eq!(contents.slices_named("sync window").count(), 6);
    let validation: Vec<_> = contents.slices_named("validation").collect();
    assert_eq!(validation.len(), 2);
    assert!(validation.iter().all(|v| v.track == main));
    let validation = contents
        .slices
        .iter()
        .position(|s| s.name == "validation")
        .unwrap();
    assert_eq!(
        contents.ancestors(validation).next().unwrap().name,
        "epoch 0"
    );

    // One loss per step, a counter per numeric key, a graph's series in its group.
    assert_eq!(contents.counter("loss").len(), 20);
    assert_eq!(contents.counter("accuracy").len(), 2);
    assert_eq!(contents.counter("lr").len(), 2);
    assert!(contents.counter("step").is_empty() && contents.counter("batch").is_empty());
    let series = contents.track_named("Training Loss").unwrap();
    let group = contents.tracks[&series].parent.unwrap();
    assert_eq!(contents.tracks[&group].name, "Loss");
    assert_eq!(contents.counters[&series].len(), 20);

    // Channels are tracks of their own on the thread; instants land on theirs.
    let app = contents.track_named("MNIST Application").unwrap();
    assert_eq!(contents.tracks[&app].parent, Some(main));
    assert_eq!(contents.slices.iter().filter(|s| s.track == app).count(), 2);
    let events = contents.track_named("Instant Events").unwrap();
    let begins: Vec<&str> = contents
        .instants
        .iter()
        .filter(|i| i.track == events)
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(begins, ["Epoch 0 begin", "Epoch 1 begin"]);
    // A learning-rate change is an instant on the run thread.
    let lr: Vec<&str> = contents
        .instants
        .iter()
        .filter(|i| i.track == main)
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(lr, ["lr 0.1", "lr 0.05"]);
}

#[test]
fn spans_land_on_the_thread_that_entered_them() {
    let dir = tempfile::tempdir().unwrap();
    let trace = Trace::in_dir(dir.path(), TraceFormat::Perfetto).unwrap();
    let path = trace.path().to_path_buf();
    // A global scope hears every thread.
    let run = Overseer::new().global(true).with(trace).run(|| {
        let _main = Channel::thread().tracepoint("on main");
        std::thread::Builder::new()
            .name("worker".into())
            .spawn(|| {
                let _outer = Channel::thread().tracepoint("on worker");
                let _inner = Channel::thread().tracepoint("inner");
            })
            .unwrap()
            .join()
            .unwrap();
    });
    assert!(run.problems.is_empty());
    let contents = read(&path).unwrap().contents().unwrap();
    let main = run_track(&contents);
    assert_eq!(contents.slices_named("on main").next().unwrap().track, main);
    let worker = contents.track_named("worker").unwrap();
    assert_ne!(worker, main);
    assert!(contents.tracks[&worker].tid.is_some());
    let inner = contents
        .slices
        .iter()
        .position(|s| s.name == "inner")
        .unwrap();
    assert_eq!(contents.slices[inner].track, worker);
    assert_eq!(contents.ancestors(inner).next().unwrap().name, "on worker");
}

#[test]
fn an_unfinished_span_is_closed_at_the_end_so_slices_balance() {
    let dir = tempfile::tempdir().unwrap();
    let path = traced(dir.path(), TraceFormat::Perfetto, || {
        let span = tracepoint!(Channel::thread(), "leaked");
        std::mem::forget(span);
        for _ in iterate("train", 0..3) {}
    });
    let contents = read(&path).unwrap().contents().unwrap();
    let leaked = contents.slices_named("leaked").next().unwrap();
    assert!(leaked.end >= leaked.begin);
    assert_eq!(contents.slices_named("step").count(), 3);
}

#[test]
fn a_cut_trace_reads_up_to_its_last_complete_packet() {
    let dir = tempfile::tempdir().unwrap();
    let path = traced(dir.path(), TraceFormat::Perfetto, || train(2, 25));
    let bytes = std::fs::read(&path).unwrap();
    let whole = decode(&bytes).unwrap();
    assert!(whole.packets.len() > 200);
    // Packet boundaries: where each complete prefix ends.
    let mut ends = Vec::new();
    let mut offset = 0;
    for packet in &whole.packets {
        let len = prost::Message::encoded_len(packet);
        offset += 1 + prost::encoding::encoded_len_varint(len as u64) + len;
        ends.push(offset);
    }
    assert_eq!(offset, bytes.len());
    // Offsets from a fixed-seed xorshift: random, and the same on every run.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..300 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let cut = (state % bytes.len() as u64) as usize;
        let decoded = decode(&bytes[..cut]).unwrap();
        let complete = ends.iter().take_while(|end| **end <= cut).count();
        assert_eq!(decoded.packets.len(), complete, "cut at {cut}");
        assert_eq!(decoded.packets[..], whole.packets[..complete]);
        let at_boundary = cut == 0 || ends.contains(&cut);
        assert_eq!(decoded.cut_at.is_none(), at_boundary, "cut at {cut}");
    }
}

#[test]
fn bytes_that_are_not_a_trace_are_refused_with_their_offset() {
    let error = decode(b"\x12\x03abc").unwrap_err();
    assert!(error.to_string().contains("at byte 0"), "{error}");
    assert!(error.to_string().contains("not a trace packet"), "{error}");
    let error = decode(&[0x0A; 64]).unwrap_err();
    assert!(error.to_string().contains("trace damaged"), "{error}");
}

#[test]
fn json_traces_balance_and_carry_counters_and_thread_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = traced(dir.path(), TraceFormat::Json, || train(1, 8));
    assert_eq!(path.extension().unwrap(), "json");
    let text = std::fs::read_to_string(&path).unwrap();
    let events: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let phase = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    assert_eq!(phase("B"), phase("E"));
    let steps = events
        .iter()
        .filter(|e| e["ph"] == "B" && e["name"] == "step");
    assert_eq!(steps.count(), 8);
    let losses = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "loss");
    assert_eq!(losses.count(), 8);
    let graph = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "Loss");
    assert!(
        graph
            .clone()
            .all(|e| e["args"]["Training Loss"].is_number())
    );
    assert_eq!(graph.count(), 8);
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "M" && e["name"] == "thread_name")
    );
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "i" && e["name"] == "Epoch 0 begin")
    );
    // Cut after any complete line, the array without its `]` (and with a trailing comma) is
    // what viewers accept; completed, it is JSON again.
    let lines: Vec<&str> = text.lines().collect();
    for cut in 2..lines.len() {
        let head = lines[..cut].join("\n");
        let completed = format!("{}]", head.trim_end_matches(','));
        let events: Vec<serde_json::Value> = serde_json::from_str(&completed).unwrap();
        assert_eq!(events.len(), cut - 1);
    }
}

#[test]
fn logs_convert_into_one_trace_with_a_process_each() {
    let dir = tempfile::tempdir().unwrap();
    let mut logs = Vec::new();
    for _ in 0..2 {
        let log = MsgpackLog::in_dir(dir.path()).unwrap();
        logs.push(log.path().to_path_buf());
        let run = Overseer::new().with(log).run(|| train(1, 6));
        assert!(run.problems.is_empty());
    }
    let out = dir.path().join("merged.pftrace");
    let done = convert(&logs, &out, TraceFormat::Perfetto).unwrap();
    assert!(done.cut.is_empty() && done.damaged == 0);
    let contents = read(&out).unwrap().contents().unwrap();
    let processes: Vec<_> = contents
        .tracks
        .values()
        .filter(|t| t.pid.is_some() && t.tid.is_none())
        .collect();
    assert_eq!(processes.len(), 2);
    assert_eq!(contents.slices_named("step").count(), 12);
    // Two processes, two loss counters: one per process, each with its six values.
    let losses: Vec<_> = contents
        .tracks
        .iter()
        .filter(|(_, t)| t.counter && t.name == "loss")
        .map(|(uuid, _)| contents.counters[uuid].len())
        .collect();
    assert_eq!(losses, [6, 6]);
    // The second run began after the first ended: their times are absolute.
    let epochs: Vec<_> = contents.slices_named("epoch 0").collect();
    assert_eq!(epochs.len(), 2);
    assert!(epochs[0].end <= epochs[1].begin || epochs[1].end <= epochs[0].begin);

    // The output is never overwritten; a missing log is named.
    let again = convert(&logs, &out, TraceFormat::Perfetto).unwrap_err();
    assert!(again.to_string().contains("cannot create"), "{again}");
    let missing = dir.path().join("missing.msgpack");
    let error = convert(
        &[missing],
        &dir.path().join("x.pftrace"),
        TraceFormat::Perfetto,
    );
    assert!(error.unwrap_err().to_string().contains("missing.msgpack"));
    assert!(!dir.path().join("x.pftrace").exists());
}

#[test]
fn trace_options_read_like_pvti_options() {
    let options = TraceOptions::parse(r#"{"enable": true, "directory": "d", "format": "json"}"#);
    let options = options.unwrap();
    assert!(options.enable);
    assert_eq!(options.format, TraceFormat::Json);
    assert!(
        !TraceOptions::parse(r#"{"enable": "false"}"#)
            .unwrap()
            .enable
    );
    for (text, expected) in [
        ("enable", "not JSON"),
        ("[1]", "not a JSON object"),
        (r#"{"enable": "yes"}"#, "`enable` cannot be \"yes\""),
        (r#"{"dir": "x"}"#, "unknown option `dir`"),
        (r#"{"format": "xml"}"#, "unknown trace format `xml`"),
    ] {
        let error = TraceOptions::parse(text).unwrap_err().to_string();
        assert!(error.contains("GIVING_TRACE"), "{error}");
        assert!(error.contains(expected), "{text}: {error}");
    }
}

#[test]
fn maps_are_searched_for_counters_and_problems_and_wraps_are_drawn() {
    use giving::Value;
    use std::collections::BTreeMap;

    let dir = tempfile::tempdir().unwrap();
    let path = traced(dir.path(), TraceFormat::Perfetto, || {
        let _block = giving::wrap!("warmup");
        for load in [0.25, 0.5] {
            let memory = Value::List(vec![Value::U64(100), Value::U64(200)]);
            let cpudata: BTreeMap<String, Value> = [
                ("load".to_owned(), Value::F64(load)),
                ("memory".to_owned(), memory),
            ]
            .into_iter()
            .collect();
            let process: BTreeMap<String, Value> = [
                ("pid".to_owned(), Value::U64(7)),
                ("rss_mb".to_owned(), Value::F64(9.0)),
            ]
            .into_iter()
            .collect();
            give!(cpudata = Value::Map(cpudata), process = Value::Map(process));
        }
        give!(problem = "sampler failed", instrument = "cpu-monitor");
        give!(note = "not a number", flag = true);
        give!(weights = Value::List(vec![Value::F64(0.5); 1000]));
    });
    let contents = read(&path).unwrap().contents().unwrap();
    let load: Vec<f64> = contents
        .counter("cpudata.load")
        .iter()
        .map(|v| v.1)
        .collect();
    assert_eq!(load, [0.25, 0.5]);
    assert_eq!(contents.counter("cpudata.memory.0").len(), 2);
    assert_eq!(contents.counter("cpudata.memory.1").len(), 2);
    assert_eq!(contents.counter("process.rss_mb").len(), 2);
    assert!(contents.track_named("process.pid").is_none());
    assert!(contents.track_named("note").is_none() && contents.track_named("flag").is_none());
    assert!(contents.track_named("weights.0").is_none());
    let problems = contents.track_named("problems").unwrap();
    let problem = contents
        .instants
        .iter()
        .find(|i| i.track == problems)
        .unwrap();
    assert_eq!(problem.name, "sampler failed");
    let warmup = contents.slices_named("warmup").next().unwrap();
    assert_eq!(warmup.track, run_track(&contents));
}
