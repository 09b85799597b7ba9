//! The hot path: what an instrumented function runs. [`Frame::enter`] costs one relaxed load
//! when no probe names the function; every hook after it is a branch on a local `None`.
//!
//! While some probe names the function, its frame records the variables the probes read and
//! gives their events, and sits on a thread-local stack of instrumented frames so that a probe
//! `outer > inner > x` can tell that `inner` runs inside `outer` (however many un-annotated
//! calls lie between them). Only frames of functions that some probe names are ever on it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use super::active::{Match, next_wrap_id, outer_captures, probes_for};
use super::selector::Role;
use super::site::{ERROR, EXIT, Site, VALUE};
use crate::event::Fields;
use crate::{Event, Key, Timestamp, Value, WRAP_KEY, WrapStep};

thread_local! {
    /// The active instrumented frames of this thread, outermost first.
    static STACK: RefCell<Vec<Arc<ActiveFrame>>> = const { RefCell::new(Vec::new()) };
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Values are plain data, consistent after any panic.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One call of an instrumented function, while some probe names the function.
pub(crate) struct ActiveFrame {
    pub(crate) site: &'static Site,
    matches: Vec<Match>,
    /// Per variable: whether its latest value is kept (a probe captures it).
    kept: Vec<bool>,
    /// Per variable: whether setting it gives events.
    triggers: Vec<bool>,
    values: Mutex<Vec<Option<Value>>>,
    /// Per match: the ids of the wrapper blocks begun and not yet ended (a stack: loops and
    /// recursion nest).
    open: Mutex<Vec<Vec<u64>>>,
}

impl ActiveFrame {
    fn new(site: &'static Site) -> ActiveFrame {
        let probes = probes_for(site);
        let stack = STACK
            .try_with(|s| s.try_borrow().map(|s| s.clone()).unwrap_or_default())
            .unwrap_or_default();
        let matches: Vec<Match> = probes
            .iter()
            .filter_map(|p| Match::new(p, site, &stack))
            .collect();
        let n = site.info.variables.len();
        let mut kept = vec![false; n];
        let mut triggers = vec![false; n];
        for m in &matches {
            m.reads().for_each(|i| kept[i] = true);
            triggers[m.focus] = true;
            if let Some(end) = m.end {
                triggers[end] = true;
            }
        }
        for probe in &probes {
            outer_captures(probe, site)
                .into_iter()
                .for_each(|i| kept[i] = true);
        }
        ActiveFrame {
            site,
            open: Mutex::new(vec![Vec::new(); matches.len()]),
            matches,
            kept,
            triggers,
            values: Mutex::new(vec![None; n]),
        }
    }

    fn wants(&self, index: usize) -> bool {
        self.kept.get(index).copied().unwrap_or(false)
            || self.triggers.get(index).copied().unwrap_or(false)
    }

    /// Variable `index` was assigned: keep it and give the events it triggers.
    fn set(&self, index: usize, value: impl FnOnce() -> Value) {
        if !self.wants(index) {
            return;
        }
        let value = value();
        if self.kept[index] {
            lock(&self.values)[index] = Some(value.clone());
        }
        if !self.triggers[index] {
            return;
        }
        for (at, m) in self.matches.iter().enumerate() {
            if !m.probe.is_open() {
                continue;
            }
            if m.focus == index {
                let wrap = m.end.map(|_| {
                    let id = next_wrap_id();
                    lock(&self.open)[at].push(id);
                    (WrapStep::Begin, id)
                });
                self.emit(m, index, &value, Role::Focus, wrap);
            }
            if m.end == Some(index) {
                let id = lock(&self.open)[at].pop();
                if let Some(id) = id {
                    self.emit(m, index, &value, Role::End, Some((WrapStep::End, id)));
                }
            }
        }
    }

    fn emit(
        &self,
        m: &Match,
        index: usize,
        value: &Value,
        role: Role,
        wrap: Option<(WrapStep, u64)>,
    ) {
        let mut fields = Fields::new();
        if let Some((step, id)) = wrap {
            let name = m
                .own
                .iter()
                .find(|c| c.2 == Role::Focus)
                .map(|c| c.1.clone())
                .unwrap_or_default();
            let mark = BTreeMap::from([
                ("id".to_owned(), Value::U64(id)),
                ("name".to_owned(), Value::from(name)),
                ("step".to_owned(), Value::from(step.as_str())),
            ]);
            fields.push((Key::Borrowed(WRAP_KEY), Value::Map(mark)));
        }
        for (frame, captures) in &m.parents {
            let values = lock(&frame.values);
            for (i, key) in captures {
                if let Some(v) = values.get(*i).and_then(Option::as_ref) {
                    fields.push((Key::Owned(key.clone()), v.clone()));
                }
            }
        }
        let values = lock(&self.values);
        for (i, key, capture_role) in &m.own {
            if *i == index && *capture_role == role && (role != Role::Focus || m.focus_given) {
                fields.push((Key::Owned(key.clone()), value.clone()));
            } else if *capture_role == Role::Context
                && let Some(v) = values.get(*i).and_then(Option::as_ref)
            {
                fields.push((Key::Owned(key.clone()), v.clone()));
            }
        }
        drop(values);
        m.probe.send(Event::from_parts(
            fields,
            Timestamp::now(),
            Some(&self.site.origin),
        ));
    }

    fn overridable<T: 'static>(&self, index: usize, value: T, conv: impl FnOnce(&T) -> Value) -> T {
        self.set(index, || conv(&value));
        let mut slot = Some(value);
        for m in &self.matches {
            if m.focus != index || !m.focus_given {
                continue;
            }
            let overrider = lock(&m.probe.overrider).clone();
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

/// The frame of one call of an instrumented function: `None` inside when no probe names it.
#[doc(hidden)]
pub struct Frame {
    active: Option<Arc<ActiveFrame>>,
    /// Whether the frame is on this thread's stack until it drops (sync functions; an async
    /// function's frame is pushed around each poll instead).
    pushed: bool,
}

impl Frame {
    /// Enters a call of a sync function.
    #[inline(always)]
    pub fn enter(site: &'static Site) -> Frame {
        if !site.is_active() {
            return Frame {
                active: None,
                pushed: false,
            };
        }
        Self::enter_active(site, true)
    }

    /// Enters a call of an async function (at its first poll).
    #[inline(always)]
    pub fn enter_async(site: &'static Site) -> Frame {
        if !site.is_active() {
            return Frame {
                active: None,
                pushed: false,
            };
        }
        Self::enter_active(site, false)
    }

    #[cold]
    #[inline(never)]
    fn enter_active(site: &'static Site, push: bool) -> Frame {
        let frame = Arc::new(ActiveFrame::new(site));
        let pushed = push && push_frame(&frame);
        Frame {
            active: Some(frame),
            pushed,
        }
    }

    /// A special without a value (`#enter`, `#loop_x`) happened.
    #[inline(always)]
    pub fn fire(&self, index: usize) {
        if let Some(active) = &self.active {
            active.set(index, || Value::Bool(true));
        }
    }

    /// Variable `index` was assigned; `value` converts it if some probe reads it.
    #[inline(always)]
    pub fn var(&self, index: usize, value: impl FnOnce() -> Value) {
        if let Some(active) = &self.active {
            active.set(index, value);
        }
    }

    /// Variable `index` was bound to `value`, which a probe may replace.
    #[inline(always)]
    pub fn overridable<T: 'static>(
        &self,
        index: usize,
        value: T,
        conv: impl FnOnce(&T) -> Value,
    ) -> T {
        match &self.active {
            None => value,
            Some(active) => active.overridable(index, value, conv),
        }
    }

    /// A `for` iteration begins (`#loop_x`); the guard marks its end (`#endloop_x`), however
    /// the iteration ends (`continue`, `break`, `return`, `?`).
    #[inline(always)]
    pub fn iteration(&self, begins: &'static [usize], ends: &'static [usize]) -> Iteration<'_> {
        match &self.active {
            None => Iteration { frame: None, ends },
            Some(active) => {
                begins
                    .iter()
                    .for_each(|i| active.set(*i, || Value::Bool(true)));
                Iteration {
                    frame: Some(active),
                    ends,
                }
            }
        }
    }

    /// The function returned: `#value`, and `#error` for an `Err`.
    #[inline(always)]
    pub fn returned(&self, value: impl FnOnce() -> Value, error: impl FnOnce() -> Option<Value>) {
        if let Some(active) = &self.active {
            active.set(VALUE, value);
            if active.wants(ERROR)
                && let Some(error) = error()
            {
                active.set(ERROR, || error);
            }
        }
    }
}

impl Drop for Frame {
    fn drop(&mut self) {
        if let Some(active) = self.active.take() {
            if !std::thread::panicking() {
                active.set(EXIT, || Value::Bool(true));
            }
            if self.pushed {
                pop_frame(&active);
            }
        }
    }
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("active", &self.active.is_some())
            .finish()
    }
}

