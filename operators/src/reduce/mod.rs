//! Reductions: a final value at completion, a running value at every item, or the value over a
//! rolling window of the last `n` items.
//!
//! The reductions are the methods of [`ReduceOps`], implemented for every `Stream`. Every
//! reduction is a [`Reducer`]; [`ReduceOps`] wraps it in a [`Reduce`] (final value) or a
//! [`Running`] (running and rolling variants). The reducers are public so that a custom one can
//! be used with [`ReduceOps::reduce_with`] and [`ReduceOps::running_with`].

mod extremum;
pub use extremum::{
    ByKey, Compare, Extremum, Max, Min, Natural, RollingExtremum, RollingMax, RollingMin,
};
mod final_value;
pub use final_value::Reduce;
mod generic;
pub use generic::{Count, ElementAt, First, Fold, Last, ReduceFn, RollingCount, RollingReduce};
mod moments;
pub use moments::{
    Average, AverageVariance, RollingAverage, RollingAverageVariance, RollingVariance, Spread,
    Variance,
};
mod numeric;
pub use numeric::Numeric;
mod ops;
pub use ops::ReduceOps;
mod reducer;
pub use reducer::Reducer;
mod running;
pub use running::Running;
mod sum;
pub use sum::{RollingSum, Sum};
mod top;
pub use top::{RollingTop, Top};

/// Panics with a clear message when a window size is zero.
pub(crate) fn check_window(n: usize, what: &str) {
    assert!(n > 0, "{what}: the window size must be at least 1, got 0");
}
