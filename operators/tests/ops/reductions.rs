use std::cmp::Ordering;

use futures::stream;
use giving_operators::{ReduceOps, StreamOps};

use super::{Lcg, block_on, collect};

/// A value ordered by `key` only, so that ties can be told apart by `tag`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tagged {
    key: f64,
    tag: u32,
}

impl PartialOrd for Tagged {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.key.partial_cmp(&other.key)
    }
}

fn tagged(keys: &[f64]) -> Vec<Tagged> {
    keys.iter()
        .enumerate()
        .map(|(i, &key)| Tagged { key, tag: i as u32 })
        .collect()
}

fn empty<T>() -> stream::Iter<std::vec::IntoIter<T>> {
    stream::iter(Vec::new())
}

/// Pseudo-random keys with many ties and some NaN.
fn random_keys(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Lcg(seed);
    (0..n)
        .map(|_| match rng.below(12) {
            0 => f64::NAN,
            k => (k % 5) as f64,
        })
        .collect()
}

// ---- the two shapes of a final reduction -----------------------------------------------------

#[test]
fn a_reduction_is_a_future_and_a_one_item_stream() {
    assert_eq!(block_on(stream::iter([2, 1]).min()), Some(1));
    assert_eq!(collect(stream::iter([2, 1]).min()), vec![1]);
    // Empty: `None` as a future, no item as a stream.
    assert_eq!(block_on(empty::<i32>().min()), None);
    assert!(collect(empty::<i32>().min()).is_empty());
    // Count has a natural empty answer.
    assert_eq!(block_on(empty::<i32>().count()), 0);
    assert_eq!(collect(empty::<i32>().count()), vec![0]);
}

// ---- min / max ------------------------------------------------------------------------------

#[test]
fn min_max_basic_and_empty() {
    assert_eq!(block_on(stream::iter([3, 1, 2]).min()), Some(1));
    assert_eq!(block_on(stream::iter([3, 1, 2]).max()), Some(3));
    assert_eq!(block_on(stream::iter([2.5f32, -1.0]).min()), Some(-1.0));
    assert_eq!(block_on(stream::iter(["b", "a"]).max()), Some("b"));
    assert_eq!(block_on(empty::<f64>().min()), None);
    assert_eq!(block_on(empty::<f64>().max()), None);
}

#[test]
fn min_max_ties_keep_the_first() {
    let items = tagged(&[2.0, 1.0, 3.0, 1.0, 3.0]);
    assert_eq!(block_on(stream::iter(items.clone()).min()).unwrap().tag, 1);
    assert_eq!(block_on(stream::iter(items.clone()).max()).unwrap().tag, 2);
    // 0.0 == -0.0: the first one wins.
    let m: f64 = block_on(stream::iter([0.0, -0.0]).min()).unwrap();
    assert!(m.is_sign_positive());
    let m: f64 = block_on(stream::iter([-0.0, 0.0]).max()).unwrap();
    assert!(m.is_sign_negative());
    // Scans agree.
    let tags: Vec<u32> = collect(stream::iter(items).min_scan().map(|t| t.tag));
    assert_eq!(tags, vec![0, 1, 1, 1, 1]);
}

#[test]
fn min_max_ignore_nan() {
    let nan = f64::NAN;
    assert_eq!(
        block_on(stream::iter([nan, 2.0, nan, 1.0]).min()),
        Some(1.0)
    );
    assert_eq!(
        block_on(stream::iter([nan, 2.0, nan, 1.0]).max()),
        Some(2.0)
    );
    assert_eq!(block_on(stream::iter([nan, nan]).min()), None);
    // The running forms emit nothing until a comparable item arrives.
    assert_eq!(
        collect(stream::iter([nan, 2.0, nan, 1.0]).min_scan()),
        vec![2.0, 2.0, 1.0]
    );
    assert_eq!(
        collect(stream::iter([nan, 2.0, nan, 3.0]).max_scan()),
        vec![2.0, 2.0, 3.0]
    );
}

