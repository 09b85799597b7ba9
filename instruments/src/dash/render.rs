//! Draws a [`DashState`] into a ratatui frame: header, task progress, charts, keys, GPU and
//! CPU panels. Pure drawing, tested with ratatui's `TestBackend`.

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Cell, Chart, Dataset, GraphType, LineGauge, Paragraph, Row, Table,
};

use super::format::{clock, memory, number, opt, percent, show, si, step_label};
use super::model::DashState;

/// Draws the whole dashboard into `frame`.
///
/// ```
/// use giving::{Event, Timestamp, Value};
/// use giving_instruments::{DashState, render_dash};
/// use ratatui::{Terminal, backend::TestBackend};
///
/// let mut state = DashState::new(Vec::<String>::new());
/// state.observe(&Event::new_at([("loss", Value::from(0.25))], Timestamp::from_nanos(1)));
/// let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
/// terminal.draw(|frame| render_dash(frame, &state)).unwrap();
/// let screen = format!("{:?}", terminal.backend().buffer());
/// assert!(screen.contains("0.250"));
/// ```
pub fn render_dash(frame: &mut Frame<'_>, state: &DashState) {
    let area = frame.area();
    let run_row = u16::from(has_run_row(state));
    let tasks = (state.tasks().len() as u16 + run_row).max(1);
    let monitors = if state.gpus().is_empty() && state.cpu().is_none() {
        0
    } else {
        (state.gpus().len().max(1) as u16 + 2).max(4)
    };
    let (stderr_shown, _) = state.stderr();
    let stderr_height = match stderr_shown.len() {
        0 => 0,
        n => n.min(5) as u16 + 2,
    };
    // A row per source (suite process, rank) and a total, a header and borders; at most 12.
    let sources_height = match state.sources().len() {
        0 => 0,
        n => (n.min(12) as u16) + u16::from(state.total_rate().is_some()) + 3,
    };
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(1),
            Constraint::Length(2 * tasks + 2),
            Constraint::Length(sources_height),
            Constraint::Min(8),
            Constraint::Length(monitors),
            Constraint::Length(stderr_height),
        ])
        .split(area);
    header(frame, rows[0], state);
    progress(frame, rows[1], state);
    if sources_height > 0 {
        sources(frame, rows[2], state);
    }
    let middle = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(60), Constraint::Percentage(40)])
        .split(rows[3]);
    charts(frame, middle[0], state);
    keys(frame, middle[1], state);
    if monitors > 0 {
        let bottom = Layout::default()
            .direction(Direction::Horizontal)
            .constraints([Constraint::Percentage(60), Constraint::Percentage(40)])
            .split(rows[4]);
        gpus(frame, bottom[0], state);
        cpu(frame, bottom[1], state);
    }
    if stderr_height > 0 {
        stderr(frame, rows[5], state);
    }
}

/// A row per source: its early stop's progress, latest rate and loss, events; then the total
/// rate of them all.
fn sources(frame: &mut Frame<'_>, area: Rect, state: &DashState) {
    let sources = state.sources();
    let title = format!(" sources ({}) ", sources.len());
    let mut rows: Vec<Row> = sources
        .iter()
        .map(|s| {
            let stop = s
                .stop
                .map_or_else(String::new, |(seen, stop)| format!("{seen}/{stop}"));
            let progress = s
                .progress
                .map_or_else(String::new, |(i, n)| format!("{i}/{n}"));
            let mut name = s.name.clone();
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
        })
        .collect();
    if let Some((total, units)) = state.total_rate() {
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
    frame.render_widget(table, area);
}

/// The latest lines other code wrote to stderr (they are written out again, all of them, when
/// the dashboard gives the terminal back).
fn stderr(frame: &mut Frame<'_>, area: Rect, state: &DashState) {
    let (lines, total) = state.stderr();
    let shown = usize::from(area.height.saturating_sub(2));
    let skip = lines.len().saturating_sub(shown);
    let lines: Vec<Line> = lines.skip(skip).map(Line::raw).collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" stderr ({total} lines) "))
        .border_style(Style::new().fg(Color::Red));
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn header(frame: &mut Frame<'_>, area: Rect, state: &DashState) {
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
    frame.render_widget(Paragraph::new(line), area);
}

