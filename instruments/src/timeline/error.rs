//! [`TraceError`]: what can go wrong writing, converting or reading a trace.

use std::path::PathBuf;

/// An error of the timeline: a file that cannot be created, written or read, a damaged trace,
/// a log that cannot be converted, a bad `GIVING_TRACE` setting. Each names what and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// A file operation failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`create`, `write`, `read`).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The bytes at `offset` are not a trace packet.
    #[error("trace damaged at byte {offset}: {message}")]
    Damaged {
        /// Where the damage starts.
        offset: usize,
        /// What was found.
        message: String,
    },
    /// A log given to convert could not be read.
    #[error("cannot convert {}: {source}", path.display())]
    Log {
        /// The log.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::log::LogError,
    },
    /// The environment variable that switches tracing on holds something we cannot use.
    #[error(
        "{variable}: {message} (expected e.g. {variable}='{{\"enable\": true, \"directory\": \"traces\"}}')"
    )]
    Env {
        /// The variable's name.
        variable: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// A trace format name that is not one.
    #[error("unknown trace format `{0}`: expected `perfetto` or `json`")]
    Format(String),
}
