//! The instrumented frames that some probe names, on a per-thread stack, and how a probe
//! matches a new frame against the frames that enclose it. Below `frame` (what the `#[probe]`
//! expansion calls) and above `active` (the registry of probes).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::active::{ActiveProbe, next_wrap_id, probes_for};
use super::selector::Role;
use super::site::{EXIT, Site};
use crate::event::Fields;
use crate::vocab::keys::WRAP;
use crate::{Event, Key, Timestamp, Value, WrapStep};

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
    pub(super) fn new(site: &'static Site) -> ActiveFrame {
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

    pub(super) fn wants(&self, index: usize) -> bool {
        self.kept.get(index).copied().unwrap_or(false)
            || self.triggers.get(index).copied().unwrap_or(false)
    }

    /// Variable `index` was assigned: keep it and give the events it triggers.
    pub(super) fn set(&self, index: usize, value: impl FnOnce() -> Value) {
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

    pub(super) fn emit(
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
            fields.push((Key::Borrowed(WRAP), Value::Map(mark)));
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

    pub(super) fn overridable<T: 'static>(
        &self,
        index: usize,
        value: T,
        conv: impl FnOnce(&T) -> Value,
    ) -> T {
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

/// An enclosing frame matched to one of a selector's outer functions, with the indices of the
/// variables captured there and their keys.
pub(crate) type Parent = (Arc<ActiveFrame>, Vec<(usize, String)>);

/// How one probe reports from one frame of its last function.
pub(crate) struct Match {
    pub(crate) probe: Arc<ActiveProbe>,
    /// Enclosing frames matched to the selector's outer functions, outermost first, with the
    /// variable indices captured in each (and their keys).
    pub(crate) parents: Vec<Parent>,
    /// This frame's captures: `(index, key, role)`.
    pub(crate) own: Vec<(usize, String, Role)>,
    /// The variable whose assignments give events (`#exit` when the selector has no focus).
    pub(crate) focus: usize,
    /// The end of a wrapper probe.
    pub(crate) end: Option<usize>,
    /// Whether the focus field is part of the event (not for an implicit `#exit`).
    pub(crate) focus_given: bool,
}

impl Match {
    /// Matches `probe` against a new frame of `site`, whose enclosing frames are `stack`
    /// (outermost first). `None` if `site` is not the probe's last function or the enclosing
    /// calls do not match.
    pub(crate) fn new(
        probe: &Arc<ActiveProbe>,
        site: &'static Site,
        stack: &[Arc<ActiveFrame>],
    ) -> Option<Match> {
        let (last, outer) = probe.elements.split_last()?;
        if !last.matches(site) {
            return None;
        }
        // Each outer function must enclose the next one: walk outwards from the innermost,
        // taking the nearest enclosing frame of each.
        let mut parents = Vec::with_capacity(outer.len());
        let mut below = stack.len();
        for element in outer.iter().rev() {
            let at = stack[..below]
                .iter()
                .rposition(|f| element.matches(f.site))?;
            let indices = element
                .captures
                .iter()
                .filter_map(|c| Some((stack[at].site.variable(&c.name)?, c.key.clone())))
                .collect();
            parents.push((stack[at].clone(), indices));
            below = at;
        }
        parents.reverse();
        if !(probe.receives)() {
            return None;
        }
        let own: Vec<(usize, String, Role)> = last
            .captures
            .iter()
            .filter_map(|c| Some((site.variable(&c.name)?, c.key.clone(), c.role)))
            .collect();
        let focus = own.iter().find(|c| c.2 == Role::Focus).map(|c| c.0);
        let end = own.iter().find(|c| c.2 == Role::End).map(|c| c.0);
        let has_focus = probe.selector.focus().is_some();
        if has_focus && focus.is_none() {
            // This function of the name has no such variable (another one does).
            return None;
        }
        Some(Match {
            probe: probe.clone(),
            parents,
            focus_given: focus.is_some(),
            focus: focus.unwrap_or(EXIT),
            end,
            own,
        })
    }

    /// The variables of this frame that the match reads: its captures.
    pub(crate) fn reads(&self) -> impl Iterator<Item = usize> + '_ {
        self.own.iter().map(|c| c.0)
    }
}

/// The variables of `site` that `probe` captures when `site` is one of its outer functions.
pub(crate) fn outer_captures(probe: &ActiveProbe, site: &Site) -> Vec<usize> {
    let Some((_, outer)) = probe.elements.split_last() else {
        return Vec::new();
    };
    outer
        .iter()
        .filter(|e| e.matches(site))
        .flat_map(|e| &e.captures)
        .filter_map(|c| site.variable(&c.name))
        .collect()
}
