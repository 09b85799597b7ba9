use std::collections::VecDeque;
use std::marker::PhantomData;

use super::numeric::NonFinite;
use super::{Numeric, Reducer, RollingSum, check_window};

/// The arithmetic mean of every item, as `f64` ([`ReduceOps::average`](crate::ReduceOps::average),
/// [`average_scan`](crate::ReduceOps::average_scan)). `None` for an empty stream; IEEE for
/// NaN/∞ (a NaN makes the average NaN).
#[derive(Clone, Debug)]
pub struct Average<T> {
    n: u64,
    sum: f64,
    _item: PhantomData<fn(T)>,
}

impl<T> Average<T> {
    /// An empty average.
    pub fn new() -> Self {
        Self {
            n: 0,
            sum: 0.0,
            _item: PhantomData,
        }
    }
}

impl<T> Default for Average<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Numeric> Reducer<T> for Average<T> {
    type Value = f64;
    type Output = Option<f64>;

    #[inline]
    fn push(&mut self, item: T) {
        self.n += 1;
        self.sum += item.to_f64();
    }

    #[inline]
    fn value(&mut self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    fn finish(mut self) -> Option<f64> {
        self.value()
    }

    fn output_value(output: Option<f64>) -> Option<f64> {
        output
    }
}

/// The average of the last `n` items ([`ReduceOps::average_rolling`](crate::ReduceOps::average_rolling)):
/// a [`RollingSum`] of the items as `f64` divided by the window length; O(1) per item, exact
/// IEEE semantics for NaN/∞ in the window, drift-free (periodic recompute).
#[derive(Clone, Debug)]
pub struct RollingAverage<T> {
    sum: RollingSum<f64>,
    _item: PhantomData<fn(T)>,
}

impl<T> RollingAverage<T> {
    /// A rolling average over the last `n` items.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn new(n: usize) -> Self {
        check_window(n, "average_rolling");
        Self {
            sum: RollingSum::new(n),
            _item: PhantomData,
        }
    }
}

impl<T: Numeric> Reducer<T> for RollingAverage<T> {
    type Value = f64;
    type Output = Option<f64>;

    #[inline]
    fn push(&mut self, item: T) {
        self.sum.add(item.to_f64());
    }

    #[inline]
    fn value(&mut self) -> Option<f64> {
        let len = self.sum.len() as f64;
        self.sum.current().map(|s| s / len)
    }

    fn finish(mut self) -> Option<f64> {
        self.value()
    }

    fn output_value(output: Option<f64>) -> Option<f64> {
        output
    }
}

/// Welford's online mean and sum of squared deviations, on values shifted by a reference
/// (`shift`, close to the mean), which keeps full precision for data with a large offset
/// (e.g. timestamps, or losses around 1e9).
#[derive(Clone, Copy, Debug, Default)]
struct Welford {
    n: u64,
    shift: f64,
    /// Mean of the shifted values.
    mean: f64,
    m2: f64,
}

impl Welford {
    #[inline]
    fn add(&mut self, x: f64) {
        if self.n == 0 {
            self.shift = x;
        }
        let x = x - self.shift;
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    #[inline]
    fn remove(&mut self, x: f64) {
        if self.n <= 1 {
            *self = Self::default();
            return;
        }
        let x = x - self.shift;
        self.n -= 1;
        let delta = x - self.mean;
        self.mean -= delta / self.n as f64;
        self.m2 -= delta * (x - self.mean);
        if self.m2 < 0.0 {
            self.m2 = 0.0;
        }
    }

    #[inline]
    fn mean(&self) -> f64 {
        self.shift + self.mean
    }

    /// The variance of `kind`, once there are enough items for it (two for the sample
    /// variance, one for the population variance).
    #[inline]
    fn variance(&self, kind: Spread) -> Option<f64> {
        match kind {
            Spread::Sample => (self.n >= 2).then(|| self.m2 / (self.n - 1) as f64),
            Spread::Population => (self.n >= 1).then(|| self.m2 / self.n as f64),
        }
    }

    /// Exact two-pass statistics of `values`, shifted by their mean.
    fn of(values: impl Iterator<Item = f64> + Clone) -> Self {
        let (n, sum) = values.clone().fold((0u64, 0.0), |(n, s), x| (n + 1, s + x));
        if n == 0 {
            return Self::default();
        }
        let shift = sum / n as f64;
        let (dev, m2) = values.fold((0.0, 0.0), |(d, m2), x| {
            let dx = x - shift;
            (d + dx, m2 + dx * dx)
        });
        // `dev` corrects the rounding of `shift` (the compensated two-pass formula).
        let mean = dev / n as f64;
        Self {
            n,
            shift,
            mean,
            m2: (m2 - dev * mean).max(0.0),
        }
    }
}

/// Which variance: the sample variance divides by `n − 1` (Python's `statistics.variance`,
/// what Python giving computes), the population variance by `n` (`statistics.pvariance`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Spread {
    /// Divides by `n − 1`; needs two items (the default, as Python giving).
    #[default]
    Sample,
    /// Divides by `n`; defined from one item.
    Population,
}

