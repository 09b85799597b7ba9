//! What the exported macros (`give!`, `event!`, `wrap!`) expand to.
//!
//! **Not a stable API**: these items are public only because macro expansions in other crates
//! must name them. They may change in any release; never call them directly (as tracing's
//! `__macro_support`).

pub use crate::give::{
    FieldWriter, event_at, event_from_array, fields, give_with, give_written, is_listening,
};

/// How `give!` converts a value (and refuses one it cannot give, with its own message).
pub use crate::give_value::{Give, GivenValue, NotAValue, ViaToValue};

/// What `#[probe]` expands to.
pub use crate::probe::__expand as probe;

/// Makes every feed claimed from now on behave as where `membarrier` is refused (each append
/// under the feed's lock), or not: for the peers bench's row of that path. The environment
/// variable `GIVING_REFUSE_MEMBARRIER` does the same for a whole process (`.ci/run` runs the
/// fan-out tests under it).
pub fn refuse_membarrier(refuse: bool) {
    crate::feed::refuse_claims(refuse);
}
