//! Synthetic and bundled datasets. Nothing is downloaded: every sample is generated
//! deterministically from a seed, or read from text shipped inside the crate.
//!
//! - [`digits`](fn@digits): 28×28 images of ten procedurally drawn digit-like glyphs, with stroke jitter,
//!   random affine distortion, small shifts and pixel noise;
//! - [`shapes`](fn@shapes): 32×32 RGB images of ten procedurally drawn shapes (CIFAR-shaped), split
//!   into train, tune and test sets;
//! - [`blobs`](fn@blobs): Gaussian clusters for classification;
//! - [`regression`]: noisy linear regression;
//! - [`text`]: a small public-domain corpus and a character vocabulary for language models.

mod blobs;
mod digits;
mod shapes;
pub mod text;

pub use blobs::{RegressionData, blobs, regression};
pub use digits::{DIGIT_CLASSES, DIGIT_SIDE, digits, render_digit};
pub use shapes::{SHAPE_CLASSES, SHAPE_SIDE, Split, render_shape, shapes};

use crate::rng::Rng;

/// A classification dataset held in memory: `len` rows of `dim` features and a class label each.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassificationData {
    /// Row-major features, `len × dim`.
    pub features: Vec<f32>,
    /// One label per row, each below `classes`.
    pub labels: Vec<u32>,
    /// Number of features per row.
    pub dim: usize,
    /// Number of classes.
    pub classes: usize,
}

impl ClassificationData {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether the dataset has no rows.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The features of row `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.features[i * self.dim..(i + 1) * self.dim]
    }

    /// Gathers the rows `indices` into a batch: `(features, labels)`, row-major.
    pub fn gather(&self, indices: &[usize]) -> (Vec<f32>, Vec<i64>) {
        let mut features = Vec::with_capacity(indices.len() * self.dim);
        let mut labels = Vec::with_capacity(indices.len());
        for &i in indices {
            features.extend_from_slice(self.row(i));
            labels.push(i64::from(self.labels[i]));
        }
        (features, labels)
    }

    /// Splits the row indices into batches of at most `batch_size`, in an order shuffled by
    /// `rng` (or in order when `rng` is `None`).
    pub fn batches(&self, batch_size: usize, rng: Option<&mut Rng>) -> Vec<Vec<usize>> {
        let mut order: Vec<usize> = (0..self.len()).collect();
        if let Some(rng) = rng {
            rng.shuffle(&mut order);
        }
        order
            .chunks(batch_size.max(1))
            .map(<[usize]>::to_vec)
            .collect()
    }
}
