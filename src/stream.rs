//! [`EventStream`]: the asynchronous stream of a scope's events, draining one subscriber queue,
//! and [`Lag`], which reads how far it has fallen behind.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use futures::stream::FusedStream;

use crate::Event;
use crate::queue::{Delivery, Subscriber};
use crate::scope::Scope;

/// The events of a scope, as an asynchronous [`Stream`]: what
/// [`Given::stream`](crate::Given::stream) returns.
///
/// The subscription starts when the stream is created, not when it is first polled, so no event
/// given after that call is missed. The stream ends when its scope ends and every event given
/// before has been taken. Dropping it unsubscribes.
pub struct EventStream {
    subscriber: Arc<Subscriber>,
    scope: Arc<Scope>,
    /// Whether the stream has ended (returned `None`), for [`FusedStream`].
    ended: bool,
}

impl EventStream {
    pub(crate) fn new(subscriber: Arc<Subscriber>, scope: Arc<Scope>) -> Self {
        Self {
            subscriber,
            scope,
            ended: false,
        }
    }

    /// How many events this subscriber lost because its bounded queue was full (always 0 for
    /// [`Delivery::Lossless`]).
    pub fn dropped(&self) -> u64 {
        self.subscriber.dropped()
    }

    /// How many events are waiting to be taken.
    pub fn pending(&self) -> usize {
        self.subscriber.len()
    }

    /// This stream's delivery policy.
    pub fn delivery(&self) -> Delivery {
        self.subscriber.delivery()
    }

    /// A handle that reads this stream's lag after the stream has been moved into a pipeline.
    ///
    /// ```
    /// use giving::{Delivery, give, given};
    ///
    /// let gv = given();
    /// let stream = gv.stream_with(Delivery::Bounded(2));
    /// let lag = stream.lag();
    /// for step in 0..5 {
    ///     give!(step);
    /// }
    /// assert_eq!(lag.dropped(), 3);
    /// assert_eq!(lag.pending(), 2);
    /// # drop(stream);
    /// ```
    pub fn lag(&self) -> Lag {
        Lag {
            subscriber: self.subscriber.clone(),
        }
    }
}

impl Stream for EventStream {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let next = self.subscriber.poll_next(cx);
        if let Poll::Ready(None) = next {
            self.ended = true;
        }
        next
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.subscriber.len(), None)
    }
}

impl FusedStream for EventStream {
    fn is_terminated(&self) -> bool {
        self.ended
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        self.scope.unsubscribe(&self.subscriber);
        self.subscriber.detach();
    }
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("delivery", &self.delivery())
            .field("pending", &self.pending())
            .field("dropped", &self.dropped())
            .finish()
    }
}

/// Reads how far a subscriber has fallen behind; see [`EventStream::lag`].
#[derive(Clone)]
pub struct Lag {
    subscriber: Arc<Subscriber>,
}

impl Lag {
    /// Events dropped so far by a bounded or latest-only subscriber.
    pub fn dropped(&self) -> u64 {
        self.subscriber.dropped()
    }

    /// Events queued and not yet taken.
    pub fn pending(&self) -> usize {
        self.subscriber.len()
    }
}

impl std::fmt::Debug for Lag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lag")
            .field("dropped", &self.dropped())
            .field("pending", &self.pending())
            .finish()
    }
}
