//! The network under tuning: the trained VGG with every knob prepared for every layer, and the
//! data sets it is measured on, loaded on the device once.

use std::time::{Duration, Instant};

use burn::prelude::Backend;
use burn::tensor::{Tensor, TensorData};
use giving_models::Vgg;
use giving_models::data::ClassificationData;

use crate::approx::ApproxConv;
use crate::error::Error;
use crate::knob::Knob;
use crate::tunable::Tunable;

/// Images per batch when the tuner runs the network.
const EVAL_BATCH: usize = 250;

/// A data set on the device, in fixed batches (the same order every time, so that results
/// are deterministic).
#[derive(Debug, Clone)]
pub struct Dataset<B: Backend> {
    batches: Vec<Tensor<B, 4>>,
    labels: Vec<u32>,
    classes: usize,
}

impl<B: Backend> Dataset<B> {
    /// Loads `data` (rows of `3 × side × side` pixels) onto `device`.
    pub fn new(data: &ClassificationData, side: usize, device: &B::Device) -> Self {
        let batches = data
            .batches(EVAL_BATCH, None)
            .iter()
            .map(|rows| {
                let (features, _) = data.gather(rows);
                Tensor::from_data(
                    TensorData::new(features, [rows.len(), 3, side, side]),
                    device,
                )
            })
            .collect();
        Self {
            batches,
            labels: data.labels.clone(),
            classes: data.classes,
        }
    }

    /// Number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether the set has no image.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The class of each image.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }

    /// Number of classes.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// The same images with other labels (tests make QoS what they need with it).
    #[cfg(test)]
    pub(crate) fn with_labels(mut self, labels: Vec<u32>) -> Self {
        assert_eq!(labels.len(), self.labels.len());
        self.labels = labels;
        self
    }
}

/// Classification accuracy in percent (PredTuner's QoS) of row-major `logits` against
/// `labels`: the first maximal logit is the prediction.
pub fn accuracy(logits: &[f32], labels: &[u32], classes: usize) -> f64 {
    if labels.is_empty() {
        return 0.0;
    }
    let correct = logits
        .chunks_exact(classes)
        .zip(labels)
        .filter(|(row, label)| {
            let mut best = 0;
            for (i, &v) in row.iter().enumerate() {
                if v > row[best] {
                    best = i;
                }
            }
            best == **label as usize
        })
        .count();
    100.0 * correct as f64 / labels.len() as f64
}

/// The trained network with every layer prepared under every knob: the bundled [`Vgg`] by
/// default, or any [`Tunable`] network.
#[derive(Debug)]
pub struct Network<B: Backend, M = Vgg<B>> {
    model: M,
    knobs: Vec<Knob>,
    /// `layers[i][k]`: layer `i` under `knobs[k]`.
    layers: Vec<Vec<ApproxConv<B>>>,
    /// Multiply-adds of each exact convolution for one image.
    conv_macs: Vec<f64>,
    /// Multiply-adds of the rest of the network (the linear layers) for one image.
    other_macs: f64,
}

