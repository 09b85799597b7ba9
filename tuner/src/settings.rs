//! [`TuneSettings`]: the settings of a tuning session, each declared once.
//!
//! A field's doc comment, default ([`TuneSettings::new`], which the flags' defaults read),
//! command-line flag (`clap::Args`, behind the `cli` feature) and rule
//! ([`TuneSettings::validate`]) live here; `configs.json` records the settings through
//! `Serialize`. The module sits below `session` and `configs`, which both read it: neither
//! imports the other for the settings.
//!
//! Sizes follow the workspace's one policy (docs/architecture.md, "Sizes"): a size that must
//! be positive is refused by `validate` with an error naming the setting and its value; a
//! size that may be zero says in its doc what zero means.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::knob::Knob;
use crate::knob_file::knobs_from_file;

/// How a configuration's speedup is predicted during the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum CostModel {
    /// Per-layer multiply-adds × the knob's cost factor ([`Knob::cost_factor`]).
    #[cfg_attr(
        feature = "cli",
        value(
            alias = "cost_linear",
            help = "Per-layer FLOPs × the knob's cost factor"
        )
    )]
    Linear,
    /// Per-layer wall times of each knob, timed when the session starts.
    #[cfg_attr(
        feature = "cli",
        value(
            help = "Per-layer wall times of each knob, timed on this machine when the session starts"
        )
    )]
    Measured,
    /// `measured` on a backend that computes on the CPU (`flex`), where a knob's time follows
    /// its kernel more than its FLOPs; `linear` on a GPU backend.
    #[cfg_attr(
        feature = "cli",
        value(help = "measured on the CPU backend, linear on a GPU backend")
    )]
    Auto,
}

impl CostModel {
    /// The model a session uses on backend `B`: [`CostModel::Auto`] decided.
    pub fn resolved<B: burn::prelude::Backend>(self) -> CostModel {
        match self {
            CostModel::Auto if giving_models::host::on_host::<B>() => CostModel::Measured,
            CostModel::Auto => CostModel::Linear,
            other => other,
        }
    }
}

/// How a configuration's QoS is obtained during the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum QosModel {
    /// Measured: the configuration runs on the tuning set.
    #[cfg_attr(
        feature = "cli",
        value(alias = "none", help = "Run every configuration on the tuning set")
    )]
    Empirical,
    /// Predicted by PredTuner's P1 model (per-layer, per-knob profiles of the QoS), then
    /// validated empirically for the best configurations.
    #[cfg_attr(
        feature = "cli",
        value(
            alias = "qos_p1",
            help = "Predict QoS from per-layer, per-knob profiles; validate the best empirically"
        )
    )]
    P1,
    /// Predicted by PredTuner's P2 model (per-layer, per-knob QoS changes summed), then
    /// validated empirically for the best configurations.
    #[cfg_attr(
        feature = "cli",
        value(
            alias = "qos_p2",
            help = "Predict QoS as the exact QoS plus each layer's QoS change alone; validate the best empirically"
        )
    )]
    P2,
}

