//! [`budgeted`]: taking an event within tokio's cooperative budget.

use std::task::{Context, Poll};

/// Runs `take` (a stream's step: `Ready(true)` for an event taken, `Ready(false)` for the end)
/// within tokio's cooperative budget, charging it only for an event taken.
///
/// A reader that is behind always has an event ready, so without a budget its task would
/// never yield: the other pipelines on its worker (a rate that an early stop waits for)
/// would starve while it drains. With it, a reader yields every 128 events, as tokio's own
/// channels do; outside a tokio runtime the budget is unconstrained. A feed reader charges it
/// once per run of events it checks at once (up to 8, src/feed.rs): the budget's thread-local
/// lookup per event was a tenth of the reader's instructions.
#[inline]
pub(crate) fn budgeted(
    cx: &mut Context<'_>,
    take: impl FnOnce(&mut Context<'_>) -> Poll<bool>,
) -> Poll<bool> {
    let coop = std::task::ready!(tokio::task::coop::poll_proceed(cx));
    let taken = take(cx);
    if let Poll::Ready(true) = taken {
        coop.made_progress();
    }
    taken
}
