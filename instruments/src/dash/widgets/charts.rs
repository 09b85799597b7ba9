//! The charts: one per charted key (`loss` first), stacked, each of its points over steps,
//! titled with its latest value, on a linear or a log scale (the `l` key).

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols;
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType, Paragraph, Widget};

use crate::dash::format::{number, step_label};
use crate::dash::model::DashState;

/// Every chart of a [`DashState`], one above the other.
pub(crate) struct Charts<'a> {
    state: &'a DashState,
}

impl<'a> Charts<'a> {
    /// The charts of `state`.
    pub(crate) fn new(state: &'a DashState) -> Self {
        Self { state }
    }
}

impl Widget for Charts<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let plots = self.state.plots();
        let constraints: Vec<Constraint> = plots
            .iter()
            .map(|_| Constraint::Ratio(1, plots.len() as u32))
            .collect();
        let areas = Layout::default()
            .direction(Direction::Vertical)
            .constraints(constraints)
            .split(area);
        for (key, area) in plots.iter().zip(areas.iter()) {
            KeyChart::new(self.state, key).render(*area, buf);
        }
    }
}

/// The chart of one key of a [`DashState`].
pub(crate) struct KeyChart<'a> {
    state: &'a DashState,
    key: &'a str,
}

impl<'a> KeyChart<'a> {
    /// The chart of `key` in `state`.
    pub(crate) fn new(state: &'a DashState, key: &'a str) -> Self {
        Self { state, key }
    }
}

impl Widget for KeyChart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let key = self.key;
        let series = self.state.series(key);
        let latest = series
            .and_then(|s| s.points.last())
            .map(|&(_, y)| format!(" = {}", number(y)))
            .unwrap_or_default();
        let log = self.state.log_scale();
        let scale = if log { " (log scale)" } else { "" };
        let block = Block::default()
            .borders(Borders::ALL)
            .title(format!(" {key}{latest}{scale} "));
        // On a log scale the chart draws log10 of the positive points (zero and negatives have
        // no place on it) and labels the axis with the values themselves.
        let points: Vec<(f64, f64)> = match series {
            Some(series) if log => series
                .points
                .iter()
                .filter(|&&(_, y)| y > 0.0)
                .map(|&(x, y)| (x, y.log10()))
                .collect(),
            Some(series) => series.points.clone(),
            None => Vec::new(),
        };
        let Some((x, y)) = bounds(&points) else {
            let what = if log && series.is_some() {
                format!("no positive {key} to show on a log scale")
            } else {
                format!("no {key} yet")
            };
            Paragraph::new(what).block(block).render(area, buf);
            return;
        };
        // A flat series gets a band of ±5% around its value (±1 around 0).
        let pad = if y[1] > y[0] {
            (y[1] - y[0]) * 0.05
        } else if y[0] != 0.0 {
            y[0].abs() * 0.05
        } else {
            1.0
        };
        // A series that never goes below zero (a loss, a rate) keeps its axis at or above zero.
        let low = if y[0] >= 0.0 && !log {
            (y[0] - pad).max(0.0)
        } else {
            y[0] - pad
        };
        let y = [low, y[1] + pad];
        let x = if x[1] > x[0] { x } else { [x[0], x[0] + 1.0] };
        let y_label = |v: f64| {
            if log {
                number(10f64.powf(v))
            } else {
                number(v)
            }
        };
        let dataset = Dataset::default()
            .marker(symbols::Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(Color::Cyan))
            .data(&points);
        Chart::new(vec![dataset])
            .block(block)
            .x_axis(
                Axis::default()
                    .bounds(x)
                    .labels([step_label(x[0]), step_label(x[1])]),
            )
            .y_axis(
                Axis::default()
                    .bounds(y)
                    .labels([y_label(y[0]), y_label(y[1])]),
            )
            .render(area, buf);
    }
}

/// The smallest and largest x and y of `points`, if there is one.
fn bounds(points: &[(f64, f64)]) -> Option<([f64; 2], [f64; 2])> {
    let (&(x0, y0), rest) = points.split_first()?;
    Some(rest.iter().fold(([x0, x0], [y0, y0]), |(x, y), &(px, py)| {
        ([x[0].min(px), x[1].max(px)], [y[0].min(py), y[1].max(py)])
    }))
}