/// The settings of a session (PredTuner's `tune` arguments, and this tuner's own).
///
/// With the `cli` feature it derives `clap::Args`: `giving tune` flattens it, and each flag's
/// default is the field's value in [`TuneSettings::new`], so a default is written once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct TuneSettings {
    /// Configurations to evaluate (at least 1).
    #[cfg_attr(
        feature = "cli",
        arg(long, default_value_t = TuneSettings::new().max_iter, help = "Configurations to evaluate")
    )]
    pub max_iter: usize,
    /// The QoS threshold that guides the search: configurations below it are infeasible (a
    /// QoS from 0 to 100).
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            default_value_t = TuneSettings::new().qos_tuner_threshold,
            help = "QoS threshold that guides the search (a loss in points, or an absolute QoS with --absolute)"
        )
    )]
    pub qos_tuner_threshold: f64,
    /// The QoS threshold of what is kept (a QoS from 0 to 100).
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            default_value_t = TuneSettings::new().qos_keep_threshold,
            help = "QoS threshold of the configurations kept"
        )
    )]
    pub qos_keep_threshold: f64,
    /// Whether thresholds are QoS losses relative to the exact network (PredTuner's
    /// `is_threshold_relative`) rather than absolute QoS values; `--absolute` clears it.
    #[cfg_attr(
        feature = "cli",
        arg(
            long = "absolute",
            action = clap::ArgAction::SetFalse,
            help = "Thresholds are absolute QoS values (accuracy in percent), not losses relative to the exact network"
        )
    )]
    pub relative: bool,
    /// How many best configurations to take (PredTuner's `take_best_n`): the Pareto front, then
    /// the kept configurations nearest it until this many are taken; 0, or fewer than the
    /// front: the front only.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            default_value_t = TuneSettings::new().take_best_n,
            help = "Best configurations to take: the Pareto front, then the kept ones nearest it up to this many"
        )
    )]
    pub take_best_n: usize,
    /// The cost model.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            value_enum,
            default_value_t = TuneSettings::new().cost_model,
            help = "Cost model of the speedup"
        )
    )]
    pub cost_model: CostModel,
    /// The QoS model.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            value_enum,
            default_value_t = TuneSettings::new().qos_model,
            help = "QoS model: empirical (run every configuration), or p1 / p2 (predict, then validate the best)"
        )
    )]
    pub qos_model: QosModel,
    /// The knobs the search may use, by id (the baseline is always among them); every id must
    /// name a [`Knob`].
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            value_delimiter = ',',
            help = "Knobs the search may use, by id, comma-separated [default: HPVM's FP32 knobs (baseline, perf_*, samp_*), and on wgpu and cuda its f16 ones too (fp16, perf_fp16_*, samp_fp16_*)]"
        )
    )]
    pub knobs: Vec<String>,
    /// A JSON file declaring the knobs in PredTuner's format (docs/tuner.md); replaces
    /// `knobs` when given.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            help = "JSON file declaring the knobs in PredTuner's format (replaces --knobs)"
        )
    )]
    #[serde(default)]
    pub knobs_file: Option<PathBuf>,
    /// Seed of the search.
    #[cfg_attr(
        feature = "cli",
        arg(long, default_value_t = TuneSettings::new().seed, help = "Seed of the search")
    )]
    pub seed: u64,
    /// Individuals per NSGA-II generation (at least 4: a generation breeds from pairs of
    /// tournament winners).
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            default_value_t = TuneSettings::new().population,
            help = "Individuals per NSGA-II generation"
        )
    )]
    pub population: usize,
    /// Interleaved timing rounds per best configuration (at least 1).
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            default_value_t = TuneSettings::new().repeats,
            help = "Interleaved timing rounds per best configuration"
        )
    )]
    pub repeats: usize,
}

impl TuneSettings {
    /// The smallest NSGA-II population ([`TuneSettings::population`]).
    pub const MIN_POPULATION: usize = 4;

    /// PredTuner's tutorial settings: 1000 iterations, tune at 2% and keep at 3% loss relative
    /// to the exact network, the 20 best, linear cost, empirical QoS; HPVM's FP32 knobs, not
    /// the f16 ones nor the sparse perforation (the CPU's [`TuneSettings::default_knobs`]).
    /// The only place these defaults are written: the flags of `giving tune` read them from
    /// here.
    pub fn new() -> Self {
        Self {
            max_iter: 1000,
            qos_tuner_threshold: 2.0,
            qos_keep_threshold: 3.0,
            relative: true,
            take_best_n: 20,
            cost_model: CostModel::Auto,
            qos_model: QosModel::Empirical,
            knobs: Self::default_knobs(false),
            knobs_file: None,
            seed: 0,
            population: 24,
            repeats: 3,
        }
    }

    /// The knobs searched when none are named, by id: HPVM's FP32 set, and where f16
    /// arithmetic is native (`f16_native`: wgpu, cuda) its f16 set too ([`Knob::default_search`]).
    pub fn default_knobs(f16_native: bool) -> Vec<String> {
        Knob::all()
            .into_iter()
            .filter(|k| k.default_search(f16_native))
            .map(|k| k.id())
            .collect()
    }

