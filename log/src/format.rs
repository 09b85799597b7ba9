//! The format's name, version and size limits: the constants every other module of the crate
//! reads (the writer refuses what the reader would refuse, so both take their bounds from
//! here). This module imports nothing of the crate, so that errors, the encoder and the
//! decoder can all depend on it without depending on each other.

/// The `format` field of every log header.
pub const FORMAT_NAME: &str = "giving-log";

/// The format version this crate writes and reads.
pub const FORMAT_VERSION: u64 = 1;

/// The largest header a reader looks for before refusing the file (so that a file that is not
/// a log is refused without reading all of it); the writer refuses larger headers.
pub(crate) const MAX_HEADER: usize = 1 << 20;

/// The longest nesting of lists and maps written or read; deeper values are refused.
pub(crate) const MAX_DEPTH: usize = 128;

/// The largest record written or read. A reader buffers a whole record, so without a bound a
/// corrupt length would make it buffer the rest of the file; real events are far smaller.
pub(crate) const MAX_RECORD: usize = 64 << 20;
