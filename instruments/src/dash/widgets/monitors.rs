//! The monitors' panels: per GPU its load, memory, temperature and power (`gpudata`); the
//! machine's load and memory and this process's CPU and RSS (`cpudata`, `process`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use crate::dash::format::{memory, opt};
use crate::dash::model::DashState;

/// The GPU panel of a [`DashState`].
pub(crate) struct GpuPanel<'a> {
    state: &'a DashState,
}

impl<'a> GpuPanel<'a> {
    /// The GPUs of `state`.
    pub(crate) fn new(state: &'a DashState) -> Self {
        Self { state }
    }
}

impl Widget for GpuPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::default().borders(Borders::ALL).title(" GPU ");
        let gpus = self.state.gpus();
        let lines: Vec<Line> = if gpus.is_empty() {
            vec![Line::from("no gpudata (--gpu-poll)")]
        } else {
            gpus.iter()
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
        Paragraph::new(lines).block(block).render(area, buf);
    }
}

/// The CPU panel of a [`DashState`].
pub(crate) struct CpuPanel<'a> {
    state: &'a DashState,
}

impl<'a> CpuPanel<'a> {
    /// The machine and process figures of `state`.
    pub(crate) fn new(state: &'a DashState) -> Self {
        Self { state }
    }
}

impl Widget for CpuPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::default().borders(Borders::ALL).title(" CPU ");
        let lines = match self.state.cpu() {
            None => vec![Line::from("no cpudata (--cpu-poll)")],
            Some(cpu) => vec![
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
            ],
        };
        Paragraph::new(lines).block(block).render(area, buf);
    }
}
