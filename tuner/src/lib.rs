//! # giving-tuner
//!
//! PredTuner-style autotuning of approximations on burn convolutions: given a trained network
//! (the VGG bundled in `giving-models`), a tuning set and a test set, search one *knob* per
//! convolution layer for configurations that run faster while losing at most a threshold of
//! QoS (accuracy), keep the valid ones, mark the Pareto-optimal ones, dump them to
//! `configs.json` and plot them. `giving tune` is its command; docs/tuner.md its guide.
//!
//! - [`knob`]: the knobs (exact, perforated rows/columns, filter sampling, f16) and their cost
//!   factors; [`approx`]: each knob as a real, cheaper burn computation.
//! - [`network`]: the network under tuning with every knob prepared, and QoS measurement;
//!   [`cost`]: the linear cost model; [`qos_model`]: PredTuner's `p1` QoS predictor.
//! - [`nsga`]: the multi-objective search (NSGA-II, ask/tell); [`pareto`]: dominance, fronts,
//!   the best configurations.
//! - [`session`]: a tuning session, giving `{task: "tune", iteration, qos, qos_loss, speedup,
//!   kept, best}` each iteration through [`giving::give!`] (the dashboard, the log and the
//!   timeline follow it like a training run).
//! - [`configs`]: `configs.json`; [`plot`]: the PNG; [`weights`]: the trained weights cache;
//!   [`job`]: `giving tune` and `giving tune apply` end to end on a device chosen at run time.
//!
//! ```no_run
//! use giving_models::DeviceSpec;
//! use giving_tuner::job::TuneJob;
//!
//! let mut job = TuneJob::new("cache".into(), "tune-out".into());
//! job.settings.max_iter = 200;
//! let outcome = DeviceSpec::Flex.run(job).unwrap().unwrap();
//! println!("{} configurations kept", outcome.file.configs.len());
//! ```
#![warn(missing_docs)]

pub mod approx;
pub mod configs;
pub mod cost;
mod error;
pub mod job;
pub mod knob;
pub mod network;
pub mod nsga;
pub mod pareto;
pub mod plot;
pub mod qos_model;
pub mod session;
pub mod weights;

pub use error::Error;
pub use knob::{Axis, Knob};
