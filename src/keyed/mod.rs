//! Keyed operators: the part of the vocabulary that reads events by their field names
//! (Python giving's `where`, `keep`, `kmap`, `gv["loss"]`, …).

mod adapter;
mod as_key;
mod augment;
mod display;
mod format;
mod keep;
mod key;
mod kfilter;
mod kmap;
mod where_;
mod where_any;

use futures::Stream;

pub use adapter::{Keyed, KeyedOp};
pub use as_key::AsKey;
pub use augment::Augment;
pub use display::DisplayEvents;
pub use format::{Format, Template, TemplateError};
pub use keep::Keep;
pub use key::{KeyOf, TryKeyOf};
pub use kfilter::KFilter;
pub use kmap::KMap;
pub use where_::Where;
pub use where_any::WhereAny;

use crate::{Event, FromValue, Key, Value};

/// Operators on streams of [`Event`]s, such as [`Given::stream`](crate::Given::stream).
///
/// The examples share this setup: a few events, run through the operator and collected.
///
/// ```
/// use giving::prelude::*;
/// use giving::{event, Event};
///
/// fn events() -> impl Stream<Item = Event> {
///     futures::stream::iter([
///         event!(step = 1, loss = 0.5),
///         event!(step = 2, loss = 0.25, mode = "test"),
///         event!(lr = 0.1),
///     ])
/// }
/// # let _ = events();
/// ```
pub trait EventStreamExt: Stream<Item = Event> {
    /// Keeps the events that have every key; a key written `"!key"` must be absent instead
    /// (giving's `where(*keys)`).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let steps: Vec<u64> = events().where_(["loss", "!mode"]).key::<u64>("step").collect().await;
    /// assert_eq!(steps, vec![1]);
    /// # });
    /// ```
    fn where_<K: AsRef<str>>(self, keys: impl IntoIterator<Item = K>) -> Keyed<Self, Where>
    where
        Self: Sized,
    {
        Keyed::new(self, Where::keys(keys))
    }

    /// Keeps the events whose field `key` equals `value` (giving's `where(key=value)`).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let steps: Vec<u64> = events().where_eq("mode", "test").key::<u64>("step").collect().await;
    /// assert_eq!(steps, vec![2]);
    /// # });
    /// ```
    fn where_eq(self, key: impl Into<Key>, value: impl Into<Value>) -> Keyed<Self, Where>
    where
        Self: Sized,
    {
        Keyed::new(self, Where::equals(key, value))
    }

    /// Keeps the events whose field `key` exists and satisfies `predicate` (giving's
    /// `where(key=callable)`).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let low = events().where_with("loss", |v| v.as_f64().is_some_and(|x| x < 0.3));
    /// let steps: Vec<u64> = low.key::<u64>("step").collect().await;
    /// assert_eq!(steps, vec![2]);
    /// # });
    /// ```
    fn where_with(
        self,
        key: impl Into<Key>,
        predicate: impl FnMut(&Value) -> bool + Send + 'static,
    ) -> Keyed<Self, Where>
    where
        Self: Sized,
    {
        Keyed::new(self, Where::matches(key, predicate))
    }

    /// Keeps the events that have at least one of the keys (giving's `where_any`).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let n = events().where_any(["mode", "lr"]).collect::<Vec<_>>().await.len();
    /// assert_eq!(n, 2);
    /// # });
    /// ```
    fn where_any<K: Into<Key>>(self, keys: impl IntoIterator<Item = K>) -> Keyed<Self, WhereAny>
    where
        Self: Sized,
    {
        Keyed::new(self, WhereAny::new(keys))
    }

    /// Keeps only these fields; events that have none of them are dropped (giving's `keep`).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let kept: Vec<String> = events().keep(["loss"]).map(|e| e.to_string()).collect().await;
    /// assert_eq!(kept, vec!["loss=0.5", "loss=0.25"]);
    /// # });
    /// ```
    fn keep<K: Into<Key> + Clone>(self, keys: impl IntoIterator<Item = K>) -> Keyed<Self, Keep>
    where
        Self: Sized,
    {
        Keyed::new(self, Keep::new(keys.into_iter().map(|k| (k.clone(), k))))
    }

    /// Keeps only these fields, renamed: `(field, new name)` pairs (giving's `keep(**renames)`).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let kept: Vec<String> =
    ///     events().keep_as([("loss", "train_loss")]).map(|e| e.to_string()).collect().await;
    /// assert_eq!(kept, vec!["train_loss=0.5", "train_loss=0.25"]);
    /// # });
    /// ```
    fn keep_as<K: Into<Key>, N: Into<Key>>(
        self,
        renames: impl IntoIterator<Item = (K, N)>,
    ) -> Keyed<Self, Keep>
    where
        Self: Sized,
    {
        Keyed::new(self, Keep::new(renames))
    }

