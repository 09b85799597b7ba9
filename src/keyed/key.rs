use std::marker::PhantomData;

use super::KeyedOp;
use crate::{Event, FromValue, Key, ValueError};

/// Operator of [`key`](super::EventStreamOps::key): the values of one key, read as `T`.
#[derive(Debug, Clone)]
pub struct KeyOf<T> {
    key: Key,
    _type: PhantomData<fn() -> T>,
}

impl<T> KeyOf<T> {
    pub(crate) fn new(key: impl Into<Key>) -> Self {
        Self {
            key: key.into(),
            _type: PhantomData,
        }
    }
}

impl<T: FromValue> KeyedOp<Event> for KeyOf<T> {
    type Out = T;

    fn apply(&mut self, event: Event) -> Option<T> {
        T::from_value(event.get(&self.key)?).ok()
    }
}

/// Operator of [`try_key`](super::EventStreamOps::try_key): the values of one key, with an
/// error for each one that is not a `T`.
#[derive(Debug, Clone)]
pub struct TryKeyOf<T> {
    key: Key,
    _type: PhantomData<fn() -> T>,
}

impl<T> TryKeyOf<T> {
    pub(crate) fn new(key: impl Into<Key>) -> Self {
        Self {
            key: key.into(),
            _type: PhantomData,
        }
    }
}

impl<T: FromValue> KeyedOp<Event> for TryKeyOf<T> {
    type Out = Result<T, ValueError>;

    fn apply(&mut self, event: Event) -> Option<Result<T, ValueError>> {
        event.has(&self.key).then(|| event.get_as(&self.key))
    }
}
