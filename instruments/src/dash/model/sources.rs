//! The dashboard's rows per source: when events say where they come from — a suite's process
//! (`bench`, added by `giving suite run`) or a rank of a distributed run (`rank`, fanned in
//! from NATS) — each source gets its own row: progress toward its early stop, rate, loss, and
//! for a voir benchmark the phase it is in.

use giving::vocab::{ProgressEvent, RateEvent, keys};
use giving::{Event, Value};

/// What the dashboard knows of one source.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SourceStat {
    /// `mlp.D0` (a suite process) or `rank 3` (a rank).
    pub(crate) name: String,
    /// The machine a rank runs on, once an event said it.
    pub(crate) host: Option<String>,
    /// The voir phase it is in (`run_script`), from the [`PHASE`](keys::PHASE) the suite
    /// runner adds to a voir benchmark's `phase` events.
    pub(crate) phase: Option<String>,
    /// Its latest rate.
    pub(crate) rate: Option<f64>,
    /// The rate's units.
    pub(crate) units: String,
    /// Its latest loss (read only when it is already a number: never a device read here).
    pub(crate) loss: Option<f64>,
    /// Its early stop's `(rates seen, stop)`, from its `early_stop` progress events.
    pub(crate) stop: Option<(u64, u64)>,
    /// The progress of its current task, `(done, total)`.
    pub(crate) progress: Option<(u64, u64)>,
    /// Events seen from it.
    pub(crate) events: u64,
    /// Whether it said it is done ([`DONE`](keys::DONE)): its process ended, its rank
    /// finished.
    pub(crate) done: bool,
}

/// The sources seen so far, in order of appearance.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sources {
    rows: Vec<SourceStat>,
}

impl Sources {
    /// Counts `event` for its source, if it names one.
    pub(crate) fn observe(&mut self, event: &Event) {
        // A rank's events carry its host, except the fan-in's own end marker: the row is the
        // rank's either way. Nothing is allocated unless the source is new.
        let Some(source) = Source::of(event) else {
            return;
        };
        let index = match self.rows.iter().position(|s| source.is(&s.name)) {
            Some(index) => index,
            None => {
                self.rows.push(SourceStat {
                    name: source.name(),
                    ..SourceStat::default()
                });
                self.rows.len() - 1
            }
        };
        let row = &mut self.rows[index];
        row.events += 1;
        if row.host.is_none() {
            row.host = event
                .get(keys::HOST)
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        if matches!(event.get(keys::DONE), Some(Value::Bool(true))) {
            row.done = true;
        }
        if let Some(phase) = event.get(keys::PHASE).and_then(Value::as_str) {
            row.phase = Some(phase.to_owned());
        }
        if let Some(rate) = RateEvent::of(event) {
            row.rate = Some(rate.rate);
            row.units = rate.units.to_owned();
        }
        if let Some(progress) = ProgressEvent::of(event) {
            let pair = Some((progress.done, progress.total));
            if progress.task == keys::EARLY_STOP_TASK {
                row.stop = pair;
            } else {
                row.progress = pair;
            }
        }
        match event.get(keys::LOSS) {
            Some(Value::Lazy(_)) | None => {}
            Some(loss) => row.loss = loss.as_f64(),
        }
    }

    /// The sources, in order of appearance.
    pub(crate) fn rows(&self) -> &[SourceStat] {
        &self.rows
    }

    /// The sum of the latest rates of the sources still running (the run's throughput now),
    /// when at least two gave one in the same units.
    pub(crate) fn total_rate(&self) -> Option<(f64, &str)> {
        let rated: Vec<&SourceStat> = self
            .rows
            .iter()
            .filter(|s| s.rate.is_some() && !s.done)
            .collect();
        let units = rated.first()?.units.as_str();
        (rated.len() >= 2 && rated.iter().all(|s| s.units == units))
            .then(|| (rated.iter().filter_map(|s| s.rate).sum(), units))
    }
}

/// The source an event names: its `bench`, else its `rank`.
enum Source<'a> {
    Bench(&'a str),
    Rank(u64),
}

impl<'a> Source<'a> {
    fn of(event: &'a Event) -> Option<Self> {
        if let Some(bench) = event.get(keys::BENCH).and_then(Value::as_str) {
            return Some(Source::Bench(bench));
        }
        Some(Source::Rank(event.get(keys::RANK)?.as_f64()? as u64))
    }

