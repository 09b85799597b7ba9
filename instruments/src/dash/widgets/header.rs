//! The header line: the dashboard's name, whether the run is over, events seen, the
//! subscription's lag, and the keys it answers.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::dash::model::DashState;

/// The header line of a [`DashState`].
pub(crate) struct Header<'a> {
    state: &'a DashState,
}

impl<'a> Header<'a> {
    /// The header of `state`.
    pub(crate) fn new(state: &'a DashState) -> Self {
        Self { state }
    }
}

impl Widget for Header<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let state = self.state;
        let status = match (state.is_finished(), state.is_waiting_for_key()) {
            (_, true) => "finished: press any key to close",
            (true, false) => "finished",
            (false, false) => "running",
        };
        let line = Line::from(vec![
            Span::styled(
                " giving dash ",
                Style::new().add_modifier(Modifier::REVERSED),
            ),
            Span::raw(format!(
                "  {status}  events {}  lag: pending {} dropped {}  [q] stop  [l] log scale",
                state.events(),
                state.pending(),
                state.dropped()
            )),
        ]);
        Paragraph::new(line).render(area, buf);
    }
}
