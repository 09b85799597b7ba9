//! Values that are read only when a consumer needs them (a loss tensor still on the device).

use std::any::{Any, TypeId};
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
pub trait Resolve: Any + Send + Sync {
    /// Reads the value. Called at most once per [`LazyValue`], by whoever needs it first.
    fn resolve(&self) -> Result<Value, ResolveError>;

    /// A function that reads many values of this type at once, for sources that are cheaper
    /// to read together than one by one (tensors on one device: one transfer and one device
    /// sync instead of one per value). [`LazyValue::resolve_all`] hands it every unread value
    /// of this type it was given, in order, and expects one result per value, in the same
    /// order. `None` (the default): values are read one by one.
    fn read_many(&self) -> Option<ReadMany> {
        None
    }
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

/// Reads many sources of one type at once; see [`Resolve::read_many`]. The sources it is given
/// are all of the type whose `read_many` returned it (downcast them with
/// `(source as &dyn Any).downcast_ref::<T>()`).
pub type ReadMany = fn(&[&dyn Resolve]) -> Vec<Result<Value, ResolveError>>;

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

    /// Reads every unread value of `values` now, those whose source can read many at once
    /// ([`Resolve::read_many`]) together, one batch per source type: what a sink calls once
    /// per window of events instead of reading each loss on its own (milabench's
    /// `LazyLossPusher`). Values another thread reads meanwhile keep that reading. A batch
    /// that does not give one result per value is ignored (its values are read one by one
    /// when asked).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use giving::{LazyValue, ReadMany, Resolve, ResolveError, Value};
    ///
    /// static BATCHES: AtomicUsize = AtomicUsize::new(0);
    ///
    /// struct OnDevice(f64);
    ///
    /// impl Resolve for OnDevice {
    ///     fn resolve(&self) -> Result<Value, ResolveError> {
    ///         Ok(Value::F64(self.0))
    ///     }
    ///     fn read_many(&self) -> Option<ReadMany> {
    ///         Some(|sources| {
    ///             BATCHES.fetch_add(1, Ordering::SeqCst);
    ///             sources.iter().map(|s| s.resolve()).collect()
    ///         })
    ///     }
    /// }
    ///
    /// let losses: Vec<LazyValue> = (0..4).map(|i| LazyValue::new(OnDevice(i as f64))).collect();
    /// LazyValue::resolve_all(&losses.iter().collect::<Vec<_>>());
    /// assert_eq!(BATCHES.load(Ordering::SeqCst), 1);
    /// assert!(losses.iter().all(LazyValue::is_resolved));
    /// assert_eq!(losses[3].resolve().unwrap(), &Value::F64(3.0));
    /// ```
    pub fn resolve_all(values: &[&LazyValue]) {
        let mut groups: Vec<(TypeId, ReadMany, Vec<&LazyValue>)> = Vec::new();
        for value in values.iter().filter(|v| !v.is_resolved()) {
            let source: &dyn Resolve = &*value.inner.source;
            let Some(read) = source.read_many() else {
                continue;
            };
            let kind = (source as &dyn Any).type_id();
            match groups.iter_mut().find(|(k, _, _)| *k == kind) {
                Some((_, _, group)) => {
                    if !group.iter().any(|v| v.ptr_eq(value)) {
                        group.push(value);
                    }
                }
                None => groups.push((kind, read, vec![value])),
            }
        }
        for (_, read, group) in groups {
            let sources: Vec<&dyn Resolve> = group.iter().map(|v| &*v.inner.source).collect();
            let results = read(&sources);
            if results.len() != group.len() {
                continue;
            }
            for (value, result) in group.iter().zip(results) {
                let _ = value
                    .inner
                    .cached
                    .set(result.and_then(|value| value.resolved().cloned()));
            }
        }
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
