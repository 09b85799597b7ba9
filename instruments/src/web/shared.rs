//! [`Shared`]: what the server, its connections and the run's pipeline share — the page's
//! state, the stop token, the limits, the count of connections and the shutdown signal.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use giving::StopToken;
use tokio::sync::Notify;

use super::state::WebState;

/// What the server and the run's pipeline share.
pub(crate) struct Shared {
    state: Mutex<WebState>,
    /// The page's stop token, when the page may stop the run (`--web-allow-stop`).
    pub(crate) stop: Option<(String, StopToken)>,
    /// Period of the SSE batches.
    pub(crate) every: Duration,
    /// Connections served at most at once.
    pub(crate) max_connections: usize,
    connections: AtomicUsize,
    pub(crate) shutdown: Shutdown,
}

impl Shared {
    /// Shared state for a server of at most `max_connections` connections sending batches
    /// every `every`.
    pub(crate) fn new(
        state: WebState,
        stop: Option<(String, StopToken)>,
        every: Duration,
        max_connections: usize,
    ) -> Self {
        Self {
            state: Mutex::new(state),
            stop,
            every,
            max_connections: max_connections.max(1),
            connections: AtomicUsize::new(0),
            shutdown: Shutdown::default(),
        }
    }

    /// The state, locked. A panic while it was held leaves it readable: it is only figures.
    pub(crate) fn state(&self) -> MutexGuard<'_, WebState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The count of connections open now (the server's slots take and give it back).
    pub(crate) fn connections(&self) -> &AtomicUsize {
        &self.connections
    }
}

/// A shutdown signal every connection can wait on.
#[derive(Default)]
pub(crate) struct Shutdown {
    done: AtomicBool,
    notify: Notify,
}

impl Shutdown {
    /// Signals shutdown to every waiter, now and later.
    pub(crate) fn cancel(&self) {
        self.done.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Resolves once [`cancel`](Shutdown::cancel) was called.
    pub(crate) async fn cancelled(&self) {
        loop {
            // Created before the flag is read, it cannot miss a `notify_waiters` after it.
            let notified = self.notify.notified();
            if self.done.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::web::state::RunInfo;
    use giving::Timestamp;
    use std::sync::Arc;

    /// Shared state of a run titled `test`, read-only, batches every 250 ms, 8 connections.
    pub(crate) fn shared() -> Arc<Shared> {
        let info = RunInfo {
            title: "test".into(),
            host: "here".into(),
            started: Timestamp::now(),
        };
        Arc::new(Shared::new(
            WebState::new(info),
            None,
            Duration::from_millis(250),
            8,
        ))
    }
}
