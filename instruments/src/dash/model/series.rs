//! A chart's points, thinned as the run grows, and how often it reads a lazy value.

use std::time::Duration;

use giving::vocab::keys;
use giving::{Event, Timestamp, Value};

/// Points kept per chart; past this, every other point is dropped (the chart keeps its shape
/// over the whole run at half the resolution).
const MAX_POINTS: usize = 2048;

/// A chart's points: `(step, value)`.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChartSeries {
    /// The points, in arrival order.
    pub(crate) points: Vec<(f64, f64)>,
    stride: u64,
    seen: u64,
    /// Events that carried the key (the x of events without a step).
    count: u64,
    /// When the last lazy value was read for this chart.
    last_read: Option<Timestamp>,
}

impl ChartSeries {
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

    /// Counts an event that carries the chart's key with `value`, and charts it when it is a
    /// finite number: at most one lazy value still unread per `read_every` of event time is
    /// read (each read makes the backend hand the value over). The x is the event's
    /// `global_step`, else its `step`, else the count of events.
    pub(super) fn observe(&mut self, event: &Event, value: &Value, read_every: Duration) {
        let time = event.time();
        self.count += 1;
        let unread = matches!(value, Value::Lazy(lazy) if !lazy.is_resolved());
        if unread {
            let recent = self
                .last_read
                .is_some_and(|last| time.duration_since(last) < read_every);
            if recent {
                return;
            }
            self.last_read = Some(time);
        }
        let Some(y) = value.as_f64().filter(|y| y.is_finite()) else {
            return;
        };
        let x = [keys::GLOBAL_STEP, keys::STEP]
            .iter()
            .find_map(|k| event.get(k).and_then(Value::as_f64))
            .unwrap_or((self.count - 1) as f64);
        self.push(x, y);
    }
}
