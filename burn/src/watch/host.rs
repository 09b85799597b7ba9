//! The watch's statistics computed on the host, from a tensor's values read in the precision
//! they are stored in.
//!
//! This runs on whichever thread reads a watched statistic first (a log's, a dashboard's), and
//! on a CPU backend that thread takes its time from training's: every watched step reads the
//! weights and gradients of every parameter, and the step after both copies of the weights.
//! So the values are not converted to `f64` one by one through burn's element iterator (a
//! dynamic call per element: 7.6 ns each, 1.8 ms for the MLP's 235,000 weights), and each pass
//! keeps [`WIDE`] independent accumulators so that the compiler can use vector instructions
//! (the branchy one-accumulator loops took 6.7 ns per element), AVX2 ones where the processor
//! has them.

use burn::prelude::Backend;
use burn::tensor::{DType, Tensor, TensorData};

/// The histogram's count tables per bin, one per element of each group of four: consecutive
/// elements that fall in the same bin would otherwise each wait for the previous increment.
const COLUMNS: usize = 4;

/// Independent lanes of each sum, kept as one array per sum: four registers of four `f64`
/// with AVX2, eight of two with SSE2, so that each addition overlaps the latency of the others
/// (four lanes were one AVX2 register, each addition waiting for the last); the lanes are
/// summed at the end.
const WIDE: usize = 16;

/// A tensor's values on the host.
pub(super) enum HostValues {
    /// burn's default float, read where the transfer put it (no conversion, no second copy).
    F32(F32Data),
    /// Any other element type, converted.
    F64(Vec<f64>),
}

/// `f32` tensor data whose bytes are aligned for `f32` (checked when made), read in place.
///
/// burn's `TensorData::into_vec` copies the values once more when the bytes' allocation is
/// aligned differently from a `Vec<f32>`'s, which is what a CPU backend's transfer gives: a
/// second copy of every weight and gradient, a quarter of the reader's time per watched step
/// (`perf record` of `examples/watch_cost.rs`).
pub(super) struct F32Data(TensorData);

impl F32Data {
    fn new(data: TensorData) -> Result<Self, String> {
        if data.as_slice::<f32>().is_ok() {
            return Ok(Self(data));
        }
        // Bytes not aligned for `f32` (deserialised data): copied once into ones that are.
        let shape = data.shape.clone();
        let values = data
            .into_vec::<f32>()
            .map_err(|e| format!("reading model statistics: {e:?}"))?;
        Ok(Self(TensorData::new(values, shape)))
    }

    fn values(&self) -> &[f32] {
        // Cannot fail: checked (or made so) in `new`.
        self.0.as_slice().unwrap_or_default()
    }
}

impl HostValues {
    /// Reads `tensor`'s values to the host: one transfer on a GPU; on a CPU backend, no copy
    /// when nobody else holds the tensor (flex hands its buffer over), else one.
    pub(super) fn read<B: Backend>(tensor: Tensor<B, 1>) -> Result<Self, String> {
        let data = tensor
            .try_into_data()
            .map_err(|e| format!("reading model statistics: {e}"))?;
        let unreadable = |e| format!("reading model statistics: {e:?}");
        Ok(match data.dtype {
            DType::F32 => HostValues::F32(F32Data::new(data)?),
            DType::F64 => HostValues::F64(data.into_vec::<f64>().map_err(unreadable)?),
            _ => HostValues::F64(data.iter::<f64>().collect()),
        })
    }

    /// The values as `f64`.
    pub(super) fn into_f64(self) -> Vec<f64> {
        match self {
            HostValues::F32(data) => data.values().iter().copied().map(f64::from).collect(),
            HostValues::F64(values) => values,
        }
    }

    /// [`stats`] of each consecutive part of `lengths`, one after the other.
    pub(super) fn stats_of_parts(&self, lengths: &[usize], bins: usize) -> Vec<f64> {
        fn each<T: Sample>(values: &[T], lengths: &[usize], bins: usize) -> Vec<f64> {
            parts(values, lengths)
                .flat_map(|part| stats(part, bins))
                .collect()
        }
        match self {
            HostValues::F32(data) => each(data.values(), lengths, bins),
            HostValues::F64(values) => each(values, lengths, bins),
        }
    }

