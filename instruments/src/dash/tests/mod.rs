//! The dashboard's state, plain line and screen for scripted events: no terminal, no sleeps,
//! no clock. (Moved here from `tests/dash.rs`: they use the crate's own types; the widgets'
//! exact renders are in `widgets/tests.rs`.)

mod model;
mod plain;
mod screen;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use giving::{Event, Timestamp, Value};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use super::model::DashState;
use super::plain::plain_line;
use super::view::Dashboard;

/// The dashboard drawn into a `width` × `height` buffer, one string per row.
pub(super) fn screen(state: &DashState, width: u16, height: u16) -> Vec<String> {
    let area = Rect::new(0, 0, width, height);
    let mut buffer = Buffer::empty(area);
    Dashboard::new(state).render(area, &mut buffer);
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
        })
        .collect()
}

/// A time `ms` milliseconds into the run.
pub(super) fn at(ms: u64) -> Timestamp {
    Timestamp::from_nanos(1_000_000_000).plus(Duration::from_millis(ms))
}

/// A training task of `n` steps of 32 items, 10 ms each, with a loss and a rate every 10 steps.
pub(super) fn script(state: &mut DashState, n: u64, done: u64) {
    state.observe(
        &Event::builder()
            .field("task", "train")
            .field("progress", (0u64, n))
            .time(at(0))
            .build(),
    );
    for step in 0..done {
        let t = at(10 * (step + 1));
        state.observe(
            &Event::builder()
                .field("task", "train")
                .field("step", step)
                .field("batch", 32u64)
                .field("progress", (step + 1, n))
                .time(t)
                .build(),
        );
        let loss = 2.0 / (step as f64 + 1.0);
        state.observe(
            &Event::builder()
                .field("epoch", 0u64)
                .field("global_step", step)
                .field("loss", loss)
                .field("lr", 0.01 * (1.0 - step as f64 / n as f64))
                .time(t)
                .build(),
        );
        if (step + 1) % 10 == 0 {
            state.observe(
                &Event::builder()
                    .field("task", "train")
                    .field("rate", 3000.0 + step as f64)
                    .field("units", "items/s")
                    .time(t)
                    .build(),
            );
        }
    }
}

/// A GPU and a CPU monitor's readings, as `gpudata`, `cpudata` and `process` events.
pub(super) fn monitors(state: &mut DashState) {
    let mut gpu = BTreeMap::new();
    gpu.insert("load".to_owned(), Value::F64(0.75));
    gpu.insert(
        "memory".to_owned(),
        Value::List(vec![Value::F64(2048.0), Value::F64(81920.0)]),
    );
    gpu.insert("temperature".to_owned(), Value::F64(61.0));
    gpu.insert("power".to_owned(), Value::Null);
    let mut gpus = BTreeMap::new();
    gpus.insert("0".to_owned(), Value::Map(gpu));
    state.observe(
        &Event::builder()
            .field("gpudata", Value::Map(gpus))
            .time(at(500))
            .build(),
    );
    let mut cpu = BTreeMap::new();
    cpu.insert("load".to_owned(), Value::F64(0.5));
    cpu.insert(
        "memory".to_owned(),
        Value::List(vec![Value::F64(4000.0), Value::F64(16000.0)]),
    );
    let mut process = BTreeMap::new();
    process.insert("pid".to_owned(), Value::U64(42));
    process.insert("rss_mb".to_owned(), Value::F64(321.0));
    process.insert("cpu".to_owned(), Value::F64(180.0));
    state.observe(
        &Event::builder()
            .field("cpudata", Value::Map(cpu))
            .field("process", Value::Map(process))
            .time(at(500))
            .build(),
    );
}

/// Two epochs of 100 steps (10 ms each), the run planning both: `{epoch, epochs, total_steps}`
/// at each epoch's start, `{global_step, loss}` every step.
pub(super) fn two_epochs(state: &mut DashState, done: u64) {
    for global in 0..done {
        let (epoch, step) = (global / 100, global % 100);
        let t = at(10 * global);
        if step == 0 {
            let start = [
                ("epoch", Value::from(epoch)),
                ("epochs", Value::from(2u64)),
                ("total_steps", Value::from(200u64)),
            ];
            state.observe(&Event::new_at(start, t));
            let progress = [
                ("task", Value::from("train")),
                ("progress", Value::from((0u64, 100u64))),
            ];
            state.observe(&Event::new_at(progress, t));
        }
        let t = at(10 * (global + 1));
        let progress = [
            ("task", Value::from("train")),
            ("progress", Value::from((step + 1, 100u64))),
        ];
        state.observe(&Event::new_at(progress, t));
        let loss = [
            ("epoch", Value::from(epoch)),
            ("global_step", Value::from(global)),
            ("loss", Value::from(1.0 / (global as f64 + 1.0))),
        ];
        state.observe(&Event::new_at(loss, t));
    }
}

/// A loss still on the device: counts how often it is read.
pub(super) struct DeviceLoss(pub(super) f64, pub(super) Arc<AtomicUsize>);

impl giving::Resolve for DeviceLoss {
    fn resolve(&self) -> Result<Value, giving::ResolveError> {
        self.1.fetch_add(1, Ordering::SeqCst);
        Ok(Value::F64(self.0))
    }
}

/// Whether any line of a screen contains `text`.
pub(super) fn shows(lines: &[String], text: &str) -> bool {
    lines.iter().any(|line| line.contains(text))
}
