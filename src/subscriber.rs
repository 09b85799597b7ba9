//! One subscriber's queue and the [`EventStream`] that drains it.
//!
//! The give side pushes and wakes the consumer only when it is parked, so a busy consumer costs
//! the producer a queue push and one load per event, never a wake-up. The handshake: the
//! consumer publishes `parked` and then re-checks the queue; the producer publishes the event
//! and then checks `parked`. A full fence on both sides guarantees that one of them sees the
//! other, so no event is left behind a sleeping consumer.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
use std::task::{Context, Poll};

use crossbeam_queue::{ArrayQueue, SegQueue};
use futures::Stream;
use futures::task::AtomicWaker;

use crate::Event;
use crate::scope::Scope;

/// How a subscriber receives events when it falls behind the loop that gives them.
///
/// Whatever the policy, giving never blocks and never waits for a consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Delivery {
    /// Every event, in order; the queue grows as long as the consumer lags (the default).
    #[default]
    Lossless,
    /// At most this many queued events: when full, the oldest is dropped and counted (see
    /// [`EventStream::dropped`]). A capacity of 0 is taken as 1.
    Bounded(usize),
    /// Only the most recent event is kept (dashboards): same as `Bounded(1)`.
    Latest,
}

enum Queue {
    Unbounded(SegQueue<Event>),
    Bounded(ArrayQueue<Event>),
}

pub(crate) struct Subscriber {
    queue: Queue,
    delivery: Delivery,
    waker: AtomicWaker,
    parked: AtomicBool,
    closed: AtomicBool,
    dropped: AtomicU64,
}

impl Subscriber {
    pub(crate) fn new(delivery: Delivery) -> Self {
        let queue = match delivery {
            Delivery::Lossless => Queue::Unbounded(SegQueue::new()),
            Delivery::Bounded(capacity) => Queue::Bounded(ArrayQueue::new(capacity.max(1))),
            Delivery::Latest => Queue::Bounded(ArrayQueue::new(1)),
        };
        Self {
            queue,
            delivery,
            waker: AtomicWaker::new(),
            parked: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
        }
    }

    pub(crate) fn push(&self, event: Event) {
        match &self.queue {
            Queue::Unbounded(queue) => queue.push(event),
            Queue::Bounded(queue) => {
                if queue.force_push(event).is_some() {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        fence(Ordering::SeqCst);
        if self.parked.load(Ordering::Relaxed) && self.parked.swap(false, Ordering::AcqRel) {
            self.waker.wake();
        }
    }

    fn pop(&self) -> Option<Event> {
        match &self.queue {
            Queue::Unbounded(queue) => queue.pop(),
            Queue::Bounded(queue) => queue.pop(),
        }
    }

    fn len(&self) -> usize {
        match &self.queue {
            Queue::Unbounded(queue) => queue.len(),
            Queue::Bounded(queue) => queue.len(),
        }
    }

    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.parked.store(false, Ordering::Relaxed);
        self.waker.wake();
    }

    fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        loop {
            if let Some(event) = self.pop() {
                return Poll::Ready(Some(event));
            }
            if self.closed.load(Ordering::Acquire) {
                // Everything pushed before the close is visible now: drain it, then end.
                return Poll::Ready(self.pop());
            }
            self.waker.register(cx.waker());
            self.parked.store(true, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if let Some(event) = self.pop() {
                self.parked.store(false, Ordering::Relaxed);
                return Poll::Ready(Some(event));
            }
            if !self.closed.load(Ordering::SeqCst) {
                return Poll::Pending;
            }
            self.parked.store(false, Ordering::Relaxed);
        }
    }
}

/// The events of a scope, as an asynchronous [`Stream`]: what
/// [`Given::stream`](crate::Given::stream) returns.
///
/// The subscription starts when the stream is created, not when it is first polled, so no event
/// given after that call is missed. The stream ends when its scope ends and every event given
/// before has been taken. Dropping it unsubscribes.
pub struct EventStream {
    subscriber: Arc<Subscriber>,
    scope: Arc<Scope>,
}

impl EventStream {
    pub(crate) fn new(subscriber: Arc<Subscriber>, scope: Arc<Scope>) -> Self {
        Self { subscriber, scope }
    }

    /// How many events this subscriber lost because its bounded queue was full (always 0 for
    /// [`Delivery::Lossless`]).
    pub fn dropped(&self) -> u64 {
        self.subscriber.dropped.load(Ordering::Relaxed)
    }

    /// How many events are waiting to be taken.
    pub fn pending(&self) -> usize {
        self.subscriber.len()
    }

    /// This stream's delivery policy.
    pub fn delivery(&self) -> Delivery {
        self.subscriber.delivery
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

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.subscriber.poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.subscriber.len(), None)
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        self.scope.unsubscribe(&self.subscriber);
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
        self.subscriber.dropped.load(Ordering::Relaxed)
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
