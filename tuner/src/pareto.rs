//! Pareto logic: dominance, non-dominated sorting, and PredTuner's "best" configurations
//! (the Pareto front, then the configurations closest to it until `take_best_n` are taken).

/// Whether `a` dominates `b` when every objective is minimised: no worse in any, better in one.
pub fn dominates(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y) && a.iter().zip(b).any(|(x, y)| x < y)
}

/// Non-dominated sorting (all objectives minimised): the indices of `points` in successive
/// fronts, the first being the Pareto front. Indices within a front are ascending.
pub fn fronts(points: &[Vec<f64>]) -> Vec<Vec<usize>> {
    let n = points.len();
    let mut dominated_by = vec![0usize; n];
    let mut dominates_list = vec![vec![]; n];
    for i in 0..n {
        for j in 0..n {
            if i != j && dominates(&points[i], &points[j]) {
                dominates_list[i].push(j);
                dominated_by[j] += 1;
            }
        }
    }
    let mut fronts = vec![];
    let mut current: Vec<usize> = (0..n).filter(|&i| dominated_by[i] == 0).collect();
    while !current.is_empty() {
        let mut next = vec![];
        for &i in &current {
            for &j in &dominates_list[i] {
                dominated_by[j] -= 1;
                if dominated_by[j] == 0 {
                    next.push(j);
                }
            }
        }
        next.sort_unstable();
        fronts.push(std::mem::replace(&mut current, next));
    }
    fronts
}

/// The objectives of a configuration for the Pareto logic: QoS and speedup, both maximised.
fn maximised(qos: f64, speedup: f64) -> Vec<f64> {
    vec![-qos, -speedup]
}

/// The Pareto-optimal points among `(qos, speedup)` pairs (both maximised): indices, ascending.
pub fn pareto_front(points: &[(f64, f64)]) -> Vec<usize> {
    let objectives: Vec<_> = points.iter().map(|&(q, s)| maximised(q, s)).collect();
    fronts(&objectives).into_iter().next().unwrap_or_default()
}

/// PredTuner's best configurations (`is_pareto_efficient(points, take_n)`): the whole Pareto
/// front of `(qos, speedup)` points, then the other points closest to the front
/// ([`distance_to_front`]) while fewer than `n` are taken. Indices, ascending.
///
/// Where `n` is smaller than the front PredTuner slices its ranking with a negative count (and
/// so takes all but the farthest points); here no point off the front is taken then.
pub fn take_best(points: &[(f64, f64)], n: usize) -> Vec<usize> {
    let mut best = pareto_front(points);
    let front: Vec<(f64, f64)> = best.iter().map(|&i| points[i]).collect();
    let mut rest: Vec<(f64, usize)> = (0..points.len())
        .filter(|i| best.binary_search(i).is_err())
        .map(|i| (distance_to_front(points[i], &front), i))
        .collect();
    // Stable: equally distant points keep their order.
    rest.sort_by(|a, b| a.0.total_cmp(&b.0));
    best.extend(
        rest.into_iter()
            .take(n.saturating_sub(best.len()))
            .map(|(_, i)| i),
    );
    best.sort_unstable();
    best
}

/// PredTuner's distance from `point` to the front (`_find_distance_to`): the front's points
/// sorted by QoS form a polyline; the point is measured against the line through the segment
/// that starts at the last front point whose QoS is not above the point's (the first segment
/// left of the front, the last one right of it): the perpendicular distance to that line. A
/// one-point front: the plain distance to it. (A segment of zero length, which PredTuner
/// divides by, is measured as the distance to its start.)
pub fn distance_to_front(point: (f64, f64), front: &[(f64, f64)]) -> f64 {
    let mut refs = front.to_vec();
    refs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let euclid = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).hypot(a.1 - b.1);
    match refs.len() {
        0 => return 0.0,
        1 => return euclid(point, refs[0]),
        _ => {}
    }
    let left = refs
        .iter()
        .filter(|r| r.0 <= point.0)
        .count()
        .saturating_sub(1);
    let start = left.min(refs.len() - 2);
    let (a, b) = (refs[start], refs[start + 1]);
    let to_left = (refs[left].0 - point.0, refs[left].1 - point.1);
    let segment = (b.0 - a.0, b.1 - a.1);
    let length = segment.0.hypot(segment.1);
    if length == 0.0 {
        return to_left.0.hypot(to_left.1);
    }
    let projection = (segment.0 * to_left.0 + segment.1 * to_left.1) / length;
    (to_left.0.hypot(to_left.1).powi(2) - projection.powi(2))
        .max(0.0)
        .sqrt()
}

