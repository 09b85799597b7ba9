//! Keyed operators: the part of the vocabulary that reads events by their field names
//! (Python giving's `where`, `keep`, `kmap`, `gv["loss"]`, …).
//!
//! The operators are the methods of [`EventStreamOps`] (streams of events) and
//! [`ValueStreamOps`] (streams of values), both in [`giving::prelude`](crate::prelude). The
//! types of this module are what those methods return (as tokio-stream's `adapters`): a
//! pipeline rarely names them.

mod adapter;
mod affix;
mod as_key;
mod augment;
mod collect_between;
mod display;
mod format;
mod group_wrap;
mod keep;
mod key;
mod kfilter;
mod kflatten;
mod kgroup_by;
mod kmap;
mod kmerge;
mod sole;
mod tag;
mod where_;
mod where_any;
mod wmap;

use futures::Stream;

pub use adapter::{Keyed, KeyedOp};
pub use affix::Affix;
pub use as_key::AsKey;
pub use augment::Augment;
pub use collect_between::CollectBetween;
pub use display::DisplayEvents;
pub use format::{Format, Template, TemplateError};
pub use group_wrap::{GroupWrap, WrapGroup};
pub use keep::Keep;
pub use key::{KeyOf, TryKeyOf};
pub use kfilter::KFilter;
pub use kflatten::KFlatten;
pub use kgroup_by::{KGroup, KGroupBy};
pub use kmap::KMap;
pub use kmerge::KMerge;
pub use sole::Sole;
pub use tag::Tag;
pub use where_::Where;
pub use where_any::WhereAny;
pub use wmap::WMap;

use giving_operators::adapters::{Reduce, Running, Shared};
use giving_operators::{ReduceOps, StreamOps};

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
pub trait EventStreamOps: Stream<Item = Event> {
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
    /// values that are not a `T`, are skipped. Use [`try_key`](EventStreamOps::try_key) to see
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

    /// Merges the fields of every event into one event, emitted at completion (giving's
    /// `kmerge`): a later value of a key replaces the earlier one. `None` for an empty stream.
    ///
    /// Like every reduction, the result is both a future (await it) and a stream of at most
    /// one event.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let merged = events().kmerge().await.unwrap();
    /// assert_eq!(merged.to_string(), "step=2 loss=0.25 mode=test lr=0.1");
    /// # });
    /// ```
    fn kmerge(self) -> Reduce<Self, KMerge>
    where
        Self: Sized,
    {
        self.reduce_with(KMerge::new())
    }

    /// The running merge of the events: after each event, every field seen so far with its
    /// latest value (giving's `kscan`, `kmerge(scan=True)`).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let states: Vec<String> = events().kscan().map(|e| e.to_string()).collect().await;
    /// assert_eq!(states[1], "step=2 loss=0.25 mode=test");
    /// assert_eq!(states[2], "step=2 loss=0.25 mode=test lr=0.1");
    /// # });
    /// ```
    fn kscan(self) -> Running<Self, KMerge>
    where
        Self: Sized,
    {
        self.running_with(KMerge::new())
    }

    /// Sets the field `key` of each event to the next item of `other`, pairing them in order as
    /// `zip` does (giving's `affix(key=stream)`). Completes when either stream does, so
    /// `other` should have one item per event: a running reduction (`min_scan()`), not a
    /// final one. An existing field `key` is replaced.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let epochs = futures::stream::iter([10u64, 20, 30]);
    /// let out: Vec<String> =
    ///     events().affix("epoch", epochs).map(|e| e.to_string()).collect().await;
    /// assert_eq!(out[0], "step=1 loss=0.5 epoch=10");
    /// assert_eq!(out[2], "lr=0.1 epoch=30");
    /// # });
    /// ```
    fn affix<O>(self, key: impl Into<Key>, other: O) -> Affix<Self, O>
    where
        O: Stream,
        O::Item: Into<Value>,
        Self: Sized,
    {
        Affix::new(self, key, other)
    }

    /// As [`affix`](EventStreamOps::affix), with the other stream derived from this one
    /// (giving's `affix(key=lambda o: ...)`): `make` receives a shared handle of this stream.
    /// The derived stream must give exactly one item per event (use the `_scan` reductions).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # futures::executor::block_on(async {
    /// let losses =
    ///     futures::stream::iter([event!(loss = 0.5), event!(loss = 0.7), event!(loss = 0.2)]);
    /// let best: Vec<f64> = losses
    ///     .affix_with("best", |s| s.key::<f64>("loss").min_scan())
    ///     .key::<f64>("best")
    ///     .collect()
    ///     .await;
    /// assert_eq!(best, vec![0.5, 0.5, 0.2]);
    /// # });
    /// ```
    fn affix_with<O, F>(self, key: impl Into<Key>, make: F) -> Affix<Shared<Self>, O>
    where
        F: FnOnce(Shared<Self>) -> O,
        O: Stream,
        O::Item: Into<Value>,
        Self: Sized,
    {
        let shared = self.share();
        let other = make(shared.clone());
        Affix::new(shared, key, other)
    }

