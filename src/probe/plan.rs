//! What the active probes do in one instrumented function, resolved once per change of the
//! probe set and read without a lock (`Site::plan`; a thread's pooled frame keeps it while the
//! site's epoch is its own): which probes end in it, which variables its frames keep for the
//! events of probes nested inside it, and which assignments give events.

use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};

use super::channel::Sender;
use super::overrides::Overrider;
use super::selector::{Matching, Role, Selector};
use super::specials::{EXIT, SPECIALS};
use crate::clock::Stamp;
use crate::{Event, Key, Origin, Value};

/// A site's identity: its static's address. The plan names sites by it, so that it need not
/// know the site type (which holds the plan).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SiteKey(usize);

impl SiteKey {
    pub(crate) fn new(address: usize) -> SiteKey {
        SiteKey(address)
    }
}

/// Whether the calling thread's events reach the probe's scope.
pub(crate) type Receives = Box<dyn Fn() -> bool + Send + Sync>;

/// A registered probe: its selector resolved against the sites, and where its events go.
pub(crate) struct ActiveProbe {
    pub(crate) selector: Selector,
    pub(crate) elements: Vec<Resolved>,
    pub(crate) sender: Sender,
    pub(crate) receives: Receives,
    pub(crate) overrider: Mutex<Option<Overrider>>,
    /// Cleared by the first unregistration (`active`).
    pub(crate) registered: AtomicBool,
}

impl ActiveProbe {
    /// Whether the probe's stream still takes events.
    pub(crate) fn is_open(&self) -> bool {
        !self.sender.is_closed()
    }

    /// The selector's enclosing functions, outermost first: every function but the last.
    #[inline(always)]
    pub(crate) fn outer(&self) -> &[Resolved] {
        self.elements
            .split_last()
            .map_or(&[][..], |(_, outer)| outer)
    }

    pub(crate) fn send(&self, event: Event) {
        self.sender.send(event);
    }

    /// Sends a lone `f > x` probe's event, `{key: value}`, stamped now; the value is made
    /// straight into the event.
    #[inline(always)]
    pub(crate) fn send_lone(
        &self,
        key: &'static str,
        value: impl FnOnce() -> Value,
        origin: &'static Origin,
    ) {
        self.send(Event::from_fields(
            std::iter::once_with(|| (Key::from_static(key), value())),
            Stamp::now(),
            Some(origin),
        ));
    }
}

/// Sends a lone `f > x` event to each of `targets` (a probe and its event's key): the value
/// made in place when there is one target, made once and cloned for several (the last one
/// taking it).
#[inline(always)]
pub(crate) fn send_lone_each<'a>(
    mut targets: impl Iterator<Item = (&'a ActiveProbe, &'static str)>,
    value: impl FnOnce() -> Value,
    origin: &'static Origin,
) {
    let Some((first, key)) = targets.next() else {
        return;
    };
    let Some(mut next) = targets.next() else {
        first.send_lone(key, value, origin);
        return;
    };
    let value = value();
    first.send_lone(key, || value.clone(), origin);
    for target in targets {
        let (probe, key) = std::mem::replace(&mut next, target);
        probe.send_lone(key, || value.clone(), origin);
    }
    let (probe, key) = next;
    probe.send_lone(key, || value, origin);
}

/// One function of a resolved selector: the sites it names, with its captures in each.
#[derive(Debug)]
pub(crate) struct Resolved {
    pub(crate) sites: Vec<SiteSlots>,
}

impl Resolved {
    /// The captures at `site`, if this function names it.
    pub(crate) fn at(&self, site: SiteKey) -> Option<&SiteSlots> {
        self.sites.iter().find(|s| s.site == site)
    }

    /// Where `site` is among [`Resolved::sites`].
    pub(crate) fn position(&self, site: SiteKey) -> Option<usize> {
        self.sites.iter().position(|s| s.site == site)
    }
}

