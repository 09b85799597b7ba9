//! Waiting for a benchmark process, and ending it: at its `max_duration`, on an interrupt, or
//! when it asked to be ended (voir's `{"$event": "stop"}`): SIGTERM to its process group, then
//! SIGKILL after the grace period, as milabench's `destroy` does.

use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the runner looks whether a child has exited.
const POLL: Duration = Duration::from_millis(20);

/// Why the runner ended a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cause {
    /// Its `max_duration` passed.
    MaxDuration,
    /// The run was interrupted (Ctrl-C).
    Interrupt,
    /// It asked to be ended (`{"$event": "stop"}`).
    Stop,
}

/// How a process ended, as far as the runner had a hand in it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Ending {
    /// How the runner ended it (`sigterm`, `sigkill`), if it did.
    pub(super) killed: Option<&'static str>,
    /// Why the runner began to end it, if it did.
    pub(super) cause: Option<Cause>,
}

/// Waits for `child`; past `max_duration`, when `interrupt` is set, or when `stop_asked` is
/// (the child asked to be ended, as milabench's runner ends it), sends SIGTERM to its process
/// group, and SIGKILL `grace` later. Once it has exited, whatever it left running in its group
/// is killed, so that nothing outlives its benchmark (or holds its pipes open).
pub(super) fn wait(
    child: &mut Child,
    max_duration: Duration,
    grace: Duration,
    interrupt: Option<&AtomicBool>,
    stop_asked: &AtomicBool,
) -> std::io::Result<(std::process::ExitStatus, Ending)> {
    let started = Instant::now();
    let group = child.id() as libc::pid_t;
    let mut ending = Ending::default();
    let mut terminated_at = Duration::ZERO;
    loop {
        if let Some(status) = child.try_wait()? {
            signal_group(group, libc::SIGKILL);
            return Ok((status, ending));
        }
        let elapsed = started.elapsed();
        if ending.cause.is_none() {
            // The child's own request first: a stop that came before the deadline is a stop.
            ending.cause = if stop_asked.load(Ordering::Relaxed) {
                Some(Cause::Stop)
            } else if elapsed >= max_duration {
                Some(Cause::MaxDuration)
            } else if interrupt.is_some_and(|i| i.load(Ordering::Relaxed)) {
                Some(Cause::Interrupt)
            } else {
                None
            };
            if ending.cause.is_some() {
                ending.killed = Some("sigterm");
                terminated_at = elapsed;
                signal_group(group, libc::SIGTERM);
            }
        } else if ending.killed == Some("sigterm") && elapsed >= terminated_at + grace {
            ending.killed = Some("sigkill");
            signal_group(group, libc::SIGKILL);
            // A child that left its group (setsid) is still killed itself.
            let _ = child.kill();
        }
        std::thread::sleep(POLL);
    }
}

/// Sends `signal` to the process group `group` (the benchmark's: it was started as the
/// group's leader); a group already gone is not an error.
fn signal_group(group: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved. The
    // group is the child's own (`process_group(0)`), led by a child this runner has not
    // reaped yet or has just reaped, so its id is not reused by an unrelated group.
    unsafe { libc::kill(-group, signal) };
}
