//! [`Dash`]: a live terminal dashboard of a run's events (ratatui + crossterm), or one plain
//! line per period when stdout is not a terminal.
//!
//! - `model`: [`DashState`], the aggregation of events (pure, fed one event at a time);
//! - `format`: how numbers, rates, durations and values are written;
//! - `widgets`: one ratatui widget per panel, drawn from the model;
//! - `view`: the panels laid out on the screen;
//! - `plain`: the one line per period printed off a terminal;
//! - `term`: the terminal (raw mode, alternate screen, restore, panic hook);
//! - `capture`: stderr pointed at the dashboard's panel while it holds the terminal (unix);
//! - `driver`: the dashboard thread (redraw timer, plain lines, keys).

#[cfg(unix)]
mod capture;
mod driver;
mod format;
mod model;
mod plain;
mod term;
#[cfg(test)]
mod tests;
mod view;
mod widgets;

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use giving::Delivery;

use crate::error::InstrumentError;
use crate::overseer::{Instrument, Start};
use crate::threaded::SinkThread;
use driver::{Driver, Shared};
use model::DashState;

/// Where the dashboard draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DashMode {
    /// The terminal dashboard when stdout is a terminal, plain lines otherwise (the default).
    #[default]
    Auto,
    /// The terminal dashboard (plain lines if the terminal cannot be used).
    Terminal,
    /// One plain line per period on stdout, no escape codes.
    Plain,
}

/// The live dashboard instrument: the whole run's epoch, progress and ETA (from `epoch`,
/// `epochs`, `total_steps` and `global_step`); per task the progress (i/n, percentage, ETA)
/// and the current and mean rate; a chart of `loss` over steps and of every
/// [`plot`](Dash::plot) key (`l` switches them to a log scale); the latest value, units and
/// count of every key; GPU and CPU panels from the monitors (`gpudata`, `cpudata`,
/// `process`); a panel of what other code writes to stderr meanwhile (written out again when
/// the terminal is given back); and its own subscription's lag.
///
/// The training thread pays only the cost of giving: a bounded subscription feeds a pipeline
/// that folds events into the dashboard's state off the training thread, and a `giving-dash` thread
/// redraws that state about 10 times a second. In the terminal, `q`, Esc or Ctrl-C restores
/// the terminal and asks the loop to stop cleanly (the scope's stop token), so every sink
/// flushes; a panic anywhere restores the terminal before the panic is reported. When stdout
/// is not a terminal (CI, a pipe), or the terminal fails, it prints one line per period
/// instead: `train 45% 12/26 epoch 2/5 loss=0.231 rate=5.1k items/s eta 0:32 | run 29% eta
/// 2:40`. With [`hold`](Dash::hold), the final screen stays until a key is pressed.
///
/// ```no_run
/// use giving::iterate;
/// use giving_instruments::{Dash, Overseer, Rate};
///
/// let run = Overseer::new()
///     .with(Rate::new())
///     .with(Dash::new().plot("lr")) // charts loss and lr
///     .run(|| {
///         for (step, _batch) in iterate("train", 0..10_000).enumerate() {
///             let loss = 1.0 / (step as f64 + 1.0);
///             giving::give!(loss);
///         }
///     });
/// std::process::exit(run.exit_code());
/// ```
///
/// In plain mode it runs anywhere:
///
/// ```
/// use giving::iterate;
/// use giving_instruments::{Dash, DashMode, Overseer};
///
/// let run = Overseer::new()
///     .with(Dash::new().mode(DashMode::Plain))
///     .run(|| for _ in iterate("train", 0..100) {});
/// assert_eq!(run.exit_code(), 0);
/// assert!(run.problems.is_empty());
/// ```
#[derive(Debug)]
pub struct Dash {
    plots: Vec<String>,
    mode: DashMode,
    redraw: Duration,
    plain_every: Duration,
    capacity: usize,
    read_every: Duration,
    hold: bool,
    thread: Option<SinkThread<()>>,
}

