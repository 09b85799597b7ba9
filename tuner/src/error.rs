//! Errors of the tuner.

use std::path::PathBuf;

/// What can go wrong when tuning, saving or applying configurations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A knob identifier that no knob has.
    #[error("unknown knob `{0}` (see `giving tune --list-knobs`)")]
    UnknownKnob(String),
    /// A tuning setting is out of range.
    #[error("invalid tuning setting: {0}")]
    InvalidSetting(String),
    /// A configurations file could not be read or is not what `giving tune` writes.
    #[error("{}: {what}", path.display())]
    BadConfigs {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// A knobs file (`--knobs-file`) is not a list of knobs this tuner computes.
    #[error("knobs file {}: {what}", path.display())]
    BadKnobs {
        /// The file.
        path: PathBuf,
        /// What is wrong with it, with the line and the key.
        what: String,
    },
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// Trained weights could not be saved or loaded.
    #[error("weights {}: {what}", path.display())]
    Weights {
        /// The weights file.
        path: PathBuf,
        /// What failed.
        what: String,
    },
    /// The plot could not be drawn or written.
    #[error("plot {}: {what}", path.display())]
    Plot {
        /// The PNG file.
        path: PathBuf,
        /// What failed.
        what: String,
    },
    /// Training the network failed.
    #[error(transparent)]
    Model(#[from] giving_models::Error),
    /// The device failed while running the network.
    #[error("device error: {0}")]
    Device(String),
}

/// The text of the file at `path`, or [`Error::Io`] naming it.
pub(crate) fn read_text(path: &std::path::Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}
