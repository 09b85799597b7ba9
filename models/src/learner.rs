//! The bundled MLP trained by burn-train's `Learner` instead of the hand-written loop
//! (feature `learner`), observed by giving through giving-burn's `train` glue: what a burn
//! user who trains with a `Learner` adds to be observed (`giving train mlp --learner`).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use burn::data::dataloader::batcher::Batcher;
use burn::data::dataloader::{DataLoader, DataLoaderBuilder};
use burn::data::dataset::Dataset;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, Optimizer};
use burn::prelude::Backend;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor, TensorData};
use burn_train::logger::{FileMetricLogger, MetricLogger};
use burn_train::metric::store::{EpochSummary, MetricsUpdate, Split};
use burn_train::metric::{AccuracyMetric, LossMetric, MetricDefinition, MetricId, NumericEntry};
use burn_train::{
    ClassificationOutput, InferenceStep, Learner, SupervisedTraining, TrainOutput, TrainStep,
};
use giving_burn::ModelWatch;
use giving_burn::train::{GivingLogger, GivingRenderer, StopBridge};

use crate::data::ClassificationData;
use crate::model::{Classifier, init_seeded};
use crate::train::digit_sets;
use crate::{BackendTask, DeviceSpec, Error, Mlp, TrainConfig, TrainReport, default_mlp};

/// A batch of digit images and their classes.
#[derive(Clone, Debug)]
pub struct DigitBatch<B: Backend> {
    features: Tensor<B, 2>,
    targets: Tensor<B, 1, Int>,
}

impl<B: Backend> Mlp<B> {
    fn classify(&self, batch: DigitBatch<B>) -> ClassificationOutput<B> {
        let output = self.logits(batch.features);
        let loss = CrossEntropyLossConfig::new()
            .init(&output.device())
            .forward(output.clone(), batch.targets.clone());
        ClassificationOutput::new(loss, output, batch.targets)
    }
}

impl<B: AutodiffBackend> TrainStep for Mlp<B> {
    type Input = DigitBatch<B>;
    type Output = ClassificationOutput<B>;

    fn step(&self, batch: DigitBatch<B>) -> TrainOutput<ClassificationOutput<B>> {
        let item = self.classify(batch);
        TrainOutput::new(self, item.loss.backward(), item)
    }
}

impl<B: Backend> InferenceStep for Mlp<B> {
    type Input = DigitBatch<B>;
    type Output = ClassificationOutput<B>;

    fn step(&self, batch: DigitBatch<B>) -> ClassificationOutput<B> {
        self.classify(batch)
    }
}

/// A digit set as a burn dataset of row indices (the batcher gathers the rows).
struct Rows(usize);

impl Dataset<usize> for Rows {
    fn get(&self, index: usize) -> Option<usize> {
        (index < self.0).then_some(index)
    }

    fn len(&self) -> usize {
        self.0
    }
}

#[derive(Clone)]
struct Gather(Arc<ClassificationData>);

impl<B: Backend> Batcher<B, usize, DigitBatch<B>> for Gather {
    fn batch(&self, rows: Vec<usize>, device: &B::Device) -> DigitBatch<B> {
        let (features, labels) = self.0.gather(&rows);
        let n = rows.len();
        DigitBatch {
            features: Tensor::from_data(TensorData::new(features, [n, self.0.dim]), device),
            targets: Tensor::from_data(TensorData::new(labels, [n]), device),
        }
    }
}

fn loader<B: Backend>(
    data: ClassificationData,
    batch_size: usize,
    shuffle: Option<u64>,
) -> Arc<dyn DataLoader<B, DigitBatch<B>>> {
    let rows = Rows(data.len());
    let mut builder = DataLoaderBuilder::new(Gather(Arc::new(data))).batch_size(batch_size);
    if let Some(seed) = shuffle {
        builder = builder.shuffle(seed);
    }
    builder.build(rows)
}

/// What the report needs, read from burn-train's metric updates (a logger beside giving's).
#[derive(Default)]
struct Totals {
    names: std::collections::HashMap<MetricId, String>,
    steps: usize,
    items: u64,
    epochs: usize,
    final_loss: f64,
    /// The last validation epoch: its number and the weighted sums of its loss and accuracy.
    valid: Option<(usize, Mean, Mean)>,
}

