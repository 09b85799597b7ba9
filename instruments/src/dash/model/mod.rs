//! The dashboard's model: what it knows of the run, folded from events one at a time. Pure
//! data (no terminal, no clock: times come from the events); the widgets draw from it.
//!
//! - `state`: [`DashState`], the whole of it, fed by [`DashState::observe`];
//! - `stats`: what it keeps per key, task, the whole run, GPU and machine;
//! - `series`: a chart's points (`ChartSeries`);
//! - `sources`: a row per suite process or rank (`SourceStat`);
//! - `watch`: a model watch's latest figures per parameter (`ParamStat`).

mod series;
mod sources;
mod state;
mod stats;
mod watch;

pub(crate) use sources::SourceStat;
pub(crate) use state::DashState;
pub(crate) use stats::{RunStat, TaskStat};
pub(crate) use watch::ParamStat;
