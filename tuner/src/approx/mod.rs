//! Approximate convolutions: each [`Knob`] turned into a cheaper computation of one layer.
//!
//! An [`ApproxConv`] is prepared once per layer and knob (its weights resliced, its index
//! tensors built) and then run on any batch of the layer's input size.

mod host_conv;
mod hpvm_rows;
mod perforate;
mod precision;
mod sample;
mod skip_perforate;
#[cfg(test)]
mod tests;

use burn::nn::PaddingConfig2d;
use burn::nn::conv::Conv2d;
use burn::prelude::Backend;
use burn::tensor::Tensor;

use crate::error::Error;
use crate::knob::Knob;

pub use perforate::Perforated;
pub use precision::{HalfPrecision, InHalf};
pub use sample::Sampled;
pub use skip_perforate::SkipPerforated;

/// One convolution layer computed with a knob.
#[derive(Debug, Clone)]
pub enum ApproxConv<B: Backend> {
    /// The exact layer (boxed: a `Conv2d` is several times the size of the other variants).
    Exact(Box<Conv2d<B>>),
    /// HPVM's perforated convolution (one row or column in `stride` skipped).
    Perforate(SkipPerforated<B>),
    /// The sparse perforated convolution (one row or column in `stride` computed).
    PerforateSparse(Perforated<B>),
    /// A convolution with sampled filters.
    Sample(Sampled<B>),
    /// A half-precision convolution.
    Fp16(HalfPrecision<B>),
    /// HPVM's perforation or sampling computed in half precision.
    InHalf(InHalf<B>),
}

impl<B: Backend> ApproxConv<B> {
    /// Prepares `conv` computed with `knob`, for inputs of `side × side` pixels.
    ///
    /// The layer must be a stride-1, undilated, ungrouped convolution with an odd kernel and
    /// `Same` (or symmetric explicit) padding, as the bundled VGG's are.
    pub fn new(conv: &Conv2d<B>, knob: Knob, side: usize) -> Result<Self, Error> {
        if knob == Knob::Baseline {
            return Ok(ApproxConv::Exact(Box::new(conv.clone())));
        }
        let padding = same_padding(conv)?;
        Ok(match knob {
            Knob::Baseline => ApproxConv::Exact(Box::new(conv.clone())),
            Knob::Perforate {
                axis,
                stride,
                offset,
            } => ApproxConv::Perforate(SkipPerforated::new(
                conv, padding, axis, stride, offset, side,
            )?),
            Knob::PerforateSparse {
                axis,
                stride,
                offset,
            } => ApproxConv::PerforateSparse(Perforated::new(
                conv, padding, axis, stride, offset, side,
            )?),
            Knob::Sample { stride, offset } => {
                ApproxConv::Sample(Sampled::new(conv, padding, stride, offset)?)
            }
            Knob::Fp16 => ApproxConv::Fp16(HalfPrecision::new(conv, padding)),
            Knob::PerforateFp16 {
                axis,
                stride,
                offset,
            } => {
                let f32_knob = Knob::Perforate {
                    axis,
                    stride,
                    offset,
                };
                ApproxConv::InHalf(InHalf::new(conv, padding, f32_knob, side)?)
            }
            Knob::SampleFp16 { stride, offset } => {
                let f32_knob = Knob::Sample { stride, offset };
                ApproxConv::InHalf(InHalf::new(conv, padding, f32_knob, side)?)
            }
        })
    }

    /// The host product this layer runs on a host backend, if it runs one (tests check its
    /// shape).
    #[cfg(test)]
    pub(crate) fn host(&self) -> Option<&host_conv::HostConv> {
        match self {
            ApproxConv::Perforate(p) => p.host(),
            ApproxConv::Sample(Sampled::Im2col(s)) => s.host(),
            _ => None,
        }
    }

    /// The layer's output for `x` `[batch, channels, side, side]`.
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        match self {
            ApproxConv::Exact(conv) => conv.forward(x),
            ApproxConv::Perforate(p) => p.forward(x),
            ApproxConv::PerforateSparse(p) => p.forward(x),
            ApproxConv::Sample(s) => s.forward(x),
            ApproxConv::Fp16(h) => h.forward(x),
            ApproxConv::InHalf(h) => h.forward(x),
        }
    }
}

/// The exact layer computed as the knobs are on a host backend (`Flex`): one im2col of every
/// position and filter element and one matrix product per image. It tells how much of a
/// knob's speedup over burn's `conv2d` (the exact layer the tuner measures against) is the
/// knob's saved work and how much the kernel's: on the bundled VGG on `Flex` this product is
/// itself faster than `conv2d` (docs/tuner.md, "Each knob alone"). `None` where the backend
/// is not a host backend or the layer cannot be approximated.
pub fn exact_on_host<B: Backend>(conv: &Conv2d<B>, x: Tensor<B, 4>) -> Option<Tensor<B, 4>> {
    let padding = same_padding(conv).ok()?;
    let bias = conv.bias.as_ref().map(|b| b.val());
    host_conv::HostConv::new(
        &conv.weight.val(),
        bias.as_ref(),
        padding,
        &host_conv::every_element(conv.weight.dims()),
        1.0,
        host_conv::Positions::All,
    )?
    .forward(x)
    .ok()
}

/// The `[rows, cols]` padding of a stride-1 convolution that keeps the input size, or why the
/// layer cannot be approximated.
fn same_padding<B: Backend>(conv: &Conv2d<B>) -> Result<[usize; 2], Error> {
    let [kh, kw] = conv.kernel_size;
    let unsupported = |why: &str| {
        Err(Error::InvalidSetting(format!(
            "cannot approximate a convolution {why}"
        )))
    };
    if conv.stride != [1, 1] || conv.dilation != [1, 1] || conv.groups != 1 {
        return unsupported("with a stride, dilation or groups (only plain 3×3-like layers are)");
    }
    if kh % 2 == 0 || kw % 2 == 0 {
        return unsupported("with an even kernel");
    }
    match conv.padding {
        PaddingConfig2d::Same => Ok([kh / 2, kw / 2]),
        PaddingConfig2d::Explicit(top, left, bottom, right)
            if top == bottom && left == right && top == kh / 2 && left == kw / 2 =>
        {
            Ok([top, left])
        }
        _ => unsupported("whose padding does not keep the input size"),
    }
}
