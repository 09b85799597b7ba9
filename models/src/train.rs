//! Hand-written training loops (forward, backward, optimiser step) that give what they do.
//!
//! Every loop gives, through [`give!`] and [`iterate`] only (no instrument is wired in):
//! - at the start of each epoch: `{epoch, epochs, total_steps, lr}` (`epochs` and
//!   `total_steps`: what the run plans, `--steps` included, for whole-run progress);
//! - from [`iterate`] (`task = "train"`): `{task, progress: (0, n)}` then one
//!   `{task, step, batch, progress}` event per step (`step` counts from 0 in each epoch), with
//!   `synced: true` on the last step of each window, after the device sync;
//! - after each forward pass: `{epoch, global_step, loss}`, `global_step` counting from 0 over
//!   the whole run (a key of its own, so that instruments reading `iterate`'s per-epoch `step`
//!   events, such as the rate, never mistake a loss event for a step) and `loss` a lazy
//!   [`LazyTensor`]: the loop never reads it, the consumer does;
//! - around each epoch's validation, a span `validation` on the thread's own track
//!   (`tracepoint!`), then `{epoch, val_loss, accuracy}`, both lazy too.
//!
//! The device is synced once per window (`iterate`'s `window`), never per step.
//!
//! [`fit`] and the models' `forward` are instrumented with `#[giving::probe]`: a probe can
//! observe any of their variables from outside (`giving train cnn --probe "fit > loss"`), at
//! one relaxed load per call when nobody probes.

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use burn::module::AutodiffModule;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::prelude::Backend;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor, TensorData};
use giving::timeline::Channel;
use giving::{give, iterate, tracepoint};

use crate::data::text::{self, TextData};
use crate::data::{self, ClassificationData};
use crate::error::Error;
use crate::model::{
    CharLm, CharLmConfig, Classifier, CnnConfig, MlpConfig, VggConfig, init_seeded,
};
use crate::rng::Rng;
pub use crate::settings::TrainConfig;
use giving_burn::{LazyTensor, ModelWatch};

/// The outcome of a training run, read after the loop has ended.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainReport {
    /// Epochs started.
    pub epochs: usize,
    /// Optimiser steps taken.
    pub steps: usize,
    /// Items processed by the training steps.
    pub items: u64,
    /// Wall time of the training steps (data loading, forward, backward, optimiser, syncs),
    /// without data generation and validation.
    pub train_time: Duration,
    /// Loss of the last training step.
    pub final_loss: f64,
    /// Validation loss after the last epoch, if there is a validation set.
    pub val_loss: Option<f64>,
    /// Validation accuracy (fraction in `[0, 1]`) after the last epoch, if any.
    pub accuracy: Option<f64>,
    /// Whether the run was stopped early through a stop token.
    pub stopped: bool,
    /// The first sync window (its `window` steps and their sync), timed apart: it carries
    /// one-time costs (first allocations, cold caches, the backend's first kernels), so that
    /// the steady state can be read without it. `None` where the loop did not time it (burn-train's
    /// Learner) or the run ended within its first window.
    pub first: Option<FirstSteps>,
}

/// The first steps of a run, timed apart from the rest (see [`TrainReport::first`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FirstSteps {
    /// Steps in the first sync window.
    pub steps: usize,
    /// Items they processed.
    pub items: u64,
    /// Their wall time, the window's device sync included.
    pub time: Duration,
}

impl FirstSteps {
    /// The first window's throughput in items per second (0 for a window of no time).
    pub fn items_per_second(&self) -> f64 {
        let secs = self.time.as_secs_f64();
        if secs > 0.0 {
            self.items as f64 / secs
        } else {
            0.0
        }
    }
}

impl TrainReport {
    /// Training throughput in items per second.
    pub fn items_per_second(&self) -> f64 {
        let secs = self.train_time.as_secs_f64();
        if secs > 0.0 {
            self.items as f64 / secs
        } else {
            0.0
        }
    }

    /// Throughput after the first sync window, in items per second: what a long run
    /// settles at. `None` when the first window was not timed or nothing followed it.
    pub fn steady_items_per_second(&self) -> Option<f64> {
        let first = self.first?;
        let items = self.items.checked_sub(first.items).filter(|&n| n > 0)?;
        let secs = self.train_time.checked_sub(first.time)?.as_secs_f64();
        (secs > 0.0).then(|| items as f64 / secs)
    }
}

