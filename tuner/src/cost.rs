//! The linear cost model: a configuration's cost is the sum over layers of the layer's
//! multiply-adds times its knob's cost factor, plus the layers that are never approximated.

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
}
