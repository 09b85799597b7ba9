//! Trained weights of the bundled VGG, cached on disk with burn's recorder so that tuning
//! trains the network only once.

use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::prelude::Backend;
use burn::record::{FullPrecisionSettings, NamedMpkFileRecorder};
use giving_models::{TrainConfig, Vgg, VggConfig};

use crate::error::Error;

/// The cache directory: `$XDG_CACHE_HOME/giving`, else `$HOME/.cache/giving`, else
/// `.giving-cache` in the working directory.
pub fn default_cache_dir() -> PathBuf {
    let env = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("XDG_CACHE_HOME")
        .map(|d| d.join("giving"))
        .or_else(|| env("HOME").map(|h| h.join(".cache").join("giving")))
        .unwrap_or_else(|| PathBuf::from(".giving-cache"))
}

/// The weights file (with its `.mpk` extension) of a network trained with `train` in `cache`:
/// the name spells out everything the weights depend on.
pub fn weights_path(cache: &Path, model: &VggConfig, train: &TrainConfig) -> PathBuf {
    let channels: Vec<String> = model.channels.iter().map(usize::to_string).collect();
    let stem = format!(
        "vgg_c{}_h{}_seed{}_n{}_e{}_b{}_lr{:e}",
        channels.join("-"),
        model.hidden,
        train.seed,
        train.train_size,
        train.epochs,
        train.batch_size,
        train.lr,
    );
    // No dot in the stem: burn's recorder sets the extension itself, and would replace
    // whatever follows a dot (`lr2.5e-3` would lose `5e-3`).
    cache.join(stem.replace('.', "p") + ".mpk")
}

fn recorder() -> NamedMpkFileRecorder<FullPrecisionSettings> {
    NamedMpkFileRecorder::new()
}

/// Saves `model` to `path` (an `.mpk` file), creating its folder.
pub fn save<B: Backend>(model: &Vgg<B>, path: &Path) -> Result<(), Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    model
        .clone()
        .save_file(path.with_extension(""), &recorder())
        .map_err(|e| Error::Weights {
            path: path.to_path_buf(),
            what: format!("cannot save: {e}"),
        })
}

/// Loads weights saved by [`save`] into a network of architecture `model`.
pub fn load<B: Backend>(
    model: &VggConfig,
    path: &Path,
    device: &B::Device,
) -> Result<Vgg<B>, Error> {
    if !path.is_file() {
        return Err(Error::Weights {
            path: path.to_path_buf(),
            what: "no such file (run `giving tune vgg` with the same settings to train it)".into(),
        });
    }
    model
        .init::<B>(device)
        .load_file(path.with_extension(""), &recorder(), device)
        .map_err(|e| Error::Weights {
            path: path.to_path_buf(),
            what: format!("cannot load (not weights of this architecture?): {e}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stem_has_no_dot() {
        let mut train = giving_models::ModelKind::Cnn.default_config();
        train.lr = 0.0025;
        let path = weights_path(Path::new("/c"), &VggConfig::new(32, 10), &train);
        let name = path.file_name().unwrap().to_str().unwrap();
        assert_eq!(name.matches('.').count(), 1, "{name}");
        assert!(
            name.ends_with(".mpk") && name.contains("lr2p5e-3"),
            "{name}"
        );
    }
}
