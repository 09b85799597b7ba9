//! The event vocabulary: the keys the parts of giving agree on, and typed views of the events
//! they make. An instrument reads and gives through these, never through string literals.
//! `docs/events.md` lists every key with its type, who gives it and who reads it.
//!
//! ```
//! use giving::vocab::{StepEvent, keys};
//! use giving::Event;
//!
//! let event = Event::builder()
//!     .field(keys::TASK, "train")
//!     .field(keys::STEP, 4usize)
//!     .field(keys::BATCH, 32usize)
//!     .field(keys::SYNCED, true)
//!     .build();
//! let step = StepEvent::of(&event).unwrap();
//! assert_eq!((step.task, step.step, step.batch, step.synced), ("train", 4, Some(32), true));
//! ```

use crate::{Event, Value};

/// The keys, as constants.
pub mod keys {
    /// `str`: the name of the task a loop works on (`"train"`, `"valid"`, `"early_stop"`).
    /// Given by [`iterate`](fn@crate::iterate) and by the instruments' own events.
    pub const TASK: &str = "task";
    /// `u64`: the step within the current [`iterate`](fn@crate::iterate) loop (from 0; restarts
    /// every epoch). Given by `iterate`.
    pub const STEP: &str = "step";
    /// `u64`: the items processed by the step (its batch size). Given by `iterate`.
    pub const BATCH: &str = "batch";
    /// `[u64, u64]`: `(done, total)` of a task. Given by `iterate` and by early stop.
    pub const PROGRESS: &str = "progress";
    /// `bool` (`true` only; absent otherwise): the device was synced at the end of this step,
    /// so its timestamp closes a rate window. Given by `iterate`.
    pub const SYNCED: &str = "synced";
    /// `f64`: a throughput, in [`UNITS`]. Given by the rate instrument.
    pub const RATE: &str = "rate";
    /// `str`: the units of [`RATE`] (`"items/s"`, or `"steps/s"` when batch sizes are
    /// unknown).
    pub const UNITS: &str = "units";
    /// `f64` (often lazy: a tensor still on the device): the training loss.
    pub const LOSS: &str = "loss";
    /// `u64`: the step counted over the whole run (does not restart every epoch).
    pub const GLOBAL_STEP: &str = "global_step";
    /// `u64`: the epoch, from 0.
    pub const EPOCH: &str = "epoch";
    /// `u64`: the number of epochs the run plans (given with [`EPOCH`] at each epoch's start).
    pub const EPOCHS: &str = "epochs";
    /// `u64`: the number of steps the run plans over all its epochs (given with [`EPOCH`]);
    /// with [`GLOBAL_STEP`], the whole run's progress and ETA.
    pub const TOTAL_STEPS: &str = "total_steps";
    /// `f64`: the learning rate.
    pub const LR: &str = "lr";
    /// `f64`: validation accuracy, in 0..=1.
    pub const ACCURACY: &str = "accuracy";
    /// `f64`: training accuracy, in 0..=1 (a burn-train `Learner`'s `Accuracy` on its training
    /// split, given by giving-burn's `GivingLogger`).
    pub const TRAIN_ACCURACY: &str = "train_accuracy";
    /// `f64`: validation loss.
    pub const VAL_LOSS: &str = "val_loss";
    /// map of GPU index → `{load, memory: [used, total], temperature, power}`. Given by the
    /// GPU monitor.
    pub const GPUDATA: &str = "gpudata";
    /// map `{load, memory: [used, total]}` for the whole machine. Given by the CPU monitor.
    pub const CPUDATA: &str = "cpudata";
    /// map `{pid, rss_mb, cpu}` for this process. Given by the CPU monitor.
    pub const PROCESS: &str = "process";
    /// `str`: what went wrong in an instrument (given with [`INSTRUMENT`]).
    pub const PROBLEM: &str = "problem";
    /// `str`: the instrument an event is about.
    pub const INSTRUMENT: &str = "instrument";
    /// The task name of early stop's progress events.
    pub const EARLY_STOP_TASK: &str = "early_stop";
    /// `str`: the selector of the probe an event comes from, when a probe's events are given
    /// into a scope (`giving train --probe`, the `Probes` instrument).
    pub const PROBE: &str = "probe";
    /// map `{name, step, id}`: marks the begin and end events of a [`wrap!`](macro@crate::wrap)
    /// block.
    pub const WRAP: &str = "$wrap";
    /// `str`: a unique, pronounceable word [`tag`](crate::EventStreamOps::tag) puts first in
    /// each event (giving's `$word`).
    pub const TAG_WORD: &str = "$word";
    /// any: the group [`tag_group`](crate::EventStreamOps::tag_group) sets (giving's `$group`).
    pub const TAG_GROUP: &str = "$group";

