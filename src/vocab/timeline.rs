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

/// A sample of a graph's series: `{graph, series, value}`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CounterSample<'a> {
    /// The graph (`""` when absent).
    pub graph: &'a str,
    /// The series.
    pub series: &'a str,
    /// The value (a lazy value is read).
    pub value: f64,
}

impl<'a> CounterSample<'a> {
    /// The sample `event` is, if it has a string [`SERIES`](keys::SERIES) and a numeric
    /// [`VALUE`](keys::VALUE).
    pub fn of(event: &'a Event) -> Option<Self> {
        Some(Self {
            graph: str_of(event, keys::GRAPH).unwrap_or(""),
            series: str_of(event, keys::SERIES)?,
            value: event.get(keys::VALUE).and_then(Value::as_f64)?,
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