    /// [`ratio`] of each consecutive part of `lengths`, `self` before and `after` after.
    pub(super) fn ratios_of_parts(&self, after: &HostValues, lengths: &[usize]) -> Vec<f64> {
        fn each<T: Sample>(before: &[T], after: &[T], lengths: &[usize]) -> Vec<f64> {
            parts(before, lengths)
                .zip(parts(after, lengths))
                .map(|(before, after)| ratio(before, after))
                .collect()
        }
        match (self, after) {
            (HostValues::F32(before), HostValues::F32(after)) => {
                each(before.values(), after.values(), lengths)
            }
            (HostValues::F64(before), HostValues::F64(after)) => each(before, after, lengths),
            // A parameter whose element type changed between steps: compared as `f64`.
            (before, after) => {
                let widen = |values: &HostValues| match values {
                    HostValues::F32(data) => data.values().iter().copied().map(f64::from).collect(),
                    HostValues::F64(v) => v.clone(),
                };
                each(&widen(before), &widen(after), lengths)
            }
        }
    }
}

/// An element the statistics read: widened to `f64` for every computation, so `f32` and `f64`
/// values give the same statistics for the same numbers.
pub(super) trait Sample: Copy + Into<f64> {}
impl Sample for f32 {}
impl Sample for f64 {}

/// `values` cut into consecutive parts of `lengths` (a part past the end is empty).
fn parts<'a, T>(values: &'a [T], lengths: &'a [usize]) -> impl Iterator<Item = &'a [T]> + 'a {
    lengths.iter().scan(0, move |start, &length| {
        let part = values.get(*start..*start + length).unwrap_or_default();
        *start += length;
        Some(part)
    })
}

/// The sums, extremes and counts of the first pass, per lane.
#[derive(Clone, Copy)]
struct FirstPass {
    sum: f64,
    sum_sq: f64,
    /// Over the finite elements.
    min: f64,
    max: f64,
    /// Counts kept as `f64` (exact to 2^53): a vector compare gives a mask to add with.
    zeros: f64,
    nans: f64,
    infs: f64,
}

impl FirstPass {
    const EMPTY: FirstPass = FirstPass {
        sum: 0.0,
        sum_sq: 0.0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        zeros: 0.0,
        nans: 0.0,
        infs: 0.0,
    };

    /// Counts one element known to be finite: no test of it but for zero.
    #[inline(always)]
    fn add_finite(&mut self, x: f64) {
        self.sum += x;
        self.sum_sq += x * x;
        self.zeros += if x == 0.0 { 1.0 } else { 0.0 };
        self.min = if x < self.min { x } else { self.min };
        self.max = if x > self.max { x } else { self.max };
    }

    /// Counts one element, finite or not.
    #[inline(always)]
    fn add(&mut self, x: f64) {
        if x.is_finite() {
            self.add_finite(x);
            return;
        }
        self.sum += x;
        self.sum_sq += x * x;
        if x.is_nan() {
            self.nans += 1.0;
        } else {
            self.infs += 1.0;
        }
    }

    fn merge(self, other: FirstPass) -> FirstPass {
        FirstPass {
            sum: self.sum + other.sum,
            sum_sq: self.sum_sq + other.sum_sq,
            min: self.min.min(other.min),
            max: self.max.max(other.max),
            zeros: self.zeros + other.zeros,
            nans: self.nans + other.nans,
            infs: self.infs + other.infs,
        }
    }

