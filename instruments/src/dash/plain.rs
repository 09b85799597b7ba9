//! The plain line: what the dashboard prints, one line per period, when stdout is not a
//! terminal (CI, a pipe) or the terminal cannot be used.

use giving::vocab::keys;

use super::format::{clock, number, si};
use super::model::{DashState, TaskStat};

/// The one-line summary of `state`:
/// `train 45% 12/26 epoch 2/5 loss=0.231 rate=5.1k items/s eta 0:32 | run 29% eta 2:40`
/// (the current task, the epoch, then the whole run when the loop says what it plans; then a
/// part per source and their total rate).
pub(crate) fn plain_line(state: &DashState) -> String {
    let mut line = String::new();
    let task = state.current_task();
    if let Some(task) = task {
        let name = if task.name.is_empty() {
            "run"
        } else {
            &task.name
        };
        line += name;
        if let Some((i, n)) = task.progress {
            line += &format!(" {:.0}% {i}/{n}", 100.0 * task.ratio());
        }
        if let Some(epoch) = state.run().epoch_label() {
            line += &format!(" {epoch}");
        }
    } else {
        line += &format!("{} events", state.events());
    }
    if let Some(loss) = state.key(keys::LOSS).and_then(|k| k.value.as_f64()) {
        line += &format!(" loss={}", number(loss));
    }
    for key in state.plots().iter().skip(1) {
        if let Some(v) = state.key(key).and_then(|k| k.value.as_f64()) {
            line += &format!(" {key}={}", number(v));
        }
    }
    let rated = task
        .filter(|t| t.rate.is_some())
        .or_else(|| state.tasks().iter().rev().find(|t| t.rate.is_some()));
    if let Some(t) = rated
        && let Some(rate) = t.rate
    {
        line += &format!(" rate={}", si(rate));
        if let Some(units) = &t.units {
            line += &format!(" {units}");
        }
    }
    if let Some(eta) = task.and_then(TaskStat::eta) {
        line += &format!(" eta {}", clock(eta));
    }
    if state.run().progress().is_some() {
        line += &format!(" | run {:.0}%", 100.0 * state.run().ratio());
        if let Some(eta) = state.run().eta() {
            line += &format!(" eta {}", clock(eta));
        }
    }
    for source in state.sources() {
        line += &format!(" | {}", source.name);
        if let Some(phase) = &source.phase {
            line += &format!(" [{phase}]");
        }
        if source.done {
            line += " done";
        }
        if let Some((seen, stop)) = source.stop {
            line += &format!(" {seen}/{stop}");
        }
        if let Some(rate) = source.rate {
            line += &format!(" rate={}", si(rate));
        }
    }
    if let Some((total, units)) = state.total_rate() {
        line += &format!(" | total rate={} {units}", si(total));
    }
    if state.dropped() > 0 {
        line += &format!(" dropped={}", state.dropped());
    }
    line
}
