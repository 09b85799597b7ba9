//! Ctrl-C during a run: the first asks the loop to stop and flushes the sinks; a second one
//! flushes and exits with code 130.
//!
//! One listener thread serves the whole process (signal handlers cannot be uninstalled
//! cleanly): while a run is active it acts for that run, otherwise it exits with 130 as the
//! default handler would.

use std::sync::Arc;

use giving::StopToken;

/// Writes a sink's buffered data out; called from the signal thread.
pub(crate) type Flusher = Arc<dyn Fn() + Send + Sync>;

/// The run currently served by the listener.
#[cfg(unix)]
struct Active {
    stop: StopToken,
    flushers: Vec<Flusher>,
    interrupts: usize,
}

#[cfg(unix)]
static ACTIVE: std::sync::Mutex<Option<Active>> = std::sync::Mutex::new(None);

/// Registration of one run with the listener.
pub(crate) struct Interrupts {
    _private: (),
}

impl Interrupts {
    #[cfg(unix)]
    pub(crate) fn install(stop: StopToken, flushers: Vec<Flusher>) -> std::io::Result<Self> {
        use std::sync::OnceLock;
        static LISTENER: OnceLock<Result<(), String>> = OnceLock::new();
        LISTENER
            .get_or_init(|| {
                let mut signals =
                    signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT])
                        .map_err(|e| format!("cannot handle Ctrl-C: {e}"))?;
                std::thread::Builder::new()
                    .name("giving-ctrl-c".to_owned())
                    .spawn(move || {
                        for _ in signals.forever() {
                            on_interrupt();
                        }
                    })
                    .map(drop)
                    .map_err(|e| format!("cannot start the Ctrl-C thread: {e}"))
            })
            .clone()
            .map_err(std::io::Error::other)?;
        *lock() = Some(Active {
            stop,
            flushers,
            interrupts: 0,
        });
        Ok(Self { _private: () })
    }

    #[cfg(not(unix))]
    pub(crate) fn install(_stop: StopToken, _flushers: Vec<Flusher>) -> std::io::Result<Self> {
        Ok(Self { _private: () })
    }

    /// Ends the registration; returns whether the run was interrupted.
    #[cfg(unix)]
    pub(crate) fn uninstall(self) -> bool {
        lock().take().is_some_and(|active| active.interrupts > 0)
    }

    /// Ends the registration; returns whether the run was interrupted.
    #[cfg(not(unix))]
    pub(crate) fn uninstall(self) -> bool {
        false
    }
}

#[cfg(unix)]
fn lock() -> std::sync::MutexGuard<'static, Option<Active>> {
    ACTIVE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(unix)]
fn on_interrupt() {
    let (flushers, first) = {
        let mut active = lock();
        match active.as_mut() {
            None => std::process::exit(130),
            Some(active) => {
                active.interrupts += 1;
                active.stop.stop();
                (active.flushers.clone(), active.interrupts == 1)
            }
        }
    };
    for flush in &flushers {
        flush();
    }
    if first {
        eprintln!("giving: interrupted: stopping at the next step (Ctrl-C again to exit now)");
    } else {
        eprintln!("giving: interrupted again: logs flushed, exiting");
        std::process::exit(130);
    }
}
