//! Values that are read only when a consumer needs them (a loss tensor still on the device).

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::Value;

/// Something that can produce a [`Value`] later, on the consumer's side.
///
/// Implement it for a handle to data that is expensive to read on the producer's thread, such
/// as a burn tensor on a GPU: reading it there would force a device sync on every step.
/// `giving-models` implements it for burn tensors.
///
/// ```
/// use giving::{Resolve, ResolveError, Value};
///
/// struct Deferred(f64);
///
/// impl Resolve for Deferred {
///     fn resolve(&self) -> Result<Value, ResolveError> {
///         Ok(Value::F64(self.0 * 2.0))
///     }
/// }
///
/// let value = Value::lazy(Deferred(0.5));
/// assert_eq!(value.resolved().unwrap(), &Value::F64(1.0));
/// ```
pub trait Resolve: Send + Sync + 'static {
    /// Reads the value. Called at most once per [`LazyValue`], by whoever needs it first.
    fn resolve(&self) -> Result<Value, ResolveError>;
}

/// Why a [`Resolve`] could not produce its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not resolve lazy value: {message}")]
pub struct ResolveError {
    message: String,
}

impl ResolveError {
    /// An error with a message saying what went wrong.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message given at construction.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A shared, resolve-once handle to a [`Resolve`]: the payload of [`Value::Lazy`].
///
/// Cloning is cheap (one reference count); every clone shares the cached result, so however
/// many consumers read a lazy loss, the device is read once.
#[derive(Clone)]
pub struct LazyValue {
    inner: Arc<LazyInner>,
}

struct LazyInner {
    source: Box<dyn Resolve>,
    cached: OnceLock<Result<Value, ResolveError>>,
}

impl LazyValue {
    /// Wraps `source`; nothing is read until [`LazyValue::resolve`].
    pub fn new(source: impl Resolve) -> Self {
        Self {
            inner: Arc::new(LazyInner {
                source: Box::new(source),
                cached: OnceLock::new(),
            }),
        }
    }

    /// The value, read on the first call and cached for every later call and clone.
    ///
    /// The result is never itself lazy: a source that returns a lazy value is resolved in turn.
    pub fn resolve(&self) -> Result<&Value, ResolveError> {
        self.inner
            .cached
            .get_or_init(|| {
                self.inner
                    .source
                    .resolve()
                    .and_then(|value| value.resolved().cloned())
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether the value has already been read.
    pub fn is_resolved(&self) -> bool {
        self.inner.cached.get().is_some()
    }

    /// Whether two handles share the same source.
    pub fn ptr_eq(&self, other: &LazyValue) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl fmt::Debug for LazyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.inner.cached.get() {
            Some(Ok(value)) => f.debug_tuple("Lazy").field(value).finish(),
            Some(Err(error)) => f.debug_tuple("Lazy").field(error).finish(),
            None => f.write_str("Lazy(<unresolved>)"),
        }
    }
}