impl Default for Dash {
    fn default() -> Self {
        Self::new()
    }
}

impl Dash {
    /// A dashboard in [`DashMode::Auto`], charting `loss`, redrawn every 100 ms, with a plain
    /// line every 2 s.
    pub fn new() -> Self {
        Self {
            plots: Vec::new(),
            mode: DashMode::Auto,
            redraw: Duration::from_millis(100),
            plain_every: Duration::from_secs(2),
            capacity: 1 << 16,
            read_every: DashState::DEFAULT_READ_EVERY,
            hold: false,
            thread: None,
        }
    }

    /// Also charts `key` over steps (numbers only; other values are skipped).
    pub fn plot(mut self, key: impl Into<String>) -> Self {
        self.plots.push(key.into());
        self
    }

    /// Where to draw (default [`DashMode::Auto`]).
    pub fn mode(mut self, mode: DashMode) -> Self {
        self.mode = mode;
        self
    }

    /// The terminal's redraw period (default 100 ms).
    pub fn redraw(mut self, period: Duration) -> Self {
        self.redraw = period.max(Duration::from_millis(10));
        self
    }

    /// The period of plain lines (default 2 s).
    pub fn plain_every(mut self, period: Duration) -> Self {
        self.plain_every = period;
        self
    }

    /// Events the subscription holds before it drops the oldest (default 65536); drops are
    /// shown in the header.
    pub fn capacity(mut self, events: usize) -> Self {
        self.capacity = events.max(1);
        self
    }

    /// Charts read a lazy value (a loss still on the device) at most once per `gap` of event
    /// time (default 50 ms): the others are counted but not read, because reading every one
    /// makes the backend hand over every value and slows training. Values already read, and
    /// plain numbers, are always charted. `Duration::ZERO` reads them all.
    pub fn read_lazy_every(mut self, gap: Duration) -> Self {
        self.read_every = gap;
        self
    }

    /// Keeps the final screen until a key is pressed, so the last figures can be read
    /// (default off). A run interrupted by Ctrl-C or a signal does not wait.
    pub fn hold(mut self, hold: bool) -> Self {
        self.hold = hold;
        self
    }

    fn stop_thread(&mut self) -> Result<(), InstrumentError> {
        let joined = match self.thread.take() {
            Some(thread) => {
                thread.stop();
                thread.join()
            }
            None => Ok(()),
        };
        term::restore();
        joined
    }
}

impl Instrument for Dash {
    fn name(&self) -> &str {
        "dash"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        let mut events = start
            .given()
            .stream_with(Delivery::Bounded(self.capacity))
            .paced(crate::SINK_PACE);
        let shared = Arc::new(Shared {
            state: Mutex::new(
                DashState::new(self.plots.iter().cloned()).read_lazy_every(self.read_every),
            ),
            lag: Mutex::new(Some(events.lag())),
            interrupted: AtomicBool::new(false),
        });
        let flagged = shared.clone();
        start.on_interrupt(move || flagged.interrupted.store(true, Ordering::SeqCst));
        let terminal = match self.mode {
            DashMode::Auto => std::io::stdout().is_terminal(),
            DashMode::Terminal => true,
            DashMode::Plain => false,
        };
        let driver = Driver {
            shared: shared.clone(),
            stop: start.given().stop_token(),
            redraw: self.redraw,
            plain_every: self.plain_every,
            terminal,
            hold: self.hold,
        };
        self.thread = Some(SinkThread::spawn("giving-dash", move |control| {
            driver.run(control)
        })?);
        start.spawn(async move {
            while let Some(event) = events.next().await {
                shared.state().observe(&event);
            }
            shared.update_lag();
            shared.state().finish();
        });
        Ok(())
    }

    fn finish(&mut self) -> Result<(), InstrumentError> {
        self.stop_thread()
    }
}

impl Drop for Dash {
    fn drop(&mut self) {
        let _ = self.stop_thread();
    }
}
