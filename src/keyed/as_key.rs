use super::KeyedOp;
use crate::{Event, Key, Value};

/// Operator of [`as_key`](super::ValueStreamOps::as_key): wraps each item into an event with one
/// field.
#[derive(Debug, Clone)]
pub struct AsKey {
    key: Key,
}

impl AsKey {
    pub(crate) fn new(key: impl Into<Key>) -> Self {
        Self { key: key.into() }
    }
}

impl<T: Into<Value>> KeyedOp<T> for AsKey {
    type Out = Event;

    fn apply(&mut self, item: T) -> Option<Event> {
        Some(Event::builder().field(self.key.clone(), item).build())
    }
}
