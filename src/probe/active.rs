//! Active probes: a selector resolved against the instrumented functions, registered so that
//! those functions' frames report to it, and unregistered when its stream ends.
//!
//! Registering and unregistering are the only writers: each takes the registry's lock,
//! rebuilds the plan of every function the probe names and stores it in the function's site,
//! which probed calls read without a lock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::channel::Sender;
use super::error::ProbeError;
use super::plan::{ActiveProbe, Receives, Resolved, SitePlan, SiteSlots, Slot, intern, type_tag};
use super::selector::{Capture, Element, Matching, Role, Selector};
use super::site::{self, Site};

/// The active probes and the probe set's version; only registering and unregistering lock it.
struct Registry {
    probes: Vec<Arc<ActiveProbe>>,
    epoch: u64,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    probes: Vec::new(),
    epoch: 0,
});

fn registry() -> MutexGuard<'static, Registry> {
    // Every change is one push or retain and plan stores: consistent even after a panic.
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Ids of wrapper probes' blocks, unique in the process (as `wrap!`'s).
static NEXT_WRAP_ID: AtomicU64 = AtomicU64::new(1 << 62);

pub(crate) fn next_wrap_id() -> u64 {
    NEXT_WRAP_ID.fetch_add(1, Ordering::Relaxed)
}

/// Stores the plan of each of `sites` under the probe set of `registry`.
fn rebuild(registry: &Registry, sites: impl Iterator<Item = &'static Site>) {
    for site in sites {
        let n = site.info.variables.len();
        let plan = SitePlan::build(
            site.key(),
            (n, site.info.arguments),
            &registry.probes,
            registry.epoch,
        );
        let direct = plan.as_ref().map_or(0, |p| p.direct(site.var_hooked()));
        site.plan.store(plan.map(Arc::new));
        site.direct.store(direct, Ordering::Relaxed);
        // After the plan: a call that sees this epoch loads a plan at least as new.
        site.epoch.store(registry.epoch, Ordering::Release);
    }
}

impl ActiveProbe {
    /// Resolves `selector` against the linked sites and registers the probe.
    pub(crate) fn register(
        selector: Selector,
        sender: Sender,
        receives: Receives,
    ) -> Result<Arc<ActiveProbe>, ProbeError> {
        let elements = resolve_all(&selector)?;
        let probe = Arc::new(ActiveProbe {
            selector,
            elements,
            sender,
            receives,
            overrider: Mutex::new(None),
            registered: AtomicBool::new(true),
        });
        let mut registry = registry();
        registry.probes.push(probe.clone());
        registry.epoch += 1;
        // The plans first, then the counters: a call that sees its counter non-zero finds its
        // plan (or, racing with a later change, the next one).
        rebuild(&registry, sites_of(&probe));
        for site in sites_of(&probe) {
            site.active.fetch_add(1, Ordering::SeqCst);
        }
        drop(registry);
        Ok(probe)
    }

    /// Stops the probe: its functions stop reporting to it. Idempotent.
    pub(crate) fn unregister(self: &Arc<Self>) {
        if !self.registered.swap(false, Ordering::SeqCst) {
            return;
        }
        // The override's closure is the user's: it goes now, not with the last plan that names
        // the probe, which a thread's pooled frame may keep until that thread loads a plan.
        self.overrider
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let mut registry = registry();
        registry.probes.retain(|p| !Arc::ptr_eq(p, self));
        registry.epoch += 1;
        for site in sites_of(self) {
            site.active.fetch_sub(1, Ordering::SeqCst);
        }
        rebuild(&registry, sites_of(self));
    }
}

/// Every site `probe` names, once.
fn sites_of(probe: &ActiveProbe) -> impl Iterator<Item = &'static Site> + '_ {
    site::all().filter(move |s| {
        probe
            .elements
            .iter()
            .any(|e| e.sites.iter().any(|slots| slots.site == s.key()))
    })
}

