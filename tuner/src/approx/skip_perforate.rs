//! HPVM's perforated convolution (PredTuner's `PerforateConv2dStride`, HPVM's
//! `tensorRowPerfConvolutionCPU`): output rows (columns) `offset, offset + stride, …` are
//! skipped and every other one is computed exactly; a skipped row is the mean of its two
//! neighbours, the first row copies the second and the last copies the one before it.
//!
//! The computed rows are `stride − 1` phases of the strided grid (rows `p, p + stride, …` for
//! every `p ≠ offset`), each one strided convolution; their outputs are concatenated phase
//! after phase, the skipped rows between two computed ones are computed as `(c[r−1] + c[r+1])
//! · ½` from them, and one gather puts every output row in place: a computed row, the copy at
//! the first or last row, or a mean. A computed or copied row is never added to itself, so it
//! stays exact in f16 too, where `a + a` overflows above 32752 ([`super::InHalf`] runs these
//! same operations on f16 tensors); a mean is HPVM's `(a + b) / 2` in the tensors' precision.

use burn::nn::conv::Conv2d;
use burn::prelude::Backend;
use burn::tensor::module::conv2d;
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Int, Tensor, TensorData};

use super::host_conv::{HostConv, Positions, every_element};
use super::hpvm_rows::hpvm_sources;
use super::perforate::phase_options;
use crate::error::Error;
use crate::knob::Axis;

/// A convolution with one output row (column) in `stride` skipped, as HPVM perforates.
#[derive(Debug, Clone)]
pub struct SkipPerforated<B: Backend> {
    weight: Tensor<B, 4>,
    bias: Option<Tensor<B, 1>>,
    /// For each computed phase `p` (ascending, `offset` left out): its options and the
    /// strided outputs to drop before row (column) `p`.
    phases: Vec<(usize, ConvOptions<2>, usize)>,
    axis: Axis,
    stride: usize,
    offset: usize,
    /// The gather of the prepared side.
    gather: Gather<B>,
    /// The layer as an im2col of the computed rows (columns) and one matrix product, on a
    /// backend that keeps its tensors on the host.
    host: Option<HostConv>,
}

/// Where each output row comes from, for one side.
#[derive(Debug, Clone)]
struct Gather<B: Backend> {
    /// The side these indices are for.
    size: usize,
    /// The skipped rows between two computed ones, if any: the positions of their two
    /// neighbours in the concatenated phases.
    means: Option<(Tensor<B, 1, Int>, Tensor<B, 1, Int>)>,
    /// For each output row, its position in the concatenated phases followed by the means.
    order: Tensor<B, 1, Int>,
}

/// The number of rows `phase, phase + stride, … < size`.
fn phase_len(size: usize, stride: usize, phase: usize) -> usize {
    size.saturating_sub(phase).div_ceil(stride)
}

/// The position of computed row `r` in the phases concatenated in ascending order (the
/// skipped phase `offset` left out).
fn concat_index(r: usize, size: usize, stride: usize, offset: usize) -> usize {
    let phase = r % stride;
    let before: usize = (0..phase)
        .filter(|&p| p != offset)
        .map(|p| phase_len(size, stride, p))
        .sum();
    before + r / stride
}

impl<B: Backend> SkipPerforated<B> {
    pub(super) fn new(
        conv: &Conv2d<B>,
        padding: [usize; 2],
        axis: Axis,
        stride: usize,
        offset: usize,
        side: usize,
    ) -> Result<Self, Error> {
        if stride < 2 || offset >= stride || side < 2 {
            return Err(Error::InvalidSetting(format!(
                "perforation stride {stride} offset {offset} on {side} pixels"
            )));
        }
        let weight = conv.weight.val();
        let device = weight.device();
        let bias = conv.bias.as_ref().map(|b| b.val());
        let host = HostConv::new(
            &weight,
            bias.as_ref(),
            padding,
            &every_element(weight.dims()),
            1.0,
            Positions::Perforated {
                axis,
                stride,
                offset,
            },
        );
        let phases = (0..stride)
            .filter(|&p| p != offset && p < side)
            .map(|p| {
                let (options, skip) = phase_options(axis, stride, p, padding);
                (p, options, skip)
            })
            .collect();
        Ok(Self {
            gather: gather_indices(side, stride, offset, &device),
            weight,
            bias,
            phases,
            axis,
            stride,
            offset,
            host,
        })
    }

    #[cfg(test)]
    pub(crate) fn host(&self) -> Option<&HostConv> {
        self.host.as_ref()
    }

    /// The layer's output: the computed rows (columns) exactly, the skipped ones interpolated.
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let x = match HostConv::first(self.host.as_ref(), x) {
            Ok(y) => return y,
            Err(x) => x,
        };
        let dim = self.axis.tensor_dim();
        let size = x.dims()[dim];
        let parts: Vec<Tensor<B, 4>> = self
            .phases
            .iter()
            .filter(|(p, _, _)| *p < size)
            .map(|(p, options, skip)| {
                let y = conv2d(
                    x.clone(),
                    self.weight.clone(),
                    self.bias.clone(),
                    options.clone(),
                );
                y.narrow(dim, *skip, phase_len(size, self.stride, *p))
            })
            .collect();
        let computed = Tensor::cat(parts, dim);
        let other;
        let gather = if self.gather.size == size {
            &self.gather
        } else {
            other = gather_indices(size, self.stride, self.offset, &x.device());
            &other
        };
        let rows = match &gather.means {
            Some((lo, hi)) => {
                let means = (computed.clone().select(dim, lo.clone())
                    + computed.clone().select(dim, hi.clone()))
                    * 0.5;
                Tensor::cat(vec![computed, means], dim)
            }
            None => computed,
        };
        rows.select(dim, gather.order.clone())
    }
}

/// [`hpvm_sources`] as indices into the concatenated phases and the means, for a side of
/// `size`.
fn gather_indices<B: Backend>(
    size: usize,
    stride: usize,
    offset: usize,
    device: &B::Device,
) -> Gather<B> {
    let index = |r: usize| concat_index(r, size, stride, offset) as i64;
    let computed: usize = (0..stride)
        .filter(|&p| p != offset)
        .map(|p| phase_len(size, stride, p))
        .sum();
    let (mut lo, mut hi, mut order) = (vec![], vec![], vec![]);
    for (a, b) in hpvm_sources(size, stride, offset) {
        if a == b {
            order.push(index(a));
        } else {
            order.push((computed + lo.len()) as i64);
            lo.push(index(a));
            hi.push(index(b));
        }
    }
    let tensor = |v: Vec<i64>| {
        let n = v.len();
        Tensor::from_data(TensorData::new(v, [n]), device)
    };
    Gather {
        size,
        means: (!lo.is_empty()).then(|| (tensor(lo), tensor(hi))),
        order: tensor(order),
    }
}
