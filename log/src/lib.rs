//! # giving-log
//!
//! The giving log: an append-only MessagePack file of a run's events, and the readers of it.
//! [`LogWriter`] writes one (giving-instruments' `MsgpackLog` runs it on a thread of its own),
//! [`read`]/[`LogReader`] read it back (keeping every complete record of a cut file, skipping
//! damaged bytes), [`StreamDecoder`] decodes the same records from a pipe or a socket,
//! [`replay`](fn@replay) feeds a log into a scope so that pipelines run offline, and [`dump`]/[`stats`]
//! (the `giving log` subcommands, [`LogCommand`] with the `cli` feature) inspect it.
//! [`protocol`] decodes what a benchmark child writes to `DATA_FD`: these records, or voir's
//! JSON lines.
//!
//! The crate depends on `giving` (the core) only: it sits below giving-instruments, which
//! re-exports it as `giving_instruments::log`. The format is specified for readers in other
//! languages in `docs/log-format.md`.
//!
//! Modules depend one way: the format's constants at the bottom; the
//! error, the encoder and the decoder on them; the header on the encoder; writers and readers
//! on those; inspection, replay and the command line on the reader.

#[cfg(feature = "cli")]
mod command;
mod decode;
mod encode;
mod error;
mod format;
mod header;
mod inspect;
pub mod protocol;
mod reader;
mod record;
mod redact;
mod replay;
mod stream;
mod time_fmt;
mod writer;

#[cfg(feature = "cli")]
pub use command::LogCommand;
pub use error::LogError;
pub use format::{FORMAT_NAME, FORMAT_VERSION};
pub use header::LogHeader;
pub use inspect::{DumpSummary, LogHealth, LogStats, NumericStats, dump, stats};
pub use reader::{LogDamage, LogEnd, LogReader, LogStream, read};
pub use record::{encode_end, encode_event, encode_header};
pub use redact::{redact_args, redact_url};
pub use replay::{ReplaySummary, replay};
pub use stream::{StreamDecoder, StreamItem};
pub use writer::{FLUSH_EVERY, LogSummary, LogWriter};
