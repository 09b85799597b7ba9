//! A VGG-style convolutional classifier for 32×32 RGB images: the network `giving tune`
//! approximates.

use burn::config::Config;
use burn::module::{Initializer, Module};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Linear, LinearConfig, PaddingConfig2d, Relu};
use burn::prelude::Backend;
use burn::tensor::Tensor;

use super::Classifier;

/// Configuration of a [`Vgg`]: `3×3` same-padded convolutions, each followed by ReLU, with
/// `2×2` max pooling after every second one, then a hidden linear layer and the classifier.
#[derive(Config, Debug)]
pub struct VggConfig {
    /// Side of the (square, three-channel) input images; divisible by `2^(convs / 2)`.
    pub side: usize,
    /// Output channels of each convolution, in order (an even count, 6 or 8 for the bundled
    /// network).
    #[config(default = "vec![8, 8, 16, 16, 32, 32]")]
    pub channels: Vec<usize>,
    /// Width of the hidden linear layer.
    #[config(default = 64)]
    pub hidden: usize,
    /// Number of classes.
    pub classes: usize,
}

impl VggConfig {
    /// Side of the feature maps entering convolution `i` (halved after every second one).
    pub fn side_at(&self, i: usize) -> usize {
        self.side >> (i / 2)
    }

    /// Initialises the model on `device` (with the backend's current random state).
    pub fn init<B: Backend>(&self, device: &B::Device) -> Vgg<B> {
        let mut c_in = 3;
        let convs = self
            .channels
            .iter()
            .map(|&c_out| {
                // He initialisation: with burn's default (Kaiming uniform with gain 1/√3) the
                // signal shrinks layer after layer and a six-layer stack without normalisation
                // does not start learning.
                let conv = Conv2dConfig::new([c_in, c_out], [3, 3])
                    .with_padding(PaddingConfig2d::Same)
                    .with_initializer(he())
                    .init(device);
                c_in = c_out;
                conv
            })
            .collect::<Vec<_>>();
        let pooled = self.side_at(self.channels.len());
        Vgg {
            convs,
            pool: MaxPool2dConfig::new([2, 2]).init(),
            fc1: LinearConfig::new(c_in * pooled * pooled, self.hidden)
                .with_initializer(he())
                .init(device),
            fc2: LinearConfig::new(self.hidden, self.classes).init(device),
            activation: Relu::new(),
            side: self.side,
        }
    }
}

/// Kaiming normal initialisation for layers followed by ReLU.
fn he() -> Initializer {
    Initializer::KaimingNormal {
        gain: std::f64::consts::SQRT_2,
        fan_out_only: false,
    }
}

/// A VGG-style network. Its forward pass is open layer by layer ([`Vgg::conv`],
/// [`Vgg::after_conv`], [`Vgg::head`]) so that a tuner can replace any convolution with an
/// approximation of it.
#[derive(Module, Debug)]
pub struct Vgg<B: Backend> {
    convs: Vec<Conv2d<B>>,
    pool: MaxPool2d,
    fc1: Linear<B>,
    fc2: Linear<B>,
    activation: Relu,
    side: usize,
}

impl<B: Backend> Vgg<B> {
    /// Number of convolution layers.
    pub fn conv_count(&self) -> usize {
        self.convs.len()
    }

    /// Convolution layer `i` (`i < conv_count()`).
    pub fn conv(&self, i: usize) -> &Conv2d<B> {
        &self.convs[i]
    }

    /// Side of the (square) input images.
    pub fn side(&self) -> usize {
        self.side
    }

    /// Multiply-adds of the linear layers (the head) for one image.
    pub fn head_macs(&self) -> usize {
        let [a, b] = self.fc1.weight.dims();
        let [c, d] = self.fc2.weight.dims();
        a * b + c * d
    }

    /// What follows convolution `i`: ReLU, then `2×2` max pooling after every second layer.
    ///
    /// Where both apply, the pooling runs first: ReLU is monotonic, so the maximum of the
    /// rectified values is the rectified maximum, and ReLU then touches a quarter of the values.
    ///
    /// On a host backend without autodiff (inference on `Flex`) both run as one loop
    /// ([`crate::host::relu_max_pool2`]): burn's pooling there costs ten times as much, and
    /// the result is the same.
    pub fn after_conv(&self, i: usize, y: Tensor<B, 4>) -> Tensor<B, 4> {
        if i % 2 == 1 {
            if crate::host::on_host::<B>() {
                crate::host::relu_max_pool2(y)
            } else {
                self.activation.forward(self.pool.forward(y))
            }
        } else {
            self.activation.forward(y)
        }
    }

    /// Logits `[batch, classes]` of the last convolution block's output.
    pub fn head(&self, x: Tensor<B, 4>) -> Tensor<B, 2> {
        let x: Tensor<B, 2> = x.flatten(1, 3);
        self.fc2
            .forward(self.activation.forward(self.fc1.forward(x)))
    }

    /// Logits `[batch, classes]` of images `[batch, 3, side, side]`, exactly.
    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let mut x = images;
        for (i, conv) in self.convs.iter().enumerate() {
            x = self.after_conv(i, conv.forward(x));
        }
        self.head(x)
    }
}

impl<B: Backend> Classifier<B> for Vgg<B> {
    fn logits(&self, features: Tensor<B, 2>) -> Tensor<B, 2> {
        let [batch, _] = features.dims();
        self.forward(features.reshape([batch, 3, self.side, self.side]))
    }
}
