//! [`WebState`]: what the page shows, folded from events one at a time at a bounded size, and
//! the JSON batch each client is sent ([`WebState::batch`]): the figures, and of every chart
//! line only the points that client lacks.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use giving::vocab::{GpuReading, ProgressEvent, RateEvent, WatchEvent, keys};
use giving::{Event, Timestamp, Value};
use serde_json::{Map, Value as Json, json};

use super::histograms::{HistCursor, Histograms};
use super::series::{Cursor, Series};

/// Chart lines kept at most (a key per rank counts once per rank): keys past this are counted,
/// not charted, so a run that makes up keys cannot grow the state.
const MAX_SERIES: usize = 256;
/// Problems kept for the page (the count covers them all).
const MAX_PROBLEMS: usize = 20;
/// Tasks and sources kept at most.
const MAX_ROWS: usize = 256;
/// A lazy value (a loss on the device) is read at most once per this much event time per line:
/// each read makes the backend hand the value over.
const READ_LAZY_EVERY: Duration = Duration::from_millis(50);

/// Numeric keys that count or label rather than measure: not charted.
const NOT_CHARTED: &[&str] = &[
    keys::STEP,
    keys::GLOBAL_STEP,
    keys::EPOCH,
    keys::EPOCHS,
    keys::TOTAL_STEPS,
    keys::BATCH,
    keys::RANK,
    keys::LOCAL_RANK,
    keys::WORLD_SIZE,
    keys::ITERATION,
    keys::SPAN_ID,
    keys::TID,
    keys::NATS_DROPPED,
    // The fan-in's protocol: a rank's end (its event count) and the watcher's problem counts.
    keys::RANK_END,
    keys::NATS_REJECTED,
    keys::NATS_LOST,
    // A model watch's histogram: a list of counts, not a line.
    keys::HIST,
];

/// The x of a chart whose events have no step: the events counted.
const EVENT_COUNT: &str = "events";

/// Where the run is: running, over, or asked to stop from the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Running,
    Stopping,
    Finished,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Stopping => "stopping",
            Status::Finished => "finished",
        }
    }
}

/// The run header: what runs, where, since when.
#[derive(Debug, Clone)]
pub(crate) struct RunInfo {
    pub(crate) title: String,
    pub(crate) host: String,
    pub(crate) started: Timestamp,
}

#[derive(Debug, Clone)]
struct SeriesEntry {
    key: String,
    label: Option<String>,
    /// What its x is: `global_step`, `step`, or [`EVENT_COUNT`] (its first event's).
    x_key: &'static str,
    series: Series,
    /// Events that carried the key (the x of events without a step).
    count: u64,
    last_read: Option<Timestamp>,
}

#[derive(Debug, Clone, Default)]
struct TaskRow {
    name: String,
    done: u64,
    total: u64,
    first: Option<(Timestamp, u64)>,
    last: Option<Timestamp>,
    /// The latest rate of each source giving one (`None`: a run of one process, unlabelled):
    /// the task's rate is their sum, the run's throughput, as milabench adds the rates of a
    /// bench's processes.
    rates: Vec<(Option<String>, f64)>,
    units: String,
}

impl TaskRow {
    /// The run's rate on this task: the sum of every source's latest.
    fn rate(&self) -> Option<f64> {
        (!self.rates.is_empty()).then(|| self.rates.iter().map(|(_, rate)| rate).sum())
    }

    fn set_rate(&mut self, source: Option<&str>, rate: f64) {
        match self.rates.iter_mut().find(|(s, _)| s.as_deref() == source) {
            Some((_, latest)) => *latest = rate,
            None => self.rates.push((source.map(str::to_owned), rate)),
        }
    }

    /// Seconds left at the pace since the task's first progress event.
    fn eta(&self) -> Option<f64> {
        let ((t0, d0), t1) = (self.first?, self.last?);
        let (done, elapsed) = (self.done.checked_sub(d0)?, t1.duration_since(t0));
        (done > 0 && self.total >= self.done)
            .then(|| elapsed.as_secs_f64() * (self.total - self.done) as f64 / done as f64)
    }
}

