//! What other code writes to stderr while the dashboard holds the terminal: a panic message
//! from another thread, a library's warning, an instrument's problem. Written straight to the
//! terminal it would smear the dashboard's screen and vanish with the alternate screen, so
//! file descriptor 2 is pointed at a pipe while the dashboard is up; a thread reads the lines
//! into the dashboard's stderr panel, and when the terminal is given back (by the dashboard,
//! the panic hook or a signal) descriptor 2 is restored and every line kept is written to it,
//! so nothing is lost from the scrollback.
//!
//! Unix only: elsewhere stderr is left alone.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Lines kept for the scrollback; past this, the oldest are dropped and counted.
const KEPT: usize = 10_000;
/// How long giving the terminal back waits for the reader to see the last lines.
const DRAIN: Duration = Duration::from_millis(500);

/// The real stderr, duplicated while the pipe stands in for it (-1 when not capturing).
static SAVED_STDERR: AtomicI32 = AtomicI32::new(-1);

/// The lines read from the pipe, for the scrollback once the terminal is back.
#[derive(Debug, Default)]
struct Kept {
    lines: std::collections::VecDeque<String>,
    dropped: u64,
}

/// A capture of stderr into lines; [`finish`](StderrCapture::finish) ends it.
pub(crate) struct StderrCapture {
    kept: Arc<Mutex<Kept>>,
    reader_done: mpsc::Receiver<()>,
}

/// Puts the real stderr back (if a capture had replaced it). Safe to call any number of times,
/// from any thread, the panic hook included: it only duplicates and closes descriptors.
pub(crate) fn release() {
    let saved = SAVED_STDERR.swap(-1, Ordering::SeqCst);
    if saved >= 0 {
        // SAFETY: `saved` is a descriptor this module duplicated and owns; dup2 onto 2 closes
        // the pipe's write end there, so the reader sees the end of the pipe.
        unsafe {
            libc::dup2(saved, libc::STDERR_FILENO);
            libc::close(saved);
        }
    }
}

impl StderrCapture {
    /// Points stderr at a pipe; `on_line` receives each line (without its newline) on the
    /// reader thread.
    pub(crate) fn start(on_line: impl Fn(String) + Send + 'static) -> std::io::Result<Self> {
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: plain descriptor calls; every descriptor made here is either handed to a
        // `File` (which owns and closes it) or closed on the error paths.
        let (read_end, saved) = unsafe {
            if libc::pipe(fds.as_mut_ptr()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let [read_end, write_end] = fds;
            // Close-on-exec: a child process started later must not hold the pipe open.
            libc::fcntl(read_end, libc::F_SETFD, libc::FD_CLOEXEC);
            let saved = libc::fcntl(libc::STDERR_FILENO, libc::F_DUPFD_CLOEXEC, 3);
            if saved < 0 || libc::dup2(write_end, libc::STDERR_FILENO) < 0 {
                let error = std::io::Error::last_os_error();
                libc::close(read_end);
                libc::close(write_end);
                if saved >= 0 {
                    libc::close(saved);
                }
                return Err(error);
            }
            libc::close(write_end);
            (std::fs::File::from_raw_fd(read_end), saved)
        };
        SAVED_STDERR.store(saved, Ordering::SeqCst);
        let kept = Arc::new(Mutex::new(Kept::default()));
        let (done, reader_done) = mpsc::channel();
        let keep = kept.clone();
        let spawned = std::thread::Builder::new()
            .name("giving-stderr".into())
            .spawn(move || {
                read_lines(read_end, |line| {
                    on_line(line.clone());
                    let mut kept = keep.lock().unwrap_or_else(PoisonError::into_inner);
                    if kept.lines.len() == KEPT {
                        kept.lines.pop_front();
                        kept.dropped += 1;
                    }
                    kept.lines.push_back(line);
                });
                let _ = done.send(());
            });
        if let Err(error) = spawned {
            release();
            return Err(error);
        }
        Ok(Self { kept, reader_done })
    }

    /// Puts the real stderr back and writes to it every line captured (the scrollback keeps
    /// them once the dashboard is gone).
    pub(crate) fn finish(self) {
        use std::io::Write;
        release();
        // The pipe ends when descriptor 2 stops being its write end; a child process that
        // inherited it may hold it longer, so the wait is bounded.
        let _ = self.reader_done.recv_timeout(DRAIN);
        let kept = std::mem::take(&mut *self.kept.lock().unwrap_or_else(PoisonError::into_inner));
        let mut stderr = std::io::stderr().lock();
        if kept.dropped > 0 {
            let _ = writeln!(
                stderr,
                "giving: ({} earlier stderr lines not kept)",
                kept.dropped
            );
        }
        for line in kept.lines {
            let _ = writeln!(stderr, "{line}");
        }
        let _ = stderr.flush();
    }
}

/// Reads `source` to its end, one line at a time (bytes that are not UTF-8 are replaced).
fn read_lines(source: impl std::io::Read, mut on_line: impl FnMut(String)) {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(source);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                on_line(text.trim_end_matches(['\n', '\r']).to_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_written_to_descriptor_2_are_captured_then_stderr_is_back() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let capture = StderrCapture::start(move |line| sink.lock().unwrap().push(line)).unwrap();
        // Straight to the descriptor, as another library or a child's inherited stderr would.
        for text in [&b"first line\n"[..], b"second \xff line\n", b"no newline"] {
            // SAFETY: writing a live buffer to descriptor 2.
            let written = unsafe { libc::write(2, text.as_ptr().cast(), text.len()) };
            assert_eq!(written, text.len() as isize);
        }
        capture.finish();
        assert_eq!(
            *seen.lock().unwrap(),
            ["first line", "second \u{fffd} line", "no newline"]
        );
        assert_eq!(SAVED_STDERR.load(Ordering::SeqCst), -1);
        assert!(
            // SAFETY: F_GETFL on descriptor 2 only reads its flags.
            unsafe { libc::fcntl(2, libc::F_GETFL) } >= 0,
            "stderr is open again"
        );
    }
}
