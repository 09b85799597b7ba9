//! Probes: observe any variable of a function annotated with [`#[probe]`](macro@crate::probe)
//! without editing its body, as ptera does for Python.
//!
//! A probe is opened from a scope with a *selector*, ptera's little language:
//! `given.probe("train > loss")` gives an event `{loss}` each time `loss` is bound in `train`;
//! `"train(epoch) > step > loss"` adds the enclosing `train`'s `epoch`; `"step(!#loop_batch as
//! start, !!#endloop_batch as end)"` brackets every iteration for `wmap`. See
//! [`Selector`] for the grammar and `docs/probes.md` for one example per form.
//!
//! ```
//! use giving::prelude::*;
//! use giving::given;
//!
//! #[giving::probe]
//! fn fit(epochs: u32) -> f64 {
//!     let mut loss = 1.0;
//!     for epoch in 0..epochs {
//!         loss = loss * 0.5 + f64::from(epoch) * 0.0;
//!     }
//!     loss
//! }
//!
//! let gv = given();
//! let losses = gv.spawn(gv.probe("fit > loss").unwrap().key::<f64>("loss").collect::<Vec<_>>());
//! fit(3);
//! gv.finish().unwrap();
//! assert_eq!(losses.join().unwrap(), vec![1.0, 0.5, 0.25, 0.125]);
//! ```
//!
//! An instrumented function that no probe names runs its own code plus one relaxed atomic load
//! per call.

mod active;
mod active_frame;
mod carry;
mod channel;
mod direct;
mod error;
mod frame;
mod overrides;
mod plan;
mod selector;
mod site;
#[doc(hidden)]
pub mod spec;
mod specials;
mod stream;
mod values;

pub use carry::{Carried, carry};
pub use error::ProbeError;
pub use selector::{
    ANY, Capture, Condition, Element, Literal, MatchFunction, Role, Selector, SelectorError,
};
pub use site::{ProbeSite, sites};
pub use stream::{Override, Probe};
pub use values::register_value;

pub(crate) use stream::ProbeSet;

/// Checks `selector` as [`Given::probe`](crate::Given::probe) would, without opening a probe:
/// its syntax, and that it names instrumented functions and their variables. For programs that
/// take selectors from their users and want to refuse a bad one before starting.
///
/// ```
/// #[giving::probe]
/// fn fit(epochs: u32) -> u32 {
///     let done = epochs;
///     done
/// }
///
/// assert!(giving::probe::check("fit > done").is_ok());
/// let error = giving::probe::check("fit > dne").unwrap_err();
/// assert!(error.to_string().starts_with("`fit` has no variable `dne` (column 7)"));
/// # fit(1);
/// ```
pub fn check(selector: &str) -> Result<Selector, ProbeError> {
    let selector = Selector::parse(selector)?;
    active::resolve_all(&selector)?;
    Ok(selector)
}

/// What the `#[probe]` expansion names. **Not a stable API.**
#[doc(hidden)]
pub mod __expand {
    pub use super::frame::{Frame, InFrame, Iteration, call, cold, in_frame, is_active};
    pub use super::site::{Site, SiteInfo, SiteRef};
    pub use super::spec;
    pub use super::values::{ok_value_of, value_of};
    pub use inventory;
}
