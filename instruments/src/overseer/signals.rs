//! Ctrl-C (SIGINT), SIGTERM and SIGHUP during a run: the first asks every active run's loop to
//! stop and flushes its sinks; a second one flushes again and exits with the conventional code
//! (128 + the signal: 130, 143, 129).
//!
//! One listener thread serves the whole process (signal handlers cannot be uninstalled
//! cleanly). Every Overseer run registers while it runs, so a signal reaches all of them,
//! nested or side by side on other threads; with none registered, the process exits with the
//! conventional code, as the default handler would.

use std::sync::Arc;

use giving::StopToken;

/// Writes a sink's buffered data out; called from the signal thread.
pub(crate) type Flusher = Arc<dyn Fn() + Send + Sync>;

/// The signals a run handles, and their names for messages.
#[cfg(unix)]
const SIGNALS: [(i32, &str); 3] = [
    (signal_hook::consts::SIGINT, "interrupted (Ctrl-C)"),
    (signal_hook::consts::SIGTERM, "terminated (SIGTERM)"),
    (signal_hook::consts::SIGHUP, "hung up (SIGHUP)"),
];

/// One registered run.
#[cfg(unix)]
struct Active {
    id: u64,
    stop: StopToken,
    flushers: Vec<Flusher>,
    /// The first signal received during this run.
    signal: Option<i32>,
}

#[cfg(unix)]
static ACTIVE: std::sync::Mutex<Vec<Active>> = std::sync::Mutex::new(Vec::new());

/// How many signals the process received while runs were registered.
#[cfg(unix)]
static RECEIVED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Registration of one run with the listener.
pub(crate) struct Interrupts {
    #[cfg(unix)]
    id: u64,
}

impl Interrupts {
    #[cfg(unix)]
    pub(crate) fn install(stop: StopToken, flushers: Vec<Flusher>) -> std::io::Result<Self> {
        use std::sync::OnceLock;
        use std::sync::atomic::{AtomicU64, Ordering};
        static LISTENER: OnceLock<Result<(), String>> = OnceLock::new();
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        LISTENER
            .get_or_init(|| {
                let numbers = SIGNALS.map(|(signal, _)| signal);
                let mut signals = signal_hook::iterator::Signals::new(numbers)
                    .map_err(|e| format!("cannot handle signals: {e}"))?;
                std::thread::Builder::new()
                    .name("giving-signals".to_owned())
                    .spawn(move || {
                        for signal in signals.forever() {
                            on_signal(signal);
                        }
                    })
                    .map(drop)
                    .map_err(|e| format!("cannot start the signal thread: {e}"))
            })
            .clone()
            .map_err(std::io::Error::other)?;
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        lock().push(Active {
            id,
            stop,
            flushers,
            signal: None,
        });
        Ok(Self { id })
    }

    #[cfg(not(unix))]
    pub(crate) fn install(_stop: StopToken, _flushers: Vec<Flusher>) -> std::io::Result<Self> {
        Ok(Self {})
    }

    /// Ends the registration; returns the signal that interrupted the run, if one did.
    #[cfg(unix)]
    pub(crate) fn uninstall(self) -> Option<i32> {
        use std::sync::atomic::Ordering;
        let mut active = lock();
        let at = active.iter().position(|run| run.id == self.id)?;
        let signal = active.remove(at).signal;
        if active.is_empty() {
            // The next signal, in a later run, is a first one again.
            RECEIVED.store(0, Ordering::SeqCst);
        }
        signal
    }

    /// Ends the registration; returns the signal that interrupted the run, if one did.
    #[cfg(not(unix))]
    pub(crate) fn uninstall(self) -> Option<i32> {
        None
    }
}

#[cfg(unix)]
fn lock() -> std::sync::MutexGuard<'static, Vec<Active>> {
    ACTIVE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The exit code for a run ended by `signal`: 128 + its number, as shells report it.
pub(crate) fn exit_code(signal: i32) -> i32 {
    128 + signal
}

#[cfg(unix)]
fn on_signal(signal: i32) {
    use std::sync::atomic::Ordering;
    let name = SIGNALS
        .iter()
        .find(|(number, _)| *number == signal)
        .map_or("signalled", |(_, name)| name);
    let flushers: Vec<Flusher> = {
        let mut active = lock();
        if active.is_empty() {
            crate::exit_hooks::run();
            std::process::exit(exit_code(signal));
        }
        for run in active.iter_mut() {
            run.signal.get_or_insert(signal);
            run.stop.stop();
        }
        active
            .iter()
            .flat_map(|run| run.flushers.iter().cloned())
            .collect()
    };
    for flush in &flushers {
        flush();
    }
    if RECEIVED.fetch_add(1, Ordering::SeqCst) == 0 {
        eprintln!("giving: {name}: stopping at the next step (again to exit now)");
    } else {
        eprintln!("giving: {name} again: logs flushed, exiting");
        // Exiting runs no destructor: what registered an exit hook (the dashboard's terminal)
        // is given back first.
        crate::exit_hooks::run();
        std::process::exit(exit_code(signal));
    }
}