    /// Merges the events from one that has the key `start` up to one that has the key `end`
    /// into one event, emitted at the `end` (giving's `collect_between`). A new `start` before
    /// the `end` starts over; events outside a `start`…`end` group are ignored.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # futures::executor::block_on(async {
    /// let events = futures::stream::iter([
    ///     event!(A = 1), event!(B = 2), event!(C = 3, D = 4, A = 5), event!(Z = 6), event!(B = 7),
    /// ]);
    /// let groups: Vec<String> =
    ///     events.collect_between("A", "Z").map(|e| e.to_string()).collect().await;
    /// assert_eq!(groups, vec!["C=3 D=4 A=5 Z=6"]);
    /// # });
    /// ```
    fn collect_between(
        self,
        start: impl Into<Key>,
        end: impl Into<Key>,
    ) -> Keyed<Self, CollectBetween>
    where
        Self: Sized,
    {
        Keyed::new(self, CollectBetween::new(start, end, None))
    }

    /// As [`collect_between`](EventStreamOps::collect_between), with one group per value of
    /// the key `common`, so that interleaved groups (one per worker, say) are collected apart
    /// (giving's `collect_between(start, end, common)`). Events without `common` are ignored.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # futures::executor::block_on(async {
    /// let events = futures::stream::iter([
    ///     event!(w = 1, start = true), event!(w = 2, start = true),
    ///     event!(w = 1, x = 10), event!(w = 2, x = 20),
    ///     event!(w = 2, stop = true), event!(w = 1, stop = true),
    /// ]);
    /// let xs: Vec<i64> =
    ///     events.collect_between_by("start", "stop", "w").key::<i64>("x").collect().await;
    /// assert_eq!(xs, vec![20, 10]);
    /// # });
    /// ```
    fn collect_between_by(
        self,
        start: impl Into<Key>,
        end: impl Into<Key>,
        common: impl Into<Key>,
    ) -> Keyed<Self, CollectBetween>
    where
        Self: Sized,
    {
        Keyed::new(self, CollectBetween::new(start, end, Some(common.into())))
    }

    /// Splits the events by the value of the field `key` (giving's `group_by(key)` on dicts):
    /// emits `(value, group)` at the first event with each value, where `group` streams every
    /// event with that value, in order. Events without the field are skipped. Values are
    /// compared with `==` (so `1u64` and `1i64` are different groups).
    ///
    /// As [`StreamOps::group_by`]: the outer stream drives the upstream, so consume the groups
    /// concurrently with it (spawn them, or merge them); a dropped group discards its events;
    /// every group completes when the upstream does. Named `kgroup_by` because
    /// [`StreamOps::group_by`] takes a key function.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # futures::executor::block_on(async {
    /// let events = futures::stream::iter([
    ///     event!(mode = "train", loss = 0.5),
    ///     event!(mode = "test", loss = 0.7),
    ///     event!(mode = "train", loss = 0.25),
    /// ]);
    /// let groups: Vec<_> = events.kgroup_by("mode").collect().await;
    /// let mut out = Vec::new();
    /// for (mode, group) in groups {
    ///     out.push((mode.to_string(), group.key::<f64>("loss").collect::<Vec<_>>().await));
    /// }
    /// assert_eq!(out, vec![("train".into(), vec![0.5, 0.25]), ("test".into(), vec![0.7])]);
    /// # });
    /// ```
    fn kgroup_by(self, key: impl Into<Key>) -> KGroupBy<Self>
    where
        Self: Sized,
    {
        KGroupBy::new(self, key)
    }

    /// One group per block wrapped by [`wrap!`](macro@crate::wrap) with this name, emitted when the
    /// block begins: a stream of the events given inside the block, in order, without the
    /// `$wrap` events (giving's `group_wrap`). A group completes at the end of its block.
    /// Nested blocks of the same name each get the events given inside them.
    ///
    /// The outer stream and the groups drive the upstream together, so groups can be consumed
    /// one at a time (`then`, `flat_map`) or concurrently (spawned). Filter blocks on their
    /// `begin` fields with [`WrapGroup::begin`] (giving's `conditions`).
    ///
    /// ```
    /// use giving::prelude::*;
    /// use giving::{give, given, wrap};
    ///
    /// let gv = given();
    /// let losses = gv.stream().group_wrap("epoch").then(|g| g.key::<f64>("loss").average());
    /// let averages = gv.spawn(losses.collect::<Vec<_>>());
    /// for epoch in 0..2u32 {
    ///     let _epoch = wrap!("epoch", epoch);
    ///     for i in 0..4u32 {
    ///         let loss = f64::from(epoch * 10 + i);
    ///         give!(loss);
    ///     }
    /// }
    /// gv.finish().unwrap();
    /// assert_eq!(averages.join().unwrap(), vec![Some(1.5), Some(11.5)]);
    /// ```
    fn group_wrap(self, name: impl Into<Key>) -> GroupWrap<Self>
    where
        Self: Sized,
    {
        GroupWrap::new(self, name)
    }

