//! The frames of probed calls: taken from a per-thread pool, matched against the probes of
//! their function's plan (and, for nested selectors, the enclosing frames on a per-thread
//! stack), then giving events as variables are assigned. Below `frame` (what the `#[probe]`
//! expansion calls) and above `plan` and `active` (the probes).
//!
//! A released frame keeps its plan and its matches: the next call of the same function on the
//! same thread reuses them when the site's epoch still is the plan's (one atomic load and a
//! compare), and only redoes what depends on the call (the enclosing frames, the thread's
//! scopes). A plan it no longer matches (the probe set changed) is dropped when the frame is
//! released or reused, and by any reload of a plan on its thread: a pool keeps an ended probe
//! alive only until its thread's next reload (or exit).
//!
//! A variable that only lone `f > x` probes read gives their events straight from its hook
//! (`give_alone`); any other goes through the frame's record, the kept values and the trigger
//! loop over the plan's probes.

use std::cell::{Cell, RefCell, UnsafeCell};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use smallvec::SmallVec;

use super::active::next_wrap_id;
use super::overrides::Overrider;
use super::plan::{LastPlan, Recipe, SitePlan, Slot, Source, send_lone_each, type_tag};
use super::selector::Role;
use super::site::Site;
use super::specials::EXIT;
use crate::arena::InlineWriter;
use crate::vocab::keys::WRAP;
use crate::{Event, Key, Value, WrapStep};

#[cfg(test)]
mod tests;

/// Frames kept for reuse per thread, at most: enough for the nesting of probed calls a loop
/// makes, few enough that an idle thread holds little.
const POOLED: usize = 32;

thread_local! {
    /// The active frames of functions that some probe names as an enclosing function,
    /// outermost first.
    static STACK: RefCell<Vec<Arc<ActiveFrame>>> = const { RefCell::new(Vec::new()) };
    /// Released frames, whose plans, matches and buffers the next probed calls reuse.
    static POOL: RefCell<Vec<Arc<ActiveFrame>>> = const { RefCell::new(Vec::new()) };
    /// The version of this thread's `STACK`: changed by every push and pop, and never the
    /// same on two threads (see [`next_generation`]), so that a match may reuse what it found
    /// on the stack while the stack is the one it searched.
    static GENERATION: Cell<u64> = const { Cell::new(0) };
    /// The last search [`enclosed_by`] made: for which stack generation, outer functions and
    /// plan epoch, and what it found.
    static ENCLOSED: Cell<(EnclosedKey, bool)> =
        const { Cell::new(((NOT_SEARCHED, std::ptr::null(), 0), false)) };
}

/// What an answer of [`enclosed_by`] depends on: the stack's generation, the outer functions
/// (by address) and the epoch of the plan that holds their probe.
type EnclosedKey = (u64, *const super::plan::Resolved, u64);

/// Where the next thread to change its stack starts counting its generations: each thread
/// takes 2^32 of them at a time, so no two threads' generations are equal.
static GENERATIONS: AtomicU64 = AtomicU64::new(0);

/// [`Match::searched`] when no search is to be reused.
const NOT_SEARCHED: u64 = u64::MAX;

/// Gives this thread's stack a new generation (it is about to change).
fn next_generation() {
    let _ = GENERATION.try_with(|generation| {
        let next = generation.get().wrapping_add(1);
        // A thread's first change, or 2^32 changes since its last block: a block of its own.
        let next = if next & u64::from(u32::MAX) == 0 || generation.get() == 0 {
            GENERATIONS.fetch_add(1 << 32, Ordering::Relaxed) + (1 << 32) + 1
        } else {
            next
        };
        generation.set(next);
    });
}

