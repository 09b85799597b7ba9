//! Each knob against a reference computation written out in loops, on small tensors.

#[cfg(any(feature = "wgpu", feature = "cuda"))]
mod gpu;

use burn::backend::Flex;
use burn::module::Param;
use burn::nn::PaddingConfig2d;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::tensor::{Distribution, Tensor, TensorData, f16};

use super::perforate::{interpolate, interpolate_cols, interpolate_host};
use super::{ApproxConv, Sampled};
use crate::knob::{Axis, Knob, perforations};

type B = Flex;

fn layer(c_in: usize, c_out: usize) -> Conv2d<B> {
    // Seeded under the models' lock: tests run side by side, and burn's generator is shared.
    giving_models::model::init_seeded::<B, _>(&Default::default(), 7, |device| {
        Conv2dConfig::new([c_in, c_out], [3, 3])
            .with_padding(PaddingConfig2d::Same)
            .init(device)
    })
}

fn input(c: usize, side: usize) -> Tensor<B, 4> {
    Tensor::random(
        [2, c, side, side],
        Distribution::Normal(0.0, 1.0),
        &Default::default(),
    )
}

fn values(t: Tensor<B, 4>) -> (Vec<f32>, [usize; 4]) {
    let dims = t.dims();
    (t.into_data().to_vec::<f32>().unwrap(), dims)
}

/// The 3×3 same-padded convolution in loops, with filter elements `skip(flat index)` left out
/// and the others multiplied by `scale`.
fn reference(
    conv: &Conv2d<B>,
    x: Tensor<B, 4>,
    skip: impl Fn(usize) -> bool,
    scale: f32,
) -> Vec<f32> {
    let (w, [co, ci, kh, kw]) = values(conv.weight.val());
    let bias = conv
        .bias
        .as_ref()
        .unwrap()
        .val()
        .into_data()
        .to_vec::<f32>()
        .unwrap();
    let (x, [n, _, h, wd]) = values(x);
    let mut out = vec![0.0f32; n * co * h * wd];
    for b in 0..n {
        for o in 0..co {
            for y in 0..h {
                for xx in 0..wd {
                    let mut acc = 0.0f32;
                    for c in 0..ci {
                        for ky in 0..kh {
                            for kx in 0..kw {
                                let flat = c * kh * kw + ky * kw + kx;
                                let (iy, ix) =
                                    (y as isize + ky as isize - 1, xx as isize + kx as isize - 1);
                                if skip(flat)
                                    || iy < 0
                                    || ix < 0
                                    || iy >= h as isize
                                    || ix >= wd as isize
                                {
                                    continue;
                                }
                                acc += w[o * ci * kh * kw + flat]
                                    * scale
                                    * x[((b * ci + c) * h + iy as usize) * wd + ix as usize];
                            }
                        }
                    }
                    out[((b * co + o) * h + y) * wd + xx] = acc + bias[o];
                }
            }
        }
    }
    out
}

fn close(a: f32, b: f32, tol: f32) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

/// HPVM's perforation written out as PredTuner's `PerforateConv2dStride` does it, on the exact
/// output `exact` (`planes` planes of `side × side`): rows (columns along `Cols`) `offset,
/// offset + stride, …` are replaced, the first by the second, the last by the one before it,
/// the others by the mean of their two neighbours.
fn hpvm_perforated(
    exact: &[f32],
    planes: usize,
    side: usize,
    axis: Axis,
    stride: usize,
    offset: usize,
) -> Vec<f32> {
    hpvm_perforated_with(exact, planes, side, axis, stride, offset, |a, b| {
        (a + b) / 2.0
    })
}

