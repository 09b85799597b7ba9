//! [`StopToken`]: how a listener asks a training loop to stop cleanly.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A shared flag that asks a loop to stop at its next step.
///
/// Every scope has one ([`Given::stop_token`](crate::Given::stop_token)); [`iterate`](fn@crate::iterate)
/// ends early once any scope the loop runs in has been asked to stop, so an instrument such as
/// early stopping never touches the loop's code.
///
/// ```
/// use giving::StopToken;
///
/// let token = StopToken::new();
/// let seen_by_loop = token.clone();
/// token.stop();
/// assert!(seen_by_loop.is_stopped());
/// ```
#[derive(Clone, Debug, Default)]
pub struct StopToken {
    flag: Arc<AtomicBool>,
}

impl StopToken {
    /// A token not yet stopped.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every holder of this token to stop.
    pub fn stop(&self) {
        self.flag.store(true, Ordering::Release);
    }

    /// Whether a stop was asked.
    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }
}
