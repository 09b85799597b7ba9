//! Standard output that survives its reader going away: `giving train … | head` must not
//! panic when `head` exits. Rust ignores SIGPIPE, so a closed pipe is a write error, which
//! `println!` turns into a panic.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout's reader has gone: later lines are not written.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes one line to stdout. Once the reader has gone (a broken pipe), this and every later
/// line are dropped silently, as for any other Unix tool; the run itself goes on.
pub(crate) fn line(text: std::fmt::Arguments<'_>) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_fmt(format_args!("{text}\n"))
        .and_then(|()| stdout.flush());
    if written.is_err() {
        CLOSED.store(true, Ordering::Relaxed);
    }
}

/// `println!` through [`line`].
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}

pub(crate) use say;
