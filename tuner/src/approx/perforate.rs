//! Sparse perforated convolution (this project's aggressive variant, not HPVM's): compute one
//! output row (or column) in `stride` with a strided convolution, and fill the others by linear
//! interpolation between computed neighbours. HPVM's perforation, which skips one row in
//! `stride`, is [`super::skip_perforate`]; it reuses [`phase_options`] for its phases.

use burn::nn::conv::Conv2d;
use burn::prelude::Backend;
use burn::tensor::Tensor;
use burn::tensor::module::{conv2d, interpolate as resample};
use burn::tensor::ops::{ConvOptions, InterpolateMode, InterpolateOptions};

use giving_models::host::map_host;

use crate::error::Error;
use crate::knob::Axis;

/// A sparse perforated convolution: one row (column) in `stride` computed.
#[derive(Debug, Clone)]
pub struct Perforated<B: Backend> {
    weight: Tensor<B, 4>,
    bias: Option<Tensor<B, 1>>,
    /// The convolution's options: stride along the perforated axis, and the padding that puts
    /// the computed rows (columns) on the strided grid.
    options: ConvOptions<2>,
    /// Strided outputs to drop before the first computed row (column).
    skip: usize,
    axis: Axis,
    stride: usize,
    offset: usize,
}

/// The convolution options that compute rows (columns) `phase, phase + stride, …` of a
/// stride-1 layer padded by `padding`, and how many leading outputs to drop: the perforated
/// axis gets the stride and a padding that puts the strided grid on `phase`.
pub(super) fn phase_options(
    axis: Axis,
    stride: usize,
    phase: usize,
    [ph, pw]: [usize; 2],
) -> (ConvOptions<2>, usize) {
    let pad = match axis {
        Axis::Rows => ph,
        Axis::Cols => pw,
    };
    // With `p` zeros of padding on both sides of the perforated axis, strided output `j`
    // is centred on input `j·stride − p + pad`. The smallest `p ≥ pad` with
    // `p ≡ pad − phase (mod stride)` lands the grid on `phase, phase + stride, …`
    // (outputs before position 0 are computed on padding and dropped: `skip`), so the
    // convolution pads by itself and no padded copy of the input is made.
    let p = pad + (stride - phase) % stride;
    let skip = (p - pad).div_ceil(stride);
    let options = match axis {
        Axis::Rows => ConvOptions::new([stride, 1], [p, pw], [1, 1], 1),
        Axis::Cols => ConvOptions::new([1, stride], [ph, p], [1, 1], 1),
    };
    (options, skip)
}

impl<B: Backend> Perforated<B> {
    pub(super) fn new(
        conv: &Conv2d<B>,
        padding: [usize; 2],
        axis: Axis,
        stride: usize,
        offset: usize,
        side: usize,
    ) -> Result<Self, Error> {
        if stride < 2 || offset >= stride || offset >= side {
            return Err(Error::InvalidSetting(format!(
                "perforation stride {stride} offset {offset} on {side} pixels"
            )));
        }
        let (options, skip) = phase_options(axis, stride, offset, padding);
        Ok(Self {
            weight: conv.weight.val(),
            bias: conv.bias.as_ref().map(|b| b.val()),
            options,
            skip,
            axis,
            stride,
            offset,
        })
    }

    /// The layer's output: the computed rows (columns) exactly, the others interpolated.
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let dim = self.axis.tensor_dim();
        let size = x.dims()[dim];
        let computed = conv2d(
            x,
            self.weight.clone(),
            self.bias.clone(),
            self.options.clone(),
        );
        // The rows (columns) `offset, offset + stride, … < size`.
        let n = (size - self.offset).div_ceil(self.stride);
        let computed =
            match interpolate_host(computed, dim, self.skip, n, self.stride, self.offset, size) {
                Ok(full) => return full,
                Err(computed) => computed,
            };
        let computed = computed.narrow(dim, self.skip, n);
        match self.axis {
            Axis::Rows => interpolate(computed, dim, self.stride, self.offset, size),
            Axis::Cols => interpolate_cols(computed, self.stride, self.offset, size),
        }
    }
}

