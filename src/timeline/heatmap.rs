//! [`Heatmap`]: libpvti's `HeatmapDouble` / `HeatmapInt64`, a histogram over time.

use std::sync::Arc;

use super::{TRACEPOINT_ORIGIN, is_listening};
use crate::give::give_with;
use crate::vocab::keys;
use crate::{Key, Value};

/// A histogram over time (libpvti's `HeatmapDouble` and `HeatmapInt64`): each
/// [`add`](Heatmap::add) counts a batch of values — a step's per-layer gradient norms, a
/// window's request latencies — in fixed buckets, and gives the counts as one event
/// `{heatmap, buckets, counts, unit?}`.
///
/// Buckets are cut at the edges given, lowest first: `n` edges make `n + 1` buckets,
/// `< e0`, `[e0, e1)`, …, `>= e(n-1)`. Perfetto has no heatmap track, so the timeline draws one
/// counter track per bucket, grouped under a track named after the heatmap: read top to bottom,
/// they are the heatmap's rows, each bucket's count over time (see `docs/timeline.md`).
///
/// ```
/// use giving::timeline::Heatmap;
///
/// let latency = Heatmap::new("latency", [1.0, 10.0, 100.0]).with_unit("ms");
/// assert_eq!(latency.buckets().len(), 4);
/// assert_eq!(latency.counts(&[0.5, 3.0, 7.0, 250.0]), [1, 2, 0, 1]);
/// latency.add(&[0.5, 3.0, 7.0, 250.0]);
/// latency.add_i64(&[2, 2, 40]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    name: Arc<str>,
    /// Finite, strictly increasing.
    edges: Arc<[f64]>,
    /// The buckets' names, made once (every sample gives them).
    buckets: Arc<[Arc<str>]>,
    unit: Option<Arc<str>>,
}

impl Heatmap {
    /// A heatmap named `name` cut at `edges` (sorted here; repeated and non-finite edges are
    /// dropped, so the buckets never overlap).
    pub fn new(name: &str, edges: impl Into<Vec<f64>>) -> Heatmap {
        let mut edges: Vec<f64> = edges.into();
        edges.retain(|e| e.is_finite());
        edges.sort_by(f64::total_cmp);
        edges.dedup();
        let buckets = bucket_names(&edges);
        Heatmap {
            name: Arc::from(name),
            edges: edges.into(),
            buckets: buckets.into(),
            unit: None,
        }
    }

    /// The same heatmap with its values in `unit`: named in each bucket's track (`[1, 10)
    /// ms`); an empty unit is no unit.
    pub fn with_unit(mut self, unit: &str) -> Heatmap {
        self.unit = (!unit.is_empty()).then(|| Arc::from(unit));
        self
    }

    /// The heatmap's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The buckets' names, lowest first.
    pub fn buckets(&self) -> &[Arc<str>] {
        &self.buckets
    }

    /// How many of `values` fall in each bucket (NaN in none).
    pub fn counts(&self, values: &[f64]) -> Vec<u64> {
        let mut counts = vec![0u64; self.buckets.len()];
        for value in values.iter().filter(|v| !v.is_nan()) {
            // The first edge above the value: its bucket's index.
            let bucket = self.edges.partition_point(|edge| edge <= value);
            counts[bucket] += 1;
        }
        counts
    }

    /// Counts `values` in the buckets and gives the counts now (nothing when nobody
    /// listens; the counting too is skipped then).
    pub fn add(&self, values: &[f64]) {
        if is_listening() {
            self.give(self.counts(values));
        }
    }

    /// [`add`](Heatmap::add) for integer values (libpvti's `HeatmapInt64`): compared with the
    /// edges as `f64`, exact up to 2^53.
    pub fn add_i64(&self, values: &[i64]) {
        if is_listening() {
            let values: Vec<f64> = values.iter().map(|&v| v as f64).collect();
            self.give(self.counts(&values));
        }
    }

    fn give(&self, counts: Vec<u64>) {
        give_with(&TRACEPOINT_ORIGIN, || {
            let mut fields = crate::event::Fields::new();
            fields.push((
                Key::from_static(keys::HEATMAP),
                Value::Str(self.name.clone()),
            ));
            let buckets = self.buckets.iter().cloned().map(Value::Str).collect();
            fields.push((Key::from_static(keys::BUCKETS), Value::List(buckets)));
            let counts = counts.into_iter().map(Value::U64).collect();
            fields.push((Key::from_static(keys::COUNTS), Value::List(counts)));
            if let Some(unit) = &self.unit {
                fields.push((Key::from_static(keys::UNIT), Value::Str(unit.clone())));
            }
            fields
        });
    }
}

/// `< e0`, `[e0, e1)`, …, `>= e(n-1)`; one bucket, `all`, without edges.
fn bucket_names(edges: &[f64]) -> Vec<Arc<str>> {
    let (Some(first), Some(last)) = (edges.first(), edges.last()) else {
        return vec![Arc::from("all")];
    };
    let mut names = vec![Arc::from(format!("< {first}"))];
    names.extend(
        edges
            .windows(2)
            .map(|pair| Arc::from(format!("[{}, {})", pair[0], pair[1]))),
    );
    names.push(Arc::from(format!(">= {last}")));
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_fall_in_the_bucket_whose_lower_edge_they_reach() {
        let map = Heatmap::new("h", [2.0, 1.0, 1.0, f64::NAN]);
        assert_eq!(&*map.edges, [1.0, 2.0]);
        assert_eq!(
            map.buckets().iter().map(|b| &**b).collect::<Vec<_>>(),
            ["< 1", "[1, 2)", ">= 2"]
        );
        assert_eq!(
            map.counts(&[0.0, 1.0, 1.5, 2.0, 9.0, f64::NAN, f64::NEG_INFINITY]),
            [2, 2, 2]
        );
        assert_eq!(Heatmap::new("none", []).counts(&[1.0, -1.0]), [2]);
    }
}
