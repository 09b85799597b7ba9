//! Filter sampling: every `stride`-th element of each flattened `(channel, ky, kx)` filter is
//! skipped and the kept ones are rescaled, computed as an im2col over the kept elements only
//! and a smaller matrix product.

use burn::nn::conv::Conv2d;
use burn::prelude::Backend;
use burn::tensor::ops::PadMode;
use burn::tensor::{Int, Tensor, TensorData};

use crate::error::Error;

/// For each kernel tap `(ky, kx)`: the input channels whose element `(c, ky, kx)` is kept.
type Taps<B> = Vec<(usize, usize, Tensor<B, 1, Int>)>;

/// A convolution with sampled filters.
#[derive(Debug, Clone)]
pub struct Sampled<B: Backend> {
    /// The kept, rescaled weights `[out, kept]`, columns in tap-major order.
    weight: Tensor<B, 3>,
    bias: Option<Tensor<B, 3>>,
    taps: Taps<B>,
    padding: [usize; 2],
}

/// The flattened filter elements `c·kh·kw + ky·kw + kx` kept by sampling with `stride` and
/// `offset` (element `i` is skipped when `i % stride == offset`), grouped by tap `(ky, kx)`:
/// `(ky, kx, channels)` for each tap with at least one kept channel.
pub(crate) fn kept_elements(
    channels: usize,
    kernel: [usize; 2],
    stride: usize,
    offset: usize,
) -> Vec<(usize, usize, Vec<usize>)> {
    let [kh, kw] = kernel;
    let mut taps = vec![];
    for ky in 0..kh {
        for kx in 0..kw {
            let kept: Vec<usize> = (0..channels)
                .filter(|c| (c * kh * kw + ky * kw + kx) % stride != offset)
                .collect();
            if !kept.is_empty() {
                taps.push((ky, kx, kept));
            }
        }
    }
    taps
}

impl<B: Backend> Sampled<B> {
    pub(super) fn new(
        conv: &Conv2d<B>,
        padding: [usize; 2],
        stride: usize,
        offset: usize,
    ) -> Result<Self, Error> {
        if stride < 2 || offset >= stride {
            return Err(Error::InvalidSetting(format!(
                "sampling stride {stride} offset {offset}"
            )));
        }
        let weight = conv.weight.val();
        let device = weight.device();
        let [out, channels, kh, kw] = weight.dims();
        let taps = kept_elements(channels, [kh, kw], stride, offset);
        let columns: Vec<i64> = taps
            .iter()
            .flat_map(|(ky, kx, cs)| cs.iter().map(move |c| (c * kh * kw + ky * kw + kx) as i64))
            .collect();
        let total = channels * kh * kw;
        let kept = columns.len();
        if kept == 0 {
            return Err(Error::InvalidSetting(format!(
                "sampling stride {stride} keeps no element of a {channels}×{kh}×{kw} filter"
            )));
        }
        // Rescale so that a filter's response to a constant input keeps its expected value.
        let scale = total as f32 / kept as f32;
        let flat: Tensor<B, 2> = weight.reshape([out, total]);
        let index = Tensor::from_data(TensorData::new(columns, [kept]), &device);
        let weight = (flat.select(1, index) * scale).reshape([1, out, kept]);
        let taps = taps
            .into_iter()
            .map(|(ky, kx, cs)| {
                let n = cs.len();
                let cs: Vec<i64> = cs.into_iter().map(|c| c as i64).collect();
                (ky, kx, Tensor::from_data(TensorData::new(cs, [n]), &device))
            })
            .collect();
        Ok(Self {
            weight,
            bias: conv.bias.as_ref().map(|b| b.val().reshape([1, out, 1])),
            taps,
            padding,
        })
    }

    /// The layer's output: `weight[out, kept] × columns[kept, h·w]` per image, plus the bias.
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let [batch, _, h, w] = x.dims();
        let [ph, pw] = self.padding;
        let x = x.pad((pw, pw, ph, ph), PadMode::Constant(0.0));
        // im2col over the kept elements only: one shifted view per tap, its kept channels.
        let columns: Vec<Tensor<B, 4>> = self
            .taps
            .iter()
            .map(|(ky, kx, channels)| {
                x.clone()
                    .narrow(2, *ky, h)
                    .narrow(3, *kx, w)
                    .select(1, channels.clone())
            })
            .collect();
        let columns: Tensor<B, 3> =
            Tensor::cat(columns, 1).reshape([batch as i64, -1, (h * w) as i64]);
        let mut y = self.weight.clone().matmul(columns);
        if let Some(bias) = &self.bias {
            y = y + bias.clone();
        }
        let out = y.dims()[1];
        y.reshape([batch, out, h, w])
    }
}