/// This thread's stack's generation, `None` while the thread is being torn down.
#[inline(always)]
fn generation() -> Option<u64> {
    GENERATION.try_with(Cell::get).ok()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Values are plain data, consistent after any panic.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One call of an instrumented function, while some probe names the function.
pub(crate) struct ActiveFrame {
    pub(crate) site: &'static Site,
    /// `None` until a call of the site loads one; kept while pooled, for the next call.
    plan: Option<Arc<SitePlan>>,
    /// The plan's `wanted`, copied here: what each hook tests.
    wanted: u64,
    /// The plan's `alone`, copied here: the hooks that give lone `f > x` events directly.
    alone: u64,
    /// The plan's `plain`, copied here: the hooks whose events all come from plain probes'
    /// recipes.
    plain: u64,
    /// The plan's `nests`: whether a released frame has enclosing frames or open wrappers to
    /// drop from its matches.
    nests: bool,
    /// The plan's `argument_triggers`: whether binding the arguments gives events.
    argument_triggers: bool,
    /// Whether other frames may read `state` (the plan's `is_outer`): the frame is then on the
    /// thread's stack, where nested calls find it, possibly from another thread (an `async fn`
    /// moved between threads, a task spawned with `carry`), and every access takes `lock`.
    /// Otherwise only the hooks of its own call touch it, one at a time, without a lock.
    shared: bool,
    lock: Mutex<()>,
    state: UnsafeCell<State>,
}

// SAFETY: `state` is only reached through `ActiveFrame::with_state`, which takes `lock` when
// the frame is `shared`; an unshared frame is reached by the hooks of its own call alone
// (never on the stack, never carried: no other `Arc` of it exists), which run one at a time,
// from whichever thread polls or runs that call. `State` itself is `Send`.
unsafe impl Sync for ActiveFrame {}

/// A frame's kept variables, where the plan keeps them: each one's latest value and run-time
/// type, and when it was bound (a `$v` capture standing for several variables takes the one
/// bound last, as ptera's immediate probe does).
#[derive(Default)]
struct Kept {
    values: Vec<Option<(Value, &'static str)>>,
    /// Per kept variable, where the plan [`orders`](SitePlan::orders) (else empty): the count
    /// of bindings in the frame when it was bound last.
    bound: Vec<u32>,
    binds: u32,
}

impl Kept {
    /// Variable `at` was bound to `value`.
    #[inline(always)]
    fn bind(&mut self, at: usize, value: Value, type_name: &'static str) {
        self.values[at] = Some((value, type_name));
        if let Some(bound) = self.bound.get_mut(at) {
            self.binds = self.binds.wrapping_add(1);
            *bound = self.binds;
        }
    }

    /// Variable `at`'s value replaced (an override of an argument already kept): bound when it
    /// was.
    #[inline(always)]
    fn replace(&mut self, at: usize, value: Value, type_name: &'static str) {
        self.values[at] = Some((value, type_name));
    }

    /// No variable bound: the frame's next call starts with none.
    #[inline(always)]
    fn unbind_all(&mut self) {
        for kept in &mut self.values {
            match kept {
                // Forgotten where it lies: taken out first, it was copied to the stack only to
                // find that it owns nothing (see `discard`).
                Some((value, _)) if value.is_scalar() => std::mem::forget(kept.take()),
                Some(_) => *kept = None,
                None => {}
            }
        }
        self.binds = 0;
    }

    /// Room for `len` variables, none bound; their bindings counted if `orders`.
    fn reset(&mut self, len: usize, orders: bool) {
        self.values.clear();
        self.values.resize(len, None);
        self.bound.clear();
        self.bound.resize(if orders { len } else { 0 }, 0);
        self.binds = 0;
    }

    /// The value of `slot`'s variable and its run-time type, if bound.
    #[inline(always)]
    fn get(&self, slot: &Slot, plan: &SitePlan) -> Option<&(Value, &'static str)> {
        plan.slot(slot.index)
            .and_then(|at| self.values.get(at))
            .and_then(Option::as_ref)
    }

    /// Whether `slot` is one its event reads: any slot but one of several variables a `$v`
    /// capture stands for (`shared`), of which only the last bound that carries the capture's
    /// tag is read. (A condition on `$v` is refused when the selector is parsed.)
    #[inline(always)]
    fn reads(&self, slot: &Slot, slots: &[Slot], plan: &SitePlan) -> bool {
        !slot.shared || self.reads_shared(slot, slots, plan)
    }

    /// [`Kept::reads`] of a `shared` slot: out of line, since most probes have none.
    #[inline(never)]
    fn reads_shared(&self, slot: &Slot, slots: &[Slot], plan: &SitePlan) -> bool {
        let bound_at = |s: &Slot| {
            let (_, type_name) = self.get(s, plan)?;
            if s.tag.is_some_and(|tag| type_tag(type_name) != tag) {
                return None;
            }
            plan.slot(s.index).map(|at| self.bound[at])
        };
        let Some(mine) = bound_at(slot) else {
            return false;
        };
        slots
            .iter()
            .filter(|s| s.shared && s.role == Role::Context && s.key == slot.key)
            .all(|s| std::ptr::eq(s, slot) || bound_at(s).is_none_or(|other| other < mine))
    }
}

/// Drops `value`, without a call when it is a number, a `bool` or null: they own nothing, and
/// `Value`'s drop glue is an out-of-line call and a jump on the variant (about 20 instructions,
/// twice per probed call: the frame's kept argument and the trigger's value).
#[inline(always)]
fn discard(value: Value) {
    if value.is_scalar() {
        std::mem::forget(value);
    } else {
        drop(value);
    }
}

#[derive(Default)]
struct State {
    kept: Kept,
    /// One per probe of the plan's `lasts`, in its order.
    matches: Vec<Match>,
}

/// An enclosing frame matched to one of a selector's outer functions.
struct Parent {
    frame: Arc<ActiveFrame>,
    /// Which function of the selector, and which of its sites.
    element: usize,
    at: usize,
}

/// How one probe reports from one frame of its last function.
struct Match {
    /// Index in the plan's `lasts`.
    last: usize,
    /// Whether the probe reports from this call: its enclosing functions were found and the
    /// calling thread's events reach its scope.
    active: bool,
    /// Enclosing frames matched to the selector's outer functions whose variables the probe
    /// reads (captures or conditions there), outermost first. A function the selector only
    /// names (`outer` in `outer > f > x`) must enclose the call but is not kept: nothing
    /// reads its frame.
    parents: Vec<Parent>,
    /// The stack generation of the last search for the enclosing frames that kept none of
    /// them ([`NOT_SEARCHED`] if none): while the thread's stack is still that one, the
    /// search would find the same, [`Match::found`].
    searched: u64,
    /// What that search found.
    found: bool,
    /// The ids of the wrapper blocks begun and not yet ended (a stack: loops and recursion
    /// nest).
    open: Vec<u64>,
}

impl Match {
    fn new(last: usize) -> Match {
        Match {
            last,
            active: false,
            parents: Vec::new(),
            searched: NOT_SEARCHED,
            found: false,
            open: Vec::new(),
        }
    }

    /// Matches the probe `last` against this call: the enclosing frames, and whether the
    /// calling thread's events reach the probe's scope. Returns whether it reports.
    #[inline(always)]
    fn rematch(&mut self, last: &LastPlan) -> bool {
        let outer = last.probe.outer();
        self.active = (outer.is_empty() || self.encloses(outer)) && (last.probe.receives)();
        self.active
    }

    /// Whether the call is enclosed by the selector's outer functions, as
    /// [`Match::find_parents`] answers; without searching again while the thread's stack is
    /// the one a search that kept no frame saw (`outer > f > x` called in a loop: the stack
    /// does not change between the calls).
    #[inline(always)]
    fn encloses(&mut self, outer: &[super::plan::Resolved]) -> bool {
        match generation() {
            Some(generation) if generation == self.searched => self.found,
            generation => self.search(outer, generation),
        }
    }

    /// [`Match::encloses`] when the stack changed: searched, and the answer kept for
    /// `generation` if no frame was.
    #[inline(never)]
    fn search(&mut self, outer: &[super::plan::Resolved], generation: Option<u64>) -> bool {
        self.found = self.find_parents(outer);
        self.searched = match generation {
            Some(generation) if self.parents.is_empty() => generation,
            _ => NOT_SEARCHED,
        };
        self.found
    }

    /// Finds the nearest enclosing frame of each outer function, innermost first: each must
    /// enclose the next one. Keeps those the probe reads (see [`Match::parents`]): each kept
    /// one is an `Arc` cloned here and dropped when the frame is released, two locked
    /// instructions per call that `outer > f > x` does not need.
    #[inline(always)]
    fn find_parents(&mut self, outer: &[super::plan::Resolved]) -> bool {
        let parents = &mut self.parents;
        let found = search_stack(outer, |element, frame, at| {
            if !outer[element].sites[at].slots.is_empty() {
                parents.push(Parent {
                    frame: frame.clone(),
                    element,
                    at,
                });
            }
        });
        if found {
            parents.reverse();
        } else {
            parents.clear();
        }
        found
    }
}

/// Searches this thread's stack for the nearest enclosing frame of each of the selector's
/// outer functions `outer`, innermost first, each enclosing the next; `found(element, frame,
/// at)` hears of each (`at`: which of the function's sites the frame runs). Whether all were
/// found.
#[inline(always)]
fn search_stack(
    outer: &[super::plan::Resolved],
    mut found: impl FnMut(usize, &Arc<ActiveFrame>, usize),
) -> bool {
    STACK
        .try_with(|stack| {
            let stack = stack.try_borrow().ok()?;
            let mut below = stack.len();
            for (element, resolved) in outer.iter().enumerate().rev() {
                let (i, at) = stack[..below].iter().enumerate().rev().find_map(|(i, f)| {
                    let at = resolved.position(f.site.key())?;
                    Some((i, at))
                })?;
                found(element, &stack[i], at);
                below = i;
            }
            Some(())
        })
        .ok()
        .flatten()
        .is_some()
}

/// Whether the calling thread runs inside the selector's outer functions `outer` (each inside
/// the one before it), as a frame's match would find at the call's entry: what a call without
/// a frame asks at each event of a probe that names enclosing functions but reads nothing of
/// them (`outer > f > x`). `epoch` is that of the plan the probe was found in.
#[inline(always)]
pub(super) fn enclosed_by(outer: &[super::plan::Resolved], epoch: u64) -> bool {
    outer.is_empty() || enclosed_by_outer(outer, epoch)
}

/// [`enclosed_by`] of a probe that names enclosing functions: the last answer again while
/// this thread's stack is the one it searched, for the same functions under the same plan (a
/// loop in `outer` calling `f`); else searched.
#[inline(never)]
fn enclosed_by_outer(outer: &[super::plan::Resolved], epoch: u64) -> bool {
    let Some(generation) = generation() else {
        return search_stack(outer, |_, _, _| {});
    };
    // The functions are known by their address, which stays theirs while a plan of `epoch`
    // (which holds the probe) is current: the epoch says which.
    let key = (generation, outer.as_ptr(), epoch);
    ENCLOSED
        .try_with(|last| {
            let (searched, found) = last.get();
            if searched == key {
                return found;
            }
            let found = search_stack(outer, |_, _, _| {});
            last.set((key, found));
            found
        })
        .unwrap_or(false)
}

/// Whether `value` of run-time type `type_name` passes `slot`'s tag and condition.
fn passes(slot: &Slot, value: &Value, type_name: &str) -> bool {
    slot.tag.is_none_or(|tag| type_tag(type_name) == tag)
        && slot.condition.as_ref().is_none_or(|c| c.matches(value))
}

/// Adds the captures `slots` reads from `values` to `fields`; `false` when a condition does not
/// hold (or its variable is not bound yet): then there is no event.
fn capture(fields: &mut InlineWriter<'_>, slots: &[Slot], plan: &SitePlan, kept: &Kept) -> bool {
    slots
        .iter()
        .filter(|s| s.role == Role::Context && kept.reads(s, slots, plan))
        .all(|slot| capture_one(fields, slot, plan, kept))
}

/// [`capture`] of one context slot.
#[inline(always)]
fn capture_one(fields: &mut InlineWriter<'_>, slot: &Slot, plan: &SitePlan, kept: &Kept) -> bool {
    match context_value(slot, plan, kept) {
        Some(Some(value)) => {
            fields.push(Key::from_static(slot.key), value.clone());
            true
        }
        Some(None) => true,
        None => false,
    }
}

/// What one context slot reads from `values`: `None` when its condition does not hold (or its
/// variable, which it tests, is not bound yet): then there is no event; `Some(None)` when it
/// captures nothing (unbound, or a value of another tag).
#[inline(always)]
fn context_value<'v>(slot: &Slot, plan: &SitePlan, kept: &'v Kept) -> Option<Option<&'v Value>> {
    match kept.get(slot, plan) {
        Some((value, type_name)) => {
            if slot.tag.is_some_and(|tag| type_tag(type_name) != tag) {
                return Some(None);
            }
            if slot.condition.as_ref().is_some_and(|c| !c.matches(value)) {
                return None;
            }
            Some(Some(value))
        }
        None => slot.condition.is_none().then_some(None),
    }
}

