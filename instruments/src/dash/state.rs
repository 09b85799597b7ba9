//! [`DashState`]: what the dashboard shows, aggregated from events one at a time. Pure: no
//! terminal, no clock (times come from the events), so it is fed directly in tests.

use std::collections::BTreeMap;
use std::time::Duration;

use giving::vocab::{GpuReading, ProgressEvent, RateEvent, keys};

use super::format::{clock, number, si};
use super::sources::{SourceStat, Sources};
use giving::{Event, Timestamp, Value};

/// Points kept per chart; past this, every other point is dropped (the chart keeps its shape
/// over the whole run at half the resolution).
const MAX_POINTS: usize = 2048;

/// The latest value of one key, how many events carried it, and its units (the `units` field
/// of the same event, as rate events have).
#[derive(Debug, Clone)]
pub struct KeyStat {
    /// The latest value (possibly lazy: it is read when drawn).
    pub value: Value,
    /// The units given beside it, if any.
    pub units: Option<String>,
    /// Events that carried this key.
    pub count: u64,
}

/// One task's progress and rate (`train`, `valid`, `early_stop`, …).
#[derive(Debug, Clone, Default)]
pub struct TaskStat {
    /// The task's name (`""` for events without a task).
    pub name: String,
    /// The latest `progress: (i, n)`.
    pub progress: Option<(u64, u64)>,
    /// When its current run started (its `progress: (0, n)` event, or its first progress).
    pub started: Option<Timestamp>,
    /// The time of its latest progress.
    pub last: Option<Timestamp>,
    /// The latest rate given for it.
    pub rate: Option<f64>,
    /// The units of its rate (`items/s`).
    pub units: Option<String>,
    rate_sum: f64,
    rate_count: u64,
}

impl TaskStat {
    /// The mean of the rates given for this task.
    pub fn mean_rate(&self) -> Option<f64> {
        (self.rate_count > 0).then(|| self.rate_sum / self.rate_count as f64)
    }

    /// Done fraction in 0..=1 (0 when the total is 0 or unknown).
    pub fn ratio(&self) -> f64 {
        match self.progress {
            Some((i, n)) if n > 0 => (i as f64 / n as f64).clamp(0.0, 1.0),
            _ => 0.0,
        }
    }

    /// Estimated time left: the time the first `i` steps took, scaled to the `n - i` left.
    pub fn eta(&self) -> Option<Duration> {
        let (i, n) = self.progress?;
        if i == 0 || i > n {
            return None;
        }
        let elapsed = self.last?.duration_since(self.started?).as_secs_f64();
        let left = elapsed / i as f64 * (n - i) as f64;
        Duration::try_from_secs_f64(left).ok()
    }
}

/// The whole run, across epochs: from `{epoch, epochs, total_steps}` (given at each epoch's
/// start) and `global_step` (given every step).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunStat {
    /// The latest epoch, from 0.
    pub epoch: Option<u64>,
    /// The epochs the run plans.
    pub epochs: Option<u64>,
    /// The steps the run plans over all its epochs.
    pub total_steps: Option<u64>,
    /// Steps done over the whole run (the latest `global_step` + 1).
    pub done_steps: Option<u64>,
    /// When the first epoch started.
    pub started: Option<Timestamp>,
    /// The time of the latest `global_step`.
    pub last: Option<Timestamp>,
}

impl RunStat {
    /// `(done, total)` steps of the whole run, when the run says how many it plans.
    pub fn progress(&self) -> Option<(u64, u64)> {
        Some((self.done_steps.unwrap_or(0), self.total_steps?))
    }

    /// Done fraction of the whole run in 0..=1 (0 when unknown).
    pub fn ratio(&self) -> f64 {
        match self.progress() {
            Some((i, n)) if n > 0 => (i as f64 / n as f64).clamp(0.0, 1.0),
            _ => 0.0,
        }
    }

    /// Estimated time left for the whole run: the time its steps so far took, scaled to the
    /// steps left (validation included, as it is part of the time so far).
    pub fn eta(&self) -> Option<Duration> {
        let (i, n) = self.progress()?;
        if i == 0 || i > n {
            return None;
        }
        let elapsed = self.last?.duration_since(self.started?).as_secs_f64();
        Duration::try_from_secs_f64(elapsed / i as f64 * (n - i) as f64).ok()
    }

