use super::KeyedOp;
use crate::{Event, Key, Value};

/// Operator of [`augment`](super::EventStreamOps::augment): adds (or replaces) a field computed
/// from each event.
#[derive(Debug, Clone)]
pub struct Augment<F> {
    key: Key,
    f: F,
}

impl<F> Augment<F> {
    pub(crate) fn new(key: impl Into<Key>, f: F) -> Self {
        Self { key: key.into(), f }
    }
}

impl<V: Into<Value>, F: FnMut(&Event) -> V> KeyedOp<Event> for Augment<F> {
    type Out = Event;

    fn apply(&mut self, event: Event) -> Option<Event> {
        let value = (self.f)(&event);
        Some(event.with(self.key.clone(), value))
    }
}
