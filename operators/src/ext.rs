use std::fmt::Display;

use futures::Stream;
use futures::StreamExt as _;
use futures::stream;

use crate::filter::Filter;
use crate::print::Print;

/// The operator vocabulary of `giving`, available on every [`Stream`].
///
/// Names and semantics follow Python `giving` and ReactiveX; see `docs/operators.md` for the
/// full table and the places where Rust made us differ.
pub trait StreamOps: Stream {
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
}

impl<S: Stream + ?Sized> StreamOps for S {}
