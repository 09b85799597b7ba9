use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

use super::adapter::poll_step;
use crate::{Event, Key, Value};

pin_project! {
    /// Stream of [`kflatten`](super::EventStreamOps::kflatten): an event whose field is a list
    /// becomes one event per element.
    #[must_use = "streams do nothing unless polled"]
    pub struct KFlatten<S> {
        #[pin]
        stream: S,
        key: Key,
        // The event being expanded and the elements still to emit, in reverse order.
        current: Option<(Event, Vec<Value>)>,
    }
}

impl<S> KFlatten<S> {
    pub(crate) fn new(stream: S, key: impl Into<Key>) -> Self {
        Self {
            stream,
            key: key.into(),
            current: None,
        }
    }
}

impl<S: Stream<Item = Event>> Stream for KFlatten<S> {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let this = self.project();
        if let Some((event, rest)) = this.current {
            if let Some(element) = rest.pop() {
                return Poll::Ready(Some(event.with(this.key.clone(), element)));
            }
            *this.current = None;
        }
        let (key, current) = (this.key, this.current);
        poll_step(this.stream, cx, |event| {
            let mut list: Vec<Value> = match event.get(key).map(Value::resolved) {
                Some(Ok(Value::List(items))) => items.iter().rev().cloned().collect(),
                // Not a list (or no such field): passes unchanged.
                _ => return Some(event),
            };
            // An empty list gives no event: the loop goes on to the next one.
            let first = list.pop()?;
            let out = event.with(key.clone(), first);
            *current = Some((event, list));
            Some(out)
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let queued = self.current.as_ref().map_or(0, |(_, rest)| rest.len());
        (queued, None)
    }
}

impl<S: FusedStream<Item = Event>> FusedStream for KFlatten<S> {
    fn is_terminated(&self) -> bool {
        self.current.is_none() && self.stream.is_terminated()
    }
}

impl<S: fmt::Debug> fmt::Debug for KFlatten<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KFlatten")
            .field("stream", &self.stream)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}
