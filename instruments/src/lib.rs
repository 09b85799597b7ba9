//! # giving-instruments
//!
//! Instruments for [`giving`]: what a training loop's events are *for*. Each instrument
//! subscribes to a scope, runs its pipeline off the training thread and may give events back
//! (`rate`, `progress`, `gpudata`); the [`Overseer`] runs a training function with instruments
//! in phases, as Python's `voir` does.
//!
//! - [`Overseer`] and the [`Instrument`] trait: start → run → finish; failing instruments are
//!   reported ([`Problem`], with a typed [`InstrumentError`]), never fatal to training;
//!   instruments that derive events ([`Start::derive`]) have their last outputs reach every
//!   sink; `finish` flushes every sink.
//! - [`Rate`]: items/s per task, milabench's method (host timestamps per step, one device sync
//!   per window).
//! - [`EarlyStop`]: stops the loop cleanly after N observations of a key.
//! - [`log`]: the MessagePack log ([`MsgpackLog`]), and the format's writer, reader, `replay`,
//!   `dump` and `stats`, re-exported from the `giving-log` crate.
//! - `Dash` (feature `dash`): the live terminal dashboard (plain lines when stdout is not a
//!   terminal).
//! - `GpuMonitor` (feature `gpu`, NVML) and `CpuMonitor` (feature `cpu`, sysinfo), built on
//!   [`poll`] and a [`Sampler`].
//! - [`KeySelection`]: which keys a sink keeps (`loss,gpu*,+task,!batch`), as voir's `log`.
//! - [`timeline`]: the scope's timeline as a Perfetto trace ([`Trace`]), logs converted to
//!   one, and (feature `tracing`) `tracing` spans brought onto it.
//! - `TensorBoard` (feature `tensorboard`): numeric keys as TensorBoard scalars (event files).
//! - `MlflowRun` (feature `mlflow`): the run, its parameters and metrics in an MLflow server.
//! - `Web` (feature `web`): a live dashboard of the run in a browser (every numeric key, every
//!   rank), served by the process over HTTP with Server-Sent Events.
//! - [`SinkThread`]: a sink on a thread of its own (the log's writer, the dashboard, the
//!   trace).
//! - `InstrumentArgs` (feature `cli`): the clap options (`--log`, `--stop`, `--gpu-poll`, …) a
//!   binary flattens into its `train` command; `LogCommand`: the `giving log` subcommands.
//!
//! Every feature is on by default; `default-features = false` leaves the core instruments
//! (rate, early stop, log) with no terminal, NVML, sysinfo or clap dependency.
//!
//! See `docs/instruments.md`.

use std::time::Duration;

#[cfg(feature = "cli")]
mod args;
pub mod child;
#[cfg(feature = "dash")]
mod dash;
mod drain;
mod early_stop;
mod error;
mod exit_hooks;
pub mod log;
#[cfg(feature = "mlflow")]
mod mlflow;
mod monitor;
mod nonfinite;
mod overseer;
mod probes;
mod rate;
#[cfg(any(feature = "tensorboard", feature = "mlflow"))]
mod scalars;
mod select;
#[cfg(feature = "tensorboard")]
mod tensorboard;
mod threaded;
pub mod timeline;
#[cfg(feature = "web")]
mod web;
mod window;

#[cfg(feature = "cli")]
pub use args::{
    CpuArgs, DashArgs, GpuArgs, InstrumentArgs, LogArgs, MlflowArgs, RateArgs, StopArgs,
    TensorBoardArgs, TraceArgs, WebArgs,
};
#[cfg(feature = "dash")]
pub use dash::{Dash, DashMode};
pub use early_stop::EarlyStop;
pub use error::{BoxError, InstrumentError, PanicPayload};
#[cfg(feature = "cli")]
pub use log::LogCommand;
pub use log::MsgpackLog;
#[cfg(feature = "mlflow")]
pub use mlflow::{MlflowAuth, MlflowError, MlflowRun, mlflow_env};
#[cfg(feature = "cpu")]
pub use monitor::CpuMonitor;
#[cfg(feature = "gpu")]
pub use monitor::GpuMonitor;
pub use monitor::{MonitorHandle, Sampler, poll};
pub use nonfinite::StopOnNonFinite;
pub use overseer::{
    Instrument, Outcome, Overseer, Phase, Problem, Reporter, Run, Spawned, Start, TRAINING,
};
pub use probes::Probes;
pub use rate::{Rate, RateMeter};
pub use select::{KeySelection, SelectionError};
#[cfg(feature = "tensorboard")]
pub use tensorboard::TensorBoard;
pub use threaded::{SinkControl, SinkThread};
pub use timeline::Trace;
#[cfg(feature = "web")]
pub use web::{Web, WebError};
pub use window::LazyWindow;

/// How often the instruments that show or decide read the run's events: rate, early stop,
/// the non-finite stop, the dashboards, NATS publishing and the CLI's progress lines read a
/// [paced](giving::EventStream::paced) stream, woken at this period's ticks rather than by the
/// training thread at each step. The terminal dashboard's redraw period (each redraw has one
/// fresh batch) and two and a half times the web page's rate; the early stop's count, and so the
/// stop, may come up to this much later than the event that completes it.
///
/// Each tick wakes the pacer and every thread that runs a paced reader, and on a machine whose
/// cores the training keeps busy each wake-up preempts a thread of the training (a rayon worker
/// that the others then wait for): docs/architecture.md measures what 50 ms cost.
pub const SINK_PACE: Duration = Duration::from_millis(100);

/// How often the instruments that write the run's events to a file or a server read them: the
/// log, the trace, TensorBoard and MLflow. Nobody watches these live to the millisecond, so
/// they wake five times less often than [`SINK_PACE`] (on the same grid: every fifth of its
/// ticks), and write bigger batches. A process killed outright loses what it had not written,
/// at most this much; a run that ends, stops or panics writes everything.
pub const WRITER_PACE: Duration = Duration::from_millis(500);
