//! The runner's side of the child-process protocol (`docs/protocol.md`): what a benchmark
//! writes to `DATA_FD` (MessagePack log records, or voir's JSON lines), and voir's data
//! smuggled into stdout as escape sequences. giving-suite's runner reads its children with
//! these (re-exported as `giving_suite::protocol`).
//!
//! Modules depend one way: [`Incoming`] at the bottom, the JSON lines on it, [`DataDecoder`]
//! on both (and on the log's [`StreamDecoder`](crate::StreamDecoder)), [`Unsmuggler`] on the
//! data decoder.

mod data;
mod incoming;
mod json;
mod smuggle;

pub use data::DataDecoder;
pub use incoming::Incoming;
pub use json::{JsonLines, from_json};
pub use smuggle::Unsmuggler;
