use std::collections::VecDeque;

use super::{Reducer, check_window};

/// The number of items ([`ReduceOps::count`](crate::ReduceOps::count),
/// [`count_scan`](crate::ReduceOps::count_scan)): `0` for an empty stream.
#[derive(Clone, Copy, Debug, Default)]
pub struct Count {
    n: usize,
}

impl Count {
    /// A count at zero.
    pub fn new() -> Self {
        Self { n: 0 }
    }
}

impl<T> Reducer<T> for Count {
    type Value = usize;
    type Output = usize;

    #[inline]
    fn push(&mut self, _item: T) {
        self.n += 1;
    }

    #[inline]
    fn value(&mut self) -> Option<usize> {
        Some(self.n)
    }

    fn finish(self) -> usize {
        self.n
    }

    fn output_value(output: usize) -> Option<usize> {
        Some(output)
    }
}

/// The number of items in the rolling window of the last `n` items
/// ([`ReduceOps::count_rolling`](crate::ReduceOps::count_rolling)): `1, 2, …, n, n, n, …`.
#[derive(Clone, Copy, Debug)]
pub struct RollingCount {
    seen: usize,
    n: usize,
}

impl RollingCount {
    /// A count over a window of the last `n` items.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn new(n: usize) -> Self {
        check_window(n, "count_rolling");
        Self { seen: 0, n }
    }
}

impl<T> Reducer<T> for RollingCount {
    type Value = usize;
    type Output = usize;

    #[inline]
    fn push(&mut self, _item: T) {
        self.seen = self.seen.saturating_add(1);
    }

    #[inline]
    fn value(&mut self) -> Option<usize> {
        Some(self.seen.min(self.n))
    }

    fn finish(self) -> usize {
        self.seen.min(self.n)
    }

    fn output_value(output: usize) -> Option<usize> {
        Some(output)
    }
}

/// Reduction with a binary function and no seed, as ReactiveX `reduce`
/// ([`ReduceOps::reduce`](crate::ReduceOps::reduce),
/// [`reduce_scan`](crate::ReduceOps::reduce_scan)): the first item is the initial
/// accumulator; `None` for an empty stream.
#[derive(Clone, Debug)]
pub struct ReduceFn<T, F> {
    acc: Option<T>,
    f: F,
}

impl<T, F> ReduceFn<T, F> {
    /// A reduction with `f(accumulator, item) -> accumulator`.
    pub fn new(f: F) -> Self {
        Self { acc: None, f }
    }
}

impl<T: Clone, F: FnMut(T, T) -> T> Reducer<T> for ReduceFn<T, F> {
    type Value = T;
    type Output = Option<T>;

    #[inline]
    fn push(&mut self, item: T) {
        self.acc = Some(match self.acc.take() {
            Some(acc) => (self.f)(acc, item),
            None => item,
        });
    }

    #[inline]
    fn value(&mut self) -> Option<T> {
        self.acc.clone()
    }

    fn finish(self) -> Option<T> {
        self.acc
    }

    fn output_value(output: Option<T>) -> Option<T> {
        output
    }
}

/// [`ReduceFn`] over the last `n` items
/// ([`ReduceOps::reduce_rolling`](crate::ReduceOps::reduce_rolling)): the window is reduced
/// again from its oldest item at every item, O(n) per item (an arbitrary function cannot be
/// "un-applied").
#[derive(Clone, Debug)]
pub struct RollingReduce<T, F> {
    window: VecDeque<T>,
    n: usize,
    f: F,
}

impl<T, F> RollingReduce<T, F> {
    /// A rolling reduction with `f` over the last `n` items.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn new(n: usize, f: F) -> Self {
        check_window(n, "reduce_rolling");
        Self {
            window: VecDeque::with_capacity(n),
            n,
            f,
        }
    }

    fn current(&mut self) -> Option<T>
    where
        T: Clone,
        F: FnMut(T, T) -> T,
    {
        let mut items = self.window.iter().cloned();
        let first = items.next()?;
        Some(items.fold(first, &mut self.f))
    }
}

impl<T: Clone, F: FnMut(T, T) -> T> Reducer<T> for RollingReduce<T, F> {
    type Value = T;
    type Output = Option<T>;

    fn push(&mut self, item: T) {
        if self.window.len() == self.n {
            self.window.pop_front();
        }
        self.window.push_back(item);
    }

