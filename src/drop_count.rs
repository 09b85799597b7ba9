//! For unit tests: a lazy value whose drop is counted, which tells when the event holding it
//! was dropped (its last reference gone) and that it was dropped once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{Resolve, ResolveError, Value};

/// Adds one to its counter when dropped; resolves to `Null`.
pub(crate) struct Counted(pub(crate) Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Resolve for Counted {
    fn resolve(&self) -> Result<Value, ResolveError> {
        Ok(Value::Null)
    }
}
