//! The whole of `giving tune` and `giving tune apply` for the bundled VGG, run on a device
//! chosen at run time ([`giving_models::DeviceSpec`]): train or load the network, build the
//! data sets, tune, write `configs.json` and the plot; or load one configuration and run it.

use std::path::{Path, PathBuf};

use burn::module::AutodiffModule;
use burn::prelude::Backend;
use burn::tensor::backend::AutodiffBackend;
use giving::timeline::Channel;
use giving::tracepoint;
use giving_models::data::{SHAPE_CLASSES, SHAPE_SIDE, Split, shapes};
use giving_models::{BackendTask, TrainConfig, TrainReport, Vgg, VggConfig};

use crate::configs::{Baseline, ConfigRecord, ConfigsFile, DataInfo, FORMAT, NetworkInfo};
use crate::error::Error;
use crate::knob::Knob;
use crate::network::{Dataset, Network};
use crate::qos_model::{ProfileStore, fnv1a_hex};
use crate::session::{measure_speedup, tune_with};
use crate::settings::TuneSettings;
use crate::{plot, weights};

/// The bundled network's architecture: six convolutions of 32 channels each (wide enough that
/// the convolutions, not the passes around them, take most of the time: docs/tuner.md).
pub fn default_vgg() -> VggConfig {
    VggConfig::new(SHAPE_SIDE, SHAPE_CLASSES).with_channels(vec![32; 6])
}

/// The VGG16-width option (`giving tune vgg16-width`): eight convolutions at VGG16's widths,
/// 64, 64, 128, 128, 256, 256, 512, 512 channels (pooled after every second, so the 32-pixel
/// images end at 2 pixels), and a 512-wide hidden layer. VGG16 has thirteen convolutions; this
/// keeps its widths within the bundled architecture's pooling, not its depth.
pub fn vgg16_width() -> VggConfig {
    VggConfig::new(SHAPE_SIDE, SHAPE_CLASSES)
        .with_channels(vec![64, 64, 128, 128, 256, 256, 512, 512])
        .with_hidden(512)
}

/// How the bundled network is trained when no weights are cached: 3 epochs of 8000 images.
pub fn default_training() -> TrainConfig {
    TrainConfig {
        epochs: 3,
        batch_size: 64,
        lr: 2e-3,
        train_size: 8000,
        valid_size: 1000,
        ..TrainConfig::default()
    }
}

/// How the VGG16-width option is trained: 4 epochs of 8000 images at Adam's learning rate
/// 1e-4. Its 512-channel layers have no normalisation: at [`default_training`]'s 2e-3 the loss
/// jumps to 10.2 on the second step and the network stays at chance (9.8% after 3 epochs on
/// an H100); at 1e-4 it reached 94.4% on the tuning images after 4 epochs (docs/tuner.md).
pub fn vgg16_width_training() -> TrainConfig {
    TrainConfig {
        epochs: 4,
        lr: 1e-4,
        ..default_training()
    }
}

/// Refuses `setting`'s `value`, saying what it must be (the workspace's one wording).
fn bad(setting: &str, rule: &str, value: String) -> Result<(), Error> {
    Err(Error::InvalidSetting(format!(
        "{setting} must be {rule}, not {value}"
    )))
}

/// A tuning job: the network, its training, the data sets, the session and where to write.
#[derive(Debug, Clone)]
pub struct TuneJob {
    /// The architecture.
    pub model: VggConfig,
    /// How it is trained if its weights are not cached (its seed is also the data's).
    pub train: TrainConfig,
    /// Images in the tuning set.
    pub tune_size: usize,
    /// Images in the test set.
    pub test_size: usize,
    /// Where trained weights are cached.
    pub cache: PathBuf,
    /// Train again even if weights are cached.
    pub retrain: bool,
    /// The session.
    pub settings: TuneSettings,
    /// The folder `configs.json` and `configs.png` are written to.
    pub out: PathBuf,
}

