//! milabench's statistics over a benchmark's rates.

use serde::Serialize;

/// Summary statistics of samples, milabench's way: with 5 samples or more the min and the
/// max are dropped first.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Metrics {
    /// Samples kept.
    pub n: usize,
    /// Their mean.
    pub mean: f64,
    /// Their standard deviation (population, as numpy's default).
    pub std: f64,
    /// Standard error of the mean: `std / sqrt(n)`.
    pub sem: f64,
    /// The median of the kept samples (numpy's `percentile(xs, 50)`: the mean of the two
    /// middle ones when `n` is even).
    pub median: f64,
    /// The largest kept sample (with 5 samples or more, the second largest of all).
    pub max: f64,
    /// The smallest kept sample.
    pub min: f64,
    /// numpy's `percentile(xs, 25)` of the kept samples (linear interpolation).
    pub q1: f64,
    /// numpy's `percentile(xs, 75)` of the kept samples.
    pub q3: f64,
}

impl Metrics {
    /// The metrics of `samples` (non-finite ones are ignored); `None` without any.
    ///
    /// ```
    /// use giving_suite::report::Metrics;
    ///
    /// // 5 samples: 1 and 100 are dropped, the mean is that of 2, 3, 4.
    /// let m = Metrics::of(&[3.0, 1.0, 100.0, 2.0, 4.0]).unwrap();
    /// assert_eq!((m.n, m.mean), (3, 3.0));
    /// ```
    pub fn of(samples: &[f64]) -> Option<Self> {
        let mut xs: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        xs.sort_by(f64::total_cmp);
        if xs.len() >= 5 {
            xs = xs[1..xs.len() - 1].to_vec();
        }
        if xs.is_empty() {
            return None;
        }
        let n = xs.len();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let std = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        let median = if n % 2 == 1 {
            xs[n / 2]
        } else {
            (xs[n / 2 - 1] + xs[n / 2]) / 2.0
        };
        Some(Self {
            n,
            mean,
            std,
            sem: std / (n as f64).sqrt(),
            median,
            max: xs[n - 1],
            min: xs[0],
            q1: percentile(&xs, 25.0),
            q3: percentile(&xs, 75.0),
        })
    }
}

/// numpy's default `percentile` of sorted, non-empty `xs`: linear interpolation between the
/// samples at ranks `⌊p/100 · (n − 1)⌋` and the next.
fn percentile(xs: &[f64], p: f64) -> f64 {
    let rank = p / 100.0 * (xs.len() - 1) as f64;
    let low = rank.floor() as usize;
    let high = (low + 1).min(xs.len() - 1);
    xs[low] + (xs[high] - xs[low]) * (rank - low as f64)
}

/// milabench's global score: the weighted geometric mean of `score + 1`,
/// `exp(Σ wᵢ·ln(scoreᵢ + 1) / Σ wᵢ)`; `None` when the weights sum to 0.
///
/// ```
/// use giving_suite::report::global_score;
///
/// let s = global_score(&[(99.0, 1.0), (9.0, 1.0)]).unwrap();
/// assert!((s - (100.0f64 * 10.0).sqrt()).abs() < 1e-9);
/// ```
pub fn global_score(scores: &[(f64, f64)]) -> Option<f64> {
    let weights: f64 = scores.iter().map(|(_, w)| w).sum();
    (weights > 0.0).then(|| {
        (scores
            .iter()
            .map(|(s, w)| w * (s.max(0.0) + 1.0).ln())
            .sum::<f64>()
            / weights)
            .exp()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fewer_than_five_samples_are_all_kept() {
        let m = Metrics::of(&[1.0, 3.0]).unwrap();
        assert_eq!((m.n, m.mean, m.std), (2, 2.0, 1.0));
        assert!((m.sem - 1.0 / 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(Metrics::of(&[f64::NAN]), None);
    }

    /// milabench's `summary.py` `_metrics`: sorted, min and max dropped from 5 samples, then
    /// `np.percentile(xs, [50, 100])`: [1, 2, 3, 4, 100, 7] keeps [2, 3, 4, 7], median
    /// (3 + 4) / 2 = 3.5, max 7; [5, 1, 3] keeps all, median 3, max 5.
    #[test]
    fn median_and_max_are_numpy_percentiles_after_the_trim() {
        let m = Metrics::of(&[1.0, 2.0, 3.0, 4.0, 100.0, 7.0]).unwrap();
        assert_eq!((m.median, m.max), (3.5, 7.0));
        let m = Metrics::of(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!((m.median, m.max), (3.0, 5.0));
    }

    /// `np.percentile([2, 3, 4, 7], [0, 25, 75])` = 2, 2.75, 4.75 (ranks 0, 0.75, 2.25).
    #[test]
    fn quartiles_interpolate_as_numpy() {
        let m = Metrics::of(&[1.0, 2.0, 3.0, 4.0, 100.0, 7.0]).unwrap();
        assert_eq!((m.min, m.q1, m.q3), (2.0, 2.75, 4.75));
        let one = Metrics::of(&[5.0]).unwrap();
        assert_eq!((one.min, one.q1, one.q3), (5.0, 5.0, 5.0));
    }

    #[test]
    fn zero_weights_give_no_score() {
        assert_eq!(global_score(&[(5.0, 0.0)]), None);
        assert_eq!(global_score(&[(0.0, 2.0)]), Some(1.0));
    }
}