/// Validation results, still on the device.
#[derive(Debug, Clone)]
pub struct Evaluation<B: Backend> {
    /// Mean loss over the validation set.
    pub loss: Tensor<B, 1>,
    /// Fraction of correct predictions.
    pub accuracy: Tensor<B, 1>,
}

/// A model's data and loss: what [`fit`] needs besides the loop itself.
pub trait Workload<B: AutodiffBackend> {
    /// The model trained.
    type Model: AutodiffModule<B>;
    /// A batch, loaded on the device.
    type Batch;

    /// The batches of epoch `epoch`, loaded lazily (one at a time, as the loop asks).
    fn batches<'a>(
        &'a self,
        epoch: usize,
        device: &'a B::Device,
    ) -> Box<dyn ExactSizeIterator<Item = Self::Batch> + 'a>;

    /// Number of items in a batch.
    fn batch_len(batch: &Self::Batch) -> usize;

    /// The training loss of a batch (a one-element tensor).
    fn loss(&self, model: &Self::Model, batch: Self::Batch) -> Tensor<B, 1>;

    /// Loss and accuracy on the validation set, without reading them; `None` without one.
    fn evaluate(
        &self,
        model: &<Self::Model as AutodiffModule<B>>::InnerModule,
        device: &B::Device,
    ) -> Option<Evaluation<B::InnerBackend>>;
}

/// `watch`, also watching the activations `selectors` catch (`--watch-act`); a selector that
/// is malformed or names no instrumented variable is refused, named, with the reason.
pub(crate) fn watch_with_activations<B: Backend>(
    mut watch: ModelWatch<B>,
    selectors: &[String],
) -> Result<ModelWatch<B>, Error> {
    for selector in selectors {
        watch = watch
            .activations(selector)
            .map_err(|e| Error::InvalidConfig(format!("watch-act {selector:?}: {e}")))?;
    }
    Ok(watch)
}

/// Trains `model` on `workload` with Adam: the hand-written loop all bundled models share.
///
/// See the module documentation for what it gives. The loop never reads a loss: the final
/// loss and validation results are read once, after the loop, for the report.
#[giving::probe]
pub fn fit<B: AutodiffBackend, W: Workload<B>>(
    workload: &W,
    mut model: W::Model,
    config: &TrainConfig,
    device: &B::Device,
) -> Result<(W::Model, TrainReport), Error> {
    config.validate()?;
    let mut optim = AdamConfig::new().init::<B, W::Model>();
    let lr = config.lr;
    let mut step = 0usize;
    let mut items = 0u64;
    let mut train_time = Duration::ZERO;
    let mut last_loss: Option<Tensor<B::InnerBackend, 1>> = None;
    let mut last_eval = None;
    let mut epochs = 0;
    let mut stopped = false;
    let mut sync_error = None;
    let mut first = None;
    let mut watch = match config.watch {
        Some(every) => Some(watch_with_activations(
            ModelWatch::new().every(every),
            &config.watch_act,
        )?),
        None => None,
    };

    // What the run plans, for whole-run progress: planning an epoch's batches costs a shuffle
    // of indices, nothing is loaded.
    let per_epoch = workload.batches(0, device).len();
    let total_steps = config
        .steps
        .unwrap_or(usize::MAX)
        .min(per_epoch.saturating_mul(config.epochs));
    let planned_epochs = match per_epoch {
        0 => config.epochs,
        n => total_steps.div_ceil(n),
    };
    for epoch in 0..config.epochs {
        let remaining = config.steps.map_or(usize::MAX, |s| s.saturating_sub(step));
        if remaining == 0 {
            break;
        }
        epochs += 1;
        give!(epoch, epochs = planned_epochs, total_steps, lr);
        let batches = workload.batches(epoch, device);
        let planned = batches.len().min(remaining);
        let mut done = 0;
        let start = Instant::now();
        for batch in iterate("train", batches.take(planned))
            .batch_size_with(W::batch_len)
            .window(config.window)
            .sync(|| {
                if let Err(e) = B::sync(device) {
                    sync_error.get_or_insert(e);
                }
            })
        {
            // The first window has ended, its sync included (`iterate` syncs before it hands
            // out the next batch).
            if step == config.window && first.is_none() {
                first = Some(FirstSteps {
                    steps: step,
                    items,
                    time: train_time + start.elapsed(),
                });
            }
            items += W::batch_len(&batch) as u64;
            let loss = workload.loss(&model, batch);
            give!(
                epoch,
                global_step = step,
                loss = LazyTensor::detached(&loss)
            );
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            if let Some(watch) = &mut watch {
                watch.observe(step as u64, &model, &grads);
            }
            model = optim.step(lr, model, grads);
            last_loss = Some(loss.inner());
            step += 1;
            done += 1;
        }
        train_time += start.elapsed();
        if let Some(e) = sync_error.take() {
            return Err(Error::Device(e.to_string()));
        }
        if done < planned {
            stopped = true;
            break;
        }
        // A span on the loop's thread: the timeline draws it inside the epoch.
        let validation = tracepoint!(Channel::thread(), "validation");
        let eval = workload.evaluate(&model.valid(), device);
        validation.end();
        if let Some(eval) = eval {
            give!(
                epoch,
                val_loss = LazyTensor::new(eval.loss.clone()),
                accuracy = LazyTensor::new(eval.accuracy.clone())
            );
            last_eval = Some(eval);
        }
    }

    let read = |t: Tensor<B::InnerBackend, 1>| -> Result<f64, Error> {
        t.try_into_scalar()
            .map(|x| f64::from(burn::tensor::cast::ToElement::to_f32(&x)))
            .map_err(|e| Error::Device(e.to_string()))
    };
    let final_loss = last_loss.map(read).transpose()?.unwrap_or(f64::NAN);
    let (val_loss, accuracy) = match last_eval {
        Some(eval) => (Some(read(eval.loss)?), Some(read(eval.accuracy)?)),
        None => (None, None),
    };
    let report = TrainReport {
        epochs,
        steps: step,
        items,
        train_time,
        final_loss,
        val_loss,
        accuracy,
        stopped,
        first,
    };
    Ok((model, report))
}

