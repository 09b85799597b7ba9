//! From events to timeline records: which track each event goes on, and the slices that
//! `iterate` and the models' loops imply (epochs, loops, sync windows, steps). Shared by the
//! live sink and the conversion of logs; the encoders (Perfetto protobuf, Chrome JSON) only
//! write what this decides.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use giving::vocab::{
    CounterSample, HeatmapSample, InstantEvent, ProgressEvent, SpanEvent, SpanPhase, StepEvent,
    keys,
};
use giving::{Event, Timestamp, Value, WrapMark, WrapStep};

/// A process of the timeline: the live run, or one log of a merge.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Process {
    /// Index of the process in its trace (keeps two logs with one pid apart).
    pub(crate) index: u32,
    pub(crate) pid: u32,
    pub(crate) name: String,
}

/// A track of slices and instants: a thread's own track, or a channel on a thread, or the
/// track of a label (spans begun and ended by label) under either.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Track {
    pub(crate) process: u32,
    pub(crate) tid: u64,
    pub(crate) thread_name: Arc<str>,
    pub(crate) channel: Option<Arc<str>>,
    /// The label of spans begun and ended by label: their own track, since spans of two
    /// labels may overlap without nesting.
    pub(crate) lane: Option<Arc<str>>,
}

/// A counter track: a numeric key, a series of a graph, or a bucket of a heatmap.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Counter {
    pub(crate) process: u32,
    pub(crate) group: Option<Arc<str>>,
    pub(crate) name: String,
    /// The values' unit (Perfetto's `CounterDescriptor.unit_name`).
    pub(crate) unit: Option<Arc<str>>,
}

/// The unit of a heatmap's bucket tracks: their values count the values in the bucket.
const HEATMAP_COUNT_UNIT: &str = "count";

/// An argument of a slice or instant.
pub(crate) type Args = Vec<(String, Value)>;

/// What an encoder writes. Tracks are declared by the encoder the first time it sees them.
pub(crate) trait Output {
    /// A process starts (before any of its records).
    fn process(&mut self, process: &Process);
    /// A slice opens on `track`.
    fn begin(&mut self, at: Timestamp, track: &Track, name: &str, args: &Args);
    /// The innermost open slice of `track` closes.
    fn end(&mut self, at: Timestamp, track: &Track);
    /// An instant event on `track`.
    fn instant(&mut self, at: Timestamp, track: &Track, name: &str, args: &Args);
    /// A counter value.
    fn counter(&mut self, at: Timestamp, counter: &Counter, value: f64);
}

/// Keys that are never charted: they structure the run (steps, epochs, spans), they are not
/// measurements of it.
const NOT_COUNTERS: &[&str] = &[
    keys::TASK,
    keys::STEP,
    keys::BATCH,
    keys::PROGRESS,
    keys::SYNCED,
    keys::UNITS,
    keys::GLOBAL_STEP,
    keys::ITERATION,
    keys::EPOCH,
    keys::EPOCHS,
    keys::TOTAL_STEPS,
    keys::PROBLEM,
    keys::INSTRUMENT,
    keys::WRAP,
    keys::SPAN_BEGIN,
    keys::SPAN_END,
    keys::SPAN_ID,
    keys::INSTANT,
    keys::CHANNEL,
    keys::TID,
    keys::THREAD_NAME,
    keys::ARGS,
    keys::GRAPH,
    keys::SERIES,
    keys::VALUE,
];

/// Leaves of maps never charted (a process id is not a measurement).
const NOT_COUNTER_LEAVES: &[&str] = &["pid"];

/// How deep maps and lists are searched for numbers (`gpudata.0.memory.0` is 3 levels).
const MAX_DEPTH: usize = 4;
/// Longer lists and larger maps are data (a tensor's values, a histogram), not readings: they
/// are not charted, rather than making a track per element.
const MAX_LIST: usize = 16;
/// See [`MAX_LIST`].
const MAX_MAP: usize = 64;

/// The channel of the instants made from `{problem, instrument}` events.
const PROBLEMS_CHANNEL: &str = "problems";

/// One process's timeline being built: the run thread's implied slices and the open spans.
pub(crate) struct Recorder {
    process: u32,
    /// The thread the loop runs on: events without a `tid` (`iterate`'s, the models') go there.
    run_thread: Track,
    /// The epoch open on the run thread, and when its last event was.
    epoch: Option<Value>,
    /// The loop (`iterate` task) open inside the epoch.
    task: Option<Arc<str>>,
    /// Whether a sync window is open inside the loop.
    window: bool,
    /// Where the next step begins: the end of the previous one, or the loop's start.
    boundary: Option<Timestamp>,
    /// The latest time of the run thread's events, where open slices close at the end.
    last: Timestamp,
    /// Spans begun and not ended: their tracks, so that ends land where begins did.
    spans: HashMap<u64, Track>,
    /// Of the spans open on the run thread's own track: which implied slices were open when
    /// each began. Those opened inside a span end with it (a slice cannot outlive the slice
    /// it nests in, and a training's last epoch ends with the span around the training).
    enclosing: HashMap<u64, Implied>,
    /// `wrap!` blocks open on the run thread.
    wraps: HashMap<u64, ()>,
    /// The last learning rate seen (a change is an instant).
    lr: Option<f64>,
}

