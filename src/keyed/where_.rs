use std::fmt;

use super::KeyedOp;
use crate::{Event, Key, Value};

type Predicate = Box<dyn FnMut(&Value) -> bool + Send>;

enum Condition {
    Present(Key),
    Absent(Key),
    Equals(Key, Value),
    Matches(Key, Predicate),
}

/// Operator of [`where_`](super::EventStreamOps::where_), [`where_eq`](super::EventStreamOps::where_eq)
/// and [`where_with`](super::EventStreamOps::where_with): keeps the events that meet every
/// condition.
pub struct Where {
    conditions: Vec<Condition>,
}

impl Where {
    pub(crate) fn keys<K: AsRef<str>>(keys: impl IntoIterator<Item = K>) -> Self {
        let conditions = keys
            .into_iter()
            .map(|key| match key.as_ref().strip_prefix('!') {
                Some(absent) => Condition::Absent(Key::from(absent.to_owned())),
                None => Condition::Present(Key::from(key.as_ref().to_owned())),
            })
            .collect();
        Self { conditions }
    }

    pub(crate) fn equals(key: impl Into<Key>, value: impl Into<Value>) -> Self {
        Self {
            conditions: vec![Condition::Equals(key.into(), value.into())],
        }
    }

    pub(crate) fn matches(
        key: impl Into<Key>,
        predicate: impl FnMut(&Value) -> bool + Send + 'static,
    ) -> Self {
        Self {
            conditions: vec![Condition::Matches(key.into(), Box::new(predicate))],
        }
    }

    fn accepts(&mut self, event: &Event) -> bool {
        self.conditions.iter_mut().all(|condition| match condition {
            Condition::Present(key) => event.has(key),
            Condition::Absent(key) => !event.has(key),
            Condition::Equals(key, expected) => event.get(key).is_some_and(|v| v == expected),
            Condition::Matches(key, predicate) => event.get(key).is_some_and(predicate),
        })
    }
}

impl KeyedOp<Event> for Where {
    type Out = Event;

    fn apply(&mut self, event: Event) -> Option<Event> {
        self.accepts(&event).then_some(event)
    }
}

impl fmt::Debug for Where {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Where")
            .field("conditions", &self.conditions.len())
            .finish()
    }
}
