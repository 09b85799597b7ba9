//! Pareto logic: dominance, non-dominated sorting, and PredTuner's "best" configurations
//! (the Pareto front, then the next fronts until `take_best_n` are taken).

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

/// PredTuner's best configurations: the whole Pareto front, then whole following fronts
/// while fewer than `n` are taken (close-to-optimal configurations). Indices, ascending.
pub fn take_best(points: &[(f64, f64)], n: usize) -> Vec<usize> {
    let objectives: Vec<_> = points.iter().map(|&(q, s)| maximised(q, s)).collect();
    let mut best = vec![];
    for (i, front) in fronts(&objectives).into_iter().enumerate() {
        if i > 0 && best.len() >= n {
            break;
        }
        best.extend(front);
    }
    best.sort_unstable();
    best
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
        assert_eq!(take_best(&points, 4), vec![0, 1, 2, 3, 4]);
        assert_eq!(take_best(&points, 0), vec![0, 2, 4]);
        assert!(pareto_front(&[]).is_empty());
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
