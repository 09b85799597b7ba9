//! The routing of given events: which scopes an event given on a thread reaches. The one
//! owner of the process-wide registry (open scopes, global scopes) and of each thread's routes.
//!
//! Every open scope counts in [`ACTIVE_SCOPES`], so `give!` with no scope open anywhere costs one
//! relaxed load. A thread keeps a stack of the thread scopes it is in, plus a cached copy of the
//! global scopes, refreshed when [`GLOBAL_VERSION`] changes (rarely: when a global scope opens
//! or finishes). For each of those scopes it also caches the bounded subscriber list, refreshed
//! when the scope's own version changes (a bounded subscription starts or ends), so the give
//! path reads one atomic per scope, appends once to the scope's feed for all its lossless
//! subscribers, and pushes once per bounded subscriber.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::Event;
use crate::feed::{Feed, NO_SKIP};
use crate::queue::Subscriber;
use crate::scope::{Scope, Subscribers};

/// How many scopes are open in the process, thread and global.
static ACTIVE_SCOPES: AtomicUsize = AtomicUsize::new(0);

static GLOBAL_SCOPES: Mutex<Vec<Arc<Scope>>> = Mutex::new(Vec::new());
static GLOBAL_VERSION: AtomicU64 = AtomicU64::new(0);

/// Whether any scope is open anywhere: the one check `give!` makes when nobody listens.
#[inline(always)]
pub(crate) fn any_scope_open() -> bool {
    ACTIVE_SCOPES.load(Ordering::Relaxed) != 0
}

/// Opens a scope: counted, registered if global, and entered by the calling thread if not.
pub(crate) fn open(global: bool) -> Arc<Scope> {
    crate::clock::warm_up();
    let scope = Scope::new(global);
    ACTIVE_SCOPES.fetch_add(1, Ordering::SeqCst);
    if global {
        global_scopes().push(scope.clone());
        GLOBAL_VERSION.fetch_add(1, Ordering::Release);
    } else {
        enter_thread_scope(&scope);
    }
    scope
}

/// Finishes a scope: nothing is delivered to it any more and every stream completes once
/// drained. Idempotent.
pub(crate) fn finish(scope: &Arc<Scope>) {
    if !scope.mark_finished() {
        return;
    }
    ACTIVE_SCOPES.fetch_sub(1, Ordering::SeqCst);
    if scope.is_global() {
        global_scopes().retain(|s| !Arc::ptr_eq(s, scope));
        GLOBAL_VERSION.fetch_add(1, Ordering::Release);
    }
    exit_thread_scope(scope);
    scope.close_subscribers();
}

fn global_scopes() -> MutexGuard<'static, Vec<Arc<Scope>>> {
    // The list stays consistent even if a holder panicked: every change is a single push/retain.
    GLOBAL_SCOPES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A scope as one thread sees it: with a cached copy of its subscriber list.
struct Route {
    scope: Arc<Scope>,
    /// The scope's version that `subscribers` was copied at (`u64::MAX`: never copied).
    version: u64,
    subscribers: Subscribers,
}

impl Route {
    fn new(scope: Arc<Scope>) -> Self {
        Self {
            scope,
            version: u64::MAX,
            subscribers: Arc::default(),
        }
    }