/// [`hpvm_perforated`] with the mean of two neighbours computed by `mean`.
fn hpvm_perforated_with(
    exact: &[f32],
    planes: usize,
    side: usize,
    axis: Axis,
    stride: usize,
    offset: usize,
    mean: impl Fn(f32, f32) -> f32,
) -> Vec<f32> {
    let mut out = exact.to_vec();
    let index = |plane: usize, r: usize, c: usize| match axis {
        Axis::Rows => plane * side * side + r * side + c,
        Axis::Cols => plane * side * side + c * side + r,
    };
    for plane in 0..planes {
        for r in (offset..side).step_by(stride) {
            for c in 0..side {
                out[index(plane, r, c)] = if r == 0 {
                    exact[index(plane, 1, c)]
                } else if r == side - 1 {
                    exact[index(plane, r - 1, c)]
                } else {
                    mean(exact[index(plane, r - 1, c)], exact[index(plane, r + 1, c)])
                };
            }
        }
    }
    out
}

#[test]
fn perforation_is_hpvms_one_row_in_k_skipped_and_interpolated() {
    let conv = layer(3, 4);
    // An odd and an even side, and the smallest: the last row is skipped or computed.
    for side in [9, 8, 2] {
        let x = input(3, side);
        let exact = reference(&conv, x.clone(), |_| false, 1.0);
        for (axis, stride, offset) in perforations(2..=4) {
            let knob = Knob::Perforate {
                axis,
                stride,
                offset,
            };
            let approx = ApproxConv::new(&conv, knob, side).unwrap();
            let (got, dims) = values(approx.forward(x.clone()));
            assert_eq!(dims, [2, 4, side, side]);
            let expected = hpvm_perforated(&exact, 8, side, axis, stride, offset);
            for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                assert!(close(*g, *e, 1e-5), "{knob} side {side} [{i}]: {g} vs {e}");
            }
            // Exactly the rows outside `offset + k·stride` are the exact layer's.
            let differ = exact
                .iter()
                .zip(&got)
                .filter(|(e, g)| !close(**e, **g, 1e-5));
            let line = |i: usize| match axis {
                Axis::Rows => (i / side) % side,
                Axis::Cols => i % side,
            };
            let exact_at = |i: usize| close(exact[i], got[i], 1e-5);
            for i in 0..exact.len() {
                if line(i) % stride != offset {
                    assert!(exact_at(i), "{knob} side {side} [{i}] not computed");
                }
            }
            if side > 2 {
                assert!(differ.count() > 0, "{knob} side {side} changed nothing");
            }
        }
    }
}

#[test]
fn hpvm_knobs_are_available_with_every_offset_and_the_search_default() {
    // HPVM's global_knobs.txt: perf 121–138 are rows/cols × stride 2, 3, 4 × offsets
    // 0..stride, samp 231–239 are stride 2, 3, 4 × offsets 0..stride.
    let conv = layer(2, 2);
    for knob in Knob::all().into_iter().filter(|k| k.default_search(false)) {
        ApproxConv::new(&conv, knob, 6).unwrap();
    }
    for offset in 0..4 {
        let knob = Knob::Perforate {
            axis: Axis::Cols,
            stride: 4,
            offset,
        };
        assert!(Knob::all().contains(&knob), "{knob}");
        assert!(Knob::all().contains(&Knob::Sample { stride: 4, offset }));
    }
}

#[test]
fn sparse_perforation_keeps_computed_rows_exact_and_interpolates_the_rest() {
    let conv = layer(3, 4);
    // An odd and an even side: the last computed row falls on the last row or before it.
    for side in [9, 8] {
        perforation_on(&conv, side);
    }
}

