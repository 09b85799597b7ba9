//! The shared state of one scope: its subscribers (lossless ones read its [`Feed`], bounded
//! ones have a queue each), whether it has finished, its stop token and the derivations that
//! must drain before it finishes. Which threads give into a scope is
//! [`routing`](crate::routing)'s business, not this module's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use arc_swap::ArcSwap;

use crate::feed::{Feed, FeedReader, ReaderState};
use crate::pipeline::Completion;
use crate::queue::{Delivery, Subscriber};
use crate::{Event, StopToken};

/// A scope's bounded subscribers (lossless ones read the feed); replaced whole on every
/// change, so the give side can hold a copy.
pub(crate) type Subscribers = Arc<Vec<Arc<Subscriber>>>;

/// A derivation's input (a reader of the feed) and the completion of the pipeline that
/// drains it.
pub(crate) struct Derivation {
    pub(crate) input: Arc<ReaderState>,
    pub(crate) done: Arc<Completion>,
}

/// A new subscription: a cursor into the feed (lossless) or a queue of its own (bounded).
pub(crate) enum Subscription {
    Feed(FeedReader),
    Queue(Arc<Subscriber>),
}

/// The shared state of one scope.
pub(crate) struct Scope {
    finished: AtomicBool,
    /// The events, written once for every lossless subscriber.
    feed: Arc<Feed>,
    /// The bounded (and latest-only) subscribers: read without a lock by
    /// [`Giver`](crate::Giver)s, replaced whole under `changing`.
    subscribers: ArcSwap<Vec<Arc<Subscriber>>>,
    /// Serialises changes of `subscribers` (a read-copy-update needs one writer at a time).
    changing: Mutex<()>,
    /// Derivations not yet drained, in the order they were made.
    derivations: Mutex<Vec<Derivation>>,
    stop: StopToken,
    global: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every change replaces or pushes whole values, so a panic cannot leave a list
    // half-updated.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Scope {
    /// A new scope's state; [`routing::open`](crate::routing::open) registers it.
    pub(crate) fn new(global: bool) -> Arc<Scope> {
        Arc::new(Scope {
            finished: AtomicBool::new(false),
            feed: Arc::new(Feed::new()),
            subscribers: ArcSwap::default(),
            changing: Mutex::new(()),
            derivations: Mutex::new(Vec::new()),
            stop: StopToken::new(),
            global,
        })
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    pub(crate) fn is_global(&self) -> bool {
        self.global
    }

    pub(crate) fn stop_token(&self) -> &StopToken {
        &self.stop
    }

    /// A copy of the bounded subscriber list (a reference count, not a copy of the list).
    pub(crate) fn subscribers(&self) -> Subscribers {
        self.subscribers.load_full()
    }

    /// The feed the lossless subscribers read.
    pub(crate) fn feed(&self) -> &Feed {
        &self.feed
    }

    /// Hands `event` to every subscriber but the feed reader `skip` (a derivation's own
    /// input, or [`NO_SKIP`](crate::feed::NO_SKIP)); never blocks. The give path uses the
    /// per-thread cache of [`routing`](crate::routing) instead; this is for
    /// [`Giver`](crate::Giver).
    pub(crate) fn deliver(&self, event: &Event, skip: u64) {
        if self.is_finished() {
            return;
        }
        if self.feed.has_readers() {
            self.feed.push(event.clone(), skip);
        }
        for subscriber in self.subscribers.load().iter() {
            subscriber.push(event.clone());
        }
    }

    fn update(&self, change: impl FnOnce(&[Arc<Subscriber>]) -> Vec<Arc<Subscriber>>) {
        let _changing = lock(&self.changing);
        let next = change(&self.subscribers.load());
        self.subscribers.store(Arc::new(next));
    }

    /// A new lossless subscription: a reader of the feed, from now on (a finished scope's
    /// feed is closed: the reader ends at once).
    pub(crate) fn feed_reader(&self) -> FeedReader {
        self.feed.subscribe()
    }

    /// A new subscription, receiving from now on; through
    /// [`routing::subscribe`](crate::routing::subscribe), which tells the giving threads.
    pub(crate) fn subscribe(&self, delivery: Delivery) -> Subscription {
        if delivery == Delivery::Lossless {
            return Subscription::Feed(self.feed_reader());
        }
        let subscriber = Arc::new(Subscriber::new(delivery));
        self.update(|current| {
            let mut next = current.to_vec();
            next.push(subscriber.clone());
            next
        });
        // A finish that ran before the push above did not see this subscriber.
        if self.finished.load(Ordering::SeqCst) {
            subscriber.close();
        }
        Subscription::Queue(subscriber)
    }

    /// Ends a bounded subscription; through
    /// [`routing::unsubscribe`](crate::routing::unsubscribe), which tells the giving threads.
    pub(crate) fn unsubscribe(&self, subscriber: &Arc<Subscriber>) {
        self.update(|current| {
            current
                .iter()
                .filter(|s| !Arc::ptr_eq(s, subscriber))
                .cloned()
                .collect()
        });
    }

    /// Ends a derivation's input at the events given so far (the scope goes on).
    pub(crate) fn close_input(&self, input: &ReaderState) {
        self.feed.close_reader(input);
    }

    /// Records a derivation, drained by [`take_derivation`](Scope::take_derivation) before the
    /// scope finishes.
    pub(crate) fn add_derivation(&self, derivation: Derivation) {
        lock(&self.derivations).push(derivation);
    }

    /// The oldest derivation not yet drained.
    pub(crate) fn take_derivation(&self) -> Option<Derivation> {
        let mut derivations = lock(&self.derivations);
        (!derivations.is_empty()).then(|| derivations.remove(0))
    }

    /// Marks the scope finished; true for the call that did it (the first).
    pub(crate) fn mark_finished(&self) -> bool {
        !self.finished.swap(true, Ordering::SeqCst)
    }

    /// Completes every subscriber's stream once drained.
    pub(crate) fn close_subscribers(&self) {
        self.feed.close();
        for subscriber in self.subscribers().iter() {
            subscriber.close();
        }
        lock(&self.derivations).clear();
    }
}
