use super::KeyedOp;
use crate::Event;

/// Operator of [`kmap`](super::EventStreamOps::kmap): maps each event through a closure that
/// reads its fields.
#[derive(Debug, Clone)]
pub struct KMap<F> {
    f: F,
}

impl<F> KMap<F> {
    pub(crate) fn new(f: F) -> Self {
        Self { f }
    }
}

impl<T, F: FnMut(&Event) -> T> KeyedOp<Event> for KMap<F> {
    type Out = T;

    fn apply(&mut self, event: Event) -> Option<T> {
        Some((self.f)(&event))
    }
}
