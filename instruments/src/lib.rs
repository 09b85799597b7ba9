//! # giving-instruments
//!
//! Instruments for [`giving`]: what a training loop's events are *for*. Each instrument
//! subscribes to a scope, runs its pipeline off the training thread and may give events back
//! (`rate`, `progress`, `gpudata`); the [`Overseer`] runs a training function with instruments
//! in phases, as Python's `voir` does.
//!
//! - [`Overseer`] and the [`Instrument`] trait: init → args → start → run → finish; failing
//!   instruments are reported, never fatal to training; `finish` flushes every sink.
//! - [`Rate`]: items/s per task, milabench's method (host timestamps per step, one device sync
//!   per window).
//! - [`EarlyStop`]: stops the loop cleanly after N observations of a key.
//! - [`log`]: the MessagePack log ([`MsgpackLog`]), its reader, `replay`, `dump` and `stats`.
//! - [`Dash`]: the live terminal dashboard (plain lines when stdout is not a terminal).
//! - [`GpuMonitor`] (NVML) and [`CpuMonitor`] (sysinfo).
//! - [`InstrumentArgs`]: the clap options (`--log`, `--stop`, `--gpu-poll`, …) a binary
//!   flattens into its `train` command; [`LogCommand`]: the `giving log` subcommands.
//!
//! See `docs/instruments.md`.

#![warn(missing_docs)]

mod args;
mod dash;
mod early_stop;
pub mod log;
mod monitor;
mod overseer;
mod rate;

pub use args::{CpuArgs, DashArgs, GpuArgs, InstrumentArgs, LogArgs, RateArgs, StopArgs};
pub use dash::{
    CpuStat, Dash, DashMode, DashState, GpuStat, KeyStat, Series, TaskStat, render_dash,
};
pub use early_stop::EarlyStop;
pub use log::{LogCommand, MsgpackLog};
pub use monitor::{CpuMonitor, GpuMonitor, MonitorHandle, Sampler, poll};
pub use overseer::{BoxError, Instrument, Overseer, Phase, Problem, Run, Start};
pub use rate::{Rate, RateMeter};