    /// The scope's feed and its bounded subscribers (the list refreshed if it changed).
    #[inline]
    fn targets(&mut self) -> (&Feed, &[Arc<Subscriber>]) {
        let version = self.scope.version();
        if version != self.version {
            self.subscribers = self.scope.subscribers();
            self.version = version;
        }
        (self.scope.feed(), &self.subscribers)
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
    /// Brings the routes up to date (the global list, finished thread scopes left); returns
    /// whether any of them is open.
    fn refresh(&mut self) -> bool {
        let version = GLOBAL_VERSION.load(Ordering::Acquire);
        if version != self.global_version {
            self.globals = global_scopes().iter().cloned().map(Route::new).collect();
            self.global_version = version;
        }
        if self.stack.iter().any(|r| r.scope.is_finished()) {
            self.stack.retain(|r| !r.scope.is_finished());
        }
        // The thread scopes left were open when looked at just now; a global scope leaves the
        // list only at the next version, so it is looked at.
        !self.stack.is_empty() || self.globals.iter().any(|r| !r.scope.is_finished())
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

/// Whether any scope this thread gives to (its own, then the global ones) meets `test`, the
/// routes refreshed first.
fn any_scope(test: impl Fn(&Scope) -> bool) -> bool {
    ROUTES
        .try_with(|routes| {
            if let Ok(mut routes) = routes.try_borrow_mut() {
                let _ = routes.refresh();
            }
            routes
                .try_borrow()
                .is_ok_and(|routes| routes.scopes().any(|s| test(s)))
        })
        .unwrap_or(false)
}

/// The give path, in one visit to this thread's routes: they are refreshed and checked for an
/// open scope; only then is the event built — with the routes released, since a field
/// expression may itself give — and delivered. Nothing is built when nobody on this thread
/// (or globally) listens.
#[inline]
pub(crate) fn give(build: impl FnOnce() -> Event) {
    let _ = ROUTES.try_with(|routes| {
        {
            // A give from inside delivery (none runs user code) or from a field expression of
            // an outer give finds the routes free: the borrow ends before `build` runs.
            let Ok(mut table) = routes.try_borrow_mut() else {
                return;
            };
            if !table.refresh() {
                return;
            }
        }
        deliver(routes, build());
    });
}

/// Delivers `event` to the scopes of this thread and to the global scopes: once to each
/// scope's feed (its lossless subscribers, however many), once to each bounded subscriber.
/// The event itself goes to the last of them (one reference-count round trip less).
fn deliver(routes: &RefCell<Routes>, event: Event) {
    // Pushing runs no user code, so the routes cannot be borrowed here already.
    let Ok(mut routes) = routes.try_borrow_mut() else {
        return;
    };
    // The common case, one scope on this thread with only lossless subscribers (a loop inside
    // `given()` and its sinks), without the general walk's iterator chain.
    let routes = &mut *routes;
    if let ([route], []) = (routes.stack.as_mut_slice(), routes.globals.as_slice()) {
        if route.scope.is_finished() {
            return;
        }
        let (feed, subscribers) = route.targets();
        if subscribers.is_empty() {
            if feed.has_readers() {
                feed.push(event, NO_SKIP);
            }
            return;
        }
    }
    let mut previous: Option<Target<'_>> = None;
    for route in routes.routes_mut() {
        if route.scope.is_finished() {
            continue;
        }
        let (feed, subscribers) = route.targets();
        let feed = feed.has_readers().then_some(Target::Feed(feed));
        let queues = subscribers.iter().map(Target::Queue);
        for target in feed.into_iter().chain(queues) {
            if let Some(previous) = previous.replace(target) {
                previous.push(event.clone());
            }
        }
    }
    if let Some(last) = previous {
        last.push(event);
    }
}

/// Where the give path hands an event.
enum Target<'a> {
    Feed(&'a Feed),
    Queue(&'a Arc<Subscriber>),
}

impl Target<'_> {
    #[inline]
    fn push(self, event: Event) {
        match self {
            Target::Feed(feed) => feed.push(event, NO_SKIP),
            Target::Queue(queue) => queue.push(event),
        }
    }
}

/// Delivers `event` to the global scopes that are not in `except` (a
/// [`Giver`](crate::Giver) delivers to its own scopes itself), skipping the feed reader
/// `skip`.
pub(crate) fn dispatch_global(event: &Event, except: &[Arc<Scope>], skip: u64) {
    let deliver = |scope: &Arc<Scope>| {
        if !except.iter().any(|s| Arc::ptr_eq(s, scope)) {
            scope.deliver(event, skip);
        }
    };
    // This thread's copy of the global list (no lock unless the list changed); delivering runs
    // no user code, so the routes are free unless this thread is inside `deliver` itself.
    let delivered = ROUTES
        .try_with(|routes| {
            let Ok(mut routes) = routes.try_borrow_mut() else {
                return false;
            };
            let _ = routes.refresh();
            routes
                .globals
                .iter()
                .for_each(|route| deliver(&route.scope));
            true
        })
        .unwrap_or(false);
    if !delivered {
        global_scopes().clone().iter().for_each(deliver);
    }
}

/// The stop tokens of the global scopes open now.
pub(crate) fn global_stop_tokens() -> Vec<crate::StopToken> {
    global_scopes()
        .iter()
        .map(|scope| scope.stop_token().clone())
        .collect()
}

/// Whether a global scope is open.
pub(crate) fn has_global_scopes() -> bool {
    !global_scopes().is_empty()
}

/// `f` over this thread's open (not finished) scopes, outermost first; `R::default()` when
/// the thread's routes are gone (thread exit) or being changed (a re-entrant call).
fn with_open_thread_scopes<R: Default>(
    f: impl FnOnce(&mut dyn Iterator<Item = &Arc<Scope>>) -> R,
) -> R {
    ROUTES
        .try_with(|routes| {
            routes.try_borrow().map_or_else(
                |_| R::default(),
                |r| {
                    let mut open = r
                        .stack
                        .iter()
                        .map(|r| &r.scope)
                        .filter(|scope| !scope.is_finished());
                    f(&mut open)
                },
            )
        })
        .unwrap_or_default()
}

/// The thread scopes of this thread, outermost first.
pub(crate) fn current_thread_scopes() -> Vec<Arc<Scope>> {
    with_open_thread_scopes(|open| open.cloned().collect())
}

/// Whether `scope` is one of this thread's open scopes: [`current_thread_scopes`] without
/// collecting them, for a probed call that asks it once per call.
pub(crate) fn thread_is_in(scope: &Arc<Scope>) -> bool {
    with_open_thread_scopes(|mut open| Iterator::any(&mut open, |s| Arc::ptr_eq(s, scope)))
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
    any_scope_open() && any_scope(|s| s.stop_token().is_stopped())
}