    /// The first pass over `values` as if every element were finite, in [`WIDE`] lanes kept
    /// as one array per sum (the layout a vector register holds: the compiler loads, adds and
    /// compares a register of lanes at a time, with independent registers in flight).
    #[inline(always)]
    fn over_finite<T: Sample>(values: &[T]) -> FirstPass {
        let chunks = values.chunks_exact(WIDE);
        let rest = chunks.remainder();
        let (mut sum, mut sum_sq, mut zeros) = ([0.0; WIDE], [0.0; WIDE], [0.0; WIDE]);
        let (mut min, mut max) = ([f64::INFINITY; WIDE], [f64::NEG_INFINITY; WIDE]);
        for chunk in chunks {
            for lane in 0..WIDE {
                let x: f64 = chunk[lane].into();
                sum[lane] += x;
                sum_sq[lane] += x * x;
                zeros[lane] += if x == 0.0 { 1.0 } else { 0.0 };
                min[lane] = if x < min[lane] { x } else { min[lane] };
                max[lane] = if x > max[lane] { x } else { max[lane] };
            }
        }
        let mut total = FirstPass::EMPTY;
        for &x in rest {
            total.add_finite(x.into());
        }
        (0..WIDE).fold(total, |total, lane| {
            total.merge(FirstPass {
                sum: sum[lane],
                sum_sq: sum_sq[lane],
                min: min[lane],
                max: max[lane],
                zeros: zeros[lane],
                nans: 0.0,
                infs: 0.0,
            })
        })
    }

    /// The first pass over `values`: assuming every element finite (the usual case, and a
    /// loop of plain additions, compares and selects that vectorises), checked by the sums
    /// (a NaN or an infinity makes them non-finite), and done again element by element, with
    /// the checks, when they are not.
    #[inline(always)]
    fn of<T: Sample>(values: &[T]) -> FirstPass {
        let fast = Self::over_finite(values);
        if fast.sum.is_finite() && fast.sum_sq.is_finite() {
            return fast;
        }
        values.iter().fold(FirstPass::EMPTY, |mut pass, &x| {
            pass.add(x.into());
            pass
        })
    }
}

/// The watch's statistics of `values`: norm, mean, std, min, max, fraction of zeros, NaN
/// count, infinity count, then `bins` counts of equal bins from min to max. `min`, `max` and
/// the histogram count the finite elements; `norm`, `mean` and `std` are NaN when an element
/// is (the definitions of the device path, `super::stats`).
///
/// Compiled twice on x86-64 and chosen when called: for the baseline the crate is built for
/// (SSE2, two `f64` per instruction) and for AVX2 (four), which nearly every x86-64
/// processor in use has. Same operations in the
/// same order, so the same results to the bit: only the width of the instructions differs.
pub(super) fn stats<T: Sample>(values: &[T], bins: usize) -> Vec<f64> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { stats_avx2(values, bins) };
    }
    stats_in_lanes(values, bins)
}

/// ‖after − before‖ / ‖before‖ (compiled twice and chosen when called, as [`stats`]).
pub(super) fn ratio<T: Sample>(before: &[T], after: &[T]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { ratio_avx2(before, after) };
    }
    ratio_in_lanes(before, after)
}

/// [`stats_in_lanes`] compiled with AVX2 (inlined into a function that may use it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn stats_avx2<T: Sample>(values: &[T], bins: usize) -> Vec<f64> {
    stats_in_lanes(values, bins)
}

/// [`ratio_in_lanes`] compiled with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn ratio_avx2<T: Sample>(before: &[T], after: &[T]) -> f64 {
    ratio_in_lanes(before, after)
}

/// [`stats`] for whatever instructions the caller is compiled with (inlined into it).
#[inline(always)]
fn stats_in_lanes<T: Sample>(values: &[T], bins: usize) -> Vec<f64> {
    let n = values.len().max(1) as f64;
    let first = FirstPass::of(values);
    let mean = first.sum / n;
    let (deviations, hist) = second_pass(values, mean, first.min, first.max, bins);
    let mut out = vec![
        first.sum_sq.sqrt(),
        mean,
        (deviations / n).sqrt(),
        first.min,
        first.max,
        first.zeros / n,
        first.nans,
        first.infs,
    ];
    out.extend(hist);
    out
}