    // giving-nats: what a rank's publisher and the fan-in report (docs/remote.md).

    /// `u64`: how many events the NATS publisher of this rank has dropped so far (its buffer
    /// was full while the server was unreachable). Given with [`INSTRUMENT`] `= "nats"` into
    /// the rank's own scope, at most once a second while the count grows, so the local log and
    /// dashboard show it and the watcher receives it once the server is back.
    pub const NATS_DROPPED: &str = "nats_dropped";
    /// `u64`: a rank's run ended, having published this many events; given by the fan-in with
    /// the rank's identity and [`NATS_DROPPED`] (its publisher's final drop count) when the
    /// rank's end record arrives.
    pub const RANK_END: &str = "rank_end";
    /// `u64`: how many records the NATS fan-in has rejected so far: bytes that were not a
    /// record, a rank that is not the one its subject names, or a rank outside the run's world
    /// size. Given by the fan-in with [`INSTRUMENT`] `= "nats"` at the first rejection and, if
    /// more followed, when it stops.
    pub const NATS_REJECTED: &str = "nats_rejected";
    /// `u64`: how many messages the NATS client of a fan-in has dropped so far because the
    /// watcher fell behind (the client's queue of 65,536 messages was full: a slow consumer),
    /// counted from the client's own reports, which pass through a bounded queue of their own:
    /// a lower bound. Given by the fan-in with [`INSTRUMENT`] `= "nats"` when the count grows
    /// (at most once a second) and, if more followed, when it stops.
    pub const NATS_LOST: &str = "nats_lost";

    // The timeline (`giving::timeline`): spans, instants and counter samples.

