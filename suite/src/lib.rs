//! milabench-style benchmark suites for giving: a YAML configuration ([`config`]), the
//! child-process protocol ([`protocol`]) and the runner ([`runner`]).
//!
//! See `docs/suite.md` for the configuration and the run folder, `docs/protocol.md` for what a
//! benchmark in any language writes to `DATA_FD`.

pub mod config;
mod error;
pub mod protocol;
pub mod report;
#[cfg(unix)]
pub mod runner;
pub mod validation;

pub use error::{ConfigError, RunError};