/// Whether every context slot's condition in `slots` holds on `values` (what [`capture`]
/// checks, without capturing).
fn conditions_hold(slots: &[Slot], plan: &SitePlan, kept: &Kept) -> bool {
    slots
        .iter()
        .filter(|s| s.role == Role::Context && kept.reads(s, slots, plan))
        .all(|slot| context_value(slot, plan, kept).is_some())
}

/// What `last`'s probe reads in the enclosing frame `parent`; `None` when nothing (a frame
/// the probe reads nothing of is not kept as a parent, see [`Match::parents`]; this stays a
/// check, not an assumption).
#[inline(always)]
fn outer_slots<'a>(last: &'a LastPlan, parent: &Parent) -> Option<&'a [Slot]> {
    let outer = &last.probe.elements[parent.element].sites[parent.at];
    (!outer.slots.is_empty()).then_some(&outer.slots[..])
}

/// The probes (indices into the plan's `lasts`) that a lone `f > x` event of variable `index`
/// goes to: the active matches whose probe is lone on that variable.
fn lone_reporting<'a>(
    state: &'a State,
    plan: &'a SitePlan,
    index: usize,
) -> impl Iterator<Item = usize> + 'a {
    state
        .matches
        .iter()
        .filter(move |m| m.active && plan.lasts[m.last].alone_on(index).is_some())
        .map(|m| m.last)
}