    /// `epoch 2/5` (one-based, as people count epochs), or `epoch 2` without a total.
    pub fn epoch_label(&self) -> Option<String> {
        let epoch = self.epoch? + 1;
        Some(match self.epochs {
            Some(n) => format!("epoch {epoch}/{n}"),
            None => format!("epoch {epoch}"),
        })
    }

    fn observe(&mut self, event: &Event) {
        let number = |key| event.get_as::<u64>(key).ok();
        if let Some(epoch) = number(keys::EPOCH) {
            self.epoch = Some(epoch);
            self.started.get_or_insert(event.time());
        }
        if let Some(epochs) = number(keys::EPOCHS) {
            self.epochs = Some(epochs);
        }
        if let Some(total) = number(keys::TOTAL_STEPS) {
            self.total_steps = Some(total);
        }
        if let Some(step) = number(keys::GLOBAL_STEP) {
            self.done_steps = Some(step + 1);
            self.last = Some(event.time());
            self.started.get_or_insert(event.time());
        }
    }
}

/// One GPU of a `gpudata` event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuStat {
    /// Load in 0..1.
    pub load: Option<f64>,
    /// Memory used and total, in MB.
    pub memory: Option<(f64, f64)>,
    /// Temperature in °C.
    pub temperature: Option<f64>,
    /// Power in W.
    pub power: Option<f64>,
}

/// The machine and process figures of a `cpudata`/`process` event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuStat {
    /// Machine CPU load in 0..1.
    pub load: Option<f64>,
    /// Machine memory used and total, in MB.
    pub memory: Option<(f64, f64)>,
    /// This process's resident memory, in MB.
    pub rss_mb: Option<f64>,
    /// This process's CPU use, in percent of one core.
    pub process_cpu: Option<f64>,
}

/// A chart's points: `(step, value)`.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// The points, in arrival order.
    pub points: Vec<(f64, f64)>,
    stride: u64,
    seen: u64,
    /// Events that carried the key (the x of events without a step).
    count: u64,
    /// When the last lazy value was read for this chart.
    last_read: Option<Timestamp>,
}

impl Series {
    fn push(&mut self, x: f64, y: f64) {
        self.seen += 1;
        if self.stride == 0 {
            self.stride = 1;
        }
        if !(self.seen - 1).is_multiple_of(self.stride) {
            return;
        }
        self.points.push((x, y));
        if self.points.len() >= MAX_POINTS {
            let mut keep = 0;
            self.points.retain(|_| {
                keep += 1;
                keep % 2 == 1
            });
            self.stride *= 2;
        }
    }

    /// The smallest and largest x and y, if there is a point.
    pub fn bounds(&self) -> Option<([f64; 2], [f64; 2])> {
        let mut points = self.points.iter();
        let &(x0, y0) = points.next()?;
        let mut b = ([x0, x0], [y0, y0]);
        for &(x, y) in points {
            b.0 = [b.0[0].min(x), b.0[1].max(x)];
            b.1 = [b.1[0].min(y), b.1[1].max(y)];
        }
        Some(b)
    }
}

/// Everything the dashboard shows, built from events by [`observe`](DashState::observe).
///
/// ```
/// use giving::{Event, Timestamp, Value};
/// use giving_instruments::DashState;
///
/// let mut state = DashState::new(["acc"]);
/// let t = Timestamp::from_nanos(1_000_000_000);
/// let start = [("task", Value::from("train")), ("progress", Value::from((0, 10)))];
/// state.observe(&Event::new_at(start, t));
/// let step = [("global_step", Value::from(0)), ("loss", Value::from(0.5))];
/// state.observe(&Event::new_at(step, t));
/// assert_eq!(state.key("loss").unwrap().count, 1);
/// assert_eq!(state.series("loss").unwrap().points, [(0.0, 0.5)]);
/// assert_eq!(state.tasks()[0].progress, Some((0, 10)));
/// ```
#[derive(Debug, Clone)]
pub struct DashState {
    plots: Vec<String>,
    keys: BTreeMap<String, KeyStat>,
    tasks: Vec<TaskStat>,
    current_task: Option<usize>,
    run: RunStat,
    log_scale: bool,
    stderr: std::collections::VecDeque<String>,
    stderr_lines: u64,
    waiting_for_key: bool,
    series: BTreeMap<String, Series>,
    gpus: BTreeMap<String, GpuStat>,
    cpu: Option<CpuStat>,
    sources: Sources,
    events: u64,
    dropped: u64,
    pending: usize,
    latest: Option<Timestamp>,
    finished: bool,
    read_every: Duration,
}

