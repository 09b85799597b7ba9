use super::KeyedOp;
use crate::{Event, Key};

/// Operator of [`where_any`](super::EventStreamOps::where_any): keeps the events that have at
/// least one of the keys.
#[derive(Debug, Clone)]
pub struct WhereAny {
    keys: Vec<Key>,
}

impl WhereAny {
    pub(crate) fn new<K: Into<Key>>(keys: impl IntoIterator<Item = K>) -> Self {
        Self {
            keys: keys.into_iter().map(Into::into).collect(),
        }
    }
}

impl KeyedOp<Event> for WhereAny {
    type Out = Event;

    fn apply(&mut self, event: Event) -> Option<Event> {
        self.keys.iter().any(|key| event.has(key)).then_some(event)
    }
}
