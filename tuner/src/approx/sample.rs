//! Filter sampling as HPVM and PredTuner define it ([`hpvm_skipped`]): one element in
//! `stride` of each flattened `(channel, ky, kx)` filter is skipped and the kept ones are
//! multiplied by `stride / (stride − 1)`.
//!
//! When the skipped elements are the same kernel taps for every channel (a one-channel layer
//! with `stride` 3 on a 3×3 kernel: a whole kernel column), the sampled layer is a native
//! convolution with the smaller, possibly dilated, kernel of the kept taps
//! ([`Sampled::Kernel`]). Otherwise the kept taps differ from channel to channel and it is
//! computed as an im2col over the kept elements only and a smaller matrix product
//! ([`Sampled::Im2col`]).

use burn::nn::conv::Conv2d;
use burn::prelude::Backend;
use burn::tensor::module::conv2d;
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Int, Tensor, TensorData};

use super::host_conv::{HostConv, Positions};
use crate::error::Error;

/// For each kernel tap `(ky, kx)`: the input channels whose element `(c, ky, kx)` is kept.
type Taps<B> = Vec<(usize, usize, Tensor<B, 1, Int>)>;

/// A convolution with sampled filters.
#[derive(Debug, Clone)]
pub enum Sampled<B: Backend> {
    /// The same taps kept for every channel: a native convolution with a smaller kernel.
    Kernel(SampledKernel<B>),
    /// Taps kept per channel: an im2col over the kept elements and a matrix product.
    Im2col(SampledIm2col<B>),
}

/// Filter sampling as a native convolution over the kept taps: the kept rows and columns of
/// the kernel (each an arithmetic progression, so a dilation), rescaled.
#[derive(Debug, Clone)]
pub struct SampledKernel<B: Backend> {
    weight: Tensor<B, 4>,
    bias: Option<Tensor<B, 1>>,
    options: ConvOptions<2>,
    /// Outputs to drop before position 0, rows then columns.
    skip: [usize; 2],
}

/// Filter sampling as an im2col over the kept elements and a matrix product.
#[derive(Debug, Clone)]
pub struct SampledIm2col<B: Backend> {
    /// The kept, rescaled weights `[out, kept]`, columns in tap-major order.
    weight: Tensor<B, 3>,
    bias: Option<Tensor<B, 3>>,
    taps: Taps<B>,
    padding: [usize; 2],
    /// The same im2col and product on the host (each image's columns built in cache and
    /// multiplied at once), on a backend that keeps its tensors there.
    host: Option<HostConv>,
}

/// Whether sampling with `stride` and `offset` skips element `(c, ky, kx)` of a `kernel`
/// filter, as PredTuner's `Conv2dSampling` and HPVM's CPU runtime decide: the flattened
/// elements `offset, offset + stride, …` — except that `stride` 3 on a 3×3 kernel would skip
/// the same kernel column in every channel, so there channel `c` skips its own elements
/// `(c + offset) % 3, … + 3, …`.
pub(crate) fn hpvm_skipped(
    c: usize,
    [kh, kw]: [usize; 2],
    stride: usize,
    offset: usize,
    ky: usize,
    kx: usize,
) -> bool {
    let within = ky * kw + kx;
    if stride == 3 && kh == 3 && kw == 3 {
        within % 3 == (c + offset) % 3
    } else {
        (c * kh * kw + within) % stride == offset
    }
}

/// The flattened filter elements `c·kh·kw + ky·kw + kx` kept by sampling with `stride` and
/// `offset` ([`hpvm_skipped`]), grouped by tap `(ky, kx)`: `(ky, kx, channels)` for each tap
/// with at least one kept channel.
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
                .filter(|&c| !hpvm_skipped(c, kernel, stride, offset, ky, kx))
                .collect();
            if !kept.is_empty() {
                taps.push((ky, kx, kept));
            }
        }
    }
    taps
}

/// The kept kernel positions along one axis as `(first, step, count)`, when they form an
/// arithmetic progression.
fn progression(positions: &[usize]) -> Option<(usize, usize, usize)> {
    let first = *positions.first()?;
    let step = positions.get(1).map_or(1, |p| p - first);
    positions
        .iter()
        .enumerate()
        .all(|(i, &p)| p == first + i * step)
        .then_some((first, step, positions.len()))
}