/// Keys that describe an event rather than measure something: not given units.
const META: [&str; 2] = [keys::TASK, keys::UNITS];

impl DashState {
    /// An empty state that charts `loss` and the keys of `plots`.
    pub fn new<S: Into<String>>(plots: impl IntoIterator<Item = S>) -> Self {
        let mut charted = vec![keys::LOSS.to_owned()];
        for key in plots {
            let key = key.into();
            if !charted.contains(&key) {
                charted.push(key);
            }
        }
        Self {
            plots: charted,
            keys: BTreeMap::new(),
            tasks: Vec::new(),
            current_task: None,
            run: RunStat::default(),
            log_scale: false,
            stderr: std::collections::VecDeque::new(),
            stderr_lines: 0,
            waiting_for_key: false,
            series: BTreeMap::new(),
            gpus: BTreeMap::new(),
            sources: Sources::default(),
            cpu: None,
            events: 0,
            dropped: 0,
            pending: 0,
            latest: None,
            finished: false,
            read_every: Self::DEFAULT_READ_EVERY,
        }
    }

    /// How often, by default, a chart reads a lazy value: at most once per 50 ms of event time.
    pub const DEFAULT_READ_EVERY: Duration = Duration::from_millis(50);

    /// Charts read a lazy value (a loss still on the device) at most once per `gap` of event
    /// time; the others are counted but not read, because reading every one makes the backend
    /// hand over every value and slows training. Values already read, and plain numbers, are
    /// always charted. `Duration::ZERO` reads them all.
    pub fn read_lazy_every(mut self, gap: Duration) -> Self {
        self.read_every = gap;
        self
    }

    /// Reads one event. Values of any shape are accepted; what cannot be read is shown as is.
    pub fn observe(&mut self, event: &Event) {
        self.events += 1;
        self.sources.observe(event);
        let time = event.time();
        self.latest = Some(self.latest.map_or(time, |t| t.max(time)));
        let units = event
            .get(keys::UNITS)
            .and_then(Value::as_str)
            .map(str::to_owned);
        for (key, value) in event.iter() {
            let stat = self.keys.entry(key.to_owned()).or_insert_with(|| KeyStat {
                value: Value::Null,
                units: None,
                count: 0,
            });
            stat.value = value.clone();
            stat.count += 1;
            if !META.contains(&key) {
                stat.units = units.clone();
            }
        }
        self.observe_task(event, units);
        self.run.observe(event);
        self.observe_plots(event);
        for gpu in GpuReading::all(event) {
            self.gpus.insert(
                gpu.index.to_owned(),
                GpuStat {
                    load: gpu.load,
                    memory: gpu.memory,
                    temperature: gpu.temperature,
                    power: gpu.power,
                },
            );
        }
        let cpudata = event.get(keys::CPUDATA);
        let process = event.get(keys::PROCESS);
        if cpudata.is_some() || process.is_some() {
            let cpu = self.cpu.get_or_insert_with(CpuStat::default);
            if let Some(c) = cpudata {
                cpu.load = field_f64(c, "load");
                cpu.memory = field(c, "memory").and_then(pair);
            }
            if let Some(p) = process {
                cpu.rss_mb = field_f64(p, "rss_mb");
                cpu.process_cpu = field_f64(p, "cpu");
            }
        }
    }

