//! `giving suite report RUNDIR`: milabench's report — the System section, the Breakdown
//! table and the Scores — from a run folder. See `docs/suite.md`.

mod gpu;
mod html;
mod load;
mod stats;
mod table;

pub use gpu::{GpuFigures, GpuRecord, GpuSample};
pub use html::html;
pub use load::{BenchData, ProcessData, RunData, load_run, load_runs};
pub use stats::{Metrics, global_score};
pub use table::Report;
