//! [`TrainConfig`]: the settings of a training run, each declared once.
//!
//! A field's doc comment, default ([`TrainConfig::default`]; a model that differs overrides
//! it in [`ModelKind::default_config`]), command-line flag (`clap::Args`, behind the `cli`
//! feature) and validation rule ([`TrainConfig::validate`]) all live here; the MLflow params
//! and `giving train`'s first line read the settings through `Serialize`
//! ([`TrainConfig::params`]) instead of listing them.
//! Adding a setting is two edits: the field (with its doc, flag and default) and its rule in
//! `validate`, then its use in the loop (docs/architecture.md, "How to add a setting").
//!
//! Sizes follow the workspace's one policy (docs/architecture.md, "Sizes"): a size that must
//! be positive is refused by `validate` with an error naming the setting and its value; a size
//! that may be zero says in its doc what zero means.
//!
//! [`ModelKind::default_config`]: crate::ModelKind::default_config

use serde::Serialize;

use crate::error::Error;

/// Settings of a training run.
///
/// Without the `cli` feature this is a plain struct; with it, it also derives `clap::Args`:
/// every flag is optional (`required = false`), so that a command line *updates* a model's
/// [`default_config`](crate::ModelKind::default_config) through
/// `clap::FromArgMatches::update_from_arg_matches` and leaves unset flags at the model's
/// default. `epochs` and `steps` are not flags of their own here: `giving train` and
/// `giving bench` mean different things by them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct TrainConfig {
    /// Number of epochs (at least 1).
    #[cfg_attr(feature = "cli", arg(skip))]
    pub epochs: usize,
    /// If set, stop after this many steps in total (at least 1; the last epoch may be
    /// partial).
    #[cfg_attr(feature = "cli", arg(skip))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// Items per batch (images, or text windows for `charlm`): from 1 to
    /// [`MAX_ITEMS`](Self::MAX_ITEMS), and at most `train_size`.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            required = false,
            help = "Items per batch [default: the model's]"
        )
    )]
    pub batch_size: usize,
    /// Learning rate of the Adam optimiser (a positive, finite number).
    #[cfg_attr(
        feature = "cli",
        arg(long, required = false, help = "Learning rate [default: the model's]")
    )]
    pub lr: f64,
    /// Seed of the data, the shuffling and the initial parameters.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            default_value_t = 0,
            help = "Seed of the data, shuffling and initial parameters"
        )
    )]
    pub seed: u64,
    /// Training items per epoch (images, or text windows for `charlm`): from `batch_size` to
    /// [`MAX_ITEMS`](Self::MAX_ITEMS).
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            required = false,
            help = "Training items per epoch [default: the model's]"
        )
    )]
    pub train_size: usize,
    /// Validation items evaluated after each epoch, at most [`MAX_ITEMS`](Self::MAX_ITEMS);
    /// 0: no validation.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            required = false,
            help = "Validation items per epoch [default: the model's]"
        )
    )]
    pub valid_size: usize,
    /// Steps per sync window (at least 1): the device is synced once per window.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            required = false,
            help = "Steps per device-sync window [default: 10]"
        )
    )]
    pub window: usize,
    /// Watch the model every N steps (at least 1): per-parameter weight and gradient
    /// statistics and update ratios, given lazily (giving-burn's `ModelWatch`); none by
    /// default.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            value_name = "N",
            help = "Watch the model every N steps: per-parameter weight and gradient statistics (docs/watch.md)"
        )
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch: Option<u64>,
    /// With [`watch`](Self::watch): the probed variables whose activations are watched too
    /// (`"Cnn.forward > x"`: a ptera selector on a function annotated with `#[giving::probe]`,
    /// as `giving probes` lists them); none by default.
    #[cfg_attr(
        feature = "cli",
        arg(
            long = "watch-act",
            value_name = "SELECTOR",
            requires = "watch",
            help = "With --watch: also watch the activations this probe selector catches, e.g. \"Cnn.forward > x\" (repeatable; `giving probes` lists the variables)"
        )
    )]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub watch_act: Vec<String>,
}

/// The settings every model shares unless it says otherwise
/// ([`ModelKind::default_config`](crate::ModelKind::default_config) overrides the sizes and
/// the learning rate): a new setting gets its default here, once, and the models' configs
/// (written `..TrainConfig::default()`) take it without another edit.
impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            epochs: 1,
            steps: None,
            batch_size: 64,
            lr: 1e-3,
            seed: 0,
            train_size: 10_000,
            valid_size: 1_000,
            window: 10,
            watch: None,
            watch_act: Vec::new(),
        }
    }
}

impl TrainConfig {
    /// The most items a bundled data set generates per split. The data is generated in memory
    /// (a digit is 3 KiB of f32): above this a run would exhaust memory, or overflow the size
    /// arithmetic, instead of training.
    pub const MAX_ITEMS: usize = 1_000_000;

