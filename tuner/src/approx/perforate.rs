//! Perforated convolution: compute one output row (or column) in `stride` with a strided
//! convolution, and fill the others by linear interpolation between computed neighbours.

use burn::nn::conv::Conv2d;
use burn::prelude::Backend;
use burn::tensor::Tensor;
use burn::tensor::module::conv2d;
use burn::tensor::ops::{ConvOptions, PadMode};

use crate::error::Error;
use crate::knob::Axis;

/// A perforated convolution.
#[derive(Debug, Clone)]
pub struct Perforated<B: Backend> {
    weight: Tensor<B, 4>,
    bias: Option<Tensor<B, 1>>,
    padding: [usize; 2],
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
        Ok(Self {
            weight: conv.weight.val(),
            bias: conv.bias.as_ref().map(|b| b.val()),
            padding,
            axis,
            stride,
            offset,
        })
    }

    /// The layer's output: the computed rows (columns) exactly, the others interpolated.
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let [ph, pw] = self.padding;
        let size = x.dims()[2 + matches!(self.axis, Axis::Cols) as usize];
        // Pad the perforated axis by hand and start at the offset, so that a convolution with
        // `stride` along it lands exactly on rows `offset, offset + stride, …` of the full one.
        let (dim, computed) = match self.axis {
            Axis::Rows => {
                let x = x.pad((0, 0, ph, ph), PadMode::Constant(0.0));
                let len = x.dims()[2] - self.offset;
                let x = x.narrow(2, self.offset, len);
                let options = ConvOptions::new([self.stride, 1], [0, pw], [1, 1], 1);
                (
                    2,
                    conv2d(x, self.weight.clone(), self.bias.clone(), options),
                )
            }
            Axis::Cols => {
                let x = x.pad((pw, pw, 0, 0), PadMode::Constant(0.0));
                let len = x.dims()[3] - self.offset;
                let x = x.narrow(3, self.offset, len);
                let options = ConvOptions::new([1, self.stride], [ph, 0], [1, 1], 1);
                (
                    3,
                    conv2d(x, self.weight.clone(), self.bias.clone(), options),
                )
            }
        };
        interpolate(computed, dim, self.stride, self.offset, size)
    }
}

/// Fills `size` positions along `dim` from `computed`, which holds positions `offset,
/// offset + stride, …`: position `offset + stride·j + t` (`0 ≤ t < stride`) is
/// `(1 - t/stride)·c[j] + (t/stride)·c[j+1]`, so a computed position (`t = 0`) is copied
/// exactly; positions before the first computed one copy it, and past the last one
/// `c[j+1]` is `c[j]` itself. Built from whole-tensor slices and products (no gather), which
/// run at memory speed on every backend.
pub(crate) fn interpolate<B: Backend>(
    computed: Tensor<B, 4>,
    dim: usize,
    stride: usize,
    offset: usize,
    size: usize,
) -> Tensor<B, 4> {
    let n = computed.dims()[dim];
    let last = computed.clone().narrow(dim, n - 1, 1);
    let next = if n > 1 {
        Tensor::cat(vec![computed.clone().narrow(dim, 1, n - 1), last], dim)
    } else {
        last
    };
    // Phase t of every interval, then the phases interleaved: [.., n, stride, ..] → [.., n·stride, ..].
    let phases: Vec<Tensor<B, 4>> = (0..stride)
        .map(|t| {
            let w = t as f32 / stride as f32;
            if t == 0 {
                computed.clone()
            } else {
                computed.clone() * (1.0 - w) + next.clone() * w
            }
        })
        .collect();
    let stacked: Tensor<B, 5> = Tensor::stack(phases, dim + 1);
    let mut dims = computed.dims();
    dims[dim] = n * stride;
    let mut full: Tensor<B, 4> = stacked.reshape(dims);
    if offset > 0 {
        let first = computed.narrow(dim, 0, 1);
        let mut before = vec![first; offset];
        before.push(full);
        full = Tensor::cat(before, dim);
    }
    full.narrow(dim, 0, size)
}