fn push_frame(frame: &Arc<ActiveFrame>) -> bool {
    STACK
        .try_with(|s| {
            s.try_borrow_mut()
                .map(|mut s| s.push(frame.clone()))
                .is_ok()
        })
        .unwrap_or(false)
}

fn pop_frame(frame: &Arc<ActiveFrame>) {
    let _ = STACK.try_with(|s| {
        if let Ok(mut s) = s.try_borrow_mut()
            && let Some(at) = s.iter().rposition(|f| Arc::ptr_eq(f, frame))
        {
            s.remove(at);
        }
    });
}

/// Guard of one `for` iteration; see [`Frame::iteration`].
#[doc(hidden)]
pub struct Iteration<'a> {
    frame: Option<&'a ActiveFrame>,
    ends: &'static [usize],
}

impl Drop for Iteration<'_> {
    fn drop(&mut self) {
        if let Some(frame) = self.frame
            && !std::thread::panicking()
        {
            self.ends
                .iter()
                .for_each(|i| frame.set(*i, || Value::Bool(true)));
        }
    }
}

/// Whether some probe names the function of `site`: the one relaxed load an instrumented
/// call makes before running its body as written when nobody probes it.
#[doc(hidden)]
#[inline(always)]
pub fn is_active(site: &'static Site) -> bool {
    site.is_active()
}

