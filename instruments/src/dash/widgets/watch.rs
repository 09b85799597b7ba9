//! The model watch's table: a row per watched parameter, in the module's order, with its
//! latest weight and gradient norms, the optimiser's update ratio and its non-finite count.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, Borders, Cell, Row, Table, Widget};

use crate::dash::format::{number, opt};
use crate::dash::model::{DashState, ParamStat};

/// Parameter rows shown at most; a deeper model's last rows are cut off (the log has them all).
const MAX_ROWS: usize = 12;

/// The model watch's table of a [`DashState`].
pub(crate) struct WatchPanel<'a> {
    state: &'a DashState,
}

impl<'a> WatchPanel<'a> {
    /// The watched parameters of `state`.
    pub(crate) fn new(state: &'a DashState) -> Self {
        Self { state }
    }

    /// The rows it needs: a row per parameter (at most 12), a header and borders; none before
    /// a watch reports.
    pub(crate) fn height(&self) -> u16 {
        match self.state.watched().len() {
            0 => 0,
            n => n.min(MAX_ROWS) as u16 + 3,
        }
    }
}

impl Widget for WatchPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let params = self.state.watched();
        let step = params.iter().map(|p| p.step).max().unwrap_or(0);
        let title = format!(" model watch ({} parameters, step {step}) ", params.len());
        let rows: Vec<Row> = params.iter().take(MAX_ROWS).map(param_row).collect();
        let header = Row::new(["parameter", "|w|", "|grad|", "|dw|/|w|", "non-finite"])
            .style(Style::new().add_modifier(Modifier::UNDERLINED));
        let table = Table::new(
            rows,
            [
                Constraint::Percentage(40),
                Constraint::Length(11),
                Constraint::Length(11),
                Constraint::Length(11),
                Constraint::Length(10),
            ],
        )
        .header(header)
        .block(Block::default().borders(Borders::ALL).title(title));
        Widget::render(table, area, buf);
    }
}

/// One parameter: its path, norms, update ratio and non-finite count (in red when any).
fn param_row(p: &ParamStat) -> Row<'static> {
    let row = Row::new([
        Cell::from(p.param.clone()),
        Cell::from(opt(p.weight_norm, number)),
        Cell::from(opt(p.grad_norm, number)),
        Cell::from(opt(p.update_ratio, number)),
        Cell::from(p.nonfinite.to_string()),
    ]);
    if p.nonfinite > 0 {
        row.style(Style::new().fg(Color::Red))
    } else {
        row
    }
}
