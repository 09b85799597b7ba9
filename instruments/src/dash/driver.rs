//! The dashboard's own thread: redraws the shared state at a fixed rate (terminal), or prints
//! one line per period (plain), and reads `q` / Ctrl-C. The training thread never waits for
//! it: events reach the state through the subscription's pipeline.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use giving::{Lag, StopToken};
use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};

#[cfg(unix)]
use super::capture::StderrCapture;
use super::model::DashState;
use super::plain::plain_line;
use super::term;
use super::view::Dashboard;
use crate::error::InstrumentError;
use crate::threaded::SinkControl;

/// What the pipeline and the drawing thread share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) state: Mutex<DashState>,
    pub(crate) lag: Mutex<Option<Lag>>,
    /// The run was interrupted (Ctrl-C, SIGTERM, SIGHUP): no final screen to hold.
    pub(crate) interrupted: AtomicBool,
}

impl Shared {
    pub(crate) fn state(&self) -> MutexGuard<'_, DashState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
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

/// The shortest sleep between plain lines, so that a `plain_every` of zero prints a line per
/// wake-up rather than spinning.
const MIN_PLAIN_WAIT: Duration = Duration::from_millis(10);

/// How the thread shows the state.
pub(crate) struct Driver {
    pub(crate) shared: Arc<Shared>,
    pub(crate) stop: StopToken,
    pub(crate) redraw: Duration,
    pub(crate) plain_every: Duration,
    pub(crate) terminal: bool,
    /// Keep the final screen until a key is pressed (not after an interruption).
    pub(crate) hold: bool,
}

/// The terminal while the dashboard holds it, with stderr pointed at its panel.
struct Screen {
    term: term::Term,
    #[cfg(unix)]
    capture: Option<StderrCapture>,
}

impl Screen {
    fn enter(shared: &Arc<Shared>) -> io::Result<Self> {
        let term = term::enter()?;
        #[cfg(unix)]
        let capture = {
            let shared = shared.clone();
            StderrCapture::start(move |line| shared.state().stderr_line(line)).ok()
        };
        #[cfg(not(unix))]
        let _ = shared;
        Ok(Self {
            term,
            #[cfg(unix)]
            capture,
        })
    }

    /// Gives the terminal back, then writes out what stderr received meanwhile.
    fn leave(self) {
        term::restore();
        #[cfg(unix)]
        if let Some(capture) = self.capture {
            capture.finish();
        }
    }
}

/// A key the dashboard acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    /// `q`, Esc or Ctrl-C.
    Quit,
    /// `l`: linear / log scale.
    LogScale,
    /// Any other key.
    Other,
}

impl Driver {
    /// Runs until asked to stop; restores the terminal before it returns.
    pub(crate) fn run(self, control: &SinkControl) -> Result<(), InstrumentError> {
        let mut screen = if self.terminal {
            match Screen::enter(&self.shared) {
                Ok(screen) => Some(screen),
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
            if screen.is_some() && !term::is_active() {
                // The panic hook gave the terminal back (a panic that was then caught): the
                // message it printed stays readable, and the run goes on in plain lines.
                if let Some(screen) = screen.take() {
                    screen.leave();
                }
            }
            if let Some(s) = screen.as_mut() {
                if let Err(error) = self.draw(s) {
                    leave(&mut screen);
                    eprintln!("giving: dashboard: drawing failed ({error}); plain lines");
                }
            } else if done || last_plain.elapsed() >= self.plain_every {
                last_plain = Instant::now();
                let line = plain_line(&self.shared.state());
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
            if screen.is_some() {
                match wait_key(self.redraw) {
                    Ok(None | Some(Key::Other)) => {}
                    Ok(Some(Key::LogScale)) => self.shared.state().toggle_log_scale(),
                    Ok(Some(Key::Quit)) => {
                        leave(&mut screen);
                        eprintln!("giving: dashboard closed: stopping training cleanly");
                        self.stop.stop();
                    }
                    Err(error) => {
                        leave(&mut screen);
                        eprintln!("giving: dashboard: reading keys failed ({error}); plain lines");
                    }
                }
            } else {
                // Plain lines: sleep until the next line is due, not a redraw period (ten
                // wake-ups a second for a line every two), or until the run ends.
                let until_next = self.plain_every.saturating_sub(last_plain.elapsed());
                control.wait_for_stop(until_next.max(MIN_PLAIN_WAIT));
            }
        }
        if let Some(mut s) = screen {
            if self.hold && !self.shared.interrupted() {
                self.hold_final_screen(&mut s);
            }
            s.leave();
            let line = plain_line(&self.shared.state());
            println!("{line}");
        }
        Ok(())
    }

    fn draw(&self, screen: &mut Screen) -> io::Result<()> {
        // Draw a copy: the pipeline that feeds the state never waits for the drawing.
        let state = self.shared.state().clone();
        screen
            .term
            .draw(|frame| frame.render_widget(Dashboard::new(&state), frame.area()))
            .map(drop)
    }

    /// Shows the final screen until a key is pressed (`l` still switches the scale), or the
    /// run is interrupted (a signal must not wait for a key).
    fn hold_final_screen(&self, screen: &mut Screen) {
        self.shared.state().set_waiting_for_key(true);
        while !self.shared.interrupted() && term::is_active() {
            if self.draw(screen).is_err() {
                return;
            }
            match wait_key(self.redraw) {
                Ok(None) => {}
                Ok(Some(Key::LogScale)) => self.shared.state().toggle_log_scale(),
                Ok(Some(_)) | Err(_) => break,
            }
        }
        self.shared.state().set_waiting_for_key(false);
    }
}

/// Gives the terminal back, if the dashboard has it.
fn leave(screen: &mut Option<Screen>) {
    if let Some(screen) = screen.take() {
        screen.leave();
    }
}

/// Waits up to `timeout` for a key press.
fn wait_key(timeout: Duration) -> io::Result<Option<Key>> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || !event::poll(left)? {
            return Ok(None);
        }
        if let TermEvent::Key(key) = event::read()?
            && key.kind != KeyEventKind::Release
        {
            let ctrl_c =
                key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
            return Ok(Some(match key.code {
                KeyCode::Char('q') | KeyCode::Esc => Key::Quit,
                _ if ctrl_c => Key::Quit,
                KeyCode::Char('l') => Key::LogScale,
                _ => Key::Other,
            }));
        }
    }
}
