//! The frames of probed calls: taken from a per-thread pool, matched once against the probes of
//! their function's plan (and, for nested selectors, the enclosing frames on a per-thread
//! stack), then giving events as variables are assigned. Below `frame` (what the `#[probe]`
//! expansion calls) and above `plan` and `active` (the probes).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::active::next_wrap_id;
use super::plan::{LastPlan, SitePlan, Slot, type_tag};
use super::selector::Role;
use super::site::Site;
use super::specials::EXIT;
use crate::field::Field;
use crate::vocab::keys::WRAP;
use crate::{Event, Key, Timestamp, Value, WrapStep};

/// Frames kept for reuse per thread, at most: enough for the nesting of probed calls a loop
/// makes, few enough that an idle thread holds little.
const POOLED: usize = 32;

thread_local! {
    /// The active frames of functions that some probe names as an enclosing function,
    /// outermost first.
    static STACK: RefCell<Vec<Arc<ActiveFrame>>> = const { RefCell::new(Vec::new()) };
    /// Released frames, whose buffers the next probed calls reuse.
    static POOL: RefCell<Vec<Arc<ActiveFrame>>> = const { RefCell::new(Vec::new()) };
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Values are plain data, consistent after any panic.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One call of an instrumented function, while some probe names the function.
pub(crate) struct ActiveFrame {
    pub(crate) site: &'static Site,
    /// `None` only while pooled.
    plan: Option<Arc<SitePlan>>,
    /// Behind a lock because nested calls read the values, possibly from another thread (an
    /// `async fn` moved between threads, a spawned task).
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Per variable: its latest value and run-time type, where the plan keeps it.
    values: Vec<Option<(Value, &'static str)>>,
    matches: Vec<Match>,
    /// The fields of the event being built, written into the event's slot from here (a
    /// pooled buffer: building an event allocates nothing but its slot).
    scratch: Vec<Field>,
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
    /// Enclosing frames matched to the selector's outer functions, outermost first.
    parents: Vec<Parent>,
    /// The ids of the wrapper blocks begun and not yet ended (a stack: loops and recursion
    /// nest).
    open: Vec<u64>,
}

impl Match {
    /// Matches a probe ending in `site` against the enclosing frames; `None` if they do not
    /// match or the calling thread's events do not reach the probe's scope.
    fn new(last: &LastPlan, index: usize) -> Option<Match> {
        let outer = &last.probe.elements[..last.probe.elements.len() - 1];
        let mut parents = Vec::new();
        if !outer.is_empty() {
            parents.reserve(outer.len());
            let found = STACK
                .try_with(|stack| {
                    let stack = stack.try_borrow().ok()?;
                    // Each outer function must enclose the next one: walk outwards from the
                    // innermost, taking the nearest enclosing frame of each.
                    let mut below = stack.len();
                    for (element, resolved) in outer.iter().enumerate().rev() {
                        let (at, slot) =
                            stack[..below].iter().enumerate().rev().find_map(|(i, f)| {
                                let at = resolved.position(f.site.key())?;
                                Some((i, at))
                            })?;
                        parents.push(Parent {
                            frame: stack[at].clone(),
                            element,
                            at: slot,
                        });
                        below = at;
                    }
                    Some(())
                })
                .ok()
                .flatten();
            found?;
            parents.reverse();
        }
        if !(last.probe.receives)() {
            return None;
        }
        Some(Match {
            last: index,
            parents,
            open: Vec::new(),
        })
    }
}

/// Whether `value` of run-time type `type_name` passes `slot`'s tag and condition.
fn passes(slot: &Slot, value: &Value, type_name: &str) -> bool {
    slot.tag.is_none_or(|tag| type_tag(type_name) == tag)
        && slot.condition.as_ref().is_none_or(|c| c.matches(value))
}

/// Adds the captures `slots` reads from `values` to `fields`; `false` when a condition does not
/// hold (or its variable is not bound yet): then there is no event.
fn capture(
    fields: &mut Vec<Field>,
    slots: &[Slot],
    plan: &SitePlan,
    values: &[Option<(Value, &'static str)>],
) -> bool {
    for slot in slots.iter().filter(|s| s.role == Role::Context) {
        let kept = plan.slot(slot.index).and_then(|at| values.get(at));
        match kept.and_then(Option::as_ref) {
            Some((value, type_name)) => {
                if slot.tag.is_some_and(|tag| type_tag(type_name) != tag) {
                    continue;
                }
                if slot.condition.as_ref().is_some_and(|c| !c.matches(value)) {
                    return false;
                }
                fields.push((Key::Borrowed(slot.key), value.clone()));
            }
            None if slot.condition.is_some() => return false,
            None => {}
        }
    }
    true
}

impl ActiveFrame {
    /// A frame for a call of `site` under `plan`, matched against its probes; `None` when no
    /// probe reports from it and it need not be found by nested calls.
    pub(super) fn acquire(site: &'static Site, plan: Arc<SitePlan>) -> Option<Arc<ActiveFrame>> {
        let pooled = POOL
            .try_with(|pool| pool.try_borrow_mut().ok().and_then(|mut p| p.pop()))
            .ok()
            .flatten();
        let mut frame = pooled.unwrap_or_else(|| {
            Arc::new(ActiveFrame {
                site,
                plan: None,
                state: Mutex::new(State::default()),
            })
        });
        let this = Arc::get_mut(&mut frame).expect("a pooled frame has no other owner");
        this.site = site;
        let state = this.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        // The pooled buffers keep their capacity: no allocation once the pool is warm.
        state.matches.extend(
            plan.lasts
                .iter()
                .enumerate()
                .filter_map(|(i, last)| Match::new(last, i)),
        );
        if state.matches.is_empty() && !plan.is_outer {
            Self::release(frame);
            return None;
        }
        state.values.resize(plan.kept, None);
        this.plan = Some(plan);
        Some(frame)
    }

    /// Returns a frame to this thread's pool once no nested call holds it, dropping what it
    /// holds (values may be tensors; the plan keeps probes alive).
    pub(super) fn release(mut frame: Arc<ActiveFrame>) {
        let Some(this) = Arc::get_mut(&mut frame) else {
            return;
        };
        this.plan = None;
        let state = this.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        state.values.clear();
        state.matches.clear();
        let _ = POOL.try_with(|pool| {
            if let Ok(mut pool) = pool.try_borrow_mut()
                && pool.len() < POOLED
            {
                pool.push(frame);
            }
        });
    }

    fn plan(&self) -> &SitePlan {
        self.plan.as_ref().expect("an acquired frame has a plan")
    }

    /// Whether nested calls look for this frame on the thread's stack.
    pub(super) fn is_outer(&self) -> bool {
        self.plan().is_outer
    }

    pub(super) fn wants(&self, index: usize) -> bool {
        self.plan().wants(index)
    }

    /// Variable `index`, of run-time type `type_name`, was assigned: keep it and give the
    /// events it triggers.
    pub(super) fn set(&self, index: usize, type_name: &'static str, value: impl FnOnce() -> Value) {
        let plan = self.plan();
        if !plan.wants(index) {
            return;
        }
        let value = value();
        let mut state = lock(&self.state);
        if let Some(at) = plan.slot(index) {
            state.values[at] = Some((value.clone(), type_name));
        }
        if plan.triggers[index] {
            self.trigger(&mut state, index, &value, type_name);
        }
    }

    /// Argument `index` was bound: kept, its events given by [`ActiveFrame::arguments_bound`]
    /// once every argument is, as ptera binds them all at entry (`f(!x, y)` sees `y`).
    pub(super) fn argument(
        &self,
        index: usize,
        type_name: &'static str,
        value: impl FnOnce() -> Value,
    ) {
        // The plan keeps every argument that triggers (`SitePlan::build`).
        if let Some(at) = self.plan().slot(index) {
            lock(&self.state).values[at] = Some((value(), type_name));
        }
    }

    /// Every argument is bound: the events of those that trigger some.
    pub(super) fn arguments_bound(&self, indices: std::ops::Range<usize>) {
        let plan = self.plan();
        let mut state = lock(&self.state);
        for index in indices.filter(|i| plan.triggers.get(*i).copied().unwrap_or(false)) {
            let bound = plan.slot(index).and_then(|at| state.values[at].clone());
            if let Some((value, type_name)) = bound {
                self.trigger(&mut state, index, &value, type_name);
            }
        }
    }

    /// The events variable `index`'s new `value` gives.
    fn trigger(&self, state: &mut State, index: usize, value: &Value, type_name: &'static str) {
        let plan = self.plan();
        let State {
            values,
            matches,
            scratch,
        } = state;
        for m in matches.iter_mut() {
            let last = &plan.lasts[m.last];
            if !last.probe.is_open() {
                continue;
            }
            let slots = &last.slots().slots;
            let has_focus = last.slots().has_focus;
            let is_end = last.slots().has_end;
            for slot in slots {
                match slot.role {
                    Role::Focus if slot.index == index && passes(slot, value, type_name) => {
                        let wrap = is_end.then(|| {
                            let id = next_wrap_id();
                            m.open.push(id);
                            (WrapStep::Begin, id)
                        });
                        self.emit(last, m, values, scratch, Some((slot, value)), wrap);
                    }
                    Role::End if slot.index == index => {
                        if let Some(id) = m.open.pop() {
                            self.emit(
                                last,
                                m,
                                values,
                                scratch,
                                Some((slot, value)),
                                Some((WrapStep::End, id)),
                            );
                        }
                    }
                    _ => {}
                }
            }
            if !has_focus && index == EXIT {
                self.emit(last, m, values, scratch, None, None);
            }
        }
    }

    /// Gives one event of `last`'s probe: the enclosing frames' captures, then this frame's,
    /// with `given` (the variable that triggered it) in its place.
    fn emit(
        &self,
        last: &LastPlan,
        m: &Match,
        values: &[Option<(Value, &'static str)>],
        fields: &mut Vec<Field>,
        given: Option<(&Slot, &Value)>,
        wrap: Option<(WrapStep, u64)>,
    ) {
        fields.clear();
        let slots = &last.slots().slots;
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
            fields.push((Key::Borrowed(WRAP), Value::Map(mark)));
        }
        for parent in &m.parents {
            let outer = &last.probe.elements[parent.element].sites[parent.at];
            let state = lock(&parent.frame.state);
            if !capture(fields, &outer.slots, parent.frame.plan(), &state.values) {
                return;
            }
        }
        // This frame's captures in the selector's order, the trigger in its place.
        let mut pushed_given = false;
        for slot in slots {
            if let Some((g, value)) = given
                && std::ptr::eq(slot, g)
            {
                fields.push((Key::Borrowed(slot.key), value.clone()));
                pushed_given = true;
            } else if !capture(fields, std::slice::from_ref(slot), self.plan(), values) {
                return;
            }
        }
        debug_assert!(given.is_none() || pushed_given);
        last.probe.send(Event::from_fields(
            fields.drain(..),
            Timestamp::now(),
            Some(&self.site.origin),
        ));
    }

    pub(super) fn overridable<T: 'static>(
        &self,
        index: usize,
        value: T,
        conv: impl FnOnce(&T) -> Value,
    ) -> T {
        self.set(index, std::any::type_name::<T>(), || conv(&value));
        let mut slot = Some(value);
        let plan = self.plan();
        let matches: Vec<usize> = lock(&self.state).matches.iter().map(|m| m.last).collect();
        for last in matches.into_iter().map(|i| &plan.lasts[i]) {
            let focus = last
                .slots()
                .slots
                .iter()
                .any(|s| s.role == Role::Focus && s.index == index);
            if !focus {
                continue;
            }
            let overrider = lock(&last.probe.overrider).clone();
            if let Some(overrider) = overrider {
                overrider.apply(
                    &mut slot,
                    self.site.info.variables[index],
                    self.site.info.name,
                );
            }
        }
        // `apply` always puts a value back; it is only empty if an override panicked, which
        // unwinds past this line.
        slot.expect("an override puts a value back")
    }
}

pub(super) fn push_frame(frame: &Arc<ActiveFrame>) -> bool {
    STACK
        .try_with(|s| {
            s.try_borrow_mut()
                .map(|mut s| s.push(frame.clone()))
                .is_ok()
        })
        .unwrap_or(false)
}

pub(super) fn pop_frame(frame: &Arc<ActiveFrame>) {
    let _ = STACK.try_with(|s| {
        if let Ok(mut s) = s.try_borrow_mut()
            && let Some(at) = s.iter().rposition(|f| Arc::ptr_eq(f, frame))
        {
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
