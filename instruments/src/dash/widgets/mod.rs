//! The dashboard's panels, one ratatui [`Widget`](ratatui::widgets::Widget) each, drawn from
//! the model ([`DashState`](super::model::DashState)) with the formatting of `format`; `view`
//! lays them out.

mod charts;
mod header;
mod keys;
mod monitors;
mod progress;
mod sources;
mod stderr;
mod watch;

pub(crate) use charts::Charts;
pub(crate) use header::Header;
pub(crate) use keys::KeysTable;
pub(crate) use monitors::{CpuPanel, GpuPanel};
pub(crate) use progress::Progress;
pub(crate) use sources::SourcesTable;
pub(crate) use stderr::StderrPanel;
pub(crate) use watch::WatchPanel;

#[cfg(test)]
mod tests;