/// Shuffling stream of the training batches (independent of the data and the parameters).
const SHUFFLE_STREAM: u64 = 0x5348_5546;

/// Classification of in-memory rows by any [`Classifier`] model (the MLP and the CNN).
#[derive(Debug)]
pub struct Classification<M> {
    /// Training rows.
    pub train: ClassificationData,
    /// Validation rows.
    pub valid: ClassificationData,
    /// Rows per batch.
    pub batch_size: usize,
    /// Seed of the shuffling.
    pub seed: u64,
    _model: PhantomData<fn() -> M>,
}

impl<M> Classification<M> {
    /// A classification workload.
    pub fn new(
        train: ClassificationData,
        valid: ClassificationData,
        batch_size: usize,
        seed: u64,
    ) -> Self {
        Self {
            train,
            valid,
            batch_size,
            seed,
            _model: PhantomData,
        }
    }
}

/// Loads rows of `data` onto the device: `(features [n, dim], labels [n])`.
fn classification_batch<B: Backend>(
    data: &ClassificationData,
    rows: &[usize],
    device: &B::Device,
) -> (Tensor<B, 2>, Tensor<B, 1, Int>) {
    let (features, labels) = data.gather(rows);
    let n = rows.len();
    (
        Tensor::from_data(TensorData::new(features, [n, data.dim]), device),
        Tensor::from_data(TensorData::new(labels, [n]), device),
    )
}

impl<B, M> Workload<B> for Classification<M>
where
    B: AutodiffBackend,
    M: AutodiffModule<B> + Classifier<B>,
    M::InnerModule: Classifier<B::InnerBackend>,
{
    type Model = M;
    type Batch = (Tensor<B, 2>, Tensor<B, 1, Int>);

    fn batches<'a>(
        &'a self,
        epoch: usize,
        device: &'a B::Device,
    ) -> Box<dyn ExactSizeIterator<Item = Self::Batch> + 'a> {
        let mut rng = Rng::new(self.seed).fork(SHUFFLE_STREAM).fork(epoch as u64);
        let plan = self.train.batches(self.batch_size, Some(&mut rng));
        Box::new(
            plan.into_iter()
                .map(move |rows| classification_batch::<B>(&self.train, &rows, device)),
        )
    }

    fn batch_len(batch: &Self::Batch) -> usize {
        batch.1.dims()[0]
    }

    fn loss(&self, model: &M, (features, labels): Self::Batch) -> Tensor<B, 1> {
        let logits = model.logits(features);
        CrossEntropyLossConfig::new()
            .init(&logits.device())
            .forward(logits, labels)
    }

    fn evaluate(
        &self,
        model: &M::InnerModule,
        device: &B::Device,
    ) -> Option<Evaluation<B::InnerBackend>> {
        let total = self.valid.len();
        if total == 0 {
            return None;
        }
        let loss_fn = CrossEntropyLossConfig::new().init(device);
        let mut loss_sum = Tensor::<B::InnerBackend, 1>::zeros([1], device);
        let mut correct = Tensor::<B::InnerBackend, 1, Int>::zeros([1], device);
        for rows in self.valid.batches(self.batch_size.max(256), None) {
            let n = rows.len();
            let (features, labels) =
                classification_batch::<B::InnerBackend>(&self.valid, &rows, device);
            let logits = model.logits(features);
            loss_sum = loss_sum + loss_fn.forward(logits.clone(), labels.clone()) * n as f32;
            let predicted = logits.argmax(1).reshape([n]);
            correct = correct + predicted.equal(labels).int().sum();
        }
        Some(Evaluation {
            loss: loss_sum / total as f32,
            accuracy: correct.float() / total as f32,
        })
    }
}

