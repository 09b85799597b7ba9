use std::fmt::Display;
use std::future::Future;
use std::hash::Hash;
use std::ops::{Bound, RangeBounds};
use std::time::Duration;

use futures::Stream;
use futures::stream;

use crate::adapters::{
    AtEnd, Buffer, BufferSkip, BufferTime, Check, CombineLatest, Debounce, Distinct, DistinctItems,
    DistinctUntilChanged, DistinctUntilChangedBy, Fail, FailIfFalse, Filter, FilterMap, ForEach,
    GroupBy, HoldLast, Pairwise, Print, Roll, Sample, Shared, SkipWhile, Slice, SliceBy, Sort,
    SortByKey, TakeWhile, Throttle, ThrottleLatest, Timeout, WithLatestFrom,
};

/// The operator vocabulary of `giving`, available on every [`Stream`]: every operator but the
/// reductions, which are [`ReduceOps`](crate::ReduceOps)'s.
///
/// Names and semantics follow Python `giving` and ReactiveX; see `docs/operators.md` for the
/// full table and the places where Rust made us differ.
pub trait StreamOps: Stream {
    // ----------------------------------------------------------------------------------------
    // Basics
    // ----------------------------------------------------------------------------------------

    /// Waits for the next item; `None` once the stream has completed.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let mut s = futures::stream::iter([1, 2]);
    /// assert_eq!(s.next().await, Some(1));
    /// # });
    /// ```
    fn next(&mut self) -> stream::Next<'_, Self>
    where
        Self: Unpin,
    {
        futures::StreamExt::next(self)
    }

    /// Transforms every item with `f` (rx `map`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([1, 2]).map(|x| x * 10).collect().await;
    /// assert_eq!(v, vec![10, 20]);
    /// # });
    /// ```
    fn map<T, F>(self, f: F) -> stream::Map<Self, F>
    where
        F: FnMut(Self::Item) -> T,
        Self: Sized,
    {
        futures::StreamExt::map(self, f)
    }

    /// Transforms every item with an asynchronous function, one at a time, in order
    /// (futures `then`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([1, 2]).then(|x| async move { x + 1 }).collect().await;
    /// assert_eq!(v, vec![2, 3]);
    /// # });
    /// ```
    fn then<Fut, F>(self, f: F) -> stream::Then<Self, Fut, F>
    where
        F: FnMut(Self::Item) -> Fut,
        Fut: Future,
        Self: Sized,
    {
        futures::StreamExt::then(self, f)
    }

    /// Keeps the items for which `predicate` returns `true` (rx `filter`). Unlike
    /// `futures::StreamExt::filter`, the predicate is a plain closure.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter(1..=5).filter(|x| *x > 3).collect().await;
    /// assert_eq!(v, vec![4, 5]);
    /// # });
    /// ```
    fn filter<F>(self, predicate: F) -> Filter<Self, F>
    where
        F: FnMut(&Self::Item) -> bool,
        Self: Sized,
    {
        Filter::new(self, predicate)
    }

    /// Maps every item with `f` and keeps the `Some` results (a plain-closure `filter_map`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter(["1", "x", "3"])
    ///     .filter_map(|s| s.parse::<i32>().ok())
    ///     .collect()
    ///     .await;
    /// assert_eq!(v, vec![1, 3]);
    /// # });
    /// ```
    fn filter_map<T, F>(self, f: F) -> FilterMap<Self, F>
    where
        F: FnMut(Self::Item) -> Option<T>,
        Self: Sized,
    {
        FilterMap::new(self, f)
    }

    /// Calls `f` on a reference to every item as it passes (rx `tap` / `do`).
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let mut seen = Vec::new();
    /// let n = futures::stream::iter([1, 2]).inspect(|x| seen.push(*x)).count().await;
    /// assert_eq!((n, seen), (2, vec![1, 2]));
    /// # });
    /// ```
    fn inspect<F>(self, f: F) -> stream::Inspect<Self, F>
    where
        F: FnMut(&Self::Item),
        Self: Sized,
    {
        futures::StreamExt::inspect(self, f)
    }

    /// Pairs every item with its zero-based index.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<(usize, char)> = futures::stream::iter(['a', 'b']).enumerate().collect().await;
    /// assert_eq!(v, vec![(0, 'a'), (1, 'b')]);
    /// # });
    /// ```
    fn enumerate(self) -> stream::Enumerate<Self>
    where
        Self: Sized,
    {
        futures::StreamExt::enumerate(self)
    }

