//! Perforated convolution: compute one output row (or column) in `stride` with a strided
//! convolution, and fill the others by linear interpolation between computed neighbours.

use burn::nn::conv::Conv2d;
use burn::prelude::Backend;
use burn::tensor::module::conv2d;
use burn::tensor::ops::{ConvOptions, PadMode};
use burn::tensor::{Int, Tensor, TensorData};

use crate::error::Error;
use crate::knob::Axis;

/// A perforated convolution, prepared for one input size.
#[derive(Debug, Clone)]
pub struct Perforated<B: Backend> {
    weight: Tensor<B, 4>,
    bias: Option<Tensor<B, 1>>,
    padding: [usize; 2],
    axis: Axis,
    stride: usize,
    offset: usize,
    /// For every output row (column): the computed row below or at it, the one above or at
    /// it, and their interpolation weights.
    lower: Tensor<B, 1, Int>,
    upper: Tensor<B, 1, Int>,
    lower_weight: Tensor<B, 4>,
    upper_weight: Tensor<B, 4>,
}

/// For output positions `0..size`, with positions `offset + stride·j` computed: the index `j`
/// of the computed neighbour below, above, and the weight of each. A computed position has
/// itself as both neighbours with weights `(1, 0)`, so it is copied exactly; positions before
/// the first or after the last computed one copy their nearest.
pub(crate) fn interpolation(
    size: usize,
    stride: usize,
    offset: usize,
) -> (Vec<i64>, Vec<i64>, Vec<f32>, Vec<f32>) {
    let computed = (size - 1 - offset) / stride + 1;
    let (mut lo, mut hi, mut wlo, mut whi) = (vec![], vec![], vec![], vec![]);
    for r in 0..size {
        let (j, t) = if r <= offset {
            (0, 0.0)
        } else {
            let j = ((r - offset) / stride).min(computed - 1);
            let t = (r - offset - j * stride) as f32 / stride as f32;
            (j, t)
        };
        let upper = if t > 0.0 && j + 1 < computed { j + 1 } else { j };
        let t = if upper == j { 0.0 } else { t };
        lo.push(j as i64);
        hi.push(upper as i64);
        wlo.push(1.0 - t);
        whi.push(t);
    }
    (lo, hi, wlo, whi)
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
        let weight = conv.weight.val();
        let device = weight.device();
        let (lo, hi, wlo, whi) = interpolation(side, stride, offset);
        let shape = match axis {
            Axis::Rows => [1, 1, side, 1],
            Axis::Cols => [1, 1, 1, side],
        };
        Ok(Self {
            bias: conv.bias.as_ref().map(|b| b.val()),
            weight,
            padding,
            axis,
            stride,
            offset,
            lower: Tensor::from_data(TensorData::new(lo, [side]), &device),
            upper: Tensor::from_data(TensorData::new(hi, [side]), &device),
            lower_weight: Tensor::from_data(TensorData::new(wlo, shape), &device),
            upper_weight: Tensor::from_data(TensorData::new(whi, shape), &device),
        })
    }

    /// The layer's output: the computed rows (columns) exactly, the others interpolated.
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let [ph, pw] = self.padding;
        // Pad the perforated axis by hand and start at the offset, so that a convolution with
        // `stride` along it lands exactly on rows `offset, offset + stride, …` of the full one.
        let (dim, computed) = match self.axis {
            Axis::Rows => {
                let x = x.pad((0, 0, ph, ph), PadMode::Constant(0.0));
                let len = x.dims()[2] - self.offset;
                let x = x.narrow(2, self.offset, len);
                let options = ConvOptions::new([self.stride, 1], [0, pw], [1, 1], 1);
                (2, conv2d(x, self.weight.clone(), self.bias.clone(), options))
            }
            Axis::Cols => {
                let x = x.pad((pw, pw, 0, 0), PadMode::Constant(0.0));
                let len = x.dims()[3] - self.offset;
                let x = x.narrow(3, self.offset, len);
                let options = ConvOptions::new([1, self.stride], [ph, 0], [1, 1], 1);
                (3, conv2d(x, self.weight.clone(), self.bias.clone(), options))
            }
        };
        let lower = computed.clone().select(dim, self.lower.clone());
        let upper = computed.select(dim, self.upper.clone());
        lower * self.lower_weight.clone() + upper * self.upper_weight.clone()
    }
}
