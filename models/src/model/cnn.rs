//! A small convolutional classifier for square one-channel images.

use burn::config::Config;
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Linear, LinearConfig, PaddingConfig2d, Relu};
use burn::prelude::Backend;
use burn::tensor::Tensor;

use super::Classifier;

/// Configuration of a [`Cnn`]: two `3×3` convolutions, each followed by ReLU and `2×2` max
/// pooling, then a hidden linear layer and the classifier.
#[derive(Config, Debug)]
pub struct CnnConfig {
    /// Side of the (square, one-channel) input images; a multiple of 4.
    pub side: usize,
    /// Channels of the two convolutions.
    #[config(default = "[8, 16]")]
    pub channels: [usize; 2],
    /// Width of the hidden linear layer.
    #[config(default = 64)]
    pub hidden: usize,
    /// Number of classes.
    pub classes: usize,
}

impl CnnConfig {
    /// Initialises the model on `device` (with the backend's current random state).
    pub fn init<B: Backend>(&self, device: &B::Device) -> Cnn<B> {
        let [c1, c2] = self.channels;
        let conv = |c_in, c_out| {
            Conv2dConfig::new([c_in, c_out], [3, 3])
                .with_padding(PaddingConfig2d::Same)
                .init(device)
        };
        let pooled = self.side / 4;
        Cnn {
            conv1: conv(1, c1),
            conv2: conv(c1, c2),
            pool: MaxPool2dConfig::new([2, 2]).init(),
            fc1: LinearConfig::new(c2 * pooled * pooled, self.hidden).init(device),
            fc2: LinearConfig::new(self.hidden, self.classes).init(device),
            activation: Relu::new(),
            side: self.side,
        }
    }
}

/// A small convolutional network: conv–ReLU–pool twice, then two linear layers.
#[derive(Module, Debug)]
pub struct Cnn<B: Backend> {
    conv1: Conv2d<B>,
    conv2: Conv2d<B>,
    pool: MaxPool2d,
    fc1: Linear<B>,
    fc2: Linear<B>,
    activation: Relu,
    side: usize,
}

#[giving::probe]
impl<B: Backend> Cnn<B> {
    /// Logits `[batch, classes]` of images `[batch, 1, side, side]`.
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self
            .pool
            .forward(self.activation.forward(self.conv1.forward(images)));
        let x = self
            .pool
            .forward(self.activation.forward(self.conv2.forward(x)));
        let x: Tensor<B, 2> = x.flatten(1, 3);
        self.fc2
            .forward(self.activation.forward(self.fc1.forward(x)))
    }
}

impl<B: Backend> Classifier<B> for Cnn<B> {
    fn logits(&self, features: Tensor<B, 2>) -> Tensor<B, 2> {
        let [batch, _] = features.dims();
        self.forward(features.reshape([batch, 1, self.side, self.side]))
    }
}