    /// Its row's name: `mlp.D0`, `rank 3`.
    fn name(&self) -> String {
        match self {
            Source::Bench(bench) => (*bench).to_owned(),
            Source::Rank(rank) => format!("rank {rank}"),
        }
    }

    /// Whether the row named `name` is this source's.
    fn is(&self, name: &str) -> bool {
        match self {
            Source::Bench(bench) => name == *bench,
            Source::Rank(rank) => name
                .strip_prefix("rank ")
                .is_some_and(|n| n.parse() == Ok(*rank)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(fields: &[(&'static str, Value)]) -> Event {
        Event::new(fields.iter().cloned())
    }

    #[test]
    fn each_bench_and_rank_gets_its_row_and_rates_add_up() {
        let mut sources = Sources::default();
        let rate = |source: (&'static str, Value), rate: f64| {
            event(&[
                source,
                (keys::RATE, Value::F64(rate)),
                (keys::UNITS, Value::from("items/s")),
            ])
        };
        sources.observe(&rate((keys::BENCH, Value::from("mlp.D0")), 100.0));
        sources.observe(&rate((keys::RANK, Value::U64(1)), 30.0));
        sources.observe(&rate((keys::BENCH, Value::from("mlp.D0")), 120.0));
        sources.observe(&event(&[
            (keys::BENCH, Value::from("mlp.D0")),
            (keys::TASK, Value::from(keys::EARLY_STOP_TASK)),
            (keys::PROGRESS, Value::List(vec![2u64.into(), 3u64.into()])),
        ]));
        sources.observe(&event(&[
            (keys::RANK, Value::U64(1)),
            (keys::HOST, Value::from("node2")),
            (keys::LOSS, Value::F64(0.5)),
        ]));
        sources.observe(&event(&[(keys::LOSS, Value::F64(9.0))]));
        let rows = sources.rows();
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["mlp.D0", "rank 1"]);
        assert_eq!(
            (rows[0].rate, rows[0].stop, rows[0].events),
            (Some(120.0), Some((2, 3)), 3)
        );
        assert_eq!(
            (rows[1].loss, rows[1].host.as_deref()),
            (Some(0.5), Some("node2"))
        );
        assert_eq!(sources.total_rate(), Some((150.0, "items/s")));
    }

    #[test]
    fn a_source_that_is_done_leaves_the_total() {
        let mut sources = Sources::default();
        for (bench, rate) in [("a.0", 1.0), ("a.1", 2.0), ("b.0", 4.0)] {
            sources.observe(&event(&[
                (keys::BENCH, Value::from(bench)),
                (keys::RATE, Value::F64(rate)),
            ]));
        }
        assert_eq!(sources.total_rate(), Some((7.0, "")));
        sources.observe(&event(&[
            (keys::BENCH, Value::from("b.0")),
            (keys::DONE, Value::Bool(true)),
        ]));
        assert_eq!(sources.total_rate(), Some((3.0, "")));
        assert!(sources.rows()[2].done);
    }

    #[test]
    fn a_voir_benchmark_shows_the_phase_it_is_in() {
        let mut sources = Sources::default();
        let phase = |name: &str| {
            event(&[
                (keys::BENCH, Value::from("py.D0")),
                (keys::PHASE, Value::from(name)),
            ])
        };
        sources.observe(&phase("init"));
        assert_eq!(sources.rows()[0].phase.as_deref(), Some("init"));
        sources.observe(&phase("run_script"));
        sources.observe(&event(&[
            (keys::BENCH, Value::from("py.D0")),
            (keys::RATE, Value::F64(5.0)),
        ]));
        assert_eq!(sources.rows()[0].phase.as_deref(), Some("run_script"));
    }

    #[test]
    fn one_source_has_no_total() {
        let mut sources = Sources::default();
        sources.observe(&event(&[
            (keys::BENCH, Value::from("a.0")),
            (keys::RATE, Value::F64(1.0)),
        ]));
        assert_eq!(sources.total_rate(), None);
    }
}
