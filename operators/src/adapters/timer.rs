//! [`Timer`]: the one tokio sleep a time operator re-arms, made at first use.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// A sleep created when first armed (so that an operator can be built outside a runtime) and
/// re-armed in place after that: what `debounce` and `throttle_latest` wait on.
#[derive(Debug, Default)]
pub(crate) struct Timer(Option<Pin<Box<Sleep>>>);

impl Timer {
    /// Arms the timer to fire `period` from now.
    pub(crate) fn arm(&mut self, period: Duration) {
        let deadline = Instant::now() + period;
        match self.0.as_mut() {
            Some(sleep) => sleep.as_mut().reset(deadline),
            None => self.0 = Some(Box::pin(tokio::time::sleep_until(deadline))),
        }
    }

    /// Whether the timer was never armed or its deadline has passed.
    pub(crate) fn expired(&self) -> bool {
        self.0
            .as_ref()
            .is_none_or(|sleep| Instant::now() >= sleep.deadline())
    }

    /// Ready when the deadline has passed (at once if never armed); registers `cx` otherwise.
    pub(crate) fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self.0.as_mut() {
            Some(sleep) => sleep.as_mut().poll(cx),
            None => Poll::Ready(()),
        }
    }
}
