use std::marker::PhantomData;

use super::KeyedOp;
use crate::{Event, FromValue};

/// Operator of [`sole`](super::EventStreamOps::sole): the value of each single-field event,
/// read as `T`.
#[derive(Debug, Clone)]
pub struct Sole<T> {
    _type: PhantomData<fn() -> T>,
}

impl<T> Sole<T> {
    pub(crate) fn new() -> Self {
        Self { _type: PhantomData }
    }
}

impl<T: FromValue> KeyedOp<Event> for Sole<T> {
    type Out = T;

    fn apply(&mut self, event: Event) -> Option<T> {
        if event.len() != 1 {
            return None;
        }
        let (_, value) = event.iter().next()?;
        T::from_value(value).ok()
    }
}
