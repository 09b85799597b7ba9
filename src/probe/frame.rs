//! The hot path: what an instrumented function runs. [`Frame::enter`] costs one relaxed load
//! when no probe names the function; every hook after it is a branch on a local `None`.
//!
//! While some probe names the function, its frame records the variables the probes read and
//! gives their events, and sits on a thread-local stack of instrumented frames so that a probe
//! `outer > inner > x` can tell that `inner` runs inside `outer` (however many un-annotated
//! calls lie between them). Only frames of functions that some probe names are ever on it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use super::active_frame::{ActiveFrame, pop_frame, push_frame};
use super::direct;
use super::site::Site;
use super::specials::{ERROR, EXIT, SPECIALS, VALUE};
use super::values::value_of;
use crate::Value;

/// The frame of one call of an instrumented function: `None` inside when no probe names it.
#[doc(hidden)]
pub struct Frame {
    active: Option<Arc<ActiveFrame>>,
    site: &'static Site,
    /// Bit `i` (for `i` below 64), read as `active` says. With a frame, its plan's `wanted`
    /// (the frame records variable `i`), copied into the call's own local so that each hook
    /// tests one bit of it without reaching into the frame (the plan, hence the word, is
    /// fixed for the call). Without one, the site's `direct`: the variables whose `var` hooks
    /// give lone `f > x` events by themselves (every probe of the function is such a probe).
    /// One word for both keeps the frame the size it was before the first.
    bits: u64,
    /// Whether the frame is on this thread's stack until it drops (sync functions; an async
    /// function's frame is pushed around each poll instead).
    pushed: bool,
}

impl Frame {
    /// Enters a call of a sync function.
    #[inline(always)]
    pub fn enter(site: &'static Site) -> Frame {
        if !site.is_active() {
            return Frame::inactive(site);
        }
        Self::enter_active(site, true)
    }

    /// Enters a call of a sync function whose caller just saw that some probe names it
    /// ([`is_active`]): the instrumented copy of its body, out of line.
    #[inline(always)]
    pub fn enter_probed(site: &'static Site) -> Frame {
        // Should the last probe have ended since, the plan says so and the frame is inactive.
        Self::enter_active(site, true)
    }

    /// Enters a call of an async function (at its first poll).
    #[inline(always)]
    pub fn enter_async(site: &'static Site) -> Frame {
        if !site.is_active() {
            return Frame::inactive(site);
        }
        Self::enter_active(site, false)
    }

    #[inline(always)]
    fn inactive(site: &'static Site) -> Frame {
        Frame::frameless(site, 0)
    }

    /// A call without a frame: nobody probes it (`direct` 0), or only lone `f > x` probes on
    /// the variables of `direct`.
    #[inline(always)]
    fn frameless(site: &'static Site, direct: u64) -> Frame {
        Frame {
            active: None,
            site,
            bits: direct,
            pushed: false,
        }
    }

    #[cold]
    #[inline(never)]
    fn enter_active(site: &'static Site, push: bool) -> Frame {
        // Lone `f > x` probes only: no frame, no pool, nothing to do at the exit; each hook
        // of a probed variable gives from the site's current plan (`direct::give`).
        let direct = site.direct.load(Ordering::Relaxed);
        if direct != 0 {
            return Frame::frameless(site, direct);
        }
        // The plan the last change of the probe set left, reused from this thread's pool when
        // current (one load of the site's epoch): no lock.
        let frame = ActiveFrame::acquire(site);
        let pushed = match &frame {
            Some(frame) => push && frame.is_outer() && push_frame(frame),
            None => false,
        };
        Frame {
            bits: frame.as_ref().map_or(0, |f| f.wanted()),
            active: frame,
            site,
            pushed,
        }
    }

    /// Whether the call took no frame: its probes are all lone `f > x` probes.
    #[cfg(test)]
    pub(super) fn is_direct(&self) -> bool {
        self.active.is_none() && self.bits != 0
    }