/// The mean and variance of every item, with Welford's algorithm
/// ([`ReduceOps::average_and_variance`](crate::ReduceOps::average_and_variance)). The sample
/// variance by default (`None` until two items, as Python giving), the population variance with
/// [`population`](AverageVariance::population). IEEE for NaN/∞ (a NaN or ∞ makes the variance
/// NaN).
#[derive(Clone, Debug)]
pub struct AverageVariance<T> {
    w: Welford,
    kind: Spread,
    _item: PhantomData<fn(T)>,
}

impl<T> AverageVariance<T> {
    /// An empty accumulator of the sample variance.
    pub fn new() -> Self {
        Self::of(Spread::Sample)
    }

    /// An empty accumulator of the population variance.
    pub fn population() -> Self {
        Self::of(Spread::Population)
    }

    /// An empty accumulator of `kind`.
    pub fn of(kind: Spread) -> Self {
        Self {
            w: Welford::default(),
            kind,
            _item: PhantomData,
        }
    }
}

impl<T> Default for AverageVariance<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Numeric> Reducer<T> for AverageVariance<T> {
    type Value = (f64, f64);
    type Output = Option<(f64, f64)>;

    #[inline]
    fn push(&mut self, item: T) {
        self.w.add(item.to_f64());
    }

    #[inline]
    fn value(&mut self) -> Option<(f64, f64)> {
        Some((self.w.mean(), self.w.variance(self.kind)?))
    }

    fn finish(mut self) -> Option<(f64, f64)> {
        self.value()
    }

    fn output_value(output: Option<(f64, f64)>) -> Option<(f64, f64)> {
        output
    }
}

/// The variance of every item ([`ReduceOps::variance`](crate::ReduceOps::variance), sample;
/// [`ReduceOps::pvariance`](crate::ReduceOps::pvariance), population): the second half of
/// [`AverageVariance`].
#[derive(Clone, Debug)]
pub struct Variance<T>(AverageVariance<T>);

impl<T> Default for Variance<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Variance<T> {
    /// An empty accumulator of the sample variance.
    pub fn new() -> Self {
        Self(AverageVariance::new())
    }

    /// An empty accumulator of the population variance.
    pub fn population() -> Self {
        Self(AverageVariance::population())
    }
}

impl<T: Numeric> Reducer<T> for Variance<T> {
    type Value = f64;
    type Output = Option<f64>;

    #[inline]
    fn push(&mut self, item: T) {
        self.0.push(item);
    }

    #[inline]
    fn value(&mut self) -> Option<f64> {
        self.0.value().map(|(_, var)| var)
    }

    fn finish(mut self) -> Option<f64> {
        self.value()
    }

    fn output_value(output: Option<f64>) -> Option<f64> {
        output
    }
}

