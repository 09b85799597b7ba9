//! Cost models. The linear one (PredTuner's `cost_linear`): a configuration's cost is the sum
//! over layers of the layer's multiply-adds times its knob's cost factor, plus the layers that
//! are never approximated. The measured one: the sum of each layer's wall time under its knob,
//! timed on this machine when the session starts, plus the time of what no knob changes.

use crate::knob::Knob;

/// PredTuner's `cost_linear`: predicted speedup from per-layer FLOPs and knob cost factors.
#[derive(Debug, Clone)]
pub struct LinearCost {
    conv_macs: Vec<f64>,
    other_macs: f64,
}

impl LinearCost {
    /// A model of a network whose convolutions cost `conv_macs` and the rest `other_macs`.
    pub fn new(conv_macs: Vec<f64>, other_macs: f64) -> Self {
        Self {
            conv_macs,
            other_macs,
        }
    }

    /// The predicted cost of running each layer `i` with `knobs[config[i]]`.
    pub fn cost(&self, knobs: &[Knob], config: &[usize]) -> f64 {
        self.other_macs
            + self
                .conv_macs
                .iter()
                .zip(config)
                .map(|(macs, &k)| macs * knobs[k].cost_factor())
                .sum::<f64>()
    }

    /// The predicted speedup of `config` over the exact network.
    pub fn speedup(&self, knobs: &[Knob], config: &[usize]) -> f64 {
        let exact = self.other_macs + self.conv_macs.iter().sum::<f64>();
        exact / self.cost(knobs, config)
    }
}

/// A cost model from wall times taken on the machine that runs the network: FLOPs do not
/// say what a knob costs when its computation is memory-bound or takes a slower code path
/// (filter sampling with `K = 2` or `4` halves the FLOPs of a layer and takes 3–6× its time on
/// `Flex`; a perforated layer can save more than its FLOPs).
#[derive(Debug, Clone)]
pub struct MeasuredCost {
    /// `layer_secs[i][k]`: layer `i` under knob `k` (indices into the network's knobs), NaN
    /// where the pair was not timed.
    layer_secs: Vec<Vec<f64>>,
    /// What no knob changes (ReLU, pooling, the head).
    fixed_secs: f64,
}

impl MeasuredCost {
    /// A model from per-layer, per-knob times and the time of the rest of a pass.
    pub fn new(layer_secs: Vec<Vec<f64>>, fixed_secs: f64) -> Self {
        Self {
            layer_secs,
            fixed_secs,
        }
    }

    /// The predicted time of running each layer `i` with knob `config[i]`.
    pub fn cost(&self, config: &[usize]) -> f64 {
        self.fixed_secs
            + self
                .layer_secs
                .iter()
                .zip(config)
                .map(|(layer, &k)| layer[k])
                .sum::<f64>()
    }

    /// The predicted speedup of `config` over the exact network (knob 0 on every layer).
    pub fn speedup(&self, config: &[usize]) -> f64 {
        self.cost(&vec![0; self.layer_secs.len()]) / self.cost(config)
    }
}

/// The cost model of a session.
#[derive(Debug, Clone)]
pub enum Cost {
    /// [`LinearCost`].
    Linear(LinearCost),
    /// [`MeasuredCost`].
    Measured(MeasuredCost),
}

impl Cost {
    /// The predicted speedup of `config` (indices into `knobs`) over the exact network.
    pub fn speedup(&self, knobs: &[Knob], config: &[usize]) -> f64 {
        match self {
            Cost::Linear(linear) => linear.speedup(knobs, config),
            Cost::Measured(measured) => measured.speedup(config),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speedup_weighs_layers_by_their_flops() {
        let knobs = [
            Knob::Baseline,
            Knob::Sample {
                stride: 2,
                offset: 0,
            },
        ];
        let model = LinearCost::new(vec![100.0, 300.0], 0.0);
        assert_eq!(model.speedup(&knobs, &[0, 0]), 1.0);
        // Halving the big layer: 100 + 150 = 250 → 400 / 250.
        assert!((model.speedup(&knobs, &[0, 1]) - 1.6).abs() < 1e-12);
        assert!(model.speedup(&knobs, &[1, 0]) < model.speedup(&knobs, &[0, 1]));
    }

    #[test]
    fn measured_speedup_adds_layer_times_and_the_fixed_part() {
        // Two layers of 3 s and 5 s exact, 1 s fixed; knob 1 takes layer 1 to 1 s.
        let model = MeasuredCost::new(vec![vec![3.0, 4.0], vec![5.0, 1.0]], 1.0);
        assert_eq!(model.speedup(&[0, 0]), 1.0);
        assert_eq!(model.speedup(&[0, 1]), 9.0 / 5.0);
        // A knob slower than the exact layer predicts a slowdown, whatever its FLOPs.
        assert!(model.speedup(&[1, 0]) < 1.0);
    }
}
