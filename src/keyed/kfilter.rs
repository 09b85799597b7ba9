use super::KeyedOp;
use crate::Event;

/// Operator of [`kfilter`](super::EventStreamOps::kfilter): keeps the events for which a
/// closure that reads their fields returns true.
#[derive(Debug, Clone)]
pub struct KFilter<F> {
    predicate: F,
}

impl<F> KFilter<F> {
    pub(crate) fn new(predicate: F) -> Self {
        Self { predicate }
    }
}

impl<F: FnMut(&Event) -> bool> KeyedOp<Event> for KFilter<F> {
    type Out = Event;

    fn apply(&mut self, event: Event) -> Option<Event> {
        (self.predicate)(&event).then_some(event)
    }
}