    fn value(&mut self) -> Option<T> {
        self.current()
    }

    fn finish(mut self) -> Option<T> {
        self.current()
    }

    fn output_value(output: Option<T>) -> Option<T> {
        output
    }
}

/// Reduction from a seed ([`ReduceOps::fold`](crate::ReduceOps::fold) for the final value,
/// [`scan`](crate::ReduceOps::scan) for the running one, as ReactiveX `scan(seed, f)`). An empty
/// stream folds to the seed.
#[derive(Clone, Debug)]
pub struct Fold<A, F> {
    acc: Option<A>,
    f: F,
}

impl<A, F> Fold<A, F> {
    /// A fold from `seed` with `f(accumulator, item) -> accumulator`.
    pub fn new(seed: A, f: F) -> Self {
        Self { acc: Some(seed), f }
    }
}

impl<T, A: Clone, F: FnMut(A, T) -> A> Reducer<T> for Fold<A, F> {
    type Value = A;
    type Output = A;

    #[inline]
    fn push(&mut self, item: T) {
        // `acc` is only `None` while `f` runs; if `f` panicked the reducer is gone anyway.
        if let Some(acc) = self.acc.take() {
            self.acc = Some((self.f)(acc, item));
        }
    }

    #[inline]
    fn value(&mut self) -> Option<A> {
        self.acc.clone()
    }

    fn finish(self) -> A {
        self.acc
            .expect("fold accumulator lost by a panicking closure")
    }

    fn output_value(output: A) -> Option<A> {
        Some(output)
    }
}

/// The first item ([`ReduceOps::first`](crate::ReduceOps::first)); completes as soon as it
/// arrives, without waiting for the stream to complete. `None` for an empty stream.
#[derive(Clone, Debug)]
pub struct First<T> {
    item: Option<T>,
}

impl<T> First<T> {
    /// Waiting for the first item.
    pub fn new() -> Self {
        Self { item: None }
    }
}

impl<T> Default for First<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone> Reducer<T> for First<T> {
    type Value = T;
    type Output = Option<T>;

    fn push(&mut self, item: T) {
        if self.item.is_none() {
            self.item = Some(item);
        }
    }

    fn value(&mut self) -> Option<T> {
        self.item.clone()
    }

    fn finish(self) -> Option<T> {
        self.item
    }

    fn output_value(output: Option<T>) -> Option<T> {
        output
    }

    fn is_done(&self) -> bool {
        self.item.is_some()
    }
}

/// The last item ([`ReduceOps::last`](crate::ReduceOps::last)), at completion. `None` for an
/// empty stream.
#[derive(Clone, Debug)]
pub struct Last<T> {
    item: Option<T>,
}

impl<T> Last<T> {
    /// No item yet.
    pub fn new() -> Self {
        Self { item: None }
    }
}

impl<T> Default for Last<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone> Reducer<T> for Last<T> {
    type Value = T;
    type Output = Option<T>;

    #[inline]
    fn push(&mut self, item: T) {
        self.item = Some(item);
    }

    fn value(&mut self) -> Option<T> {
        self.item.clone()
    }

    fn finish(self) -> Option<T> {
        self.item
    }

    fn output_value(output: Option<T>) -> Option<T> {
        output
    }
}

/// The item at a zero-based index ([`ReduceOps::element_at`](crate::ReduceOps::element_at));
/// completes as soon as it arrives. `None` if the stream is shorter.
#[derive(Clone, Debug)]
pub struct ElementAt<T> {
    remaining: usize,
    item: Option<T>,
}

impl<T> ElementAt<T> {
    /// Waiting for the item at `index`.
    pub fn new(index: usize) -> Self {
        Self {
            remaining: index,
            item: None,
        }
    }
}

impl<T: Clone> Reducer<T> for ElementAt<T> {
    type Value = T;
    type Output = Option<T>;

    fn push(&mut self, item: T) {
        if self.item.is_some() {
            return;
        }
        if self.remaining == 0 {
            self.item = Some(item);
        } else {
            self.remaining -= 1;
        }
    }

    fn value(&mut self) -> Option<T> {
        self.item.clone()
    }

    fn finish(self) -> Option<T> {
        self.item
    }

    fn output_value(output: Option<T>) -> Option<T> {
        output
    }

    fn is_done(&self) -> bool {
        self.item.is_some()
    }
}
