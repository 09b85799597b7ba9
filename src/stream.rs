//! [`EventStream`]: the asynchronous stream of a scope's events, draining one subscriber queue,
//! and [`Lag`], which reads how far it has fallen behind.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use futures::stream::FusedStream;

use crate::Event;
use crate::feed::{Feed, ReaderState};
use crate::queue::{Delivery, Subscriber};
use crate::routing;
use crate::scope::{Scope, Subscription};

/// The events of a scope, as an asynchronous [`Stream`]: what
/// [`Given::stream`](crate::Given::stream) returns.
///
/// The subscription starts when the stream is created, not when it is first polled, so no event
/// given after that call is missed. The stream ends when its scope ends and every event given
/// before has been taken. Dropping it unsubscribes.
pub struct EventStream {
    source: Subscription,
    scope: Arc<Scope>,
    /// Whether the stream has ended (returned `None`), for [`FusedStream`].
    ended: bool,
    /// The event a bounded subscriber lent last ([`next_ref`](Self::next_ref)); a feed
    /// reader lends in place.
    lent: Option<Event>,
    /// The pacer's period, for a [`paced`](Self::paced) stream.
    pace: Option<Duration>,
}

impl EventStream {
    pub(crate) fn new(source: Subscription, scope: Arc<Scope>) -> Self {
        Self {
            source,
            scope,
            ended: false,
            lent: None,
            pace: None,
        }
    }

    /// This stream, read in batches: when it has taken everything given so far, it waits for
    /// the next tick of `period` (on a clock shared by every paced stream, so streams of the
    /// same period wake together) instead of being woken by the next event. Nothing is lost
    /// and the order is the same; the scope's end still ends it at once.
    ///
    /// For sinks that need no event the moment it is given (a log, a dashboard redrawn ten
    /// times a second, a rate computed from the events' own timestamps): a stream woken per
    /// event costs the giving thread a wake-up system call at each first event after the
    /// consumer caught up, and the woken consumer takes a core at that moment, which on a
    /// machine whose cores the training keeps busy is a core taken from the training once
    /// per step. Paced, the giving thread never wakes it, and the consumer runs once per tick.
    /// Periods under a millisecond are taken as one. Not in Python giving, whose
    /// subscribers run on the giving thread.
    ///
    /// A stream not paced is woken per event, until it is woken so often that the wake-ups
    /// cost more than the events (eight parks in a row less than 100 µs apart: a loop that
    /// gives faster than a consumer sharing its core takes): it then waits for ticks of a
    /// millisecond, as if paced, until a tick finds nothing new.
    ///
    /// ```
    /// use std::time::Duration;
    /// use giving::prelude::*;
    /// use giving::{give, given};
    ///
    /// let gv = given();
    /// let losses = gv.stream().paced(Duration::from_millis(50)).key::<f64>("loss");
    /// let losses = gv.spawn(losses.collect::<Vec<_>>());
    /// for loss in [0.5, 0.25] {
    ///     give!(loss);
    /// }
    /// gv.finish().unwrap(); // ends the stream at once, not at its next tick
    /// assert_eq!(losses.join().unwrap(), [0.5, 0.25]);
    /// ```
    pub fn paced(mut self, period: Duration) -> Self {
        self.pace = Some(period);
        self
    }

    /// The period of a [`paced`](Self::paced) stream, `None` for one woken per event.
    pub fn pace(&self) -> Option<Duration> {
        self.pace
    }