    /// `str`: the name of a span that begins (a [`tracepoint!`](crate::tracepoint), a
    /// `tracing` span entered); given with [`SPAN_ID`], [`TID`], [`THREAD_NAME`] and maybe
    /// [`CHANNEL`].
    pub const SPAN_BEGIN: &str = "span_begin";
    /// `str`: the name of a span that ends; given with the same [`SPAN_ID`] as its begin.
    pub const SPAN_END: &str = "span_end";
    /// `u64`: pairs a span's begin and end events (unique in the process).
    pub const SPAN_ID: &str = "span_id";
    /// `str`: the name of an instant event (a point in time on a channel).
    pub const INSTANT: &str = "instant";
    /// `bool`, `true`: a span begun and ended by label ([`Channel::begin`] and
    /// [`Channel::end`](crate::timeline::Channel::end)), drawn on a track of its label.
    ///
    /// [`Channel::begin`]: crate::timeline::Channel::begin
    pub const BY_LABEL: &str = "by_label";
    /// `str`: the trace channel of a span or instant (absent: the thread's own track).
    pub const CHANNEL: &str = "channel";
    /// `u64`: the id of the thread that gave a span or instant (the OS thread id on Linux).
    pub const TID: &str = "tid";
    /// `str`: the name of the thread that gave a span or instant.
    pub const THREAD_NAME: &str = "thread_name";
    /// `map`: extra arguments of a span or instant (a `tracing` span's fields).
    pub const ARGS: &str = "args";
    /// `str`: the graph (a group of counter tracks) of a counter sample.
    pub const GRAPH: &str = "graph";
    /// `str`: the series (a counter track) of a counter sample, given with [`GRAPH`] and
    /// [`VALUE`].
    pub const SERIES: &str = "series";
    /// `f64`: the value of a counter sample.
    pub const VALUE: &str = "value";
    /// `str`: the unit of a counter sample's [`VALUE`] (a [`Graph`](crate::timeline::Graph)
    /// made `with_unit`), or of a heatmap's values.
    pub const UNIT: &str = "unit";
    /// `str`: the name of a heatmap sample (a [`Heatmap`](crate::timeline::Heatmap)'s `add`),
    /// given with [`BUCKETS`], [`COUNTS`] and maybe [`UNIT`].
    pub const HEATMAP: &str = "heatmap";
    /// `list` of `str`: a heatmap's buckets, lowest first (`"< 1"`, `"[1, 2)"`, …, `">= 8"`).
    pub const BUCKETS: &str = "buckets";
    /// `list` of `u64`: how many of a heatmap sample's values fell in each of [`BUCKETS`].
    pub const COUNTS: &str = "counts";
    /// `str`: the name of a distributed run or a suite run, shared by its ranks and processes.
    pub const RUN: &str = "run";
    /// `u64`: a process's rank among [`WORLD_SIZE`] (`RANK` as launchers set it).
    pub const RANK: &str = "rank";
    /// `u64`: a process's rank on its own node (`LOCAL_RANK`).
    pub const LOCAL_RANK: &str = "local_rank";
    /// `u64`: how many ranks the run has (`WORLD_SIZE`).
    pub const WORLD_SIZE: &str = "world_size";
    /// `str`: the host name of the machine that gave the event.
    pub const HOST: &str = "host";
    /// `u64`: the configuration a tuning session evaluates (from 0), given by `giving-tuner`
    /// with `task = "tune"` and the keys below.
    pub const ITERATION: &str = "iteration";
    /// `str`: the dataset split a burn-train `Learner` event is about (`"train"`, `"valid"`,
    /// `"test"`), given by giving-burn's `GivingLogger` and `GivingRenderer` (feature `train`).
    pub const SPLIT: &str = "split";
    /// `bool`, `true`: the event sums up an epoch of its `split` (each metric its mean over the
    /// epoch), given by giving-burn's `GivingLogger` when burn-train ends a validation or test
    /// epoch.
    pub const EPOCH_END: &str = "epoch_end";
    /// `f64`: a tuned configuration's QoS (accuracy in percent on the tuning set; predicted
    /// when the session uses a QoS model).
    pub const QOS: &str = "qos";
    /// `f64`: the exact network's QoS minus [`QOS`].
    pub const QOS_LOSS: &str = "qos_loss";
    /// `f64`: a tuned configuration's speedup over the exact network (cost model).
    pub const SPEEDUP: &str = "speedup";
    /// `u64`: configurations kept so far by a tuning session (within the keep threshold).
    pub const KEPT: &str = "kept";
    /// `f64`: the best speedup among the configurations kept so far.
    pub const BEST: &str = "best";
    /// `str`: the suite benchmark a child process runs (`{bench}.{tag}`, e.g. `mlp.D0`), added
    /// by the suite runner to the events it reads from the child.
    pub const BENCH: &str = "bench";
    /// `map`: what a benchmark says about itself — its program and the versions of what it
    /// uses (`{"torch": "2.4.0", …}`). A voir benchmark gives it as `give(meta=…)`; a giving
    /// program's log header carries the same facts. The suite's `version` layer reads it.
    pub const META: &str = "meta";
    /// `bool`, `true`: the last event of a source (a suite's process that ended, a rank that
    /// finished), with its [`BENCH`] or [`RANK`]. A dashboard stops counting it in the total.
    pub const DONE: &str = "done";
    /// `str`: the name of one of voir's out-of-band events (`"stop"`, `"error"`, `"phase"`,
    /// …), in a line a voir benchmark writes to `DATA_FD` (`{"$event": "stop"}`) instead of
    /// data. The suite runner acts on it (docs/protocol.md); giving-log's
    /// `protocol::OutOfBand` reads it.
    pub const VOIR_EVENT: &str = "$event";
    /// any: what comes with a [`VOIR_EVENT`]: `{type, message}` for an `error`, `{name}` for a
    /// `phase`; absent for a `stop`.
    pub const VOIR_DATA: &str = "$data";
    /// `str`: the voir phase a suite's process is in (`init`, `parse_args`, `load_script`,
    /// `run_script`, `finalize`), added with [`BENCH`] by the suite runner to the `phase`
    /// event it gives again. The suite dashboard shows it in the process's row.
    pub const PHASE: &str = "phase";
    /// `str`: the parameter a model watch's event is about, named by its path in the module
    /// (`fc1.weight`, `blocks.2.conv.bias`), given by giving-burn's `ModelWatch` with
    /// [`WATCH`], [`GLOBAL_STEP`] and the statistics below.
    pub const PARAM: &str = "param";
    /// `str`: what a model watch's event measures of its [`PARAM`]: `"weight"`, `"grad"` (its
    /// gradient), `"update"` (the optimiser's step, [`UPDATE_RATIO`]) or `"act"` (a probed
    /// activation, its [`PARAM`] the probe's selector).
    pub const WATCH: &str = "watch";
    /// `f64` (lazy): the L2 norm of a watched tensor.
    pub const NORM: &str = "norm";
    /// `f64` (lazy): the mean of a watched tensor's elements.
    pub const MEAN: &str = "mean";
    /// `f64` (lazy): the standard deviation of a watched tensor's elements (population).
    pub const STD: &str = "std";
    /// `f64` (lazy): the smallest finite element of a watched tensor.
    pub const MIN: &str = "min";
    /// `f64` (lazy): the largest finite element of a watched tensor.
    pub const MAX: &str = "max";
    /// `f64` (lazy): the fraction of a watched tensor's elements that are exactly zero.
    pub const ZEROS: &str = "zeros";
    /// `f64` (lazy): how many of a watched tensor's elements are NaN.
    pub const NANS: &str = "nans";
    /// `f64` (lazy): how many of a watched tensor's elements are infinite.
    pub const INFS: &str = "infs";
    /// list of `f64` (lazy): a watched tensor's finite elements counted in equal bins from
    /// [`MIN`] to [`MAX`].
    pub const HIST: &str = "hist";
    /// `str`: the first parameter found non-finite (NaN or infinite elements in its weights or
    /// gradient, [`WATCH`] says which), or `"loss"` when the loss was and no watched parameter
    /// was; given with [`GLOBAL_STEP`], [`NANS`] and [`INFS`] by giving-instruments'
    /// `StopOnNonFinite`, which then stops the run.
    pub const NONFINITE: &str = "nonfinite";
    /// `f64` (lazy): ‖w after the step − w before‖ / ‖w before‖ of a parameter, the size of
    /// the optimiser's step relative to the weights.
    pub const UPDATE_RATIO: &str = "update_ratio";
}

