//! The runner's side of the child-process protocol (`docs/protocol.md`): what a benchmark
//! writes to `DATA_FD` (MessagePack log records, or voir's JSON lines), and voir's data
//! smuggled into stdout as escape sequences. The decoders live in giving-log, next to the log
//! format they read; they are re-exported here so that `giving_suite::protocol::DataDecoder`
//! still names them.

pub use giving_log::protocol::*;