    fn observe_task(&mut self, event: &Event, units: Option<String>) {
        let progress = ProgressEvent::of(event);
        let rate = RateEvent::of(event);
        let name = match (&progress, &rate) {
            (Some(p), _) => p.task,
            (None, Some(r)) => r.task,
            (None, None) => return,
        };
        let progress = progress.map(|p| (p.done, p.total));
        let rate = rate.map(|r| r.rate);
        let index = match self.tasks.iter().position(|t| t.name == name) {
            Some(index) => index,
            None => {
                self.tasks.push(TaskStat {
                    name: name.to_owned(),
                    ..TaskStat::default()
                });
                self.tasks.len() - 1
            }
        };
        let task = &mut self.tasks[index];
        let time = event.time();
        if let Some((i, n)) = progress {
            let restarted = match task.progress {
                Some((last, _)) => i == 0 || i < last,
                None => true,
            };
            if restarted {
                task.started = Some(time);
            }
            task.progress = Some((i, n));
            task.last = Some(time);
            self.current_task = Some(index);
        }
        if let Some(rate) = rate.filter(|r| r.is_finite()) {
            task.rate = Some(rate);
            task.rate_sum += rate;
            task.rate_count += 1;
            task.units = units;
        }
    }

    fn observe_plots(&mut self, event: &Event) {
        let time = event.time();
        for key in &self.plots {
            let Some(value) = event.get(key) else {
                continue;
            };
            let series = self.series.entry(key.clone()).or_default();
            series.count += 1;
            let unread = matches!(value, Value::Lazy(lazy) if !lazy.is_resolved());
            if unread {
                let recent = series
                    .last_read
                    .is_some_and(|last| time.duration_since(last) < self.read_every);
                if recent {
                    continue;
                }
                series.last_read = Some(time);
            }
            let Some(y) = value.as_f64().filter(|y| y.is_finite()) else {
                continue;
            };
            let x = [keys::GLOBAL_STEP, keys::STEP]
                .iter()
                .find_map(|k| event.get(k).and_then(Value::as_f64))
                .unwrap_or((series.count - 1) as f64);
            series.push(x, y);
        }
    }

    /// Records the subscription's lag: events dropped and events waiting.
    pub fn set_lag(&mut self, dropped: u64, pending: usize) {
        self.dropped = dropped;
        self.pending = pending;
    }

    /// Marks the run as over (the scope ended).
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// Whether the run is over.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The keys charted, `loss` first.
    pub fn plots(&self) -> &[String] {
        &self.plots
    }

    /// Every key seen, in key order.
    pub fn keys(&self) -> &BTreeMap<String, KeyStat> {
        &self.keys
    }

    /// One key's latest value, units and count.
    pub fn key(&self, key: &str) -> Option<&KeyStat> {
        self.keys.get(key)
    }

    /// The whole run's epoch, progress and ETA.
    pub fn run(&self) -> &RunStat {
        &self.run
    }

    /// Whether charts are drawn on a log scale (the `l` key).
    pub fn log_scale(&self) -> bool {
        self.log_scale
    }

    /// Switches charts between a linear and a log scale.
    pub fn toggle_log_scale(&mut self) {
        self.log_scale = !self.log_scale;
    }

    /// Lines kept for the stderr panel.
    pub const STDERR_LINES: usize = 100;

    /// Adds a line written to stderr while the dashboard is up (shown in its panel).
    pub fn stderr_line(&mut self, line: impl Into<String>) {
        if self.stderr.len() == Self::STDERR_LINES {
            self.stderr.pop_front();
        }
        self.stderr.push_back(line.into());
        self.stderr_lines += 1;
    }

    /// The latest lines written to stderr (at most [`STDERR_LINES`](Self::STDERR_LINES)),
    /// and how many there were in all.
    pub fn stderr(&self) -> (impl ExactSizeIterator<Item = &str>, u64) {
        (self.stderr.iter().map(String::as_str), self.stderr_lines)
    }

    /// Marks the final screen as held until a key is pressed (`--dash-hold`).
    pub fn set_waiting_for_key(&mut self, waiting: bool) {
        self.waiting_for_key = waiting;
    }

    /// Whether the final screen waits for a key.
    pub fn is_waiting_for_key(&self) -> bool {
        self.waiting_for_key
    }

    /// Every task, in the order they appeared.
    pub fn tasks(&self) -> &[TaskStat] {
        &self.tasks
    }

