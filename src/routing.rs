//! The routing of given events: which scopes an event given on a thread reaches. The one
//! owner of the process-wide registry (open scopes, global scopes) and of each thread's routes.
//!
//! Every open scope counts in [`ACTIVE_SCOPES`], so `give!` with no scope open anywhere costs one
//! relaxed load. A thread keeps a stack of the thread scopes it is in, a copy of the global
//! scopes and, for each of those scopes, a copy of its bounded subscriber list; from them it
//! decides once what a give does (its [`Plan`]: nothing, one feed, or the general walk).
//!
//! # One load per give
//!
//! Everything the plan depends on that another thread can change — a scope finishing, a global
//! scope opening, a bounded subscription starting or ending — bumps [`EPOCH`] *after* the
//! change (`Release`). A give loads the epoch (`Acquire`) and rebuilds its plan only when it
//! moved, so a plan used at epoch `e` reflects every change that bumped the epoch up to `e`.
//! What only this thread changes (entering or leaving a thread scope) marks its own plan
//! stale. A change that races with a give is ordered by the feeds themselves: an event pushed
//! into a scope that has just finished is refused by its closed feed, exactly as when the give
//! came first. The readers a feed has are not part of the plan: a give checks them with one
//! relaxed load, since a subscription must see the next give made after it returns.
//!
//! # The common case without the table
//!
//! The plan of a thread giving into one scope (a loop inside `given()`) is copied, as a raw
//! pointer to the scope's feed, into a thread-local [`FastPlan`] that needs no borrow and no
//! destructor check: a give compares its epoch with [`EPOCH`] and appends. The pointer is valid
//! while the plan that holds the scope is this thread's current one; every rebuild or
//! invalidation of the plan (and the routes' destruction at thread exit) republishes the copy
//! with a new `version`. A give's field expressions run between its check and its append and may
//! change this thread's routes (a nested give rebuilds the plan, a scope opened or finished
//! inside one invalidates it): the give appends to the feed it checked only if the version has
//! not moved, else it takes the general path.

use std::cell::{Cell, RefCell};
use std::ptr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::Event;
use crate::feed::{Feed, NO_SKIP};
use crate::queue::{Delivery, Subscriber};
use crate::scope::{Scope, Subscribers, Subscription};

/// How many scopes are open in the process, thread and global.
static ACTIVE_SCOPES: AtomicUsize = AtomicUsize::new(0);

static GLOBAL_SCOPES: Mutex<Vec<Arc<Scope>>> = Mutex::new(Vec::new());
/// Bumped when the global list changes: a thread copies the list again only then.
static GLOBAL_VERSION: AtomicU64 = AtomicU64::new(0);

/// Bumped after every change another thread's plan depends on (see the module doc).
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// A plan that must be rebuilt whatever the epoch (this thread's scopes changed).
const STALE: u64 = u64::MAX;

/// Publishes a change that threads' plans depend on.
fn bump_epoch() {
    EPOCH.fetch_add(1, Ordering::Release);
}

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
        bump_epoch();
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
    bump_epoch();
    exit_thread_scope(scope);
    scope.close_subscribers();
}

/// A new subscription to `scope` (a bounded one changes what the give path pushes to).
pub(crate) fn subscribe(scope: &Scope, delivery: Delivery) -> Subscription {
    let subscription = scope.subscribe(delivery);
    if matches!(subscription, Subscription::Queue(_)) {
        bump_epoch();
    }
    subscription
}

/// Ends a bounded subscription to `scope`.
pub(crate) fn unsubscribe(scope: &Scope, subscriber: &Arc<Subscriber>) {
    scope.unsubscribe(subscriber);
    bump_epoch();
}

fn global_scopes() -> MutexGuard<'static, Vec<Arc<Scope>>> {
    // The list stays consistent even if a holder panicked: every change is a single push/retain.
    GLOBAL_SCOPES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A scope as one thread sees it: with a copy of its bounded subscriber list.
struct Route {
    scope: Arc<Scope>,
    subscribers: Subscribers,
}

impl Route {
    /// A route whose subscriber list the next rebuild of the plan copies (every route is
    /// refreshed there, and a new route always comes with one).
    fn new(scope: Arc<Scope>) -> Self {
        Self {
            scope,
            subscribers: Subscribers::default(),
        }
    }

    /// The route brought up to the scope's current subscriber list.
    fn refresh(&mut self) {
        self.subscribers = self.scope.subscribers();
    }
}

/// What a give on this thread does, decided when the routes last changed.
enum Plan {
    /// No open scope receives this thread's events.
    Nobody,
    /// One open scope, whose subscribers all read its feed: push there.
    Feed(Arc<Scope>),
    /// Several scopes, or bounded subscribers: the general walk.
    Walk,
}

/// What one thread routes its events to.
struct Routes {
    /// The thread scopes this thread is in, outermost first.
    stack: Vec<Route>,
    /// A copy of the global scopes, valid for `global_version`.
    globals: Vec<Route>,
    global_version: u64,
    /// Built at the epoch [`FAST`] records (the one place it is kept).
    plan: Plan,
}