/// Fills `size` positions along `dim` from `computed`, which holds positions `offset,
/// offset + stride, …`: position `offset + stride·j + t` (`0 ≤ t < stride`) is
/// `c[j] + (t/stride)·(c[j+1] − c[j])`, so a computed position (`t = 0`) is copied
/// exactly; positions before the first computed one copy it, and past the last one
/// `c[j+1]` is `c[j]` itself. Built from whole-tensor slices and elementwise operations (no
/// gather), which run at memory speed on every backend.
///
/// With an offset, the grid starts one interval early, at `offset − stride`, on a copy of the
/// first computed position: the positions before it then come out of the same phases as the
/// others, and no full-size copy is needed to prepend them.
pub(crate) fn interpolate<B: Backend>(
    computed: Tensor<B, 4>,
    dim: usize,
    stride: usize,
    offset: usize,
    size: usize,
) -> Tensor<B, 4> {
    let n = computed.dims()[dim];
    let first = computed.clone().narrow(dim, 0, 1);
    let last = computed.clone().narrow(dim, n - 1, 1);
    // `grid[j]` and `next[j] = grid[j + 1]` (the last repeated).
    let (grid, next) = if offset > 0 {
        (
            Tensor::cat(vec![first, computed.clone()], dim),
            Tensor::cat(vec![computed, last], dim),
        )
    } else if n > 1 {
        let next = Tensor::cat(vec![computed.clone().narrow(dim, 1, n - 1), last], dim);
        (computed, next)
    } else {
        (computed, last)
    };
    let step = next - grid.clone();
    // Phase t of every interval, then the phases interleaved: [.., m, stride, ..] → [.., m·stride, ..].
    let phases: Vec<Tensor<B, 4>> = (0..stride)
        .map(|t| {
            if t == 0 {
                grid.clone()
            } else {
                grid.clone() + step.clone() * (t as f32 / stride as f32)
            }
        })
        .collect();
    let mut dims = grid.dims();
    dims[dim] *= stride;
    let stacked: Tensor<B, 5> = Tensor::stack(phases, dim + 1);
    let full: Tensor<B, 4> = stacked.reshape(dims);
    let start = if offset > 0 { stride - offset } else { 0 };
    full.narrow(dim, start, size)
}

/// [`interpolate`] along the last dimension (columns), as one linear resampling pass: the
/// computed columns `c[0..n]` stretched over `stride·(n−1)+1` columns with aligned corners put
/// column `stride·j + t` at `c[j] + (t/stride)·(c[j+1] − c[j])`; the columns before the first
/// and after the last computed one are copies of it. Interleaving the phases as
/// [`interpolate`] does would copy single columns, which is slow.
pub(crate) fn interpolate_cols<B: Backend>(
    computed: Tensor<B, 4>,
    stride: usize,
    offset: usize,
    size: usize,
) -> Tensor<B, 4> {
    let [_, _, h, n] = computed.dims();
    let inner = stride * (n - 1) + 1;
    let first = computed.clone().narrow(3, 0, 1);
    let last = computed.clone().narrow(3, n - 1, 1);
    let mut parts = vec![first; offset];
    parts.push(resample(
        computed,
        [h, inner],
        InterpolateOptions::new(InterpolateMode::Bilinear),
    ));
    parts.extend(std::iter::repeat_n(last, size - offset - inner));
    Tensor::cat(parts, 3)
}

/// Where output position `p` of [`interpolate`] takes its value: `(lo, hi, f)` for
/// `c[lo] + f·(c[hi] − c[lo])`, or `hi == lo` for a copy of `c[lo]` (a computed position, or
/// one before the first or past the last computed one).
fn interpolation_table(
    n: usize,
    stride: usize,
    offset: usize,
    size: usize,
) -> Vec<(usize, usize, f32)> {
    (0..size)
        .map(|p| {
            let q = p.saturating_sub(offset);
            let (j, t) = if p < offset {
                (0, 0)
            } else {
                (q / stride, q % stride)
            };
            if t == 0 || j + 1 >= n {
                (j, j, 0.0)
            } else {
                (j, j + 1, t as f32 / stride as f32)
            }
        })
        .collect()
}

/// [`interpolate`] (rows, `dim` 2) or [`interpolate_cols`] (`dim` 3) of positions `skip ..
/// skip + n` of `computed`, in one pass on a host backend ([`map_host`]): each output value is
/// written once, where the tensor operations write several full-size temporaries (on layer 0
/// of the bundled VGG, as much as the perforation saves). The same `f32` arithmetic as
/// [`interpolate`]: `c[j] + (c[j+1] − c[j])·(t/stride)`. `Err(computed)` on other backends.
pub(crate) fn interpolate_host<B: Backend>(
    computed: Tensor<B, 4>,
    dim: usize,
    skip: usize,
    n: usize,
    stride: usize,
    offset: usize,
    size: usize,
) -> Result<Tensor<B, 4>, Tensor<B, 4>> {
    let table = interpolation_table(n, stride, offset, size);
    map_host(computed, |v, [b, c, h, w]| {
        let mut out = Vec::with_capacity(b * c * size * if dim == 2 { w } else { h });
        if dim == 2 {
            for plane in v.chunks_exact(h * w) {
                let row = |j: usize| &plane[(skip + j) * w..(skip + j + 1) * w];
                for &(lo, hi, f) in &table {
                    if lo == hi {
                        out.extend_from_slice(row(lo));
                    } else {
                        out.extend(row(lo).iter().zip(row(hi)).map(|(&g, &x)| g + (x - g) * f));
                    }
                }
            }
            (out, [b, c, size, w])
        } else {
            for line in v.chunks_exact(w) {
                let line = &line[skip..skip + n];
                out.extend(table.iter().map(|&(lo, hi, f)| {
                    let g = line[lo];
                    if lo == hi { g } else { g + (line[hi] - g) * f }
                }));
            }
            (out, [b, c, h, size])
        }
    })
}
