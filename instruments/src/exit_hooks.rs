//! What must run before the process exits on a signal without unwinding: a registry the
//! signal handler (`overseer::signals`) runs, which the parts that hold something the process
//! must give back register with (the dashboard registers putting the terminal back).
//!
//! It sits below both: the overseer does not know the dashboard, the dashboard does not know
//! signals, and the module graph stays one-way.

use std::sync::{Mutex, PoisonError};

static HOOKS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

/// Registers `hook` to run before a signal exits the process; registering the same function
/// again keeps one copy.
// Only the dashboard holds something to give back today; without it nothing registers.
#[cfg_attr(not(feature = "dash"), allow(dead_code))]
pub(crate) fn register(hook: fn()) {
    let mut hooks = HOOKS.lock().unwrap_or_else(PoisonError::into_inner);
    if !hooks
        .iter()
        .any(|registered| std::ptr::fn_addr_eq(*registered, hook))
    {
        hooks.push(hook);
    }
}

/// Runs every registered hook, in the order they were registered. Hooks must be safe to run
/// any number of times (a second signal runs them again).
pub(crate) fn run() {
    let hooks: Vec<fn()> = HOOKS.lock().unwrap_or_else(PoisonError::into_inner).clone();
    for hook in hooks {
        hook();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    fn count_call() {
        CALLS.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn a_registered_hook_runs_once_per_run_however_often_it_was_registered() {
        super::register(count_call);
        super::register(count_call);
        super::run();
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
        super::run();
        assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    }
}