/// One variable a probe reads in one function, resolved against that function.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    /// The variable's index in the site's table.
    pub(crate) index: usize,
    /// Its field in the event.
    pub(crate) key: &'static str,
    /// A tag to check against the value's run-time type: the source writes no type for it.
    pub(crate) tag: Option<&'static str>,
    /// `x=1`: the value it must have; `x~lt(5)`: a match function it must pass (with its
    /// state: a `throttle` per slot).
    pub(crate) condition: Option<Matching>,
    /// Focus, end or context.
    pub(crate) role: Role,
    /// One of several variables a `$v` capture stands for (all keyed `v`): an event reads
    /// the one bound last.
    pub(crate) shared: bool,
}

/// A selector's function resolved against one site: its captures there, wildcards expanded,
/// in the selector's order.
#[derive(Debug)]
pub(crate) struct SiteSlots {
    pub(crate) site: SiteKey,
    pub(crate) slots: Vec<Slot>,
    /// Whether a focus is named here; without one, the probe gives one event at `#exit`.
    pub(crate) has_focus: bool,
    /// Whether a wrapper's end (`!!`) is named here.
    pub(crate) has_end: bool,
}

impl SiteSlots {
    pub(crate) fn new(site: SiteKey, slots: Vec<Slot>) -> SiteSlots {
        SiteSlots {
            site,
            has_focus: slots.iter().any(|s| s.role == Role::Focus),
            has_end: slots.iter().any(|s| s.role == Role::End),
            slots,
        }
    }
}

/// A probe whose last function is this site.
pub(crate) struct LastPlan {
    pub(crate) probe: Arc<ActiveProbe>,
    /// Index of this site in the probe's last element.
    pub(crate) at: usize,
    /// `f > x` alone: the probe captures one variable here, `x`, with no tag, condition or
    /// end, and nothing in the enclosing functions it names (`outer > f > x`, which only
    /// asks that the call run inside `outer`). Its event is `{x}`, given as `x` is assigned,
    /// without looking at the slots, the frame's values or the enclosing frames'.
    pub(crate) alone: Option<(usize, &'static str)>,
    /// Whether some context capture of the probe, here or in an enclosing function, has a
    /// condition: only then can an event (or an override) be refused after its trigger, and
    /// only then are the conditions checked before it.
    pub(crate) checks: bool,
    /// Whether the probe's captures here have no tag, condition, end or `$v` over several
    /// variables and none of its functions has a context condition (`f(a) > x`, `outer > f >
    /// x`): its event is each bound capture's value, the trigger's in its place, with nothing
    /// to test; a frame gives it without the general trigger's tests.
    pub(crate) plain: bool,
    /// A plain probe's events here, one per focus (and one at `#exit` without a focus): which
    /// variable triggers each and where each of its fields comes from, resolved when the plan
    /// is built. Empty for other probes.
    pub(crate) recipes: Vec<Recipe>,
}

/// Where one field of a plain probe's event comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source {
    /// The value of the variable that triggered the event.
    Given,
    /// The value the frame keeps at this index (none while unbound: no field).
    Kept(usize),
}

/// One event of a [`plain`](LastPlan::plain) probe: the variable whose binding gives it and its
/// fields in the selector's order, each with its key, so that a probed call writes them
/// without looking at the slots (roles, tags, conditions) or the plan's table of kept variables.
#[derive(Debug)]
pub(crate) struct Recipe {
    /// The variable that triggers it.
    pub(crate) on: usize,
    pub(crate) fields: Vec<(&'static str, Source)>,
}

impl LastPlan {
    /// Whether variable `index` makes this probe give: it is the probe's focus or its end here,
    /// or the function's exit for a probe without a focus.
    fn triggers_on(&self, index: usize) -> bool {
        let slots = self.slots();
        slots
            .slots
            .iter()
            .any(|s| s.index == index && matches!(s.role, Role::Focus | Role::End))
            || (index == EXIT && !slots.has_focus)
    }

    /// The event's key if this probe is a lone `f > x` on variable `index`.
    pub(crate) fn alone_on(&self, index: usize) -> Option<&'static str> {
        self.alone
            .and_then(|(at, key)| (at == index).then_some(key))
    }

    pub(crate) fn slots(&self) -> &SiteSlots {
        let last = self
            .probe
            .elements
            .last()
            .expect("a registered probe has at least one function");
        &last.sites[self.at]
    }
}