    /// Waits for the next event and lends it in place, or returns `None` once the stream has
    /// ended: the by-reference twin of [`StreamExt::next`](futures::StreamExt::next).
    ///
    /// A lossless subscriber reads the event where the scope wrote it, touching no reference
    /// count, so a sink that only looks at events (a log, a dashboard, a rate) costs the same
    /// whether it is the only subscriber or one of ten; taking events by value clones each one
    /// (an atomic increment, and a decrement when it is dropped), unless the stream is the
    /// scope's only lossless subscriber, which moves the event out. The borrow ends before
    /// the next call; clone the event to keep it.
    ///
    /// A lossless stream that keeps finding events ready yields after 256 of them in a row:
    /// it wakes its task and returns `Pending` once, as tokio's cooperative budget does, so
    /// that streams polled by one task (`join_all`, `select!`) take turns through the events
    /// while they are in the core's cache. So a `Pending` (`now_or_never()` returning `None`)
    /// does not mean nothing is queued: [`pending`](Self::pending) tells.
    ///
    /// ```
    /// use giving::{give, given};
    ///
    /// let gv = given();
    /// let mut stream = gv.stream();
    /// for step in 0..3u64 {
    ///     give!(step);
    /// }
    /// gv.finish().unwrap();
    /// let mut steps = Vec::new();
    /// futures::executor::block_on(async {
    ///     while let Some(event) = stream.next_ref().await {
    ///         steps.push(event.get_as::<u64>("step").unwrap());
    ///     }
    /// });
    /// assert_eq!(steps, [0, 1, 2]);
    /// ```
    pub fn next_ref(&mut self) -> NextRef<'_> {
        NextRef { stream: Some(self) }
    }

    /// Polls for the next event and lends it in place (see [`next_ref`](Self::next_ref)):
    /// for hand-written futures and sinks.
    pub fn poll_next_ref(&mut self, cx: &mut Context<'_>) -> Poll<Option<&Event>> {
        match self.poll_advance(cx) {
            Poll::Ready(true) => Poll::Ready(Some(self.current())),
            Poll::Ready(false) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Calls `f` with every event in place, until the stream ends (see
    /// [`next_ref`](Self::next_ref)): the by-reference twin of
    /// [`StreamExt::for_each`](futures::StreamExt::for_each) for a sink that only reads.
    ///
    /// ```
    /// use giving::{give, given};
    ///
    /// let gv = given();
    /// let stream = gv.stream();
    /// for loss in [0.5, 0.25] {
    ///     give!(loss);
    /// }
    /// gv.finish().unwrap();
    /// let mut total = 0.0;
    /// futures::executor::block_on(stream.for_each_ref(|event| {
    ///     total += event.get_as::<f64>("loss").unwrap();
    /// }));
    /// assert_eq!(total, 0.75);
    /// ```
    pub async fn for_each_ref(mut self, mut f: impl FnMut(&Event)) {
        while let Some(event) = self.next_ref().await {
            f(event);
        }
    }

    /// Moves past the next event, which [`current`](Self::current) then lends (`true`), or
    /// finds the stream ended (`false`).
    #[inline]
    fn poll_advance(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        // The common case first: the next event of a run the feed reader has already checked
        // (an ended reader has none: it ended at a run's end).
        if let Subscription::Feed(reader) = &mut self.source
            && reader.take_checked()
        {
            return Poll::Ready(true);
        }
        self.poll_advance_past_run(cx)
    }

    /// [`poll_advance`](Self::poll_advance) past the run already checked.
    #[inline]
    fn poll_advance_past_run(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        if self.ended {
            return Poll::Ready(false);
        }
        let (source, lent, pace) = (&mut self.source, &mut self.lent, self.pace);
        // A feed reader charges tokio's cooperative budget itself, once per run of events.
        let taken = match source {
            // `Self::poll_advance` has tried the reader's checked run already.
            Subscription::Feed(reader) => reader.poll_past_run(cx, pace),
            Subscription::Queue(queue) => crate::coop::budgeted(cx, |cx| {
                queue.poll_next(cx, pace).map(|next| {
                    *lent = next;
                    lent.is_some()
                })
            }),
        };
        if let Poll::Ready(false) = taken {
            self.ended = true;
        }
        taken
    }

    /// The event the last [`poll_advance`](Self::poll_advance) moved past, by value: the
    /// feed's moved out (this stream its only reader) or a clone, or the popped one moved out.
    #[inline]
    fn take_current(&mut self) -> Event {
        match &mut self.source {
            Subscription::Feed(reader) => reader.take_current(),
            Subscription::Queue(_) => self
                .lent
                .take()
                .expect("an event is lent after poll_advance returned true"),
        }
    }

    /// The event the last [`poll_advance`](Self::poll_advance) moved past.
    #[inline]
    fn current(&self) -> &Event {
        match &self.source {
            Subscription::Feed(reader) => reader.current(),
            Subscription::Queue(_) => self
                .lent
                .as_ref()
                .expect("an event is lent after poll_advance returned true"),
        }
    }

    /// How many events this subscriber lost because its bounded queue was full (always 0 for
    /// [`Delivery::Lossless`]).
    pub fn dropped(&self) -> u64 {
        self.lag().dropped()
    }

    /// How many events are waiting to be taken.
    pub fn pending(&self) -> usize {
        // Asked per event by the sinks that drain in bursts: read in place, without the two
        // reference counts a `Lag` would take.
        match &self.source {
            Subscription::Feed(reader) => reader.feed().pending(reader.state()),
            Subscription::Queue(queue) => queue.len(),
        }
    }

    /// This stream's delivery policy.
    pub fn delivery(&self) -> Delivery {
        match &self.source {
            Subscription::Feed(_) => Delivery::Lossless,
            Subscription::Queue(queue) => queue.delivery(),
        }
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
        let source = match &self.source {
            Subscription::Feed(reader) => {
                LagSource::Feed(reader.feed().clone(), reader.state().clone())
            }
            Subscription::Queue(queue) => LagSource::Queue(queue.clone()),
        };
        Lag { source }
    }
}

/// The future [`EventStream::next_ref`] returns: the next event lent in place, or `None` once
/// the stream has ended. A named future rather than an `async fn`'s, so that a loop draining a
/// stream by reference polls one small state per event.
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct NextRef<'a> {
    /// The stream, until the event (or the end) is handed out.
    stream: Option<&'a mut EventStream>,
}

impl<'a> Future for NextRef<'a> {
    type Output = Option<&'a Event>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<&'a Event>> {
        let stream = self
            .stream
            .take()
            .expect("NextRef polled after it completed");
        match stream.poll_advance(cx) {
            Poll::Ready(taken) => {
                let stream: &'a EventStream = stream;
                Poll::Ready(taken.then(|| stream.current()))
            }
            Poll::Pending => {
                self.stream = Some(stream);
                Poll::Pending
            }
        }
    }
}

impl Stream for EventStream {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let this = &mut *self;
        this.poll_advance(cx)
            .map(|taken| taken.then(|| this.take_current()))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.pending(), None)
    }
}

impl FusedStream for EventStream {
    fn is_terminated(&self) -> bool {
        self.ended
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        // A feed reader detaches when dropped (with this stream): its chunks are freed as
        // soon as no other reader holds them.
        if let Subscription::Queue(queue) = &self.source {
            routing::unsubscribe(&self.scope, queue);
            queue.detach();
        }
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
    source: LagSource,
}

#[derive(Clone)]
enum LagSource {
    Feed(Arc<Feed>, Arc<ReaderState>),
    Queue(Arc<Subscriber>),
}

impl Lag {
    /// Events dropped so far by a bounded or latest-only subscriber.
    pub fn dropped(&self) -> u64 {
        match &self.source {
            LagSource::Feed(..) => 0,
            LagSource::Queue(queue) => queue.dropped(),
        }
    }

    /// Events queued and not yet taken.
    pub fn pending(&self) -> usize {
        match &self.source {
            LagSource::Feed(feed, reader) => feed.pending(reader),
            LagSource::Queue(queue) => queue.len(),
        }
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
