//! The dashboard's own thread: redraws the shared state at a fixed rate (terminal), or prints
//! one line per period (plain), and reads `q` / Ctrl-C. The training thread never waits for
//! it: events reach the state through the subscription's pipeline.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use giving::{Lag, StopToken};
use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};

use super::render::render_dash;
use super::state::DashState;
use super::term;
use crate::error::InstrumentError;
use crate::threaded::SinkControl;

/// What the pipeline and the drawing thread share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) state: Mutex<DashState>,
    pub(crate) lag: Mutex<Option<Lag>>,
}

impl Shared {
    pub(crate) fn state(&self) -> MutexGuard<'_, DashState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn update_lag(&self) {
        let lag = self
            .lag
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(lag) = lag {
            self.state().set_lag(lag.dropped(), lag.pending());
        }
    }
}

/// How the thread shows the state.
pub(crate) struct Driver {
    pub(crate) shared: Arc<Shared>,
    pub(crate) stop: StopToken,
    pub(crate) redraw: Duration,
    pub(crate) plain_every: Duration,
    pub(crate) terminal: bool,
}

impl Driver {
    /// Runs until asked to stop; restores the terminal before it returns.
    pub(crate) fn run(self, control: &SinkControl) -> Result<(), InstrumentError> {
        let mut terminal = if self.terminal {
            match term::enter() {
                Ok(t) => Some(t),
                Err(error) => {
                    eprintln!("giving: dashboard: cannot use the terminal ({error}); plain lines");
                    None
                }
            }
        } else {
            None
        };
        let mut last_plain = Instant::now();
        let mut printed = String::new();
        loop {
            let done = control.should_stop();
            self.shared.update_lag();
            if let Some(t) = terminal.as_mut() {
                // Draw a copy: the pipeline that feeds the state never waits for the drawing.
                let state = self.shared.state().clone();
                let drawn = t.draw(|frame| render_dash(frame, &state)).map(drop);
                if let Err(error) = drawn {
                    term::restore();
                    terminal = None;
                    eprintln!("giving: dashboard: drawing failed ({error}); plain lines");
                }
            } else if done || last_plain.elapsed() >= self.plain_every {
                last_plain = Instant::now();
                let line = self.shared.state().plain_line();
                if line != printed {
                    let mut out = io::stdout().lock();
                    let _ = writeln!(out, "{line}");
                    let _ = out.flush();
                    printed = line;
                }
            }
            if done {
                break;
            }
            if terminal.is_some() {
                match wait_key(self.redraw) {
                    Ok(false) => {}
                    Ok(true) => {
                        term::restore();
                        terminal = None;
                        eprintln!("giving: dashboard closed: stopping training cleanly");
                        self.stop.stop();
                    }
                    Err(error) => {
                        term::restore();
                        terminal = None;
                        eprintln!("giving: dashboard: reading keys failed ({error}); plain lines");
                    }
                }
            } else {
                std::thread::sleep(self.redraw);
            }
        }
        if terminal.is_some() {
            term::restore();
            let line = self.shared.state().plain_line();
            println!("{line}");
        }
        Ok(())
    }
}

/// Waits up to `timeout` for a key; true for `q`, Esc or Ctrl-C.
fn wait_key(timeout: Duration) -> io::Result<bool> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || !event::poll(left)? {
            return Ok(false);
        }
        if let TermEvent::Key(key) = event::read()?
            && key.kind != KeyEventKind::Release
        {
            let quit = matches!(key.code, KeyCode::Char('q') | KeyCode::Esc)
                || (key.code == KeyCode::Char('c')
                    && key.modifiers.contains(KeyModifiers::CONTROL));
            if quit {
                return Ok(true);
            }
        }
    }
}
