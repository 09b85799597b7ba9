//! Which scalars an event holds, and at which step: one series per numeric key (the
//! TensorBoard and MLflow sinks).

use giving::vocab::{WatchEvent, keys};
use giving::{Event, FromValue, Value};

/// Keys that identify rather than measure: never a series.
const NOT_SERIES: [&str; 8] = [
    keys::RANK,
    keys::LOCAL_RANK,
    keys::WORLD_SIZE,
    keys::TID,
    keys::SPAN_ID,
    keys::STEP,
    keys::PROGRESS,
    keys::SYNCED,
];

/// Assigns steps and picks the scalars of events, in order.
#[derive(Debug)]
pub(crate) struct Scalars {
    step_key: String,
    /// The last step the step key gave.
    last_step: Option<i64>,
    /// Events seen.
    events: i64,
}

impl Scalars {
    pub(crate) fn new(step_key: &str) -> Self {
        Self {
            step_key: step_key.to_owned(),
            last_step: None,
            events: 0,
        }
    }

    /// The step of `event` and its scalars as `(tag, value)`: the step key's value when the
    /// event has it, else the last one seen, else the number of events so far. A numeric
    /// field is a scalar (lazy values are read here); an event with a [`RANK`](keys::RANK)
    /// (fanned in from NATS) tags its series `key/rank<R>`.
    pub(crate) fn of(&mut self, event: &Event) -> (i64, Vec<(String, f32)>) {
        self.events += 1;
        if let Some(step) = event.get(&self.step_key).and_then(integer) {
            self.last_step = Some(step);
        }
        let step = self.last_step.unwrap_or(self.events - 1);
        let rank = event.get(keys::RANK).and_then(integer);
        // A model watch's statistics are per parameter: `grad/fc1.weight/norm`.
        let watched = WatchEvent::of(event).map(|watched| watched.label());
        let mut values = Vec::new();
        for (key, value) in event.iter() {
            if key == self.step_key || NOT_SERIES.contains(&key) || !maybe_numeric(value) {
                continue;
            }
            let Ok(x) = f64::from_value(value) else {
                continue;
            };
            let mut tag = match &watched {
                Some(prefix) => format!("{prefix}/{key}"),
                None => key.to_owned(),
            };
            if let Some(rank) = rank {
                tag = format!("{tag}/rank{rank}");
            }
            values.push((tag, x as f32));
        }
        (step, values)
    }
}

fn maybe_numeric(value: &Value) -> bool {
    matches!(
        value,
        Value::F64(_) | Value::I64(_) | Value::U64(_) | Value::Lazy(_)
    )
}

fn integer(value: &Value) -> Option<i64> {
    match *value {
        Value::I64(i) => Some(i),
        Value::U64(u) => i64::try_from(u).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_come_from_the_step_key_else_the_last_else_the_count() {
        let mut scalars = Scalars::new(keys::GLOBAL_STEP);
        let (step, values) = scalars.of(&Event::builder().field("rate", 5.0).build());
        assert_eq!((step, values), (0, vec![("rate".to_owned(), 5.0)]));
        let event = Event::builder()
            .field(keys::GLOBAL_STEP, 7u64)
            .field(keys::LOSS, 0.5)
            .field(keys::TASK, "train")
            .field(keys::STEP, 3u64)
            .build();
        assert_eq!(scalars.of(&event), (7, vec![("loss".to_owned(), 0.5)]));
        let ranked = Event::builder()
            .field("rate", 1.0)
            .field(keys::RANK, 2u64)
            .build();
        assert_eq!(
            scalars.of(&ranked),
            (7, vec![("rate/rank2".to_owned(), 1.0)])
        );
    }

    #[test]
    fn a_watched_parameter_has_series_of_its_own() {
        let mut scalars = Scalars::new(keys::GLOBAL_STEP);
        let event = Event::builder()
            .field(keys::GLOBAL_STEP, 100u64)
            .field(keys::PARAM, "fc1.weight")
            .field(keys::WATCH, "grad")
            .field(keys::NORM, 0.25)
            .field(keys::HIST, vec![1.0, 2.0])
            .build();
        assert_eq!(
            scalars.of(&event),
            (100, vec![("grad/fc1.weight/norm".to_owned(), 0.25)])
        );
    }
}
