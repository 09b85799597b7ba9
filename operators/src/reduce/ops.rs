use std::ops::Add;

use futures::Stream;

use super::{
    Average, AverageVariance, ByKey, Count, ElementAt, First, Fold, Last, Max, Min, Natural,
    Numeric, Reduce, ReduceFn, Reducer, RollingAverage, RollingAverageVariance, RollingCount,
    RollingMax, RollingMin, RollingReduce, RollingSum, RollingTop, RollingVariance, Running,
    Spread, Sum, Top, Variance,
};
use crate::adapters::Filter;

/// The reductions of `giving`, available on every [`Stream`]: min, max, sum, count, average,
/// variance, average_and_variance, reduce, fold, first, last, element_at, top, bottom.
///
/// Names and semantics follow Python `giving` and ReactiveX; see `docs/operators.md`. Every
/// reduction comes in up to three forms: `min()` gives the final value at completion (a
/// [`Reduce`], which is both a future of the value and a stream of at most one item),
/// `min_scan()` the running value after every item (a [`Running`]), `min_rolling(n)` the value
/// over the last `n` items, after every item. The other operators are
/// [`StreamOps`](crate::StreamOps)'s; `giving::prelude` brings both traits.
pub trait ReduceOps: Stream {
    /// The final value of a custom [`Reducer`] at completion.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// use giving_operators::reduce::Count;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter([7, 8]).reduce_with(Count::new()).await, 2);
    /// # });
    /// ```
    fn reduce_with<R>(self, reducer: R) -> Reduce<Self, R>
    where
        R: Reducer<Self::Item>,
        Self: Sized,
    {
        Reduce::new(self, reducer)
    }

    /// The value of a custom [`Reducer`] after every item (running, or rolling if the reducer
    /// keeps a window).
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// use giving_operators::reduce::Count;
    /// # futures::executor::block_on(async {
    /// let v: Vec<usize> = futures::stream::iter([7, 8]).running_with(Count::new()).collect().await;
    /// assert_eq!(v, vec![1, 2]);
    /// # });
    /// ```
    fn running_with<R>(self, reducer: R) -> Running<Self, R>
    where
        R: Reducer<Self::Item>,
        Self: Sized,
    {
        Running::new(self, reducer)
    }

