use std::collections::VecDeque;
use std::ops::Add;

use super::numeric::NonFinite;
use super::{Numeric, Reducer, check_window};

/// The sum of every item ([`ReduceOps::sum`](crate::ReduceOps::sum),
/// [`sum_scan`](crate::ReduceOps::sum_scan)). `None` for an empty stream; floats follow IEEE
/// (a NaN makes the sum NaN).
#[derive(Clone, Debug)]
pub struct Sum<T> {
    acc: Option<T>,
}

impl<T> Sum<T> {
    /// An empty sum.
    pub fn new() -> Self {
        Self { acc: None }
    }
}

impl<T> Default for Sum<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Add<Output = T> + Clone> Reducer<T> for Sum<T> {
    type Value = T;
    type Output = Option<T>;

    #[inline]
    fn push(&mut self, item: T) {
        self.acc = Some(match self.acc.take() {
            Some(acc) => acc + item,
            None => item,
        });
    }

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

/// The sum of the last `n` items ([`ReduceOps::sum_rolling`](crate::ReduceOps::sum_rolling)),
/// O(1) per item.
///
/// Keeps a ring buffer of the window and a running sum of its finite values; NaN and ±∞ are
/// counted apart, so that a NaN leaving the window stops poisoning the sum (the window's value
/// is exactly what IEEE addition over the window gives). For floats, the running sum is
/// recomputed from the window every `n` items, so rounding drift never accumulates (amortised
/// O(1)).
#[derive(Clone, Debug)]
pub struct RollingSum<T> {
    window: VecDeque<T>,
    n: usize,
    sum: T,
    non_finite: NonFinite,
    since_recompute: usize,
}

impl<T: Numeric> RollingSum<T> {
    /// A rolling sum over the last `n` items.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn new(n: usize) -> Self {
        check_window(n, "sum_rolling");
        Self {
            window: VecDeque::with_capacity(n),
            n,
            sum: T::ZERO,
            non_finite: NonFinite::default(),
            since_recompute: 0,
        }
    }

    /// Number of items currently in the window.
    pub(crate) fn len(&self) -> usize {
        self.window.len()
    }

    #[inline]
    pub(crate) fn add(&mut self, item: T) {
        if self.window.len() == self.n
            && let Some(old) = self.window.pop_front()
            && !self.non_finite.add(old, -1)
        {
            self.sum = self.sum - old;
        }
        if !self.non_finite.add(item, 1) {
            self.sum = self.sum + item;
        }
        self.window.push_back(item);
        self.since_recompute += 1;
        if self.since_recompute >= self.n {
            self.since_recompute = 0;
            let mut sum = T::ZERO;
            for &x in &self.window {
                if x.is_finite_num() {
                    sum = sum + x;
                }
            }
            self.sum = sum;
        }
    }

    /// The sum of the window, as IEEE addition over it would give.
    #[inline]
    pub(crate) fn current(&self) -> Option<T> {
        if self.window.is_empty() {
            return None;
        }
        Some(match self.non_finite.sum() {
            Some(special) => T::from_f64(special),
            None => self.sum,
        })
    }
}

impl<T: Numeric> Reducer<T> for RollingSum<T> {
    type Value = T;
    type Output = Option<T>;

    #[inline]
    fn push(&mut self, item: T) {
        self.add(item);
    }

    #[inline]
    fn value(&mut self) -> Option<T> {
        self.current()
    }

    fn finish(self) -> Option<T> {
        self.current()
    }

    fn output_value(output: Option<T>) -> Option<T> {
        output
    }
}
