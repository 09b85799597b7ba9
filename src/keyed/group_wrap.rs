use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use futures::Stream;
use futures::task::{ArcWake, waker_ref};

use crate::wrap::{WrapMark, WrapStep};
use crate::{Event, Key};

/// Stream of [`group_wrap`](super::EventStreamOps::group_wrap): one [`WrapGroup`] per wrapped
/// block of a name, emitted when the block begins.
///
/// The outer stream and its groups drive the upstream together: whichever is polled with
/// nothing queued pulls the next events and routes them (as
/// [`share`](giving_operators::StreamOps::share) does), so the groups can be consumed one after
/// the other (`then`, `flat_map`) as well as concurrently. Queues are unbounded; a dropped group
/// discards its events.
#[must_use = "streams do nothing unless polled"]
pub struct GroupWrap<S> {
    hub: Arc<Hub<S>>,
}

/// The events given inside one wrapped block, in order, without the `$wrap` events
/// themselves; an item of [`group_wrap`](super::EventStreamOps::group_wrap).
///
/// Completes when the block's `end` event arrives, or when the upstream completes.
#[must_use = "streams do nothing unless polled"]
pub struct WrapGroup<S> {
    hub: Arc<Hub<S>>,
    consumer: u64,
    begin: Event,
    id: u64,
}

/// Consumer id of the outer stream; groups have 1, 2, …
const OUTER: u64 = 0;

struct Hub<S> {
    state: Mutex<State<S>>,
    wakers: Arc<Wakers>,
}

struct State<S> {
    upstream: Option<Pin<Box<S>>>,
    name: Key,
    outer_alive: bool,
    /// Groups begun but not yet emitted by the outer stream: `(consumer, begin event, id)`.
    begun: VecDeque<(u64, Event, u64)>,
    groups: Vec<Slot>,
    next_consumer: u64,
}

struct Slot {
    consumer: u64,
    id: u64,
    queue: VecDeque<Event>,
    /// The block's `end` has not been seen.
    open: bool,
}

/// Wakers of the consumers waiting for an event. The upstream is polled with a waker that
/// wakes them all, so an event is never left unclaimed because the consumer that last polled
/// the upstream went away.
#[derive(Default)]
struct Wakers {
    waiting: Mutex<Vec<(u64, Waker)>>,
}

impl Wakers {
    fn lock(&self) -> MutexGuard<'_, Vec<(u64, Waker)>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn register(&self, consumer: u64, waker: &Waker) {
        let mut waiting = self.lock();
        match waiting.iter_mut().find(|(c, _)| *c == consumer) {
            Some((_, w)) => w.clone_from(waker),
            None => waiting.push((consumer, waker.clone())),
        }
    }

    fn remove(&self, consumer: u64) {
        self.lock().retain(|(c, _)| *c != consumer);
    }

    fn wake_consumers(&self, consumers: &[u64]) {
        if consumers.is_empty() {
            return;
        }
        let woken: Vec<Waker> = {
            let mut waiting = self.lock();
            let (woken, rest) = waiting
                .drain(..)
                .partition::<Vec<_>, _>(|(c, _)| consumers.contains(c));
            *waiting = rest;
            woken.into_iter().map(|(_, w)| w).collect()
        };
        woken.into_iter().for_each(Waker::wake);
    }
}

impl ArcWake for Wakers {
    fn wake_by_ref(arc_self: &Arc<Self>) {
        let woken: Vec<Waker> = arc_self.lock().drain(..).map(|(_, w)| w).collect();
        woken.into_iter().for_each(Waker::wake);
    }
}

impl<S> Hub<S> {
    fn lock(&self) -> MutexGuard<'_, State<S>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<S: Stream<Item = Event>> State<S> {
    /// Routes one upstream event; returns the consumers that received something.
    fn route(&mut self, event: Event, woken: &mut Vec<u64>) {
        let Some(mark) = WrapMark::of(&event) else {
            for slot in self.groups.iter_mut().filter(|s| s.open) {
                slot.queue.push_back(event.clone());
                woken.push(slot.consumer);
            }
            return;
        };
        if mark.name != self.name {
            return;
        }
        match mark.step {
            WrapStep::Begin if self.outer_alive => {
                let consumer = self.next_consumer;
                self.next_consumer += 1;
                self.groups.push(Slot {
                    consumer,
                    id: mark.id,
                    queue: VecDeque::new(),
                    open: true,
                });
                let id = mark.id;
                self.begun.push_back((consumer, event, id));
                woken.push(OUTER);
            }
            WrapStep::Begin => {}
            WrapStep::End => {
                // The innermost open block with this id (ids are unique per process; a replayed
                // log may repeat them).
                if let Some(slot) = self
                    .groups
                    .iter_mut()
                    .rev()
                    .find(|s| s.open && s.id == mark.id)
                {
                    slot.open = false;
                    woken.push(slot.consumer);
                }
            }
        }
    }