/// Next-character prediction on a tokenised text, for [`CharLm`].
#[derive(Debug, Clone)]
pub struct TextPrediction {
    /// The text, split into training and validation tokens.
    pub data: TextData,
    /// Characters per window (at most the model's context).
    pub context: usize,
    /// Windows per batch.
    pub batch_size: usize,
    /// Windows per training epoch.
    pub train_windows: usize,
    /// Validation windows (spread evenly over the validation text).
    pub valid_windows: usize,
    /// Seed of the window sampling.
    pub seed: u64,
}

/// Loads token windows onto the device: `(inputs [b, s], targets [b, s])`.
fn token_batch<B: Backend>(
    (inputs, targets): (Vec<i64>, Vec<i64>),
    batch: usize,
    context: usize,
    device: &B::Device,
) -> (Tensor<B, 2, Int>, Tensor<B, 2, Int>) {
    (
        Tensor::from_data(TensorData::new(inputs, [batch, context]), device),
        Tensor::from_data(TensorData::new(targets, [batch, context]), device),
    )
}

/// Flattens `[b, s, v]` logits and `[b, s]` targets for the cross-entropy.
fn flatten_tokens<B: Backend>(
    logits: Tensor<B, 3>,
    targets: Tensor<B, 2, Int>,
) -> (Tensor<B, 2>, Tensor<B, 1, Int>) {
    let [b, s, v] = logits.dims();
    (logits.reshape([b * s, v]), targets.reshape([b * s]))
}

impl<B: AutodiffBackend> Workload<B> for TextPrediction {
    type Model = CharLm<B>;
    type Batch = (Tensor<B, 2, Int>, Tensor<B, 2, Int>);

    fn batches<'a>(
        &'a self,
        epoch: usize,
        device: &'a B::Device,
    ) -> Box<dyn ExactSizeIterator<Item = Self::Batch> + 'a> {
        let mut rng = Rng::new(self.seed).fork(SHUFFLE_STREAM).fork(epoch as u64);
        let count = self.train_windows / self.batch_size.max(1);
        Box::new((0..count).map(move |_| {
            let windows = text::windows(
                &self.data.train,
                self.batch_size,
                self.context,
                Some(&mut rng),
            )
            .expect("the training text is longer than one window (checked by train_charlm)");
            token_batch::<B>(windows, self.batch_size, self.context, device)
        }))
    }

    fn batch_len(batch: &Self::Batch) -> usize {
        batch.0.dims()[0]
    }

    fn loss(&self, model: &CharLm<B>, (inputs, targets): Self::Batch) -> Tensor<B, 1> {
        let (logits, targets) = flatten_tokens(model.forward(inputs), targets);
        CrossEntropyLossConfig::new()
            .init(&logits.device())
            .forward(logits, targets)
    }

    fn evaluate(
        &self,
        model: &CharLm<B::InnerBackend>,
        device: &B::Device,
    ) -> Option<Evaluation<B::InnerBackend>> {
        if self.valid_windows == 0 {
            return None;
        }
        let (inputs, targets) =
            text::windows(&self.data.valid, self.valid_windows, self.context, None)?;
        let loss_fn = CrossEntropyLossConfig::new().init(device);
        let mut loss_sum = Tensor::<B::InnerBackend, 1>::zeros([1], device);
        let mut correct = Tensor::<B::InnerBackend, 1, Int>::zeros([1], device);
        let per_window = self.context;
        let chunk = self.batch_size.max(1);
        for start in (0..self.valid_windows).step_by(chunk) {
            let n = chunk.min(self.valid_windows - start);
            let span = start * per_window..(start + n) * per_window;
            let (x, y) = token_batch::<B::InnerBackend>(
                (inputs[span.clone()].to_vec(), targets[span].to_vec()),
                n,
                self.context,
                device,
            );
            let (logits, y) = flatten_tokens(model.forward(x), y);
            loss_sum = loss_sum + loss_fn.forward(logits.clone(), y.clone()) * n as f32;
            let predicted = logits.argmax(1).reshape([n * per_window]);
            correct = correct + predicted.equal(y).int().sum();
        }
        let total = self.valid_windows as f32;
        Some(Evaluation {
            loss: loss_sum / total,
            accuracy: correct.float() / (total * per_window as f32),
        })
    }
}

