//! A distribution-free confidence interval for a median: which order statistics bracket the
//! true median of what was sampled with at least the asked probability, from the binomial
//! distribution alone (the sign test's interval; no assumption on the spread of the values).
//!
//! `giving bench` prints it beside the median of its pairs' ratios, because on a machine
//! whose runs swing ±10–20% the median of 15 pairs moves by several points from one call to
//! the next: a difference the interval covers is not one the call has shown.

/// The interval `[lo, hi]` around the median of `values` that covers the true median with
/// probability at least `confidence`, and that probability; `None` when there are too few
/// values for it (fewer than 6 at 95%).
pub(crate) fn median_interval(values: &[f64], confidence: f64) -> Option<(f64, f64, f64)> {
    let n = values.len();
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    // The k-th smallest and k-th largest miss the median only if fewer than k values fall
    // on one side of it: twice the binomial(n, 1/2) tail below k.
    (1..=n / 2).rev().find_map(|k| {
        let coverage = 1.0 - 2.0 * binomial_half_cdf(n, k - 1);
        (coverage >= confidence).then(|| (sorted[k - 1], sorted[n - k], coverage))
    })
}

/// P(X ≤ k) for X ~ Binomial(n, 1/2).
fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    let mut term = 0.5f64.powi(i32::try_from(n).unwrap_or(i32::MAX)); // P(X = 0)
    let mut total = 0.0;
    for i in 0..=k.min(n) {
        total += term;
        // P(X = i + 1) = P(X = i) (n - i) / (i + 1)
        term *= (n - i) as f64 / (i + 1) as f64;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifteen_pairs_give_the_4th_and_12th_values_at_96_5_percent() {
        let values: Vec<f64> = (1..=15).rev().map(f64::from).collect();
        let (lo, hi, coverage) = median_interval(&values, 0.95).unwrap();
        assert_eq!((lo, hi), (4.0, 12.0));
        // 1 - 2 * 576 / 32768
        assert!((coverage - (1.0 - 2.0 * 576.0 / 32768.0)).abs() < 1e-12);
    }

    #[test]
    fn nine_pairs_give_the_2nd_and_8th_values() {
        let values: Vec<f64> = (1..=9).map(f64::from).collect();
        let (lo, hi, coverage) = median_interval(&values, 0.95).unwrap();
        assert_eq!((lo, hi), (2.0, 8.0));
        assert!((coverage - (1.0 - 2.0 * 10.0 / 512.0)).abs() < 1e-12);
    }

    #[test]
    fn too_few_values_have_no_95_percent_interval() {
        assert_eq!(median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95), None);
        assert!(median_interval(&[1.0; 6], 0.95).is_some());
        assert_eq!(median_interval(&[], 0.95), None);
    }
}