/// The second pass over `values`, once their mean and finite range are known: the sum of the
/// squared deviations from `mean`, and the counts of the finite values in `bins` equal bins
/// from `min` to `max` (the maximum in the last; every element in the first when all are
/// equal). One pass for both: the values are read from memory once more, not twice (a
/// parameter is about as large as the cache that could hold it).
#[inline(always)]
fn second_pass<T: Sample>(
    values: &[T],
    mean: f64,
    min: f64,
    max: f64,
    bins: usize,
) -> (f64, Vec<f64>) {
    /// Elements whose bins are computed together (a loop that vectorises), then counted.
    const BLOCK: usize = 256;
    // One row past the bins for the non-finite elements, left out at the end; `COLUMNS`
    // tables so that consecutive elements in one bin do not wait on each other.
    let rows = bins.min(i32::MAX as usize - 1);
    let outside = rows as i32;
    let last_position = f64::from(outside.saturating_sub(1).max(0));
    let width = if max > min { max - min } else { 1.0 };
    let scale = bins as f64;
    let mut tables = vec![[0u32; COLUMNS]; rows + 1];
    let mut sums = [0.0; WIDE];
    let mut index = [0i32; BLOCK];
    // The deviation and the bin of one element, its bin `outside` when it is not finite.
    let step = |x: f64, sum: &mut f64, slot: &mut i32| {
        *sum += (x - mean) * (x - mean);
        let position = ((x - min) / width * scale).max(0.0).min(last_position);
        // SAFETY: `position` is in `[0, last]` (a NaN becomes 0 at the `max`), which `i32`
        // holds: the unchecked conversion is a plain truncating instruction, where `as` adds
        // the saturation's compares to every element. `x - min >= 0` for a finite `x`, so
        // truncating is `floor`: the bin as the device path computes it, `floor((x - min) /
        // width * bins)` clamped to the last.
        let bin = unsafe { position.to_int_unchecked::<i32>() };
        *slot = if x.abs() < f64::INFINITY {
            bin
        } else {
            outside
        };
    };
    for block in values.chunks(BLOCK) {
        let index = &mut index[..block.len()];
        let mut groups = block.chunks_exact(WIDE);
        let mut slots = index.chunks_exact_mut(WIDE);
        for (group, slots) in (&mut groups).zip(&mut slots) {
            for ((&x, slot), sum) in group.iter().zip(slots).zip(&mut sums) {
                step(x.into(), sum, slot);
            }
        }
        for (&x, slot) in groups.remainder().iter().zip(slots.into_remainder()) {
            step(x.into(), &mut sums[0], slot);
        }
        for (at, &bin) in index.iter().enumerate() {
            // In range: `0 <= bin <= rows` by construction.
            tables[bin as usize][at % COLUMNS] += 1;
        }
    }
    let hist = tables[..rows]
        .iter()
        .map(|counts| counts.iter().map(|&c| f64::from(c)).sum())
        .collect();
    (sums.iter().sum(), hist)
}