    /// Flattens a stream of streams, one inner stream after the other (rx `concat_all`).
    ///
    /// ```
    /// use futures::stream;
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = stream::iter([stream::iter(vec![1, 2]), stream::iter(vec![3])])
    ///     .flatten()
    ///     .collect()
    ///     .await;
    /// assert_eq!(v, vec![1, 2, 3]);
    /// # });
    /// ```
    fn flatten(self) -> stream::Flatten<Self>
    where
        Self::Item: Stream,
        Self: Sized,
    {
        futures::StreamExt::flatten(self)
    }

    /// Maps every item to a stream and flattens them in order (rx `concat_map`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([1, 2])
    ///     .flat_map(|x| futures::stream::iter([x, x * 10]))
    ///     .collect()
    ///     .await;
    /// assert_eq!(v, vec![1, 10, 2, 20]);
    /// # });
    /// ```
    fn flat_map<U, F>(self, f: F) -> stream::FlatMap<Self, U, F>
    where
        F: FnMut(Self::Item) -> U,
        U: Stream,
        Self: Sized,
    {
        futures::StreamExt::flat_map(self, f)
    }

    /// Makes the stream safe to poll after completion (it keeps answering `None`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let mut s = futures::stream::iter([1]).fuse();
    /// assert_eq!((s.next().await, s.next().await, s.next().await), (Some(1), None, None));
    /// # });
    /// ```
    fn fuse(self) -> stream::Fuse<Self>
    where
        Self: Sized,
    {
        futures::StreamExt::fuse(self)
    }

    /// Boxes the stream into a `Pin<Box<dyn Stream + Send>>`, to name or store a pipeline.
    ///
    /// ```
    /// use futures::stream::BoxStream;
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let s: BoxStream<'static, i32> = futures::stream::iter([1, 2]).map(|x| x + 1).boxed();
    /// assert_eq!(s.collect::<Vec<_>>().await, vec![2, 3]);
    /// # });
    /// ```
    fn boxed<'a>(self) -> stream::BoxStream<'a, Self::Item>
    where
        Self: Sized + Send + 'a,
    {
        futures::StreamExt::boxed(self)
    }

    /// Boxes the stream into a `Pin<Box<dyn Stream>>` (not `Send`).
    ///
    /// ```
    /// use futures::stream::LocalBoxStream;
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let s: LocalBoxStream<'static, i32> = futures::stream::iter([1]).boxed_local();
    /// assert_eq!(s.collect::<Vec<_>>().await, vec![1]);
    /// # });
    /// ```
    fn boxed_local<'a>(self) -> stream::LocalBoxStream<'a, Self::Item>
    where
        Self: Sized + 'a,
    {
        futures::StreamExt::boxed_local(self)
    }

    // ----------------------------------------------------------------------------------------
    // Sinks
    // ----------------------------------------------------------------------------------------

    /// Collects every item into a collection once the stream completes (a sink).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<u8> = futures::stream::iter([3, 1]).collect().await;
    /// assert_eq!(v, vec![3, 1]);
    /// # });
    /// ```
    fn collect<C>(self) -> stream::Collect<Self, C>
    where
        C: Default + Extend<Self::Item>,
        Self: Sized,
    {
        futures::StreamExt::collect(self)
    }

    /// Prints every item on its own line on standard output (a sink; giving's `print`).
    /// Completes when the stream does.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// futures::stream::iter(["a", "b"]).print().await; // prints "a" then "b"
    /// # });
    /// ```
    fn print(self) -> Print<Self>
    where
        Self::Item: Display,
        Self: Sized,
    {
        Print::new(self)
    }

    /// Calls `f` with every item (a sink; rx `subscribe`, giving's `subscribe`/`>>`). Completes
    /// when the stream does. Unlike `futures::StreamExt::for_each`, `f` is a plain closure.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let mut total = 0;
    /// futures::stream::iter([1, 2, 3]).for_each(|x| total += x).await;
    /// assert_eq!(total, 6);
    /// # });
    /// ```
    fn for_each<F>(self, f: F) -> ForEach<Self, F>
    where
        F: FnMut(Self::Item),
        Self: Sized,
    {
        ForEach::new(self, f)
    }

    // ----------------------------------------------------------------------------------------
    // Filtering
    // ----------------------------------------------------------------------------------------

    /// The first `n` items, then completes (rx `take`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter(1..).take(3).collect().await;
    /// assert_eq!(v, vec![1, 2, 3]);
    /// # });
    /// ```
    fn take(self, n: usize) -> stream::Take<Self>
    where
        Self: Sized,
    {
        futures::StreamExt::take(self, n)
    }