fn progress(frame: &mut Frame<'_>, area: Rect, state: &DashState) {
    let block = Block::default().borders(Borders::ALL).title(" progress ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if state.tasks().is_empty() {
        frame.render_widget(Paragraph::new("waiting for progress events…"), inner);
        return;
    }
    let mut y = inner.y;
    if has_run_row(state) && inner.height >= 2 {
        run_row(frame, Rect::new(inner.x, y, inner.width, 2), state);
        y += 2;
    }
    for task in state.tasks() {
        if y + 1 >= inner.y + inner.height {
            break;
        }
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
        frame.render_widget(Paragraph::new(text), Rect::new(inner.x, y, inner.width, 1));
        if task.progress.is_some() {
            let ratio = task.ratio();
            let gauge = LineGauge::default()
                .filled_style(Style::new().fg(Color::Green))
                .line_set(symbols::line::THICK)
                .label(percent(ratio))
                .ratio(ratio);
            frame.render_widget(gauge, Rect::new(inner.x, y + 1, inner.width, 1));
        }
        y += 2;
    }
}

/// Whether the loop says which epoch it is in or how many steps the whole run plans.
fn has_run_row(state: &DashState) -> bool {
    let run = state.run();
    run.epoch.is_some() || run.progress().is_some()
}

/// The whole run: epoch, steps over all epochs, ETA, and a gauge.
fn run_row(frame: &mut Frame<'_>, area: Rect, state: &DashState) {
    let run = state.run();
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
    frame.render_widget(Paragraph::new(text), Rect { height: 1, ..area });
    if run.progress().is_some() && area.height >= 2 {
        let ratio = run.ratio();
        let gauge = LineGauge::default()
            .filled_style(Style::new().fg(Color::Magenta))
            .line_set(symbols::line::THICK)
            .label(percent(ratio))
            .ratio(ratio);
        frame.render_widget(gauge, Rect::new(area.x, area.y + 1, area.width, 1));
    }
}

fn charts(frame: &mut Frame<'_>, area: Rect, state: &DashState) {
    let plots = state.plots();
    let constraints: Vec<Constraint> = plots
        .iter()
        .map(|_| Constraint::Ratio(1, plots.len() as u32))
        .collect();
    let areas = Layout::default()
        .direction(Direction::Vertical)
        .constraints(constraints)
        .split(area);
    for (key, area) in plots.iter().zip(areas.iter()) {
        chart(frame, *area, state, key);
    }
}

fn chart(frame: &mut Frame<'_>, area: Rect, state: &DashState, key: &str) {
    let series = state.series(key);
    let latest = series
        .and_then(|s| s.points.last())
        .map(|&(_, y)| format!(" = {}", number(y)))
        .unwrap_or_default();
    let log = state.log_scale();
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
        frame.render_widget(Paragraph::new(what).block(block), area);
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
    let chart = Chart::new(vec![dataset])
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
        );
    frame.render_widget(chart, area);
}

/// The smallest and largest x and y of `points`, if there is one.
fn bounds(points: &[(f64, f64)]) -> Option<([f64; 2], [f64; 2])> {
    let (&(x0, y0), rest) = points.split_first()?;
    Some(rest.iter().fold(([x0, x0], [y0, y0]), |(x, y), &(px, py)| {
        ([x[0].min(px), x[1].max(px)], [y[0].min(py), y[1].max(py)])
    }))
}

fn keys(frame: &mut Frame<'_>, area: Rect, state: &DashState) {
    let rows = state.keys().iter().map(|(key, stat)| {
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
    .header(Row::new(["key", "latest", "units", "events"]).style(Style::new().fg(Color::Yellow)))
    .block(Block::default().borders(Borders::ALL).title(" keys "));
    frame.render_widget(table, area);
}

fn gpus(frame: &mut Frame<'_>, area: Rect, state: &DashState) {
    let block = Block::default().borders(Borders::ALL).title(" GPU ");
    let lines: Vec<Line> = if state.gpus().is_empty() {
        vec![Line::from("no gpudata (--gpu-poll)")]
    } else {
        state
            .gpus()
            .iter()
            .map(|(index, gpu)| {
                Line::from(format!(
                    "gpu {index}: load {}  mem {}  temp {}  power {}",
                    opt(gpu.load, |l| format!("{:.0}%", 100.0 * l)),
                    memory(gpu.memory),
                    opt(gpu.temperature, |t| format!("{t:.0}°C")),
                    opt(gpu.power, |p| format!("{p:.0} W")),
                ))
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn cpu(frame: &mut Frame<'_>, area: Rect, state: &DashState) {
    let block = Block::default().borders(Borders::ALL).title(" CPU ");
    let lines = match state.cpu() {
        None => vec![Line::from("no cpudata (--cpu-poll)")],
        Some(cpu) => {
            vec![
                Line::from(format!(
                    "load {}  mem {}",
                    opt(cpu.load, |l| format!("{:.0}%", 100.0 * l)),
                    memory(cpu.memory)
                )),
                Line::from(format!(
                    "process: cpu {}  rss {}",
                    opt(cpu.process_cpu, |c| format!("{c:.0}%")),
                    opt(cpu.rss_mb, |r| format!("{r:.0} MB")),
                )),
            ]
        }
    };
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
