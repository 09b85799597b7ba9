//! How a lazy value is read: once, by whoever needs it first, many of one type at a time where
//! the source can (its types are declared in the parent, with [`Value`], which holds them).

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::{Arc, OnceLock};

use super::error::ResolveError;
use super::{LazyInner, LazyValue, ReadMany, Resolve, Value};

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

    /// The source this value reads from, for a consumer that can use it without reading it
    /// (a model watch computes a device tensor's statistics on its device and reads those
    /// only): downcast it through [`Any`]. Reading through it does not fill
    /// this value's cache.
    ///
    /// ```
    /// use std::any::Any;
    /// use giving::{LazyValue, Resolve, ResolveError, Value};
    ///
    /// struct OnDevice(Vec<f64>);
    ///
    /// impl Resolve for OnDevice {
    ///     fn resolve(&self) -> Result<Value, ResolveError> {
    ///         Ok(Value::List(self.0.iter().copied().map(Value::F64).collect()))
    ///     }
    /// }
    ///
    /// let lazy = LazyValue::new(OnDevice(vec![1.0, 2.0, 3.0]));
    /// let source: &dyn Any = lazy.source();
    /// let on_device = source.downcast_ref::<OnDevice>().unwrap();
    /// assert_eq!(on_device.0.iter().sum::<f64>(), 6.0);
    /// assert!(!lazy.is_resolved());
    /// ```
    pub fn source(&self) -> &dyn Resolve {
        &*self.inner.source
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
