use super::KeyedOp;
use super::kmerge::merge_into;
use crate::event::Fields;
use crate::{Event, Key, Value};

/// Operator of [`collect_between`](super::EventStreamOps::collect_between) and
/// [`collect_between_by`](super::EventStreamOps::collect_between_by): merges the events from
/// one with the key `start` up to one with the key `end` into one event.
#[derive(Debug, Clone)]
pub struct CollectBetween {
    start: Key,
    end: Key,
    common: Option<Key>,
    /// Groups being collected: the value of `common` (`Null` without one) and the fields so far.
    open: Vec<(Value, Fields)>,
}

impl CollectBetween {
    pub(crate) fn new(start: impl Into<Key>, end: impl Into<Key>, common: Option<Key>) -> Self {
        Self {
            start: start.into(),
            end: end.into(),
            common,
            open: Vec::new(),
        }
    }
}

impl KeyedOp<Event> for CollectBetween {
    type Out = Event;

    fn apply(&mut self, event: Event) -> Option<Event> {
        let group = match &self.common {
            Some(common) => event.get(common)?.clone(),
            None => Value::Null,
        };
        let slot = self.open.iter().position(|(g, _)| *g == group);
        let slot = if event.has(&self.start) {
            // A start (re)opens the group: what was collected before it is dropped.
            let mut fields = Fields::new();
            merge_into(&mut fields, &event);
            match slot {
                Some(i) => self.open[i].1 = fields,
                None => self.open.push((group, fields)),
            }
            slot.unwrap_or(self.open.len() - 1)
        } else {
            // Outside a start..end group, events are ignored.
            let i = slot?;
            merge_into(&mut self.open[i].1, &event);
            i
        };
        if !event.has(&self.end) {
            return None;
        }
        let (_, fields) = self.open.swap_remove(slot);
        Some(Event::from_parts(fields, event.time(), event.origin()))
    }
}