impl Routes {
    /// The plan for this thread's gives, rebuilt if the epoch moved or this thread's scopes
    /// changed.
    #[inline]
    fn plan(&mut self) -> &Plan {
        let epoch = EPOCH.load(Ordering::Acquire);
        if epoch != FAST.get().epoch {
            self.rebuild(epoch);
        }
        &self.plan
    }

    /// Brings the routes up to date at `epoch`: the global list if it changed, finished thread
    /// scopes left, every route's subscriber list, and the plan.
    #[cold]
    fn rebuild(&mut self, epoch: u64) {
        let version = GLOBAL_VERSION.load(Ordering::Acquire);
        if version != self.global_version {
            self.globals = global_scopes().iter().cloned().map(Route::new).collect();
            self.global_version = version;
        }
        self.stack.retain(|r| !r.scope.is_finished());
        // A global scope leaves the list only at the next version: it is looked at.
        self.globals.retain(|r| !r.scope.is_finished());
        self.routes_mut().for_each(Route::refresh);
        // The copy is stale while the plan changes (its epoch is an older one, or STALE):
        // a give from a scope dropped here (its events' drops) takes the table's path,
        // which finds the table borrowed.
        self.plan = match (self.stack.as_slice(), self.globals.as_slice()) {
            ([], []) => Plan::Nobody,
            ([only], []) | ([], [only]) if only.subscribers.is_empty() => {
                Plan::Feed(only.scope.clone())
            }
            _ => Plan::Walk,
        };
        FastPlan::publish(epoch, &self.plan);
    }

    /// Marks the plan stale: this thread's scopes changed. The plan's scope is let go now, so
    /// a scope this thread left is not held until its next give.
    fn invalidate(&mut self) {
        // The copy first: letting go of the plan's scope may drop it (and its events), and a
        // give from there must not find the copy pointing into it.
        FastPlan::publish(STALE, &Plan::Nobody);
        self.plan = Plan::Nobody;
    }

    /// The scopes a give reaches, brought up to date.
    fn scopes(&mut self) -> impl Iterator<Item = &Arc<Scope>> {
        let _ = self.plan();
        self.stack.iter().chain(&self.globals).map(|r| &r.scope)
    }

    fn routes_mut(&mut self) -> impl Iterator<Item = &mut Route> {
        self.stack.iter_mut().chain(&mut self.globals)
    }
}

impl Drop for Routes {
    /// At thread exit: the copy must not outlive the scope its pointer points into.
    fn drop(&mut self) {
        FastPlan::publish(STALE, &Plan::Nobody);
    }
}

/// This thread's plan as the give path reads it first: a copy of [`Routes`]' plan that a give
/// reads without borrowing the table (see the module doc, "The common case without the
/// table").
#[derive(Clone, Copy)]
struct FastPlan {
    /// The epoch the plan was built at, or [`STALE`]: the only record of it, which
    /// [`Routes::plan`] compares too.
    epoch: u64,
    /// Moved at every change of the plan.
    version: u64,
    /// The feed of [`Plan::Feed`]'s scope, held by the plan; null for any other plan.
    feed: *const Feed,
    /// The plan is [`Plan::Nobody`].
    nobody: bool,
}

impl FastPlan {
    const STALE: FastPlan = FastPlan {
        epoch: STALE,
        version: 0,
        feed: ptr::null(),
        nobody: false,
    };

    /// Copies `plan`, built at `epoch` (or [`STALE`]), for the give path, with a new version.
    fn publish(epoch: u64, plan: &Plan) {
        let version = FAST.get().version.wrapping_add(1);
        let (feed, nobody) = match plan {
            Plan::Nobody => (ptr::null(), true),
            Plan::Feed(scope) => (ptr::from_ref(scope.feed()), false),
            Plan::Walk => (ptr::null(), false),
        };
        FAST.set(FastPlan {
            epoch,
            version,
            feed,
            nobody,
        });
    }
}

thread_local! {
    /// No destructor, so reading it checks nothing; [`Routes`]' drop makes it stale.
    static FAST: Cell<FastPlan> = const { Cell::new(FastPlan::STALE) };
}

thread_local! {
    static ROUTES: RefCell<Routes> = const {
        RefCell::new(Routes {
            stack: Vec::new(),
            globals: Vec::new(),
            global_version: 0,
            plan: Plan::Nobody,
        })
    };
}

/// Whether any scope this thread gives to (its own, then the global ones) meets `test`.
fn any_scope(test: impl Fn(&Scope) -> bool) -> bool {
    ROUTES
        .try_with(|routes| {
            routes
                .try_borrow_mut()
                .is_ok_and(|mut routes| routes.scopes().any(|s| test(s)))
        })
        .unwrap_or(false)
}