/// What a tuning job did.
#[derive(Debug, Clone)]
pub struct TuneOutcome {
    /// The weights file used.
    pub weights: PathBuf,
    /// The training report, if the network was trained by this job.
    pub trained: Option<TrainReport>,
    /// What was written to `configs.json`.
    pub file: ConfigsFile,
    /// `configs.json`.
    pub configs_path: PathBuf,
    /// The PNG plot.
    pub plot_path: PathBuf,
}

impl TuneJob {
    /// The job with the bundled defaults, caching weights in `cache` and writing to `out`.
    pub fn new(cache: PathBuf, out: PathBuf) -> Self {
        Self {
            model: default_vgg(),
            train: default_training(),
            tune_size: 500,
            test_size: 1000,
            cache,
            retrain: false,
            settings: TuneSettings::new(),
            out,
        }
    }

    /// The weights file this job uses (trained on the first run).
    pub fn weights_path(&self) -> PathBuf {
        weights::weights_path(&self.cache, &self.model, &self.train)
    }

    /// Where this job's QoS-model profiles are stored: `<cache>/profiles`, keyed by the
    /// network's architecture, the bytes of its weights file and the tuning set (seed and
    /// size), so that retrained weights or other data never reuse a profile.
    pub fn profile_store(&self, weights: &Path) -> Result<ProfileStore, Error> {
        let bytes = std::fs::read(weights).map_err(|source| Error::Io {
            path: weights.to_path_buf(),
            source,
        })?;
        let network = format!(
            "vgg channels {:?} hidden {} side {SHAPE_SIDE} classes {SHAPE_CLASSES}",
            self.model.channels, self.model.hidden
        );
        let data = format!("shapes seed {} tune {}", self.train.seed, self.tune_size);
        Ok(ProfileStore {
            dir: self.cache.join("profiles"),
            key: fnv1a_hex(&[network.as_bytes(), &bytes, data.as_bytes()]),
        })
    }

    /// Checks the settings before anything runs.
    pub fn validate(&self) -> Result<(), Error> {
        self.settings.validate()?;
        self.train.validate()?;
        let convs = self.model.channels.len();
        if convs == 0 || !convs.is_multiple_of(2) || self.model.channels.contains(&0) {
            return bad(
                "channels",
                "an even number of convolutions with at least one channel each",
                format!("{:?}", self.model.channels),
            );
        }
        if SHAPE_SIDE >> (convs / 2) < 2 {
            return bad(
                "channels",
                &format!(
                    "at most {} convolutions (each pair halves the {SHAPE_SIDE}-pixel images, which must keep 2 pixels)",
                    2 * (SHAPE_SIDE.ilog2() as usize - 1)
                ),
                format!("{convs} convolutions"),
            );
        }
        if self.model.hidden == 0 {
            return bad("hidden", "at least 1", "0".to_owned());
        }
        // The sets are generated in memory (12 KiB an image).
        for (setting, size) in [("tune-size", self.tune_size), ("test-size", self.test_size)] {
            if size == 0 || size > TrainConfig::MAX_ITEMS {
                return bad(
                    setting,
                    &format!("from 1 to {} images", TrainConfig::MAX_ITEMS),
                    size.to_string(),
                );
            }
        }
        Ok(())
    }

