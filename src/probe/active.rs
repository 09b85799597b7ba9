//! Active probes: a selector resolved against the instrumented functions, registered so that
//! those functions' frames report to it, and unregistered when its stream ends.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::channel::mpsc::UnboundedSender;

use super::error::ProbeError;
use super::overrides::Overrider;
use super::selector::{Capture, Element, Selector};
use super::site::{self, Site};
use crate::Event;

/// Every active probe of the process. Read when an instrumented function that some probe names
/// is entered (never on the fast path).
static ACTIVE: Mutex<Vec<Arc<ActiveProbe>>> = Mutex::new(Vec::new());

fn active() -> MutexGuard<'static, Vec<Arc<ActiveProbe>>> {
    // Every change is one push or retain: the list is consistent even after a panic.
    ACTIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether the calling thread's events reach the probe's scope.
pub(crate) type Receives = Box<dyn Fn() -> bool + Send + Sync>;

/// One function of a resolved selector.
pub(crate) struct Resolved {
    pub(crate) sites: Vec<&'static Site>,
    pub(crate) captures: Vec<Capture>,
}

impl Resolved {
    pub(crate) fn matches(&self, site: &Site) -> bool {
        self.sites.iter().any(|s| std::ptr::eq(*s, site))
    }
}

/// A registered probe.
pub(crate) struct ActiveProbe {
    pub(crate) selector: Selector,
    pub(crate) elements: Vec<Resolved>,
    pub(crate) sender: UnboundedSender<Event>,
    pub(crate) receives: Receives,
    pub(crate) overrider: Mutex<Option<Overrider>>,
    registered: AtomicBool,
}

/// Ids of wrapper probes' blocks, unique in the process (as `wrap!`'s).
static NEXT_WRAP_ID: AtomicU64 = AtomicU64::new(1 << 62);

pub(crate) fn next_wrap_id() -> u64 {
    NEXT_WRAP_ID.fetch_add(1, Ordering::Relaxed)
}

impl ActiveProbe {
    /// Resolves `selector` against the linked sites and registers the probe.
    pub(crate) fn register(
        selector: Selector,
        sender: UnboundedSender<Event>,
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
        let mut all = active();
        all.push(probe.clone());
        for site in probe.elements.iter().flat_map(|e| &e.sites) {
            site.active.fetch_add(1, Ordering::SeqCst);
        }
        drop(all);
        Ok(probe)
    }

    /// Stops the probe: its functions stop reporting to it. Idempotent.
    pub(crate) fn unregister(self: &Arc<Self>) {
        if !self.registered.swap(false, Ordering::SeqCst) {
            return;
        }
        let mut all = active();
        all.retain(|p| !Arc::ptr_eq(p, self));
        for site in self.elements.iter().flat_map(|e| &e.sites) {
            site.active.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Whether the probe's stream still takes events.
    pub(crate) fn is_open(&self) -> bool {
        !self.sender.is_closed()
    }

    pub(crate) fn send(&self, event: Event) {
        // A closed channel means the stream ended: the event has nobody to go to.
        let _ = self.sender.unbounded_send(event);
    }

    fn mentions(&self, site: &Site) -> bool {
        self.elements.iter().any(|e| e.matches(site))
    }
}

/// The probes that name `site` (as any of their functions).
pub(crate) fn probes_for(site: &Site) -> Vec<Arc<ActiveProbe>> {
    active()
        .iter()
        .filter(|p| p.mentions(site))
        .cloned()
        .collect()
}

/// Whether `element`'s path names `site`: the path is a suffix of the site's
/// `crate::module::name`, and a leading `crate` stands for the site's crate.
fn path_matches(path: &[String], site: &Site) -> bool {
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
    selector.elements().iter().map(resolve).collect()
}

fn resolve(element: &Element) -> Result<Resolved, ProbeError> {
    let sites: Vec<&'static Site> = site::all()
        .filter(|s| path_matches(&element.path, s))
        .collect();
    if sites.is_empty() {
        return Err(ProbeError::UnknownFunction {
            name: element.name(),
            column: element.column,
            closest: closest_names(&element.name()),
        });
    }
    for capture in &element.captures {
        if !sites.iter().any(|s| s.variable(&capture.name).is_some()) {
            let mut available: Vec<&str> = sites
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
    }
    Ok(Resolved {
        sites,
        captures: element.captures.clone(),
    })
}

/// The three instrumented names closest to `name` (by edit distance), for an error message.
fn closest_names(name: &str) -> Vec<String> {
    let mut names: Vec<(usize, String)> = site::all()
        .flat_map(|s| [s.info.name.to_owned(), s.qualified()])
        .map(|candidate| (strsim::levenshtein(name, &candidate), candidate))
        .collect();
    names.sort();
    names.dedup_by(|a, b| a.1 == b.1);
    names.into_iter().take(3).map(|(_, n)| n).collect()
}
