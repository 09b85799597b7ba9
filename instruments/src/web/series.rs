//! [`Series`]: one chart line over the whole run at a bounded size, and what a client has of
//! it ([`Cursor`]), so a batch sends only the points it lacks.

use super::lttb::lttb;

/// Points a series keeps after it is thinned; it grows to twice this before the next thinning.
pub(crate) const KEPT_POINTS: usize = 2000;

/// One line of a chart: `(x, y)` points in x order, thinned with [`lttb`] to
/// [`KEPT_POINTS`] whenever it reaches twice that, so it spans the whole run in at most
/// `2 × KEPT_POINTS` points.
#[derive(Debug, Clone, Default)]
pub(crate) struct Series {
    points: Vec<(f64, f64)>,
    /// Bumped at each thinning: a client's points from an older generation are stale.
    generation: u64,
}

/// What one client was sent of a series: its generation and how many points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Cursor {
    pub(crate) generation: u64,
    pub(crate) len: usize,
}

/// The points a client lacks: append `points` at index `from` (0 with a new generation: the
/// client replaces what it had).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Delta<'a> {
    pub(crate) from: usize,
    pub(crate) points: &'a [(f64, f64)],
}

impl Series {
    /// Adds a point. A point whose x goes back (a new task restarting its step count) is placed
    /// after the last one, so the line stays sorted by x for the thinning.
    pub(crate) fn push(&mut self, x: f64, y: f64) {
        let x = match self.points.last() {
            Some(&(last, _)) if x < last => last,
            _ => x,
        };
        self.points.push((x, y));
        if self.points.len() >= 2 * KEPT_POINTS {
            self.points = lttb(&self.points, KEPT_POINTS);
            self.generation += 1;
        }
    }

    /// The points.
    #[cfg(test)]
    pub(crate) fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// What a client holding `cursor` lacks (`None` if nothing), and its cursor once sent.
    pub(crate) fn delta(&self, cursor: Option<Cursor>) -> Option<(Delta<'_>, Cursor)> {
        let now = Cursor {
            generation: self.generation,
            len: self.points.len(),
        };
        let from = match cursor {
            Some(c) if c.generation == self.generation && c.len <= now.len => c.len,
            _ => 0,
        };
        if cursor == Some(now) {
            return None;
        }
        let points = &self.points[from..];
        Some((Delta { from, points }, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_bounded_over_a_long_run_and_spans_it() {
        let mut series = Series::default();
        for i in 0..1_000_000u64 {
            series.push(i as f64, (i % 100) as f64);
        }
        let points = series.points();
        assert!(points.len() < 2 * KEPT_POINTS, "{} points", points.len());
        assert_eq!(points.first().map(|p| p.0), Some(0.0));
        assert_eq!(points.last().map(|p| p.0), Some(999_999.0));
        // The first tenth of the run keeps a fair share: no squeezing of the past.
        let early = points.iter().filter(|p| p.0 < 100_000.0).count();
        assert!(early * 20 > points.len(), "{early} of {}", points.len());
    }

    #[test]
    fn a_client_gets_only_what_it_lacks_then_all_after_a_thinning() {
        let mut series = Series::default();
        for i in 0..10 {
            series.push(i as f64, 1.0);
        }
        let (delta, cursor) = series.delta(None).unwrap();
        assert_eq!((delta.from, delta.points.len()), (0, 10));
        assert!(series.delta(Some(cursor)).is_none());
        series.push(10.0, 2.0);
        let (delta, cursor) = series.delta(Some(cursor)).unwrap();
        assert_eq!((delta.from, delta.points), (10, &[(10.0, 2.0)][..]));
        for i in 11..(2 * KEPT_POINTS) {
            series.push(i as f64, 1.0);
        }
        let (delta, _) = series.delta(Some(cursor)).unwrap();
        assert_eq!(delta.from, 0, "a thinned series is sent whole");
        assert!(delta.points.len() <= KEPT_POINTS);
    }

    #[test]
    fn x_going_back_keeps_the_line_sorted() {
        let mut series = Series::default();
        series.push(5.0, 1.0);
        series.push(2.0, 1.0);
        assert_eq!(series.points(), &[(5.0, 1.0), (5.0, 1.0)]);
    }
}
