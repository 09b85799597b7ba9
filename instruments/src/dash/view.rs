//! The whole screen: the panels of `widgets` laid out top to bottom — header, progress,
//! sources, charts beside the keys, the model watch, GPU beside CPU, stderr — each as tall as
//! it needs, the charts and keys taking what is left.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::widgets::Widget;

use super::model::DashState;
use super::widgets::{
    Charts, CpuPanel, GpuPanel, Header, KeysTable, Progress, SourcesTable, StderrPanel, WatchPanel,
};

/// The dashboard's screen for a [`DashState`].
pub(crate) struct Dashboard<'a> {
    state: &'a DashState,
}

impl<'a> Dashboard<'a> {
    /// The screen of `state`.
    pub(crate) fn new(state: &'a DashState) -> Self {
        Self { state }
    }

    /// The rows the GPU and CPU panels need: a row per GPU (at least one) and borders, at
    /// least 4; none before a monitor reports.
    fn monitors_height(&self) -> u16 {
        let state = self.state;
        if state.gpus().is_empty() && state.cpu().is_none() {
            0
        } else {
            (state.gpus().len().max(1) as u16 + 2).max(4)
        }
    }
}

impl Widget for Dashboard<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let state = self.state;
        let monitors = self.monitors_height();
        let stderr = StderrPanel::new(state);
        let stderr_height = stderr.height();
        let sources = SourcesTable::new(state);
        let sources_height = sources.height();
        let progress = Progress::new(state);
        let watch = WatchPanel::new(state);
        let watch_height = watch.height();
        let rows = Layout::default()
            .direction(Direction::Vertical)
            .constraints([
                Constraint::Length(1),
                Constraint::Length(progress.height()),
                Constraint::Length(sources_height),
                Constraint::Min(8),
                Constraint::Length(watch_height),
                Constraint::Length(monitors),
                Constraint::Length(stderr_height),
            ])
            .split(area);
        Header::new(state).render(rows[0], buf);
        progress.render(rows[1], buf);
        if sources_height > 0 {
            sources.render(rows[2], buf);
        }
        let middle = Layout::default()
            .direction(Direction::Horizontal)
            .constraints([Constraint::Percentage(60), Constraint::Percentage(40)])
            .split(rows[3]);
        Charts::new(state).render(middle[0], buf);
        KeysTable::new(state).render(middle[1], buf);
        if watch_height > 0 {
            watch.render(rows[4], buf);
        }
        if monitors > 0 {
            let bottom = Layout::default()
                .direction(Direction::Horizontal)
                .constraints([Constraint::Percentage(60), Constraint::Percentage(40)])
                .split(rows[5]);
            GpuPanel::new(state).render(bottom[0], buf);
            CpuPanel::new(state).render(bottom[1], buf);
        }
        if stderr_height > 0 {
            stderr.render(rows[6], buf);
        }
    }
}
