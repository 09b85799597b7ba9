//! Scopes and the routing of given events: which scopes receive an event given on a thread.
//!
//! Every open scope counts in [`ACTIVE_SCOPES`], so `give!` with no scope open anywhere costs one
//! relaxed load. A thread keeps a stack of the thread scopes it is in, plus a cached copy of the
//! global scopes, refreshed when [`GLOBAL_VERSION`] changes (rarely: when a global scope opens
//! or closes). For each of those scopes it also caches the subscriber list, refreshed when the
//! scope's own version changes (a subscription starts or ends), so the give path reads one
//! atomic per scope and takes no lock.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::subscriber::{Delivery, EventStream, Subscriber};
use crate::{Event, StopToken};

/// How many scopes are open in the process, thread and global.
pub(crate) static ACTIVE_SCOPES: AtomicUsize = AtomicUsize::new(0);

static GLOBAL_SCOPES: Mutex<Vec<Arc<Scope>>> = Mutex::new(Vec::new());
static GLOBAL_VERSION: AtomicU64 = AtomicU64::new(0);

type Subscribers = Arc<[Arc<Subscriber>]>;

/// The shared state of one scope: its subscribers and whether it has ended.
pub(crate) struct Scope {
    closed: AtomicBool,
    subscribers: Mutex<Subscribers>,
    /// Bumped on every change of `subscribers`, after the change.
    version: AtomicU64,
    stop: StopToken,
    global: bool,
}

