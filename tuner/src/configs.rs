//! `configs.json`: every kept configuration of a tuning session, and what `giving tune apply`
//! needs to run one again (the network, its weights file, the data sets).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::knob::Knob;
use crate::qos_model::ProfileReport;
use crate::settings::TuneSettings;

/// The format version written in `configs.json`. Version 2: knob ids with HPVM's semantics
/// (in version 1, `perf_*_k3`/`k4` computed one row in K and `samp_*` rescaled differently, so
/// the same ids named other computations).
pub const FORMAT: u32 = 2;

/// The tuned network: its architecture and trained weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworkInfo {
    /// Output channels of each convolution.
    pub channels: Vec<usize>,
    /// Width of the hidden linear layer.
    pub hidden: usize,
    /// Side of the input images.
    pub side: usize,
    /// Number of classes.
    pub classes: usize,
    /// The weights file (burn's named MessagePack record).
    pub weights: PathBuf,
}

/// The data sets: the `shapes` tuning and test splits of one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataInfo {
    /// Seed of the data.
    pub seed: u64,
    /// Images in the tuning set (QoS during tuning).
    pub tune_size: usize,
    /// Images in the test set (QoS and speed of the best configurations).
    pub test_size: usize,
}

/// The exact network's QoS.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// Accuracy in percent on the tuning set.
    pub qos: f64,
    /// Accuracy in percent on the test set.
    pub test_qos: f64,
}

/// Wall times of the session's stages, in seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// The initialisation: the measured cost model's timings and the QoS model's profiles (0
    /// with neither).
    pub init: f64,
    /// The search: `iterations` configurations evaluated.
    pub search: f64,
    /// The validation of the best predicted configurations (0 without a model).
    pub validation: f64,
    /// Initialisation, search and validation: what `--qos-model` is meant to shorten.
    pub tuning: f64,
    /// Test-set QoS and interleaved speed measurements of the best configurations.
    pub measurement: f64,
    /// Configurations the search evaluated.
    pub iterations: usize,
}

/// Configurations the search kept and the session then dropped (PredTuner's
/// `_filter_configs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Dropped {
    /// Best predicted configurations whose QoS, run on the tuning set, missed the keep
    /// threshold (only with a QoS model).
    pub validation: usize,
    /// Configurations whose test-set QoS missed the keep threshold (relative to the exact
    /// network's test QoS, or absolute with `--absolute`).
    pub test: usize,
}

/// One kept configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigRecord {
    /// The knob of each convolution layer, by id.
    pub knobs: Vec<String>,
    /// Accuracy in percent on the tuning set, measured by running the configuration.
    pub qos: f64,
    /// The exact network's tuning QoS minus `qos`.
    pub qos_loss: f64,
    /// The QoS model's prediction, when the session used one.
    pub predicted_qos: Option<f64>,
    /// Accuracy in percent on the test set (measured for every kept configuration; absent
    /// from files written before it was).
    pub test_qos: Option<f64>,
    /// End-to-end speedup on the test set, timed interleaved with the exact network: the best
    /// configurations over `repeats` rounds, the other kept ones over one round. Written
    /// before the prediction: it is the figure a user gets.
    pub measured_speedup: Option<f64>,
    /// Speedup predicted by the cost model.
    pub predicted_speedup: f64,
    /// Whether the configuration is on the Pareto front of (QoS, predicted speedup) and
    /// measured at least as fast as the exact network.
    pub pareto: bool,
    /// Whether it is among the best (the front, then close-to-optimal ones up to
    /// `take_best_n`) and measured at least as fast as the exact network.
    pub best: bool,
}

impl ConfigRecord {
    /// The knobs of the configuration.
    pub fn parsed_knobs(&self) -> Result<Vec<Knob>, Error> {
        self.knobs.iter().map(|k| k.parse()).collect()
    }

    /// The configuration as indices into `knobs` (a network's alleles), as the search and
    /// [`Network::qos`](crate::Network::qos) take it; a knob `knobs` lacks is refused.
    pub fn knob_indices(&self, knobs: &[Knob]) -> Result<Vec<usize>, Error> {
        self.parsed_knobs()?
            .iter()
            .map(|k| {
                knobs
                    .iter()
                    .position(|x| x == k)
                    .ok_or_else(|| Error::UnknownKnob(k.id()))
            })
            .collect()
    }
}

/// Everything `giving tune` writes to `configs.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigsFile {
    /// The file format's version (1); a file of another version is refused when read.
    pub format: u32,
    /// The tuned network.
    pub network: NetworkInfo,
    /// The data sets.
    pub data: DataInfo,
    /// The session's settings.
    pub settings: TuneSettings,
    /// The exact network's QoS.
    pub baseline: Baseline,
    /// How long the stages took.
    pub timing: Timing,
    /// How the QoS model's profile was obtained (absent with the empirical QoS, and from
    /// files written before profiles were stored).
    #[serde(default)]
    pub profile: Option<ProfileReport>,
    /// Configurations dropped by the validation and the test set (zeros in files written
    /// before they were counted).
    #[serde(default)]
    pub dropped: Dropped,
    /// The kept configurations, best predicted speedup first.
    pub configs: Vec<ConfigRecord>,
}

