//! The runner's side of the child-process protocol (`docs/protocol.md`): what a benchmark
//! writes to `DATA_FD` (MessagePack log records, or voir's JSON lines), and voir's data
//! smuggled into stdout as escape sequences; and [`OutOfBand`], voir's `$event` lines (`stop`,
//! `error`, `phase`) that the runner acts on. giving-suite's runner reads its children with
//! these (re-exported as `giving_suite::protocol`).
//!
//! Modules depend one way: [`Incoming`] at the bottom, the JSON lines on it, [`DataDecoder`]
//! on both (and on the log's [`StreamDecoder`](crate::StreamDecoder)), [`Unsmuggler`] on the
//! data decoder; [`OutOfBand`] reads a decoded event (none of them depends on it).

mod data;
mod incoming;
mod json;
mod out_of_band;
mod smuggle;

pub use data::DataDecoder;
pub use incoming::Incoming;
pub use json::{JsonLines, from_json, python_floats};
pub use out_of_band::OutOfBand;
pub use smuggle::Unsmuggler;
