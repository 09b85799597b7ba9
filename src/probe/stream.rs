//! [`Probe`]: the stream of a probe's events, active while it lives; [`Override`]: a probe that
//! replaces a value instead.

use std::any::Any;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};

use futures::Stream;
use futures::stream::FusedStream;

use super::active::{last_functions, last_overridable};
use super::channel::{Receiver, channel};
use super::error::ProbeError;
use super::overrides::{OverrideState, Overrider};
use super::plan::{ActiveProbe, Receives};
use super::selector::Selector;
use crate::Event;

/// Keeps a probe registered; unregisters it when dropped.
struct Registration(Arc<ActiveProbe>);

impl Drop for Registration {
    fn drop(&mut self) {
        self.0.unregister();
    }
}

/// The events of a probe, as an asynchronous [`Stream`]: what
/// [`Given::probe`](crate::Given::probe) returns.
///
/// Each event has the fields the selector names (renamed by `as`), is timestamped when the
/// focus variable was assigned, and records the instrumented function's file and line as its
/// origin. The probe is active from the call until the stream is dropped or its scope ends
/// (then the stream completes once drained, so reductions emit). Usable with every operator of
/// the prelude.
///
/// ```
/// use giving::prelude::*;
/// use giving::given;
///
/// #[giving::probe]
/// fn halve(x: f64) -> f64 {
///     let half = x / 2.0;
///     half
/// }
///
/// let gv = given();
/// let halves = gv.probe("halve > half").unwrap().key::<f64>("half");
/// halve(3.0);
/// halve(5.0);
/// gv.finish().unwrap();
/// assert_eq!(futures::executor::block_on(halves.collect::<Vec<_>>()), vec![1.5, 2.5]);
/// ```
pub struct Probe {
    receiver: Receiver,
    registration: Registration,
    ended: bool,
}

impl Probe {
    pub(crate) fn open(
        selector: &str,
        receives: Receives,
        set: &ProbeSet,
    ) -> Result<Probe, ProbeError> {
        let selector = Selector::parse(selector)?;
        let (sender, receiver) = channel();
        let probe = ActiveProbe::register(selector, sender, receives)?;
        set.add(&probe);
        Ok(Probe {
            receiver,
            registration: Registration(probe),
            ended: false,
        })
    }

    /// The selector this probe was made from.
    pub fn selector(&self) -> &Selector {
        &self.registration.0.selector
    }

    /// Replaces the focus variable's value with `replace(value)` each time it is bound (ptera's
    /// `override`): as milabench wraps a data loader to time it. The variable must be marked
    /// `#[probe(overridable(name))]` (replacing a value needs an owned, `'static` type, which
    /// the macro cannot see). Its type is checked at run time: when it is not `T`, the value is
    /// left alone and [`Override::error`] names both types. As ptera's overlays: every binding
    /// is replaced (the `let`, each later assignment, a `for` variable at each iteration, an
    /// argument at entry), only where the probe's conditions hold, and before the binding's
    /// events, so every probe sees the replaced value.
    ///
    /// Consumes the stream: the probe stays active, overriding, while the returned
    /// [`Override`] lives.
    ///
    /// ```
    /// use giving::given;
    ///
    /// #[giving::probe(overridable(rate))]
    /// fn train(steps: u32) -> f64 {
    ///     let rate = 0.1_f64;
    ///     f64::from(steps) * rate
    /// }
    ///
    /// let gv = given();
    /// let doubled = gv.probe("train > rate").unwrap().override_with(|r: f64| r * 2.0).unwrap();
    /// assert_eq!(train(10), 2.0);
    /// assert_eq!(doubled.replaced(), 1);
    ///
    /// let wrong = gv.probe("train > rate").unwrap().override_with(|r: f32| r).unwrap();
    /// # drop(doubled);
    /// assert_eq!(train(10), 1.0); // left alone
    /// assert_eq!(
    ///     wrong.error().unwrap().to_string(),
    ///     "cannot override `rate` in `train` with a function of `f32`: the variable is a `f64`"
    /// );
    /// ```
    pub fn override_with<T, F>(self, replace: F) -> Result<Override, ProbeError>
    where
        T: 'static,
        F: Fn(T) -> T + Send + Sync + 'static,
    {
        let probe = &self.registration.0;
        let Some(focus) = probe.selector.focus() else {
            return Err(ProbeError::OverrideWithoutFocus {
                selector: probe.selector.to_string(),
            });
        };
        let mut overridable = last_overridable(probe);
        if !overridable.contains(&focus.name.as_str()) {
            overridable.dedup();
            let overridable = overridable.into_iter().map(str::to_owned).collect();
            let written = probe
                .selector
                .elements()
                .last()
                .map(|e| e.name())
                .unwrap_or_default();
            // `*` names every function: the refusal names those where the variable is.
            let function = if written == "*" {
                last_functions(probe).join("`, `")
            } else {
                written
            };
            return Err(ProbeError::NotOverridable {
                function,
                variable: focus.name.clone(),
                overridable,
            });
        }
        let state = Arc::new(OverrideState::default());
        let replace = move |slot: &mut dyn Any| match slot.downcast_mut::<Option<T>>() {
            Some(slot) => {
                if let Some(value) = slot.take() {
                    *slot = Some(replace(value));
                }
                true
            }
            None => false,
        };
        *probe
            .overrider
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Overrider {
            replace: Arc::new(replace),
            expected: std::any::type_name::<T>(),
            state: state.clone(),
        });
        // The events are not needed: dropping the receiver makes the probe skip them.
        let Probe { registration, .. } = self;
        Ok(Override {
            _registration: registration,
            state,
        })
    }
}

impl Stream for Probe {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let next = Pin::new(&mut self.receiver).poll_next(cx);
        if let Poll::Ready(None) = next {
            self.ended = true;
        }
        next
    }
}

impl FusedStream for Probe {
    fn is_terminated(&self) -> bool {
        self.ended
    }
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probe")
            .field("selector", &self.selector().as_str())
            .field("ended", &self.ended)
            .finish()
    }
}

/// An active override made by [`Probe::override_with`]: replaces the variable's value until it
/// is dropped or its scope ends.
#[must_use = "the override stops when dropped: bind it (`let _loader = ...;`)"]
pub struct Override {
    _registration: Registration,
    state: Arc<OverrideState>,
}

impl Override {
    /// How many values were replaced.
    pub fn replaced(&self) -> u64 {
        self.state.replaced_count()
    }

    /// The first type mismatch: the variable's type is not the one the override takes (the
    /// value was left alone).
    pub fn error(&self) -> Option<ProbeError> {
        self.state.first_error()
    }
}

impl std::fmt::Debug for Override {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Override")
            .field("selector", &self._registration.0.selector.as_str())
            .field("replaced", &self.replaced())
            .finish()
    }
}

/// The probes of one scope, closed when it ends.
#[derive(Default)]
pub(crate) struct ProbeSet {
    probes: Mutex<Vec<Weak<ActiveProbe>>>,
}

impl ProbeSet {
    fn add(&self, probe: &Arc<ActiveProbe>) {
        let mut probes = self.probes.lock().unwrap_or_else(PoisonError::into_inner);
        probes.retain(|p| p.strong_count() > 0);
        probes.push(Arc::downgrade(probe));
    }

    /// Ends every probe of the scope: their streams complete once drained.
    pub(crate) fn close(&self) {
        let probes =
            std::mem::take(&mut *self.probes.lock().unwrap_or_else(PoisonError::into_inner));
        for probe in probes.iter().filter_map(Weak::upgrade) {
            probe.unregister();
            probe.sender.close();
        }
    }
}
