//! Reduced precision: the convolution computed on f16 tensors.
//!
//! The `flex` CPU backend has an f16 convolution; whether it is faster than f32 depends on
//! the CPU (without native f16 arithmetic it converts, and is slower). GPU backends (wgpu,
//! cuda) run it natively. docs/tuner.md reports what was measured here.

use burn::nn::conv::Conv2d;
use burn::prelude::Backend;
use burn::tensor::module::conv2d;
use burn::tensor::ops::ConvOptions;
use burn::tensor::{FloatDType, Tensor};

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
