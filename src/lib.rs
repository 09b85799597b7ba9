//! # giving
//!
//! A training loop *gives* values; anyone else *takes* them as asynchronous streams, composes
//! them with reactive operators and sends them to sinks — without the loop knowing who
//! listens. The Rust counterpart of Python's `giving` (and the core of `voir`).
//!
//! ```
//! use giving::prelude::*;
//! use giving::{give, given};
//!
//! // Attach a pipeline from outside the loop...
//! let gv = given();
//! let report = gv.spawn(gv.stream().key::<f64>("loss").filter(|l| *l < 1.0).collect::<Vec<_>>());
//!
//! // ...the loop only gives.
//! for step in 0..4u32 {
//!     let loss = 2.0 / f64::from(step + 1);
//!     give!(step, loss);
//! }
//!
//! // Ending the scope completes every stream derived from it.
//! gv.finish().unwrap();
//! assert_eq!(report.join().unwrap(), vec![2.0 / 3.0, 0.5]);
//! ```
//!
//! - [`give!`] gives fields from the current thread; [`Giver`] from anywhere.
//! - [`given()`] opens a thread scope, [`Given::global`] a process-wide one; [`Given::stream`]
//!   subscribes, with a [`Delivery`] policy; [`Given::spawn`] runs pipelines;
//!   [`Given::finish`] ends the scope and waits for them.
//! - [`Event`] and [`Value`] are what flows; a [`Value::Lazy`] is read by the consumer, so a
//!   loss tensor never forces a device sync on the training thread.
//! - [`iterate`](fn@iterate) wraps the batch loop: progress, steps, one sync per window, clean early stop.
//! - [`prelude`] brings every operator: the keyed ones of [`EventStreamOps`] and the generic
//!   ones of [`StreamOps`](giving_operators::StreamOps) and
//!   [`ReduceOps`](giving_operators::ReduceOps) (the reductions; both from
//!   `giving-operators`).
//!
//! See `docs/architecture.md` for how events travel and why.

mod arena;
mod clock;
mod context;
mod convert;
mod coop;
#[cfg(test)]
mod drop_count;
mod event;
mod feed;
mod field;
mod give;
mod give_value;
mod given;
mod iterate;
mod key;
pub mod keyed;
mod pace;
mod pipeline;
pub mod probe;
mod queue;
mod resting_pool;
mod routing;
mod scope;
mod serde_impl;
mod stop;
mod stream;
mod sync;
pub mod timeline;
mod value;
pub mod vocab;
mod wrap;

/// What the exported macros expand to. **Not a stable API**: public only because macro
/// expansions must name it; it may change in any release.
#[doc(hidden)]
#[path = "macro_support.rs"]
pub mod __private;

pub use clock::Timestamp;
pub use context::{Inherited, SpecialKey, special_keys};
pub use convert::{FromValue, ToValue, TypeMismatch};
pub use event::{Event, EventBuilder, ValueError};
pub use field::{Key, Origin};
pub use give::Giver;
pub use given::{Entered, Given, GivenHandle, InGiven, given};
pub use iterate::{Iterate, iterate};
pub use keyed::{EventStreamOps, Template, TemplateError, ValueStreamOps};
pub use pipeline::{FinishError, Pipeline, PipelineError, panic_message};
pub use probe::{Override, Probe, ProbeError};
pub use queue::Delivery;
pub use stop::StopToken;
pub use stream::{EventStream, Lag, NextRef};
pub use value::{LazyValue, ReadMany, Resolve, ResolveError, Value};
pub use wrap::{Wrap, WrapMark, WrapStep};

/// Instruments a function so that probes can observe its variables: see [`mod@probe`] and
/// `docs/probes.md`.
///
/// On a free function, a method, an `async fn` or a whole `impl` block (whose methods are then
/// named `Type::method`), it makes observable: the arguments; every `let` binding of a plain
/// name, at each assignment (`x = ..`, `x += ..`); `for` loop variables; and the specials
/// `#enter`, `#exit`, `#value` (the return value), `#error` (an `Err` return), `#loop_x` and
/// `#endloop_x` (each iteration of `for x in ..`). Closures and nested items are not
/// instrumented. `#[probe(overridable(a, b))]` lets [`Probe::override_with`] replace `a` and
/// `b` (their types must be `'static`).
///
/// ```
/// use giving::prelude::*;
/// use giving::given;
///
/// #[giving::probe]
/// fn step(batch: &[f64]) -> f64 {
///     let loss = batch.iter().sum::<f64>() / batch.len() as f64;
///     loss
/// }
///
/// let gv = given();
/// let events = gv.probe("step > loss as l").unwrap();
/// step(&[1.0, 3.0]);
/// gv.finish().unwrap();
/// let events: Vec<_> = futures::executor::block_on(events.collect());
/// assert_eq!(events[0].to_string(), "l=2");
/// ```
pub use giving_macros::probe;

/// The version of this crate (for log headers and reports).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The generic operators (`giving-operators`), re-exported.
pub use giving_operators as operators;

/// Everything a pipeline needs: `use giving::prelude::*;`.
///
/// Brings the operator traits ([`StreamOps`](giving_operators::StreamOps),
/// [`ReduceOps`](giving_operators::ReduceOps), [`EventStreamOps`], [`ValueStreamOps`]) and
/// `futures::Stream`. It deliberately does not
/// bring `futures::StreamExt`, whose method names (`map`, `filter`, `collect`, …) would clash
/// with `StreamOps`'s synchronous ones.
pub mod prelude {
    pub use crate::{EventStreamOps, ValueStreamOps, probe};
    pub use futures::Stream;
    pub use giving_operators::{ReduceOps, StreamOps};
}
