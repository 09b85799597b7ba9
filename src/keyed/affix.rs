use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

use crate::{Event, Key, Value};

pin_project! {
    /// Stream of [`affix`](super::EventStreamOps::affix) and
    /// [`affix_with`](super::EventStreamOps::affix_with): each event with the next item of
    /// another stream set as one more field.
    #[must_use = "streams do nothing unless polled"]
    pub struct Affix<S, O: Stream> {
        #[pin]
        stream: S,
        #[pin]
        other: O,
        key: Key,
        event: Option<Event>,
        value: Option<O::Item>,
        done: bool,
    }
}

impl<S, O: Stream> Affix<S, O> {
    pub(crate) fn new(stream: S, key: impl Into<Key>, other: O) -> Self {
        Self {
            stream,
            other,
            key: key.into(),
            event: None,
            value: None,
            done: false,
        }
    }
}

impl<S, O> Stream for Affix<S, O>
where
    S: Stream<Item = Event>,
    O: Stream,
    O::Item: Into<Value>,
{
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let mut this = self.project();
        if *this.done {
            return Poll::Ready(None);
        }
        // As `zip`: poll both sides, keep what is ready, emit when both are.
        if this.event.is_none() {
            match this.stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(event)) => *this.event = Some(event),
                Poll::Ready(None) => {
                    *this.done = true;
                    return Poll::Ready(None);
                }
                Poll::Pending => {}
            }
        }
        if this.value.is_none() {
            match this.other.as_mut().poll_next(cx) {
                Poll::Ready(Some(value)) => *this.value = Some(value),
                Poll::Ready(None) => {
                    *this.done = true;
                    return Poll::Ready(None);
                }
                Poll::Pending => {}
            }
        }
        if this.event.is_some() && this.value.is_some() {
            let event = this.event.take().expect("checked");
            let value = this.value.take().expect("checked");
            return Poll::Ready(Some(event.with(this.key.clone(), value)));
        }
        Poll::Pending
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            return (0, Some(0));
        }
        let pending = |held: bool, (lo, hi): (usize, Option<usize>)| {
            let held = usize::from(held);
            (
                lo.saturating_add(held),
                hi.and_then(|h| h.checked_add(held)),
            )
        };
        let (lo1, hi1) = pending(self.event.is_some(), self.stream.size_hint());
        let (lo2, hi2) = pending(self.value.is_some(), self.other.size_hint());
        let hi = match (hi1, hi2) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        (lo1.min(lo2), hi)
    }
}

impl<S, O> FusedStream for Affix<S, O>
where
    S: FusedStream<Item = Event>,
    O: Stream,
    O::Item: Into<Value>,
{
    fn is_terminated(&self) -> bool {
        self.done || (self.stream.is_terminated() && self.event.is_none())
    }
}

impl<S: fmt::Debug, O: Stream + fmt::Debug> fmt::Debug for Affix<S, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Affix")
            .field("stream", &self.stream)
            .field("other", &self.other)
            .field("key", &self.key)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
