use std::cmp::Ordering;
use std::collections::VecDeque;

use super::{Reducer, check_window};

/// How the min/max/top/bottom reducers order items.
pub trait Compare<T> {
    /// Compares `a` with `b`; `None` when they are not comparable (NaN).
    fn compare(&mut self, a: &T, b: &T) -> Option<Ordering>;

    /// `false` for an item not comparable with itself (NaN): such items are ignored.
    #[inline]
    fn is_comparable(&mut self, a: &T) -> bool {
        self.compare(a, a).is_some()
    }
}

/// The natural order, [`PartialOrd`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Natural;

impl<T: PartialOrd> Compare<T> for Natural {
    #[inline]
    fn compare(&mut self, a: &T, b: &T) -> Option<Ordering> {
        a.partial_cmp(b)
    }
}

/// The order of a key computed from each item (`min_by_key`, `max_by_key`).
#[derive(Clone, Copy, Debug)]
pub struct ByKey<F>(pub F);

impl<T, K: PartialOrd, F: FnMut(&T) -> K> Compare<T> for ByKey<F> {
    #[inline]
    fn compare(&mut self, a: &T, b: &T) -> Option<Ordering> {
        (self.0)(a).partial_cmp(&(self.0)(b))
    }
}

/// `true` when `a` ranks strictly before `b`: smaller for a min (`MAX = false`), larger for a
/// max (`MAX = true`).
#[inline]
pub(crate) fn better<T, C: Compare<T>, const MAX: bool>(cmp: &mut C, a: &T, b: &T) -> bool {
    let want = if MAX {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    cmp.compare(a, b) == Some(want)
}

/// The smallest (`MAX = false`) or largest (`MAX = true`) item so far
/// ([`ReduceOps::min`](crate::ReduceOps::min), [`max`](crate::ReduceOps::max) and their `_scan`
/// and `_by_key` forms).
///
/// Ties: the first of equal items wins (it is replaced only by a strictly better item).
/// Items not comparable with themselves (NaN) are ignored; a stream of only NaN has no
/// minimum (`None`).
#[derive(Clone, Debug)]
pub struct Extremum<T, C = Natural, const MAX: bool = false> {
    best: Option<T>,
    cmp: C,
}

/// The minimum: an [`Extremum`] with `MAX = false`.
pub type Min<T, C = Natural> = Extremum<T, C, false>;
/// The maximum: an [`Extremum`] with `MAX = true`.
pub type Max<T, C = Natural> = Extremum<T, C, true>;

impl<T, C, const MAX: bool> Extremum<T, C, MAX> {
    /// An empty min/max ordering items with `cmp`.
    pub fn new(cmp: C) -> Self {
        Self { best: None, cmp }
    }
}

impl<T: Clone, C: Compare<T>, const MAX: bool> Reducer<T> for Extremum<T, C, MAX> {
    type Value = T;
    type Output = Option<T>;

    #[inline]
    fn push(&mut self, item: T) {
        match &self.best {
            Some(best) => {
                // A NaN item compares as `None` with the (never NaN) best: not better.
                if better::<T, C, MAX>(&mut self.cmp, &item, best) {
                    self.best = Some(item);
                }
            }
            None => {
                if self.cmp.is_comparable(&item) {
                    self.best = Some(item);
                }
            }
        }
    }

    #[inline]
    fn value(&mut self) -> Option<T> {
        self.best.clone()
    }

    fn finish(self) -> Option<T> {
        self.best
    }

    fn output_value(output: Option<T>) -> Option<T> {
        output
    }
}

/// The min (`MAX = false`) or max (`MAX = true`) of the last `n` items
/// ([`ReduceOps::min_rolling`](crate::ReduceOps::min_rolling),
/// [`max_rolling`](crate::ReduceOps::max_rolling)), O(1) amortised per item with a monotonic
/// deque. Same rules as [`Extremum`]: the earliest of equal items in the window wins, NaN items
/// are ignored (but still occupy their place in the window), a window of only NaN has no value
/// and emits nothing.
#[derive(Clone, Debug)]
pub struct RollingExtremum<T, C = Natural, const MAX: bool = false> {
    /// Candidates `(index, item)`, oldest first; none is strictly worse than a later one, so the
    /// front is the best of the window.
    deque: VecDeque<(u64, T)>,
    index: u64,
    n: u64,
    cmp: C,
}

/// The rolling minimum: a [`RollingExtremum`] with `MAX = false`.
pub type RollingMin<T, C = Natural> = RollingExtremum<T, C, false>;
/// The rolling maximum: a [`RollingExtremum`] with `MAX = true`.
pub type RollingMax<T, C = Natural> = RollingExtremum<T, C, true>;

impl<T, C, const MAX: bool> RollingExtremum<T, C, MAX> {
    /// A rolling min/max over the last `n` items ordered with `cmp`.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn new(n: usize, cmp: C) -> Self {
        check_window(n, if MAX { "max_rolling" } else { "min_rolling" });
        Self {
            deque: VecDeque::new(),
            index: 0,
            n: n as u64,
            cmp,
        }
    }
}

impl<T: Clone, C: Compare<T>, const MAX: bool> Reducer<T> for RollingExtremum<T, C, MAX> {
    type Value = T;
    type Output = Option<T>;

    #[inline]
    fn push(&mut self, item: T) {
        let i = self.index;
        self.index += 1;
        if self.cmp.is_comparable(&item) {
            // Drop the candidates strictly worse than the new item: they can never be the
            // best again. Equal ones stay, so the earliest of equals is the front.
            while let Some((_, back)) = self.deque.back() {
                if better::<T, C, MAX>(&mut self.cmp, &item, back) {
                    self.deque.pop_back();
                } else {
                    break;
                }
            }
            self.deque.push_back((i, item));
        }
        while let Some(&(j, _)) = self.deque.front() {
            if j + self.n <= i {
                self.deque.pop_front();
            } else {
                break;
            }
        }
    }

    #[inline]
    fn value(&mut self) -> Option<T> {
        self.deque.front().map(|(_, x)| x.clone())
    }

    fn finish(mut self) -> Option<T> {
        self.deque.pop_front().map(|(_, x)| x)
    }

    fn output_value(output: Option<T>) -> Option<T> {
        output
    }
}