    /// Per block wrapped by [`wrap!`](macro@crate::wrap) with this name: `begin` is called with the
    /// block's `begin` event and returns a state; at the block's `end`, `end` is called with
    /// that state and the `end` event, and its result is emitted (giving's `wmap`, whose
    /// generator yields once between begin and end). Nested blocks are paired by id; an `end`
    /// whose `begin` was not seen is ignored, and a block still open when the stream completes
    /// emits nothing.
    ///
    /// ```
    /// use giving::prelude::*;
    /// use giving::{given, wrap};
    ///
    /// let gv = given();
    /// let durations = gv.spawn(
    ///     gv.stream()
    ///         .wmap("step", |begin| begin.time(), |start, end| end.time().duration_since(start))
    ///         .count(),
    /// );
    /// for _ in 0..3 {
    ///     let _step = wrap!("step");
    /// }
    /// gv.finish().unwrap();
    /// assert_eq!(durations.join().unwrap(), 3);
    /// ```
    fn wmap<St, T, B, E>(
        self,
        name: impl Into<Key>,
        begin: B,
        end: E,
    ) -> Keyed<Self, WMap<B, E, St>>
    where
        B: FnMut(&Event) -> St,
        E: FnMut(St, &Event) -> T,
        Self: Sized,
    {
        Keyed::new(self, WMap::new(name, begin, end))
    }

    /// The value of each event that has exactly one field, read as `T` (giving's `sole`);
    /// events with no field or several, and values that are not a `T`, are skipped.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let lrs: Vec<f64> = events().sole::<f64>().collect().await;
    /// assert_eq!(lrs, vec![0.1]);
    /// # });
    /// ```
    fn sole<T: FromValue>(self) -> Keyed<Self, Sole<T>>
    where
        Self: Sized,
    {
        Keyed::new(self, Sole::new())
    }

    /// Expands each event whose field `key` is a list into one event per element, with `key`
    /// set to the element and the other fields kept (an empty list gives no event). Events
    /// where `key` is missing or not a list pass unchanged. Named `kflatten` because
    /// [`StreamOps::flatten`] flattens a stream of streams.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # futures::executor::block_on(async {
    /// let batch = futures::stream::iter([event!(step = 1, losses = vec![0.5, 0.7])]);
    /// let out: Vec<String> = batch.kflatten("losses").map(|e| e.to_string()).collect().await;
    /// assert_eq!(out, vec!["step=1 losses=0.5", "step=1 losses=0.7"]);
    /// # });
    /// ```
    fn kflatten(self, key: impl Into<Key>) -> KFlatten<Self>
    where
        Self: Sized,
    {
        KFlatten::new(self, key)
    }

    /// Adds a unique, pronounceable word as the first field, [`$word`](crate::vocab::keys::TAG_WORD), of each event
    /// (giving's `tag`), to find an event again in a log or a debugger
    /// (`where_eq("$word", "kavomi")`). Words follow one sequence per group in the process, so
    /// they are unique within it and the same from one run to the next.
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let tagged: Vec<Event> = events().tag().collect().await;
    /// let words: Vec<String> = tagged.iter().map(|e| e.get_as("$word").unwrap()).collect();
    /// assert_eq!(tagged[0].keys().next(), Some("$word"));
    /// assert!(words[0] != words[1] && words[1] != words[2]);
    /// # });
    /// ```
    fn tag(self) -> Keyed<Self, Tag>
    where
        Self: Sized,
    {
        Keyed::new(self, Tag::new(""))
    }

    /// As [`tag`](EventStreamOps::tag), with the words of the sequence of `group` (an
    /// independent sequence), and the field [`$group`](crate::vocab::keys::TAG_GROUP) set to `group` (giving's
    /// `tag(group=...)`).
    ///
    /// ```
    /// # use giving::prelude::*;
    /// # use giving::{event, Event};
    /// # fn events() -> impl Stream<Item = Event> { futures::stream::iter([event!(step = 1, loss = 0.5), event!(step = 2, loss = 0.25, mode = "test"), event!(lr = 0.1)]) }
    /// # futures::executor::block_on(async {
    /// let tagged: Vec<Event> = events().tag_group("train").collect().await;
    /// assert_eq!(tagged[0].get_as::<String>("$group").unwrap(), "train");
    /// # });
    /// ```
    fn tag_group(self, group: &str) -> Keyed<Self, Tag>
    where
        Self: Sized,
    {
        Keyed::new(self, Tag::new(group))
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

impl<S: Stream<Item = Event> + ?Sized> EventStreamOps for S {}

/// Operators on streams of plain values, to turn them back into events.
pub trait ValueStreamOps: Stream {
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

impl<S: Stream + ?Sized> ValueStreamOps for S {}