impl Recorder {
    /// A recorder for `process`, whose loop runs on thread `tid` named `thread_name`.
    pub(crate) fn new(process: &Process, tid: u64, thread_name: &str) -> Self {
        Self {
            process: process.index,
            run_thread: Track {
                process: process.index,
                tid,
                thread_name: Arc::from(thread_name),
                channel: None,
                lane: None,
            },
            epoch: None,
            task: None,
            window: false,
            boundary: None,
            last: Timestamp::default(),
            spans: HashMap::new(),
            enclosing: HashMap::new(),
            wraps: HashMap::new(),
            lr: None,
        }
    }

    /// Records one event.
    pub(crate) fn event(&mut self, event: &Event, out: &mut dyn Output) {
        let at = event.time();
        if let Some(span) = SpanEvent::of(event) {
            self.span(event, &span, out);
            return;
        }
        if let Some(sample) = CounterSample::of(event) {
            let counter = Counter {
                process: self.process,
                group: (!sample.graph.is_empty()).then(|| Arc::from(sample.graph)),
                name: sample.series.to_owned(),
                unit: sample.unit.map(Arc::from),
            };
            out.counter(at, &counter, sample.value);
            return;
        }
        if let Some(heatmap) = HeatmapSample::of(event) {
            self.heatmap(at, &heatmap, out);
            return;
        }
        if let Some(instant) = InstantEvent::of(event) {
            let track = self.track(instant.tid, instant.thread_name, instant.channel);
            out.instant(at, &track, instant.name, &args_of(event));
        }
        if let Some(mark) = WrapMark::of(event) {
            self.wrap(at, &mark, out);
        }
        if let Some(problem) = event.get(keys::PROBLEM).and_then(Value::as_str) {
            let mut track = self.run_thread.clone();
            track.channel = Some(Arc::from(PROBLEMS_CHANNEL));
            let instrument = event.get(keys::INSTRUMENT).cloned().unwrap_or(Value::Null);
            let args = vec![(keys::INSTRUMENT.to_owned(), instrument)];
            out.instant(at, &track, problem, &args);
        }
        self.implied(event, out);
        self.marks(event, out);
        self.counters(event, out);
    }

    /// Instants for what changes the run: the learning rate (its first value too), and early
    /// stop's last count (the stop it asks for).
    fn marks(&mut self, event: &Event, out: &mut dyn Output) {
        let at = event.time();
        if let Some(lr) = event
            .get(keys::LR)
            .and_then(|lr| read(lr))
            .and_then(Value::as_f64)
            && self.lr != Some(lr)
        {
            self.lr = Some(lr);
            let args = vec![(keys::LR.to_owned(), Value::F64(lr))];
            out.instant(at, &self.run_thread, &format!("lr {lr}"), &args);
        }
        if let Some(progress) = ProgressEvent::of(event)
            && progress.task == keys::EARLY_STOP_TASK
            && progress.done >= progress.total
        {
            let args = vec![(keys::PROGRESS.to_owned(), Value::U64(progress.done))];
            out.instant(at, &self.run_thread, "early stop", &args);
        }
    }

    /// Closes what is still open: the run thread's implied slices at its last event, spans
    /// whose end never came at the same time (so that every begin has its end).
    pub(crate) fn finish(&mut self, out: &mut dyn Output) {
        let last = self.last;
        self.enclosing.clear();
        let mut open: Vec<(u64, Track)> = self.spans.drain().collect();
        // Inner spans began later: close them first (ids grow in the order spans begin).
        open.sort_by_key(|(id, _)| std::cmp::Reverse(*id));
        for (_, track) in open {
            out.end(last, &track);
        }
        for _ in self.wraps.drain() {
            out.end(last, &self.run_thread);
        }
        self.close_task(last, out);
        if self.epoch.take().is_some() {
            out.end(last, &self.run_thread);
        }
    }

    fn track(&self, tid: Option<u64>, name: Option<&str>, channel: Option<&str>) -> Track {
        let mut track = match tid {
            Some(tid) if tid != self.run_thread.tid => Track {
                process: self.process,
                tid,
                thread_name: Arc::from(name.unwrap_or("thread")),
                channel: None,
                lane: None,
            },
            _ => self.run_thread.clone(),
        };
        track.channel = channel.map(Arc::from);
        track
    }