/// The instrumented functions where a probe's last element is.
fn last_sites(probe: &ActiveProbe) -> impl Iterator<Item = &'static Site> + '_ {
    let last = probe.elements.last();
    site::all().filter(move |s| last.is_some_and(|last| last.at(s.key()).is_some()))
}

/// The variables a probe may replace in the functions of its last element.
pub(crate) fn last_overridable(probe: &ActiveProbe) -> Vec<&'static str> {
    last_sites(probe)
        .flat_map(|s| s.info.overridable.iter().copied())
        .collect()
}

/// The names of the functions where a probe's last element is, each once, sorted: what a
/// refusal to override names when the selector's last function is `*`.
pub(crate) fn last_functions(probe: &ActiveProbe) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = last_sites(probe).map(|s| s.info.name).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Whether `element`'s path names `site`: the path is a suffix of the site's
/// `crate::module::name`, and a leading `crate` stands for the site's crate; `*` names all.
fn path_matches(element: &Element, site: &Site) -> bool {
    if element.is_any() {
        return true;
    }
    let path = &element.path;
    let segments: Vec<&str> = site.segments().collect();
    if path.len() > segments.len() {
        return false;
    }
    if path.first().is_some_and(|p| p == "crate") {
        return path.len() == segments.len()
            && path[1..].iter().zip(&segments[1..]).all(|(a, b)| a == b);
    }
    let tail = &segments[segments.len() - path.len()..];
    path.iter().zip(tail).all(|(a, b)| a == b)
}

/// Resolves every function of `selector` against the linked sites.
pub(crate) fn resolve_all(selector: &Selector) -> Result<Vec<Resolved>, ProbeError> {
    let (last, outer) = selector
        .elements()
        .split_last()
        .expect("a parsed selector has at least one element");
    let mut elements: Vec<Resolved> = outer
        .iter()
        .map(|e| resolve(e, false))
        .collect::<Result<_, _>>()?;
    elements.push(resolve(last, true)?);
    Ok(elements)
}

/// Whether a variable whose written type is `written` may carry `tag`: yes if the source
/// writes that type or none (then its run-time type decides).
fn tag_allows(tag: Option<&str>, written: &str) -> bool {
    match tag {
        None => true,
        Some(tag) => written.is_empty() || type_tag(written) == tag,
    }
}

/// The slots `capture` stands for in `site`: one for a named variable (none if `site` lacks
/// it or its written type is not the tag), one per argument and binding for `*`.
fn slots(capture: &Capture, site: &'static Site) -> Vec<Slot> {
    let tag = capture.tag.as_deref();
    let slot = |index: usize, key: &'static str| Slot {
        index,
        key,
        // A written type was checked here; only an unwritten one waits for the run.
        tag: tag
            .filter(|_| site.written_type(index).is_empty())
            .map(intern),
        condition: capture.condition.as_ref().map(Matching::new),
        role: capture.role,
        shared: false,
    };
    if capture.is_any() {
        let renamed = (capture.key != capture.name).then(|| intern(&capture.key));
        let mut slots: Vec<Slot> = site
            .plain_variables()
            .filter(|i| tag_allows(tag, site.written_type(*i)))
            .map(|i| slot(i, renamed.unwrap_or(site.info.variables[i])))
            .collect();
        // `$v` over several variables: one key for all (ptera's immediate probe reads the one
        // bound last; its total probe refuses "multiple values stored for capture `v`").
        let shared = renamed.is_some() && slots.len() > 1;
        slots.iter_mut().for_each(|s| s.shared = shared);
        slots
    } else {
        site.variable(&capture.name)
            .filter(|i| tag_allows(tag, site.written_type(*i)))
            .map(|i| slot(i, intern(&capture.key)))
            .into_iter()
            .collect()
    }
}