impl<B: Backend, M: Tunable<B>> Network<B, M> {
    /// Prepares `model` under each of `knobs` (`knobs[0]` must be the baseline).
    pub fn new(model: M, knobs: Vec<Knob>) -> Result<Self, Error> {
        if knobs.first() != Some(&Knob::Baseline) {
            return Err(Error::InvalidSetting(
                "the first knob must be the baseline".into(),
            ));
        }
        let mut layers = vec![];
        let mut conv_macs = vec![];
        for i in 0..model.conv_count() {
            let conv = model.conv(i);
            let side = model.conv_side(i);
            let [out, c_in, kh, kw] = conv.weight.dims();
            conv_macs.push((side * side * out * c_in * kh * kw) as f64);
            layers.push(
                knobs
                    .iter()
                    .map(|&k| ApproxConv::new(conv, k, side))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        // The linear layers are not approximated: a fixed cost.
        let other_macs = model.head_macs() as f64;
        Ok(Self {
            model,
            knobs,
            layers,
            conv_macs,
            other_macs,
        })
    }

    /// Number of convolution layers (the genes of a configuration).
    pub fn layer_count(&self) -> usize {
        self.layers.len()
    }

    /// The knobs, in the order configurations index them.
    pub fn knobs(&self) -> &[Knob] {
        &self.knobs
    }

    /// Multiply-adds of each exact convolution for one image.
    pub fn conv_macs(&self) -> &[f64] {
        &self.conv_macs
    }

    /// Multiply-adds of the layers that are never approximated, for one image.
    pub fn other_macs(&self) -> f64 {
        self.other_macs
    }

    /// Runs the network from the input of layer `from` (an activation `x`) to the logits,
    /// layer `i` computed with knob `config[i]` (indices into [`Network::knobs`]).
    pub fn forward_from(&self, from: usize, x: Tensor<B, 4>, config: &[usize]) -> Tensor<B, 2> {
        let mut x = x;
        for (i, layer) in self.layers.iter().enumerate().skip(from) {
            x = self.model.after_conv(i, layer[config[i]].forward(x));
        }
        self.model.head(x)
    }

    /// The exact network's inputs to layer `layer`, one tensor per batch of `data`.
    pub fn inputs_at(&self, layer: usize, data: &Dataset<B>) -> Vec<Tensor<B, 4>> {
        data.batches
            .iter()
            .map(|images| {
                let mut x = images.clone();
                for i in 0..layer {
                    x = self.model.after_conv(i, self.layers[i][0].forward(x));
                }
                x
            })
            .collect()
    }

    /// The exact network's inputs to every layer: `result[l][b]` enters layer `l` for batch `b`
    /// of `data` (layer 0's are the images). Computed in one pass, with the same operations
    /// as [`Network::logits`], so that running a configuration from `result[l]` gives the
    /// same logits as running it from the images when its first `l` layers are exact.
    pub fn exact_inputs(&self, data: &Dataset<B>) -> Vec<Vec<Tensor<B, 4>>> {
        let mut inputs = vec![data.batches.clone()];
        for i in 0..self.layers.len().saturating_sub(1) {
            let next = inputs[i]
                .iter()
                .map(|x| {
                    self.model
                        .after_conv(i, self.layers[i][0].forward(x.clone()))
                })
                .collect();
            inputs.push(next);
        }
        inputs
    }

    /// Wall times on this machine, for the measured cost model: `result.0[i][k]` is layer `i`
    /// under knob `k` for each `k` in `knobs` (NaN for the others), `result.1` what follows the
    /// convolutions (ReLU, pooling) and the head; the median of `repeats` runs on the first
    /// batch of `data`, each layer fed the exact network's activations.
    pub fn profile(
        &self,
        data: &Dataset<B>,
        knobs: &[usize],
        repeats: usize,
    ) -> Result<(Vec<Vec<f64>>, f64), Error> {
        let Some(first) = data.batches.first() else {
            return Err(Error::InvalidSetting(
                "no image to time the layers on".into(),
            ));
        };
        let device = first.device();
        let sync = || B::sync(&device).map_err(|e| Error::Device(format!("{e:?}")));
        // The median of `repeats` runs of `run`, which returns the time it measured, in seconds.
        let median_secs = |run: &mut dyn FnMut() -> Result<Duration, Error>| {
            let times = (0..repeats.max(1))
                .map(|_| run())
                .collect::<Result<Vec<_>, _>>()?;
            Ok::<_, Error>(median(times).as_secs_f64())
        };
        let mut layer_secs = vec![];
        let mut fixed = 0.0;
        let mut x = first.clone();
        for (i, layer) in self.layers.iter().enumerate() {
            let mut secs = vec![f64::NAN; self.knobs.len()];
            for &k in knobs {
                secs[k] = median_secs(&mut || {
                    let start = Instant::now();
                    drop(layer[k].forward(x.clone()));
                    sync()?;
                    Ok(start.elapsed())
                })?;
            }
            layer_secs.push(secs);
            // Timed on an output nothing else holds, as in a pass (where ReLU runs in place).
            fixed += median_secs(&mut || {
                let y = layer[0].forward(x.clone());
                sync()?;
                let start = Instant::now();
                drop(self.model.after_conv(i, y));
                sync()?;
                Ok(start.elapsed())
            })?;
            x = self.model.after_conv(i, layer[0].forward(x));
        }
        fixed += median_secs(&mut || {
            let start = Instant::now();
            drop(self.model.head(x.clone()));
            sync()?;
            Ok(start.elapsed())
        })?;
        Ok((layer_secs, fixed))
    }

    /// Row-major logits `[images, classes]` of `inputs` (activations entering layer `from`).
    pub fn logits_from(
        &self,
        from: usize,
        inputs: &[Tensor<B, 4>],
        config: &[usize],
    ) -> Result<Vec<f32>, Error> {
        let mut out = vec![];
        for x in inputs {
            let logits = self.forward_from(from, x.clone(), config);
            let values = logits
                .into_data()
                .into_vec::<f32>()
                .map_err(|e| Error::Device(format!("{e:?}")))?;
            out.extend(values);
        }
        Ok(out)
    }

    /// Row-major logits `[images, classes]` of `data` under `config`.
    pub fn logits(&self, config: &[usize], data: &Dataset<B>) -> Result<Vec<f32>, Error> {
        self.logits_from(0, &data.batches, config)
    }

    /// The QoS (accuracy in percent) of `config` on `data`, measured by running it.
    pub fn qos(&self, config: &[usize], data: &Dataset<B>) -> Result<f64, Error> {
        let logits = self.logits(config, data)?;
        Ok(accuracy(&logits, &data.labels, data.classes))
    }

    /// Wall time of one pass of `config` over `data`, results read back to the host.
    pub fn time(&self, config: &[usize], data: &Dataset<B>) -> Result<Duration, Error> {
        Ok(self.timed_qos(config, data)?.0)
    }

    /// Wall time of one pass of `config` over `data` (results read back to the host), and the
    /// QoS of that pass.
    pub fn timed_qos(&self, config: &[usize], data: &Dataset<B>) -> Result<(Duration, f64), Error> {
        let start = Instant::now();
        let logits = self.logits(config, data)?;
        let elapsed = start.elapsed();
        Ok((elapsed, accuracy(&logits, &data.labels, data.classes)))
    }
}

/// The median of `times` (the upper one of an even count); `times` must not be empty.
pub(crate) fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}