#[derive(Debug, Clone, Default)]
struct SourceRow {
    name: String,
    rate: Option<f64>,
    units: String,
    progress: Option<(u64, u64)>,
    loss: Option<f64>,
    events: u64,
    done: bool,
}

/// The whole run's position from `epoch`/`epochs` and `global_step`/`total_steps`.
#[derive(Debug, Clone, Default)]
struct RunProgress {
    epoch: Option<u64>,
    epochs: Option<u64>,
    step: Option<u64>,
    total_steps: Option<u64>,
}

impl RunProgress {
    fn observe(&mut self, event: &Event) {
        let number = |key| event.get(key).and_then(plain_f64).map(|x| x as u64);
        self.epoch = number(keys::EPOCH).or(self.epoch);
        self.epochs = number(keys::EPOCHS).or(self.epochs);
        self.step = number(keys::GLOBAL_STEP).or(self.step);
        self.total_steps = number(keys::TOTAL_STEPS).or(self.total_steps);
    }

    fn fraction(&self) -> Option<f64> {
        match (self.step, self.total_steps, self.epoch, self.epochs) {
            // `global_step` counts from 0: the step just done is the `step + 1`-th.
            (Some(step), Some(total), _, _) if total > 0 => Some((step + 1) as f64 / total as f64),
            (_, _, Some(epoch), Some(epochs)) if epochs > 0 => Some(epoch as f64 / epochs as f64),
            _ => None,
        }
        .map(|f| f.clamp(0.0, 1.0))
    }
}

/// Everything the page shows. Bounded: chart lines are thinned ([`Series`]), and tasks,
/// sources, lines and problems are capped.
#[derive(Debug, Clone)]
pub(crate) struct WebState {
    info: RunInfo,
    status: Status,
    /// Bumped by every change: a client whose batch is at this version has nothing new.
    version: u64,
    series: Vec<SeriesEntry>,
    index: HashMap<(String, Option<String>), usize>,
    series_refused: u64,
    /// A model watch's histograms over time, per watched tensor.
    histograms: Histograms,
    tasks: Vec<TaskRow>,
    current_task: Option<usize>,
    sources: Vec<SourceRow>,
    run: RunProgress,
    gpus: BTreeMap<String, Json>,
    cpu: Map<String, Json>,
    problems: VecDeque<String>,
    problem_count: u64,
    events: u64,
    dropped: u64,
    first_event: Option<Timestamp>,
    last_event: Option<Timestamp>,
}

/// What one client has been sent: its cursor per chart line and the version of its last batch.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientView {
    cursors: Vec<Option<Cursor>>,
    hist_cursors: Vec<Option<HistCursor>>,
    version: Option<u64>,
}

impl WebState {
    /// An empty state for the run `info` describes.
    pub(crate) fn new(info: RunInfo) -> Self {
        Self {
            info,
            status: Status::Running,
            version: 0,
            series: Vec::new(),
            index: HashMap::new(),
            series_refused: 0,
            histograms: Histograms::default(),
            tasks: Vec::new(),
            current_task: None,
            sources: Vec::new(),
            run: RunProgress::default(),
            gpus: BTreeMap::new(),
            cpu: Map::new(),
            problems: VecDeque::new(),
            problem_count: 0,
            events: 0,
            dropped: 0,
            first_event: None,
            last_event: None,
        }
    }