/// [`SitePlan::slot`] of a variable a frame does not keep.
pub(crate) const NOT_KEPT: u32 = u32::MAX;

/// What the active probes do in one site's frames.
pub(crate) struct SitePlan {
    /// The probe set's version this plan was built from.
    pub(crate) epoch: u64,
    pub(crate) lasts: Vec<LastPlan>,
    /// Per variable: where a frame keeps its latest value (a probe reads it later, or it is an
    /// argument whose events wait for the others), [`NOT_KEPT`] if it does not.
    pub(crate) slot: Vec<u32>,
    /// How many variables a frame keeps: the length of its values.
    pub(crate) kept: usize,
    /// Per variable: whether its assignment may give an event.
    pub(crate) triggers: Vec<bool>,
    /// Whether some probe names this site as an enclosing function: its frames then go on the
    /// thread's stack, where nested calls find them.
    pub(crate) is_outer: bool,
    /// Bit `i` (for `i` below 64): whether a frame records variable `i` ([`SitePlan::wants`]),
    /// so that each hook of a probed call tests one bit of a word its frame copied.
    pub(crate) wanted: u64,
    /// Whether some argument gives events: without one, binding the arguments does nothing.
    pub(crate) argument_triggers: bool,
    /// Bit `i` (for `i` below 64): variable `i` only gives the events of lone `f > x` probes
    /// ([`LastPlan::alone`]) and is not kept, so its hook gives them straight from the value
    /// without looking at the slots or the frame's values.
    pub(crate) alone: u64,
    /// Whether some probe here has outer functions or a wrapper's end: only then can a match
    /// hold enclosing frames or open wrappers, which a released frame must drop.
    pub(crate) nests: bool,
    /// Whether some probe reads a `$v` capture over several variables here as context: only
    /// then does a frame count when each variable was bound (the one bound last is read).
    pub(crate) orders: bool,
    /// Bit `i` (for `i` below 64): every event variable `i` gives is a
    /// [`plain`](LastPlan::plain) probe's, listed in [`SitePlan::plain_on`]: its hook gives them
    /// from their recipes without the general trigger's walk over every probe and its slots.
    pub(crate) plain: u64,
    /// Per variable: the events of plain probes its binding gives, each a probe (an index
    /// into `lasts`, which is also its match's in a frame) and one of its recipes, in the
    /// order the general trigger gives them.
    pub(crate) plain_on: Vec<Vec<(usize, usize)>>,
}

impl fmt::Debug for SitePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SitePlan")
            .field("epoch", &self.epoch)
            .field("probes", &self.lasts.len())
            .field("is_outer", &self.is_outer)
            .finish()
    }
}

