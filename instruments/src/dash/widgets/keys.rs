//! The keys table: every key ever given, its latest value, units and events counted.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Style};
use ratatui::widgets::{Block, Borders, Cell, Row, Table, Widget};

use crate::dash::format::show;
use crate::dash::model::DashState;

/// The keys table of a [`DashState`].
pub(crate) struct KeysTable<'a> {
    state: &'a DashState,
}

impl<'a> KeysTable<'a> {
    /// The keys of `state`.
    pub(crate) fn new(state: &'a DashState) -> Self {
        Self { state }
    }
}

impl Widget for KeysTable<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let rows = self.state.keys().iter().map(|(key, stat)| {
            Row::new([
                Cell::from(key.as_str()),
                Cell::from(show(&stat.value)),
                Cell::from(stat.units.as_deref().unwrap_or("")),
                Cell::from(stat.count.to_string()),
            ])
        });
        let table = Table::new(
            rows,
            [
                Constraint::Percentage(30),
                Constraint::Percentage(35),
                Constraint::Percentage(17),
                Constraint::Percentage(18),
            ],
        )
        .header(
            Row::new(["key", "latest", "units", "events"]).style(Style::new().fg(Color::Yellow)),
        )
        .block(Block::default().borders(Borders::ALL).title(" keys "));
        Widget::render(table, area, buf);
    }
}