    /// Reads one event.
    pub(crate) fn observe(&mut self, event: &Event) {
        self.version += 1;
        self.events += 1;
        let time = event.time();
        self.first_event.get_or_insert(time);
        self.last_event = Some(self.last_event.map_or(time, |last| last.max(time)));
        self.run.observe(event);
        let label = source_label(event);
        self.observe_task(event, label.as_deref());
        if let Some(label) = &label {
            self.observe_source(label, event);
        }
        // A model watch's statistics: one line per watched parameter on each statistic's
        // chart (`grad/fc1.weight` on `norm`), not a row of the sources.
        let watched = WatchEvent::of(event).map(|watched| watched.label());
        let every_value = watched.is_some();
        self.observe_charts(event, watched.or(label), every_value);
        self.histograms.observe(event);
        for gpu in GpuReading::all(event) {
            self.gpus.insert(
                gpu.index.to_owned(),
                json!({
                    "load": gpu.load,
                    "memory": gpu.memory.map(|(used, total)| [used, total]),
                    "temperature": gpu.temperature,
                    "power": gpu.power,
                }),
            );
        }
        for key in [keys::CPUDATA, keys::PROCESS] {
            if let Some(value) = event.get(key)
                && let Ok(json) = serde_json::to_value(value)
            {
                self.cpu.insert(key.to_owned(), json);
            }
        }
        if let Some(problem) = event.get(keys::PROBLEM).and_then(Value::as_str) {
            let instrument = event.get(keys::INSTRUMENT).and_then(Value::as_str);
            if self.problems.len() == MAX_PROBLEMS {
                self.problems.pop_front();
            }
            self.problems.push_back(match instrument {
                Some(name) => format!("{name}: {problem}"),
                None => problem.to_owned(),
            });
            self.problem_count += 1;
        }
    }

    fn observe_task(&mut self, event: &Event, source: Option<&str>) {
        let progress = ProgressEvent::of(event);
        let rate = RateEvent::of(event);
        let name = match (&progress, &rate) {
            (Some(p), _) => p.task,
            (None, Some(r)) => r.task,
            (None, None) => return,
        };
        let Some(index) = row(&mut self.tasks, name, |name| TaskRow {
            name: name.to_owned(),
            ..TaskRow::default()
        }) else {
            return;
        };
        let task = &mut self.tasks[index];
        if let Some(p) = progress {
            if p.done < task.done || task.first.is_none() {
                // A new pass over the task (the next epoch): its pace starts again.
                task.first = Some((event.time(), p.done));
            }
            (task.done, task.total, task.last) = (p.done, p.total, Some(event.time()));
            self.current_task = Some(index);
        }
        if let Some(r) = rate.filter(|r| r.rate.is_finite()) {
            task.set_rate(source, r.rate);
            r.units.clone_into(&mut task.units);
        }
    }

    fn observe_source(&mut self, label: &str, event: &Event) {
        let Some(index) = row(&mut self.sources, label, |name| SourceRow {
            name: name.to_owned(),
            ..SourceRow::default()
        }) else {
            return;
        };
        let source = &mut self.sources[index];
        source.events += 1;
        if matches!(event.get(keys::DONE), Some(Value::Bool(true))) {
            source.done = true;
        }
        if let Some(r) = RateEvent::of(event) {
            source.rate = Some(r.rate);
            r.units.clone_into(&mut source.units);
        }
        if let Some(p) = ProgressEvent::of(event).filter(|p| p.task != keys::EARLY_STOP_TASK) {
            source.progress = Some((p.done, p.total));
        }
        if let Some(loss) = event.get(keys::LOSS).and_then(plain_f64) {
            source.loss = Some(loss);
        }
    }

