//! Errors of the models crate.

/// What can go wrong when choosing a device or training a model.
#[derive(Debug, thiserror::Error)]
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
    /// The unknown model name.
    #[error("unknown model `{0}` (expected mlp, cnn or charlm)")]
    UnknownModel(String),
    /// The device reported an error while running or reading results.
    #[error("device error: {0}")]
    Device(String),
}
