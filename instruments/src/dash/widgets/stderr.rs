//! The stderr panel: the latest lines other code wrote to stderr (they are written out
//! again, all of them, when the dashboard gives the terminal back).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use crate::dash::model::DashState;

/// Lines the panel shows at most.
const SHOWN: usize = 5;

/// The stderr panel of a [`DashState`].
pub(crate) struct StderrPanel<'a> {
    state: &'a DashState,
}

impl<'a> StderrPanel<'a> {
    /// The stderr lines of `state`.
    pub(crate) fn new(state: &'a DashState) -> Self {
        Self { state }
    }

    /// The rows it needs: the latest 5 lines and borders; none before the first line.
    pub(crate) fn height(&self) -> u16 {
        let (lines, _) = self.state.stderr();
        match lines.len() {
            0 => 0,
            n => n.min(SHOWN) as u16 + 2,
        }
    }
}

impl Widget for StderrPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (lines, total) = self.state.stderr();
        let shown = usize::from(area.height.saturating_sub(2));
        let skip = lines.len().saturating_sub(shown);
        let lines: Vec<Line> = lines.skip(skip).map(Line::raw).collect();
        let block = Block::default()
            .borders(Borders::ALL)
            .title(format!(" stderr ({total} lines) "))
            .border_style(Style::new().fg(Color::Red));
        Paragraph::new(lines).block(block).render(area, buf);
    }
}