#[test]
fn min_max_by_key() {
    let words = ["ccc", "a", "bb", "d"];
    assert_eq!(
        block_on(stream::iter(words).min_by_key(|s| s.len())),
        Some("a")
    );
    assert_eq!(
        block_on(stream::iter(words).max_by_key(|s| s.len())),
        Some("ccc")
    );
    let pairs = [(1, f64::NAN), (2, 0.5), (3, 0.1)];
    assert_eq!(
        block_on(stream::iter(pairs).min_by_key(|p| p.1)).unwrap().0,
        3
    );
}

/// Earliest item with the best key among the non-NaN ones of `window`.
fn brute_best(window: &[Tagged], max: bool) -> Option<Tagged> {
    let mut best: Option<Tagged> = None;
    for &x in window.iter().filter(|x| !x.key.is_nan()) {
        let better = match best {
            None => true,
            Some(b) => {
                if max {
                    x.key > b.key
                } else {
                    x.key < b.key
                }
            }
        };
        if better {
            best = Some(x);
        }
    }
    best
}

#[test]
fn min_max_rolling_match_brute_force_including_ties_and_nan() {
    for (seed, n) in [(1, 1), (2, 2), (3, 3), (4, 7), (5, 50), (6, 1000)] {
        let items = tagged(&random_keys(500, seed));
        for max in [false, true] {
            let got: Vec<Tagged> = if max {
                collect(stream::iter(items.clone()).max_rolling(n))
            } else {
                collect(stream::iter(items.clone()).min_rolling(n))
            };
            let want: Vec<Tagged> = (0..items.len())
                .filter_map(|i| brute_best(&items[(i + 1).saturating_sub(n)..=i], max))
                .collect();
            let tags = |v: &[Tagged]| v.iter().map(|t| t.tag).collect::<Vec<_>>();
            assert_eq!(tags(&got), tags(&want), "seed {seed}, n {n}, max {max}");
        }
    }
}

#[test]
fn min_rolling_window_of_nan_emits_nothing() {
    let nan = f64::NAN;
    let v = collect(stream::iter([1.0, nan, nan, 2.0]).min_rolling(2));
    assert_eq!(v, vec![1.0, 1.0, 2.0]);
}

// ---- sum ------------------------------------------------------------------------------------

#[test]
fn sum_final_and_scan() {
    assert_eq!(block_on(stream::iter(1..=4).sum()), Some(10));
    assert_eq!(block_on(stream::iter([0.5f32, 0.25]).sum()), Some(0.75));
    assert_eq!(block_on(empty::<i64>().sum()), None);
    assert!(
        block_on(stream::iter([1.0, f64::NAN, 2.0]).sum())
            .unwrap()
            .is_nan()
    );
    assert_eq!(collect(stream::iter(1..=4).sum_scan()), vec![1, 3, 6, 10]);
    // `sum` works for any `Add + Clone`, not only numbers.
    let d = block_on(stream::iter([std::time::Duration::from_millis(1); 3]).sum());
    assert_eq!(d, Some(std::time::Duration::from_millis(3)));
}

#[test]
fn sum_rolling_matches_brute_force_for_integers() {
    let mut rng = Lcg(7);
    let items: Vec<i64> = (0..1000).map(|_| rng.below(2001) as i64 - 1000).collect();
    for n in [1, 2, 5, 64, 2000] {
        let got = collect(stream::iter(items.clone()).sum_rolling(n));
        let want: Vec<i64> = (0..items.len())
            .map(|i| items[(i + 1).saturating_sub(n)..=i].iter().sum())
            .collect();
        assert_eq!(got, want, "n {n}");
    }
}

