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
mod frame;
mod selector;
mod site;
#[doc(hidden)]
pub mod spec;
mod stream;
mod values;

pub use selector::{Capture, Element, Role, Selector, SelectorError};
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

/// Why a probe could not be opened or could not override.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// The selector is malformed.
    #[error(transparent)]
    Selector(#[from] SelectorError),
    /// No instrumented function has this name.
    #[error(
        "no function instrumented with #[probe] is named `{name}` (column {column}){}",
        suggestions(closest)
    )]
    UnknownFunction {
        /// The name in the selector.
        name: String,
        /// Its column in the selector.
        column: usize,
        /// The instrumented functions with the closest names.
        closest: Vec<String>,
    },
    /// The function has no variable of this name.
    #[error(
        "`{function}` has no variable `{variable}` (column {column}); it has: {}",
        available.join(", ")
    )]
    UnknownVariable {
        /// The function in the selector.
        function: String,
        /// The variable in the selector.
        variable: String,
        /// Its column in the selector.
        column: usize,
        /// The variables and specials the function has.
        available: Vec<String>,
    },
    /// `override_with` on a selector with no focus variable.
    #[error("cannot override with `{selector}`: it has no focus variable (`f > x` or `f(!x)`)")]
    OverrideWithoutFocus {
        /// The selector.
        selector: String,
    },
    /// `override_with` on a variable that is not marked overridable.
    #[error(
        "`{variable}` in `{function}` is not overridable: mark it `#[probe(overridable({variable}))]`{}",
        if overridable.is_empty() { String::new() } else { format!(" (overridable there: {})", overridable.join(", ")) }
    )]
    NotOverridable {
        /// The function.
        function: String,
        /// The focus variable.
        variable: String,
        /// The variables of the function that are overridable.
        overridable: Vec<String>,
    },
    /// The override takes another type than the variable has.
    #[error(
        "cannot override `{variable}` in `{function}` with a function of `{expected}`: the variable is a `{found}`"
    )]
    OverrideType {
        /// The function.
        function: String,
        /// The variable.
        variable: String,
        /// The type the override takes.
        expected: &'static str,
        /// The variable's type.
        found: &'static str,
    },
}

fn suggestions(closest: &[String]) -> String {
    if closest.is_empty() {
        "; no function is instrumented in this program".to_owned()
    } else {
        format!("; closest: {}", closest.join(", "))
    }
}
