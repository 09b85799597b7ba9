//! One subscriber's queue: what the give side pushes into and an
//! [`EventStream`](crate::EventStream) drains. A leaf: it knows events, nothing of scopes or
//! routing.
//!
//! The give side pushes and wakes the consumer only when it is parked, so a busy consumer costs
//! the producer a queue push and one load per event, never a wake-up. The handshake: the
//! consumer publishes `parked` and then re-checks the queue; the producer publishes the event
//! and then checks `parked`. A full fence on both sides guarantees that one of them sees the
//! other, so no event is left behind a sleeping consumer.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
use std::task::{Context, Poll};
use std::time::Duration;

use crossbeam_queue::{ArrayQueue, SegQueue};
use futures::task::AtomicWaker;

use crate::Event;
use crate::pace;

/// How a subscriber receives events when it falls behind the loop that gives them.
///
/// Whatever the policy, giving never blocks and never waits for a consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Delivery {
    /// Every event, in order; the queue grows as long as the consumer lags (the default).
    #[default]
    Lossless,
    /// At most this many queued events: when full, the oldest is dropped and counted (see
    /// [`EventStream::dropped`](crate::EventStream::dropped)). A capacity of 0 is taken as 1.
    Bounded(usize),
    /// Only the most recent event is kept (dashboards): same as `Bounded(1)`.
    Latest,
}

enum Queue {
    Unbounded(SegQueue<Event>),
    Bounded(ArrayQueue<Event>),
}

/// One subscriber's queue, shared by the give side (which pushes) and its stream (which pops).
pub(crate) struct Subscriber {
    queue: Queue,
    delivery: Delivery,
    waker: AtomicWaker,
    parked: AtomicBool,
    closed: AtomicBool,
    /// Set when the stream is dropped: pushes are discarded.
    detached: AtomicBool,
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
            detached: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
        }
    }

    pub(crate) fn push(&self, event: Event) {
        if self.detached.load(Ordering::Relaxed) {
            return;
        }
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
        // The stream was dropped while this push ran: its drain may have missed the event.
        if self.detached.load(Ordering::Relaxed) {
            self.drain();
        }
    }

    /// The stream is gone: free what is queued now, and drop what is pushed from now on.
    /// Threads that still hold this queue in their route cache (until their next give
    /// refreshes it) would otherwise fill memory nobody will read.
    ///
    /// A push racing with this either sees `detached` and drains after itself, or pushed
    /// before the drain below: the fences on both sides (`SeqCst` store here, fence in
    /// `push`) make one of them see the other, so nothing stays queued.
    pub(crate) fn detach(&self) {
        self.detached.store(true, Ordering::SeqCst);
        self.drain();
    }

    fn drain(&self) {
        while self.pop().is_some() {}
    }

    pub(crate) fn pop(&self) -> Option<Event> {
        match &self.queue {
            Queue::Unbounded(queue) => queue.pop(),
            Queue::Bounded(queue) => queue.pop(),
        }
    }

    pub(crate) fn len(&self) -> usize {
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

    /// The next event, or `None` once closed and drained. A consumer `pace`d by a period is
    /// never woken by a push: it sleeps until the pacer's next tick (src/pace.rs), or until
    /// the queue closes.
    pub(crate) fn poll_next(
        &self,
        cx: &mut Context<'_>,
        pace: Option<Duration>,
    ) -> Poll<Option<Event>> {
        loop {
            if let Some(event) = self.pop() {
                return Poll::Ready(Some(event));
            }
            if self.closed.load(Ordering::Acquire) {
                // Everything pushed before the close is visible now: drain it, then end.
                return Poll::Ready(self.pop());
            }
            self.waker.register(cx.waker());
            if let Some(period) = pace {
                // Registered (not `parked`): pushes do not wake it, a close does. A close
                // after the registration wakes it; one before is seen here.
                if self.closed.load(Ordering::SeqCst) {
                    continue;
                }
                pace::wake_at_next_tick(period, cx.waker());
                return Poll::Pending;
            }
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
    /// The delivery policy this queue was made with.
    pub(crate) fn delivery(&self) -> Delivery {
        self.delivery
    }

    /// Events dropped so far (bounded and latest-only queues).
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}
