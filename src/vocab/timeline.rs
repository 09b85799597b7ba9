//! Typed views of the timeline's events (`giving::timeline`), exported by `vocab`.

use super::keys;
use crate::{Event, Value};

/// Whether a span event opens or closes its span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpanPhase {
    /// [`SPAN_BEGIN`](keys::SPAN_BEGIN).
    Begin,
    /// [`SPAN_END`](keys::SPAN_END).
    End,
}

/// A span's begin or end: `{span_begin | span_end: name, span_id, tid, thread_name,
/// channel?, args?}`.
///
/// ```
/// use giving::Event;
/// use giving::vocab::{SpanEvent, SpanPhase, keys};
///
/// let event = Event::builder()
///     .field(keys::SPAN_END, "forward")
///     .field(keys::SPAN_ID, 7u64)
///     .field(keys::TID, 12u64)
///     .build();
/// let span = SpanEvent::of(&event).unwrap();
/// assert_eq!((span.phase, span.name, span.id, span.tid), (SpanPhase::End, "forward", 7, Some(12)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpanEvent<'a> {
    /// Begin or end.
    pub phase: SpanPhase,
    /// The span's name.
    pub name: &'a str,
    /// Pairs the begin and the end.
    pub id: u64,
    /// The channel, `None` for the thread's own track.
    pub channel: Option<&'a str>,
    /// The thread that gave it, when recorded.
    pub tid: Option<u64>,
    /// That thread's name, when recorded.
    pub thread_name: Option<&'a str>,
    /// Begun by label ([`BY_LABEL`](keys::BY_LABEL)): drawn on a track of its name.
    pub by_label: bool,
}

impl<'a> SpanEvent<'a> {
    /// The span event `event` is, if it has a string [`SPAN_BEGIN`](keys::SPAN_BEGIN) or
    /// [`SPAN_END`](keys::SPAN_END) and a numeric [`SPAN_ID`](keys::SPAN_ID).
    pub fn of(event: &'a Event) -> Option<Self> {
        let (phase, name) = match (event.get(keys::SPAN_BEGIN), event.get(keys::SPAN_END)) {
            (Some(Value::Str(name)), _) => (SpanPhase::Begin, name),
            (_, Some(Value::Str(name))) => (SpanPhase::End, name),
            _ => return None,
        };
        Some(Self {
            phase,
            name,
            id: event.get(keys::SPAN_ID).and_then(unsigned)?,
            channel: str_of(event, keys::CHANNEL),
            tid: event.get(keys::TID).and_then(unsigned),
            thread_name: str_of(event, keys::THREAD_NAME),
            by_label: matches!(event.get(keys::BY_LABEL), Some(Value::Bool(true))),
        })
    }
}

/// An instant event: `{instant: name, tid, thread_name, channel?}`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InstantEvent<'a> {
    /// The event's name.
    pub name: &'a str,
    /// The channel, `None` for the thread's own track.
    pub channel: Option<&'a str>,
    /// The thread that gave it, when recorded.
    pub tid: Option<u64>,
    /// That thread's name, when recorded.
    pub thread_name: Option<&'a str>,
}

impl<'a> InstantEvent<'a> {
    /// The instant `event` is, if it has a string [`INSTANT`](keys::INSTANT).
    pub fn of(event: &'a Event) -> Option<Self> {
        Some(Self {
            name: str_of(event, keys::INSTANT)?,
            channel: str_of(event, keys::CHANNEL),
            tid: event.get(keys::TID).and_then(unsigned),
            thread_name: str_of(event, keys::THREAD_NAME),
        })
    }
}

/// A sample of a graph's series: `{graph, series, value, unit?}`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CounterSample<'a> {
    /// The graph (`""` when absent).
    pub graph: &'a str,
    /// The series.
    pub series: &'a str,
    /// The value (a lazy value is read).
    pub value: f64,
    /// The value's unit, when given.
    pub unit: Option<&'a str>,
}

impl<'a> CounterSample<'a> {
    /// The sample `event` is, if it has a string [`SERIES`](keys::SERIES) and a numeric
    /// [`VALUE`](keys::VALUE).
    pub fn of(event: &'a Event) -> Option<Self> {
        Some(Self {
            graph: str_of(event, keys::GRAPH).unwrap_or(""),
            series: str_of(event, keys::SERIES)?,
            value: event.get(keys::VALUE).and_then(Value::as_f64)?,
            unit: str_of(event, keys::UNIT),
        })
    }
}

/// A heatmap sample: how many of the values added at one time fell in each bucket,
/// `{heatmap, buckets, counts, unit?}`.
///
/// ```
/// use giving::Event;
/// use giving::timeline::Heatmap;
/// use giving::vocab::{HeatmapSample, keys};
///
/// let latency = Heatmap::new("latency", [1.0, 10.0]).with_unit("ms");
/// let event = Event::builder()
///     .field(keys::HEATMAP, "latency")
///     .field(keys::BUCKETS, latency.buckets().to_vec())
///     .field(keys::COUNTS, vec![0u64, 2, 1])
///     .field(keys::UNIT, "ms")
///     .build();
/// let sample = HeatmapSample::of(&event).unwrap();
/// assert_eq!(sample.buckets, ["< 1", "[1, 10)", ">= 10"]);
/// assert_eq!((sample.counts, sample.unit), (vec![0, 2, 1], Some("ms")));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HeatmapSample<'a> {
    /// The heatmap's name.
    pub name: &'a str,
    /// The buckets' names, lowest first.
    pub buckets: Vec<&'a str>,
    /// The count of each bucket (as many as buckets).
    pub counts: Vec<u64>,
    /// The unit of the values, when given.
    pub unit: Option<&'a str>,
}

impl<'a> HeatmapSample<'a> {
    /// The sample `event` is, if it has a string [`HEATMAP`](keys::HEATMAP), a list of
    /// strings [`BUCKETS`](keys::BUCKETS) and as many counts in [`COUNTS`](keys::COUNTS).
    pub fn of(event: &'a Event) -> Option<Self> {
        let name = str_of(event, keys::HEATMAP)?;
        let (Some(Value::List(buckets)), Some(Value::List(counts))) =
            (event.get(keys::BUCKETS), event.get(keys::COUNTS))
        else {
            return None;
        };
        let buckets: Vec<&str> = buckets
            .iter()
            .map(|b| match b {
                Value::Str(s) => Some(&**s),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let counts: Vec<u64> = counts.iter().map(unsigned).collect::<Option<_>>()?;
        (buckets.len() == counts.len()).then_some(Self {
            name,
            buckets,
            counts,
            unit: str_of(event, keys::UNIT),
        })
    }
}

fn str_of<'a>(event: &'a Event, key: &str) -> Option<&'a str> {
    match event.get(key)? {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

fn unsigned(value: &Value) -> Option<u64> {
    match *value {
        Value::U64(u) => Some(u),
        Value::I64(i) => u64::try_from(i).ok(),
        _ => None,
    }
}
