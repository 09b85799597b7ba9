//! `giving suite report RUNDIR`: milabench's report — the System section, the Breakdown
//! table and the Scores — from a run folder. See `docs/suite.md`.

mod data_file;
mod gpu;
mod html;
mod load;
pub(crate) mod pyjson;
mod stats;
mod summary;
mod table;

pub use data_file::ProcessRecord;
pub use gpu::{GpuFigures, GpuRecord, GpuSample};
pub use html::html;
pub use load::{BenchData, ProcessData, RunData, load_run, load_runs};
pub use stats::{Metrics, global_score};
pub use summary::{load_summary, summary, summary_json};
pub use table::{Report, Row};