#[test]
fn sum_rolling_nan_and_infinity_only_affect_their_windows() {
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let v = collect(stream::iter([1.0, nan, 2.0, 3.0, inf, -inf, 4.0, 5.0]).sum_rolling(2));
    let want = [1.0, nan, nan, 5.0, inf, nan, -inf, 9.0];
    assert_eq!(v.len(), want.len());
    for (g, w) in v.iter().zip(want) {
        assert!(g == &w || (g.is_nan() && w.is_nan()), "{v:?}");
    }
}

#[test]
fn sum_rolling_floats_do_not_drift() {
    // A huge spike among small values: subtracting it back out of the running sum leaves a
    // rounding error of the spike's magnitude, which the periodic recompute removes within
    // `n` items; it never accumulates.
    let mut rng = Lcg(11);
    let spike_at = 1000;
    let items: Vec<f64> = (0..20_000)
        .map(|i| {
            if i == spike_at {
                1e15
            } else {
                rng.below(1000) as f64 / 7.0
            }
        })
        .collect();
    let n = 50;
    let got = collect(stream::iter(items.clone()).sum_rolling(n));
    let exact = |i: usize| items[(i + 1).saturating_sub(n)..=i].iter().sum::<f64>();
    for i in 0..items.len() {
        let err = (got[i] - exact(i)).abs();
        let bound = if (spike_at..spike_at + 2 * n).contains(&i) {
            // While the spike is in the window or just left: a few ulps of 1e15 per item.
            n as f64 * 0.125
        } else {
            1e-9 * exact(i).abs().max(1.0)
        };
        assert!(err <= bound, "at {i}: {} vs {}", got[i], exact(i));
    }
}

// ---- count ----------------------------------------------------------------------------------

#[test]
fn count_forms() {
    assert_eq!(block_on(stream::iter("abc".chars()).count()), 3);
    assert_eq!(block_on(empty::<u8>().count()), 0);
    assert_eq!(collect(stream::iter(0..3).count_scan()), vec![1, 2, 3]);
    assert_eq!(
        collect(stream::iter(0..5).count_rolling(3)),
        vec![1, 2, 3, 3, 3]
    );
    assert!(collect(empty::<u8>().count_scan()).is_empty());
}

// ---- average / variance ---------------------------------------------------------------------

fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Mean and population variance, the naive two-pass way.
fn brute_mean_var(w: &[f64]) -> (f64, f64) {
    let n = w.len() as f64;
    let mean = w.iter().sum::<f64>() / n;
    let var = w.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var)
}

/// Mean and sample variance (divided by n − 1), the naive two-pass way.
fn brute_mean_sample_var(w: &[f64]) -> (f64, f64) {
    let (mean, pvar) = brute_mean_var(w);
    let n = w.len() as f64;
    (mean, pvar * n / (n - 1.0))
}

#[test]
fn average_final_and_scan() {
    assert_eq!(block_on(stream::iter([1, 2, 3, 6]).average()), Some(3.0));
    assert_eq!(block_on(stream::iter([1u64, 2]).average()), Some(1.5));
    assert_eq!(block_on(stream::iter([1.5f32]).average()), Some(1.5));
    assert_eq!(block_on(empty::<f64>().average()), None);
    assert!(
        block_on(stream::iter([1.0, f64::NAN, 3.0]).average())
            .unwrap()
            .is_nan()
    );
    assert_eq!(
        collect(stream::iter([2, 4, 9]).average_scan()),
        vec![2.0, 3.0, 5.0]
    );
    let v = collect(stream::iter([1.0, f64::NAN, 3.0]).average_scan());
    assert!(v[0] == 1.0 && v[1].is_nan() && v[2].is_nan());
}

#[test]
fn average_rolling_matches_brute_force() {
    let mut rng = Lcg(3);
    let items: Vec<f64> = (0..3000)
        .map(|_| rng.below(100_000) as f64 / 13.0 - 2000.0)
        .collect();
    for n in [1, 2, 3, 100, 5000] {
        let got = collect(stream::iter(items.clone()).average_rolling(n));
        assert_eq!(got.len(), items.len());
        for (i, g) in got.iter().enumerate() {
            let (mean, _) = brute_mean_var(&items[(i + 1).saturating_sub(n)..=i]);
            assert!(close(*g, mean), "n {n} at {i}: {g} vs {mean}");
        }
    }
}

