//! Tunes a small user-defined burn network: three convolutions (8, 16, 16 channels, max
//! pooling after the first two, global average pooling after the third) and a linear
//! classifier, trained briefly on the procedural `shapes` images, then tuned through the
//! [`Tunable`] interface exactly as `giving tune` tunes the bundled VGG.
//!
//! `cargo run --release -p giving-tuner --example tune_custom -- [EPOCHS] [ITERATIONS]`

use burn::backend::{Autodiff, Flex};
use burn::module::{AutodiffModule, Module};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::pool::{AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig, MaxPool2d, MaxPool2dConfig};
use burn::nn::{Linear, LinearConfig, PaddingConfig2d, Relu};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::prelude::Backend;
use burn::tensor::{Int, Tensor, TensorData};
use giving_models::data::{SHAPE_CLASSES, SHAPE_SIDE, Split, shapes};
use giving_models::rng::Rng;
use giving_tuner::{Dataset, Knob, Network, Tunable, TuneSettings, tune};

/// The user's network: nothing in it knows about the tuner.
#[derive(Module, Debug)]
struct Small<B: Backend> {
    convs: Vec<Conv2d<B>>,
    pool: MaxPool2d,
    global: AdaptiveAvgPool2d,
    relu: Relu,
    classifier: Linear<B>,
}

impl<B: Backend> Small<B> {
    fn new(device: &B::Device) -> Self {
        let conv = |c_in, c_out| {
            Conv2dConfig::new([c_in, c_out], [3, 3])
                .with_padding(PaddingConfig2d::Same)
                .init(device)
        };
        Self {
            convs: vec![conv(3, 8), conv(8, 16), conv(16, 16)],
            pool: MaxPool2dConfig::new([2, 2]).init(),
            global: AdaptiveAvgPool2dConfig::new([1, 1]).init(),
            relu: Relu::new(),
            classifier: LinearConfig::new(16, SHAPE_CLASSES).init(device),
        }
    }

    /// The exact forward pass, written through the same three steps the tuner uses.
    fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 2> {
        let mut x = x;
        for i in 0..self.conv_count() {
            x = self.after_conv(i, self.convs[i].forward(x));
        }
        self.head(x)
    }
}

/// What the tuner needs: the convolutions in order, what runs between them, and the head.
impl<B: Backend> Tunable<B> for Small<B> {
    fn conv_count(&self) -> usize {
        self.convs.len()
    }

    fn conv(&self, i: usize) -> &Conv2d<B> {
        &self.convs[i]
    }

    fn conv_side(&self, i: usize) -> usize {
        // 32 pixels, pooled after the first two convolutions.
        SHAPE_SIDE >> i
    }

    fn after_conv(&self, i: usize, y: Tensor<B, 4>) -> Tensor<B, 4> {
        let y = self.relu.forward(y);
        if i < 2 {
            self.pool.forward(y)
        } else {
            self.global.forward(y)
        }
    }

    fn head(&self, x: Tensor<B, 4>) -> Tensor<B, 2> {
        self.classifier.forward(x.flatten(1, 3))
    }

    fn head_macs(&self) -> usize {
        16 * SHAPE_CLASSES
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let epochs: usize = args.get(1).map_or(Ok(3), |a| a.parse())?;
    let iterations: usize = args.get(2).map_or(Ok(200), |a| a.parse())?;
    let device = Default::default();

    // A short training with Adam, on the autodiff backend.
    type Train = Autodiff<Flex>;
    <Train as Backend>::seed(&device, 0);
    let mut model: Small<Train> = Small::new(&device);
    let mut optim = AdamConfig::new().init();
    let train = shapes(0, Split::Train, 4000);
    let mut rng = Rng::new(1);
    let started = std::time::Instant::now();
    for _ in 0..epochs {
        for rows in train.batches(64, Some(&mut rng)) {
            let (x, y) = train.gather(&rows);
            let n = rows.len();
            let x = Tensor::<Train, 4>::from_data(
                TensorData::new(x, [n, 3, SHAPE_SIDE, SHAPE_SIDE]),
                &device,
            );
            let y = Tensor::<Train, 1, Int>::from_data(TensorData::new(y, [n]), &device);
            let loss = CrossEntropyLossConfig::new()
                .init(&device)
                .forward(model.forward(x), y);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(2e-3, model, grads);
        }
    }
    println!(
        "trained {epochs} epochs in {:.1}s",
        started.elapsed().as_secs_f64()
    );

    // Tuning: the trained network without autodiff, every knob prepared for each convolution.
    let net = Network::new(model.valid(), Knob::all())?;
    let tune_set = Dataset::new(&shapes(0, Split::Tune, 500), SHAPE_SIDE, &device);
    let test_set = Dataset::new(&shapes(0, Split::Test, 500), SHAPE_SIDE, &device);
    let mut settings = TuneSettings::new();
    settings.max_iter = iterations;
    let tuning = tune(&net, &tune_set, &test_set, &settings)?;
    println!(
        "exact network: qos {:.2}% (test {:.2}%); {} kept, {} dropped by the test set",
        tuning.baseline_qos,
        tuning.baseline_test_qos,
        tuning.configs.len(),
        tuning.dropped.test
    );
    for c in tuning.configs.iter().filter(|c| c.best) {
        println!(
            "best: {:<48} loss {:5.2}  predicted {:.2}x  measured {:.2}x",
            c.knobs.join(","),
            c.qos_loss,
            c.predicted_speedup,
            c.measured_speedup.unwrap_or(f64::NAN)
        );
    }
    Ok(())
}