/// The frame, mutably, if `frame` is its only reference: `Arc::get_mut` without its locked
/// compare-exchange on the weak count. A locked instruction waits for every store the probed
/// call made so far to drain from the store buffer, and the two of each call (taking a frame
/// from the pool, giving it back) were a fifth of a probed call's time (`perf annotate` of the
/// probe bench). No `Weak` of a frame is ever made, so a strong count of one, read and then
/// fenced with `Acquire` (after the `Release` of every other reference's drop), is the same
/// exclusive access.
#[inline(always)]
fn unique(frame: &mut Arc<ActiveFrame>) -> Option<&mut ActiveFrame> {
    if Arc::strong_count(frame) != 1 {
        return None;
    }
    fence(Ordering::Acquire);
    // SAFETY: `frame` is the only reference (above) and is borrowed mutably for the result's
    // lifetime, so nobody can clone it meanwhile; the pointer is the `Arc`'s own, as
    // `Arc::get_mut`'s is.
    Some(unsafe { &mut *Arc::as_ptr(frame).cast_mut() })
}

impl ActiveFrame {
    /// A frame for a call of `site`, matched against the probes of its plan; `None` when no
    /// probe reports from it and it need not be found by nested calls.
    #[inline(always)]
    pub(super) fn acquire(site: &'static Site) -> Option<Arc<ActiveFrame>> {
        let epoch = site.epoch();
        // This site's frame if the pool has one (its plan and matches may still hold), else
        // any. A loop calling the function finds it on top, where the last call left it.
        let pooled = POOL
            .try_with(|pool| {
                let mut pool = pool.try_borrow_mut().ok()?;
                if pool.last().is_some_and(|f| std::ptr::eq(f.site, site)) {
                    return pool.pop();
                }
                let at = pool
                    .iter()
                    .rposition(|f| std::ptr::eq(f.site, site))
                    .or(pool.len().checked_sub(1))?;
                Some(pool.swap_remove(at))
            })
            .ok()
            .flatten();
        let mut frame = pooled.unwrap_or_else(|| ActiveFrame::new(site));
        let this = unique(&mut frame).expect("a pooled frame has no other owner");
        let current =
            std::ptr::eq(this.site, site) && this.plan.as_ref().is_some_and(|p| p.epoch == epoch);
        if !current && !this.load(site) {
            Self::set_aside(frame);
            return None;
        }
        let plan = this.plan.as_ref().expect("loaded above");
        let state = this.state.get_mut();
        let mut reports = false;
        // Each match names its probe (`m.last`): no zip of the two lists to set up per call.
        for m in &mut state.matches {
            reports |= m.rematch(&plan.lasts[m.last]);
        }
        if !reports && !plan.is_outer {
            Self::set_aside(frame);
            return None;
        }
        Some(frame)
    }

    /// A frame with no plan yet, for the pool to keep once released.
    #[cold]
    #[inline(never)]
    fn new(site: &'static Site) -> Arc<ActiveFrame> {
        Arc::new(ActiveFrame {
            site,
            plan: None,
            wanted: 0,
            alone: 0,
            plain: 0,
            nests: false,
            argument_triggers: false,
            shared: false,
            lock: Mutex::new(()),
            state: UnsafeCell::new(State::default()),
        })
    }