mod monitor;
mod timeline;

pub use monitor::GpuReading;
pub use timeline::{CounterSample, HeatmapSample, InstantEvent, SpanEvent, SpanPhase};

/// A step of a loop, as [`iterate`](fn@crate::iterate) gives it: `{task, step, batch?,
/// progress?, synced?}`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepEvent<'a> {
    /// The task (`""` when the event has none).
    pub task: &'a str,
    /// The step within the loop.
    pub step: u64,
    /// The batch size, when known.
    pub batch: Option<u64>,
    /// `(done, total)`, when the loop's length is known.
    pub progress: Option<(u64, u64)>,
    /// Whether the device was synced at the end of this step.
    pub synced: bool,
}

impl<'a> StepEvent<'a> {
    /// The step event `event` is, if it has a numeric [`STEP`](keys::STEP).
    pub fn of(event: &'a Event) -> Option<Self> {
        let step = event.get(keys::STEP).and_then(as_u64)?;
        Some(Self {
            task: task_of(event),
            step,
            batch: event.get(keys::BATCH).and_then(as_u64),
            progress: event.get(keys::PROGRESS).and_then(pair),
            synced: matches!(event.get(keys::SYNCED), Some(Value::Bool(true))),
        })
    }
}

/// A model watch's event, as giving-burn's `ModelWatch` gives it: `{global_step, param,
/// watch, <statistics>}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchEvent<'a> {
    /// The parameter's path in the module (`fc1.weight`).
    pub param: &'a str,
    /// What is measured of it: `"weight"`, `"grad"`, `"update"` or `"act"`.
    pub watch: &'a str,
    /// The step it was measured at (0 when the event has none).
    pub step: u64,
}