    /// Adds the event's numbers to the charts. A lazy value is read at most once per
    /// [`READ_LAZY_EVERY`] of a series, unless `every_value` (a model watch's statistics, given
    /// every N steps already: each one is a column of the per-layer view).
    fn observe_charts(&mut self, event: &Event, label: Option<String>, every_value: bool) {
        // The x of the event's points, and what it is (the chart's axis title).
        let (x, x_key) = [keys::GLOBAL_STEP, keys::STEP]
            .iter()
            .find_map(|k| Some((event.get(k).and_then(plain_f64)?, *k)))
            .map_or((None, EVENT_COUNT), |(x, k)| (Some(x), k));
        for (key, value) in event.iter() {
            if !chartable(key, value) {
                continue;
            }
            let id = (key.to_owned(), label.clone());
            let index = match self.index.get(&id) {
                Some(&index) => index,
                None if self.series.len() < MAX_SERIES => {
                    self.series.push(SeriesEntry {
                        key: id.0.clone(),
                        label: id.1.clone(),
                        x_key,
                        series: Series::default(),
                        count: 0,
                        last_read: None,
                    });
                    self.index.insert(id, self.series.len() - 1);
                    self.series.len() - 1
                }
                None => {
                    self.series_refused += 1;
                    continue;
                }
            };
            let entry = &mut self.series[index];
            entry.count += 1;
            if let Value::Lazy(lazy) = value
                && !lazy.is_resolved()
                && !every_value
            {
                let time = event.time();
                if entry
                    .last_read
                    .is_some_and(|last| time.duration_since(last) < READ_LAZY_EVERY)
                {
                    continue;
                }
                entry.last_read = Some(time);
            }
            if let Some(y) = value.as_f64().filter(|y| y.is_finite()) {
                let x = x.unwrap_or((entry.count - 1) as f64);
                entry.series.push(x, y);
            }
        }
    }

    /// Records the subscription's drops (shown on the page).
    pub(crate) fn set_dropped(&mut self, dropped: u64) {
        if dropped != self.dropped {
            self.dropped = dropped;
            self.version += 1;
        }
    }

    /// Sets where the run is.
    pub(crate) fn set_status(&mut self, status: Status) {
        if status != self.status {
            self.status = status;
            self.version += 1;
        }
    }

    /// The batch `client` lacks, as JSON, and updates its view; `None` when it has it all.
    /// `now` (the wall clock) is sent along so the page can tell how late updates arrive.
    pub(crate) fn batch(&self, client: &mut ClientView, now: Timestamp) -> Option<String> {
        if client.version == Some(self.version) {
            return None;
        }
        client.version = Some(self.version);
        client.cursors.resize(self.series.len(), None);
        let mut series = Vec::new();
        for (entry, cursor) in self.series.iter().zip(client.cursors.iter_mut()) {
            if let Some((delta, sent)) = entry.series.delta(*cursor) {
                series.push(json!({
                    "key": entry.key,
                    "label": entry.label,
                    "x": entry.x_key,
                    "from": delta.from,
                    "points": delta.points,
                }));
                *cursor = Some(sent);
            }
        }
        let batch = json!({
            "title": self.info.title,
            "host": self.info.host,
            "started_ms": millis(self.info.started),
            "status": self.status.as_str(),
            "progress": self.run.fraction(),
            "epoch": self.run.epoch,
            "epochs": self.run.epochs,
            "step": self.run.step,
            "total_steps": self.run.total_steps,
            "eta": self.run_eta(),
            "current_task": self.current_task.map(|i| self.tasks[i].name.as_str()),
            "tasks": self.tasks.iter().map(|t| json!({
                "name": t.name,
                "done": t.done,
                "total": t.total,
                "eta": t.eta(),
                "rate": t.rate(),
                "units": t.units,
            })).collect::<Vec<_>>(),
            "sources": self.sources.iter().map(|s| json!({
                "name": s.name,
                "rate": s.rate,
                "units": s.units,
                "progress": s.progress,
                "loss": s.loss,
                "events": s.events,
                "done": s.done,
            })).collect::<Vec<_>>(),
            "gpus": self.gpus,
            "cpu": self.cpu,
            "problems": self.problems,
            "problem_count": self.problem_count,
            "events": self.events,
            "dropped": self.dropped,
            "series_refused": self.series_refused,
            "last_event_ms": self.last_event.map(millis),
            "sent_ms": millis(now),
            "series": series,
            "hists": self.histograms.delta(&mut client.hist_cursors),
            "hists_refused": self.histograms.refused(),
        });
        Some(batch.to_string())
    }

    /// Seconds left for the whole run at its pace so far.
    fn run_eta(&self) -> Option<f64> {
        let fraction = self.run.fraction()?;
        let elapsed = self.last_event?.duration_since(self.first_event?);
        (fraction > 0.0).then(|| elapsed.as_secs_f64() * (1.0 - fraction) / fraction)
    }