    fn run_on<B: AutodiffBackend>(self, device: B::Device) -> Result<TuneOutcome, Error> {
        self.validate()?;
        let weights = self.weights_path();
        let inner_device = device.clone();
        let (model, trained): (Vgg<B::InnerBackend>, _) = if weights.is_file() && !self.retrain {
            (weights::load(&self.model, &weights, &inner_device)?, None)
        } else {
            // A span around the training: its last epoch ends with it on the timeline, not
            // at the end of the tuning.
            let training = tracepoint!(Channel::thread(), "training");
            let (model, report) = giving_models::train_vgg::<B>(&device, &self.train, &self.model)?;
            training.end();
            let model = model.valid();
            weights::save(&model, &weights)?;
            (model, Some(report))
        };
        let seed = self.train.seed;
        let tune_set = Dataset::new(
            &shapes(seed, Split::Tune, self.tune_size),
            SHAPE_SIDE,
            &inner_device,
        );
        let test_set = Dataset::new(
            &shapes(seed, Split::Test, self.test_size),
            SHAPE_SIDE,
            &inner_device,
        );
        let net = Network::new(model, Knob::all())?;
        let store = self.profile_store(&weights)?;
        let tuning = {
            let _tuning = tracepoint!(Channel::thread(), "tuning");
            tune_with(&net, &tune_set, &test_set, &self.settings, Some(&store))?
        };
        let file = ConfigsFile {
            format: FORMAT,
            network: NetworkInfo {
                channels: self.model.channels.clone(),
                hidden: self.model.hidden,
                side: SHAPE_SIDE,
                classes: SHAPE_CLASSES,
                weights: std::path::absolute(&weights).unwrap_or(weights.clone()),
            },
            data: DataInfo {
                seed,
                tune_size: self.tune_size,
                test_size: self.test_size,
            },
            settings: TuneSettings {
                cost_model: tuning.cost_model,
                ..self.settings.recorded()?
            },
            baseline: Baseline {
                qos: tuning.baseline_qos,
                test_qos: tuning.baseline_test_qos,
            },
            timing: tuning.timing,
            profile: tuning.profile,
            dropped: tuning.dropped,
            configs: tuning.configs,
        };
        std::fs::create_dir_all(&self.out).map_err(|source| Error::Io {
            path: self.out.clone(),
            source,
        })?;
        let configs_path = self.out.join("configs.json");
        let plot_path = self.out.join("configs.png");
        file.save(&configs_path)?;
        plot::plot(&file, &plot_path)?;
        Ok(TuneOutcome {
            weights,
            trained,
            file,
            configs_path,
            plot_path,
        })
    }
}

impl BackendTask for TuneJob {
    type Output = Result<TuneOutcome, Error>;

    fn run<B: AutodiffBackend>(self, device: B::Device) -> Self::Output {
        self.run_on::<B>(device)
    }
}

/// `giving tune apply`: one configuration of a `configs.json` run again.
#[derive(Debug, Clone)]
pub struct ApplyJob {
    /// The `configs.json` file.
    pub path: PathBuf,
    /// The configuration's index in the file's `configs`.
    pub index: usize,
}

/// What applying a configuration measured.
#[derive(Debug, Clone)]
pub struct ApplyOutcome {
    /// The configuration as recorded.
    pub record: ConfigRecord,
    /// Its QoS on the tuning set, measured now.
    pub qos: f64,
    /// Its QoS on the test set, measured now.
    pub test_qos: f64,
    /// Its end-to-end speedup over the exact network on the test set, timed now as the
    /// session timed the best configurations (interleaved, the file's `repeats` rounds).
    pub speedup: f64,
}

impl ApplyJob {
    /// Loads the file and the configuration, or says clearly what is wrong with them.
    pub fn load(&self) -> Result<(ConfigsFile, ConfigRecord), Error> {
        let file = ConfigsFile::load(&self.path)?;
        let record = file
            .configs
            .get(self.index)
            .cloned()
            .ok_or_else(|| Error::BadConfigs {
                path: self.path.clone(),
                what: format!(
                    "no configuration at index {} (the file has {})",
                    self.index,
                    file.configs.len()
                ),
            })?;
        Ok((file, record))
    }

