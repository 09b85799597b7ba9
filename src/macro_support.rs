//! What the exported macros (`give!`, `event!`, `wrap!`) expand to.
//!
//! **Not a stable API**: these items are public only because macro expansions in other crates
//! must name them. They may change in any release; never call them directly (as tracing's
//! `__macro_support`).

pub use crate::give::{
    FieldWriter, event_at, event_from_array, fields, give_with, give_written, is_listening,
};

/// What `#[probe]` expands to.
pub use crate::probe::__expand as probe;