/// A weighted sum and its weight.
#[derive(Clone, Copy, Default)]
struct Mean {
    sum: f64,
    weight: usize,
}

impl Mean {
    fn add(&mut self, (sum, weight): (f64, usize)) {
        self.sum += sum;
        self.weight += weight;
    }

    fn value(self) -> Option<f64> {
        (self.weight > 0).then(|| self.sum / self.weight as f64)
    }
}

#[derive(Clone, Default)]
struct Tally(Arc<Mutex<Totals>>);

fn weighted(entry: &NumericEntry) -> (f64, usize) {
    match entry {
        NumericEntry::Value(v) => (*v, 1),
        NumericEntry::Aggregated {
            aggregated_value,
            count,
        } => (aggregated_value * *count as f64, *count),
    }
}

impl MetricLogger for Tally {
    fn log(&mut self, update: MetricsUpdate, epoch: usize, split: &Split) {
        let mut totals = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let totals = &mut *totals;
        let (mut loss, mut accuracy) = (None, None);
        for numeric in &update.entries_numeric {
            match totals
                .names
                .get(&numeric.entry.metric_id)
                .map(String::as_str)
            {
                Some("Loss") => loss = Some(weighted(&numeric.numeric_entry)),
                Some("Accuracy") => accuracy = Some(weighted(&numeric.numeric_entry)),
                _ => {}
            }
        }
        match split {
            Split::Train => {
                totals.steps += 1;
                // burn-train's accuracy is counted per item: its weight is the batch's size.
                totals.items += accuracy.map_or(0, |(_, n)| n as u64);
                totals.epochs = totals.epochs.max(epoch);
                if let Some(loss) = loss {
                    totals.final_loss = Mean {
                        sum: loss.0,
                        weight: loss.1,
                    }
                    .value()
                    .unwrap_or(f64::NAN);
                }
            }
            Split::Valid => {
                let (mut l, mut a) = match totals.valid {
                    Some((at, l, a)) if at == epoch => (l, a),
                    _ => (Mean::default(), Mean::default()),
                };
                loss.into_iter().for_each(|x| l.add(x));
                accuracy.into_iter().for_each(|x| a.add(x));
                totals.valid = Some((epoch, l, a));
            }
            Split::Test(_) => {}
        }
    }

    fn read_numeric(
        &mut self,
        _name: &str,
        _epoch: usize,
        _split: &Split,
    ) -> Result<Vec<NumericEntry>, String> {
        // Leaves burn-train's queries to the giving logger, which keeps every value.
        Err("the report's tally keeps no values".to_string())
    }

    fn log_metric_definition(&mut self, definition: MetricDefinition) {
        let mut totals = self.0.lock().unwrap_or_else(|e| e.into_inner());
        totals.names.insert(definition.metric_id, definition.name);
    }

    fn log_epoch_summary(&mut self, _summary: EpochSummary) {}
}

/// Who observes a Learner run: giving, or burn-train's defaults (the baseline of the overhead
/// measurement, `giving bench --cpu-time --learner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observed {
    /// giving's logger and renderer, and the stop bridge.
    Giving,
    /// burn-train's own `FileMetricLogger` and its default renderer (its CLI renderer when
    /// the TUI is not compiled in or stdout is not a terminal: a line per iteration).
    BurnDefault,
}

struct LearnerTask<'a> {
    config: &'a TrainConfig,
    observed: Observed,
}

impl BackendTask for LearnerTask<'_> {
    type Output = Result<TrainReport, Error>;

    fn run<B: AutodiffBackend>(self, device: B::Device) -> Self::Output {
        train_mlp_learner_observed::<B>(&device, self.config, self.observed)
    }
}

/// Trains the bundled MLP on the digits with burn-train's `Learner` on `device`, observed by
/// giving (see [`train_mlp_learner`]).
pub fn train_learner(config: &TrainConfig, device: &DeviceSpec) -> Result<TrainReport, Error> {
    train_learner_observed(config, device, Observed::Giving)
}

/// [`train_learner`], observed by giving or by burn-train's defaults.
pub fn train_learner_observed(
    config: &TrainConfig,
    device: &DeviceSpec,
    observed: Observed,
) -> Result<TrainReport, Error> {
    if config.steps.is_some() {
        return Err(Error::InvalidConfig(
            "--steps is not supported with the Learner (burn-train runs whole epochs; stop it \
             with --stop or q)"
                .to_string(),
        ));
    }
    device.run(LearnerTask { config, observed })?
}

