//! giving: core (work in progress).
pub use giving_operators as operators;