    fn span(&mut self, event: &Event, span: &SpanEvent<'_>, out: &mut dyn Output) {
        let at = event.time();
        let mut track = self.track(span.tid, span.thread_name, span.channel);
        if span.by_label {
            track.lane = Some(Arc::from(span.name));
        }
        let previous = self.last;
        if track.tid == self.run_thread.tid {
            self.last = self.last.max(at);
        }
        match span.phase {
            SpanPhase::Begin => {
                out.begin(at, &track, span.name, &args_of(event));
                if track == self.run_thread {
                    self.enclosing.insert(span.id, self.implied_open());
                }
                self.spans.insert(span.id, track);
            }
            // An end whose begin was never seen (it began before the trace) is dropped, so
            // that begins and ends balance.
            SpanPhase::End => {
                if let Some(track) = self.spans.remove(&span.id) {
                    if let Some(before) = self.enclosing.remove(&span.id) {
                        // What opened inside the span ends at its last event, before it.
                        self.close_opened_since(before, previous.min(at), out);
                    }
                    out.end(at, &track);
                }
            }
        }
    }

    /// A heatmap sample: a counter value per bucket, on the bucket's track in the heatmap's
    /// group (Perfetto draws no heatmap; the buckets' tracks, lowest first, are its rows).
    fn heatmap(&mut self, at: Timestamp, heatmap: &HeatmapSample<'_>, out: &mut dyn Output) {
        let group: Arc<str> = Arc::from(heatmap.name);
        let unit: Arc<str> = Arc::from(HEATMAP_COUNT_UNIT);
        for (bucket, count) in heatmap.buckets.iter().zip(&heatmap.counts) {
            let name = match heatmap.unit {
                Some(unit) => format!("{bucket} {unit}"),
                None => (*bucket).to_owned(),
            };
            let counter = Counter {
                process: self.process,
                group: Some(group.clone()),
                name,
                unit: Some(unit.clone()),
            };
            out.counter(at, &counter, *count as f64);
        }
    }

    /// Which implied slices are open now.
    fn implied_open(&self) -> Implied {
        Implied {
            epoch: self.epoch.is_some(),
            task: self.task.is_some(),
            window: self.window,
        }
    }

    /// Ends, at `at`, the implied slices open now that were not open at `before`: innermost
    /// first (window, loop, epoch).
    fn close_opened_since(&mut self, before: Implied, at: Timestamp, out: &mut dyn Output) {
        let now = self.implied_open();
        if now.epoch && !before.epoch {
            self.close_task(at, out);
            out.end(at, &self.run_thread);
            self.epoch = None;
        } else if now.task && !before.task {
            self.close_task(at, out);
        } else if now.window && !before.window {
            out.end(at, &self.run_thread);
            self.window = false;
        }
    }

    fn wrap(&mut self, at: Timestamp, mark: &WrapMark<'_>, out: &mut dyn Output) {
        self.last = self.last.max(at);
        match mark.step {
            WrapStep::Begin => {
                out.begin(at, &self.run_thread, mark.name, &Vec::new());
                self.wraps.insert(mark.id, ());
            }
            WrapStep::End => {
                if self.wraps.remove(&mark.id).is_some() {
                    out.end(at, &self.run_thread);
                }
            }
        }
    }

    /// The slices the loop's own events imply on the run thread: an epoch from one `epoch`
    /// value to the next, a loop from `iterate`'s start to its last step, its sync windows,
    /// and each step from the end of the previous one (or the loop's start) to its own event,
    /// which `iterate` gives when the step ends.
    fn implied(&mut self, event: &Event, out: &mut dyn Output) {
        let at = event.time();
        let step = StepEvent::of(event);
        let progress = ProgressEvent::of(event);
        if let Some(epoch) = event.get(keys::EPOCH) {
            self.epoch_event(at, epoch, out);
        }
        match (step, progress) {
            (Some(step), _) => self.step(at, &step, out),
            (None, Some(progress))
                if progress.done == 0 && progress.task != keys::EARLY_STOP_TASK =>
            {
                self.last = self.last.max(at);
                self.close_task(at, out);
                self.open_task(at, progress.task, out);
            }
            _ => {}
        }
    }

    fn epoch_event(&mut self, at: Timestamp, epoch: &Value, out: &mut dyn Output) {
        if self.epoch.as_ref() != Some(epoch) {
            // The previous epoch (its validation included) ends at its last event, before this
            // one: an end and a begin at one instant could be ordered either way by a viewer.
            let last = self.last;
            self.close_task(last, out);
            if self.epoch.is_some() {
                out.end(last, &self.run_thread);
            }
            let name = format!("epoch {epoch}");
            let args = vec![(keys::EPOCH.to_owned(), epoch.clone())];
            out.begin(at, &self.run_thread, &name, &args);
            self.epoch = Some(epoch.clone());
        }
        self.last = self.last.max(at);
    }