    /// Loads `site`'s current plan into this frame, whose own is stale or of another site,
    /// with one match per probe; `false` when no probe names the site any more. Also drops
    /// the stale plans of the other frames in this thread's pool: the probe set changed, and
    /// a pooled frame of a function no longer probed is otherwise only reused (and its plan
    /// dropped) when that function is probed again.
    #[cold]
    #[inline(never)]
    fn load(&mut self, site: &'static Site) -> bool {
        let _ = POOL.try_with(|pool| {
            if let Ok(mut pool) = pool.try_borrow_mut() {
                pool.iter_mut()
                    .filter_map(Arc::get_mut)
                    .filter(|f| f.plan.as_ref().is_some_and(|p| p.epoch != f.site.epoch()))
                    .for_each(ActiveFrame::forget_plan);
            }
        });
        self.site = site;
        self.plan = site.plan.load_full();
        let state = self.state.get_mut();
        state.matches.clear();
        state.kept.reset(0, false);
        let Some(plan) = &self.plan else {
            return false;
        };
        // The pooled buffers keep their capacity: no allocation once the pool is warm.
        state.matches.extend((0..plan.lasts.len()).map(Match::new));
        state.kept.reset(plan.kept, plan.orders);
        self.wanted = plan.wanted;
        self.alone = plan.alone;
        self.plain = plan.plain;
        self.nests = plan.nests;
        self.argument_triggers = plan.argument_triggers;
        self.shared = plan.is_outer;
        true
    }

    /// Drops the plan (and the probes it names) and what depended on it.
    fn forget_plan(&mut self) {
        self.plan = None;
        let state = self.state.get_mut();
        state.matches.clear();
        state.kept.reset(0, false);
    }

    /// [`ActiveFrame::release`] of a frame that reports nothing, out of the hot path.
    #[cold]
    #[inline(never)]
    fn set_aside(frame: Arc<ActiveFrame>) {
        Self::release(frame);
    }

    /// Returns a frame to this thread's pool once no nested call holds it, dropping the values
    /// it holds (they may be tensors) and the enclosing frames it matched. It keeps its plan
    /// for the next call of its function while that plan is current; a stale plan is dropped,
    /// so that the probes it names are not kept alive by the pool.
    #[inline(always)]
    pub(super) fn release(mut frame: Arc<ActiveFrame>) {
        let Some(this) = unique(&mut frame) else {
            return;
        };
        let state = this.state.get_mut();
        state.kept.unbind_all();
        if this.nests {
            for m in &mut state.matches {
                m.parents.clear();
                m.open.clear();
            }
        }
        if this
            .plan
            .as_ref()
            .is_some_and(|p| p.epoch != this.site.epoch())
        {
            this.forget_plan();
        }
        let _ = POOL.try_with(|pool| {
            if let Ok(mut pool) = pool.try_borrow_mut()
                && pool.len() < POOLED
            {
                pool.push(frame);
            }
        });
    }

