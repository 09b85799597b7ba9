//! The MessagePack log: [`MsgpackLog`] writes every event of a run to an append-only file,
//! [`read`]/[`LogReader`] read it back (keeping every complete record of a cut file),
//! [`replay`] feeds it into a scope so that pipelines run offline, and [`dump`]/[`stats`]
//! (the `giving log` subcommands, `LogCommand` with the `cli` feature) inspect it.
//!
//! The format is specified for readers in other languages in `docs/log-format.md`.

#[cfg(feature = "cli")]
mod command;
mod decode;
mod encode;
mod error;
mod header;
mod inspect;
mod reader;
mod record;
mod replay;
mod sink;
mod stream;
mod time_fmt;
mod writer;

#[cfg(feature = "cli")]
pub use command::LogCommand;
pub use error::LogError;
pub use header::{FORMAT_NAME, FORMAT_VERSION, LogHeader};
pub use inspect::{DumpSummary, LogHealth, LogStats, NumericStats, dump, stats};
pub use reader::{LogDamage, LogEnd, LogReader, LogStream, read};
pub use record::{encode_end, encode_event, encode_header};
pub use replay::{ReplaySummary, replay};
pub use sink::MsgpackLog;
pub use stream::{StreamDecoder, StreamItem};
pub use writer::{FLUSH_EVERY, LogSummary, LogWriter};
