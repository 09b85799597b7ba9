//! [`DashState`]: what the dashboard shows, aggregated from events one at a time. Pure: no
//! terminal, no clock (times come from the events), so it is fed directly in tests.

use std::collections::BTreeMap;
use std::time::Duration;

use giving::vocab::{GpuReading, ProgressEvent, RateEvent, keys};
use giving::{Event, Value};

use super::series::ChartSeries;
use super::sources::{SourceStat, Sources};
use super::stats::{CpuStat, GpuStat, KeyStat, RunStat, TaskStat};
use super::watch::{ParamStat, WatchTable};

/// Everything the dashboard shows, built from events by [`observe`](DashState::observe).
#[derive(Debug, Clone)]
pub(crate) struct DashState {
    plots: Vec<String>,
    keys: BTreeMap<String, KeyStat>,
    tasks: Vec<TaskStat>,
    current_task: Option<usize>,
    run: RunStat,
    log_scale: bool,
    stderr: std::collections::VecDeque<String>,
    stderr_lines: u64,
    waiting_for_key: bool,
    series: BTreeMap<String, ChartSeries>,
    gpus: BTreeMap<String, GpuStat>,
    cpu: Option<CpuStat>,
    sources: Sources,
    watch: WatchTable,
    events: u64,
    dropped: u64,
    pending: usize,
    finished: bool,
    read_every: Duration,
}

/// Keys that describe an event rather than measure something: not given units.
const META: [&str; 2] = [keys::TASK, keys::UNITS];