    /// Events observed.
    #[cfg(test)]
    pub(crate) fn events(&self) -> u64 {
        self.events
    }

    /// The points of `key`'s line for `label`.
    #[cfg(test)]
    pub(crate) fn points(&self, key: &str, label: Option<&str>) -> Option<&[(f64, f64)]> {
        let index = self
            .index
            .get(&(key.to_owned(), label.map(str::to_owned)))?;
        Some(self.series[*index].series.points())
    }
}

/// The row named `name`, added if new and there is room.
fn row<T>(rows: &mut Vec<T>, name: &str, new: impl FnOnce(&str) -> T) -> Option<usize>
where
    T: HasName,
{
    match rows.iter().position(|r| r.name() == name) {
        Some(index) => Some(index),
        None if rows.len() < MAX_ROWS => {
            rows.push(new(name));
            Some(rows.len() - 1)
        }
        None => None,
    }
}

trait HasName {
    fn name(&self) -> &str;
}

impl HasName for TaskRow {
    fn name(&self) -> &str {
        &self.name
    }
}

impl HasName for SourceRow {
    fn name(&self) -> &str {
        &self.name
    }
}

/// The line an event's values belong to when several sources are overlaid: its `bench` (a
/// suite's process), else its `rank` (a rank fanned in over NATS).
fn source_label(event: &Event) -> Option<String> {
    if let Some(bench) = event.get(keys::BENCH).and_then(Value::as_str) {
        return Some(bench.to_owned());
    }
    let rank = event.get(keys::RANK).and_then(plain_f64)?;
    Some(format!("rank {}", rank as u64))
}

/// Whether `key`'s `value` is charted: a number (or a lazy one) under a key that measures.
fn chartable(key: &str, value: &Value) -> bool {
    let number = match value {
        Value::F64(x) => x.is_finite(),
        Value::I64(_) | Value::U64(_) | Value::Lazy(_) => true,
        _ => false,
    };
    number && !key.starts_with('$') && !NOT_CHARTED.contains(&key)
}

/// A number that is already one: never a device read.
fn plain_f64(value: &Value) -> Option<f64> {
    match value {
        Value::Lazy(_) => None,
        other => other.as_f64(),
    }
}