impl SitePlan {
    /// The plan of `site`, whose table has `n` variables (`arguments` of them after the
    /// specials), under `probes`; `None` when none of them names it.
    pub(crate) fn build(
        site: SiteKey,
        (n, arguments): (usize, usize),
        probes: &[Arc<ActiveProbe>],
        epoch: u64,
    ) -> Option<SitePlan> {
        let mut keep = vec![false; n];
        let mut plan = SitePlan {
            epoch,
            lasts: Vec::new(),
            slot: Vec::new(),
            kept: 0,
            triggers: vec![false; n],
            is_outer: false,
            wanted: 0,
            argument_triggers: false,
            alone: 0,
            nests: false,
            orders: false,
            plain: 0,
            plain_on: Vec::new(),
        };
        let mut named = false;
        for probe in probes {
            let Some((last, outer)) = probe.elements.split_last() else {
                continue;
            };
            for element in outer {
                if let Some(slots) = element.at(site) {
                    named = true;
                    plan.is_outer = true;
                    slots.slots.iter().for_each(|s| keep[s.index] = true);
                    plan.orders |= slots
                        .slots
                        .iter()
                        .any(|s| s.shared && s.role == Role::Context);
                }
            }
            if let Some(at) = last.position(site) {
                named = true;
                let slots = &last.sites[at];
                for slot in &slots.slots {
                    plan.orders |= slot.shared && slot.role == Role::Context;
                    match slot.role {
                        Role::Context => keep[slot.index] = true,
                        Role::Focus | Role::End => plan.triggers[slot.index] = true,
                    }
                }
                if !slots.has_focus {
                    plan.triggers[EXIT] = true;
                }
                let alone = match &slots.slots[..] {
                    [slot]
                        if reads_nothing_of(outer)
                            && slot.role == Role::Focus
                            && slot.tag.is_none()
                            && slot.condition.is_none() =>
                    {
                        Some((slot.index, slot.key))
                    }
                    _ => None,
                };
                plan.nests |= !outer.is_empty() || slots.has_end;
                let checks = probe
                    .elements
                    .iter()
                    .flat_map(|e| &e.sites)
                    .flat_map(|s| &s.slots)
                    .any(|s| s.role == Role::Context && s.condition.is_some());
                let plain = !checks
                    && !slots.has_end
                    && slots
                        .slots
                        .iter()
                        .all(|s| s.tag.is_none() && s.condition.is_none() && !s.shared);
                plan.lasts.push(LastPlan {
                    probe: probe.clone(),
                    at,
                    alone,
                    checks,
                    plain,
                    recipes: Vec::new(),
                });
            }
        }
        // An argument that triggers is kept until every argument is bound.
        let argument_range = SPECIALS..(SPECIALS + arguments).min(n);
        argument_range
            .clone()
            .for_each(|i| keep[i] |= plan.triggers[i]);
        plan.argument_triggers = argument_range.into_iter().any(|i| plan.triggers[i]);
        plan.slot = keep
            .iter()
            .map(|k| {
                if *k {
                    plan.kept += 1;
                    (plan.kept - 1) as u32
                } else {
                    NOT_KEPT
                }
            })
            .collect();
        plan.wanted = (0..n.min(64))
            .filter(|i| plan.records(*i))
            .fold(0, |mask, i| mask | 1 << i);
        plan.alone = (0..n.min(64))
            .filter(|i| plan.triggers[*i] && plan.slot[*i] == NOT_KEPT && plan.only_alone(*i))
            .fold(0, |mask, i| mask | 1 << i);
        for at in 0..plan.lasts.len() {
            if plan.lasts[at].plain {
                plan.lasts[at].recipes = plan.recipes(&plan.lasts[at]);
            }
        }
        plan.plain_on = vec![Vec::new(); n];
        for (at, last) in plan.lasts.iter().enumerate() {
            for (r, recipe) in last.recipes.iter().enumerate() {
                plan.plain_on[recipe.on].push((at, r));
            }
        }
        plan.plain = (0..n.min(64))
            .filter(|i| plan.triggers[*i] && plan.only_plain(*i))
            .fold(0, |mask, i| mask | 1 << i);
        named.then_some(plan)
    }

    /// Whether every event variable `index` gives is a plain probe's (from a recipe): no
    /// probe with a tag, condition, end or `$v` names it as its focus, nor, without a
    /// focus, ends at `#exit`.
    fn only_plain(&self, index: usize) -> bool {
        self.lasts
            .iter()
            .all(|last| !last.triggers_on(index) || last.plain)
    }

    /// The events of the plain probe `last` (see [`Recipe`]), as the general trigger would
    /// give them: for each focus, the captures here in order with the focus's own value in its
    /// place and each context capture's kept value; without a focus, one at `#exit` with the
    /// context captures alone.
    fn recipes(&self, last: &LastPlan) -> Vec<Recipe> {
        let here = last.slots();
        let fields = |given: Option<&Slot>| {
            here.slots
                .iter()
                .filter_map(|s| match given {
                    Some(g) if std::ptr::eq(s, g) => Some((s.key, Source::Given)),
                    // Every context capture is kept (`build`).
                    _ if s.role == Role::Context => {
                        Some((s.key, Source::Kept(self.slot(s.index)?)))
                    }
                    _ => None,
                })
                .collect()
        };
        let mut recipes: Vec<Recipe> = here
            .slots
            .iter()
            .filter(|s| s.role == Role::Focus)
            .map(|focus| Recipe {
                on: focus.index,
                fields: fields(Some(focus)),
            })
            .collect();
        if !here.has_focus {
            recipes.push(Recipe {
                on: EXIT,
                fields: fields(None),
            });
        }
        recipes
    }

