//! What an event is made of: its keys, its `(key, value)` fields and the call site that gave
//! it. A leaf beside [`value`](crate::value): the arena stores these, the event reads them.

use std::fmt;

use crate::Value;

pub use crate::key::Key;

/// One `(key, value)` field.
pub(crate) type Field = (Key, Value);

/// Where in the source an event was given: filled in by [`give!`](macro@crate::give).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    /// `file!()` of the call.
    pub file: &'static str,
    /// `line!()` of the call.
    pub line: u32,
    /// `module_path!()` of the call.
    pub module: &'static str,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}