/// Runs the instrumented body of a sync function that some probe names, out of line: the
/// function's hot path then keeps the code size and stack frame of its body as written.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn cold<R>(instrumented: impl FnOnce() -> R) -> R {
    instrumented()
}

/// Runs a sync function's body (a closure, so that `return` and `?` come back here).
#[doc(hidden)]
#[inline(always)]
pub fn call<R>(body: impl FnOnce() -> R) -> R {
    body()
}

/// Runs an async function's body with its frame on the stack of whichever thread polls it.
#[doc(hidden)]
pub fn in_frame<F: Future>(frame: &Frame, future: F) -> InFrame<'_, F> {
    InFrame { frame, future }
}

pin_project_lite::pin_project! {
    /// Future of [`in_frame`].
    #[doc(hidden)]
    pub struct InFrame<'a, F> {
        frame: &'a Frame,
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for InFrame<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        match &this.frame.active {
            None => this.future.poll(cx),
            Some(active) => {
                struct Popped<'a>(&'a Arc<ActiveFrame>, bool);
                impl Drop for Popped<'_> {
                    fn drop(&mut self) {
                        if self.1 {
                            pop_frame(self.0);
                        }
                    }
                }
                let _popped = Popped(active, push_frame(active));
                this.future.poll(cx)
            }
        }
    }
}
