//! Observer threads yield to training: they never preempt a training thread when they wake.
//!
//! An observer's thread (a pipeline's runtime, a log or trace writer, a dashboard, a web
//! server) wakes when events arrive, typically once per training step. With the default
//! policy, Linux lets a thread that wakes preempt the one running on its core if that one
//! has run longer: on a machine whose cores burn's threads keep busy, the observer then takes
//! the core from a worker in the middle of a parallel kernel, and the whole step waits for
//! that worker. Under `SCHED_BATCH` a thread that wakes never preempts: it runs when a core
//! is free or at the running thread's next scheduling point (a tick, a few milliseconds at
//! most), and keeps its fair share of a busy machine, so it cannot fall behind for good as a
//! `SCHED_IDLE` thread could. See docs/architecture.md, "Training under an observer".
//!
//! Every thread that giving and its instruments start for observing calls
//! [`yield_to_training`]; `GIVING_OBSERVER_SCHED=normal` leaves them under the default policy.

/// The environment variable that, set to `normal`, keeps observer threads under the default
/// scheduling policy.
pub const OBSERVER_SCHED_ENV: &str = "GIVING_OBSERVER_SCHED";

/// Puts the calling thread under `SCHED_BATCH` (Linux; elsewhere nothing happens), unless
/// [`OBSERVER_SCHED_ENV`] is `normal`. Returns whether the thread is now a batch thread.
/// Call it at the start of a thread of your own that only observes (a sink, a monitor).
///
/// ```
/// let sink = std::thread::spawn(|| {
///     let batch = giving::yield_to_training();
///     // ... read a stream, write a file ...
///     batch
/// });
/// let expected = cfg!(target_os = "linux")
///     && std::env::var("GIVING_OBSERVER_SCHED").as_deref() != Ok("normal");
/// assert_eq!(sink.join().unwrap(), expected);
/// ```
pub fn yield_to_training() -> bool {
    if std::env::var(OBSERVER_SCHED_ENV).as_deref() == Ok("normal") {
        return false;
    }
    set_batch()
}

#[cfg(target_os = "linux")]
fn set_batch() -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: on Linux, pid 0 is the calling thread; the parameter is read only. Switching
    // to SCHED_BATCH (priority 0) needs no privilege and keeps the thread's nice value.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn set_batch() -> bool {
    false
}

/// Whether the calling thread runs under `SCHED_BATCH` (always false off Linux): for tests
/// and diagnostics.
///
/// ```
/// let observer = std::thread::spawn(|| {
///     giving::yield_to_training();
///     giving::is_batch_thread()
/// });
/// assert_eq!(observer.join().unwrap(), giving::yield_to_training());
/// ```
pub fn is_batch_thread() -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: pid 0 is the calling thread; the call only reads its policy.
    return unsafe { libc::sched_getscheduler(0) == libc::SCHED_BATCH };
    #[cfg(not(target_os = "linux"))]
    false
}
