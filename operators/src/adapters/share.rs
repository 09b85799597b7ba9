use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use futures::Stream;
use futures::task::{ArcWake, waker_ref};

/// One upstream, several consumers: the handle of [`StreamOps::share`](crate::StreamOps::share).
///
/// Every handle is a [`Stream`] that receives, in order, every item the upstream produces after
/// the handle was created (the first handle at `share()`, each clone at the time it is cloned:
/// a clone does not replay earlier items). The upstream is driven by the consumers: whichever
/// handle is polled with nothing queued pulls the next upstream item, keeps it, and queues a
/// clone for each other handle (and wakes them). Queues are unbounded: a handle that is never
/// polled accumulates every item, so drop the handles you do not read. When the upstream
/// completes, each handle completes once it has drained its queue; a handle cloned after that
/// is complete at once.
///
/// `Shared` is `Send` and `Sync` when the upstream and its items are `Send`, so handles can be
/// consumed on different tasks or threads.
pub struct Shared<S: Stream> {
    inner: Arc<Inner<S>>,
    id: u64,
}

struct Inner<S: Stream> {
    state: Mutex<State<S>>,
    wakers: Arc<WakeAll>,
}

struct State<S: Stream> {
    upstream: Option<Pin<Box<S>>>,
    // A handful of handles: a vector beats a hash map.
    queues: Vec<(u64, VecDeque<S::Item>)>,
    next_id: u64,
}

/// The waker the upstream is polled with: wakes every handle waiting for an item, so that an
/// item is never left unclaimed because the handle that last polled the upstream went away.
#[derive(Default)]
struct WakeAll {
    // A handful of handles: a vector beats a hash map.
    wakers: Mutex<Vec<(u64, Waker)>>,
}

impl WakeAll {
    fn lock(&self) -> MutexGuard<'_, Vec<(u64, Waker)>> {
        self.wakers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn register(&self, id: u64, waker: &Waker) {
        let mut wakers = self.lock();
        match wakers.iter_mut().find(|(i, _)| *i == id) {
            Some((_, w)) if w.will_wake(waker) => {}
            Some((_, w)) => w.clone_from(waker),
            None => wakers.push((id, waker.clone())),
        }
    }

    fn remove(&self, id: u64) {
        self.lock().retain(|(i, _)| *i != id);
    }

    /// Wakes every waiting handle but `except`.
    fn wake_others(&self, except: u64) {
        let woken: Vec<Waker> = {
            let mut wakers = self.lock();
            if wakers.iter().all(|(i, _)| *i == except) {
                return;
            }
            let (others, mine): (Vec<_>, Vec<_>) =
                wakers.drain(..).partition(|(i, _)| *i != except);
            *wakers = mine;
            others.into_iter().map(|(_, w)| w).collect()
        };
        woken.into_iter().for_each(Waker::wake);
    }
}

impl ArcWake for WakeAll {
    fn wake_by_ref(arc_self: &Arc<Self>) {
        let woken: Vec<Waker> = arc_self.lock().drain(..).map(|(_, w)| w).collect();
        woken.into_iter().for_each(Waker::wake);
    }
}

impl<S: Stream> Inner<S> {
    fn lock(&self) -> MutexGuard<'_, State<S>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<S: Stream> Shared<S> {
    pub(crate) fn new(stream: S) -> Self {
        let queues = vec![(0, VecDeque::new())];
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    upstream: Some(Box::pin(stream)),
                    queues,
                    next_id: 1,
                }),
                wakers: Arc::default(),
            }),
            id: 0,
        }
    }

    /// Number of live handles on this upstream.
    pub fn handles(&self) -> usize {
        self.inner.lock().queues.len()
    }
}

impl<S: Stream> Clone for Shared<S> {
    /// A new consumer of the same upstream, receiving the items produced from now on.
    fn clone(&self) -> Self {
        let mut state = self.inner.lock();
        let id = state.next_id;
        state.next_id += 1;
        state.queues.push((id, VecDeque::new()));
        Self {
            inner: Arc::clone(&self.inner),
            id,
        }
    }
}

impl<S: Stream> Drop for Shared<S> {
    fn drop(&mut self) {
        self.inner.lock().queues.retain(|(i, _)| *i != self.id);
        self.inner.wakers.remove(self.id);
    }
}

impl<S: Stream> fmt::Debug for Shared<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl<S> Stream for Shared<S>
where
    S: Stream,
    S::Item: Clone,
{
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let this = self.get_mut();
        let id = this.id;
        let inner = &*this.inner;
        let mut state = inner.lock();
        let state = &mut *state;
        let own = state.queues.iter_mut().find(|(i, _)| *i == id);
        if let Some(item) = own.and_then(|(_, queue)| queue.pop_front()) {
            return Poll::Ready(Some(item));
        }
        let Some(upstream) = state.upstream.as_mut() else {
            return Poll::Ready(None);
        };
        inner.wakers.register(id, cx.waker());
        let waker = waker_ref(&inner.wakers);
        let mut upstream_cx = Context::from_waker(&waker);
        match upstream.as_mut().poll_next(&mut upstream_cx) {
            Poll::Ready(Some(item)) => {
                // Our waker stays registered: at worst one spurious wake-up later.
                for (_, queue) in state.queues.iter_mut().filter(|(other, _)| *other != id) {
                    queue.push_back(item.clone());
                }
                inner.wakers.wake_others(id);
                Poll::Ready(Some(item))
            }
            Poll::Ready(None) => {
                inner.wakers.remove(id);
                state.upstream = None;
                inner.wakers.wake_others(id);
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}