    fn open_task(&mut self, at: Timestamp, task: &str, out: &mut dyn Output) {
        let name = if task.is_empty() { "loop" } else { task };
        let args = vec![(keys::TASK.to_owned(), Value::from(task))];
        out.begin(at, &self.run_thread, name, &args);
        self.task = Some(Arc::from(task));
        self.boundary = Some(at);
    }

    /// Ends the open window and loop at `at`.
    fn close_task(&mut self, at: Timestamp, out: &mut dyn Output) {
        if self.window {
            out.end(at, &self.run_thread);
            self.window = false;
        }
        if self.task.take().is_some() {
            out.end(at, &self.run_thread);
        }
        self.boundary = None;
    }

    fn step(&mut self, at: Timestamp, step: &StepEvent<'_>, out: &mut dyn Output) {
        if self.task.as_deref() != Some(step.task) {
            // A loop whose start event was not seen: it starts with this step's end.
            self.close_task(self.last, out);
            self.open_task(at, step.task, out);
        }
        let begin = self.boundary.unwrap_or(at).min(at);
        if !self.window {
            out.begin(begin, &self.run_thread, "sync window", &Vec::new());
            self.window = true;
        }
        let mut args = vec![(keys::STEP.to_owned(), Value::U64(step.step))];
        if let Some(batch) = step.batch {
            args.push((keys::BATCH.to_owned(), Value::U64(batch)));
        }
        if step.synced {
            args.push((keys::SYNCED.to_owned(), Value::Bool(true)));
        }
        out.begin(begin, &self.run_thread, "step", &args);
        out.end(at, &self.run_thread);
        self.boundary = Some(at);
        self.last = self.last.max(at);
        if step.synced {
            out.end(at, &self.run_thread);
            self.window = false;
        }
        if matches!(step.progress, Some((done, total)) if done >= total) {
            self.close_task(at, out);
        }
    }

    /// A counter value for every numeric field (maps and lists searched for numbers), lazy
    /// values read here — on the sink's thread, never the loop's.
    fn counters(&mut self, event: &Event, out: &mut dyn Output) {
        for (key, value) in event.iter() {
            if key.starts_with('$') || NOT_COUNTERS.contains(&key) {
                continue;
            }
            let mut name = key.to_owned();
            self.numbers(event.time(), &mut name, value, 0, out);
        }
    }

    fn numbers(
        &mut self,
        at: Timestamp,
        name: &mut String,
        value: &Value,
        depth: usize,
        out: &mut dyn Output,
    ) {
        let mut nested = |name: &mut String, part: &str, value: &Value, out: &mut dyn Output| {
            if depth >= MAX_DEPTH || NOT_COUNTER_LEAVES.contains(&part) {
                return;
            }
            let len = name.len();
            name.push('.');
            name.push_str(part);
            self.numbers(at, name, value, depth + 1, out);
            name.truncate(len);
        };
        match read(value) {
            Some(Value::F64(x)) => self.value(at, name, *x, out),
            Some(Value::I64(x)) => self.value(at, name, *x as f64, out),
            Some(Value::U64(x)) => self.value(at, name, *x as f64, out),
            Some(Value::Map(map)) if map.len() <= MAX_MAP => {
                for (part, value) in map {
                    nested(name, part, value, out);
                }
            }
            Some(Value::List(items)) if items.len() <= MAX_LIST => {
                for (index, value) in items.iter().enumerate() {
                    nested(name, &index.to_string(), value, out);
                }
            }
            _ => {}
        }
    }

    fn value(&mut self, at: Timestamp, name: &str, value: f64, out: &mut dyn Output) {
        if value.is_finite() {
            let counter = Counter {
                process: self.process,
                group: None,
                name: name.to_owned(),
                unit: None,
            };
            out.counter(at, &counter, value);
        }
    }
}

/// The implied slices open on the run thread at some moment (see [`Recorder::enclosing`]).
#[derive(Debug, Clone, Copy)]
struct Implied {
    epoch: bool,
    task: bool,
    window: bool,
}

/// The value, a lazy one read; `None` if reading it fails or panics (the trace goes on
/// without it, as the log writes such a value as nil).
fn read(value: &Value) -> Option<&Value> {
    match value {
        Value::Lazy(_) => catch_unwind(AssertUnwindSafe(|| value.resolved().ok()))
            .ok()
            .flatten(),
        other => Some(other),
    }
}

/// A span's or instant's arguments: its `args` map, lazy values read (nil when they fail).
fn args_of(event: &Event) -> Args {
    match event.get(keys::ARGS) {
        Some(Value::Map(map)) => map
            .iter()
            .map(|(k, v)| (k.clone(), read(v).cloned().unwrap_or(Value::Null)))
            .collect(),
        _ => Vec::new(),
    }
}
