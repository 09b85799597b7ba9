//! [`StopBridge`]: a giving stop asks burn-train's `Interrupter` to stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use burn_train::Interrupter;
use giving::{Giver, StopToken};

/// How often the bridge looks at the stop tokens: far shorter than a training iteration, so
/// the Learner sees the stop at the end of the iteration it is in.
const POLL: Duration = Duration::from_millis(1);

/// Watches giving stop tokens (the run's scope's, as the dashboard's `q`, the Overseer's
/// Ctrl-C/SIGTERM and `EarlyStop` stop it) and stops burn-train's `Interrupter` when one is
/// stopped: the Learner ends after its current iteration and `launch` returns normally.
///
/// Both are flags the loops poll (giving's [`StopToken`], burn-train's `Interrupter`), so a
/// thread of the bridge's own polls the tokens (every millisecond, one atomic load each) until
/// the bridge is dropped.
///
/// ```
/// use burn_train::Interrupter;
/// use giving::StopToken;
/// use giving_burn::train::StopBridge;
///
/// let token = StopToken::new();
/// let interrupter = Interrupter::new();
/// let bridge = StopBridge::new(interrupter.clone(), [token.clone()]).unwrap();
/// token.stop();
/// bridge.wait_forwarded();
/// assert!(interrupter.should_stop());
/// ```
pub struct StopBridge {
    done: Arc<AtomicBool>,
    watcher: Option<JoinHandle<()>>,
}

impl StopBridge {
    /// Watches the stop tokens of every scope the calling thread gives into now (the
    /// Overseer's run, a [`given`](giving::given) scope, the global scopes): call it where the
    /// training would call [`iterate`](giving::iterate), before `launch`.
    pub fn current(interrupter: Interrupter) -> std::io::Result<Self> {
        Self::new(interrupter, Giver::current().stop_tokens())
    }

    /// Starts watching `tokens`; the first one stopped stops `interrupter`. An error if the
    /// watching thread cannot be started.
    pub fn new(
        interrupter: Interrupter,
        tokens: impl IntoIterator<Item = StopToken>,
    ) -> std::io::Result<Self> {
        let tokens: Vec<StopToken> = tokens.into_iter().collect();
        let done = Arc::new(AtomicBool::new(false));
        let watching = done.clone();
        let watcher = std::thread::Builder::new()
            .name("giving-stop-bridge".into())
            .spawn(move || {
                while !watching.load(Ordering::Acquire) {
                    if tokens.iter().any(StopToken::is_stopped) {
                        interrupter.stop(Some("stopped through giving"));
                        return;
                    }
                    std::thread::sleep(POLL);
                }
            })?;
        Ok(Self {
            done,
            watcher: Some(watcher),
        })
    }

    /// Waits until the bridge has stopped the interrupter (or was told to end): its thread
    /// ends once it has forwarded a stop.
    pub fn wait_forwarded(mut self) {
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
    }
}

impl Drop for StopBridge {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
    }
}
