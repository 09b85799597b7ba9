//! The terminal: raw mode and the alternate screen on entry, restored on exit, on `q`, on a
//! failed draw and — through a panic hook that restores and then chains to the previous hook —
//! on a panic anywhere in the process.

use std::io::{self, Stdout, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::{cursor, execute, terminal};

/// Whether this process has the terminal in raw mode on the alternate screen.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Puts the terminal back (cooked mode, main screen, cursor shown) if the dashboard had it.
/// Safe to call any number of times, from any thread.
pub(crate) fn restore() {
    #[cfg(unix)]
    super::capture::release();
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = terminal::disable_raw_mode();
        let _ = execute!(io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
        let _ = io::stdout().flush();
    }
}

/// Whether the terminal is still the dashboard's (false once anyone restored it).
pub(crate) fn is_active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}

fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

/// A ratatui terminal on stdout, in raw mode on the alternate screen.
pub(crate) type Term = Terminal<CrosstermBackend<Stdout>>;

/// Takes the terminal; on failure it is left (or put back) as it was.
pub(crate) fn enter() -> io::Result<Term> {
    install_panic_hook();
    crate::exit_hooks::register(restore);
    terminal::enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let entered = execute!(io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)
        .and_then(|()| Terminal::new(CrosstermBackend::new(io::stdout())));
    match entered {
        Ok(mut term) => {
            term.clear()?;
            Ok(term)
        }
        Err(error) => {
            restore();
            Err(error)
        }
    }
}
