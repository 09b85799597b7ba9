use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::channel::mpsc;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

use super::adapter::poll_step;
use crate::{Event, Key, Value};

pin_project! {
    /// Stream of [`kgroup_by`](super::EventStreamOps::kgroup_by): `(value, group)` at the first
    /// event with each value of a key.
    #[must_use = "streams do nothing unless polled"]
    pub struct KGroupBy<S> {
        #[pin]
        stream: S,
        key: Key,
        // A handful of values: a vector compared with `==` (values are not `Hash`).
        groups: Vec<(Value, mpsc::UnboundedSender<Event>)>,
    }
}

impl<S> KGroupBy<S> {
    pub(crate) fn new(stream: S, key: impl Into<Key>) -> Self {
        Self {
            stream,
            key: key.into(),
            groups: Vec::new(),
        }
    }
}

impl<S: Stream<Item = Event>> Stream for KGroupBy<S> {
    type Item = (Value, KGroup);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<(Value, KGroup)>> {
        let this = self.project();
        let (key, groups) = (this.key, this.groups);
        let next = ready!(poll_step(this.stream, cx, |event| {
            let value = event.get(key)?;
            match groups.iter().find(|(v, _)| v == value) {
                Some((_, sender)) => {
                    // A dropped group discards its later events.
                    let _ = sender.unbounded_send(event);
                    None
                }
                None => {
                    let value = value.clone();
                    let (sender, receiver) = mpsc::unbounded();
                    let _ = sender.unbounded_send(event);
                    groups.push((value.clone(), sender));
                    Some((value, KGroup { receiver }))
                }
            }
        }));
        if next.is_none() {
            // Completing the upstream completes every group.
            groups.clear();
        }
        Poll::Ready(next)
    }
}

/// The events of one group of [`kgroup_by`](super::EventStreamOps::kgroup_by), in order.
///
/// Fed while the outer [`KGroupBy`] stream is polled; completes when the upstream completes.
#[derive(Debug)]
#[must_use = "streams do nothing unless polled"]
pub struct KGroup {
    receiver: mpsc::UnboundedReceiver<Event>,
}

impl Stream for KGroup {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        Pin::new(&mut self.receiver).poll_next(cx)
    }
}

impl<S: FusedStream<Item = Event>> FusedStream for KGroupBy<S> {
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}

impl FusedStream for KGroup {
    fn is_terminated(&self) -> bool {
        self.receiver.is_terminated()
    }
}

impl<S: fmt::Debug> fmt::Debug for KGroupBy<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KGroupBy")
            .field("stream", &self.stream)
            .field("key", &self.key)
            .field("groups", &self.groups.len())
            .finish()
    }
}