/// The give path, in one visit to this thread's routes: the plan is checked (one load when
/// nothing changed); only when someone reads is the event built — with the routes released,
/// since a field expression may itself give — and delivered. Nothing is built when nobody on
/// this thread (or globally) listens.
#[inline]
pub(crate) fn give(build: impl FnOnce() -> Event) {
    let fast = FAST.get();
    if fast.epoch == EPOCH.load(Ordering::Acquire) {
        if fast.nobody {
            return;
        }
        if !fast.feed.is_null() {
            // SAFETY: the plan `fast` copies is this thread's current one (its epoch is
            // current, and any change of the plan republishes the copy): it holds the scope,
            // which owns the feed.
            if !unsafe { &*fast.feed }.has_readers() {
                return;
            }
            let event = build();
            if FAST.get().version == fast.version {
                // SAFETY: `build` changed nothing of this thread's plan (same version), so the
                // plan checked above still holds the feed.
                unsafe { &*fast.feed }.push(event, NO_SKIP);
            } else {
                deliver_anew(event);
            }
            return;
        }
    }
    give_by_table(build);
}

/// [`give`] past its copy of the plan: the table brought up to date, then the plan followed.
#[inline(never)]
fn give_by_table(build: impl FnOnce() -> Event) {
    let _ = ROUTES.try_with(|routes| {
        {
            // A give from inside delivery (none runs user code) or from a field expression of
            // an outer give finds the routes free: the borrow ends before `build` runs.
            let Ok(mut table) = routes.try_borrow_mut() else {
                return;
            };
            match table.plan() {
                Plan::Nobody => return,
                Plan::Feed(scope) if !scope.feed().has_readers() => return,
                Plan::Feed(_) | Plan::Walk => {}
            }
        }
        deliver(routes, build());
    });
}

/// [`deliver`]s `event` by the table, after the field expressions of its give changed this
/// thread's plan.
#[cold]
#[inline(never)]
fn deliver_anew(event: Event) {
    let _ = ROUTES.try_with(|routes| deliver(routes, event));
}

/// Delivers `event` to the scopes of this thread and to the global scopes: once to each
/// scope's feed (its lossless subscribers, however many), once to each bounded subscriber.
#[inline]
fn deliver(routes: &RefCell<Routes>, event: Event) {
    // Pushing runs no user code, so the routes cannot be borrowed here already.
    let Ok(mut routes) = routes.try_borrow_mut() else {
        return;
    };
    match routes.plan() {
        Plan::Nobody => {}
        // The common case, one scope with only lossless subscribers (a loop inside `given()`
        // and its sinks), inline and without the general walk.
        Plan::Feed(scope) => scope.feed().push(event, NO_SKIP),
        Plan::Walk => walk(&mut routes, event),
    }
}

/// The general walk over every route: the event itself goes to the last target (one
/// reference-count round trip less), a clone to each other.
#[inline(never)]
fn walk(routes: &mut Routes, event: Event) {
    let mut previous: Option<Target<'_>> = None;
    for route in routes.routes_mut() {
        if route.scope.is_finished() {
            continue;
        }
        let feed = route.scope.feed();
        let feed = feed.has_readers().then_some(Target::Feed(feed));
        let queues = route.subscribers.iter().map(Target::Queue);
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
            let _ = routes.plan();
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

/// `f` over this thread's open scopes, outermost first (as of the last change any thread
/// published); `R::default()` when the thread's routes are gone (thread exit) or being changed
/// (a re-entrant call).
fn with_open_thread_scopes<R: Default>(
    f: impl FnOnce(&mut dyn Iterator<Item = &Arc<Scope>>) -> R,
) -> R {
    ROUTES
        .try_with(|routes| {
            routes.try_borrow_mut().map_or_else(
                |_| R::default(),
                |mut routes| {
                    // Brought up to date: finished scopes are gone from the stack.
                    let _ = routes.plan();
                    f(&mut routes.stack.iter().map(|r| &r.scope))
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
/// collecting them, for a probed call that asks it once per call (one load of the epoch and a
/// comparison per scope while nothing changes).
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
                routes.invalidate();
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
            routes.invalidate();
        }
    });
}

/// Whether any scope this thread gives to has been asked to stop.
pub(crate) fn stop_requested() -> bool {
    any_scope_open() && any_scope(|s| s.stop_token().is_stopped())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership_follows_entering_leaving_and_finishing() {
        let scope = open(false);
        assert!(thread_is_in(&scope));
        let elsewhere = scope.clone();
        let there = std::thread::spawn(move || thread_is_in(&elsewhere))
            .join()
            .unwrap();
        assert!(!there, "another thread is not in it");
        exit_thread_scope(&scope);
        assert!(!thread_is_in(&scope), "left");
        assert!(enter_thread_scope(&scope));
        assert!(thread_is_in(&scope), "entered again");
        let other = open(false);
        assert!(
            thread_is_in(&other) && thread_is_in(&scope),
            "two scopes asked in turn"
        );
        // Finished from another thread: only the epoch tells this one.
        let finishing = scope.clone();
        std::thread::spawn(move || finish(&finishing))
            .join()
            .unwrap();
        assert!(!thread_is_in(&scope), "finished");
        assert!(thread_is_in(&other));
        finish(&other);
        assert!(!thread_is_in(&other));
    }
}
