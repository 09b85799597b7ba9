//! # giving-models
//!
//! Bundled [burn](https://burn.dev) models, synthetic datasets and hand-written training loops
//! that *give* what they do — `loss` (lazy: the tensor itself), `step`, `batch`, `epoch`, `lr`,
//! validation `accuracy` and `val_loss` — through [`giving::give!`] and [`giving::iterate`].
//! The loops depend on the core crate only: no instrument is wired into them; whoever wants to
//! watch subscribes with [`giving::given()`].
//!
//! - [`data`]: `digits` (procedural 28×28 glyphs), blobs, regression, and a bundled
//!   public-domain text; all deterministic from a seed, nothing downloaded.
//! - [`model`]: an [`Mlp`] and a small [`Cnn`] for `digits`, a VGG-style [`Vgg`] for
//!   `shapes` (what `giving tune` approximates), a tiny character-level
//!   transformer ([`CharLm`]) for the text.
//! - [`train`](mod@train): the shared loop [`fit`], and [`train_mlp`], [`train_cnn`], [`train_charlm`].
//! - the burn glue comes from [`giving_burn`]: a tensor given as a lazy [`giving::Value`]
//!   ([`LazyTensor`](giving_burn::LazyTensor)) that the consumer reads; the loops sync the device once per `iterate` window with `B::sync`.
//! - [`DeviceSpec`]: `flex` (CPU, default feature), `wgpu`, `cuda[:N]`, chosen at run time
//!   among the backends compiled in (cargo features `flex`, `wgpu`, `cuda`).
//!
//! ```no_run
//! use giving::prelude::*;
//! use giving_models::{DeviceSpec, ModelKind};
//!
//! let gv = giving::given();
//! let losses = gv.spawn(gv.stream().key::<f64>("loss").collect::<Vec<_>>());
//! let mut config = ModelKind::Mlp.default_config();
//! config.steps = Some(50);
//! let report = giving_models::train(ModelKind::Mlp, &config, &DeviceSpec::Flex).unwrap();
//! gv.finish().unwrap();
//! println!("{} losses, final {}", losses.join().unwrap().len(), report.final_loss);
//! ```

pub mod data;
mod device;
mod error;
pub mod host;
#[cfg(feature = "learner")]
pub mod learner;
pub mod model;
pub mod rng;
mod settings;
pub mod train;

use std::fmt;
use std::str::FromStr;

use burn::tensor::backend::AutodiffBackend;

pub use device::{BackendTask, DeviceSpec};
pub use error::Error;
pub use model::{CharLm, CharLmConfig, Classifier, Cnn, CnnConfig, Mlp, MlpConfig, Vgg, VggConfig};
pub use train::{
    FirstSteps, TrainConfig, TrainReport, fit, train_charlm, train_cnn, train_mlp, train_vgg,
};

/// The bundled models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelKind {
    /// [`Mlp`] on `digits`.
    Mlp,
    /// [`Cnn`] on `digits`.
    Cnn,
    /// [`CharLm`] on the bundled text.
    CharLm,
}

impl ModelKind {
    /// Every bundled model.
    pub const ALL: [ModelKind; 3] = [ModelKind::Mlp, ModelKind::Cnn, ModelKind::CharLm];

    /// The model's name on the command line: `mlp`, `cnn` or `charlm`.
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Mlp => "mlp",
            ModelKind::Cnn => "cnn",
            ModelKind::CharLm => "charlm",
        }
    }

    /// The default settings of `giving train <model>`, sized to take about a minute or less
    /// on a 2-core CPU with the `flex` backend in a release build.
    pub fn default_config(self) -> TrainConfig {
        match self {
            ModelKind::Mlp => TrainConfig {
                epochs: 10,
                batch_size: 64,
                lr: 1e-3,
                train_size: 15_000,
                valid_size: 2_000,
                ..TrainConfig::default()
            },
            ModelKind::Cnn => TrainConfig {
                epochs: 2,
                batch_size: 64,
                lr: 2e-3,
                train_size: 10_000,
                valid_size: 2_000,
                ..TrainConfig::default()
            },
            ModelKind::CharLm => TrainConfig {
                epochs: 3,
                batch_size: 16,
                lr: 3e-3,
                train_size: 800,
                valid_size: 64,
                ..TrainConfig::default()
            },
        }
    }

    /// What one item of a batch is, for reports: `images` or `sequences`.
    pub fn item_name(self) -> &'static str {
        match self {
            ModelKind::Mlp | ModelKind::Cnn => "images",
            ModelKind::CharLm => "sequences",
        }
    }
}

impl fmt::Display for ModelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ModelKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        ModelKind::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| Error::UnknownModel(s.to_string()))
    }
}

/// The default architecture of the MLP on `digits`: `784 → 256 → 128 → 10`.
pub fn default_mlp() -> MlpConfig {
    MlpConfig::new(
        data::DIGIT_SIDE * data::DIGIT_SIDE,
        vec![256, 128],
        data::DIGIT_CLASSES,
    )
}

/// The default architecture of the CNN on `digits`.
pub fn default_cnn() -> CnnConfig {
    CnnConfig::new(data::DIGIT_SIDE, data::DIGIT_CLASSES)
}

/// The default architecture of the character model on the bundled text (context 64).
pub fn default_charlm() -> CharLmConfig {
    CharLmConfig::new(data::text::TextData::bundled().vocab.len(), 64)
}

struct Train<'a> {
    kind: ModelKind,
    config: &'a TrainConfig,
}

impl BackendTask for Train<'_> {
    type Output = Result<TrainReport, Error>;

    fn run<B: AutodiffBackend>(self, device: B::Device) -> Self::Output {
        // Probes (`giving train --probe "forward > x"`) give this backend's tensors lazily.
        giving_burn::probe_autodiff_tensors::<B>();
        match self.kind {
            ModelKind::Mlp => train_mlp::<B>(&device, self.config, &default_mlp()),
            ModelKind::Cnn => train_cnn::<B>(&device, self.config, &default_cnn()),
            ModelKind::CharLm => train_charlm::<B>(&device, self.config, &default_charlm()),
        }
    }
}

/// Trains a bundled model with its default architecture on `device`.
pub fn train(
    kind: ModelKind,
    config: &TrainConfig,
    device: &DeviceSpec,
) -> Result<TrainReport, Error> {
    device.run(Train { kind, config })?
}
