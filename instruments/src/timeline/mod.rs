//! Timelines: a scope's events as a Perfetto trace (or Chrome JSON) to open in
//! <https://ui.perfetto.dev>.
//!
//! - [`Trace`]: the instrument (`giving train --trace run.pftrace`), or [`TRACE_ENV`] for
//!   any program run by an [`Overseer`](crate::Overseer).
//! - [`convert`](fn@convert): MessagePack logs into one trace (`giving trace A.msgpack B.msgpack -o out.pftrace`).
//! - [`decode`] / [`read`](fn@read): a trace back, packet by packet, up to its last complete packet;
//!   [`Decoded::contents`]: its tracks, nested slices, instants and counters, as a viewer
//!   shows them; [`proto`]: the messages.
//! - `GivingLayer` (feature `tracing`): `tracing` spans and events as timeline events.
//!
//! The events themselves (tracepoints, instants, graphs) are made by `giving::timeline`. What
//! is drawn, and why, is in `docs/timeline.md`.

mod contents;
mod convert;
mod encoder;
mod env;
mod error;
mod json;
mod model;
mod perfetto;
pub mod proto;
mod read;
mod sink;
#[cfg(feature = "tracing")]
mod tracing_layer;
mod writer;

pub use contents::{Contents, Instant, Slice, TrackInfo};
pub use convert::{Conversion, convert};
pub use encoder::TraceFormat;
pub use env::{TRACE_ENV, TraceOptions};
pub use error::TraceError;
pub use read::{Decoded, decode, read};
pub use sink::Trace;
#[cfg(feature = "tracing")]
pub use tracing_layer::GivingLayer;
pub use writer::TraceSummary;
