//! Options shared by `giving train` and `giving bench`: the model, device and training settings.

use anyhow::{Result, bail};
use clap::Args;
use giving_models::{DeviceSpec, ModelKind, TrainConfig};

/// Options shared by `train` and `bench`.
#[derive(Debug, Args)]
pub(crate) struct Common {
    /// The model: mlp, cnn or charlm.
    #[arg(value_parser = parse_model)]
    pub(crate) model: ModelKind,
    /// Device: flex (CPU), wgpu, wgpu:N, cuda or cuda:N (among the backends compiled in).
    #[arg(long, value_parser = parse_device, default_value_t = DeviceSpec::default())]
    pub(crate) device: DeviceSpec,
    /// Items per batch [default: the model's].
    #[arg(long)]
    batch_size: Option<usize>,
    /// Learning rate [default: the model's].
    #[arg(long)]
    lr: Option<f64>,
    /// Seed of the data, shuffling and initial parameters.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Training items per epoch [default: the model's].
    #[arg(long)]
    train_size: Option<usize>,
    /// Validation items per epoch [default: the model's].
    #[arg(long)]
    valid_size: Option<usize>,
    /// Steps per device-sync window [default: 10].
    #[arg(long)]
    window: Option<usize>,
}

impl Common {
    pub(crate) fn config(&self) -> TrainConfig {
        let mut config = self.model.default_config();
        config.seed = self.seed;
        if let Some(v) = self.batch_size {
            config.batch_size = v;
        }
        if let Some(v) = self.lr {
            config.lr = v;
        }
        if let Some(v) = self.train_size {
            config.train_size = v;
        }
        if let Some(v) = self.valid_size {
            config.valid_size = v;
        }
        if let Some(v) = self.window {
            config.window = v;
        }
        config
    }
}

fn parse_model(s: &str) -> Result<ModelKind, String> {
    s.parse().map_err(|e: giving_models::Error| e.to_string())
}

fn parse_device(s: &str) -> Result<DeviceSpec, String> {
    s.parse().map_err(|e: giving_models::Error| e.to_string())
}

/// Checks that the device's backend is compiled in before generating any data.
pub(crate) fn check_device(device: &DeviceSpec) -> Result<()> {
    if !device.is_compiled() {
        bail!(giving_models::Error::BackendNotCompiled {
            backend: device.backend(),
            feature: device.backend(),
        });
    }
    Ok(())
}