    /// Maps each event through a closure that reads its fields (giving's `kmap`; in Rust the
    /// closure receives the event instead of keyword arguments).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let products: Vec<f64> = events()
    ///     .where_(["step", "loss"])
    ///     .kmap(|e| e.get_as::<f64>("step").unwrap() * e.get_as::<f64>("loss").unwrap())
    ///     .collect()
    ///     .await;
    /// assert_eq!(products, vec![0.5, 0.5]);
    /// # });
    /// ```
    fn kmap<T, F: FnMut(&Event) -> T>(self, f: F) -> Keyed<Self, KMap<F>>
    where
        Self: Sized,
    {
        Keyed::new(self, KMap::new(f))
    }

    /// Keeps the events for which a closure that reads their fields returns true (giving's
    /// `kfilter`).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let n = events().kfilter(|e| e.len() >= 2).collect::<Vec<_>>().await.len();
    /// assert_eq!(n, 2);
    /// # });
    /// ```
    fn kfilter<F: FnMut(&Event) -> bool>(self, predicate: F) -> Keyed<Self, KFilter<F>>
    where
        Self: Sized,
    {
        Keyed::new(self, KFilter::new(predicate))
    }

    /// The values of `key` read as `T` (giving's `gv["loss"]`): events without the key, and
    /// values that are not a `T`, are skipped. Use [`try_key`](EventStreamExt::try_key) to see
    /// the type errors instead.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let losses: Vec<f64> = events().key::<f64>("loss").collect().await;
    /// assert_eq!(losses, vec![0.5, 0.25]);
    /// # });
    /// ```
    fn key<T: FromValue>(self, key: impl Into<Key>) -> Keyed<Self, KeyOf<T>>
    where
        Self: Sized,
    {
        Keyed::new(self, KeyOf::new(key))
    }

    /// The values of `key` as `Ok(T)`, or an error naming the key and the type found; events
    /// without the key are skipped.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let modes: Vec<_> = events().try_key::<f64>("mode").collect().await;
    /// let error = modes[0].as_ref().unwrap_err();
    /// assert_eq!(error.to_string(), "key `mode`: expected f64, found str \"test\"");
    /// # });
    /// ```
    fn try_key<T: FromValue>(self, key: impl Into<Key>) -> Keyed<Self, TryKeyOf<T>>
    where
        Self: Sized,
    {
        Keyed::new(self, TryKeyOf::new(key))
    }

    /// Adds (or replaces) the field `key`, computed from each event (giving's `augment`).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let doubled: Vec<f64> = events()
    ///     .where_(["loss"])
    ///     .augment("loss2", |e| e.get_as::<f64>("loss").unwrap_or(0.0) * 2.0)
    ///     .key::<f64>("loss2")
    ///     .collect()
    ///     .await;
    /// assert_eq!(doubled, vec![1.0, 0.5]);
    /// # });
    /// ```
    fn augment<V, F>(self, key: impl Into<Key>, f: F) -> Keyed<Self, Augment<F>>
    where
        V: Into<Value>,
        F: FnMut(&Event) -> V,
        Self: Sized,
    {
        Keyed::new(self, Augment::new(key, f))
    }

    /// Renders each event with a [`Template`] (`"{step}: {loss:.3}"`); events missing a field
    /// the template names are skipped. Fails when the template does not parse.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let lines: Vec<String> = events().format("{step}: {loss:.2}").unwrap().collect().await;
    /// assert_eq!(lines, vec!["1: 0.50", "2: 0.25"]);
    /// # });
    /// ```
    fn format(self, template: &str) -> Result<Keyed<Self, Format>, TemplateError>
    where
        Self: Sized,
    {
        Ok(Keyed::new(self, Format::new(Template::parse(template)?)))
    }

    /// Prints each event on standard output as `[file:line] key=value …` (a sink; giving's
    /// `display`). Completes when the stream does.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// events().display().await; // [src/main.rs:4] step=1 loss=0.5 …
    /// # });
    /// ```
    fn display(self) -> DisplayEvents<Self>
    where
        Self: Sized,
    {
        DisplayEvents::new(self)
    }
}

impl<S: Stream<Item = Event> + ?Sized> EventStreamExt for S {}

/// Operators on streams of plain values, to turn them back into events.
pub trait ValueStreamExt: Stream {
    /// Wraps each item into an event with the single field `key` (giving's `as_`).
    ///
    /// ```
    /// use giving::prelude::*;
    /// # futures::executor::block_on(async {
    /// let events: Vec<String> =
    ///     futures::stream::iter([0.5, 0.25]).as_key("loss").map(|e| e.to_string()).collect().await;
    /// assert_eq!(events, vec!["loss=0.5", "loss=0.25"]);
    /// # });
    /// ```
    // The name is giving's (`as_`), kept despite clippy's `as_*`-borrows convention.
    #[allow(clippy::wrong_self_convention)]
    fn as_key(self, key: impl Into<Key>) -> Keyed<Self, AsKey>
    where
        Self::Item: Into<Value>,
        Self: Sized,
    {
        Keyed::new(self, AsKey::new(key))
    }
}

impl<S: Stream + ?Sized> ValueStreamExt for S {}