    /// Drops the first `n` items (rx `skip`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter(1..=4).skip(2).collect().await;
    /// assert_eq!(v, vec![3, 4]);
    /// # });
    /// ```
    fn skip(self, n: usize) -> stream::Skip<Self>
    where
        Self: Sized,
    {
        futures::StreamExt::skip(self, n)
    }

    /// Items while `predicate` holds; completes at the first item for which it does not (that
    /// item is dropped) (rx `take_while`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([1, 2, 5, 1]).take_while(|x| *x < 3).collect().await;
    /// assert_eq!(v, vec![1, 2]);
    /// # });
    /// ```
    fn take_while<F>(self, predicate: F) -> TakeWhile<Self, F>
    where
        F: FnMut(&Self::Item) -> bool,
        Self: Sized,
    {
        TakeWhile::new(self, predicate)
    }

    /// Drops items while `predicate` holds, then passes every item (rx `skip_while`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([1, 2, 5, 1]).skip_while(|x| *x < 3).collect().await;
    /// assert_eq!(v, vec![5, 1]);
    /// # });
    /// ```
    fn skip_while<F>(self, predicate: F) -> SkipWhile<Self, F>
    where
        F: FnMut(&Self::Item) -> bool,
        Self: Sized,
    {
        SkipWhile::new(self, predicate)
    }

    /// Items until `signal` resolves, then completes (rx `take_until`, which takes an
    /// observable: pass `other.next()` or any future).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([1, 2])
    ///     .take_until(futures::future::pending::<()>())
    ///     .collect()
    ///     .await;
    /// assert_eq!(v, vec![1, 2]);
    /// let none: Vec<i32> = futures::stream::iter([1, 2])
    ///     .take_until(futures::future::ready(()))
    ///     .collect()
    ///     .await;
    /// assert!(none.is_empty());
    /// # });
    /// ```
    fn take_until<Fut>(self, signal: Fut) -> stream::TakeUntil<Self, Fut>
    where
        Fut: Future,
        Self: Sized,
    {
        futures::StreamExt::take_until(self, signal)
    }

