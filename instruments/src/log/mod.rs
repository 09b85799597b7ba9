//! The MessagePack log: [`MsgpackLog`] writes every event of a run to an append-only file.
//! The format itself (its writer, [`read`]/[`LogReader`], [`replay`], [`dump`]/[`stats`] and,
//! with the `cli` feature, `LogCommand`) lives in the `giving-log` crate, re-exported here
//! whole so that `giving_instruments::log::LogReader` names the same type as
//! `giving_log::LogReader`. Only the instrument, which needs this crate's `Instrument` and
//! sink thread, is defined here.
//!
//! The format is specified for readers in other languages in `docs/log-format.md`.

mod sink;

pub use giving_log::*;
pub use sink::MsgpackLog;
