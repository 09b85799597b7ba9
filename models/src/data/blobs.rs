//! Gaussian blobs (classification) and noisy linear regression.

use super::ClassificationData;
use crate::rng::Rng;

/// Generates `n` points in `dim` dimensions around `classes` Gaussian centres.
///
/// The centres are drawn uniformly in `[-4, 4]^dim`, each point is its centre plus Gaussian
/// noise of standard deviation `spread`; labels cycle through the classes so that they are
/// balanced. Equal arguments give equal data.
pub fn blobs(n: usize, classes: usize, dim: usize, spread: f64, seed: u64) -> ClassificationData {
    let classes = classes.max(1);
    let mut rng = Rng::new(seed);
    let centres: Vec<f64> = (0..classes * dim).map(|_| rng.range(-4.0, 4.0)).collect();
    let mut features = Vec::with_capacity(n * dim);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let label = i % classes;
        let centre = &centres[label * dim..(label + 1) * dim];
        features.extend(centre.iter().map(|c| (c + spread * rng.normal()) as f32));
        labels.push(label as u32);
    }
    ClassificationData {
        features,
        labels,
        dim,
        classes,
    }
}

/// A regression dataset: `targets[i] = features[i] · weights + bias + noise`.
#[derive(Debug, Clone, PartialEq)]
pub struct RegressionData {
    /// Row-major features, `len × dim`, standard normal.
    pub features: Vec<f32>,
    /// One target per row.
    pub targets: Vec<f32>,
    /// Number of features per row.
    pub dim: usize,
    /// The true weights the targets were generated with.
    pub weights: Vec<f32>,
    /// The true bias the targets were generated with.
    pub bias: f32,
}

impl RegressionData {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Whether the dataset has no rows.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }
}

/// Generates `n` rows of a noisy linear regression problem in `dim` dimensions.
///
/// Weights are drawn uniformly in `[-2, 2]`, the bias in `[-1, 1]`, features are standard
/// normal, and the targets carry Gaussian noise of standard deviation `noise`.
pub fn regression(n: usize, dim: usize, noise: f64, seed: u64) -> RegressionData {
    let mut rng = Rng::new(seed);
    let weights: Vec<f64> = (0..dim).map(|_| rng.range(-2.0, 2.0)).collect();
    let bias = rng.range(-1.0, 1.0);
    let mut features = Vec::with_capacity(n * dim);
    let mut targets = Vec::with_capacity(n);
    for _ in 0..n {
        let row: Vec<f64> = (0..dim).map(|_| rng.normal()).collect();
        let y = row.iter().zip(&weights).map(|(x, w)| x * w).sum::<f64>() + bias;
        targets.push((y + noise * rng.normal()) as f32);
        features.extend(row.iter().map(|&x| x as f32));
    }
    RegressionData {
        features,
        targets,
        dim,
        weights: weights.iter().map(|&w| w as f32).collect(),
        bias: bias as f32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_deterministic_and_balanced() {
        let a = blobs(300, 3, 4, 0.5, 11);
        assert_eq!(a, blobs(300, 3, 4, 0.5, 11));
        assert_ne!(a, blobs(300, 3, 4, 0.5, 12));
        assert_eq!(a.features.len(), 300 * 4);
        for c in 0..3 {
            assert_eq!(a.labels.iter().filter(|&&l| l == c).count(), 100);
        }
    }

    #[test]
    fn regression_targets_follow_the_weights() {
        let d = regression(500, 3, 0.0, 5);
        assert_eq!(d, regression(500, 3, 0.0, 5));
        for i in 0..d.len() {
            let x = &d.features[i * 3..i * 3 + 3];
            let y: f32 = x.iter().zip(&d.weights).map(|(a, b)| a * b).sum::<f32>() + d.bias;
            assert!((y - d.targets[i]).abs() < 1e-4);
        }
    }
}