#[test]
fn average_rolling_nan_leaves_with_its_window() {
    let nan = f64::NAN;
    let v = collect(stream::iter([2.0, nan, 4.0, 6.0, 8.0]).average_rolling(2));
    assert_eq!(v[0], 2.0);
    assert!(v[1].is_nan() && v[2].is_nan());
    assert_eq!(&v[3..], &[5.0, 7.0]);
    let v = collect(stream::iter([1, 2, 3]).average_rolling(5));
    assert_eq!(v, vec![1.0, 1.5, 2.0]);
}

#[test]
fn variance_final_and_scan() {
    // Expected values: Python's `statistics.variance` (sample) and `pvariance` (population)
    // on the same numbers, as Python giving computes its `variance`.
    assert_eq!(block_on(stream::iter([1.0, 3.0]).variance()), Some(2.0));
    assert_eq!(block_on(stream::iter([1.0, 3.0]).pvariance()), Some(1.0));
    assert_eq!(
        block_on(stream::iter([5]).variance()),
        None,
        "one item: nothing"
    );
    assert_eq!(block_on(stream::iter([5]).pvariance()), Some(0.0));
    assert_eq!(block_on(empty::<f64>().variance()), None);
    assert_eq!(block_on(empty::<f64>().pvariance()), None);
    assert!(
        block_on(stream::iter([1.0, f64::NAN]).variance())
            .unwrap()
            .is_nan()
    );
    assert!(
        block_on(stream::iter([1.0, f64::INFINITY]).variance())
            .unwrap()
            .is_nan()
    );
    assert_eq!(
        block_on(stream::iter([2, 4, 4, 4, 5, 5, 7, 9]).average_and_variance()),
        Some((5.0, 4.571428571428571))
    );
    assert_eq!(
        block_on(stream::iter([0.5, 0.25, 0.125, 1.0]).variance()),
        Some(0.14973958333333334)
    );
    assert_eq!(block_on(stream::iter([7]).average_and_variance()), None);
    assert_eq!(block_on(empty::<i32>().average_and_variance()), None);
    assert_eq!(
        collect(stream::iter([1, 3, 5]).variance_scan()),
        vec![2.0, 4.0]
    );
    let v = collect(stream::iter([1, 3, 5]).pvariance_scan());
    assert!(close(v[2], 8.0 / 3.0) && v[..2] == [0.0, 1.0]);
    let v = collect(stream::iter([1, 3]).average_and_variance_scan());
    assert_eq!(v, vec![(2.0, 2.0)]);
}

#[test]
fn variance_is_numerically_stable() {
    // Welford: a large offset does not destroy the variance (naive E[x²]-E[x]² would).
    // statistics.variance([1e9 + (i % 4) for i in range(1000)]) and of its last 100 items.
    let items: Vec<f64> = (0..1000).map(|i| 1e9 + (i % 4) as f64).collect();
    let got = block_on(stream::iter(items.clone()).variance()).unwrap();
    assert!(close(got, 1.2512512512512513), "{got}");
    let rolled = collect(stream::iter(items.clone()).variance_rolling(100));
    assert!(
        close(*rolled.last().unwrap(), 1.2626262626262625),
        "{}",
        rolled.last().unwrap()
    );
    let rolled = collect(stream::iter(items).pvariance_rolling(100));
    assert!(close(*rolled.last().unwrap(), 1.25));
}