impl<'a> WatchEvent<'a> {
    /// The watch event `event` is, if it has a [`PARAM`](keys::PARAM) and a
    /// [`WATCH`](keys::WATCH).
    ///
    /// ```
    /// use giving::Event;
    /// use giving::vocab::{WatchEvent, keys};
    ///
    /// let event = Event::builder()
    ///     .field(keys::GLOBAL_STEP, 100u64)
    ///     .field(keys::PARAM, "fc1.weight")
    ///     .field(keys::WATCH, "grad")
    ///     .field(keys::NORM, 0.5)
    ///     .build();
    /// let watched = WatchEvent::of(&event).unwrap();
    /// assert_eq!((watched.step, watched.label()), (100, "grad/fc1.weight".to_owned()));
    /// ```
    pub fn of(event: &'a Event) -> Option<Self> {
        Some(Self {
            param: event.get(keys::PARAM)?.as_str()?,
            watch: event.get(keys::WATCH)?.as_str()?,
            step: event.get(keys::GLOBAL_STEP).and_then(as_u64).unwrap_or(0),
        })
    }

    /// `grad/fc1.weight`: the name of this parameter's series of a statistic, grouped by
    /// what is watched (as TensorBoard groups tags by their first component).
    pub fn label(&self) -> String {
        format!("{}/{}", self.watch, self.param)
    }
}

/// The progress of a task: `{task, progress: (done, total)}`. The event that starts a loop
/// (`done == 0`, no `step`) is one; so are step events and early stop's count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgressEvent<'a> {
    /// The task (`""` when the event has none).
    pub task: &'a str,
    /// Done so far.
    pub done: u64,
    /// The total.
    pub total: u64,
}

impl<'a> ProgressEvent<'a> {
    /// The progress `event` reports, if its [`PROGRESS`](keys::PROGRESS) is a pair of
    /// non-negative integers.
    pub fn of(event: &'a Event) -> Option<Self> {
        let (done, total) = event.get(keys::PROGRESS).and_then(pair)?;
        Some(Self {
            task: task_of(event),
            done,
            total,
        })
    }

    /// The event for `(done, total)` of `task`.
    pub fn event(task: &str, done: u64, total: u64) -> Event {
        Event::builder()
            .field(keys::TASK, task)
            .field(keys::PROGRESS, Value::List(vec![done.into(), total.into()]))
            .build()
    }
}

/// A throughput reading, as the rate instrument gives it: `{task, rate, units}`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateEvent<'a> {
    /// The task measured (`""` when the event has none).
    pub task: &'a str,
    /// The rate.
    pub rate: f64,
    /// Its units (`""` when absent).
    pub units: &'a str,
}

impl<'a> RateEvent<'a> {
    /// The rate `event` reports, if its [`RATE`](keys::RATE) is a number.
    pub fn of(event: &'a Event) -> Option<Self> {
        let rate = event.get(keys::RATE).and_then(Value::as_f64)?;
        Some(Self {
            task: task_of(event),
            rate,
            units: event.get(keys::UNITS).and_then(Value::as_str).unwrap_or(""),
        })
    }

    /// The event for this reading, at `time`.
    pub fn event(&self, time: crate::Timestamp) -> Event {
        Event::builder()
            .field(keys::TASK, self.task)
            .field(keys::RATE, self.rate)
            .field(keys::UNITS, self.units)
            .time(time)
            .build()
    }
}

fn task_of(event: &Event) -> &str {
    event.get(keys::TASK).and_then(Value::as_str).unwrap_or("")
}

fn as_u64(value: &Value) -> Option<u64> {
    match *value {
        Value::U64(u) => Some(u),
        Value::I64(i) => u64::try_from(i).ok(),
        _ => None,
    }
}

fn pair(value: &Value) -> Option<(u64, u64)> {
    match value {
        Value::List(items) if items.len() == 2 => Some((as_u64(&items[0])?, as_u64(&items[1])?)),
        _ => None,
    }
}
