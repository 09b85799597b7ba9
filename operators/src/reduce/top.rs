use std::collections::VecDeque;

use super::extremum::better;
use super::{Compare, Reducer, check_window};

/// The `n` largest (`MAX = true`, [`ReduceOps::top`](crate::ReduceOps::top)) or smallest
/// (`MAX = false`, [`bottom`](crate::ReduceOps::bottom)) items, best first.
///
/// Ties: among equal items the earlier ranks first, and an item equal to the worst kept one
/// does not displace it. NaN items are ignored. An empty stream (or `n == 0`) gives an empty
/// `Vec`. O(n) per item (a sorted insertion), meant for small `n`.
#[derive(Clone, Debug)]
pub struct Top<T, C, const MAX: bool = true> {
    best: Vec<T>,
    n: usize,
    cmp: C,
}

impl<T, C, const MAX: bool> Top<T, C, MAX> {
    /// The best `n` items according to `cmp`.
    pub fn new(n: usize, cmp: C) -> Self {
        Self {
            best: Vec::with_capacity(n.min(1024) + 1),
            n,
            cmp,
        }
    }
}

impl<T: Clone, C: Compare<T>, const MAX: bool> Reducer<T> for Top<T, C, MAX> {
    type Value = Vec<T>;
    type Output = Vec<T>;

    fn push(&mut self, item: T) {
        if self.n == 0 || !self.cmp.is_comparable(&item) {
            return;
        }
        if self.best.len() == self.n {
            let worst = &self.best[self.n - 1];
            if !better::<T, C, MAX>(&mut self.cmp, &item, worst) {
                return;
            }
        }
        let cmp = &mut self.cmp;
        // First position whose item is strictly worse than the new one: equal items stay ahead.
        let at = self
            .best
            .partition_point(|kept| !better::<T, C, MAX>(cmp, &item, kept));
        self.best.insert(at, item);
        self.best.truncate(self.n);
    }

    fn value(&mut self) -> Option<Vec<T>> {
        Some(self.best.clone())
    }

    fn finish(self) -> Vec<T> {
        self.best
    }

    fn output_value(output: Vec<T>) -> Option<Vec<T>> {
        Some(output)
    }
}

/// The `n` best items among the last `window` items
/// ([`ReduceOps::top_rolling`](crate::ReduceOps::top_rolling),
/// [`bottom_rolling`](crate::ReduceOps::bottom_rolling)). Same rules as [`Top`]; recomputed
/// from the window at every item, O(window · n).
#[derive(Clone, Debug)]
pub struct RollingTop<T, C, const MAX: bool = true> {
    items: VecDeque<T>,
    window: usize,
    template: Top<T, C, MAX>,
}

impl<T, C, const MAX: bool> RollingTop<T, C, MAX> {
    /// The best `n` of the last `window` items according to `cmp`.
    ///
    /// # Panics
    ///
    /// If `window` is zero.
    pub fn new(n: usize, window: usize, cmp: C) -> Self {
        check_window(window, if MAX { "top_rolling" } else { "bottom_rolling" });
        Self {
            items: VecDeque::with_capacity(window),
            window,
            template: Top::new(n, cmp),
        }
    }
}

impl<T: Clone, C: Compare<T> + Clone, const MAX: bool> Reducer<T> for RollingTop<T, C, MAX> {
    type Value = Vec<T>;
    type Output = Vec<T>;

    fn push(&mut self, item: T) {
        if self.items.len() == self.window {
            self.items.pop_front();
        }
        self.items.push_back(item);
    }

    fn value(&mut self) -> Option<Vec<T>> {
        let mut top = self.template.clone();
        for item in &self.items {
            top.push(item.clone());
        }
        Some(top.best)
    }

    fn finish(mut self) -> Vec<T> {
        self.value().unwrap_or_default()
    }

    fn output_value(output: Vec<T>) -> Option<Vec<T>> {
        Some(output)
    }
}
