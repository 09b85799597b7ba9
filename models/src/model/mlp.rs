//! A multi-layer perceptron classifier.

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig, Relu};
use burn::prelude::Backend;
use burn::tensor::Tensor;

use super::Classifier;

/// Configuration of an [`Mlp`]: `input → hidden[0] → … → classes`, ReLU between layers.
#[derive(Config, Debug)]
pub struct MlpConfig {
    /// Number of input features.
    pub input: usize,
    /// Widths of the hidden layers.
    pub hidden: Vec<usize>,
    /// Number of classes.
    pub classes: usize,
}

impl MlpConfig {
    /// Initialises the model on `device` (with the backend's current random state).
    pub fn init<B: Backend>(&self, device: &B::Device) -> Mlp<B> {
        let mut widths = vec![self.input];
        widths.extend(&self.hidden);
        widths.push(self.classes);
        let layers = widths
            .windows(2)
            .map(|w| LinearConfig::new(w[0], w[1]).init(device))
            .collect();
        Mlp {
            layers,
            activation: Relu::new(),
        }
    }
}

/// A multi-layer perceptron: linear layers with ReLU in between.
#[derive(Module, Debug)]
pub struct Mlp<B: Backend> {
    layers: Vec<Linear<B>>,
    activation: Relu,
}

#[giving::probe]
impl<B: Backend> Mlp<B> {
    /// Logits `[batch, classes]` of a batch `[batch, input]`.
    pub fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        let last = self.layers.len() - 1;
        self.layers.iter().enumerate().fold(x, |x, (i, layer)| {
            let x = layer.forward(x);
            if i < last {
                self.activation.forward(x)
            } else {
                x
            }
        })
    }
}

impl<B: Backend> Classifier<B> for Mlp<B> {
    fn logits(&self, features: Tensor<B, 2>) -> Tensor<B, 2> {
        self.forward(features)
    }
}
