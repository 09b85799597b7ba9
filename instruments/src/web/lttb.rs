//! Largest-Triangle-Three-Buckets downsampling, with buckets of equal width in x.
//!
//! The classic algorithm cuts the points into buckets of equal *count*; a series that is
//! decimated again and again as the run grows would then squeeze its oldest part into fewer
//! and fewer points (each pass halves everything, and the old part is already sparse). Buckets
//! of equal *x width* keep the whole run at an even density instead: a bucket that holds one
//! point keeps it, an empty one is skipped.

/// Downsamples `points` (sorted by x) to at most `target` points: the first and the last are
/// kept, and from each of `target - 2` buckets of equal x width the point that makes the
/// largest triangle with the point kept before it and the mean of the next bucket. Returns
/// the points unchanged when there are no more than `target`.
pub(crate) fn lttb(points: &[(f64, f64)], target: usize) -> Vec<(f64, f64)> {
    if points.len() <= target || target < 3 {
        return if target < 3 && points.len() > target {
            // Fewer than three points leave no room for a bucket: the ends are the shape.
            points
                .first()
                .into_iter()
                .chain(points.last().filter(|_| target == 2))
                .copied()
                .collect()
        } else {
            points.to_vec()
        };
    }
    let (first, last) = (points[0], points[points.len() - 1]);
    let inner = &points[1..points.len() - 1];
    let buckets = target - 2;
    let span = (last.0 - first.0).max(f64::MIN_POSITIVE);
    let width = span / buckets as f64;
    // Bucket boundaries as indices into `inner`: bucket b holds x in [x0 + b·w, x0 + (b+1)·w).
    let mut bounds = Vec::with_capacity(buckets + 1);
    let mut index = 0;
    bounds.push(0);
    for b in 1..buckets {
        let edge = first.0 + width * b as f64;
        while index < inner.len() && inner[index].0 < edge {
            index += 1;
        }
        bounds.push(index);
    }
    bounds.push(inner.len());

    let mut out = Vec::with_capacity(target);
    out.push(first);
    let mut previous = first;
    for b in 0..buckets {
        let bucket = &inner[bounds[b]..bounds[b + 1]];
        if bucket.is_empty() {
            continue;
        }
        let next = next_mean(inner, &bounds, b + 1).unwrap_or(last);
        let area = |p: &(f64, f64)| {
            ((previous.0 - next.0) * (p.1 - previous.1)
                - (previous.0 - p.0) * (next.1 - previous.1))
                .abs()
        };
        let chosen = bucket
            .iter()
            .copied()
            .max_by(|a, b| area(a).total_cmp(&area(b)))
            .unwrap_or(bucket[0]);
        out.push(chosen);
        previous = chosen;
    }
    out.push(last);
    out
}

/// The mean point of the first non-empty bucket from `from` on (`None` past the last).
fn next_mean(inner: &[(f64, f64)], bounds: &[usize], from: usize) -> Option<(f64, f64)> {
    (from..bounds.len() - 1).find_map(|b| {
        let bucket = &inner[bounds[b]..bounds[b + 1]];
        (!bucket.is_empty()).then(|| {
            let n = bucket.len() as f64;
            let (sx, sy) = bucket
                .iter()
                .fold((0.0, 0.0), |(sx, sy), p| (sx + p.0, sy + p.1));
            (sx / n, sy / n)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_series_are_kept_whole() {
        let points = [(0.0, 1.0), (1.0, 2.0), (2.0, 0.5)];
        assert_eq!(lttb(&points, 10), points.to_vec());
        assert_eq!(lttb(&points, 2), vec![(0.0, 1.0), (2.0, 0.5)]);
        assert_eq!(lttb(&points, 1), vec![(0.0, 1.0)]);
        assert!(lttb(&[], 5).is_empty());
    }

    #[test]
    fn keeps_the_ends_and_a_spike_in_at_most_target_points() {
        let mut points: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, 1.0)).collect();
        points[4321].1 = 50.0;
        let thinned = lttb(&points, 100);
        assert!(thinned.len() <= 100, "{} points", thinned.len());
        assert_eq!(thinned.first(), Some(&(0.0, 1.0)));
        assert_eq!(thinned.last(), Some(&(9999.0, 1.0)));
        assert!(thinned.contains(&(4321.0, 50.0)), "the spike was lost");
        assert!(thinned.windows(2).all(|w| w[0].0 < w[1].0), "not sorted");
    }

    #[test]
    fn buckets_of_equal_width_keep_a_sparse_past_at_its_density() {
        // 100 points over x in 0..1000 (already thinned), then 1000 dense points over
        // 1000..2000: equal-width buckets give each half about the same number of points.
        let mut points: Vec<(f64, f64)> = (0..100).map(|i| (i as f64 * 10.0, i as f64)).collect();
        points.extend((0..1000).map(|i| (1000.0 + i as f64, (i % 7) as f64)));
        let thinned = lttb(&points, 200);
        let old = thinned.iter().filter(|p| p.0 < 1000.0).count();
        let new = thinned.len() - old;
        assert!(old >= 90, "old part kept {old} points, new {new}");
        assert!(new <= 110, "old part kept {old} points, new {new}");
    }
}