#[test]
fn average_and_variance_rolling_match_brute_force() {
    let mut rng = Lcg(5);
    let items: Vec<f64> = (0..3000)
        .map(|_| rng.below(1_000) as f64 / 3.0 + 500.0)
        .collect();
    for n in [1, 2, 7, 100, 4000] {
        let got = collect(stream::iter(items.clone()).average_and_variance_rolling(n));
        let vars = collect(stream::iter(items.clone()).variance_rolling(n));
        let pvars = collect(stream::iter(items.clone()).pvariance_rolling(n));
        // The sample variance needs two items in the window: a window of 1 never has them.
        let first = if n == 1 { items.len() } else { 1 };
        assert_eq!(got.len(), items.len() - first, "n {n}");
        for (k, ((m, v), v2)) in got.iter().zip(&vars).enumerate() {
            let i = k + first;
            let (mean, var) = brute_mean_sample_var(&items[(i + 1).saturating_sub(n)..=i]);
            assert!(close(*m, mean), "n {n} at {i}: mean {m} vs {mean}");
            assert!(
                (v - var).abs() <= 1e-7 * var.max(1.0),
                "n {n} at {i}: var {v} vs {var}"
            );
            assert_eq!(v, v2);
        }
        for (i, v) in pvars.iter().enumerate() {
            let (_, var) = brute_mean_var(&items[(i + 1).saturating_sub(n)..=i]);
            assert!((v - var).abs() <= 1e-7 * var.max(1.0), "n {n} at {i}");
        }
    }
}

#[test]
fn variance_rolling_non_finite_windows_are_nan_then_recover() {
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let v = collect(
        stream::iter([1.0, 3.0, nan, 3.0, 5.0, inf, 1.0, 1.0]).average_and_variance_rolling(2),
    );
    // One value per window of two: seven windows for eight items.
    assert_eq!(v[0], (2.0, 2.0));
    assert!(v[1].0.is_nan() && v[1].1.is_nan() && v[2].1.is_nan());
    assert_eq!(v[3], (4.0, 2.0));
    assert!(v[4].0 == inf && v[4].1.is_nan());
    assert!(v[5].0 == inf && v[5].1.is_nan());
    assert_eq!(v[6], (1.0, 0.0));
}

// ---- reduce / fold / scan -------------------------------------------------------------------

#[test]
fn reduce_forms() {
    assert_eq!(block_on(stream::iter(1..=4).reduce(|a, b| a * b)), Some(24));
    assert_eq!(block_on(empty::<i32>().reduce(|a, b| a + b)), None);
    assert_eq!(
        block_on(stream::iter([7]).reduce(|_, _| unreachable!())),
        Some(7)
    );
    assert_eq!(
        collect(stream::iter(1..=4).reduce_scan(|a, b| a * b)),
        vec![1, 2, 6, 24]
    );
    assert_eq!(
        collect(stream::iter(1..=5).reduce_rolling(3, |a, b| a * b)),
        vec![1, 2, 6, 24, 60]
    );
    // Order matters: the accumulator is the left argument, oldest first.
    let s = collect(
        stream::iter(["a", "b", "c"])
            .map(String::from)
            .reduce_rolling(2, |a, b| a + &b),
    );
    assert_eq!(s, vec!["a", "ab", "bc"]);
}

#[test]
fn fold_and_scan() {
    assert_eq!(block_on(stream::iter([1, 2, 3]).fold(10, |a, x| a + x)), 16);
    assert_eq!(block_on(empty::<i32>().fold(10, |a, x| a + x)), 10);
    assert_eq!(collect(empty::<i32>().fold(10, |a, x| a + x)), vec![10]);
    assert_eq!(
        collect(stream::iter([1, 2, 3]).scan(100, |a, x| a - x)),
        vec![99, 97, 94]
    );
    assert!(collect(empty::<i32>().scan(0, |a, x| a + x)).is_empty());
}

// ---- first / last / element_at --------------------------------------------------------------