fn millis(time: Timestamp) -> u64 {
    time.as_nanos() / 1_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> WebState {
        WebState::new(RunInfo {
            title: "giving train mlp".into(),
            host: "node1".into(),
            started: Timestamp::from_nanos(1_000_000_000),
        })
    }

    fn event(fields: &[(&'static str, Value)]) -> Event {
        Event::new(fields.iter().cloned())
    }

    fn parse(batch: Option<String>) -> Json {
        serde_json::from_str(&batch.expect("a batch")).unwrap()
    }

    #[test]
    fn charts_numeric_keys_per_rank_and_skips_counters() {
        let mut state = state();
        for step in 0..5u64 {
            for rank in 0..2u64 {
                state.observe(&event(&[
                    (keys::RANK, Value::U64(rank)),
                    (keys::STEP, Value::U64(step)),
                    (keys::LOSS, Value::F64(1.0 / (step + rank + 1) as f64)),
                    (keys::TASK, Value::from("train")),
                ]));
            }
        }
        assert_eq!(state.points("loss", Some("rank 1")).unwrap().len(), 5);
        assert_eq!(state.points("loss", Some("rank 0")).unwrap()[4], (4.0, 0.2));
        assert!(state.points("step", Some("rank 0")).is_none());
        assert!(state.points("rank", Some("rank 0")).is_none());
        let batch = parse(state.batch(&mut ClientView::default(), Timestamp::now()));
        let labels: Vec<&str> = batch["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels, ["rank 0", "rank 1"]);
        assert_eq!(batch["sources"].as_array().unwrap().len(), 2);
        // Its x is the events' `step`: the chart's axis title.
        assert_eq!(batch["series"][0]["x"], "step");
    }

    #[test]
    fn a_charts_x_is_the_global_step_else_the_step_else_the_events_counted() {
        let mut state = state();
        state.observe(&event(&[
            (keys::GLOBAL_STEP, Value::U64(3)),
            (keys::LOSS, Value::F64(1.0)),
        ]));
        state.observe(&event(&[(keys::RATE, Value::F64(5.0))]));
        let batch = parse(state.batch(&mut ClientView::default(), Timestamp::now()));
        let x: Vec<(&str, &str)> = batch["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["key"].as_str().unwrap(), s["x"].as_str().unwrap()))
            .collect();
        assert_eq!(x, [("loss", "global_step"), ("rate", "events")]);
    }

    #[test]
    fn the_fan_ins_protocol_keys_are_not_charted() {
        let mut state = state();
        state.observe(&event(&[
            (keys::RANK, Value::U64(3)),
            (keys::RANK_END, Value::U64(1200)),
            (keys::NATS_DROPPED, Value::U64(0)),
        ]));
        state.observe(&event(&[(keys::NATS_REJECTED, Value::U64(2))]));
        state.observe(&event(&[(keys::NATS_LOST, Value::U64(5))]));
        for key in [keys::RANK_END, keys::NATS_REJECTED, keys::NATS_LOST] {
            assert!(state.points(key, Some("rank 3")).is_none(), "{key} charted");
            assert!(state.points(key, None).is_none(), "{key} charted");
        }
    }

    #[test]
    fn a_client_is_sent_only_what_changed() {
        let mut state = state();
        let mut client = ClientView::default();
        state.observe(&event(&[(keys::LOSS, Value::F64(2.0))]));
        let first = parse(state.batch(&mut client, Timestamp::now()));
        assert_eq!(first["series"][0]["points"], json!([[0.0, 2.0]]));
        assert!(state.batch(&mut client, Timestamp::now()).is_none());
        state.observe(&event(&[(keys::LOSS, Value::F64(1.0))]));
        let second = parse(state.batch(&mut client, Timestamp::now()));
        assert_eq!(second["series"][0]["from"], json!(1));
        assert_eq!(second["series"][0]["points"], json!([[1.0, 1.0]]));
        state.set_status(Status::Finished);
        let last = parse(state.batch(&mut client, Timestamp::now()));
        assert_eq!(last["status"], "finished");
        assert_eq!(last["series"], json!([]));
    }

    #[test]
    fn progress_rate_and_eta_of_a_task_and_the_run() {
        let mut state = state();
        let at = |s: u64| Timestamp::from_nanos(s * 1_000_000_000);
        for done in [0u64, 10, 50] {
            let mut e = ProgressEvent::event("train", done, 100).to_builder();
            // `global_step` counts from 0: the 50th step is step 49.
            e = e
                .field(keys::GLOBAL_STEP, done.max(1) - 1)
                .field(keys::TOTAL_STEPS, 100u64);
            state.observe(&e.time(at(10 + done / 10)).build());
        }
        state.observe(&event(&[
            (keys::TASK, Value::from("train")),
            (keys::RATE, Value::F64(640.0)),
            (keys::UNITS, Value::from("items/s")),
        ]));
        let batch = parse(state.batch(&mut ClientView::default(), Timestamp::now()));
        let task = &batch["tasks"][0];
        assert_eq!(
            (task["done"].as_u64(), task["total"].as_u64()),
            (Some(50), Some(100))
        );
        assert_eq!(task["rate"].as_f64(), Some(640.0));
        // 50 steps took 5 s: 50 more take 5 s.
        assert_eq!(task["eta"].as_f64(), Some(5.0));
        assert_eq!(batch["progress"].as_f64(), Some(0.5));
        assert_eq!(batch["current_task"], "train");
    }

    #[test]
    fn the_task_rate_of_several_ranks_is_their_sum() {
        let mut state = state();
        let rate = |rank: u64, rate: f64| {
            event(&[
                (keys::TASK, Value::from("train")),
                (keys::RANK, Value::from(rank)),
                (keys::RATE, Value::F64(rate)),
                (keys::UNITS, Value::from("items/s")),
            ])
        };
        // Each rank's latest rate counts once: rank 0's second replaces its first.
        for event in [rate(0, 100.0), rate(1, 120.0), rate(0, 110.0)] {
            state.observe(&event);
        }
        let batch = parse(state.batch(&mut ClientView::default(), Timestamp::now()));
        assert_eq!(batch["tasks"][0]["rate"].as_f64(), Some(230.0));
        let sources = batch["sources"].as_array().unwrap();
        let rates: Vec<_> = sources.iter().map(|s| s["rate"].as_f64()).collect();
        assert_eq!(rates, [Some(110.0), Some(120.0)]);
    }

    #[test]
    fn a_watched_parameter_is_a_line_of_its_own_on_each_statistic() {
        let mut state = state();
        for (param, norm) in [("fc1.weight", 2.0), ("fc2.weight", 3.0)] {
            state.observe(&event(&[
                (keys::GLOBAL_STEP, Value::from(100u64)),
                (keys::PARAM, Value::from(param)),
                (keys::WATCH, Value::from("grad")),
                (keys::NORM, Value::F64(norm)),
            ]));
        }
        assert_eq!(
            state
                .points(keys::NORM, Some("grad/fc1.weight"))
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            state
                .points(keys::NORM, Some("grad/fc2.weight"))
                .unwrap()
                .len(),
            1
        );
        assert_eq!(state.points(keys::NORM, None), None);
    }

    #[test]
    fn a_run_whose_last_step_is_done_is_at_100_percent() {
        // As burn-train's Learner through giving-burn gives it: the epochs, then the steps
        // (the renderer's `total_steps`, the logger's `global_step` from 0), then validation.
        let mut state = state();
        for epoch in 0..2u64 {
            state.observe(&event(&[
                (keys::EPOCH, Value::from(epoch)),
                (keys::EPOCHS, Value::from(2u64)),
                (keys::TOTAL_STEPS, Value::from(4u64)),
            ]));
            for step in 2 * epoch..2 * epoch + 2 {
                state.observe(&event(&[(keys::GLOBAL_STEP, Value::from(step))]));
                let batch = parse(state.batch(&mut ClientView::default(), Timestamp::now()));
                assert_eq!(batch["progress"].as_f64(), Some((step + 1) as f64 / 4.0));
            }
            state.observe(&event(&[
                (keys::EPOCH, Value::from(epoch)),
                (keys::SPLIT, Value::from("valid")),
                (keys::VAL_LOSS, Value::F64(0.5)),
            ]));
        }
        let batch = parse(state.batch(&mut ClientView::default(), Timestamp::now()));
        assert_eq!(batch["progress"].as_f64(), Some(1.0));
    }

    #[test]
    fn made_up_keys_stop_at_the_cap_and_problems_are_kept_bounded() {
        let mut state = state();
        for i in 0..(MAX_SERIES + 10) {
            let key: &'static str = Box::leak(format!("k{i}").into_boxed_str());
            state.observe(&event(&[(key, Value::F64(1.0))]));
        }
        for i in 0..(MAX_PROBLEMS + 5) {
            state.observe(&event(&[
                (keys::PROBLEM, Value::from(format!("bad {i}"))),
                (keys::INSTRUMENT, Value::from("log")),
            ]));
        }
        let batch = parse(state.batch(&mut ClientView::default(), Timestamp::now()));
        assert_eq!(batch["series"].as_array().unwrap().len(), MAX_SERIES);
        assert_eq!(batch["series_refused"].as_u64(), Some(10));
        assert_eq!(batch["problems"].as_array().unwrap().len(), MAX_PROBLEMS);
        assert_eq!(batch["problems"][MAX_PROBLEMS - 1], "log: bad 24");
        assert_eq!(batch["problem_count"].as_u64(), Some(25));
        assert_eq!(state.events(), (MAX_SERIES + 10 + MAX_PROBLEMS + 5) as u64);
    }
}
