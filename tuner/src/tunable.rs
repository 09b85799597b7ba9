//! [`Tunable`]: what the tuner needs of a network to approximate its convolutions, so that a
//! user's own burn network can be tuned as the bundled [`Vgg`] is.
//!
//! The network must be a chain: its input enters convolution 0, each convolution's output goes
//! through [`Tunable::after_conv`] (activation, pooling, anything but another tuned
//! convolution) into the next convolution, and the last one's into [`Tunable::head`], which
//! gives the logits. Each convolution must be a plain stride-1, undilated, ungrouped one with
//! an odd kernel and the padding that keeps its input size ([`crate::ApproxConv::new`] refuses
//! others with an error).

use burn::nn::conv::Conv2d;
use burn::prelude::Backend;
use burn::tensor::Tensor;
use giving_models::Vgg;

/// A network whose convolutions the tuner can approximate (tuner/examples/tune_custom.rs
/// tunes a small user-defined one).
pub trait Tunable<B: Backend> {
    /// Number of convolutions the tuner approximates, in the order the network runs them.
    fn conv_count(&self) -> usize;

    /// Convolution `i`.
    fn conv(&self, i: usize) -> &Conv2d<B>;

    /// Side, in pixels, of the square input of convolution `i`.
    fn conv_side(&self, i: usize) -> usize;

    /// What follows convolution `i`'s output up to the next convolution's input (or up to the
    /// head's, after the last convolution).
    fn after_conv(&self, i: usize, y: Tensor<B, 4>) -> Tensor<B, 4>;

    /// The layers after the last convolution: its `after_conv` output to the logits
    /// `[batch, classes]`.
    fn head(&self, x: Tensor<B, 4>) -> Tensor<B, 2>;

    /// Multiply-adds of the head for one image, which the linear cost model charges at cost
    /// factor 1 (0 if unknown: speedups are then predicted from the convolutions alone).
    fn head_macs(&self) -> usize;
}

impl<B: Backend> Tunable<B> for Vgg<B> {
    fn conv_count(&self) -> usize {
        Vgg::conv_count(self)
    }

    fn conv(&self, i: usize) -> &Conv2d<B> {
        Vgg::conv(self, i)
    }

    fn conv_side(&self, i: usize) -> usize {
        // Pooled after every second convolution.
        self.side() >> (i / 2)
    }

    fn after_conv(&self, i: usize, y: Tensor<B, 4>) -> Tensor<B, 4> {
        Vgg::after_conv(self, i, y)
    }

    fn head(&self, x: Tensor<B, 4>) -> Tensor<B, 2> {
        Vgg::head(self, x)
    }

    fn head_macs(&self) -> usize {
        Vgg::head_macs(self)
    }
}

#[cfg(test)]
mod tests {
    use burn::backend::Flex;
    use burn::nn::conv::Conv2dConfig;
    use burn::nn::{Linear, LinearConfig, PaddingConfig2d};
    use giving_models::data::{Split, shapes};

    use super::*;
    use crate::knob::Knob;
    use crate::network::{Dataset, Network, accuracy};
    use crate::session::tune;
    use crate::settings::TuneSettings;

    /// A user's network: two same-padded convolutions on the full 32-pixel images with ReLU
    /// after each, a global mean and a linear head.
    #[derive(Debug)]
    struct Tiny<B: Backend> {
        convs: Vec<Conv2d<B>>,
        fc: Linear<B>,
    }

    impl<B: Backend> Tunable<B> for Tiny<B> {
        fn conv_count(&self) -> usize {
            2
        }
        fn conv(&self, i: usize) -> &Conv2d<B> {
            &self.convs[i]
        }
        fn conv_side(&self, _: usize) -> usize {
            32
        }
        fn after_conv(&self, _: usize, y: Tensor<B, 4>) -> Tensor<B, 4> {
            burn::tensor::activation::relu(y)
        }
        fn head(&self, x: Tensor<B, 4>) -> Tensor<B, 2> {
            let [n, c, _, _] = x.dims();
            self.fc.forward(x.mean_dim(2).mean_dim(3).reshape([n, c]))
        }
        fn head_macs(&self) -> usize {
            40
        }
    }

    #[test]
    fn a_user_defined_network_is_tuned_through_tunable() {
        let device = Default::default();
        // Seeded under the models' lock (tests run side by side; burn's generator is shared).
        let convs = giving_models::model::init_seeded::<Flex, _>(&device, 5, |d| {
            let conv = |c_in, c_out| {
                Conv2dConfig::new([c_in, c_out], [3, 3])
                    .with_padding(PaddingConfig2d::Same)
                    .init::<Flex>(d)
            };
            vec![conv(3, 4), conv(4, 4)]
        });
        let fc = giving_models::model::init_seeded::<Flex, _>(&device, 6, |d| {
            LinearConfig::new(4, 10).init(d)
        });
        let tiny = Tiny { convs, fc };
        let images = shapes(0, Split::Tune, 12);
        // The network's own exact pass, written without the tuner.
        let x = Tensor::<Flex, 4>::from_data(
            burn::tensor::TensorData::new(images.features.clone(), [12, 3, 32, 32]),
            &device,
        );
        let own = tiny.head(tiny.after_conv(
            1,
            tiny.convs[1].forward(tiny.after_conv(0, tiny.convs[0].forward(x))),
        ));
        let own = accuracy(
            &own.into_data().to_vec::<f32>().unwrap(),
            &images.labels,
            10,
        );

        let net = Network::new(tiny, Knob::all()).unwrap();
        assert_eq!(net.layer_count(), 2);
        assert_eq!(
            net.conv_macs(),
            &[(32 * 32 * 4 * 3 * 9) as f64, (32 * 32 * 4 * 4 * 9) as f64]
        );
        let tune_set = Dataset::new(&images, 32, &device);
        let test_set = Dataset::new(&shapes(0, Split::Test, 12), 32, &device);
        let mut settings = TuneSettings::new();
        settings.max_iter = 8;
        settings.population = 4;
        settings.repeats = 1;
        settings.qos_keep_threshold = 100.0;
        let tuning = tune(&net, &tune_set, &test_set, &settings).unwrap();
        assert_eq!(tuning.baseline_qos, own);
        assert_eq!(tuning.configs.len(), 8);
        let knobs = net.knobs();
        for c in &tuning.configs {
            let config = c.knob_indices(knobs).unwrap();
            assert_eq!(c.qos, net.qos(&config, &tune_set).unwrap(), "{c:?}");
        }
        assert!(
            tuning
                .configs
                .iter()
                .any(|c| c.knobs.iter().any(|k| k != "baseline"))
        );
    }
}