#[test]
fn first_last_element_at() {
    // `first` and `element_at` complete without waiting for an endless stream.
    assert_eq!(block_on(stream::iter(5..).first()), Some(5));
    assert_eq!(block_on(stream::iter(10..).element_at(3)), Some(13));
    assert_eq!(block_on(stream::iter(0..3).element_at(3)), None);
    assert_eq!(block_on(empty::<i32>().first()), None);
    assert_eq!(block_on(stream::iter(1..=3).last()), Some(3));
    assert_eq!(block_on(empty::<i32>().last()), None);
    assert_eq!(collect(stream::iter(5..).first()), vec![5]);
}

#[test]
fn first_stops_polling_the_upstream() {
    let mut polled = 0;
    let first = block_on(stream::iter(0..100).inspect(|_| polled += 1).first());
    assert_eq!((first, polled), (Some(0), 1));
}

// ---- top / bottom ---------------------------------------------------------------------------

#[test]
fn top_bottom_final() {
    assert_eq!(block_on(stream::iter([3, 9, 1, 7]).top(2)), vec![9, 7]);
    assert_eq!(block_on(stream::iter([3, 9, 1, 7]).bottom(2)), vec![1, 3]);
    assert_eq!(block_on(stream::iter([3, 1]).top(5)), vec![3, 1]);
    assert_eq!(block_on(stream::iter([3, 1]).top(0)), Vec::<i32>::new());
    assert_eq!(block_on(empty::<i32>().top(3)), Vec::<i32>::new());
    assert_eq!(collect(empty::<i32>().top(3)), vec![Vec::<i32>::new()]);
    let nan = f64::NAN;
    assert_eq!(
        block_on(stream::iter([nan, 1.0, nan, 2.0]).top(3)),
        vec![2.0, 1.0]
    );
    assert_eq!(
        block_on(stream::iter([nan, 1.0, nan, 2.0]).bottom(1)),
        vec![1.0]
    );
}

#[test]
fn top_bottom_ties_rank_the_earlier_first() {
    let items = tagged(&[1.0, 5.0, 5.0, 3.0, 5.0]);
    let tags = |v: Vec<Tagged>| v.iter().map(|t| t.tag).collect::<Vec<_>>();
    assert_eq!(
        tags(block_on(stream::iter(items.clone()).top(2))),
        vec![1, 2]
    );
    assert_eq!(
        tags(block_on(stream::iter(items.clone()).top(4))),
        vec![1, 2, 4, 3]
    );
    let items = tagged(&[2.0, 1.0, 1.0, 1.0]);
    assert_eq!(tags(block_on(stream::iter(items).bottom(2))), vec![1, 2]);
}

#[test]
fn top_bottom_scan_and_rolling() {
    assert_eq!(
        collect(stream::iter([3, 9, 1]).top_scan(2)),
        vec![vec![3], vec![9, 3], vec![9, 3]]
    );
    assert_eq!(
        collect(stream::iter([3, 9, 1]).bottom_scan(2)),
        vec![vec![3], vec![3, 9], vec![1, 3]]
    );
    let mut rng = Lcg(9);
    let items: Vec<i32> = (0..300).map(|_| rng.below(20) as i32).collect();
    for (n, window) in [(1, 1), (2, 5), (3, 10), (10, 4)] {
        let got = collect(stream::iter(items.clone()).top_rolling(n, window));
        let got_bottom = collect(stream::iter(items.clone()).bottom_rolling(n, window));
        for i in 0..items.len() {
            let mut w = items[(i + 1).saturating_sub(window)..=i].to_vec();
            w.sort_by(|a, b| b.cmp(a));
            assert_eq!(got[i], w[..n.min(w.len())].to_vec());
            w.reverse();
            assert_eq!(got_bottom[i], w[..n.min(w.len())].to_vec());
        }
    }
}

#[test]
#[should_panic(expected = "window size must be at least 1")]
fn rolling_reductions_reject_a_zero_window() {
    let _ = stream::iter([1.0]).average_rolling(0);
}