    /// Whether every event variable `index` gives is a lone `f > x` probe's on it: no other
    /// probe names it as its focus or end, and it is not the `#exit` of a probe without focus.
    fn only_alone(&self, index: usize) -> bool {
        self.lasts
            .iter()
            .all(|last| !last.triggers_on(index) || last.alone_on(index).is_some())
    }

    /// The variables whose hooks can give every event of this plan without a frame (bit
    /// `i`), or 0: every probe here is a lone `f > x` on a variable of `hooked` (see
    /// `Site::var_hooked`), so that a call keeps nothing, is no enclosing frame, keeps no
    /// enclosing frame (a lone probe's enclosing functions are only asked for, at its events)
    /// and fires no special.
    pub(crate) fn direct(&self, hooked: u64) -> u64 {
        // `nests` needs no test: a lone probe has no end, and reads nothing of the enclosing
        // frames.
        if self.is_outer || self.kept != 0 || self.argument_triggers {
            return 0;
        }
        let mut mask = 0;
        for last in &self.lasts {
            match last.alone {
                Some((at, _)) if at < 64 && hooked >> at & 1 != 0 => mask |= 1 << at,
                _ => return 0,
            }
        }
        mask
    }

    /// Where a frame keeps variable `index`, if it does.
    #[inline]
    pub(crate) fn slot(&self, index: usize) -> Option<usize> {
        match self.slot.get(index) {
            Some(&at) if at != NOT_KEPT => Some(at as usize),
            _ => None,
        }
    }

    /// Whether a frame records variable `index` at all.
    #[inline(always)]
    pub(crate) fn wants(&self, index: usize) -> bool {
        if index < 64 {
            self.wanted >> index & 1 != 0
        } else {
            self.records(index)
        }
    }

    /// [`SitePlan::wants`] from the tables.
    fn records(&self, index: usize) -> bool {
        self.slot.get(index).is_some_and(|at| *at != NOT_KEPT)
            || self.triggers.get(index).copied().unwrap_or(false)
    }
}

/// Whether a probe whose enclosing functions are `outer` captures nothing in them (and so
/// tests nothing there): they only say where the call must run.
fn reads_nothing_of(outer: &[Resolved]) -> bool {
    outer
        .iter()
        .all(|element| element.sites.iter().all(|site| site.slots.is_empty()))
}

/// `key` as a `&'static str`, so that events name their fields without allocating: keys come
/// from selectors, a handful per program, kept for its life.
pub(crate) fn intern(key: &str) -> &'static str {
    static KEYS: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut keys = KEYS.lock().unwrap_or_else(PoisonError::into_inner);
    let keys = keys.get_or_insert_with(HashSet::new);
    if let Some(key) = keys.get(key) {
        return key;
    }
    let key: &'static str = Box::leak(key.to_owned().into_boxed_str());
    keys.insert(key);
    key
}

/// The name a tag is compared with: the last path segment of a type, generics and references
/// aside (`Tensor` for `&mut burn::tensor::Tensor<B, 2>`).
pub(crate) fn type_tag(type_name: &str) -> &str {
    let mut name = type_name.trim();
    loop {
        let stripped = name
            .trim_start_matches('&')
            .trim_start()
            .trim_start_matches("mut ")
            .trim_start_matches("dyn ")
            .trim_start();
        if stripped == name {
            break;
        }
        name = stripped;
    }
    let name = name.split('<').next().unwrap_or(name);
    name.rsplit("::").next().unwrap_or(name).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_tag_is_the_last_segment_without_generics_or_references() {
        assert_eq!(
            type_tag("&mut burn_tensor::tensor::api::base::Tensor<B, 2>"),
            "Tensor"
        );
        assert_eq!(type_tag("f64"), "f64");
        assert_eq!(type_tag("&&str"), "str");
        assert_eq!(type_tag("alloc::vec::Vec<u8>"), "Vec");
        assert!(std::ptr::eq(intern("loss"), intern("loss")));
    }
}
