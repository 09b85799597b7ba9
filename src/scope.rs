//! The shared state of one scope: its subscribers, whether it has finished, its stop token and
//! the derivations that must drain before it finishes. Which threads give into a scope is
//! [`routing`](crate::routing)'s business, not this module's.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::pipeline::Completion;
use crate::queue::{Delivery, Subscriber};
use crate::{Event, StopToken};

/// A scope's subscriber list; replaced whole on every change, so the give side can hold a copy.
pub(crate) type Subscribers = Arc<[Arc<Subscriber>]>;

/// A derivation's input queue and the completion of the pipeline that drains it.
pub(crate) struct Derivation {
    pub(crate) input: Arc<Subscriber>,
    pub(crate) done: Arc<Completion>,
}

/// The shared state of one scope.
pub(crate) struct Scope {
    finished: AtomicBool,
    subscribers: Mutex<Subscribers>,
    /// Bumped on every change of `subscribers`, after the change.
    version: AtomicU64,
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
            subscribers: Mutex::new(Arc::from([])),
            version: AtomicU64::new(0),
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

    /// The subscriber list's version: it changes after every (un)subscription.
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// A copy of the subscriber list (a reference count, not a copy of the list).
    pub(crate) fn subscribers(&self) -> Subscribers {
        lock(&self.subscribers).clone()
    }

    /// Hands `event` to every subscriber but `skip` (a derivation's own input); never blocks.
    /// The give path uses the per-thread cache of [`routing`](crate::routing) instead; this is
    /// for [`Giver`](crate::Giver).
    pub(crate) fn deliver(&self, event: &Event, skip: Option<&Arc<Subscriber>>) {
        if self.is_finished() {
            return;
        }
        for subscriber in self.subscribers().iter() {
            if !skip.is_some_and(|skip| Arc::ptr_eq(skip, subscriber)) {
                subscriber.push(event.clone());
            }
        }
    }

    fn update(&self, change: impl FnOnce(&[Arc<Subscriber>]) -> Vec<Arc<Subscriber>>) {
        let mut subscribers = lock(&self.subscribers);
        *subscribers = change(&subscribers).into();
        self.version.fetch_add(1, Ordering::Release);
    }

    /// A new subscriber queue, receiving from now on.
    pub(crate) fn subscribe(&self, delivery: Delivery) -> Arc<Subscriber> {
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
        subscriber
    }

    pub(crate) fn unsubscribe(&self, subscriber: &Arc<Subscriber>) {
        self.update(|current| {
            current
                .iter()
                .filter(|s| !Arc::ptr_eq(s, subscriber))
                .cloned()
                .collect()
        });
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
        for subscriber in self.subscribers().iter() {
            subscriber.close();
        }
        for derivation in lock(&self.derivations).drain(..) {
            derivation.input.close();
        }
    }
}