impl DashState {
    /// An empty state that charts `loss` and the keys of `plots`.
    pub(crate) fn new<S: Into<String>>(plots: impl IntoIterator<Item = S>) -> Self {
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
            watch: WatchTable::default(),
            events: 0,
            dropped: 0,
            pending: 0,
            finished: false,
            read_every: Self::DEFAULT_READ_EVERY,
        }
    }

    /// How often, by default, a chart reads a lazy value: at most once per 50 ms of event time.
    pub(crate) const DEFAULT_READ_EVERY: Duration = Duration::from_millis(50);

    /// Charts read a lazy value (a loss still on the device) at most once per `gap` of event
    /// time; the others are counted but not read, because reading every one makes the backend
    /// hand over every value and slows training. Values already read, and plain numbers, are
    /// always charted. `Duration::ZERO` reads them all.
    pub(crate) fn read_lazy_every(mut self, gap: Duration) -> Self {
        self.read_every = gap;
        self
    }

    /// Reads one event. Values of any shape are accepted; what cannot be read is shown as is.
    pub(crate) fn observe(&mut self, event: &Event) {
        self.events += 1;
        // A model watch's statistics are per parameter: its table, not the keys' latest values.
        if self.watch.observe(event) {
            return;
        }
        self.sources.observe(event);
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
            self.gpus.insert(gpu.index.to_owned(), GpuStat::from(&gpu));
        }
        let cpudata = event.get(keys::CPUDATA);
        let process = event.get(keys::PROCESS);
        if cpudata.is_some() || process.is_some() {
            let cpu = self.cpu.get_or_insert_with(CpuStat::default);
            cpu.observe(cpudata, process);
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
                self.tasks.push(TaskStat::new(name));
                self.tasks.len() - 1
            }
        };
        let task = &mut self.tasks[index];
        if let Some(progress) = progress {
            task.progressed(progress, event.time());
            self.current_task = Some(index);
        }
        if let Some(rate) = rate.filter(|r| r.is_finite()) {
            task.rated(rate, units);
        }
    }

    fn observe_plots(&mut self, event: &Event) {
        for key in &self.plots {
            if let Some(value) = event.get(key) {
                let series = self.series.entry(key.clone()).or_default();
                series.observe(event, value, self.read_every);
            }
        }
    }

    /// Records the subscription's lag: events dropped and events waiting.
    pub(crate) fn set_lag(&mut self, dropped: u64, pending: usize) {
        self.dropped = dropped;
        self.pending = pending;
    }

    /// Marks the run as over (the scope ended).
    pub(crate) fn finish(&mut self) {
        self.finished = true;
    }

    /// Whether the run is over.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }

    /// The keys charted, `loss` first.
    pub(crate) fn plots(&self) -> &[String] {
        &self.plots
    }

    /// Every key seen, in key order.
    pub(crate) fn keys(&self) -> &BTreeMap<String, KeyStat> {
        &self.keys
    }

    /// One key's latest value, units and count.
    pub(crate) fn key(&self, key: &str) -> Option<&KeyStat> {
        self.keys.get(key)
    }

    /// The whole run's epoch, progress and ETA.
    pub(crate) fn run(&self) -> &RunStat {
        &self.run
    }

    /// Whether charts are drawn on a log scale (the `l` key).
    pub(crate) fn log_scale(&self) -> bool {
        self.log_scale
    }

    /// Switches charts between a linear and a log scale.
    pub(crate) fn toggle_log_scale(&mut self) {
        self.log_scale = !self.log_scale;
    }

    /// Lines kept for the stderr panel.
    pub(crate) const STDERR_LINES: usize = 100;

    /// Adds a line written to stderr while the dashboard is up (shown in its panel).
    pub(crate) fn stderr_line(&mut self, line: impl Into<String>) {
        if self.stderr.len() == Self::STDERR_LINES {
            self.stderr.pop_front();
        }
        self.stderr.push_back(line.into());
        self.stderr_lines += 1;
    }

    /// The latest lines written to stderr (at most [`STDERR_LINES`](Self::STDERR_LINES)),
    /// and how many there were in all.
    pub(crate) fn stderr(&self) -> (impl ExactSizeIterator<Item = &str>, u64) {
        (self.stderr.iter().map(String::as_str), self.stderr_lines)
    }

    /// Marks the final screen as held until a key is pressed (`--dash-hold`).
    pub(crate) fn set_waiting_for_key(&mut self, waiting: bool) {
        self.waiting_for_key = waiting;
    }

    /// Whether the final screen waits for a key.
    pub(crate) fn is_waiting_for_key(&self) -> bool {
        self.waiting_for_key
    }

    /// Every task, in the order they appeared.
    pub(crate) fn tasks(&self) -> &[TaskStat] {
        &self.tasks
    }

    /// The task that gave progress last.
    pub(crate) fn current_task(&self) -> Option<&TaskStat> {
        self.current_task.and_then(|i| self.tasks.get(i))
    }

    /// A charted key's points.
    pub(crate) fn series(&self, key: &str) -> Option<&ChartSeries> {
        self.series.get(key)
    }

    /// The latest figures of every GPU, by index.
    pub(crate) fn gpus(&self) -> &BTreeMap<String, GpuStat> {
        &self.gpus
    }

    /// One row per source when events say where they come from (`bench`: a suite's process;
    /// `rank`: a rank fanned in), in order of appearance.
    pub(crate) fn sources(&self) -> &[SourceStat] {
        self.sources.rows()
    }

    /// The sum of the sources' latest rates, with its units, when two or more gave one.
    pub(crate) fn total_rate(&self) -> Option<(f64, &str)> {
        self.sources.total_rate()
    }

    /// A model watch's latest figures, a row per parameter in the module's order.
    pub(crate) fn watched(&self) -> &[ParamStat] {
        self.watch.rows()
    }

    /// The latest CPU, memory and process figures.
    pub(crate) fn cpu(&self) -> Option<&CpuStat> {
        self.cpu.as_ref()
    }

    /// Events observed.
    pub(crate) fn events(&self) -> u64 {
        self.events
    }

    /// Events the subscription dropped (see [`set_lag`](DashState::set_lag)).
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Events waiting in the subscription (see [`set_lag`](DashState::set_lag)).
    pub(crate) fn pending(&self) -> usize {
        self.pending
    }
}
