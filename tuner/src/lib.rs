//! # giving-tuner
//!
//! PredTuner-style autotuning of approximations on burn convolutions: given a trained network
//! (the VGG bundled in `giving-models`), a tuning set and a test set, search one *knob* per
//! convolution layer for configurations that run faster while losing at most a threshold of
//! QoS (accuracy), keep the valid ones, mark the Pareto-optimal ones, dump them to
//! `configs.json` and plot them. `giving tune` is its command; docs/tuner.md its guide.
//!
//! The root is the API (the modules are private):
//!
//! - [`TuneJob`] and [`ApplyJob`]: `giving tune` and `giving tune apply` end to end on a device
//!   chosen at run time, with [`TuneSettings`] (the session's settings, each declared once:
//!   with the `cli` feature they are also `giving tune`'s flags), [`CostModel`], [`QosModel`],
//!   [`default_vgg`] and [`default_training`].
//! - [`Knob`] and [`Axis`]: the knobs (exact, perforated rows/columns, filter sampling, f16)
//!   and their cost factors; [`ApproxConv`]: each knob as a real, cheaper burn computation.
//! - [`Network`] and [`Dataset`]: the network under tuning with every knob prepared, and QoS
//!   measurement; [`measure_speedup`]: a configuration's speedup, timed. Any network that
//!   implements [`Tunable`] (the bundled `Vgg` does) can be tuned with [`tune`] or
//!   [`tune_with`] (tuner/examples/tune_custom.rs).
//! - A session gives `{task: "tune", iteration, qos, qos_loss, speedup, kept, best}` each
//!   iteration through [`giving::give!`] (the dashboard, the log and the timeline follow it
//!   like a training run), searching with NSGA-II and keeping the Pareto front and the best.
//! - [`ConfigsFile`] and [`ConfigRecord`]: `configs.json`, read back with [`configs_file`];
//!   the trained weights cache: [`default_cache_dir`], [`weights_path`], [`load_weights`],
//!   [`save_weights`].
//!
//! ```no_run
//! use giving_models::DeviceSpec;
//! use giving_tuner::TuneJob;
//!
//! let mut job = TuneJob::new("cache".into(), "tune-out".into());
//! job.settings.max_iter = 200;
//! let outcome = DeviceSpec::Flex.run(job).unwrap().unwrap();
//! println!("{} configurations kept", outcome.file.configs.len());
//! ```

mod approx;
mod configs;
mod cost;
mod error;
mod job;
mod knob;
mod knob_file;
mod network;
mod nsga;
mod pareto;
mod plot;
mod qos_model;
mod session;
mod settings;
mod tunable;
mod weights;

pub use approx::{ApproxConv, exact_on_host};
pub use configs::{Baseline, ConfigRecord, ConfigsFile, DataInfo, Dropped, NetworkInfo, Timing};
pub use error::Error;
pub use job::{
    ApplyJob, ApplyOutcome, TuneJob, TuneOutcome, configs_file, default_training, default_vgg,
    vgg16_width, vgg16_width_training,
};
pub use knob::{Axis, Knob};
pub use knob_file::knobs_from_file;
pub use network::{Dataset, Network};
pub use qos_model::{ProfileReport, ProfileStore};
pub use session::{Tuning, measure_speedup, tune, tune_with};
pub use settings::{CostModel, QosModel, TuneSettings};
pub use tunable::Tunable;
pub use weights::{default_cache_dir, load as load_weights, save as save_weights, weights_path};
