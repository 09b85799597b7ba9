//! [`LogError`]: what can go wrong writing or reading a log, naming the file and the place.

use std::path::PathBuf;

use crate::format::FORMAT_VERSION;

/// An error writing or reading a MessagePack log. Every variant names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// The file could not be created, opened, read or written.
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        /// What was being done: `create`, `open`, `read`, `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// The file does not start with a giving log header.
    #[error("`{}` is not a giving log: {reason}", path.display())]
    NotALog {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// The log was written in a format version this reader does not know.
    #[error(
        "`{}` is a giving log of format version {version}; this reader knows versions up to {FORMAT_VERSION}",
        path.display()
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version in its header.
        version: u64,
    },
    /// Bytes in the log are not a record (the file was damaged). The reader skips them, up to
    /// the next place where a record starts, and goes on reading from there.
    #[error(
        "`{}` is corrupt at byte {offset}, after {records} events: {reason} ({skipped} bytes \
         skipped, up to byte {})",
        path.display(),
        offset + skipped
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Where the bad bytes start.
        offset: u64,
        /// How many events were read before them.
        records: u64,
        /// What is wrong.
        reason: String,
        /// How many bytes were skipped: up to the next record, or to the end of the file when
        /// no record follows.
        skipped: u64,
    },
    /// A record the reader would refuse was not written (nothing of it reached the file).
    #[error("cannot write {record} to `{}`: field `{key}`: {reason}", path.display())]
    Refused {
        /// The file.
        path: PathBuf,
        /// Which record: `event 12` (counting from 1), or `the header`.
        record: String,
        /// The field that cannot be written.
        key: String,
        /// Why.
        reason: String,
    },
    /// The log ends early: cut in the middle of a record (`partial` bytes of it are there), or
    /// without the end record a log gets when it is closed (`partial == 0`: its writer was
    /// killed or is still writing). Every complete event before the cut was read.
    #[error("{}", truncated_message(path, *offset, *records, *partial))]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Where the complete records end.
        offset: u64,
        /// How many complete events were read.
        records: u64,
        /// How many bytes of an incomplete record follow.
        partial: u64,
    },
}

fn truncated_message(path: &std::path::Path, offset: u64, records: u64, partial: u64) -> String {
    if partial > 0 {
        format!(
            "`{}` is cut at byte {}: {records} complete events kept, the last {partial} bytes \
             are an incomplete record",
            path.display(),
            offset + partial
        )
    } else {
        format!(
            "`{}` ends at byte {offset} after {records} events without its end record: its \
             writer was stopped before closing it, or is still writing",
            path.display()
        )
    }
}

impl LogError {
    /// Whether this error only says that the log ends early ([`LogError::Truncated`]): every
    /// complete event before it was read.
    pub fn is_truncation(&self) -> bool {
        matches!(self, LogError::Truncated { .. })
    }
}