/// Trains the default MLP on the run's digit sets with burn-train's `Learner` (Adam at
/// `config.lr`, loss and accuracy on both splits) in a directory of its own that is removed
/// afterwards, with giving's logger and renderer in place of burn-train's files and TUI, and
/// giving's stop bridged to the Learner's interrupter. Call it inside the run's scope (the
/// Overseer's `run`).
pub fn train_mlp_learner<B: AutodiffBackend>(
    device: &B::Device,
    config: &TrainConfig,
) -> Result<TrainReport, Error> {
    train_mlp_learner_observed::<B>(device, config, Observed::Giving)
}

fn train_mlp_learner_observed<B: AutodiffBackend>(
    device: &B::Device,
    config: &TrainConfig,
    observed: Observed,
) -> Result<TrainReport, Error> {
    config.validate()?;
    let adam = AdamConfig::new().init();
    match (observed, config.watch) {
        // The line a burn-train user adds to watch the model: the optimiser, watched.
        (Observed::Giving, Some(every)) => {
            let watch = crate::train::watch_with_activations(
                ModelWatch::new().every(every),
                &config.watch_act,
            )?;
            let watched = watch.optimizer(adam);
            learn::<B, _>(device, config, observed, watched)
        }
        _ => learn::<B, _>(device, config, observed, adam),
    }
}

/// [`train_mlp_learner_observed`] with the optimiser `optim`.
fn learn<B, O>(
    device: &B::Device,
    config: &TrainConfig,
    observed: Observed,
    optim: O,
) -> Result<TrainReport, Error>
where
    B: AutodiffBackend,
    O: Optimizer<Mlp<B>, B> + 'static,
{
    let (train, valid) = digit_sets(config);
    let model = init_seeded::<B, _>(device, config.seed, |d| default_mlp().init(d));
    let artifacts = std::env::temp_dir().join(format!(
        "giving-learner-{}-{}",
        std::process::id(),
        config.seed
    ));
    let tally = Tally::default();
    let training = SupervisedTraining::new(
        &artifacts,
        loader::<B>(train, config.batch_size, Some(config.seed)),
        loader::<B::InnerBackend>(valid, config.batch_size, None),
    )
    .metrics((LossMetric::new(), AccuracyMetric::new()))
    .num_epochs(config.epochs)
    // burn-train's own application log would install a global `log` logger into a file.
    .with_application_logger(None);
    let interrupter = training.interrupter();
    let (training, bridge) = match observed {
        Observed::Giving => {
            // The two lines a burn-train user adds (and the stop bridge).
            let bridge = StopBridge::current(training.interrupter())
                .map_err(|e| Error::InvalidConfig(format!("cannot watch giving's stop: {e}")))?;
            let training = training
                .with_metric_logger(GivingLogger::new())
                .with_metric_logger(tally.clone())
                .renderer(GivingRenderer::new().window(config.window));
            (training, Some(bridge))
        }
        // What burn-train registers when no logger is given, and its default renderer.
        Observed::BurnDefault => (
            training
                .with_metric_logger(FileMetricLogger::new(&artifacts))
                .with_metric_logger(tally.clone()),
            None,
        ),
    };
    let learner = Learner::new(model, optim, config.lr);
    let start = Instant::now();
    let _model = training.launch(learner).model;
    let train_time = start.elapsed();
    drop(bridge);
    let _ = std::fs::remove_dir_all(&artifacts);

    let totals = tally.0.lock().unwrap_or_else(|e| e.into_inner());
    let (val_loss, accuracy) = match totals.valid {
        // burn-train's accuracy is a percentage; the report's a fraction.
        Some((_, loss, accuracy)) => (loss.value(), accuracy.value().map(|a| a / 100.0)),
        None => (None, None),
    };
    Ok(TrainReport {
        epochs: totals.epochs,
        steps: totals.steps,
        items: totals.items,
        train_time,
        final_loss: totals.final_loss,
        val_loss,
        accuracy,
        stopped: interrupter.should_stop(),
        first: None,
    })
}
