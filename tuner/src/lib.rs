//! # giving-tuner
//!
//! PredTuner-style autotuning for burn networks (the VGG bundled in `giving-models`).
#![warn(missing_docs)]

pub mod approx;
mod error;
pub mod knob;

pub use error::Error;
pub use knob::{Axis, Knob};
pub mod cost;
pub mod network;
pub mod nsga;
pub mod pareto;
pub mod qos_model;
pub mod weights;
pub mod configs;
pub mod session;
pub mod plot;
pub mod job;