impl ConfigsFile {
    /// Writes the file as pretty JSON.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        let json = serde_json::to_string_pretty(self).map_err(|e| Error::BadConfigs {
            path: path.to_path_buf(),
            what: format!("cannot encode: {e}"),
        })?;
        std::fs::write(path, json + "\n").map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Reads and checks a file written by [`ConfigsFile::save`]: a clear error names the file
    /// and what is wrong (not JSON, a missing field, an unknown knob, a wrong layer count).
    pub fn load(path: &Path) -> Result<Self, Error> {
        let bad = |what: String| Error::BadConfigs {
            path: path.to_path_buf(),
            what,
        };
        let text = crate::error::read_text(path)?;
        let file: ConfigsFile = serde_json::from_str(&text)
            .map_err(|e| bad(format!("not a configs.json written by `giving tune`: {e}")))?;
        if file.format == 1 {
            return Err(bad(format!(
                "format 1 is not the supported {FORMAT}: it was written before the knobs took \
                 HPVM's semantics, and its perforation and sampling ids named other \
                 computations; tune again"
            )));
        }
        if file.format != FORMAT {
            return Err(bad(format!(
                "format {} is not the supported {FORMAT}",
                file.format
            )));
        }
        let layers = file.network.channels.len();
        if layers == 0 || !layers.is_multiple_of(2) {
            return Err(bad(format!(
                "network.channels has {layers} layers, expected an even number above 0"
            )));
        }
        for (i, config) in file.configs.iter().enumerate() {
            if config.knobs.len() != layers {
                return Err(bad(format!(
                    "configs[{i}] has {} knobs for a {layers}-layer network",
                    config.knobs.len()
                )));
            }
            config
                .parsed_knobs()
                .map_err(|e| bad(format!("configs[{i}]: {e}")))?;
        }
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ConfigsFile {
        ConfigsFile {
            format: FORMAT,
            network: NetworkInfo {
                channels: vec![4, 4],
                hidden: 8,
                side: 32,
                classes: 10,
                weights: PathBuf::from("/tmp/w.mpk"),
            },
            data: DataInfo {
                seed: 1,
                tune_size: 10,
                test_size: 20,
            },
            settings: TuneSettings::new(),
            baseline: Baseline {
                qos: 90.0,
                test_qos: 89.5,
            },
            timing: Timing::default(),
            profile: Some(ProfileReport {
                path: Some(PathBuf::from("/tmp/qos_p1-0123.json")),
                loaded: true,
                built: 0,
            }),
            dropped: Dropped {
                validation: 1,
                test: 2,
            },
            configs: vec![ConfigRecord {
                knobs: vec!["baseline".into(), "perf_row_k2_o1".into()],
                qos: 88.1,
                qos_loss: 1.9,
                predicted_qos: Some(88.4),
                test_qos: Some(87.0),
                predicted_speedup: 1.7,
                measured_speedup: Some(1.4),
                pareto: true,
                best: true,
            }],
        }
    }

    #[test]
    fn round_trips_through_json() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("configs.json");
        let file = sample();
        file.save(&path).unwrap();
        assert_eq!(ConfigsFile::load(&path).unwrap(), file);
    }

    #[test]
    fn bad_files_name_the_file_and_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("configs.json");
        let check = |text: &str, expected: &str| {
            std::fs::write(&path, text).unwrap();
            let err = ConfigsFile::load(&path).unwrap_err().to_string();
            assert!(
                err.contains("configs.json") && err.contains(expected),
                "{err}"
            );
        };
        check("{ not json", "not a configs.json");
        let json = serde_json::to_string(&sample()).unwrap();
        check(
            &json.replace("perf_row_k2_o1", "perf_row_k9_o1"),
            "unknown knob `perf_row_k9_o1`",
        );
        check(
            &json.replace("\"baseline\",", ""),
            "configs[0] has 1 knobs for a 2-layer network",
        );
        let format = format!("\"format\":{FORMAT}");
        assert!(json.contains(&format), "{json}");
        check(&json.replace(&format, "\"format\":7"), "format 7");
        // Format 1's perforation and sampling ids named other computations.
        check(&json.replace(&format, "\"format\":1"), "tune again");
        let err = ConfigsFile::load(&dir.path().join("missing.json")).unwrap_err();
        assert!(err.to_string().contains("missing.json"), "{err}");
    }
}
