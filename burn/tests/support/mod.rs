//! A tiny classifier trained by burn-train's `Learner` on `flex`, for the Learner tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use burn::backend::{Autodiff, Flex};
use burn::data::dataloader::batcher::Batcher;
use burn::data::dataloader::{DataLoader, DataLoaderBuilder};
use burn::data::dataset::InMemDataset;
use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Linear, LinearConfig};
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{Sgd, SgdConfig};
use burn::prelude::Backend;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor, TensorData};
use burn_train::metric::{AccuracyMetric, LossMetric};
use burn_train::{
    ClassificationOutput, InferenceStep, Learner, LearningComponentsMarker, SupervisedTraining,
    TrainOutput, TrainStep,
};

/// The training backend.
pub type Train = Autodiff<Flex>;

/// Training steps taken so far in this test process (one test per process reads it).
pub static TRAIN_STEPS: AtomicU64 = AtomicU64::new(0);
/// How long each training step sleeps, in milliseconds: a step as long as a real one.
pub static STEP_MILLIS: AtomicU64 = AtomicU64::new(0);

/// What the Learner trains: the classifier with SGD at a constant rate.
pub type Components = ComponentsWith<OptimizerAdaptor<Sgd<Flex>, Classifier<Train>, Train>>;

/// What the Learner trains: the classifier with the optimiser `O` at a constant rate.
pub type ComponentsWith<O> = LearningComponentsMarker<Train, f64, Classifier<Train>, O>;

/// Four features, two classes.
#[derive(Module, Debug)]
pub struct Classifier<B: Backend> {
    linear: Linear<B>,
}

/// A batch of features and their classes.
#[derive(Clone, Debug)]
pub struct Batch<B: Backend> {
    inputs: Tensor<B, 2>,
    targets: Tensor<B, 1, Int>,
}

impl<B: Backend> Classifier<B> {
    pub fn new(device: &B::Device) -> Self {
        Self {
            linear: LinearConfig::new(4, 2).init(device),
        }
    }

    fn classify(&self, batch: Batch<B>) -> ClassificationOutput<B> {
        let output = self.linear.forward(batch.inputs);
        let loss = CrossEntropyLossConfig::new()
            .init(&output.device())
            .forward(output.clone(), batch.targets.clone());
        ClassificationOutput::new(loss, output, batch.targets)
    }
}

impl<B: AutodiffBackend> TrainStep for Classifier<B> {
    type Input = Batch<B>;
    type Output = ClassificationOutput<B>;

    fn step(&self, batch: Batch<B>) -> TrainOutput<ClassificationOutput<B>> {
        TRAIN_STEPS.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(STEP_MILLIS.load(Ordering::Relaxed)));
        let item = self.classify(batch);
        TrainOutput::new(self, item.loss.backward(), item)
    }
}

impl<B: Backend> InferenceStep for Classifier<B> {
    type Input = Batch<B>;
    type Output = ClassificationOutput<B>;

    fn step(&self, batch: Batch<B>) -> ClassificationOutput<B> {
        self.classify(batch)
    }
}

/// One sample: its features and its class.
#[derive(Clone, Debug)]
pub struct Sample {
    features: [f32; 4],
    class: i64,
}

#[derive(Clone, Default)]
struct Batching;

impl<B: Backend> Batcher<B, Sample, Batch<B>> for Batching {
    fn batch(&self, items: Vec<Sample>, device: &B::Device) -> Batch<B> {
        let n = items.len();
        let features: Vec<f32> = items.iter().flat_map(|s| s.features).collect();
        let classes: Vec<i64> = items.iter().map(|s| s.class).collect();
        Batch {
            inputs: Tensor::from_data(TensorData::new(features, [n, 4]), device),
            targets: Tensor::from_data(TensorData::new(classes, [n]), device),
        }
    }
}

/// `n` samples whose class is whether the first feature exceeds the second.
fn samples(n: usize) -> Vec<Sample> {
    (0..n)
        .map(|i| {
            let a = ((i * 7) % 11) as f32 / 11.0;
            let b = ((i * 5) % 13) as f32 / 13.0;
            Sample {
                features: [a, b, a * b, 1.0],
                class: i64::from(a > b),
            }
        })
        .collect()
}

pub fn loader<B: Backend>(n: usize, batch: usize) -> Arc<dyn DataLoader<B, Batch<B>>> {
    DataLoaderBuilder::new(Batching)
        .batch_size(batch)
        .build(InMemDataset::new(samples(n)))
}

/// A supervised training of `epochs` epochs of `train_items` items (batches of 4) and a
/// validation split of 8 items, writing burn-train's files under `dir`, with the loss and
/// accuracy metrics on both splits; and its Learner.
pub fn training(
    dir: &std::path::Path,
    epochs: usize,
    train_items: usize,
) -> (SupervisedTraining<Components>, Learner<Components>) {
    training_with(dir, epochs, train_items, SgdConfig::new().init())
}

/// [`training`] with the optimiser `optim`.
pub fn training_with<O>(
    dir: &std::path::Path,
    epochs: usize,
    train_items: usize,
    optim: O,
) -> (
    SupervisedTraining<ComponentsWith<O>>,
    Learner<ComponentsWith<O>>,
)
where
    O: burn::optim::Optimizer<Classifier<Train>, Train> + 'static,
{
    let device = Default::default();
    let training =
        SupervisedTraining::new(dir, loader::<Train>(train_items, 4), loader::<Flex>(8, 4))
            .metrics((LossMetric::new(), AccuracyMetric::new()))
            .num_epochs(epochs)
            .with_application_logger(None);
    let learner = Learner::new(Classifier::<Train>::new(&device), optim, 0.05);
    (training, learner)
}
