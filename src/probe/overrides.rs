//! Overrides: what `Probe::override_with` installs in the frames of a variable, and what it
//! did (replaced values, the first type mismatch), shared with the `Override` handle.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::error::ProbeError;

/// Replaces the value in a `&mut Option<T>` if `T` is the type the override takes; `false` if
/// it is not (the value stays).
pub(crate) type Replace = Arc<dyn Fn(&mut dyn Any) -> bool + Send + Sync>;

/// An override set with `Probe::override_with`.
#[derive(Clone)]
pub(crate) struct Overrider {
    pub(crate) replace: Replace,
    /// The type the override takes, for the error when the variable has another.
    pub(crate) expected: &'static str,
    pub(crate) state: Arc<OverrideState>,
}

impl Overrider {
    /// Replaces the value in `slot`, or records why it could not.
    pub(crate) fn apply<T: 'static>(
        &self,
        slot: &mut Option<T>,
        variable: &'static str,
        function: &'static str,
    ) {
        if (self.replace)(slot) {
            self.state.replaced();
        } else {
            self.state.mismatch(ProbeError::OverrideType {
                function: function.to_owned(),
                variable: variable.to_owned(),
                expected: self.expected,
                found: std::any::type_name::<T>(),
            });
        }
    }
}

/// What an override did, shared with the probe.
#[derive(Default)]
pub(crate) struct OverrideState {
    replaced: AtomicU64,
    error: Mutex<Option<ProbeError>>,
}

impl OverrideState {
    pub(crate) fn replaced(&self) {
        self.replaced.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn mismatch(&self, error: ProbeError) {
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(error);
    }

    /// How many values were replaced.
    pub(crate) fn replaced_count(&self) -> u64 {
        self.replaced.load(Ordering::Relaxed)
    }

    /// The first type mismatch, if any.
    pub(crate) fn first_error(&self) -> Option<ProbeError> {
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