    /// Runs `f` on the frame's state, under its lock if other frames may read it.
    #[inline(always)]
    fn with_state<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        if self.shared {
            // Apart: a guard to drop after `f`, even as it unwinds, made the unshared path
            // copy `f`'s captures to the stack first.
            return self.with_state_locked(f);
        }
        // SAFETY: an unshared frame's state is only reached by its own call's hooks, one at a
        // time (see the `Sync` impl). No caller reaches this frame's state again inside `f`:
        // `f` reads other frames only, the enclosing ones, through their own `with_state`.
        f(unsafe { &mut *self.state.get() })
    }

    /// [`ActiveFrame::with_state`] of a shared frame: under its lock.
    #[inline(never)]
    fn with_state_locked<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let _guard = lock(&self.lock);
        // SAFETY: a shared frame's state is only reached under `lock`, held here. No caller
        // reaches this frame's state again inside `f` (see `with_state`).
        f(unsafe { &mut *self.state.get() })
    }

    #[inline(always)]
    fn plan(&self) -> &SitePlan {
        self.plan.as_ref().expect("an acquired frame has a plan")
    }

    fn origin(&self) -> Option<&'static crate::Origin> {
        Some(&self.site.origin)
    }

    /// Whether nested calls look for this frame on the thread's stack.
    pub(super) fn is_outer(&self) -> bool {
        self.shared
    }

    /// Whether the frame records variable `index`: one bit of a word for the first 64.
    #[inline(always)]
    pub(super) fn wants(&self, index: usize) -> bool {
        if index < 64 {
            self.wanted >> index & 1 != 0
        } else {
            self.plan().wants(index)
        }
    }

    /// Variable `index`, of run-time type `type_name`, was assigned: keep it and give the
    /// events it triggers. Converts the value only if some probe reads it.
    #[inline(always)]
    pub(super) fn set(&self, index: usize, type_name: &'static str, value: impl FnOnce() -> Value) {
        if self.wants(index) {
            self.set_wanted(index, type_name, value);
        }
    }

    /// [`ActiveFrame::set`] of a variable the caller found [wanted](ActiveFrame::wants).
    #[inline(always)]
    pub(super) fn set_wanted(
        &self,
        index: usize,
        type_name: &'static str,
        value: impl FnOnce() -> Value,
    ) {
        if index < 64 && self.alone >> index & 1 != 0 {
            self.give_alone(index, value());
        } else if index < 64 && self.plain >> index & 1 != 0 {
            self.give_plain(index, type_name, value());
        } else {
            self.record(index, type_name, value());
        }
    }

    /// The plan's `wanted`: bit `i` says whether the frame records variable `i` (below 64).
    #[inline(always)]
    pub(super) fn wanted(&self) -> u64 {
        self.wanted
    }

    /// [`ActiveFrame::set`] of a variable whose only events are lone `f > x` probes' on it
    /// (the plan's `alone`): each is `{x}`, built straight from the value, which moves into
    /// the last one.
    #[inline(never)]
    fn give_alone(&self, index: usize, value: Value) {
        let plan = self.plan();
        // Which probes this call reports to, looked up without the value: it moves into the
        // event afterwards, outside the frame's state (and its lock, if shared).
        let reporting: SmallVec<[usize; 2]> =
            self.with_state(|state| lone_reporting(state, plan, index).collect());
        let targets = reporting.iter().filter_map(|&last| {
            let last = &plan.lasts[last];
            Some((&*last.probe, last.alone_on(index)?))
        });
        send_lone_each(targets, || value, &self.site.origin);
    }

    /// [`ActiveFrame::set`] of a variable whose events are all plain probes' (the plan's
    /// `plain`): kept if the plan keeps it, then each of its recipes given, with nothing to
    /// test but whether the probe reports from this call and still has a stream.
    #[inline(never)]
    fn give_plain(&self, index: usize, type_name: &'static str, value: Value) {
        let plan = self.plan();
        if self.shared {
            self.with_state_locked(|state| {
                self.trigger_plain(state, plan, index, &value, type_name);
            });
        } else {
            // SAFETY: as in `with_state`; written out so that the unshared path inlines the
            // trigger rather than calling the closure both paths share.
            let state = unsafe { &mut *self.state.get() };
            self.trigger_plain(state, plan, index, &value, type_name);
        }
        discard(value);
    }

    /// [`ActiveFrame::give_plain`] on the frame's state.
    #[inline(always)]
    fn trigger_plain(
        &self,
        state: &mut State,
        plan: &SitePlan,
        index: usize,
        value: &Value,
        type_name: &'static str,
    ) {
        let State { kept, matches } = state;
        if let Some(at) = plan.slot(index) {
            kept.bind(at, value.clone(), type_name);
        }
        for &(last, recipe) in &plan.plain_on[index] {
            let m = &matches[last];
            let last = &plan.lasts[last];
            if m.active && last.probe.is_open() {
                self.emit_plain_here(last, m, kept, &last.recipes[recipe], value);
            }
        }
    }

    /// [`ActiveFrame::set`] of a variable the frame records.
    #[inline(never)]
    fn record(&self, index: usize, type_name: &'static str, value: Value) {
        let plan = self.plan();
        let at = plan.slot(index);
        // A recorded variable the frame does not keep is one that triggers.
        if !plan.triggers[index] {
            if let Some(at) = at {
                self.with_state(|state| state.kept.bind(at, value, type_name));
            }
            return;
        }
        // The trigger reads the value where it is: nothing moved into the state's closure.
        self.with_state(|state| self.bind_and_trigger(state, at, index, &value, type_name));
        discard(value);
    }

    /// [`ActiveFrame::record`] of a variable that triggers, on the frame's state: kept (at
    /// `at`) for later events, then its own. A method rather than a closure so that both
    /// paths of [`ActiveFrame::with_state`] inline it (a closure called from both was made a
    /// call of its own).
    #[inline(always)]
    fn bind_and_trigger(
        &self,
        state: &mut State,
        at: Option<usize>,
        index: usize,
        value: &Value,
        type_name: &'static str,
    ) {
        if let Some(at) = at {
            state.kept.bind(at, value.clone(), type_name);
        }
        self.trigger(state, index, value, type_name);
    }

    /// Argument `index`, which the caller found [wanted](ActiveFrame::wants), was bound:
    /// kept (the plan keeps every argument that triggers, `SitePlan::build`), its events
    /// given by [`ActiveFrame::arguments_bound`] once every argument is, as ptera binds them
    /// all at entry (`f(!x, y)` sees `y`).
    #[inline(always)]
    pub(super) fn argument_wanted(
        &self,
        index: usize,
        type_name: &'static str,
        value: impl FnOnce() -> Value,
    ) {
        self.keep(index, type_name, value());
    }

    #[inline(never)]
    fn keep(&self, index: usize, type_name: &'static str, value: Value) {
        if let Some(at) = self.plan().slot(index) {
            self.with_state(|state| state.kept.bind(at, value, type_name));
        }
    }

    /// Every argument is bound: the events of those that trigger some.
    #[inline(always)]
    pub(super) fn arguments_bound(&self, indices: std::ops::Range<usize>) {
        if self.argument_triggers {
            self.trigger_arguments(indices);
        }
    }

    #[inline(never)]
    fn trigger_arguments(&self, indices: std::ops::Range<usize>) {
        let plan = self.plan();
        self.with_state(|state| {
            for index in indices.filter(|i| plan.triggers.get(*i).copied().unwrap_or(false)) {
                let bound = plan
                    .slot(index)
                    .and_then(|at| state.kept.values[at].clone());
                if let Some((value, type_name)) = bound {
                    self.trigger(state, index, &value, type_name);
                }
            }
        });
    }

    /// The events variable `index`'s new `value` gives.
    #[inline(always)]
    fn trigger(&self, state: &mut State, index: usize, value: &Value, type_name: &'static str) {
        let plan = self.plan();
        let State { kept, matches } = state;
        for m in matches.iter_mut().filter(|m| m.active) {
            let last = &plan.lasts[m.last];
            if !last.probe.is_open() {
                continue;
            }
            if last.alone.is_some() {
                // Beside probes that read more of the frame (a variable only lone probes read
                // takes `give_alone` instead).
                if let Some(key) = last.alone_on(index) {
                    last.probe
                        .send_lone(key, || value.clone(), &self.site.origin);
                }
                continue;
            }
            if last.plain {
                // No tag, condition or end to test: each event on the variable gives.
                for recipe in last.recipes.iter().filter(|r| r.on == index) {
                    self.emit_plain(last, m, kept, recipe, value);
                }
                continue;
            }
            let here = last.slots();
            let slots = &here.slots;
            let has_focus = here.has_focus;
            let is_end = here.has_end;
            for slot in slots {
                match slot.role {
                    Role::Focus if slot.index == index && passes(slot, value, type_name) => {
                        let wrap = is_end.then(|| {
                            let id = next_wrap_id();
                            m.open.push(id);
                            (WrapStep::Begin, id)
                        });
                        self.emit(last, m, kept, Some((slot, value)), wrap);
                    }
                    Role::End if slot.index == index => {
                        if let Some(id) = m.open.pop() {
                            self.emit(
                                last,
                                m,
                                kept,
                                Some((slot, value)),
                                Some((WrapStep::End, id)),
                            );
                        }
                    }
                    _ => {}
                }
            }
            if !has_focus && index == EXIT {
                self.emit(last, m, kept, None, None);
            }
        }
    }
    /// Gives one event of `last`'s probe: the enclosing frames' captures, then this frame's,
    /// with `given` (the variable that triggered it) in its place. The conditions are checked
    /// first, and the fields are then written straight into the event's slot (no list built
    /// and copied).
    fn emit(
        &self,
        last: &LastPlan,
        m: &Match,
        kept: &Kept,
        given: Option<(&Slot, &Value)>,
        wrap: Option<(WrapStep, u64)>,
    ) {
        let slots = &last.slots().slots;
        let plan = self.plan();
        if !self.match_holds(last, m, kept) {
            return;
        }
        // An enclosing frame another thread runs (a carried task) may change between the check
        // and the capture: an event whose condition no longer holds then is not sent.
        let mut whole = true;
        let event = Event::from_writer(self.origin(), |mut fields| {
            let fields = &mut fields;
            if let Some((step, id)) = wrap {
                let name = slots
                    .iter()
                    .find(|s| s.role == Role::Focus)
                    .map(|s| s.key)
                    .unwrap_or_default();
                let mark = BTreeMap::from([
                    ("id".to_owned(), Value::U64(id)),
                    ("name".to_owned(), Value::from(name)),
                    ("step".to_owned(), Value::from(step.as_str())),
                ]);
                fields.push(Key::from_static(WRAP), Value::Map(mark));
            }
            for parent in &m.parents {
                if let Some(outer) = outer_slots(last, parent) {
                    let frame = &parent.frame;
                    whole &=
                        frame.with_state(|state| capture(fields, outer, frame.plan(), &state.kept));
                }
            }
            // This frame's captures in the selector's order, the trigger in its place.
            for slot in slots {
                match given {
                    Some((g, value)) if std::ptr::eq(slot, g) => {
                        fields.push(Key::from_static(slot.key), value.clone());
                    }
                    _ if slot.role == Role::Context && kept.reads(slot, slots, plan) => {
                        capture_one(fields, slot, plan, kept);
                    }
                    _ => {}
                }
            }
        });
        if whole {
            last.probe.send(event);
        }
    }

    /// [`ActiveFrame::emit`] of a [`plain`](LastPlan::plain) probe, out of line: for the general
    /// trigger, which gives these beside other probes' events.
    #[inline(never)]
    fn emit_plain(&self, last: &LastPlan, m: &Match, kept: &Kept, recipe: &Recipe, given: &Value) {
        self.emit_plain_here(last, m, kept, recipe, given);
    }

    /// [`ActiveFrame::emit`] of a [`plain`](LastPlan::plain) probe: nothing to check, the
    /// fields written as `recipe` says, `given` (the trigger's value) in its place. Inlined in
    /// [`ActiveFrame::give_plain`], whose one job it is: a call less per event (its arguments
    /// spilled, its registers saved and restored).
    #[inline(always)]
    fn emit_plain_here(
        &self,
        last: &LastPlan,
        m: &Match,
        kept: &Kept,
        recipe: &Recipe,
        given: &Value,
    ) {
        // Inlined into the slot's build: called, the closure takes the writer through memory
        // (`f(a) > x`: 10 instructions per event more).
        let event = Event::from_writer(
            self.origin(),
            #[inline(always)]
            |mut fields| {
                let fields = &mut fields;
                for parent in &m.parents {
                    if let Some(outer) = outer_slots(last, parent) {
                        let frame = &parent.frame;
                        // Without conditions a capture always holds.
                        frame.with_state(|state| capture(fields, outer, frame.plan(), &state.kept));
                    }
                }
                for &(key, source) in &recipe.fields {
                    let value = match source {
                        Source::Given => Some(given),
                        Source::Kept(at) => kept.values[at].as_ref().map(|(value, _)| value),
                    };
                    if let Some(value) = value {
                        fields.push(Key::from_static(key), value.clone());
                    }
                }
            },
        );
        last.probe.send(event);
    }

    /// Whether the conditions of `last`'s probe hold for match `m`: on this frame's `values`
    /// and on the enclosing frames' (what its event needs, and what its override needs).
    #[inline(always)]
    fn match_holds(&self, last: &LastPlan, m: &Match, kept: &Kept) -> bool {
        !last.checks || self.conditions_hold_all(last, m, kept)
    }

    /// [`ActiveFrame::match_holds`] of a probe with conditions.
    #[inline(never)]
    fn conditions_hold_all(&self, last: &LastPlan, m: &Match, kept: &Kept) -> bool {
        conditions_hold(&last.slots().slots, self.plan(), kept)
            && m.parents.iter().all(|parent| {
                outer_slots(last, parent).is_none_or(|outer| {
                    let frame = &parent.frame;
                    frame.with_state(|state| conditions_hold(outer, frame.plan(), &state.kept))
                })
            })
    }

    /// Variable `index` (a `let` binding, an assignment or a `for` variable) was bound to
    /// `value`, which an override may replace: the overrides first, then the events, so that
    /// every probe sees the value the function goes on with.
    pub(super) fn overridable<T: 'static>(
        &self,
        index: usize,
        value: T,
        conv: impl Fn(&T) -> Value,
    ) -> T {
        let value = self.apply_overrides(index, value, &conv);
        self.set(index, std::any::type_name::<T>(), || conv(&value));
        value
    }

    /// Argument `index`, kept with the others by [`ActiveFrame::argument_wanted`], may be
    /// replaced: called once every argument is kept, so that an override's conditions see them
    /// all, and before [`ActiveFrame::arguments_bound`] gives their events (one per argument,
    /// with the value the function goes on with).
    pub(super) fn override_argument<T: 'static>(
        &self,
        index: usize,
        value: T,
        conv: impl Fn(&T) -> Value,
    ) -> T {
        let value = self.apply_overrides(index, value, &conv);
        // Kept again with the value the function goes on with, bound when the others were.
        if self.wants(index)
            && let Some(at) = self.plan().slot(index)
        {
            let type_name = std::any::type_name::<T>();
            self.with_state(|state| state.kept.replace(at, conv(&value), type_name));
        }
        value
    }

    /// `value` after the overrides that apply to variable `index`, in the plan's order.
    fn apply_overrides<T: 'static>(
        &self,
        index: usize,
        value: T,
        conv: &impl Fn(&T) -> Value,
    ) -> T {
        let overriders = self.overriders(index, std::any::type_name::<T>(), || conv(&value));
        let mut slot = Some(value);
        // Outside the frame's state: an override is the user's code, and may call probed
        // functions.
        for overrider in overriders {
            overrider.apply(
                &mut slot,
                self.site.info.variables[index],
                self.site.info.name,
            );
        }
        // `apply` always puts a value back; it is only empty if an override panicked, which
        // unwinds past this line.
        slot.expect("an override puts a value back")
    }

    /// The overrides for variable `index`, bound to a value of type `type_name`: those of the
    /// active probes whose focus it is and whose conditions hold — on the value itself
    /// (`square > rval=16`), on the frame's other captures and on the enclosing frames'
    /// (`superbrie(k=7) > brie > x`), as for the event the probe would give.
    fn overriders(
        &self,
        index: usize,
        type_name: &'static str,
        value: impl FnOnce() -> Value,
    ) -> SmallVec<[Overrider; 1]> {
        let plan = self.plan();
        let mut value = Some(value);
        let mut converted = None;
        self.with_state(|state| {
            let mut found = SmallVec::new();
            for m in state.matches.iter().filter(|m| m.active) {
                let last = &plan.lasts[m.last];
                let is_focus = |s: &&Slot| s.role == Role::Focus && s.index == index;
                let mut focus = last.slots().slots.iter().filter(is_focus).peekable();
                // Not `is_open`: an override's probe has no stream (`override_with` took it).
                if focus.peek().is_none() {
                    continue;
                }
                let Some(overrider) = lock(&last.probe.overrider).clone() else {
                    continue;
                };
                // Converted once, and only when an override may apply.
                let value = converted.get_or_insert_with(|| (value.take().expect("once"))());
                if focus.any(|slot| passes(slot, value, type_name))
                    && self.match_holds(last, m, &state.kept)
                {
                    found.push(overrider);
                }
            }
            found
        })
    }
}

/// Puts `frame` on this thread's stack of enclosing frames; `false` if it could not (the
/// thread is being torn down, or the stack is borrowed).
pub(super) fn push_frame(frame: &Arc<ActiveFrame>) -> bool {
    STACK
        .try_with(|s| {
            s.try_borrow_mut()
                .map(|mut s| {
                    next_generation();
                    s.push(frame.clone());
                })
                .is_ok()
        })
        .unwrap_or(false)
}

/// Takes `frame` (its last occurrence) off this thread's stack.
pub(super) fn pop_frame(frame: &Arc<ActiveFrame>) {
    let _ = STACK.try_with(|s| {
        if let Ok(mut s) = s.try_borrow_mut()
            && let Some(at) = s.iter().rposition(|f| Arc::ptr_eq(f, frame))
        {
            next_generation();
            s.remove(at);
        }
    });
}

/// This thread's stack of enclosing frames, for a future that carries it to another task.
pub(super) fn current_stack() -> Vec<Arc<ActiveFrame>> {
    STACK
        .try_with(|s| s.try_borrow().map(|s| s.clone()).unwrap_or_default())
        .unwrap_or_default()
}