/// The symmetric padding and the outputs to drop so that a convolution over kernel positions
/// `first, first + step, …` (`count` of them) of a kernel padded by `pad` gives the same
/// output positions as the full kernel: output `j` of the full kernel is output
/// `j + first − pad + padding` of the reduced one.
fn reduced_padding(pad: usize, (first, step, count): (usize, usize, usize)) -> (usize, usize) {
    let last = first + step * (count - 1);
    let padding = pad.saturating_sub(first).max(last.saturating_sub(pad));
    (padding, first + padding - pad)
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
        let [_, channels, kh, kw] = conv.weight.dims();
        let taps = kept_elements(channels, [kh, kw], stride, offset);
        let scale = stride as f32 / (stride - 1) as f32;
        let every_channel = taps.iter().all(|(_, _, cs)| cs.len() == channels);
        let mut rows: Vec<usize> = taps.iter().map(|t| t.0).collect();
        let mut cols: Vec<usize> = taps.iter().map(|t| t.1).collect();
        cols.sort_unstable();
        cols.dedup();
        rows.sort_unstable();
        rows.dedup();
        let rectangle = taps.len() == rows.len() * cols.len();
        if let (true, true, Some(r), Some(c)) = (
            every_channel,
            rectangle,
            progression(&rows),
            progression(&cols),
        ) {
            return Ok(Sampled::Kernel(SampledKernel::new(
                conv, padding, &rows, &cols, r, c, scale,
            )));
        }
        Ok(Sampled::Im2col(SampledIm2col::new(
            conv, padding, stride, offset,
        )?))
    }

    /// The layer's output for `x` `[batch, channels, side, side]`.
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        match self {
            Sampled::Kernel(k) => k.forward(x),
            Sampled::Im2col(i) => i.forward(x),
        }
    }
}

impl<B: Backend> SampledKernel<B> {
    fn new(
        conv: &Conv2d<B>,
        [ph, pw]: [usize; 2],
        rows: &[usize],
        cols: &[usize],
        r: (usize, usize, usize),
        c: (usize, usize, usize),
        scale: f32,
    ) -> Self {
        let weight = conv.weight.val();
        let device = weight.device();
        let index = |v: &[usize]| {
            let v: Vec<i64> = v.iter().map(|&i| i as i64).collect();
            let n = v.len();
            Tensor::<B, 1, Int>::from_data(TensorData::new(v, [n]), &device)
        };
        let weight = weight.select(2, index(rows)).select(3, index(cols)) * scale;
        let (pad_r, skip_r) = reduced_padding(ph, r);
        let (pad_c, skip_c) = reduced_padding(pw, c);
        Self {
            weight,
            bias: conv.bias.as_ref().map(|b| b.val()),
            options: ConvOptions::new([1, 1], [pad_r, pad_c], [r.1, c.1], 1),
            skip: [skip_r, skip_c],
        }
    }

    fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let [_, _, h, w] = x.dims();
        let y = conv2d(
            x,
            self.weight.clone(),
            self.bias.clone(),
            self.options.clone(),
        );
        let [skip_r, skip_c] = self.skip;
        y.narrow(2, skip_r, h).narrow(3, skip_c, w)
    }
}

impl<B: Backend> SampledIm2col<B> {
    fn new(
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
        // HPVM's rescale (`fac` in its CPU runtime, PredTuner's `interp_rate` 1): the kept
        // elements times stride / (stride − 1), whatever the exact count kept.
        let scale = stride as f32 / (stride - 1) as f32;
        let bias = conv.bias.as_ref().map(|b| b.val());
        let elements: Vec<(usize, usize, usize)> = taps
            .iter()
            .flat_map(|(ky, kx, cs)| cs.iter().map(move |&c| (c, *ky, *kx)))
            .collect();
        let host = HostConv::new(
            &weight,
            bias.as_ref(),
            padding,
            &elements,
            scale,
            Positions::All,
        );
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
            bias: bias.map(|b| b.reshape([1, out, 1])),
            taps,
            padding,
            host,
        })
    }

    #[cfg(test)]
    pub(crate) fn host(&self) -> Option<&HostConv> {
        self.host.as_ref()
    }

    /// The layer's output: `weight[out, kept] × columns[kept, h·w]` per image, plus the bias.
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let x = match HostConv::first(self.host.as_ref(), x) {
            Ok(y) => return y,
            Err(x) => x,
        };
        let [batch, _, h, w] = x.dims();
        let [ph, pw] = self.padding;
        let x = pad_zeros(x, ph, pw);
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

/// `x` `[batch, channels, h, w]` with `ph` rows and `pw` columns of zeros on each side, in
/// `x`'s dtype: burn 0.21's `pad` builds its padded tensor in the default float dtype, which
/// `flex` refuses to assign an f16 tensor into.
fn pad_zeros<B: Backend>(x: Tensor<B, 4>, ph: usize, pw: usize) -> Tensor<B, 4> {
    let [batch, channels, h, w] = x.dims();
    let padded = Tensor::zeros(
        [batch, channels, h + 2 * ph, w + 2 * pw],
        (&x.device(), x.dtype()),
    );
    padded.slice_assign([0..batch, 0..channels, ph..ph + h, pw..pw + w], x)
}