/// The mean and variance (sample by default, or population) of the last `n` items
/// ([`ReduceOps::average_and_variance_rolling`](crate::ReduceOps::average_and_variance_rolling)),
/// O(1) per item: Welford's update with removal of the item leaving the window, recomputed
/// exactly (two passes) every `n` items so rounding drift never accumulates. NaN/∞ in the window
/// are counted apart: while one is in the window the mean is what IEEE gives and the variance
/// is NaN; once it leaves, the values are finite again.
#[derive(Clone, Debug)]
pub struct RollingAverageVariance<T> {
    window: VecDeque<f64>,
    n: usize,
    kind: Spread,
    w: Welford,
    non_finite: NonFinite,
    since_recompute: usize,
    _item: PhantomData<fn(T)>,
}

impl<T> RollingAverageVariance<T> {
    /// A rolling mean and variance over the last `n` items.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn new(n: usize) -> Self {
        Self::of(n, Spread::Sample)
    }

    /// A rolling mean and variance of `kind` over the last `n` items.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn of(n: usize, kind: Spread) -> Self {
        check_window(n, "average_and_variance_rolling");
        Self {
            window: VecDeque::with_capacity(n),
            n,
            kind,
            w: Welford::default(),
            non_finite: NonFinite::default(),
            since_recompute: 0,
            _item: PhantomData,
        }
    }

    #[inline]
    fn add(&mut self, x: f64) {
        if self.window.len() == self.n
            && let Some(old) = self.window.pop_front()
            && !self.non_finite.add(old, -1)
        {
            self.w.remove(old);
        }
        if !self.non_finite.add(x, 1) {
            self.w.add(x);
        }
        self.window.push_back(x);
        self.since_recompute += 1;
        if self.since_recompute >= self.n {
            self.since_recompute = 0;
            self.w = Welford::of(self.window.iter().copied().filter(|x| x.is_finite()));
        }
    }

    #[inline]
    fn current(&self) -> Option<(f64, f64)> {
        let needed = match self.kind {
            Spread::Sample => 2,
            Spread::Population => 1,
        };
        if self.window.len() < needed {
            return None;
        }
        if self.non_finite.any() {
            // The finite part does not matter: NaN/∞ dominate the sum, and the variance of a
            // window holding a non-finite value is NaN.
            let mean = self.non_finite.sum().unwrap_or(f64::NAN);
            return Some((mean, f64::NAN));
        }
        Some((self.w.mean(), self.w.variance(self.kind)?))
    }
}

impl<T: Numeric> Reducer<T> for RollingAverageVariance<T> {
    type Value = (f64, f64);
    type Output = Option<(f64, f64)>;

    #[inline]
    fn push(&mut self, item: T) {
        self.add(item.to_f64());
    }

    #[inline]
    fn value(&mut self) -> Option<(f64, f64)> {
        self.current()
    }

    fn finish(self) -> Option<(f64, f64)> {
        self.current()
    }

    fn output_value(output: Option<(f64, f64)>) -> Option<(f64, f64)> {
        output
    }
}

/// The variance of the last `n` items
/// ([`ReduceOps::variance_rolling`](crate::ReduceOps::variance_rolling), sample;
/// [`ReduceOps::pvariance_rolling`](crate::ReduceOps::pvariance_rolling), population): the
/// second half of [`RollingAverageVariance`].
#[derive(Clone, Debug)]
pub struct RollingVariance<T>(RollingAverageVariance<T>);

impl<T> RollingVariance<T> {
    /// A rolling variance over the last `n` items.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn new(n: usize) -> Self {
        Self::of(n, Spread::Sample)
    }

    /// A rolling variance of `kind` over the last `n` items.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn of(n: usize, kind: Spread) -> Self {
        check_window(n, "variance_rolling");
        Self(RollingAverageVariance::of(n, kind))
    }
}

impl<T: Numeric> Reducer<T> for RollingVariance<T> {
    type Value = f64;
    type Output = Option<f64>;

    #[inline]
    fn push(&mut self, item: T) {
        self.0.push(item);
    }

    #[inline]
    fn value(&mut self) -> Option<f64> {
        self.0.current().map(|(_, var)| var)
    }

    fn finish(self) -> Option<f64> {
        self.0.current().map(|(_, var)| var)
    }

    fn output_value(output: Option<f64>) -> Option<f64> {
        output
    }
}