    /// The frame, if it records variable `index`: for the first 64, one bit of the call's
    /// own copy of its plan's `wanted` (`bits`). Whether there is a frame is asked first, as
    /// every hook asks it: the compiler then knows the answer after the first hook, and a
    /// call without a frame runs none of the bit tests.
    #[inline(always)]
    fn wanting(&self, index: usize) -> Option<&ActiveFrame> {
        let active = self.active.as_deref()?;
        let wanted = if index < 64 {
            self.bits >> index & 1 != 0
        } else {
            active.wants(index)
        };
        wanted.then_some(active)
    }

    /// A special without a value (`#enter`, `#loop_x`) happened.
    #[inline(always)]
    pub fn fire(&self, index: usize) {
        if let Some(active) = self.wanting(index) {
            active.set_wanted(index, "", || Value::Bool(true));
        }
    }

    /// Variable `index` was assigned `value`, converted only if some probe reads it.
    #[inline(always)]
    pub fn var<T>(&self, index: usize, value: &T) {
        if self.active.is_some() {
            if let Some(active) = self.wanting(index) {
                active.set_wanted(index, std::any::type_name::<T>(), || value_of(value));
            }
        } else if index < 64 && self.bits >> index & 1 != 0 {
            direct::give(self.site, index, || value_of(value));
        }
    }

    /// Argument `index` was bound to `value`; its events wait for [`Frame::arguments_bound`].
    #[inline(always)]
    pub fn argument<T>(&self, index: usize, value: &T) {
        if let Some(active) = self.wanting(index) {
            active.argument_wanted(index, std::any::type_name::<T>(), || value_of(value));
        }
    }

    /// The function's `count` arguments are bound: the events they give, each seeing the
    /// others (ptera binds all arguments at entry).
    #[inline(always)]
    pub fn arguments_bound(&self, count: usize) {
        if let Some(active) = &self.active {
            active.arguments_bound(SPECIALS..SPECIALS + count);
        }
    }

    /// Variable `index` was bound to `value` (a `let`, an assignment, a `for` variable), which
    /// a probe may replace; its events carry the value returned.
    #[inline(always)]
    pub fn overridable<T: 'static>(&self, index: usize, value: T, conv: impl Fn(&T) -> Value) -> T {
        match &self.active {
            None => value,
            Some(active) => active.overridable(index, value, conv),
        }
    }

    /// Argument `index`, already passed to [`Frame::argument`], may be replaced by a probe:
    /// called after every argument's hook and before [`Frame::arguments_bound`], so that an
    /// override's conditions see every argument and the argument's one event carries the value
    /// returned.
    #[inline(always)]
    pub fn override_argument<T: 'static>(
        &self,
        index: usize,
        value: T,
        conv: impl Fn(&T) -> Value,
    ) -> T {
        match &self.active {
            None => value,
            Some(active) => active.override_argument(index, value, conv),
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
                    .for_each(|i| active.set(*i, "", || Value::Bool(true)));
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
        if let Some(active) = self.wanting(VALUE) {
            active.set_wanted(VALUE, "", value);
        }
        if let Some(active) = self.wanting(ERROR)
            && let Some(error) = error()
        {
            active.set_wanted(ERROR, "", || error);
        }
    }
}

impl Drop for Frame {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(active) = self.active.take() {
            leave(active, self.pushed, self.bits >> EXIT & 1 != 0);
        }
    }
}

/// The end of a probed call: `#exit` if the frame records it (`exit`) and the call does not
/// unwind, off the thread's stack, back to the pool.
#[inline(never)]
fn leave(active: Arc<ActiveFrame>, pushed: bool, exit: bool) {
    if exit && !std::thread::panicking() {
        active.set_wanted(EXIT, "", || Value::Bool(true));
    }
    if pushed {
        pop_frame(&active);
    }
    ActiveFrame::release(active);
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("active", &self.active.is_some())
            .field("bits", &self.bits)
            .finish()
    }
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
                .for_each(|i| frame.set(*i, "", || Value::Bool(true)));
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
                let _popped = Popped(active, active.is_outer() && push_frame(active));
                this.future.poll(cx)
            }
        }
    }
}