/// Crowding distance of each point of one front (NSGA-II): how isolated it is along every
/// objective; the extremes are infinitely far.
pub fn crowding(points: &[Vec<f64>], front: &[usize]) -> Vec<f64> {
    let mut distance = vec![0.0; front.len()];
    if front.len() <= 2 {
        return vec![f64::INFINITY; front.len()];
    }
    let objectives = points[front[0]].len();
    // `m` is an objective: it indexes every point's objectives, not one sequence.
    #[allow(clippy::needless_range_loop)]
    for m in 0..objectives {
        let mut order: Vec<usize> = (0..front.len()).collect();
        order.sort_by(|&a, &b| points[front[a]][m].total_cmp(&points[front[b]][m]));
        let low = points[front[order[0]]][m];
        let high = points[front[*order.last().unwrap_or(&0)]][m];
        distance[order[0]] = f64::INFINITY;
        distance[order[front.len() - 1]] = f64::INFINITY;
        let span = high - low;
        if span <= 0.0 {
            continue;
        }
        for w in order.windows(3) {
            let gap = points[front[w[2]]][m] - points[front[w[0]]][m];
            distance[w[1]] += gap / span;
        }
    }
    distance
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dominance_needs_one_strict_improvement() {
        assert!(dominates(&[1.0, 1.0], &[1.0, 2.0]));
        assert!(!dominates(&[1.0, 2.0], &[1.0, 2.0]));
        assert!(!dominates(&[0.0, 3.0], &[1.0, 2.0]));
    }

    #[test]
    fn front_keeps_the_non_dominated_configurations() {
        // (qos, speedup): 0 and 2 trade off, 1 is dominated by 0, 3 equals 2's qos but slower.
        let points = [
            (90.0, 1.5),
            (89.0, 1.4),
            (85.0, 3.0),
            (85.0, 2.0),
            (91.0, 1.0),
        ];
        assert_eq!(pareto_front(&points), vec![0, 2, 4]);
        assert_eq!(take_best(&points, 3), vec![0, 2, 4]);
        assert_eq!(take_best(&points, 5), vec![0, 1, 2, 3, 4]);
        assert_eq!(take_best(&points, 0), vec![0, 2, 4]);
        assert!(pareto_front(&[]).is_empty());
    }

    #[test]
    fn take_best_adds_the_points_closest_to_the_front_not_the_next_front() {
        // Front: (80, 3), (90, 2), (100, 1), a straight line of slope −0.1.
        let front = [(80.0, 3.0), (90.0, 2.0), (100.0, 1.0)];
        // The perpendicular distance to the line q/10 + s = 11: |q/10 + s − 11| / √1.01.
        let line = |q: f64, s: f64| (q / 10.0 + s - 11.0).abs() / 1.01f64.sqrt();
        for (q, s) in [
            (85.0, 1.0),
            (84.0, 0.9),
            (95.0, 0.5),
            (70.0, 2.0),
            (110.0, 0.0),
        ] {
            let d = distance_to_front((q, s), &front);
            assert!((d - line(q, s)).abs() < 1e-12, "({q}, {s}): {d}");
        }
        // On a bend, the segment is the one starting at the last front point left of it.
        let bent = [(80.0, 3.0), (90.0, 2.9), (100.0, 1.0)];
        let d = distance_to_front((91.0, 2.0), &bent);
        let expected = {
            let (dx, dy) = (10.0f64, -1.9f64);
            let (px, py) = (90.0 - 91.0, 2.9 - 2.0);
            (dx * py - dy * px).abs() / dx.hypot(dy)
        };
        assert!((d - expected).abs() < 1e-12, "{d} vs {expected}");
        assert_eq!(distance_to_front((1.0, 1.0), &[(4.0, 5.0)]), 5.0);
        let points = [
            (80.0, 3.0),
            (90.0, 2.0),
            (100.0, 1.0),
            (95.0, 0.2),
            (88.0, 1.9),
            (86.0, 1.9),
        ];
        assert_eq!(pareto_front(&points), vec![0, 1, 2]);
        // 3 and 4 make the second front, 5 (dominated by 4) the third; by distance to the
        // front 4 comes first (0.3/√1.01), then 5 (0.5/√1.01), then 3 (1.3/√1.01).
        assert_eq!(fronts(&points.map(|(q, s)| vec![-q, -s]))[1], vec![3, 4]);
        assert_eq!(take_best(&points, 4), vec![0, 1, 2, 4]);
        assert_eq!(take_best(&points, 5), vec![0, 1, 2, 4, 5]);
        assert_eq!(take_best(&points, 2), vec![0, 1, 2]);
    }

    #[test]
    fn fronts_partition_the_points() {
        let points: Vec<Vec<f64>> = vec![
            vec![1.0, 4.0],
            vec![2.0, 2.0],
            vec![3.0, 3.0],
            vec![4.0, 4.0],
        ];
        assert_eq!(fronts(&points), vec![vec![0, 1], vec![2], vec![3]]);
        let line: Vec<Vec<f64>> = vec![vec![1.0, 3.0], vec![2.0, 2.0], vec![3.0, 1.0]];
        let d = crowding(&line, &[0, 1, 2]);
        assert!(d[0].is_infinite() && d[2].is_infinite() && d[1].is_finite());
    }
}
