//! Probed calls without a frame: when every probe that names a function is a lone `f > x`
//! on one of its plain bindings (the plan's `direct` variables), possibly inside enclosing
//! functions it reads nothing of (`outer > f > x`), a call keeps nothing and is no enclosing
//! frame, so it takes no frame from the pool and does nothing at its exit. Each assignment of
//! such a variable gives the events from the site's current plan, which this thread keeps
//! while the site's epoch is the plan's (one atomic load and a compare), as a pooled frame
//! would.
//!
//! Whether a probe receives, and whether the call runs inside the probe's enclosing
//! functions (a search of this thread's stack of enclosing frames), are asked at each event,
//! on the thread that runs the assignment, where a frame asks once, at the call's entry: the
//! same answers unless the function itself enters or leaves a scope in between (or, for an
//! `async fn`, resumes on another thread, whose stack then holds the enclosing frames the
//! poll carries), and then the answers at the event. A call's own nested calls have returned
//! (and left the stack) by its next assignment.

use std::cell::RefCell;
use std::sync::Arc;

use super::active_frame::enclosed_by;
use super::plan::{SitePlan, send_lone_each};
use super::site::Site;
use crate::Value;

/// Plans kept per thread, at most: the direct functions a loop calls in turn.
const CACHED: usize = 8;

thread_local! {
    /// The plans of the direct sites this thread gave from lately, newest last.
    static PLANS: RefCell<Vec<(&'static Site, Arc<SitePlan>)>> = const { RefCell::new(Vec::new()) };
}

/// Variable `index` of a call of `site` was assigned a value: the event `{x: value}` of each
/// lone probe on it whose scope this thread reaches. The value is made only then, straight
/// into the event when one probe takes it (a `Value` moved through a few calls costs more than
/// the rest of the path: stack copies the loads wait on).
#[inline(never)]
pub(super) fn give(site: &'static Site, index: usize, value: impl FnOnce() -> Value) {
    let epoch = site.epoch();
    let mut value = Some(value);
    let _ = PLANS.try_with(|plans| {
        let Ok(mut plans) = plans.try_borrow_mut() else {
            return;
        };
        let at = match plans.iter().rposition(|(s, _)| std::ptr::eq(*s, site)) {
            Some(at) if plans[at].1.epoch == epoch => at,
            _ => match reload(&mut plans, site) {
                Some(at) => at,
                None => return,
            },
        };
        if let Some(value) = value.take() {
            give_from(&plans[at].1, site, index, value);
        }
    });
    // Only while this thread is being torn down (or re-entered from a send): no cache.
    if let Some(value) = value
        && let Some(plan) = site.plan.load_full()
    {
        give_from(&plan, site, index, value);
    }
}

/// The probe set changed: drops every plan it made stale (an ended probe's sender with it),
/// then loads `site`'s; `None` if no probe names the site any more.
#[cold]
#[inline(never)]
fn reload(plans: &mut Vec<(&'static Site, Arc<SitePlan>)>, site: &'static Site) -> Option<usize> {
    plans.retain(|(s, plan)| plan.epoch == s.epoch());
    let plan = site.plan.load_full()?;
    if plans.len() == CACHED {
        plans.remove(0);
    }
    plans.push((site, plan));
    Some(plans.len() - 1)
}

/// Sends the value to each lone probe of `plan` on variable `index` that this thread reaches.
#[inline(always)]
fn give_from(plan: &SitePlan, site: &'static Site, index: usize, value: impl FnOnce() -> Value) {
    let targets = plan.lasts.iter().filter_map(|last| {
        let key = last.alone_on(index)?;
        let outer = last.probe.outer();
        (enclosed_by(outer, plan.epoch) && (last.probe.receives)()).then_some((&*last.probe, key))
    });
    send_lone_each(targets, value, &site.origin);
}