    fn run_on<B: Backend>(self, device: B::Device) -> Result<ApplyOutcome, Error> {
        let (file, record) = self.load()?;
        let model = VggConfig::new(file.network.side, file.network.classes)
            .with_channels(file.network.channels.clone())
            .with_hidden(file.network.hidden);
        let vgg = weights::load::<B>(&model, &file.network.weights, &device)?;
        let knobs = Knob::all();
        let config = record.knob_indices(&knobs)?;
        let net = Network::new(vgg, knobs)?;
        let data = |split, len| {
            Dataset::new(
                &shapes(file.data.seed, split, len),
                file.network.side,
                &device,
            )
        };
        let qos = net.qos(&config, &data(Split::Tune, file.data.tune_size))?;
        let test = data(Split::Test, file.data.test_size);
        let test_qos = net.qos(&config, &test)?;
        net.time(&vec![0; config.len()], &test)?; // warm-up, as in the session
        let speedup = measure_speedup(&net, &config, &test, file.settings.repeats)?;
        Ok(ApplyOutcome {
            record,
            qos,
            test_qos,
            speedup,
        })
    }
}

impl BackendTask for ApplyJob {
    type Output = Result<ApplyOutcome, Error>;

    fn run<B: AutodiffBackend>(self, device: B::Device) -> Self::Output {
        self.run_on::<B::InnerBackend>(device)
    }
}

/// The path of `configs.json` inside a folder, or the file itself.
pub fn configs_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("configs.json")
    } else {
        path.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_job_is_valid() {
        assert!(
            TuneJob::new("cache".into(), "out".into())
                .validate()
                .is_ok()
        );
    }

    #[test]
    fn a_bad_value_of_each_job_setting_is_refused_naming_the_setting_and_value() {
        let too_many = TrainConfig::MAX_ITEMS + 1;
        type Change = Box<dyn FnOnce(&mut TuneJob)>;
        let cases: [(&str, &str, Change); 9] = [
            (
                "channels",
                "not []",
                Box::new(|j| j.model.channels = vec![]),
            ),
            (
                "channels",
                "not [32]",
                Box::new(|j| j.model.channels = vec![32]),
            ),
            (
                "channels",
                "not [0, 0]",
                Box::new(|j| j.model.channels = vec![0, 0]),
            ),
            (
                "channels",
                "not 10 convolutions",
                Box::new(|j| j.model.channels = vec![4; 10]),
            ),
            ("hidden", "not 0", Box::new(|j| j.model.hidden = 0)),
            ("tune-size", "not 0", Box::new(|j| j.tune_size = 0)),
            ("test-size", "not 0", Box::new(|j| j.test_size = 0)),
            (
                "test-size",
                "not 1000001",
                Box::new(move |j| j.test_size = too_many),
            ),
            ("epochs", "not 0", Box::new(|j| j.train.epochs = 0)),
        ];
        for (setting, value, change) in cases {
            let mut job = TuneJob::new("cache".into(), "out".into());
            change(&mut job);
            let message = match job.validate() {
                Err(e) => e.to_string(),
                Ok(()) => panic!("{setting}: {job:?} was accepted"),
            };
            assert!(
                message.contains(&format!("{setting} must be")),
                "{setting}: {message}"
            );
            assert!(message.contains(value), "{value}: {message}");
        }
    }

    #[test]
    fn the_vgg16_width_network_is_valid_and_spans_64_to_512_channels() {
        let mut job = TuneJob::new("cache".into(), "out".into());
        job.model = vgg16_width();
        assert!(job.validate().is_ok());
        let channels = &job.model.channels;
        assert_eq!(channels.len(), 8);
        assert_eq!(
            (channels.iter().min(), channels.iter().max()),
            (Some(&64), Some(&512))
        );
        // Its weights are cached apart from the default network's.
        let default = TuneJob::new("cache".into(), "out".into());
        assert_ne!(job.weights_path(), default.weights_path());
    }

    #[test]
    fn eight_convolutions_still_fit_the_images() {
        let mut job = TuneJob::new("cache".into(), "out".into());
        job.model.channels = vec![4; 8];
        assert!(job.validate().is_ok());
    }
}
