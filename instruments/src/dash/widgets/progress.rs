//! The progress panel: the whole run first (epoch, steps over all epochs, ETA, a gauge) when
//! the loop says what it plans, then a line and a gauge per task.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::symbols;
use ratatui::widgets::{Block, Borders, LineGauge, Paragraph, Widget};

use crate::dash::format::{clock, percent, si};
use crate::dash::model::{DashState, RunStat, TaskStat};

/// The progress panel of a [`DashState`].
pub(crate) struct Progress<'a> {
    state: &'a DashState,
}

impl<'a> Progress<'a> {
    /// The progress of `state`.
    pub(crate) fn new(state: &'a DashState) -> Self {
        Self { state }
    }

    /// The rows it needs: two per task and for the whole run (at least one), and borders.
    pub(crate) fn height(&self) -> u16 {
        let run_row = u16::from(has_run_row(self.state.run()));
        let tasks = (self.state.tasks().len() as u16 + run_row).max(1);
        2 * tasks + 2
    }
}

impl Widget for Progress<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let state = self.state;
        let block = Block::default().borders(Borders::ALL).title(" progress ");
        let inner = block.inner(area);
        block.render(area, buf);
        if state.tasks().is_empty() {
            Paragraph::new("waiting for progress events…").render(inner, buf);
            return;
        }
        let mut y = inner.y;
        if has_run_row(state.run()) && inner.height >= 2 {
            run_row(state.run(), Rect::new(inner.x, y, inner.width, 2), buf);
            y += 2;
        }
        for task in state.tasks() {
            if y + 1 >= inner.y + inner.height {
                break;
            }
            task_rows(task, Rect::new(inner.x, y, inner.width, 2), buf);
            y += 2;
        }
    }
}

/// Whether the loop says which epoch it is in or how many steps the whole run plans.
fn has_run_row(run: &RunStat) -> bool {
    run.epoch.is_some() || run.progress().is_some()
}

/// The whole run: epoch, steps over all epochs, ETA, and a gauge.
fn run_row(run: &RunStat, area: Rect, buf: &mut Buffer) {
    let mut text = format!("{:<12}", "run");
    if let Some(epoch) = run.epoch_label() {
        text += &format!(" {epoch}");
    }
    if let Some((i, n)) = run.progress() {
        text += &format!("  steps {i}/{n}");
    }
    if let Some(eta) = run.eta() {
        text += &format!("  eta {}", clock(eta));
    }
    Paragraph::new(text).render(Rect { height: 1, ..area }, buf);
    if run.progress().is_some() && area.height >= 2 {
        let ratio = run.ratio();
        gauge(ratio, Color::Magenta).render(Rect::new(area.x, area.y + 1, area.width, 1), buf);
    }
}

/// One task: its name, `i/n`, ETA, current and mean rate; under it, its gauge.
fn task_rows(task: &TaskStat, area: Rect, buf: &mut Buffer) {
    let name = if task.name.is_empty() {
        "(no task)"
    } else {
        &task.name
    };
    let mut text = format!("{name:<12}");
    if let Some((i, n)) = task.progress {
        text += &format!(" {i}/{n}");
    }
    if let Some(eta) = task.eta() {
        text += &format!("  eta {}", clock(eta));
    }
    let units = task.units.as_deref().unwrap_or("");
    if let Some(rate) = task.rate {
        text += &format!("  rate {} {units}", si(rate));
    }
    if let Some(mean) = task.mean_rate() {
        text += &format!("  mean {} {units}", si(mean));
    }
    Paragraph::new(text).render(Rect { height: 1, ..area }, buf);
    if task.progress.is_some() {
        gauge(task.ratio(), Color::Green).render(Rect::new(area.x, area.y + 1, area.width, 1), buf);
    }
}

/// A thick line gauge of `ratio`, filled in `color`, labelled with its percentage.
fn gauge(ratio: f64, color: Color) -> LineGauge<'static> {
    LineGauge::default()
        .filled_style(Style::new().fg(color))
        .line_set(symbols::line::THICK)
        .label(percent(ratio))
        .ratio(ratio)
}
