use super::KeyedOp;
use crate::event::Fields;
use crate::{Event, Key};

/// Operator of [`keep`](super::EventStreamOps::keep) and
/// [`keep_as`](super::EventStreamOps::keep_as): keeps only some fields, optionally renamed;
/// events with none of them are dropped.
#[derive(Debug, Clone)]
pub struct Keep {
    /// `(field to read, name to give it)`.
    renames: Vec<(Key, Key)>,
}

impl Keep {
    pub(crate) fn new<K: Into<Key>, N: Into<Key>>(
        renames: impl IntoIterator<Item = (K, N)>,
    ) -> Self {
        Self {
            renames: renames
                .into_iter()
                .map(|(k, n)| (k.into(), n.into()))
                .collect(),
        }
    }
}

impl KeyedOp<Event> for Keep {
    type Out = Event;

    fn apply(&mut self, event: Event) -> Option<Event> {
        let fields: Fields = self
            .renames
            .iter()
            .filter_map(|(key, name)| event.get(key).map(|v| (name.clone(), v.clone())))
            .collect();
        if fields.is_empty() {
            return None;
        }
        Some(Event::from_parts(fields, event.time(), event.origin()))
    }
}
