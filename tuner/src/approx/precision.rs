//! Reduced precision: the convolution ([`HalfPrecision`]) and HPVM's FP16 perforation and
//! sampling ([`InHalf`]) computed on f16 tensors.
//!
//! The `flex` CPU backend has an f16 convolution; whether it is faster than f32 depends on
//! the CPU (without native f16 arithmetic it converts, and is slower). GPU backends (wgpu,
//! cuda) run it natively. docs/tuner.md reports what was measured here.

use burn::module::Param;
use burn::nn::conv::Conv2d;
use burn::prelude::Backend;
use burn::tensor::module::conv2d;
use burn::tensor::ops::ConvOptions;
use burn::tensor::{FloatDType, Tensor};

use super::sample::Sampled;
use super::skip_perforate::SkipPerforated;
use crate::error::Error;
use crate::knob::Knob;

/// A convolution in half precision: inputs, weights, bias and accumulation in f16, the
/// output cast back to f32.
#[derive(Debug, Clone)]
pub struct HalfPrecision<B: Backend> {
    weight: Tensor<B, 4>,
    bias: Option<Tensor<B, 1>>,
    padding: [usize; 2],
}

impl<B: Backend> HalfPrecision<B> {
    pub(super) fn new(conv: &Conv2d<B>, padding: [usize; 2]) -> Self {
        Self {
            weight: conv.weight.val().cast(FloatDType::F16),
            bias: conv.bias.as_ref().map(|b| b.val().cast(FloatDType::F16)),
            padding,
        }
    }

    /// The layer's output, computed in f16 and returned in f32.
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let options = ConvOptions::new([1, 1], self.padding, [1, 1], 1);
        conv2d(
            x.cast(FloatDType::F16),
            self.weight.clone(),
            self.bias.clone(),
            options,
        )
        .cast(FloatDType::F32)
    }
}

/// An f32 knob's computation run on f16 tensors, as HPVM's `perf_fp16` and `samp_fp16` are
/// its `perf` and `samp` in half precision: the layer's weights and bias are cast to f16 once,
/// the f32 knob is prepared on them (so the sampled weights are rescaled in f16), and each
/// forward casts the input to f16, runs every step of that knob on f16 tensors (the strided
/// convolutions, the gather and the mean of the neighbours; the im2col and the matrix
/// product) and casts the output back to f32.
///
/// These are burn's tensor operations, the same passes as the f32 knob plus the two casts:
/// no fused kernel.
#[derive(Debug, Clone)]
pub struct InHalf<B: Backend> {
    inner: HalfKnob<B>,
}

/// The f32 knobs that have an FP16 version, prepared on the f16 layer. (Not an `ApproxConv`:
/// the module that defines it uses this one.)
#[derive(Debug, Clone)]
enum HalfKnob<B: Backend> {
    Perforate(SkipPerforated<B>),
    Sample(Sampled<B>),
}

impl<B: Backend> InHalf<B> {
    /// `knob` is the f32 knob (`Perforate` or `Sample`) to run in f16; `padding` the layer's.
    pub(super) fn new(
        conv: &Conv2d<B>,
        padding: [usize; 2],
        knob: Knob,
        side: usize,
    ) -> Result<Self, Error> {
        // New parameters from the layer's values: a clone of a parameter not yet initialised
        // would initialise itself, with other values than the layer's.
        let mut half = conv.clone();
        half.weight = Param::from_tensor(conv.weight.val().cast(FloatDType::F16));
        half.bias = conv
            .bias
            .as_ref()
            .map(|b| Param::from_tensor(b.val().cast(FloatDType::F16)));
        let inner = match knob {
            Knob::Perforate {
                axis,
                stride,
                offset,
            } => HalfKnob::Perforate(SkipPerforated::new(
                &half, padding, axis, stride, offset, side,
            )?),
            Knob::Sample { stride, offset } => {
                HalfKnob::Sample(Sampled::new(&half, padding, stride, offset)?)
            }
            other => {
                return Err(Error::InvalidSetting(format!(
                    "{} has no FP16 version (only HPVM's perforation and sampling do)",
                    other.id()
                )));
            }
        };
        Ok(Self { inner })
    }

    /// The layer's output, computed in f16 and returned in f32.
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let x = x.cast(FloatDType::F16);
        match &self.inner {
            HalfKnob::Perforate(p) => p.forward(x),
            HalfKnob::Sample(s) => s.forward(x),
        }
        .cast(FloatDType::F32)
    }
}
