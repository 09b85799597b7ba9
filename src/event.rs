//! [`Event`]: one immutable record of `(key, value)` fields, with when and where it was given.

use std::fmt;

use crate::Value;
use crate::arena::{EventRef, InlineWriter};
use crate::clock::Stamp;
pub(crate) use crate::clock::Timestamp;
use crate::convert::{FromValue, TypeMismatch};
pub(crate) use crate::field::{Field, Key, Origin};

/// Fields being assembled (builders, operators) and stored in an event: inline up to four.
pub(crate) use crate::arena::Fields;

/// Why a field could not be read from an event: the key is missing, or its value has another
/// type. The message names the key and what was found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// The event has no field with this key.
    #[error("event has no key `{key}` (its keys: {available})")]
    MissingKey {
        /// The key asked for.
        key: String,
        /// The keys the event has, comma-separated.
        available: String,
    },
    /// The field exists but holds another type.
    #[error("key `{key}`: {mismatch}")]
    WrongType {
        /// The key asked for.
        key: String,
        /// What was expected and what was found.
        mismatch: TypeMismatch,
    },
}

/// One record given by a training loop: ordered `(key, value)` fields, a timestamp and the
/// source location of the `give!`.
///
/// Events are immutable and cloning one is a reference-count increment, so every subscriber
/// of a scope shares the same event. An event lives in a block of events that the thread
/// making it allocates from (one allocation per 64 events); its fields are dropped with its
/// last reference.
///
/// ```
/// use giving::Event;
///
/// let event = Event::builder().field("loss", 0.25).field("step", 10u64).build();
/// assert_eq!(event.to_string(), "loss=0.25 step=10");
/// assert_eq!(event.get_as::<f64>("loss").unwrap(), 0.25);
/// let error = event.get_as::<f64>("lr").unwrap_err();
/// assert_eq!(error.to_string(), "event has no key `lr` (its keys: loss, step)");
/// ```
#[derive(Clone)]
pub struct Event {
    inner: EventRef,
}

impl Event {
    pub(crate) fn from_parts(
        fields: Fields,
        time: impl Into<Stamp>,
        origin: Option<&'static Origin>,
    ) -> Self {
        Self {
            inner: EventRef::new(time, origin, fields),
        }
    }

    #[inline]
    pub(crate) fn from_fields(
        fields: impl ExactSizeIterator<Item = Field>,
        time: impl Into<Stamp>,
        origin: Option<&'static Origin>,
    ) -> Self {
        Self {
            inner: EventRef::from_iter(time, origin, fields),
        }
    }

    /// An event whose fields `write` writes straight into its slot, stamped now once they are
    /// written (as an event built from fields made beforehand is).
    #[inline(always)]
    pub(crate) fn from_writer(
        origin: Option<&'static Origin>,
        write: impl FnOnce(InlineWriter<'_>),
    ) -> Self {
        Self {
            inner: EventRef::build_stamped_after(origin, write),
        }
    }

    /// The reference to the event's slot, for a [`DropBatch`](crate::arena::DropBatch).
    pub(crate) fn into_ref(self) -> EventRef {
        self.inner
    }

    /// Brings this event's slot into the calling core's cache ahead of use (a hint).
    #[inline(always)]
    pub(crate) fn prefetch(&self) {
        self.inner.prefetch();
    }

    #[inline]
    pub(crate) fn fields(&self) -> &[Field] {
        self.inner.fields()
    }

    /// A builder for an event made by hand (tests, replays, instruments that give).
    pub fn builder() -> EventBuilder {
        EventBuilder {
            fields: Fields::new(),
            time: None,
            origin: None,
        }
    }

    /// An event with the given fields, timestamped now.
    pub fn new<K, V>(fields: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<Key>,
        V: Into<Value>,
    {
        let fields = fields
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        Self::from_parts(fields, Stamp::now(), None)
    }

    /// An event with the given fields and timestamp (replays, logs, injected clocks), built
    /// straight into its one allocation.
    ///
    /// ```
    /// use giving::{Event, Timestamp};
    ///
    /// let event = Event::new_at([("step", 1u64)], Timestamp::from_nanos(42));
    /// assert_eq!(event.time().as_nanos(), 42);
    /// ```
    pub fn new_at<K, V, I>(fields: I, time: Timestamp) -> Self
    where
        K: Into<Key>,
        V: Into<Value>,
        I: IntoIterator<Item = (K, V)>,
        I::IntoIter: ExactSizeIterator,
    {
        let fields = fields.into_iter().map(|(k, v)| (k.into(), v.into()));
        Self::from_fields(fields, time, None)
    }

    /// The value of `key`, if the event has it (the first one if given twice).
    #[inline]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields().iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value of `key` as `T`, with an error naming the key and what was found instead.
    pub fn get_as<T: FromValue>(&self, key: &str) -> Result<T, ValueError> {
        let value = self.get(key).ok_or_else(|| ValueError::MissingKey {
            key: key.to_owned(),
            available: self.keys().collect::<Vec<_>>().join(", "),
        })?;
        T::from_value(value).map_err(|mismatch| ValueError::WrongType {
            key: key.to_owned(),
            mismatch,
        })
    }

    /// Whether the event has a field `key`.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The keys, in the order they were given.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields().iter().map(|(k, _)| k.as_ref())
    }

    /// The `(key, value)` fields, in the order they were given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.fields().iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// How many fields the event has.
    pub fn len(&self) -> usize {
        self.fields().len()
    }

    /// Whether the event has no field.
    pub fn is_empty(&self) -> bool {
        self.fields().is_empty()
    }

    /// When the event was given.
    pub fn time(&self) -> Timestamp {
        self.inner.time()
    }

    /// Where the event was given, when it came from [`give!`](macro@crate::give).
    pub fn origin(&self) -> Option<&'static Origin> {
        self.inner.origin()
    }

