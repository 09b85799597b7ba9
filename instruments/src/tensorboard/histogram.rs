//! A model watch's histogram as TensorBoard's `HistogramProto`: what its Histograms and
//! Distributions tabs show for `grad/fc1.weight`.

use giving::Event;
use giving::vocab::{WatchEvent, keys};

use super::proto::HistogramProto;

/// The histogram of a watch event (`{param, watch, min, max, mean, norm, nans, infs, hist}`,
/// as `giving_burn::ModelWatch` gives it), tagged as its scalars are (`grad/fc1.weight`).
/// `None` for any other event, or one whose histogram has no finite value.
///
/// The watch's bins are equal from `min` to `max` over the finite elements; a bucket's right
/// edge is its `bucket_limit`. `num` counts the finite elements (the bins' total); `sum` and
/// `sum_squares` come from the mean and the norm over every element, so they are those of the
/// finite ones whenever there is no NaN or infinity (with one, the mean and the norm are not
/// finite, and the sums are left at 0 rather than written as NaN).
pub(crate) fn of(event: &Event) -> Option<(String, HistogramProto)> {
    let watched = WatchEvent::of(event)?;
    let counts = event.get_as::<Vec<f64>>(keys::HIST).ok()?;
    let number = |key| event.get_as::<f64>(key).ok();
    let (min, max) = (number(keys::MIN)?, number(keys::MAX)?);
    let num: f64 = counts.iter().sum();
    if counts.is_empty() || num == 0.0 || !(min.is_finite() && max.is_finite()) {
        return None;
    }
    let non_finite = number(keys::NANS).unwrap_or(0.0) + number(keys::INFS).unwrap_or(0.0);
    let elements = num + non_finite;
    let (mut sum, mut sum_squares) = (
        number(keys::MEAN).unwrap_or(f64::NAN) * elements,
        number(keys::NORM).unwrap_or(f64::NAN).powi(2),
    );
    if !(sum.is_finite() && sum_squares.is_finite()) {
        (sum, sum_squares) = (0.0, 0.0);
    }
    let width = (max - min) / counts.len() as f64;
    let bucket_limit = (1..=counts.len())
        .map(|i| {
            if i == counts.len() {
                max
            } else {
                min + width * i as f64
            }
        })
        .collect();
    Some((
        watched.label(),
        HistogramProto {
            min,
            max,
            num,
            sum,
            sum_squares,
            bucket_limit,
            bucket: counts,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use giving::Value;

    fn watch_event(hist: Vec<f64>, nans: f64) -> Event {
        Event::builder()
            .field(keys::GLOBAL_STEP, 100u64)
            .field(keys::PARAM, "fc1.weight")
            .field(keys::WATCH, "grad")
            .field(keys::NORM, 9.75f64.sqrt())
            .field(keys::MEAN, 0.625)
            .field(keys::MIN, -1.0)
            .field(keys::MAX, 3.0)
            .field(keys::NANS, nans)
            .field(keys::INFS, 0.0)
            .field(
                keys::HIST,
                Value::List(hist.into_iter().map(Value::F64).collect()),
            )
            .build()
    }

    #[test]
    fn a_watched_histogram_has_its_bins_edges_and_sums() {
        // The values -1, -0.5, 1.5 and 2.5, in 4 bins of width 1 from -1 to 3 (the max is the
        // watch's, 3).
        let (tag, histo) = of(&watch_event(vec![2.0, 0.0, 1.0, 1.0], 0.0)).unwrap();
        assert_eq!(tag, "grad/fc1.weight");
        assert_eq!(histo.bucket_limit, [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(histo.bucket, [2.0, 0.0, 1.0, 1.0]);
        assert_eq!((histo.min, histo.max, histo.num), (-1.0, 3.0, 4.0));
        assert_eq!(histo.sum, 2.5);
        assert!((histo.sum_squares - 9.75).abs() < 1e-12);
    }

    #[test]
    fn non_finite_elements_leave_the_sums_at_zero_not_nan() {
        let event = Event::builder()
            .field(keys::PARAM, "fc1.weight")
            .field(keys::WATCH, "weight")
            .field(keys::NORM, f64::NAN)
            .field(keys::MEAN, f64::NAN)
            .field(keys::MIN, 0.0)
            .field(keys::MAX, 1.0)
            .field(keys::NANS, 2.0)
            .field(
                keys::HIST,
                Value::List(vec![Value::F64(3.0), Value::F64(1.0)]),
            )
            .build();
        let (_, histo) = of(&event).unwrap();
        assert_eq!((histo.num, histo.sum, histo.sum_squares), (4.0, 0.0, 0.0));
        assert_eq!(histo.bucket_limit, [0.5, 1.0]);
    }

    #[test]
    fn no_histogram_without_a_finite_value_or_outside_a_watch() {
        assert!(of(&watch_event(vec![0.0, 0.0], 4.0)).is_none());
        let plain = Event::builder()
            .field(keys::HIST, Value::List(vec![]))
            .build();
        assert!(of(&plain).is_none());
    }
}