    /// Checks the settings: every rule of every setting is here, and a refusal names the
    /// setting (as its flag is spelt, without the dashes) and its value.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |setting: &str, rule: &str, value: String| {
            Err(Error::InvalidSetting(format!(
                "{setting} must be {rule}, not {value}"
            )))
        };
        if self.max_iter == 0 {
            return bad("max-iter", "at least 1", self.max_iter.to_string());
        }
        for (name, t) in [
            ("qos-tuner-threshold", self.qos_tuner_threshold),
            ("qos-keep-threshold", self.qos_keep_threshold),
        ] {
            if !(t.is_finite() && (0.0..=100.0).contains(&t)) {
                return bad(name, "a QoS between 0 and 100", t.to_string());
            }
        }
        if self.population < Self::MIN_POPULATION {
            return bad("population", "at least 4", self.population.to_string());
        }
        if self.repeats == 0 {
            return bad("repeats", "at least 1", self.repeats.to_string());
        }
        self.searched_knobs()?;
        Ok(())
    }

    /// The knobs the search may use: those of `knobs_file` if given, else those of `knobs`
    /// (empty: the CPU's defaults, [`TuneSettings::default_knobs`]`(false)`; `giving tune`
    /// fills it for its device first).
    pub fn searched_knobs(&self) -> Result<Vec<Knob>, Error> {
        match &self.knobs_file {
            Some(path) => knobs_from_file(path),
            None if self.knobs.is_empty() => Self::default_knobs(false)
                .iter()
                .map(|id| id.parse())
                .collect(),
            None => self.knobs.iter().map(|id| id.parse()).collect(),
        }
    }

    /// These settings as `configs.json` records them: `knobs` lists the knobs searched, also
    /// when they came from `knobs_file` (whose path is kept beside them), not the default list
    /// that a knobs file replaced.
    pub fn recorded(&self) -> Result<TuneSettings, Error> {
        let mut recorded = self.clone();
        recorded.knobs = self.searched_knobs()?.iter().map(Knob::id).collect();
        Ok(recorded)
    }

    /// The largest QoS loss kept, given the exact network's QoS.
    pub(crate) fn keep_loss(&self, baseline: f64) -> f64 {
        self.loss_threshold(self.qos_keep_threshold, baseline)
    }

    /// The largest QoS loss the search aims for.
    pub(crate) fn tuner_loss(&self, baseline: f64) -> f64 {
        self.loss_threshold(self.qos_tuner_threshold, baseline)
    }

    fn loss_threshold(&self, threshold: f64, baseline: f64) -> f64 {
        if self.relative {
            threshold
        } else {
            baseline - threshold
        }
    }
}

impl Default for TuneSettings {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_settings_are_valid() {
        assert!(TuneSettings::new().validate().is_ok());
    }

    #[test]
    fn the_recorded_knobs_are_those_searched_also_from_a_knobs_file() {
        let mut settings = TuneSettings::new();
        settings.knobs = vec!["baseline".into(), "fp16".into()];
        assert_eq!(settings.recorded().unwrap().knobs, ["baseline", "fp16"]);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("knobs.json");
        std::fs::write(
            &file,
            r#"[{"class": "FP32Baseline", "name": "11"},
 {"class": "PerforateConv2dStride", "name": "127", "direction_is_row": false, "stride": 3, "offset": 2}]"#,
        )
        .unwrap();
        settings.knobs_file = Some(file.clone());
        let recorded = settings.recorded().unwrap();
        assert_eq!(recorded.knobs, ["baseline", "perf_col_k3_o2"]);
        assert_eq!(recorded.knobs_file, Some(file));
    }

    #[test]
    fn a_bad_value_of_each_setting_is_refused_naming_the_setting_and_value() {
        type Change = fn(&mut TuneSettings);
        let cases: [(&str, &str, Change); 7] = [
            ("max-iter", "0", |s| s.max_iter = 0),
            ("qos-tuner-threshold", "101", |s| {
                s.qos_tuner_threshold = 101.0
            }),
            ("qos-tuner-threshold", "NaN", |s| {
                s.qos_tuner_threshold = f64::NAN
            }),
            ("qos-keep-threshold", "-1", |s| s.qos_keep_threshold = -1.0),
            ("population", "3", |s| s.population = 3),
            ("repeats", "0", |s| s.repeats = 0),
            ("knob", "nope", |s| s.knobs = vec!["nope".to_owned()]),
        ];
        for (setting, value, change) in cases {
            let mut settings = TuneSettings::new();
            change(&mut settings);
            let message = match settings.validate() {
                Err(e) => e.to_string(),
                Ok(()) => panic!("{settings:?} was accepted"),
            };
            assert!(message.contains(setting), "{setting}: {message}");
            assert!(message.contains(value), "{value}: {message}");
        }
    }

    #[test]
    fn take_best_n_of_zero_keeps_the_front_only_and_is_accepted() {
        let settings = TuneSettings {
            take_best_n: 0,
            ..TuneSettings::new()
        };
        assert!(settings.validate().is_ok());
    }

    #[test]
    fn auto_cost_model_is_measured_on_the_cpu_and_linear_elsewhere() {
        use burn::backend::{Autodiff, Flex};
        assert_eq!(TuneSettings::new().cost_model, CostModel::Auto);
        assert_eq!(CostModel::Auto.resolved::<Flex>(), CostModel::Measured);
        // A backend that is not a host one (autodiff here, a GPU in use) gets the linear one.
        assert_eq!(
            CostModel::Auto.resolved::<Autodiff<Flex>>(),
            CostModel::Linear
        );
        assert_eq!(CostModel::Linear.resolved::<Flex>(), CostModel::Linear);
    }
}