/// [`ratio`] for whatever instructions the caller is compiled with (inlined into it).
#[inline(always)]
fn ratio_in_lanes<T: Sample>(before: &[T], after: &[T]) -> f64 {
    let pairs = before.len().min(after.len());
    let (before, after) = (&before[..pairs], &after[..pairs]);
    let mut delta = [0.0; WIDE];
    let mut norm = [0.0; WIDE];
    let (chunks_before, chunks_after) = (before.chunks_exact(WIDE), after.chunks_exact(WIDE));
    let (rest_before, rest_after) = (chunks_before.remainder(), chunks_after.remainder());
    for (b, a) in chunks_before.zip(chunks_after) {
        for lane in 0..WIDE {
            let (b, a): (f64, f64) = (b[lane].into(), a[lane].into());
            delta[lane] += (a - b) * (a - b);
            norm[lane] += b * b;
        }
    }
    let (mut delta, mut norm) = (delta.iter().sum::<f64>(), norm.iter().sum::<f64>());
    for (&b, &a) in rest_before.iter().zip(rest_after) {
        let (b, a): (f64, f64) = (b.into(), a.into());
        delta += (a - b) * (a - b);
        norm += b * b;
    }
    delta.sqrt() / norm.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definitions, one element at a time (what the lanes must agree with).
    fn reference(values: &[f64], bins: usize) -> Vec<f64> {
        let n = values.len().max(1) as f64;
        let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = values.iter().sum::<f64>() / n;
        let width = if max > min { max - min } else { 1.0 };
        let mut hist = vec![0.0; bins];
        for x in &finite {
            let bin = ((x - min) / width * bins as f64).floor();
            hist[(bin as usize).min(bins - 1)] += 1.0;
        }
        let mut out = vec![
            values.iter().map(|x| x * x).sum::<f64>().sqrt(),
            mean,
            (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt(),
            min,
            max,
            finite.iter().filter(|&&x| x == 0.0).count() as f64 / n,
            values.iter().filter(|x| x.is_nan()).count() as f64,
            values.iter().filter(|x| x.is_infinite()).count() as f64,
        ];
        out.extend(hist);
        out
    }

    fn close(a: f64, b: f64) -> bool {
        a == b || (a - b).abs() <= 1e-12 * (1.0 + b.abs()) || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn statistics_in_lanes_equal_the_definitions_for_every_length() {
        // Every remainder of the lanes and of the histogram's groups, zeros, repeats, and
        // non-finite elements at each position.
        for len in 0usize..23 {
            let values: Vec<f64> = (0..len)
                .map(|i| match i % 7 {
                    0 => 0.0,
                    3 => -2.5 + i as f64,
                    _ => (i as f64 * 0.37).sin() * 4.0,
                })
                .collect();
            for special in [
                None,
                Some(f64::NAN),
                Some(f64::INFINITY),
                Some(-f64::INFINITY),
            ] {
                let mut values = values.clone();
                if let (Some(special), Some(at)) = (special, len.checked_sub(1)) {
                    values[at / 2] = special;
                }
                let got = stats(&values, 5);
                let expected = reference(&values, 5);
                assert_eq!(got.len(), expected.len());
                for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                    assert!(close(*g, *e), "len {len} {special:?} stat {i}: {g} vs {e}");
                }
            }
        }
    }

    #[test]
    fn f32_values_give_the_statistics_of_the_same_numbers_as_f64() {
        let values: Vec<f32> = (0..1001).map(|i| (i as f32 * 0.013).cos()).collect();
        let widened: Vec<f64> = values.iter().copied().map(f64::from).collect();
        assert_eq!(stats(&values, 64), stats(&widened, 64));
        let after: Vec<f32> = values.iter().map(|x| x * 1.5).collect();
        let after_widened: Vec<f64> = after.iter().copied().map(f64::from).collect();
        assert_eq!(ratio(&values, &after), ratio(&widened, &after_widened));
    }

    #[test]
    fn the_wide_instructions_give_the_portable_results_to_the_bit() {
        let before: Vec<f32> = (0..10_007).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
        let after: Vec<f32> = before.iter().map(|x| x * 0.99 + 0.001).collect();
        let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
        // `stats` takes the AVX2 build where the processor has it (every x86-64 CI machine);
        // `stats_in_lanes`, inlined here, is the baseline build.
        assert_eq!(bits(stats(&before, 64)), bits(stats_in_lanes(&before, 64)));
        assert_eq!(
            ratio(&before, &after).to_bits(),
            ratio_in_lanes(&before, &after).to_bits()
        );
    }

    #[test]
    fn the_ratio_is_the_norm_of_the_step_over_the_norm_of_the_weights() {
        let before = [3.0, 4.0, 0.0, 0.0, 0.0, 0.0];
        let after = [3.0, 4.5, 0.0, 0.0, 0.0, 0.0];
        assert_eq!(ratio(&before, &after), 0.1);
    }
}