    /// A builder that starts from this event's fields, time and origin.
    pub fn to_builder(&self) -> EventBuilder {
        EventBuilder {
            fields: self.fields().iter().cloned().collect(),
            time: Some(self.time()),
            origin: self.origin(),
        }
    }

    /// This event with `key` set to `value` (replaced if present, appended otherwise).
    pub fn with(&self, key: impl Into<Key>, value: impl Into<Value>) -> Event {
        self.to_builder().set(key, value).build()
    }
}

/// Shows `key=value` pairs separated by spaces: `loss=0.25 step=10`.
impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (key, value)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{key}={value}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Event");
        for (key, value) in self.iter() {
            out.field(key, value);
        }
        out.finish_non_exhaustive()
    }
}

/// Events are equal when their fields are equal, in order; time and origin are ignored.
impl PartialEq for Event {
    fn eq(&self, other: &Event) -> bool {
        self.inner.ptr_eq(&other.inner) || self.fields() == other.fields()
    }
}

/// Builds an [`Event`] field by field; see [`Event::builder`].
#[derive(Debug)]
#[must_use = "call build() to get the event"]
pub struct EventBuilder {
    fields: Fields,
    time: Option<Timestamp>,
    origin: Option<&'static Origin>,
}

impl EventBuilder {
    /// Appends a field.
    pub fn field(mut self, key: impl Into<Key>, value: impl Into<Value>) -> Self {
        self.fields.push((key.into(), value.into()));
        self
    }

    /// Appends a field in place (for loops that build an event field by field).
    #[inline]
    pub fn push(&mut self, key: impl Into<Key>, value: impl Into<Value>) {
        self.fields.push((key.into(), value.into()));
    }

    /// Sets a field: replaces the value of `key` if present, appends it otherwise.
    pub fn set(mut self, key: impl Into<Key>, value: impl Into<Value>) -> Self {
        let key = key.into();
        let value = value.into();
        match self.fields.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.fields.push((key, value)),
        }
        self
    }

    /// Keeps only the fields for which `keep` returns true.
    pub fn retain(mut self, mut keep: impl FnMut(&str, &Value) -> bool) -> Self {
        self.fields.retain(|(k, v)| keep(k, v));
        self
    }

    /// Sets the timestamp (default: the time of [`build`](EventBuilder::build)).
    pub fn time(mut self, time: Timestamp) -> Self {
        self.time = Some(time);
        self
    }

    /// The event.
    pub fn build(self) -> Event {
        Event::from_parts(
            self.fields,
            self.time.unwrap_or_else(Timestamp::now),
            self.origin,
        )
    }
}