fn perforation_on(conv: &Conv2d<B>, side: usize) {
    let x = input(3, side);
    let exact = reference(conv, x.clone(), |_| false, 1.0);
    for (axis, stride, offset) in perforations(2..=4) {
        let knob = Knob::PerforateSparse {
            axis,
            stride,
            offset,
        };
        let approx = ApproxConv::new(conv, knob, side).unwrap();
        let (got, dims) = values(approx.forward(x.clone()));
        assert_eq!(dims, [2, 4, side, side]);
        let at = |v: &[f32], plane: usize, r: usize, c: usize| {
            let (y, xx) = if axis == Axis::Rows { (r, c) } else { (c, r) };
            v[plane * side * side + y * side + xx]
        };
        let computed: Vec<usize> = (offset..side).step_by(stride).collect();
        for plane in 0..8 {
            for r in 0..side {
                for c in 0..side {
                    let g = at(&got, plane, r, c);
                    let expected = match computed.binary_search(&r) {
                        Ok(_) => at(&exact, plane, r, c),
                        Err(0) => at(&exact, plane, computed[0], c),
                        Err(i) if i == computed.len() => at(&exact, plane, computed[i - 1], c),
                        Err(i) => {
                            let (a, b) = (computed[i - 1], computed[i]);
                            let t = (r - a) as f32 / (b - a) as f32;
                            (1.0 - t) * at(&exact, plane, a, c) + t * at(&exact, plane, b, c)
                        }
                    };
                    assert!(
                        close(g, expected, 1e-5),
                        "{knob} plane {plane} ({r},{c}): {g} vs {expected}"
                    );
                }
            }
        }
    }
}

