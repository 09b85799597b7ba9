//! Errors of the models crate.

/// What can go wrong when choosing a device or training a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The device string could not be parsed.
    #[error("invalid device `{given}`: {reason} (expected flex, wgpu, wgpu:N, cuda or cuda:N)")]
    InvalidDevice {
        /// The string given.
        given: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The device's backend was not compiled into this build.
    #[error(
        "the {backend} backend is not compiled into this build: rebuild with `--features {feature}` \
         (e.g. `cargo run --release --features {feature} --bin giving -- ...`)"
    )]
    BackendNotCompiled {
        /// The backend asked for.
        backend: &'static str,
        /// The cargo feature of `giving-models` that enables it.
        feature: &'static str,
    },
    /// A training setting is out of range.
    #[error("invalid training configuration: {0}")]
    InvalidConfig(String),
    /// A training setting's value breaks its rule ([`TrainConfig::validate`](crate::TrainConfig::validate)).
    #[error("invalid training configuration: {setting} must be {rule}, not {value}")]
    InvalidSetting {
        /// The setting, as its flag is spelt without the dashes (`batch-size`).
        setting: &'static str,
        /// The value refused.
        value: String,
        /// What the value must be (`at least 1`).
        rule: String,
    },
    /// The unknown model name.
    #[error("unknown model `{0}` (expected mlp, cnn or charlm)")]
    UnknownModel(String),
    /// The device reported an error while running or reading results.
    #[error("device error: {0}")]
    Device(String),
}