/// Trains an [`Mlp`](crate::Mlp) on [`digits`](data::digits) (`train_size` images, then
/// `valid_size` held-out ones for validation).
pub fn train_mlp<B: AutodiffBackend>(
    device: &B::Device,
    config: &TrainConfig,
    model: &MlpConfig,
) -> Result<TrainReport, Error> {
    train_digits::<B, _>(device, config, |d| model.init(d))
}

/// Trains a [`Cnn`](crate::Cnn) on [`digits`](data::digits), like [`train_mlp`].
pub fn train_cnn<B: AutodiffBackend>(
    device: &B::Device,
    config: &TrainConfig,
    model: &CnnConfig,
) -> Result<TrainReport, Error> {
    train_digits::<B, _>(device, config, |d| model.init(d))
}

/// Trains a [`Vgg`](crate::model::Vgg) on the `shapes` training split and validates it on
/// the tuning split, returning the trained model (the tuner caches and approximates it).
pub fn train_vgg<B: AutodiffBackend>(
    device: &B::Device,
    config: &TrainConfig,
    model: &VggConfig,
) -> Result<(crate::model::Vgg<B>, TrainReport), Error> {
    config.validate()?;
    let train = data::shapes(config.seed, data::Split::Train, config.train_size);
    let valid = data::shapes(config.seed, data::Split::Tune, config.valid_size);
    let vgg = init_seeded::<B, _>(device, config.seed, |d| model.init(d));
    let workload = Classification::new(train, valid, config.batch_size, config.seed);
    fit(&workload, vgg, config, device)
}

/// Trains the classifier that `init` makes on the digit sets of a run.
fn train_digits<B, M>(
    device: &B::Device,
    config: &TrainConfig,
    init: impl FnOnce(&B::Device) -> M,
) -> Result<TrainReport, Error>
where
    B: AutodiffBackend,
    M: AutodiffModule<B> + Classifier<B>,
    M::InnerModule: Classifier<B::InnerBackend>,
{
    config.validate()?;
    let (train, valid) = digit_sets(config);
    let model = init_seeded::<B, _>(device, config.seed, init);
    let workload = Classification::new(train, valid, config.batch_size, config.seed);
    fit(&workload, model, config, device).map(|(_, report)| report)
}

/// The digit training and validation sets of a run: disjoint index ranges of one seed.
pub(crate) fn digit_sets(config: &TrainConfig) -> (ClassificationData, ClassificationData) {
    let n = config.train_size as u64;
    (
        data::digits(0..n, config.seed),
        data::digits(n..n + config.valid_size as u64, config.seed),
    )
}

/// Trains a [`CharLm`] on the bundled text ([`CORPUS`](data::text::CORPUS)), with windows of
/// `model.context` characters: `train_size` windows per epoch, `valid_size` for validation.
pub fn train_charlm<B: AutodiffBackend>(
    device: &B::Device,
    config: &TrainConfig,
    model: &CharLmConfig,
) -> Result<TrainReport, Error> {
    config.validate()?;
    let data = TextData::bundled();
    if model.vocab < data.vocab.len() {
        return Err(Error::InvalidConfig(format!(
            "vocabulary size {} is below the text's {} characters",
            model.vocab,
            data.vocab.len()
        )));
    }
    let shortest = data.train.len().min(if config.valid_size > 0 {
        data.valid.len()
    } else {
        usize::MAX
    });
    if model.context == 0 || model.context >= shortest {
        return Err(Error::InvalidConfig(format!(
            "context {} must be between 1 and {} (the text is short)",
            model.context,
            shortest.saturating_sub(1)
        )));
    }
    let workload = TextPrediction {
        data,
        context: model.context,
        batch_size: config.batch_size,
        train_windows: config.train_size,
        valid_windows: config.valid_size,
        seed: config.seed,
    };
    let model = init_seeded::<B, _>(device, config.seed, |d| model.init(d));
    fit(&workload, model, config, device).map(|(_, report)| report)
}