    /// Pulls upstream events until `ready` says the polling consumer has something (or the
    /// upstream is pending or complete). Returns whether the upstream is complete.
    fn pump(
        &mut self,
        wakers: &Arc<Wakers>,
        woken: &mut Vec<u64>,
        mut ready: impl FnMut(&Self) -> bool,
    ) -> Poll<()> {
        let waker = waker_ref(wakers);
        let mut cx = Context::from_waker(&waker);
        loop {
            if ready(self) {
                return Poll::Ready(());
            }
            let Some(upstream) = self.upstream.as_mut() else {
                return Poll::Ready(());
            };
            match upstream.as_mut().poll_next(&mut cx) {
                Poll::Ready(Some(event)) => self.route(event, woken),
                Poll::Ready(None) => {
                    self.upstream = None;
                    // Every consumer completes (or drains) now.
                    woken.push(OUTER);
                    woken.extend(self.groups.iter().map(|s| s.consumer));
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl<S> GroupWrap<S> {
    pub(crate) fn new(stream: S, name: impl Into<Key>) -> Self {
        Self {
            hub: Arc::new(Hub {
                state: Mutex::new(State {
                    upstream: Some(Box::pin(stream)),
                    name: name.into(),
                    outer_alive: true,
                    begun: VecDeque::new(),
                    groups: Vec::new(),
                    next_consumer: OUTER + 1,
                }),
                wakers: Arc::default(),
            }),
        }
    }
}

impl<S: Stream<Item = Event>> Stream for GroupWrap<S> {
    type Item = WrapGroup<S>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<WrapGroup<S>>> {
        let hub = &self.hub;
        hub.wakers.register(OUTER, cx.waker());
        let mut woken = Vec::new();
        let result = {
            let mut state = hub.lock();
            match state.pump(&hub.wakers, &mut woken, |s| !s.begun.is_empty()) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(()) => match state.begun.pop_front() {
                    Some((consumer, begin, id)) => Poll::Ready(Some(WrapGroup {
                        hub: Arc::clone(hub),
                        consumer,
                        begin,
                        id,
                    })),
                    None => Poll::Ready(None),
                },
            }
        };
        woken.retain(|c| *c != OUTER);
        hub.wakers.wake_consumers(&woken);
        if result.is_ready() {
            hub.wakers.remove(OUTER);
        }
        result
    }
}

impl<S> Drop for GroupWrap<S> {
    fn drop(&mut self) {
        let mut state = self.hub.lock();
        state.outer_alive = false;
        // Groups begun but never handed out have no reader.
        let unread: Vec<u64> = state.begun.drain(..).map(|(c, _, _)| c).collect();
        state.groups.retain(|s| !unread.contains(&s.consumer));
        drop(state);
        self.hub.wakers.remove(OUTER);
    }
}

impl<S> WrapGroup<S> {
    /// The `begin` event of the block: its `$wrap` marker and the fields given to
    /// [`wrap!`](macro@crate::wrap).
    pub fn begin(&self) -> &Event {
        &self.begin
    }

    /// The id of the block.
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl<S: Stream<Item = Event>> Stream for WrapGroup<S> {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let hub = &self.hub;
        let me = self.consumer;
        hub.wakers.register(me, cx.waker());
        let mut woken = Vec::new();
        let result = {
            let mut state = hub.lock();
            let ready = |s: &State<S>| {
                s.groups
                    .iter()
                    .find(|slot| slot.consumer == me)
                    .is_none_or(|slot| !slot.queue.is_empty() || !slot.open)
            };
            match state.pump(&hub.wakers, &mut woken, ready) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(()) => {
                    match state.groups.iter().position(|slot| slot.consumer == me) {
                        None => Poll::Ready(None),
                        Some(i) => match state.groups[i].queue.pop_front() {
                            Some(event) => Poll::Ready(Some(event)),
                            None => {
                                // Ended (or the upstream completed): the slot is done.
                                state.groups.remove(i);
                                Poll::Ready(None)
                            }
                        },
                    }
                }
            }
        };
        woken.retain(|c| *c != me);
        hub.wakers.wake_consumers(&woken);
        if result.is_ready() {
            hub.wakers.remove(me);
        }
        result
    }
}

impl<S> Drop for WrapGroup<S> {
    fn drop(&mut self) {
        let me = self.consumer;
        self.hub.lock().groups.retain(|s| s.consumer != me);
        self.hub.wakers.remove(me);
    }
}

impl<S> fmt::Debug for GroupWrap<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupWrap").finish_non_exhaustive()
    }
}

impl<S> fmt::Debug for WrapGroup<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WrapGroup")
            .field("id", &self.id)
            .field("begin", &self.begin)
            .finish_non_exhaustive()
    }
}
