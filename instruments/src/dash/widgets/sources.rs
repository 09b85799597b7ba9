//! The sources table: a row per source (a suite's process, a rank) with its early stop's
//! progress, its task's progress, latest rate and loss, events; then the total rate of them
//! all.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Cell, Row, Table, Widget};

use crate::dash::format::{number, opt, si};
use crate::dash::model::{DashState, SourceStat};

/// Source rows shown at most; more are cut off by the panel's height.
const MAX_ROWS: usize = 12;

/// The sources table of a [`DashState`].
pub(crate) struct SourcesTable<'a> {
    state: &'a DashState,
}

impl<'a> SourcesTable<'a> {
    /// The sources of `state`.
    pub(crate) fn new(state: &'a DashState) -> Self {
        Self { state }
    }

    /// The rows it needs: a row per source (at most 12) and the total, a header and borders;
    /// none without a source.
    pub(crate) fn height(&self) -> u16 {
        match self.state.sources().len() {
            0 => 0,
            n => (n.min(MAX_ROWS) as u16) + u16::from(self.state.total_rate().is_some()) + 3,
        }
    }
}

impl Widget for SourcesTable<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let sources = self.state.sources();
        let title = format!(" sources ({}) ", sources.len());
        let mut rows: Vec<Row> = sources.iter().map(source_row).collect();
        if let Some((total, units)) = self.state.total_rate() {
            rows.push(
                Row::new([
                    Cell::from("total"),
                    Cell::from(""),
                    Cell::from(""),
                    Cell::from(format!("{} {units}", si(total))),
                    Cell::from(""),
                    Cell::from(""),
                ])
                .style(Style::new().add_modifier(Modifier::BOLD)),
            );
        }
        let header = Row::new(["source", "stop", "progress", "rate", "loss", "events"])
            .style(Style::new().add_modifier(Modifier::UNDERLINED));
        let table = Table::new(
            rows,
            [
                Constraint::Percentage(30),
                Constraint::Length(8),
                Constraint::Length(12),
                Constraint::Length(18),
                Constraint::Length(10),
                Constraint::Length(8),
            ],
        )
        .header(header)
        .block(Block::default().borders(Borders::ALL).title(title));
        Widget::render(table, area, buf);
    }
}

/// One source: `name [phase] @ host (done)`, `seen/stop`, `i/n`, rate, loss, events.
fn source_row(s: &SourceStat) -> Row<'static> {
    let stop = s
        .stop
        .map_or_else(String::new, |(seen, stop)| format!("{seen}/{stop}"));
    let progress = s
        .progress
        .map_or_else(String::new, |(i, n)| format!("{i}/{n}"));
    let mut name = s.name.clone();
    if let Some(phase) = &s.phase {
        name += &format!(" [{phase}]");
    }
    if let Some(host) = &s.host {
        name += &format!(" @ {host}");
    }
    if s.done {
        name += " (done)";
    }
    Row::new([
        Cell::from(name),
        Cell::from(stop),
        Cell::from(progress),
        Cell::from(opt(s.rate, |r| format!("{} {}", si(r), s.units))),
        Cell::from(opt(s.loss, number)),
        Cell::from(s.events.to_string()),
    ])
}
