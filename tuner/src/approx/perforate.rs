//! Perforated convolution: compute one output row (or column) in `stride` with a strided
//! convolution, and fill the others by linear interpolation between computed neighbours.

use burn::nn::conv::Conv2d;
use burn::prelude::Backend;
use burn::tensor::Tensor;
use burn::tensor::module::{conv2d, interpolate as resample};
use burn::tensor::ops::{ConvOptions, InterpolateMode, InterpolateOptions};

use crate::error::Error;
use crate::knob::Axis;

/// A perforated convolution.
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
        let [ph, pw] = padding;
        let pad = match axis {
            Axis::Rows => ph,
            Axis::Cols => pw,
        };
        // With `p` zeros of padding on both sides of the perforated axis, strided output `j`
        // is centred on input `j·stride − p + pad`. The smallest `p ≥ pad` with
        // `p ≡ pad − offset (mod stride)` lands the grid on `offset, offset + stride, …`
        // (outputs before position 0 are computed on padding and dropped: `skip`), so the
        // convolution pads by itself and no padded copy of the input is made.
        let p = pad + (stride - offset) % stride;
        let skip = (p - pad).div_ceil(stride);
        let options = match axis {
            Axis::Rows => ConvOptions::new([stride, 1], [p, pw], [1, 1], 1),
            Axis::Cols => ConvOptions::new([1, stride], [ph, p], [1, 1], 1),
        };
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
        let dim = match self.axis {
            Axis::Rows => 2,
            Axis::Cols => 3,
        };
        let size = x.dims()[dim];
        let computed = conv2d(
            x,
            self.weight.clone(),
            self.bias.clone(),
            self.options.clone(),
        );
        // The rows (columns) `offset, offset + stride, … < size`.
        let n = (size - self.offset).div_ceil(self.stride);
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