impl Scope {
    pub(crate) fn open(global: bool) -> Arc<Scope> {
        let scope = Arc::new(Scope {
            closed: AtomicBool::new(false),
            subscribers: Mutex::new(Arc::from([])),
            version: AtomicU64::new(0),
            stop: StopToken::new(),
            global,
        });
        ACTIVE_SCOPES.fetch_add(1, Ordering::SeqCst);
        if global {
            let mut globals = global_scopes();
            globals.push(scope.clone());
            GLOBAL_VERSION.fetch_add(1, Ordering::Release);
        }
        scope
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub(crate) fn is_global(&self) -> bool {
        self.global
    }

    pub(crate) fn stop_token(&self) -> &StopToken {
        &self.stop
    }

    fn subscribers(&self) -> MutexGuard<'_, Subscribers> {
        // Every change replaces the list whole, so a panic cannot leave it half-updated.
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands `event` to every subscriber; never blocks. (The give path uses the per-thread
    /// [`Route`] cache instead; this is for [`Giver`](crate::Giver).)
    pub(crate) fn deliver(&self, event: &Event) {
        if self.is_closed() {
            return;
        }
        let subscribers = self.subscribers().clone();
        for subscriber in subscribers.iter() {
            subscriber.push(event.clone());
        }
    }

    fn update(&self, change: impl FnOnce(&[Arc<Subscriber>]) -> Vec<Arc<Subscriber>>) {
        let mut subscribers = self.subscribers();
        *subscribers = change(&subscribers).into();
        self.version.fetch_add(1, Ordering::Release);
    }

    pub(crate) fn subscribe(self: &Arc<Self>, delivery: Delivery) -> EventStream {
        let subscriber = Arc::new(Subscriber::new(delivery));
        self.update(|current| {
            let mut next = current.to_vec();
            next.push(subscriber.clone());
            next
        });
        // A close that ran before the push above did not see this subscriber.
        if self.closed.load(Ordering::SeqCst) {
            subscriber.close();
        }
        EventStream::new(subscriber, self.clone())
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

    /// Ends the scope: nothing is delivered any more and every stream completes once drained.
    pub(crate) fn close(self: &Arc<Self>) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        ACTIVE_SCOPES.fetch_sub(1, Ordering::SeqCst);
        if self.global {
            global_scopes().retain(|s| !Arc::ptr_eq(s, self));
            GLOBAL_VERSION.fetch_add(1, Ordering::Release);
        }
        exit_thread_scope(self);
        let subscribers = self.subscribers().clone();
        for subscriber in subscribers.iter() {
            subscriber.close();
        }
    }
}

fn global_scopes() -> MutexGuard<'static, Vec<Arc<Scope>>> {
    // The list stays consistent even if a holder panicked: every change is a single push/retain.
    GLOBAL_SCOPES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A scope as one thread sees it: with a cached copy of its subscriber list.
struct Route {
    scope: Arc<Scope>,
    /// The scope's `version` that `subscribers` was copied at (`u64::MAX`: never copied).
    version: u64,
    subscribers: Subscribers,
}

impl Route {
    fn new(scope: Arc<Scope>) -> Self {
        Self {
            scope,
            version: u64::MAX,
            subscribers: Arc::from([]),
        }
    }

    fn subscribers(&mut self) -> &[Arc<Subscriber>] {
        let version = self.scope.version.load(Ordering::Acquire);
        if version != self.version {
            self.subscribers = self.scope.subscribers().clone();
            self.version = version;
        }
        &self.subscribers
    }
}

/// What one thread routes its events to.
struct Routes {
    /// The thread scopes this thread is in, outermost first.
    stack: Vec<Route>,
    /// A copy of the global scopes, valid for `global_version`.
    globals: Vec<Route>,
    global_version: u64,
}

impl Routes {
    fn refresh(&mut self) {
        let version = GLOBAL_VERSION.load(Ordering::Acquire);
        if version != self.global_version {
            self.globals = global_scopes().iter().cloned().map(Route::new).collect();
            self.global_version = version;
        }
        if self.stack.iter().any(|r| r.scope.is_closed()) {
            self.stack.retain(|r| !r.scope.is_closed());
        }
    }

    fn scopes(&self) -> impl Iterator<Item = &Arc<Scope>> {
        self.stack.iter().chain(&self.globals).map(|r| &r.scope)
    }

    fn routes_mut(&mut self) -> impl Iterator<Item = &mut Route> {
        self.stack.iter_mut().chain(&mut self.globals)
    }
}

thread_local! {
    static ROUTES: RefCell<Routes> = const {
        RefCell::new(Routes { stack: Vec::new(), globals: Vec::new(), global_version: 0 })
    };
}

/// Whether an event given on this thread now would reach at least one open scope.
pub(crate) fn has_receivers() -> bool {
    ROUTES
        .try_with(|routes| {
            if let Ok(mut routes) = routes.try_borrow_mut() {
                routes.refresh();
            }
            routes
                .try_borrow()
                .is_ok_and(|routes| routes.scopes().any(|s| !s.is_closed()))
        })
        .unwrap_or(false)
}

/// Delivers `event` to the scopes of this thread and to the global scopes.
pub(crate) fn dispatch(event: &Event) {
    dispatch_owned(event.clone());
}

/// [`dispatch`], handing the event itself to the last subscriber (one reference-count
/// round trip less per event).
pub(crate) fn dispatch_owned(event: Event) {
    let _ = ROUTES.try_with(|routes| {
        // Pushing runs no user code, so the routes cannot be borrowed here already.
        let Ok(mut routes) = routes.try_borrow_mut() else {
            return;
        };
        let mut previous: Option<&Arc<Subscriber>> = None;
        for route in routes.routes_mut() {
            if route.scope.is_closed() {
                continue;
            }
            for subscriber in route.subscribers() {
                if let Some(previous) = previous.replace(subscriber) {
                    previous.push(event.clone());
                }
            }
        }
        if let Some(last) = previous {
            last.push(event);
        }
    });
}

/// Delivers `event` to the global scopes only (a [`Giver`](crate::Giver) adds its own scopes).
pub(crate) fn dispatch_global(event: &Event) {
    for scope in global_scopes().iter() {
        scope.deliver(event);
    }
}

/// Whether a global scope is open.
pub(crate) fn has_global_scopes() -> bool {
    !global_scopes().is_empty()
}

/// The thread scopes of this thread, outermost first.
pub(crate) fn current_thread_scopes() -> Vec<Arc<Scope>> {
    ROUTES
        .try_with(|routes| {
            routes
                .try_borrow()
                .map(|r| {
                    r.stack
                        .iter()
                        .filter(|r| !r.scope.is_closed())
                        .map(|r| r.scope.clone())
                        .collect()
                })
                .unwrap_or_default()
        })
        .unwrap_or_default()
}

/// Makes this thread part of `scope`; returns false if it already was (or the scope is global,
/// which every thread is part of).
pub(crate) fn enter_thread_scope(scope: &Arc<Scope>) -> bool {
    if scope.is_global() {
        return false;
    }
    ROUTES
        .try_with(|routes| {
            let mut routes = routes.borrow_mut();
            if routes.stack.iter().any(|r| Arc::ptr_eq(&r.scope, scope)) {
                false
            } else {
                routes.stack.push(Route::new(scope.clone()));
                true
            }
        })
        .unwrap_or(false)
}

/// Takes this thread out of `scope` (a no-op if it is not in it).
pub(crate) fn exit_thread_scope(scope: &Arc<Scope>) {
    let _ = ROUTES.try_with(|routes| {
        if let Ok(mut routes) = routes.try_borrow_mut()
            && let Some(at) = routes
                .stack
                .iter()
                .rposition(|r| Arc::ptr_eq(&r.scope, scope))
        {
            routes.stack.remove(at);
        }
    });
}

/// Whether any scope this thread gives to has been asked to stop.
pub(crate) fn stop_requested() -> bool {
    if ACTIVE_SCOPES.load(Ordering::Relaxed) == 0 {
        return false;
    }
    ROUTES
        .try_with(|routes| {
            if let Ok(mut routes) = routes.try_borrow_mut() {
                routes.refresh();
            }
            routes
                .try_borrow()
                .is_ok_and(|r| r.scopes().any(|s| s.stop_token().is_stopped()))
        })
        .unwrap_or(false)
}
