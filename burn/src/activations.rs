//! The activations a [`ModelWatch`](crate::ModelWatch) watches: variables of functions
//! annotated with `#[giving::probe]` (`forward > x`), captured on watched steps only.
//!
//! Between watched steps no probe is open, so an instrumented `forward` runs its body after
//! one relaxed load, as when nobody probes it. The step before a watched one the watch opens
//! its probes in a scope of its own on the training thread; at the watched step it takes what
//! they caught (the tensors, as lazy values: nothing is read there) and closes them.

use std::collections::{BTreeMap, BTreeSet};

use futures::{FutureExt, StreamExt};
use giving::probe::{Probe, ProbeError};
use giving::{Given, Value};

/// The selectors of the watched activations, and their probes while a watched step runs.
pub(crate) struct Activations {
    selectors: Vec<String>,
    /// The scope and the probes open for the next watched step.
    armed: Option<(Given, Vec<Probe>)>,
}

/// One captured activation: the name it is given under, and its value (a lazy tensor).
pub(crate) struct Captured {
    pub(crate) name: String,
    pub(crate) value: Value,
}

impl Activations {
    pub(crate) fn new() -> Self {
        Self {
            selectors: Vec::new(),
            armed: None,
        }
    }

    /// Adds a selector, checked now: a bad one is refused with the reason, naming where.
    pub(crate) fn add(&mut self, selector: &str) -> Result<(), ProbeError> {
        giving::probe::check(selector)?;
        self.selectors.push(selector.to_owned());
        // Probes already open lack this selector's: they are opened again, with it, by the
        // next `arm`.
        self.armed = None;
        Ok(())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.selectors.is_empty()
    }

    /// Opens the probes (in a scope of the calling thread, the training thread) so that the
    /// next step's calls are caught; does nothing if they are open.
    pub(crate) fn arm(&mut self) -> Result<(), ProbeError> {
        if self.armed.is_some() || self.selectors.is_empty() {
            return Ok(());
        }
        let scope = giving::given();
        let probes = self
            .selectors
            .iter()
            .map(|selector| scope.probe(selector))
            .collect::<Result<Vec<_>, _>>()?;
        self.armed = Some((scope, probes));
        Ok(())
    }

    /// Closes the probes and returns what they caught since they were opened: each captured
    /// variable named by its selector (`forward > x`; `forward(x, h): h` where it catches
    /// several variables), with ` [i]` for the i-th value of one that was given several times
    /// in the step (a variable assigned twice, a function called twice).
    pub(crate) fn take(&mut self) -> Vec<Captured> {
        let Some((scope, probes)) = self.armed.take() else {
            return Vec::new();
        };
        let mut captured = Vec::new();
        for (selector, mut probe) in self.selectors.iter().zip(probes) {
            // The probe's events were given on this thread, before this call: they are
            // all in its stream already, and reading them never waits.
            let mut values = Vec::new();
            while let Some(Some(event)) = probe.next().now_or_never() {
                values.extend(
                    event
                        .iter()
                        .map(|(key, value)| (key.to_owned(), value.clone())),
                );
            }
            let several_keys = values
                .iter()
                .map(|(key, _)| key.as_str())
                .collect::<BTreeSet<_>>()
                .len()
                > 1;
            let name_of = |key: &str| {
                if several_keys {
                    format!("{selector}: {key}")
                } else {
                    selector.clone()
                }
            };
            let mut totals: BTreeMap<String, usize> = BTreeMap::new();
            for (key, _) in &values {
                *totals.entry(name_of(key)).or_default() += 1;
            }
            let mut seen: BTreeMap<String, usize> = BTreeMap::new();
            for (key, value) in values {
                let base = name_of(&key);
                let nth = seen.entry(base.clone()).or_default();
                *nth += 1;
                let name = match totals[&base] {
                    1 => base,
                    _ => format!("{base} [{nth}]"),
                };
                captured.push(Captured { name, value });
            }
        }
        // The scope ends here, with its probes: the next steps run unobserved.
        let _ = scope.finish();
        captured
    }
}