    /// The smallest item, at completion (rx / giving `min`): `None` for an empty stream. The
    /// first of equal items wins; NaN (any item not comparable with itself) is ignored, so an
    /// all-NaN stream gives `None`. Await it, or use it as a stream of at most one item.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter([3.0, f64::NAN, 1.0, 2.0]).min().await, Some(1.0));
    /// assert_eq!(futures::stream::iter(Vec::<i32>::new()).min().await, None);
    /// let doubled: Vec<i32> = futures::stream::iter([3, 1]).min().map(|m| m * 2).collect().await;
    /// assert_eq!(doubled, vec![2]);
    /// # });
    /// ```
    fn min(self) -> Reduce<Self, Min<Self::Item>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Reduce::new(self, Min::new(Natural))
    }

    /// The running minimum, after every item (giving's `min(scan=True)`). Emits nothing until
    /// a comparable (non-NaN) item has arrived.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([3, 4, 1, 2]).min_scan().collect().await;
    /// assert_eq!(v, vec![3, 3, 1, 1]);
    /// # });
    /// ```
    fn min_scan(self) -> Running<Self, Min<Self::Item>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Running::new(self, Min::new(Natural))
    }

    /// The minimum of the last `n` items, after every item (giving's `min(scan=n)`); O(1)
    /// amortised per item (monotonic deque). NaN items count in the window but are never the
    /// minimum; a window of only NaN emits nothing.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([3, 1, 4, 5, 2]).min_rolling(2).collect().await;
    /// assert_eq!(v, vec![3, 1, 1, 4, 2]);
    /// # });
    /// ```
    fn min_rolling(self, n: usize) -> Running<Self, RollingMin<Self::Item>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Running::new(self, RollingMin::new(n, Natural))
    }

    /// The item with the smallest `key`, at completion (giving's `min(key=...)`); same rules as
    /// [`min`](ReduceOps::min) (first wins on ties, NaN keys ignored).
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// let m = futures::stream::iter(["ccc", "a", "b"]).min_by_key(|s| s.len()).await;
    /// assert_eq!(m, Some("a"));
    /// # });
    /// ```
    fn min_by_key<K, F>(self, key: F) -> Reduce<Self, Min<Self::Item, ByKey<F>>>
    where
        F: FnMut(&Self::Item) -> K,
        K: PartialOrd,
        Self::Item: Clone,
        Self: Sized,
    {
        Reduce::new(self, Min::new(ByKey(key)))
    }

    /// The largest item, at completion (rx / giving `max`): `None` for an empty stream. The
    /// first of equal items wins; NaN is ignored.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter([3.0, f64::NAN, 1.0]).max().await, Some(3.0));
    /// # });
    /// ```
    fn max(self) -> Reduce<Self, Max<Self::Item>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Reduce::new(self, Max::new(Natural))
    }

    /// The running maximum, after every item (giving's `max(scan=True)`).
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([3, 1, 4, 2]).max_scan().collect().await;
    /// assert_eq!(v, vec![3, 3, 4, 4]);
    /// # });
    /// ```
    fn max_scan(self) -> Running<Self, Max<Self::Item>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Running::new(self, Max::new(Natural))
    }

    /// The maximum of the last `n` items, after every item (giving's `max(scan=n)`); O(1)
    /// amortised per item.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([3, 1, 4, 5, 2]).max_rolling(2).collect().await;
    /// assert_eq!(v, vec![3, 3, 4, 5, 5]);
    /// # });
    /// ```
    fn max_rolling(self, n: usize) -> Running<Self, RollingMax<Self::Item>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Running::new(self, RollingMax::new(n, Natural))
    }

    /// The item with the largest `key`, at completion (giving's `max(key=...)`).
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// let m = futures::stream::iter([("a", 2), ("b", 9), ("c", 9)]).max_by_key(|p| p.1).await;
    /// assert_eq!(m, Some(("b", 9)));
    /// # });
    /// ```
    fn max_by_key<K, F>(self, key: F) -> Reduce<Self, Max<Self::Item, ByKey<F>>>
    where
        F: FnMut(&Self::Item) -> K,
        K: PartialOrd,
        Self::Item: Clone,
        Self: Sized,
    {
        Reduce::new(self, Max::new(ByKey(key)))
    }

    /// The sum of the items, at completion (rx / giving `sum`): `None` for an empty stream
    /// (use `.await.unwrap_or(0)` for rx's `0`). Floats follow IEEE: a NaN makes it NaN.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter(1..=4).sum().await, Some(10));
    /// assert_eq!(futures::stream::iter(Vec::<f64>::new()).sum().await, None);
    /// # });
    /// ```
    fn sum(self) -> Reduce<Self, Sum<Self::Item>>
    where
        Self::Item: Add<Output = Self::Item> + Clone,
        Self: Sized,
    {
        Reduce::new(self, Sum::new())
    }

    /// The running sum, after every item (giving's `sum(scan=True)`).
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter(1..=4).sum_scan().collect().await;
    /// assert_eq!(v, vec![1, 3, 6, 10]);
    /// # });
    /// ```
    fn sum_scan(self) -> Running<Self, Sum<Self::Item>>
    where
        Self::Item: Add<Output = Self::Item> + Clone,
        Self: Sized,
    {
        Running::new(self, Sum::new())
    }

    /// The sum of the last `n` items, after every item (giving's `sum(scan=n)`); O(1) per item,
    /// drift-free for floats, and a NaN/∞ only affects the windows that contain it.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter(1..=5).sum_rolling(3).collect().await;
    /// assert_eq!(v, vec![1, 3, 6, 9, 12]);
    /// # });
    /// ```
    fn sum_rolling(self, n: usize) -> Running<Self, RollingSum<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Running::new(self, RollingSum::new(n))
    }

    /// The number of items, at completion (rx / giving `count`): `0` for an empty stream.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter("abc".chars()).count().await, 3);
    /// # });
    /// ```
    fn count(self) -> Reduce<Self, Count>
    where
        Self: Sized,
    {
        Reduce::new(self, Count::new())
    }

    /// The running count `1, 2, 3, …`, after every item (giving's `count(scan=True)`).
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<usize> = futures::stream::iter("abc".chars()).count_scan().collect().await;
    /// assert_eq!(v, vec![1, 2, 3]);
    /// # });
    /// ```
    fn count_scan(self) -> Running<Self, Count>
    where
        Self: Sized,
    {
        Running::new(self, Count::new())
    }

    /// The number of items in the window of the last `n`, after every item:
    /// `1, 2, …, n, n, …` (giving's `count(scan=n)`).
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<usize> = futures::stream::iter(0..4).count_rolling(2).collect().await;
    /// assert_eq!(v, vec![1, 2, 2, 2]);
    /// # });
    /// ```
    fn count_rolling(self, n: usize) -> Running<Self, RollingCount>
    where
        Self: Sized,
    {
        Running::new(self, RollingCount::new(n))
    }

    /// The arithmetic mean as `f64`, at completion (rx / giving `average`): `None` for an empty
    /// stream. NaN propagates (IEEE).
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter([1, 2, 3, 6]).average().await, Some(3.0));
    /// assert!(futures::stream::iter([1.0, f64::NAN]).average().await.unwrap().is_nan());
    /// # });
    /// ```
    fn average(self) -> Reduce<Self, Average<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Reduce::new(self, Average::new())
    }

    /// The running mean, after every item (giving's `average(scan=True)`).
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<f64> = futures::stream::iter([2, 4, 9]).average_scan().collect().await;
    /// assert_eq!(v, vec![2.0, 3.0, 5.0]);
    /// # });
    /// ```
    fn average_scan(self) -> Running<Self, Average<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Running::new(self, Average::new())
    }

    /// The mean of the last `n` items, after every item (giving's `average(scan=n)`): O(1) per
    /// item (running sum over a ring buffer, recomputed every `n` items so float drift never
    /// accumulates). A NaN (or ∞) affects exactly the windows that contain it.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<f64> = futures::stream::iter([2, 4, 9, 1]).average_rolling(2).collect().await;
    /// assert_eq!(v, vec![2.0, 3.0, 6.5, 5.0]);
    /// # });
    /// ```
    fn average_rolling(self, n: usize) -> Running<Self, RollingAverage<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Running::new(self, RollingAverage::new(n))
    }

    /// The sample variance (divided by `n − 1`, as Python's `statistics.variance`), at
    /// completion (giving's `variance`): `None` for fewer than two items. Welford's algorithm;
    /// a NaN or ∞ gives NaN. [`pvariance`](ReduceOps::pvariance) divides by `n`.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter([1.0, 3.0]).variance().await, Some(2.0));
    /// assert_eq!(futures::stream::iter([1.0]).variance().await, None);
    /// # });
    /// ```
    fn variance(self) -> Reduce<Self, Variance<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Reduce::new(self, Variance::new())
    }

    /// The running sample variance, after every item from the second on (giving's
    /// `variance(scan=True)`).
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<f64> = futures::stream::iter([1, 3, 5]).variance_scan().collect().await;
    /// assert_eq!(v, vec![2.0, 4.0]);
    /// # });
    /// ```
    fn variance_scan(self) -> Running<Self, Variance<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Running::new(self, Variance::new())
    }

    /// The sample variance of the last `n` items, after every item once the window holds two
    /// (giving's `variance(scan=n)`): O(1) per item (Welford with removal, recomputed every `n`
    /// items); NaN while a NaN or ∞ is in the window.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<f64> = futures::stream::iter([1, 3, 3, 3]).variance_rolling(2).collect().await;
    /// assert_eq!(v, vec![2.0, 0.0, 0.0]);
    /// # });
    /// ```
    fn variance_rolling(self, n: usize) -> Running<Self, RollingVariance<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Running::new(self, RollingVariance::new(n))
    }

    /// The population variance (divided by `n`, as Python's `statistics.pvariance`), at
    /// completion: `None` for an empty stream, `0.0` for one item. Not in Python giving, whose
    /// `variance` is the sample one.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter([1.0, 3.0]).pvariance().await, Some(1.0));
    /// assert_eq!(futures::stream::iter([1.0]).pvariance().await, Some(0.0));
    /// # });
    /// ```
    fn pvariance(self) -> Reduce<Self, Variance<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Reduce::new(self, Variance::population())
    }

    /// The running population variance, after every item.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<f64> = futures::stream::iter([1, 3, 5]).pvariance_scan().collect().await;
    /// assert_eq!(v[..2], [0.0, 1.0]);
    /// assert!((v[2] - 8.0 / 3.0).abs() < 1e-12);
    /// # });
    /// ```
    fn pvariance_scan(self) -> Running<Self, Variance<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Running::new(self, Variance::population())
    }

    /// The population variance of the last `n` items, after every item; O(1) per item.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<f64> = futures::stream::iter([1, 3, 3, 3]).pvariance_rolling(2).collect().await;
    /// assert_eq!(v, vec![0.0, 1.0, 0.0, 0.0]);
    /// # });
    /// ```
    fn pvariance_rolling(self, n: usize) -> Running<Self, RollingVariance<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Running::new(self, RollingVariance::of(n, Spread::Population))
    }

    /// `(mean, sample variance)`, at completion (giving's `average_and_variance`): Welford's
    /// algorithm, `None` for fewer than two items.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter([1, 3]).average_and_variance().await, Some((2.0, 2.0)));
    /// # });
    /// ```
    fn average_and_variance(self) -> Reduce<Self, AverageVariance<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Reduce::new(self, AverageVariance::new())
    }

    /// The running `(mean, sample variance)`, after every item from the second on.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<(f64, f64)> = futures::stream::iter([1, 3, 5]).average_and_variance_scan().collect().await;
    /// assert_eq!(v, vec![(2.0, 2.0), (3.0, 4.0)]);
    /// # });
    /// ```
    fn average_and_variance_scan(self) -> Running<Self, AverageVariance<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Running::new(self, AverageVariance::new())
    }

    /// `(mean, sample variance)` of the last `n` items, after every item once the window
    /// holds two; O(1) per item.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<(f64, f64)> = futures::stream::iter([1, 3, 3])
    ///     .average_and_variance_rolling(2)
    ///     .collect()
    ///     .await;
    /// assert_eq!(v, vec![(2.0, 2.0), (3.0, 0.0)]);
    /// # });
    /// ```
    fn average_and_variance_rolling(
        self,
        n: usize,
    ) -> Running<Self, RollingAverageVariance<Self::Item>>
    where
        Self::Item: Numeric,
        Self: Sized,
    {
        Running::new(self, RollingAverageVariance::new(n))
    }

    /// Reduces the items with `f(accumulator, item)`, the first item being the initial
    /// accumulator; the final value at completion (rx `reduce` without seed): `None` for an
    /// empty stream.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter(1..=4).reduce(|a, b| a * b).await, Some(24));
    /// # });
    /// ```
    fn reduce<F>(self, f: F) -> Reduce<Self, ReduceFn<Self::Item, F>>
    where
        F: FnMut(Self::Item, Self::Item) -> Self::Item,
        Self::Item: Clone,
        Self: Sized,
    {
        Reduce::new(self, ReduceFn::new(f))
    }

    /// The running value of [`reduce`](ReduceOps::reduce), after every item (giving's
    /// `reduce(f, scan=True)`; the first item is emitted as is).
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter(1..=4).reduce_scan(|a, b| a * b).collect().await;
    /// assert_eq!(v, vec![1, 2, 6, 24]);
    /// # });
    /// ```
    fn reduce_scan<F>(self, f: F) -> Running<Self, ReduceFn<Self::Item, F>>
    where
        F: FnMut(Self::Item, Self::Item) -> Self::Item,
        Self::Item: Clone,
        Self: Sized,
    {
        Running::new(self, ReduceFn::new(f))
    }

    /// [`reduce`](ReduceOps::reduce) over the last `n` items, after every item (giving's
    /// `reduce(f, scan=n)`): O(n) per item, since an arbitrary `f` cannot be undone.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter(1..=4).reduce_rolling(2, |a, b| a * b).collect().await;
    /// assert_eq!(v, vec![1, 2, 6, 12]);
    /// # });
    /// ```
    fn reduce_rolling<F>(self, n: usize, f: F) -> Running<Self, RollingReduce<Self::Item, F>>
    where
        F: FnMut(Self::Item, Self::Item) -> Self::Item,
        Self::Item: Clone,
        Self: Sized,
    {
        Running::new(self, RollingReduce::new(n, f))
    }

    /// Reduces the items into `seed` with `f(accumulator, item)`; the final accumulator at
    /// completion (rx `reduce(f, seed)`): the seed for an empty stream.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// let s = futures::stream::iter(["a", "b"]).fold(String::new(), |acc, x| acc + x).await;
    /// assert_eq!(s, "ab");
    /// # });
    /// ```
    fn fold<A, F>(self, seed: A, f: F) -> Reduce<Self, Fold<A, F>>
    where
        F: FnMut(A, Self::Item) -> A,
        A: Clone,
        Self: Sized,
    {
        Reduce::new(self, Fold::new(seed, f))
    }

    /// The running accumulator of a fold from `seed`, after every item (rx `scan(f, seed)`);
    /// the seed itself is not emitted.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<i32> = futures::stream::iter([1, 2, 3]).scan(100, |acc, x| acc - x).collect().await;
    /// assert_eq!(v, vec![99, 97, 94]);
    /// # });
    /// ```
    fn scan<A, F>(self, seed: A, f: F) -> Running<Self, Fold<A, F>>
    where
        F: FnMut(A, Self::Item) -> A,
        A: Clone,
        Self: Sized,
    {
        Running::new(self, Fold::new(seed, f))
    }

    /// The first item (rx `first`); completes as soon as it arrives, without waiting for the
    /// stream to end. `None` for an empty stream.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter(5..).first().await, Some(5)); // an endless stream
    /// # });
    /// ```
    fn first(self) -> Reduce<Self, First<Self::Item>>
    where
        Self::Item: Clone,
        Self: Sized,
    {
        Reduce::new(self, First::new())
    }

    /// The last item, at completion (rx `last`): `None` for an empty stream.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter(1..=3).last().await, Some(3));
    /// # });
    /// ```
    fn last(self) -> Reduce<Self, Last<Self::Item>>
    where
        Self::Item: Clone,
        Self: Sized,
    {
        Reduce::new(self, Last::new())
    }

    /// The item at zero-based `index` (rx `element_at`); completes as soon as it arrives.
    /// `None` if the stream is shorter (rx signals an error instead).
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter(10..).element_at(2).await, Some(12));
    /// assert_eq!(futures::stream::iter(0..2).element_at(5).await, None);
    /// # });
    /// ```
    fn element_at(self, index: usize) -> Reduce<Self, ElementAt<Self::Item>>
    where
        Self::Item: Clone,
        Self: Sized,
    {
        Reduce::new(self, ElementAt::new(index))
    }

    /// The `n` items with the largest `key`, largest first, at completion (giving's
    /// `top(n, key=)`); among equal keys the earlier ranks first; NaN keys are ignored.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// let words = futures::stream::iter(["a", "ccc", "bb", "dd"]);
    /// assert_eq!(words.top_by_key(2, |w| w.len()).await, vec!["ccc", "bb"]);
    /// # });
    /// ```
    fn top_by_key<K, F>(self, n: usize, key: F) -> Reduce<Self, Top<Self::Item, ByKey<F>, true>>
    where
        F: FnMut(&Self::Item) -> K,
        K: PartialOrd,
        Self::Item: Clone,
        Self: Sized,
    {
        Reduce::new(self, Top::new(n, ByKey(key)))
    }

    /// The `n` items with the smallest `key`, smallest first, at completion (giving's
    /// `bottom(n, key=)`); same rules as [`top_by_key`](ReduceOps::top_by_key).
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// let words = futures::stream::iter(["ccc", "a", "bb", "d"]);
    /// assert_eq!(words.bottom_by_key(2, |w| w.len()).await, vec!["a", "d"]);
    /// # });
    /// ```
    fn bottom_by_key<K, F>(self, n: usize, key: F) -> Reduce<Self, Top<Self::Item, ByKey<F>, false>>
    where
        F: FnMut(&Self::Item) -> K,
        K: PartialOrd,
        Self::Item: Clone,
        Self: Sized,
    {
        Reduce::new(self, Top::new(n, ByKey(key)))
    }

    /// How many items meet `predicate`, at completion (giving's `count(predicate=)`).
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter(1..=10).count_where(|x| x % 3 == 0).await, 3);
    /// # });
    /// ```
    fn count_where<P>(self, predicate: P) -> Reduce<Filter<Self, P>, Count>
    where
        P: FnMut(&Self::Item) -> bool,
        Self: Sized,
    {
        Reduce::new(Filter::new(self, predicate), Count::new())
    }

    /// The first item that meets `predicate` (giving's `first(predicate=)`); completes at once
    /// when found, `None` if none does.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter(1..=10).first_where(|x| *x > 4).await, Some(5));
    /// # });
    /// ```
    fn first_where<P>(self, predicate: P) -> Reduce<Filter<Self, P>, First<Self::Item>>
    where
        P: FnMut(&Self::Item) -> bool,
        Self::Item: Clone,
        Self: Sized,
    {
        Reduce::new(Filter::new(self, predicate), First::new())
    }

    /// The last item that meets `predicate`, at completion (giving's `last(predicate=)`).
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter(1..=10).last_where(|x| x % 4 == 0).await, Some(8));
    /// # });
    /// ```
    fn last_where<P>(self, predicate: P) -> Reduce<Filter<Self, P>, Last<Self::Item>>
    where
        P: FnMut(&Self::Item) -> bool,
        Self::Item: Clone,
        Self: Sized,
    {
        Reduce::new(Filter::new(self, predicate), Last::new())
    }

    /// The `n` largest items, largest first, at completion (giving's `top`): an empty `Vec` for
    /// an empty stream. Among equal items the earlier ranks first; NaN is ignored.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter([3, 9, 1, 7]).top(2).await, vec![9, 7]);
    /// # });
    /// ```
    fn top(self, n: usize) -> Reduce<Self, Top<Self::Item, Natural, true>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Reduce::new(self, Top::new(n, Natural))
    }

    /// The running `n` largest items, after every item. O(n) per item.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<Vec<i32>> = futures::stream::iter([3, 9, 1]).top_scan(2).collect().await;
    /// assert_eq!(v, vec![vec![3], vec![9, 3], vec![9, 3]]);
    /// # });
    /// ```
    fn top_scan(self, n: usize) -> Running<Self, Top<Self::Item, Natural, true>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Running::new(self, Top::new(n, Natural))
    }

    /// The `n` largest of the last `window` items, after every item. O(window · n) per item.
    ///
    /// # Panics
    ///
    /// If `window` is zero.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<Vec<i32>> = futures::stream::iter([3, 9, 1, 2]).top_rolling(1, 2).collect().await;
    /// assert_eq!(v, vec![vec![3], vec![9], vec![9], vec![2]]);
    /// # });
    /// ```
    fn top_rolling(
        self,
        n: usize,
        window: usize,
    ) -> Running<Self, RollingTop<Self::Item, Natural, true>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Running::new(self, RollingTop::new(n, window, Natural))
    }

    /// The `n` smallest items, smallest first, at completion (giving's `bottom`): an empty
    /// `Vec` for an empty stream. Among equal items the earlier ranks first; NaN is ignored.
    ///
    /// ```
    /// use giving_operators::ReduceOps;
    /// # futures::executor::block_on(async {
    /// assert_eq!(futures::stream::iter([3, 9, 1, 7]).bottom(2).await, vec![1, 3]);
    /// # });
    /// ```
    fn bottom(self, n: usize) -> Reduce<Self, Top<Self::Item, Natural, false>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Reduce::new(self, Top::new(n, Natural))
    }

    /// The running `n` smallest items, after every item. O(n) per item.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<Vec<i32>> = futures::stream::iter([3, 9, 1]).bottom_scan(2).collect().await;
    /// assert_eq!(v, vec![vec![3], vec![3, 9], vec![1, 3]]);
    /// # });
    /// ```
    fn bottom_scan(self, n: usize) -> Running<Self, Top<Self::Item, Natural, false>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Running::new(self, Top::new(n, Natural))
    }

    /// The `n` smallest of the last `window` items, after every item. O(window · n) per item.
    ///
    /// # Panics
    ///
    /// If `window` is zero.
    ///
    /// ```
    /// use giving_operators::{ReduceOps, StreamOps};
    /// # futures::executor::block_on(async {
    /// let v: Vec<Vec<i32>> = futures::stream::iter([3, 9, 1, 2]).bottom_rolling(1, 2).collect().await;
    /// assert_eq!(v, vec![vec![3], vec![3], vec![1], vec![1]]);
    /// # });
    /// ```
    fn bottom_rolling(
        self,
        n: usize,
        window: usize,
    ) -> Running<Self, RollingTop<Self::Item, Natural, false>>
    where
        Self::Item: PartialOrd + Clone,
        Self: Sized,
    {
        Running::new(self, RollingTop::new(n, window, Natural))
    }
}

impl<S: Stream + ?Sized> ReduceOps for S {}