    /// Checks that the settings can be trained with: every rule of every setting is here, and
    /// a refusal names the setting and its value.
    pub fn validate(&self) -> Result<(), Error> {
        // Steps first: `--steps 0` also makes zero epochs, and must be blamed on the steps.
        if let Some(steps) = self.steps {
            at_least_one("steps", steps)?;
        }
        at_least_one("epochs", self.epochs)?;
        at_least_one("batch-size", self.batch_size)?;
        at_least_one("window", self.window)?;
        if let Some(every) = self.watch {
            at_least_one("watch", usize::try_from(every).unwrap_or(usize::MAX))?;
        } else if let Some(selector) = self.watch_act.first() {
            // Activations are watched on the watch's steps: without a watch, none would be.
            return Err(Error::InvalidSetting {
                setting: "watch-act",
                value: format!("{selector:?}"),
                rule: "given with --watch N (activations are watched on the watch's steps)"
                    .to_owned(),
            });
        }
        for (setting, size) in [
            ("train-size", self.train_size),
            ("valid-size", self.valid_size),
            ("batch-size", self.batch_size),
        ] {
            if size > Self::MAX_ITEMS {
                return Err(Error::InvalidSetting {
                    setting,
                    value: size.to_string(),
                    rule: format!(
                        "at most the {} items the bundled data sets generate",
                        Self::MAX_ITEMS
                    ),
                });
            }
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return Err(Error::InvalidSetting {
                setting: "lr",
                value: self.lr.to_string(),
                rule: "a positive number".to_owned(),
            });
        }
        if self.train_size < self.batch_size {
            return Err(Error::InvalidSetting {
                setting: "train-size",
                value: self.train_size.to_string(),
                rule: format!("at least one batch ({})", self.batch_size),
            });
        }
        Ok(())
    }

    /// The settings as `(name, value)` pairs, by name, read through `Serialize` (so a new
    /// field appears without another edit): the MLflow run's params and `giving train`'s
    /// first line. An unset `steps` is left out.
    pub fn params(&self) -> Vec<(String, String)> {
        let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(self) else {
            // A struct of numbers always serializes to an object.
            return Vec::new();
        };
        fields
            .into_iter()
            .map(|(name, value)| (name, display(&value)))
            .collect()
    }
}

/// Refuses a size that must be positive.
fn at_least_one(setting: &'static str, value: usize) -> Result<(), Error> {
    if value == 0 {
        return Err(Error::InvalidSetting {
            setting,
            value: value.to_string(),
            rule: "at least 1".to_owned(),
        });
    }
    Ok(())
}

/// A serialized value as Rust's `Display` writes it (`0.001`, not JSON's exponent forms).
fn display(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (None, Some(i), _) => i.to_string(),
            (None, None, Some(f)) => f.to_string(),
            _ => n.to_string(),
        },
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModelKind;

    fn refusal(change: impl FnOnce(&mut TrainConfig)) -> String {
        let mut config = ModelKind::Mlp.default_config();
        change(&mut config);
        match config.validate() {
            Err(e) => e.to_string(),
            Ok(()) => panic!("{config:?} was accepted"),
        }
    }

    #[test]
    fn every_default_config_is_valid() {
        assert!(TrainConfig::default().validate().is_ok());
        for model in ModelKind::ALL {
            assert!(model.default_config().validate().is_ok(), "{model}");
        }
    }

    #[test]
    fn a_bad_value_of_each_setting_is_refused_naming_the_setting_and_value() {
        let too_many = TrainConfig::MAX_ITEMS + 1;
        type Change = Box<dyn FnOnce(&mut TrainConfig)>;
        let cases: [(&str, &str, Change); 11] = [
            ("steps", "0", Box::new(|c| c.steps = Some(0))),
            ("epochs", "0", Box::new(|c| c.epochs = 0)),
            ("batch-size", "0", Box::new(|c| c.batch_size = 0)),
            ("window", "0", Box::new(|c| c.window = 0)),
            (
                "batch-size",
                "1000001",
                Box::new(move |c| c.batch_size = too_many),
            ),
            (
                "train-size",
                "1000001",
                Box::new(move |c| c.train_size = too_many),
            ),
            (
                "valid-size",
                "1000001",
                Box::new(move |c| c.valid_size = too_many),
            ),
            ("lr", "0", Box::new(|c| c.lr = 0.0)),
            ("lr", "NaN", Box::new(|c| c.lr = f64::NAN)),
            ("train-size", "3", Box::new(|c| c.train_size = 3)),
            (
                "watch-act",
                "\"Cnn.forward > x\"",
                Box::new(|c| c.watch_act = vec!["Cnn.forward > x".to_owned()]),
            ),
        ];
        for (setting, value, change) in cases {
            let message = refusal(change);
            assert!(
                message.contains(&format!("{setting} must be")),
                "{setting}: {message}"
            );
            assert!(
                message.contains(&format!("not {value}")),
                "{value}: {message}"
            );
        }
    }

    #[test]
    fn a_validation_size_of_zero_means_no_validation_and_is_accepted() {
        let mut config = ModelKind::Mlp.default_config();
        config.valid_size = 0;
        assert!(config.validate().is_ok());
    }

    #[test]
    fn params_name_every_setting_and_leave_out_unset_steps() {
        let mut config = ModelKind::Cnn.default_config();
        let names = |c: &TrainConfig| c.params().into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        assert_eq!(
            names(&config),
            [
                "batch_size",
                "epochs",
                "lr",
                "seed",
                "train_size",
                "valid_size",
                "window"
            ]
        );
        config.steps = Some(12);
        let params = config.params();
        assert!(params.contains(&("steps".to_owned(), "12".to_owned())));
        assert!(params.contains(&("lr".to_owned(), "0.002".to_owned())));
        assert!(params.contains(&("batch_size".to_owned(), "64".to_owned())));
    }
}