    /// The task that gave progress last.
    pub fn current_task(&self) -> Option<&TaskStat> {
        self.current_task.and_then(|i| self.tasks.get(i))
    }

    /// A charted key's points.
    pub fn series(&self, key: &str) -> Option<&Series> {
        self.series.get(key)
    }

    /// The latest figures of every GPU, by index.
    pub fn gpus(&self) -> &BTreeMap<String, GpuStat> {
        &self.gpus
    }

    /// One row per source when events say where they come from (`bench`: a suite's process;
    /// `rank`: a rank fanned in), in order of appearance.
    pub fn sources(&self) -> &[SourceStat] {
        self.sources.rows()
    }

    /// The sum of the sources' latest rates, with its units, when two or more gave one.
    pub fn total_rate(&self) -> Option<(f64, &str)> {
        self.sources.total_rate()
    }

    /// The latest CPU, memory and process figures.
    pub fn cpu(&self) -> Option<&CpuStat> {
        self.cpu.as_ref()
    }

    /// Events observed.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Events the subscription dropped (see [`set_lag`](DashState::set_lag)).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Events waiting in the subscription (see [`set_lag`](DashState::set_lag)).
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// The one-line summary printed when stdout is not a terminal:
    /// `train 45% 12/26 epoch 2/5 loss=0.231 rate=5.1k items/s eta 0:32 | run 29% eta 2:40`
    /// (the current task, the epoch, then the whole run when the loop says what it plans).
    pub fn plain_line(&self) -> String {
        let mut line = String::new();
        let task = self.current_task();
        if let Some(task) = task {
            let name = if task.name.is_empty() {
                "run"
            } else {
                &task.name
            };
            line += name;
            if let Some((i, n)) = task.progress {
                line += &format!(" {:.0}% {i}/{n}", 100.0 * task.ratio());
            }
            if let Some(epoch) = self.run.epoch_label() {
                line += &format!(" {epoch}");
            }
        } else {
            line += &format!("{} events", self.events);
        }
        if let Some(loss) = self.key(keys::LOSS).and_then(|k| k.value.as_f64()) {
            line += &format!(" loss={}", number(loss));
        }
        for key in self.plots.iter().skip(1) {
            if let Some(v) = self.key(key).and_then(|k| k.value.as_f64()) {
                line += &format!(" {key}={}", number(v));
            }
        }
        let rated = task
            .filter(|t| t.rate.is_some())
            .or_else(|| self.tasks.iter().rev().find(|t| t.rate.is_some()));
        if let Some(t) = rated
            && let Some(rate) = t.rate
        {
            line += &format!(" rate={}", si(rate));
            if let Some(units) = &t.units {
                line += &format!(" {units}");
            }
        }
        if let Some(eta) = task.and_then(TaskStat::eta) {
            line += &format!(" eta {}", clock(eta));
        }
        if self.run.progress().is_some() {
            line += &format!(" | run {:.0}%", 100.0 * self.run.ratio());
            if let Some(eta) = self.run.eta() {
                line += &format!(" eta {}", clock(eta));
            }
        }
        for source in self.sources.rows() {
            line += &format!(" | {}", source.name);
            if source.done {
                line += " done";
            }
            if let Some((seen, stop)) = source.stop {
                line += &format!(" {seen}/{stop}");
            }
            if let Some(rate) = source.rate {
                line += &format!(" rate={}", si(rate));
            }
        }
        if let Some((total, units)) = self.total_rate() {
            line += &format!(" | total rate={} {units}", si(total));
        }
        if self.dropped > 0 {
            line += &format!(" dropped={}", self.dropped);
        }
        line
    }
}

fn field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value.resolved().ok()? {
        Value::Map(map) => map.get(key),
        _ => None,
    }
}

fn field_f64(value: &Value, key: &str) -> Option<f64> {
    field(value, key).and_then(Value::as_f64)
}

fn pair(value: &Value) -> Option<(f64, f64)> {
    match value.resolved().ok()? {
        Value::List(items) if items.len() == 2 => Some((items[0].as_f64()?, items[1].as_f64()?)),
        _ => None,
    }
}
