//! PredTuner's `qos_p1`: predicts a configuration's QoS without running it.
//!
//! In an initialisation stage, each knob is applied alone to each layer and the change it
//! makes to the network's output (the logits of every tuning image) is recorded. A
//! configuration's output is then predicted as the exact output plus the sum of its layers'
//! changes — first-order, as if the layers' errors added up independently — and its QoS is the
//! accuracy of that predicted output. A prediction costs a sum over a few vectors instead of a
//! pass of the network; the tuner validates the best predicted configurations by running them.

use burn::prelude::Backend;

use crate::error::Error;
use crate::network::{Dataset, Network, accuracy};

/// The per-layer, per-knob output profiles of a network on a data set.
#[derive(Debug, Clone)]
pub struct P1 {
    exact: Vec<f32>,
    /// `deltas[layer][knob]`: logits change when only that layer runs that knob (empty for
    /// the baseline).
    deltas: Vec<Vec<Vec<f32>>>,
    labels: Vec<u32>,
    classes: usize,
}

impl P1 {
    /// The initialisation stage: runs every (layer, knob) pair once on `data`. The exact
    /// activations entering each layer are computed once, so a pair costs a pass of the
    /// layers from it onwards only.
    pub fn init<B: Backend>(net: &Network<B>, data: &Dataset<B>) -> Result<Self, Error> {
        let layers = net.layer_count();
        let baseline = vec![0; layers];
        let exact = net.logits(&baseline, data)?;
        let mut deltas = vec![];
        for layer in 0..layers {
            let inputs = net.inputs_at(layer, data);
            let mut per_knob = vec![vec![]];
            for knob in 1..net.knobs().len() {
                let mut config = baseline.clone();
                config[layer] = knob;
                let logits = net.logits_from(layer, &inputs, &config)?;
                per_knob.push(logits.iter().zip(&exact).map(|(a, e)| a - e).collect());
            }
            deltas.push(per_knob);
        }
        Ok(Self {
            exact,
            deltas,
            labels: data.labels().to_vec(),
            classes: data.classes(),
        })
    }

    /// The predicted QoS (accuracy in percent) of `config`.
    pub fn predict(&self, config: &[usize]) -> f64 {
        let mut logits = self.exact.clone();
        for (layer, &knob) in config.iter().enumerate() {
            if knob == 0 {
                continue;
            }
            for (l, d) in logits.iter_mut().zip(&self.deltas[layer][knob]) {
                *l += d;
            }
        }
        accuracy(&logits, &self.labels, self.classes)
    }
}