    /// The items whose zero-based index is in `range` (Python slicing / rx `slice`, without
    /// negative indices): `slice(2..5)`, `slice(3..)`, `slice(..=1)`. Completes as soon as the
    /// end is reached, without polling the stream further.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter(0..10).slice(2..5).collect().await;
    /// assert_eq!(v, vec![2, 3, 4]);
    /// # });
    /// ```
    fn slice<R>(self, range: R) -> Slice<Self>
    where
        R: RangeBounds<usize>,
        Self: Sized,
    {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => Some(e.saturating_add(1)),
            Bound::Excluded(&e) => Some(e),
            Bound::Unbounded => None,
        };
        Slice::new(self, start, end)
    }

    /// Items never seen before, by equality (rx `distinct`). Remembers every distinct item:
    /// memory grows with the number of distinct values.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([1, 2, 1, 3, 2]).distinct().collect().await;
    /// assert_eq!(v, vec![1, 2, 3]);
    /// # });
    /// ```
    fn distinct(self) -> DistinctItems<Self>
    where
        Self::Item: Hash + Eq + Clone,
        Self: Sized,
    {
        Distinct::new(self, <Self::Item as Clone>::clone)
    }

    /// Items whose `key` was never seen before (rx `distinct(key_mapper)`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<&str> = futures::stream::iter(["a", "bb", "c", "dd", "eee"])
    ///     .distinct_by_key(|s| s.len())
    ///     .collect()
    ///     .await;
    /// assert_eq!(v, vec!["a", "bb", "eee"]);
    /// # });
    /// ```
    fn distinct_by_key<K, F>(self, key: F) -> Distinct<Self, F, K>
    where
        F: FnMut(&Self::Item) -> K,
        K: Hash + Eq,
        Self: Sized,
    {
        Distinct::new(self, key)
    }

    /// Drops an item equal to the one just before it (rx `distinct_until_changed`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([1, 1, 2, 2, 1]).distinct_until_changed().collect().await;
    /// assert_eq!(v, vec![1, 2, 1]);
    /// # });
    /// ```
    fn distinct_until_changed(self) -> DistinctUntilChanged<Self>
    where
        Self::Item: PartialEq + Clone,
        Self: Sized,
    {
        DistinctUntilChanged::new(self)
    }

    /// Drops an item whose `key` equals the previous item's key (giving's
    /// `distinct_until_changed(key=)`, rx `distinct_until_changed(key_mapper)`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let words = futures::stream::iter(["a", "b", "cc", "dd", "e"]);
    /// let v: Vec<&str> = words.distinct_until_changed_by_key(|w| w.len()).collect().await;
    /// assert_eq!(v, vec!["a", "cc", "e"]);
    /// # });
    /// ```
    fn distinct_until_changed_by_key<K, F>(self, key: F) -> DistinctUntilChangedBy<Self, F, K>
    where
        F: FnMut(&Self::Item) -> K,
        K: PartialEq,
        Self: Sized,
    {
        DistinctUntilChangedBy::new(self, key)
    }

    /// A check that fails at the first item, whatever it is (giving's `fail`): put it after
    /// the operators that select what must never happen. Run it with `giving::Given::check`
    /// so that `finish()` reports it, or await the `Result`.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let errors = futures::stream::iter([0.5, 2.5, 0.4]).filter(|l| *l > 1.0);
    /// let failed = errors.fail("loss above 1").await.unwrap_err();
    /// assert_eq!(failed.to_string(), "loss above 1: 2.5");
    /// # });
    /// ```
    fn fail(self, message: impl Into<String>) -> Fail<Self>
    where
        Self::Item: std::fmt::Debug,
        Self: Sized,
    {
        Check::new(self, |_| true, message.into(), false)
    }

    /// A check that fails at the first item for which `fails` is true.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let ok = futures::stream::iter([0.5, 0.4]).fail_if(|l: &f64| l.is_nan(), "NaN loss").await;
    /// assert!(ok.is_ok());
    /// # });
    /// ```
    fn fail_if<P>(self, fails: P, message: impl Into<String>) -> Check<Self, P>
    where
        P: FnMut(&Self::Item) -> bool,
        Self::Item: std::fmt::Debug,
        Self: Sized,
    {
        Check::new(self, fails, message.into(), false)
    }

    /// A check that fails at the first `false` (giving's `fail_if_false`), for streams of
    /// conditions (`map(|loss| loss.is_finite())`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let failed = futures::stream::iter([true, false]).fail_if_false("not finite").await;
    /// assert_eq!(failed.unwrap_err().to_string(), "not finite: false");
    /// # });
    /// ```
    fn fail_if_false(self, message: impl Into<String>) -> FailIfFalse<Self>
    where
        Self: Stream<Item = bool> + Sized,
    {
        Check::new(self, |ok| !*ok, message.into(), false)
    }

    /// A check that fails when the stream completes without a single item (giving's
    /// `fail_if_empty`): a run that never gave a rate, a loss that never came.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let failed = futures::stream::empty::<f64>().fail_if_empty("no rate").await;
    /// assert_eq!(failed.unwrap_err().to_string(), "no rate (no item)");
    /// # });
    /// ```
    fn fail_if_empty(self, message: impl Into<String>) -> Fail<Self>
    where
        Self::Item: std::fmt::Debug,
        Self: Sized,
    {
        Check::new(self, |_| false, message.into(), true)
    }

    /// The last `n` items, emitted when the stream completes (giving's `take_last`, rx
    /// `takeLast`); holds at most `n` items meanwhile.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter(1..=5).take_last(2).collect().await;
    /// assert_eq!(v, vec![4, 5]);
    /// # });
    /// ```
    fn take_last(self, n: usize) -> HoldLast<Self>
    where
        Self: Sized,
    {
        HoldLast::take(self, n)
    }

    /// Every item but the last `n` (giving's `skip_last`, rx `skipLast`): each item is
    /// emitted once `n` more have arrived behind it.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter(1..=5).skip_last(2).collect().await;
    /// assert_eq!(v, vec![1, 2, 3]);
    /// # });
    /// ```
    fn skip_last(self, n: usize) -> HoldLast<Self>
    where
        Self: Sized,
    {
        HoldLast::skip(self, n)
    }

    /// Python's `items[start:stop:step]` (giving's `slice(start, stop, step)`): `None` for an
    /// open end, negative indices counted from the end, `step` at least 1. Streams when no
    /// index is negative; a negative index is resolved at completion, so the items are held
    /// until then.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let every_other: Vec<i32> = futures::stream::iter(0..10).slice_by(Some(1), Some(8), 2).collect().await;
    /// assert_eq!(every_other, vec![1, 3, 5, 7]);
    /// let last_three: Vec<i32> = futures::stream::iter(0..10).slice_by(Some(-3), None, 1).collect().await;
    /// assert_eq!(last_three, vec![7, 8, 9]);
    /// # });
    /// ```
    fn slice_by(self, start: Option<isize>, stop: Option<isize>, step: usize) -> SliceBy<Self>
    where
        Self: Sized,
    {
        SliceBy::new(self, start, stop, step)
    }

    /// Every item, sorted, emitted when the stream completes (giving's `sort`); stable. Items
    /// that do not compare (NaN) count as equal to every other.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([3, 1, 2]).sort().collect().await;
    /// assert_eq!(v, vec![1, 2, 3]);
    /// # });
    /// ```
    fn sort(self) -> Sort<Self>
    where
        Self::Item: PartialOrd,
        Self: Sized,
    {
        AtEnd::new(self, |mut items: Vec<Self::Item>| {
            items.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
            items
        })
    }

    /// Every item, sorted by `key`, emitted when the stream completes (giving's
    /// `sort(key=)`); stable.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<&str> = futures::stream::iter(["ccc", "a", "bb"]).sort_by_key(|s| s.len()).collect().await;
    /// assert_eq!(v, vec!["a", "bb", "ccc"]);
    /// # });
    /// ```
    fn sort_by_key<K, F>(self, mut key: F) -> SortByKey<Self>
    where
        F: FnMut(&Self::Item) -> K + Send + 'static,
        K: PartialOrd,
        Self::Item: 'static,
        Self: Sized,
    {
        AtEnd::new(
            self,
            Box::new(move |mut items: Vec<Self::Item>| {
                items.sort_by(|a, b| {
                    key(a)
                        .partial_cmp(&key(b))
                        .unwrap_or(std::cmp::Ordering::Equal)
                });
                items
            }),
        )
    }

    // ----------------------------------------------------------------------------------------
    // Time
    // ----------------------------------------------------------------------------------------

    /// Passes an item, then drops every item for `period`; the next item after that passes and
    /// opens a new window (rx `throttle_first`, giving's `throttle`).
    ///
    /// Unlike `tokio_stream::StreamExt::throttle`, which *delays* items to space them out,
    /// the items inside a window are dropped: the stream never lags behind its source. Reads
    /// the tokio clock (so it follows a paused test clock) but sets no timer: it works on any
    /// executor.
    ///
    /// ```
    /// use std::time::Duration;
    /// use giving_operators::StreamOps;
    /// use tokio::time::{Instant, sleep_until};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let start = Instant::now();
    /// // Items are their own timestamps in milliseconds.
    /// let given = futures::stream::iter([0, 40, 90, 110, 150, 260]).then(|t| async move {
    ///     sleep_until(start + Duration::from_millis(t)).await;
    ///     t
    /// });
    /// let v: Vec<u64> = given.throttle(Duration::from_millis(100)).collect().await;
    /// assert_eq!(v, vec![0, 110, 260]);
    /// # }
    /// ```
    fn throttle(self, period: Duration) -> Throttle<Self>
    where
        Self: Sized,
    {
        Throttle::new(self, period)
    }

    /// [`throttle`](Self::throttle) with a trailing edge: an item passes and opens a window of
    /// `period`; of the items inside the window only the newest is kept, and it is emitted when
    /// the window ends (opening the next one); completion emits the item still held (RxJava's
    /// `throttleLatest` with `emitLast = true`, whose default drops it; reactivex.io's
    /// ThrottleLatest page). So "print
    /// every second" also prints the last value, which `throttle` drops. Uses the tokio clock
    /// and a tokio timer (for the window's end).
    ///
    /// ```
    /// use std::time::Duration;
    /// use giving_operators::StreamOps;
    /// use tokio::time::{Instant, sleep_until};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let start = Instant::now();
    /// let given = futures::stream::iter([0, 40, 90, 110, 150, 260]).then(|t| async move {
    ///     sleep_until(start + Duration::from_millis(t)).await;
    ///     t
    /// });
    /// let v: Vec<u64> = given.throttle_latest(Duration::from_millis(100)).collect().await;
    /// // 0 leads; 90 ends the first window (at 100 ms), 150 the second (at 200 ms); 260 is
    /// // still held when the stream ends.
    /// assert_eq!(v, vec![0, 90, 150, 260]);
    /// # }
    /// ```
    fn throttle_latest(self, period: Duration) -> ThrottleLatest<Self>
    where
        Self: Sized,
    {
        ThrottleLatest::new(self, period)
    }

    /// Emits an item only once `period` has passed without a newer item (rx `debounce`);
    /// completion emits the item still waiting. Uses the tokio clock.
    ///
    /// ```
    /// use std::time::Duration;
    /// use giving_operators::StreamOps;
    /// use tokio::time::{Instant, sleep_until};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let start = Instant::now();
    /// let given = futures::stream::iter([0, 40, 90, 300, 320]).then(|t| async move {
    ///     sleep_until(start + Duration::from_millis(t)).await;
    ///     t
    /// });
    /// let v: Vec<u64> = given.debounce(Duration::from_millis(100)).collect().await;
    /// assert_eq!(v, vec![90, 320]);
    /// # }
    /// ```
    fn debounce(self, period: Duration) -> Debounce<Self>
    where
        Self: Sized,
    {
        Debounce::new(self, period)
    }

    /// Every `period` (counted from the first poll), emits the latest item if one arrived since
    /// the last emission (rx `sample`). Completion emits the latest item not yet emitted. Uses
    /// the tokio clock.
    ///
    /// # Panics
    ///
    /// If `period` is zero.
    ///
    /// ```
    /// use std::time::Duration;
    /// use giving_operators::StreamOps;
    /// use tokio::time::{Instant, sleep_until};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let start = Instant::now();
    /// let given = futures::stream::iter([10, 20, 30, 250, 420]).then(|t| async move {
    ///     sleep_until(start + Duration::from_millis(t)).await;
    ///     t
    /// });
    /// // Ticks at 100 (latest: 30), 200 (nothing new), 300 (250), 400 (nothing); 420 at the end.
    /// let v: Vec<u64> = given.sample(Duration::from_millis(100)).collect().await;
    /// assert_eq!(v, vec![30, 250, 420]);
    /// # }
    /// ```
    fn sample(self, period: Duration) -> Sample<Self>
    where
        Self: Sized,
    {
        Sample::new(self, period)
    }

    /// Groups the items of each `period` (windows back to back from the first poll) into a
    /// `Vec` (rx `buffer_with_time`). An empty window emits nothing; completion flushes the
    /// partial buffer. Uses the tokio clock.
    ///
    /// # Panics
    ///
    /// If `period` is zero.
    ///
    /// ```
    /// use std::time::Duration;
    /// use giving_operators::StreamOps;
    /// use tokio::time::{Instant, sleep_until};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let start = Instant::now();
    /// let given = futures::stream::iter([10, 20, 130, 350]).then(|t| async move {
    ///     sleep_until(start + Duration::from_millis(t)).await;
    ///     t
    /// });
    /// let v: Vec<Vec<u64>> = given.buffer_time(Duration::from_millis(100)).collect().await;
    /// assert_eq!(v, vec![vec![10, 20], vec![130], vec![350]]);
    /// # }
    /// ```
    fn buffer_time(self, period: Duration) -> BufferTime<Self>
    where
        Self: Sized,
    {
        BufferTime::new(self, period, usize::MAX)
    }

    /// Like [`buffer_time`](StreamOps::buffer_time), but a buffer is also emitted as soon as it
    /// holds `max` items, and a new window of `period` starts then (rx
    /// `buffer_with_time_or_count`, with RxJava's restart of the window).
    ///
    /// # Panics
    ///
    /// If `period` or `max` is zero.
    ///
    /// ```
    /// use std::time::Duration;
    /// use giving_operators::StreamOps;
    /// use tokio::time::{Instant, sleep_until};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let start = Instant::now();
    /// let given = futures::stream::iter([10, 20, 30, 40, 150]).then(|t| async move {
    ///     sleep_until(start + Duration::from_millis(t)).await;
    ///     t
    /// });
    /// let v: Vec<Vec<u64>> = given.buffer_time_count(Duration::from_millis(100), 3).collect().await;
    /// // [10, 20, 30] is full at 30 ms; the next window runs from 30 to 130 ms.
    /// assert_eq!(v, vec![vec![10, 20, 30], vec![40], vec![150]]);
    /// # }
    /// ```
    fn buffer_time_count(self, period: Duration, max: usize) -> BufferTime<Self>
    where
        Self: Sized,
    {
        BufferTime::new(self, period, max)
    }

    /// Fails if no item arrives within `period` of the first poll or of the previous item
    /// (rx `timeout`): items come as `Ok(item)`; on a timeout the stream emits one
    /// `Err(Elapsed)` and completes (unlike `tokio_stream`'s `timeout`, which goes on). Uses
    /// the tokio clock.
    ///
    /// ```
    /// use std::time::Duration;
    /// use giving_operators::{Elapsed, StreamOps};
    /// use tokio::time::{Instant, sleep_until};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let start = Instant::now();
    /// let given = futures::stream::iter([50, 120, 400, 450]).then(|t| async move {
    ///     sleep_until(start + Duration::from_millis(t)).await;
    ///     t
    /// });
    /// let v: Vec<Result<u64, Elapsed>> = given.timeout(Duration::from_millis(100)).collect().await;
    /// assert_eq!(v.len(), 3);
    /// assert_eq!(v[..2], [Ok(50), Ok(120)]);
    /// assert!(v[2].is_err());
    /// # }
    /// ```
    fn timeout(self, period: Duration) -> Timeout<Self>
    where
        Self: Sized,
    {
        Timeout::new(self, period)
    }

    // ----------------------------------------------------------------------------------------
    // Windows
    // ----------------------------------------------------------------------------------------

    /// Groups consecutive items into `Vec`s of `count` (rx `buffer_with_count`); completion
    /// flushes the partial last buffer, never an empty one.
    ///
    /// # Panics
    ///
    /// If `count` is zero.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<Vec<i32>> = futures::stream::iter(1..=5).buffer(2).collect().await;
    /// assert_eq!(v, vec![vec![1, 2], vec![3, 4], vec![5]]);
    /// # });
    /// ```
    fn buffer(self, count: usize) -> Buffer<Self>
    where
        Self: Sized,
    {
        Buffer::new(self, count)
    }

    /// Buffers of `count` items, a new one starting every `skip` items (rx
    /// `buffer_with_count(count, skip)`): overlapping when `skip < count`, with gaps when
    /// `skip > count`. Completion flushes every open buffer, oldest first.
    ///
    /// # Panics
    ///
    /// If `count` or `skip` is zero.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<Vec<i32>> = futures::stream::iter(1..=5).buffer_skip(3, 2).collect().await;
    /// assert_eq!(v, vec![vec![1, 2, 3], vec![3, 4, 5], vec![5]]);
    /// # });
    /// ```
    fn buffer_skip(self, count: usize, skip: usize) -> BufferSkip<Self>
    where
        Self::Item: Clone,
        Self: Sized,
    {
        BufferSkip::new(self, count, skip)
    }

    /// Every item with the one before it, as `(previous, current)` (rx `pairwise`); the first
    /// item alone emits nothing.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<(i32, i32)> = futures::stream::iter([1, 2, 4]).pairwise().collect().await;
    /// assert_eq!(v, vec![(1, 2), (2, 4)]);
    /// # });
    /// ```
    fn pairwise(self) -> Pairwise<Self>
    where
        Self::Item: Clone,
        Self: Sized,
    {
        Pairwise::new(self)
    }

    /// At every item, the window of the last (up to) `n` items, oldest first (giving's
    /// `roll(n)`: the first windows are partial). Copies the window at every item, O(n); for a
    /// statistic over a window use the O(1) `*_rolling` reductions instead.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<Vec<i32>> = futures::stream::iter(1..=4).roll(3).collect().await;
    /// assert_eq!(v, vec![vec![1], vec![1, 2], vec![1, 2, 3], vec![2, 3, 4]]);
    /// # });
    /// ```
    fn roll(self, n: usize) -> Roll<Self>
    where
        Self::Item: Clone,
        Self: Sized,
    {
        Roll::new(self, n)
    }

    /// Splits the stream by `key` (rx `group_by`): emits `(key, group)` the first time a key is
    /// seen, where `group` is a stream of every item with that key, in order.
    ///
    /// The outer stream drives the upstream: the groups only receive items while it is polled,
    /// so consume the groups concurrently with it (spawn them, or merge them with
    /// `flatten_unordered`). Group queues are unbounded; a dropped group discards its items;
    /// every group completes when the upstream does.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let mut groups = Vec::new();
    /// futures::stream::iter(1..=6).group_by(|x| x % 3).for_each(|g| groups.push(g)).await;
    /// let mut result = Vec::new();
    /// for (key, group) in groups {
    ///     result.push((key, group.collect::<Vec<i32>>().await));
    /// }
    /// assert_eq!(result, vec![(1, vec![1, 4]), (2, vec![2, 5]), (0, vec![3, 6])]);
    /// # });
    /// ```
    fn group_by<K, F>(self, key: F) -> GroupBy<Self, F, K>
    where
        F: FnMut(&Self::Item) -> K,
        K: Hash + Eq + Clone,
        Self: Sized,
    {
        GroupBy::new(self, key)
    }

    // ----------------------------------------------------------------------------------------
    // Combining
    // ----------------------------------------------------------------------------------------

    /// The items of both streams as they arrive, interleaved fairly (rx `merge`); completes
    /// when both have.
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let mut v: Vec<i32> = futures::stream::iter([1, 2]).merge(futures::stream::iter([10])).collect().await;
    /// v.sort();
    /// assert_eq!(v, vec![1, 2, 10]);
    /// # });
    /// ```
    fn merge<St>(self, other: St) -> stream::Select<Self, St>
    where
        St: Stream<Item = Self::Item>,
        Self: Sized,
    {
        stream::select(self, other)
    }

    /// Pairs the `i`-th items of both streams; completes when either does (rx `zip`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<(i32, char)> = futures::stream::iter([1, 2, 3])
    ///     .zip(futures::stream::iter(['a', 'b']))
    ///     .collect()
    ///     .await;
    /// assert_eq!(v, vec![(1, 'a'), (2, 'b')]);
    /// # });
    /// ```
    fn zip<St>(self, other: St) -> stream::Zip<Self, St>
    where
        St: Stream,
        Self: Sized,
    {
        futures::StreamExt::zip(self, other)
    }

    /// Once both streams have emitted, emits `(latest of self, latest of other)` every time
    /// either emits (rx `combine_latest`). Completes when both have completed, or as soon as
    /// one completes without having emitted anything.
    ///
    /// ```
    /// use std::time::Duration;
    /// use giving_operators::StreamOps;
    /// use tokio::time::{Instant, sleep_until};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let start = Instant::now();
    /// let at = move |t: u64| async move { sleep_until(start + Duration::from_millis(t)).await; t };
    /// let a = futures::stream::iter([0, 20]).then(at);
    /// let b = futures::stream::iter([10, 30]).then(at);
    /// let v: Vec<(u64, u64)> = a.combine_latest(b).collect().await;
    /// assert_eq!(v, vec![(0, 10), (20, 10), (20, 30)]);
    /// # }
    /// ```
    fn combine_latest<St>(self, other: St) -> CombineLatest<Self, St>
    where
        St: Stream,
        Self::Item: Clone,
        St::Item: Clone,
        Self: Sized,
    {
        CombineLatest::new(self, other)
    }

    /// Pairs every item with the latest item of `other` (rx `with_latest_from`); items before
    /// `other`'s first are dropped. Driven by `self`: completes when `self` does.
    ///
    /// ```
    /// use std::time::Duration;
    /// use giving_operators::StreamOps;
    /// use tokio::time::{Instant, sleep_until};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let start = Instant::now();
    /// let at = move |t: u64| async move { sleep_until(start + Duration::from_millis(t)).await; t };
    /// let steps = futures::stream::iter([0, 20, 40, 60]).then(at);
    /// let lr = futures::stream::iter([10, 50]).then(at);
    /// let v: Vec<(u64, u64)> = steps.with_latest_from(lr).collect().await;
    /// assert_eq!(v, vec![(20, 10), (40, 10), (60, 50)]);
    /// # }
    /// ```
    fn with_latest_from<St>(self, other: St) -> WithLatestFrom<Self, St>
    where
        St: Stream,
        St::Item: Clone,
        Self: Sized,
    {
        WithLatestFrom::new(self, other)
    }

    /// Emits `items` first, then the stream (rx `start_with`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([3]).start_with([1, 2]).collect().await;
    /// assert_eq!(v, vec![1, 2, 3]);
    /// # });
    /// ```
    fn start_with<I>(self, items: I) -> stream::Chain<stream::Iter<I::IntoIter>, Self>
    where
        I: IntoIterator<Item = Self::Item>,
        Self: Sized,
    {
        futures::StreamExt::chain(stream::iter(items), self)
    }

    /// The items of this stream, then those of `other` (rx `concat`); same as
    /// [`chain`](StreamOps::chain).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([1]).concat(futures::stream::iter([2])).collect().await;
    /// assert_eq!(v, vec![1, 2]);
    /// # });
    /// ```
    fn concat<St>(self, other: St) -> stream::Chain<Self, St>
    where
        St: Stream<Item = Self::Item>,
        Self: Sized,
    {
        futures::StreamExt::chain(self, other)
    }

    /// The items of this stream, then those of `other` (futures `chain`; rx `concat`).
    ///
    /// ```
    /// use giving_operators::StreamOps;
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([1]).chain(futures::stream::iter([2])).collect().await;
    /// assert_eq!(v, vec![1, 2]);
    /// # });
    /// ```
    fn chain<St>(self, other: St) -> stream::Chain<Self, St>
    where
        St: Stream<Item = Self::Item>,
        Self: Sized,
    {
        futures::StreamExt::chain(self, other)
    }

    /// Shares this stream among several consumers (rx `share`/`publish`): returns a handle to
    /// clone once per consumer. Each handle receives every item produced after it was
    /// created; the consumers drive the upstream together, each with its own unbounded queue.
    /// See [`Shared`].
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let losses = futures::stream::iter([3.0, 1.0, 2.0]).share();
    /// let best = losses.clone().min();
    /// let mean = losses.average();
    /// let (best, mean) = futures::join!(best, mean);
    /// assert_eq!((best, mean), (Some(1.0), Some(2.0)));
    /// # });
    /// ```
    fn share(self) -> Shared<Self>
    where
        Self::Item: Clone,
        Self: Sized,
    {
        Shared::new(self)
    }
}

impl<S: Stream + ?Sized> StreamOps for S {}