fn resolve(element: &Element, is_last: bool) -> Result<Resolved, ProbeError> {
    let named: Vec<&Capture> = element.captures.iter().filter(|c| !c.is_any()).collect();
    let candidates: Vec<&'static Site> = site::all()
        .filter(|s| path_matches(element, s))
        // `*(x)`: the functions that have every variable named.
        .filter(|s| !element.is_any() || named.iter().all(|c| s.variable(&c.name).is_some()))
        .collect();
    if candidates.is_empty() {
        return Err(if element.is_any() {
            no_function_has(element)
        } else {
            ProbeError::UnknownFunction {
                name: element.name(),
                column: element.column,
                closest: closest_names(&element.name()),
            }
        });
    }
    for capture in &named {
        if !candidates
            .iter()
            .any(|s| s.variable(&capture.name).is_some())
        {
            let mut available: Vec<&str> = candidates
                .iter()
                .flat_map(|s| s.info.variables.iter().copied())
                .collect();
            available.sort_unstable();
            available.dedup();
            return Err(ProbeError::UnknownVariable {
                function: element.name(),
                variable: capture.name.clone(),
                column: capture.column,
                available: available.into_iter().map(str::to_owned).collect(),
            });
        }
        if let Some(tag) = &capture.tag
            && !candidates.iter().any(|s| {
                s.variable(&capture.name)
                    .is_some_and(|i| tag_allows(Some(tag), s.written_type(i)))
            })
        {
            let written = candidates
                .iter()
                .find_map(|s| s.variable(&capture.name).map(|i| s.written_type(i)))
                .unwrap_or_default();
            return Err(ProbeError::WrongTag {
                function: element.name(),
                variable: capture.name.clone(),
                tag: tag.clone(),
                written: written.to_owned(),
                column: capture.column,
            });
        }
    }
    let sites = candidates
        .into_iter()
        .map(|site| {
            let slots = element
                .captures
                .iter()
                .flat_map(|c| slots(c, site))
                .collect();
            SiteSlots::new(site.key(), slots)
        })
        // The last function's sites are those where its focus can fire: a function of the
        // name without the variable (another one has it) gives nothing.
        .filter(|s| {
            !is_last || !element.captures.iter().any(|c| c.role == Role::Focus) || s.has_focus
        })
        .collect();
    Ok(Resolved { sites })
}

/// The error for `*(x)` or `x` alone when no instrumented function has `x`.
fn no_function_has(element: &Element) -> ProbeError {
    let capture = element
        .captures
        .iter()
        .find(|c| !c.is_any() && site::all().all(|s| s.variable(&c.name).is_none()))
        .or(element.captures.first());
    let (variable, column) = capture
        .map(|c| (c.name.clone(), c.column))
        .unwrap_or_default();
    let is_function = site::all().any(|s| s.info.name == variable);
    ProbeError::NoFunctionHas {
        variable,
        column,
        closest: if is_function {
            Vec::new()
        } else {
            closest_variables(&capture.map(|c| c.name.clone()).unwrap_or_default())
        },
        is_function,
    }
}

/// The three instrumented names closest to `name` (by edit distance), for an error message.
fn closest_names(name: &str) -> Vec<String> {
    closest(
        name,
        site::all().flat_map(|s| [s.info.name.to_owned(), s.qualified()]),
    )
}

/// The three variable names of any instrumented function closest to `name`.
fn closest_variables(name: &str) -> Vec<String> {
    closest(
        name,
        site::all().flat_map(|s| s.plain_variables().map(|i| s.info.variables[i].to_owned())),
    )
}

fn closest(name: &str, candidates: impl Iterator<Item = String>) -> Vec<String> {
    let mut names: Vec<(usize, String)> = candidates
        .map(|candidate| (strsim::levenshtein(name, &candidate), candidate))
        .collect();
    names.sort();
    names.dedup_by(|a, b| a.1 == b.1);
    names.into_iter().take(3).map(|(_, n)| n).collect()
}