/// The one-pass interpolation on the host and the tensor-operation one (which other backends
/// run) agree: bit for bit along rows, where both are the same arithmetic, and within
/// rounding along columns, where burn's resampling computes the weights its own way.
#[test]
fn host_interpolation_equals_the_tensor_operations() {
    for size in [9usize, 8] {
        for stride in 2..=4 {
            for offset in 0..2 {
                let n = (size - offset).div_ceil(stride);
                for dim in [2, 3] {
                    // Two extra positions on each side, as a strided convolution's dropped ones.
                    let mut dims = [2, 3, size, size];
                    dims[dim] = n + 2;
                    let computed: Tensor<B, 4> =
                        Tensor::random(dims, Distribution::Normal(0.0, 1.0), &Default::default());
                    let host = interpolate_host(computed.clone(), dim, 1, n, stride, offset, size)
                        .unwrap_or_else(|_| panic!("Flex is a host backend"));
                    let inner = computed.narrow(dim, 1, n);
                    let ops = if dim == 2 {
                        interpolate(inner, dim, stride, offset, size)
                    } else {
                        interpolate_cols(inner, stride, offset, size)
                    };
                    let (host, host_dims) = values(host);
                    let (ops, ops_dims) = values(ops);
                    assert_eq!(host_dims, ops_dims);
                    let what = format!("dim {dim} size {size} stride {stride} offset {offset}");
                    if dim == 2 {
                        assert_eq!(host, ops, "{what}");
                    } else {
                        for (h, o) in host.iter().zip(&ops) {
                            assert!(close(*h, *o, 1e-6), "{what}: {h} vs {o}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn perforation_differs_from_the_exact_layer() {
    let conv = layer(3, 4);
    let x = input(3, 8);
    let (exact, _) = values(conv.forward(x.clone()));
    for knob in [
        Knob::Perforate {
            axis: Axis::Rows,
            stride: 2,
            offset: 0,
        },
        Knob::PerforateSparse {
            axis: Axis::Cols,
            stride: 3,
            offset: 1,
        },
    ] {
        let (got, _) = values(ApproxConv::new(&conv, knob, 8).unwrap().forward(x.clone()));
        assert!(exact.iter().zip(&got).any(|(a, b)| !close(*a, *b, 1e-3)));
    }
}

/// The flattened filter elements PredTuner's `Conv2dSampling.sample_conv_weight` skips in a
/// `channels × 3 × 3` filter, written as it does: `range(offset, channels·9, stride)`, or
/// for stride 3 one `range((c + offset) % 3, 9, 3)` per channel `c`, shifted by `c·9`.
fn predtuner_skipped(channels: usize, stride: usize, offset: usize) -> Vec<usize> {
    if stride == 3 {
        (0..channels)
            .flat_map(|c| ((c + offset) % 3..9).step_by(3).map(move |x| x + c * 9))
            .collect()
    } else {
        (offset..channels * 9).step_by(stride).collect()
    }
}

#[test]
fn sampling_is_hpvms_skip_and_rescale() {
    // Five channels: the kept taps differ per channel (the im2col path); one channel with
    // stride 3: a kernel column skipped (the native smaller kernel).
    for channels in [5, 1] {
        let conv = layer(channels, 3);
        let x = input(channels, 6);
        for stride in 2..=4 {
            for offset in 0..stride {
                let skipped = predtuner_skipped(channels, stride, offset);
                // PredTuner's rescale with interp_rate 1: 1 + 1/(stride − 1).
                let scale = 1.0 + 1.0 / (stride - 1) as f32;
                let expected = reference(&conv, x.clone(), |i| skipped.contains(&i), scale);
                let knob = Knob::Sample { stride, offset };
                let approx = ApproxConv::new(&conv, knob, 6).unwrap();
                let native = matches!(approx, ApproxConv::Sample(Sampled::Kernel(_)));
                assert_eq!(native, channels == 1 && stride == 3, "{knob}");
                let (got, dims) = values(approx.forward(x.clone()));
                assert_eq!(dims, [2, 3, 6, 6]);
                for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                    assert!(close(*g, *e, 1e-4), "{knob} c{channels} [{i}]: {g} vs {e}");
                }
            }
        }
    }
}

#[test]
fn sampling_rescales_a_constant_response() {
    // A filter of ones on an input of ones (away from the border) sums 9·c = 36 elements;
    // stride 2 skips the 18 even ones and doubles the 18 others: the sum is unchanged.
    let device = Default::default();
    let mut conv = layer(4, 1);
    conv.weight = conv.weight.map(|w| w.ones_like());
    conv.bias = conv.bias.map(|b| b.map(|b| b.zeros_like()));
    let x = Tensor::<B, 4>::ones([1, 4, 5, 5], &device);
    let knob = Knob::Sample {
        stride: 2,
        offset: 0,
    };
    let (got, _) = values(ApproxConv::new(&conv, knob, 5).unwrap().forward(x));
    assert!(close(got[2 * 5 + 2], 36.0, 1e-6), "{}", got[12]);
}

#[test]
fn half_precision_is_close_but_rounded() {
    let conv = layer(3, 4);
    let x = input(3, 8);
    let (exact, _) = values(conv.forward(x.clone()));
    let (got, _) = values(ApproxConv::new(&conv, Knob::Fp16, 8).unwrap().forward(x));
    for (g, e) in got.iter().zip(&exact) {
        assert!(close(*g, *e, 2e-2), "{g} vs {e}");
    }
}

#[test]
fn baseline_is_the_layer_itself() {
    let conv = layer(3, 4);
    let x = input(3, 8);
    let (exact, _) = values(conv.forward(x.clone()));
    let (got, _) = values(
        ApproxConv::new(&conv, Knob::Baseline, 8)
            .unwrap()
            .forward(x),
    );
    assert_eq!(exact, got);
}

/// `v` rounded to the nearest f16 (ties to even), as an f32.
fn round16(v: f32) -> f32 {
    f16::from_f32(v).to_f32()
}

/// `t` with every element rounded to f16, on the host.
fn rounded<const D: usize>(t: Tensor<B, D>) -> Tensor<B, D> {
    let dims = t.dims();
    let v: Vec<f32> = t.into_data().to_vec::<f32>().unwrap();
    let v: Vec<f32> = v.into_iter().map(round16).collect();
    Tensor::from_data(TensorData::new(v, dims), &Default::default())
}

/// `conv` as the f16 knobs hold it: its weights rounded to f16, then multiplied by `scale`
/// and rounded again (the sampling rescale, in f16), its bias rounded to f16.
fn half_layer(conv: &Conv2d<B>, scale: f32) -> Conv2d<B> {
    // New parameters from the layer's values (a clone of a parameter not yet initialised would
    // draw its own).
    let mut half = conv.clone();
    half.weight = Param::from_tensor(rounded(rounded(conv.weight.val()) * scale));
    half.bias = conv
        .bias
        .as_ref()
        .map(|b| Param::from_tensor(rounded(b.val())));
    half
}

/// How far an f16 knob may be from HPVM's definition computed on the host (which accumulates
/// each output in f32 and rounds it once): a backend's f16 convolution accumulates as it
/// chooses; `flex`'s differs by up to 1.4·10⁻³ relative, about three units of f16's last
/// place (2⁻¹¹ relative).
const F16_TOL: f32 = 4e-3;

/// Every value of `got` is an f16 value: the output went through f16.
fn all_f16(got: &[f32]) -> bool {
    got.iter().all(|&g| round16(g) == g || !g.is_finite())
}

#[test]
fn fp16_perforation_is_hpvms_in_half_precision() {
    let conv = layer(3, 4);
    let half = half_layer(&conv, 1.0);
    for side in [9, 8, 2] {
        let x = input(3, side);
        // HPVM's `perf_fp16` on f16 data: the exact layer on the f16 input and weights, each
        // output in f16, a skipped row the mean of its neighbours in f16 arithmetic.
        let exact: Vec<f32> = reference(&half, rounded(x.clone()), |_| false, 1.0)
            .into_iter()
            .map(round16)
            .collect();
        let mean16 = |a: f32, b: f32| round16(round16(a + b) * 0.5);
        for (axis, stride, offset) in perforations(2..=4) {
            let knob = Knob::PerforateFp16 {
                axis,
                stride,
                offset,
            };
            let approx = ApproxConv::new(&conv, knob, side).unwrap();
            let (got, dims) = values(approx.forward(x.clone()));
            assert_eq!(dims, [2, 4, side, side]);
            assert!(all_f16(&got), "{knob} side {side}: not f16 values");
            let expected = hpvm_perforated_with(&exact, 8, side, axis, stride, offset, mean16);
            for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                assert!(
                    close(*g, *e, F16_TOL),
                    "{knob} side {side} [{i}]: {g} vs {e}"
                );
            }
            // The f32 knob computes the same thing without f16's rounding.
            let f32_knob = knob.in_f32().unwrap();
            let f32_approx = ApproxConv::new(&conv, f32_knob, side).unwrap();
            let (f32_got, _) = values(f32_approx.forward(x.clone()));
            assert!(got.iter().zip(&f32_got).all(|(a, b)| close(*a, *b, 1e-2)));
            assert_ne!(got, f32_got, "{knob} side {side}: no f16 rounding");
        }
    }
}

#[test]
fn fp16_sampling_is_hpvms_in_half_precision() {
    // As `sampling_is_hpvms_skip_and_rescale`: the im2col path (5 channels) and the native
    // smaller kernel (1 channel, stride 3), here on f16 tensors.
    for channels in [5, 1] {
        let conv = layer(channels, 3);
        let x = input(channels, 6);
        for stride in 2..=4 {
            for offset in 0..stride {
                let skipped = predtuner_skipped(channels, stride, offset);
                let scale = 1.0 + 1.0 / (stride - 1) as f32;
                // HPVM's `samp_fp16`: the f16 weights rescaled in f16, the f16 input, each
                // output in f16.
                let half = half_layer(&conv, scale);
                let expected: Vec<f32> =
                    reference(&half, rounded(x.clone()), |i| skipped.contains(&i), 1.0)
                        .into_iter()
                        .map(round16)
                        .collect();
                let knob = Knob::SampleFp16 { stride, offset };
                let approx = ApproxConv::new(&conv, knob, 6).unwrap();
                let (got, dims) = values(approx.forward(x.clone()));
                assert_eq!(dims, [2, 3, 6, 6]);
                assert!(all_f16(&got), "{knob} c{channels}: not f16 values");
                for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                    assert!(
                        close(*g, *e, F16_TOL),
                        "{knob} c{channels} [{i}]: {g} vs {e}"
                    );
                }
                let f32_knob = ApproxConv::new(&conv, knob.in_f32().unwrap(), 6).unwrap();
                let (f32_got, _) = values(f32_knob.forward(x.clone()));
                assert!(got.iter().zip(&f32_got).all(|(a, b)| close(*a, *b, 1e-2)));
                assert_ne!(got, f32_got, "{knob} c{channels}: no f16 rounding");
            }
        }
    }
}

/// A one-channel layer whose output is its input pixel: the kernel's centre 1, no bias.
fn identity_layer() -> Conv2d<B> {
    let mut conv = layer(1, 1);
    conv.weight = conv.weight.map(|w| {
        let mut v = vec![0.0f32; 9];
        v[4] = 1.0;
        Tensor::from_data(TensorData::new(v, [1, 1, 3, 3]), &w.device())
    });
    conv.bias = conv.bias.map(|b| b.map(|b| b.zeros_like()));
    conv
}

#[test]
fn fp16_knobs_compute_in_f16() {
    let conv = identity_layer();
    let device = Default::default();
    let rows = |offset| Knob::PerforateFp16 {
        axis: Axis::Rows,
        stride: 2,
        offset,
    };
    // 1 + 2⁻¹² lies between the f16 values 1 and 1 + 2⁻¹⁰: f16 holds it as 1. Sampling with
    // stride 2 and offset 1 keeps the kernel's centre and doubles it.
    let x = Tensor::<B, 4>::full([1, 1, 6, 6], 1.0 + 2f32.powi(-12), &device);
    for (knob, in_f32, in_f16) in [
        (rows(0), 1.0 + 2f32.powi(-12), 1.0),
        (
            Knob::SampleFp16 {
                stride: 2,
                offset: 1,
            },
            2.0 + 2f32.powi(-11),
            2.0,
        ),
    ] {
        let (got, _) = values(ApproxConv::new(&conv, knob, 6).unwrap().forward(x.clone()));
        assert!(got.iter().all(|&g| g == in_f16), "{knob}: {got:?}");
        let f32_knob = ApproxConv::new(&conv, knob.in_f32().unwrap(), 6).unwrap();
        let (got, _) = values(f32_knob.forward(x.clone()));
        assert!(
            got.iter().all(|&g| g == in_f32),
            "{}: {got:?}",
            knob.in_f32().unwrap()
        );
    }
    // 40000 is an f16 value, 80000 is above f16's largest (65504): the computed rows and the
    // copies at the border stay 40000 (never added to themselves), while a skipped row between
    // two computed ones is HPVM's (a + b) / 2 in f16 arithmetic, which overflows as HPVM's
    // and PredTuner's half-precision interpolation does. In f32 every row is 40000.
    let x = Tensor::<B, 4>::full([1, 1, 6, 6], 40000.0, &device);
    for offset in 0..2 {
        let knob = rows(offset);
        let (got, _) = values(ApproxConv::new(&conv, knob, 6).unwrap().forward(x.clone()));
        for r in 0..6 {
            let mean = r % 2 == offset && r != 0 && r != 5;
            for g in &got[r * 6..(r + 1) * 6] {
                if mean {
                    assert_eq!(*g, f32::INFINITY, "{knob} row {r}");
                } else {
                    assert_eq!(*g, 40000.0, "{knob} row {r}");
                }
            }
        }
        let f32_knob = ApproxConv::new(&conv, knob.in_f32().unwrap(), 6).unwrap();
        let (got, _) = values(f32_knob.forward(x.clone()));
        assert!(got.iter().all(|&g| g == 40000.0), "{knob}");
    }
}

/// `conv` with the same weights and bias on backend `O`'s `device` (a GPU, or
/// `Autodiff<Flex>`, where no host kernel runs: the layer through burn's operations, as on a
/// GPU backend).
fn conv_on<O: burn::prelude::Backend>(conv: &Conv2d<B>, device: &O::Device) -> Conv2d<O> {
    let [c_out, c_in, kh, kw] = conv.weight.dims();
    let mut other = Conv2dConfig::new([c_in, c_out], [kh, kw])
        .with_padding(PaddingConfig2d::Same)
        .init(device);
    other.weight = Param::from_tensor(Tensor::from_data(conv.weight.val().into_data(), device));
    other.bias = conv
        .bias
        .as_ref()
        .map(|b| Param::from_tensor(Tensor::from_data(b.val().into_data(), device)));
    other
}

#[test]
fn the_host_product_equals_burns_operations_for_every_hpvm_knob() {
    // Five channels (the sampling's per-channel taps), odd and even sides, the smallest, and
    // one whose lines are built and multiplied in several blocks (6 lines of 40 at a time).
    let conv = layer(5, 3);
    let ops = conv_on::<burn::backend::Autodiff<B>>(&conv, &Default::default());
    let knobs: Vec<Knob> = (2..=4)
        .flat_map(|stride| (0..stride).map(move |offset| Knob::Sample { stride, offset }))
        .chain(
            perforations(2..=4).map(|(axis, stride, offset)| Knob::Perforate {
                axis,
                stride,
                offset,
            }),
        )
        .collect();
    for side in [7, 8, 2, 40] {
        let x = input(5, side);
        let x_ops = Tensor::from_data(x.clone().into_data(), &Default::default());
        for &knob in &knobs {
            let host = ApproxConv::new(&conv, knob, side).unwrap();
            assert!(host.host().is_some(), "{knob}: flex runs the host product");
            let through = ApproxConv::new(&ops, knob, side).unwrap();
            assert!(
                through.host().is_none(),
                "{knob}: autodiff runs burn's operations"
            );
            let (got, dims) = values(host.forward(x.clone()));
            let expected = through
                .forward(x_ops.clone())
                .into_data()
                .to_vec::<f32>()
                .unwrap();
            assert_eq!(dims, [2, 3, side, side]);
            for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                assert!(close(*g, *e, 1e-5), "{knob} side {side} [{i}]: {g} vs {e}");
            }
        }
    }
}

#[test]
fn the_exact_host_product_is_the_exact_layer() {
    let conv = layer(5, 3);
    for side in [7, 2] {
        let x = input(5, side);
        let expected = reference(&conv, x.clone(), |_| false, 1.0);
        let (got, _) = values(super::exact_on_host(&conv, x).unwrap());
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert!(close(*g, *e, 1e-5), "side {side} [{i}]: {g} vs {e}");
        }
    }
    let ops = conv_on::<burn::backend::Autodiff<B>>(&conv, &Default::default());
    let x = Tensor::from_data(input(5, 4).into_data(), &Default::default());
    assert!(
        super::exact_on_host(&ops, x).is_none(),
        "autodiff is not a host backend"
    );
}

#[test]
fn the_host_product_shrinks_by_the_knobs_factor() {
    // 32 channels of 3×3: 288 filter elements; a 12×12 output: 144 positions.
    let conv = layer(32, 16);
    let shape = |knob: Knob| {
        ApproxConv::new(&conv, knob, 12)
            .unwrap()
            .host()
            .map(|h| h.product_shape(12, 12))
            .unwrap()
    };
    for (axis, stride, offset) in perforations(2..=4) {
        // One row (column) in `stride` skipped: 12/stride of the 12 (12 is a multiple).
        let knob = Knob::Perforate {
            axis,
            stride,
            offset,
        };
        assert_eq!(shape(knob), [16, 144 - 144 / stride, 288], "{knob}");
    }
    for stride in 2..=4 {
        for offset in 0..stride {
            let knob = Knob::Sample { stride, offset };
            let [m, n, k] = shape(knob);
            assert_eq!([m, n], [16, 144], "{knob}");
            // One element in `stride` of every filter skipped (288 is a multiple of 2, 3, 4).
            assert_eq!(k, 288 - 288 / stride, "{knob}");
        }
    }
}
