use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

use super::timer::Timer;

pin_project! {
    /// Stream for [`StreamOps::throttle_latest`](crate::StreamOps::throttle_latest).
    #[must_use = "streams do nothing unless polled"]
    pub struct ThrottleLatest<S: Stream> {
        #[pin]
        stream: S,
        period: Duration,
        // The end of the window opened by the last item emitted.
        window: Timer,
        // The newest item of the open window, emitted when the window ends.
        latest: Option<S::Item>,
        done: bool,
    }
}

impl<S: Stream> ThrottleLatest<S> {
    pub(crate) fn new(stream: S, period: Duration) -> Self {
        Self {
            stream,
            period,
            window: Timer::default(),
            latest: None,
            done: false,
        }
    }
}

impl<S: Stream> Stream for ThrottleLatest<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        while !*this.done {
            match this.stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(item)) => {
                    if !this.window.expired() {
                        // Inside the window: only the newest is kept.
                        *this.latest = Some(item);
                        continue;
                    }
                    // The window has ended: what it held goes first (it came first), and the
                    // new item waits in the window that opens now.
                    this.window.arm(*this.period);
                    let emitted = match this.latest.take() {
                        Some(held) => {
                            *this.latest = Some(item);
                            held
                        }
                        // Nothing held: the new item leads the window.
                        None => item,
                    };
                    return Poll::Ready(Some(emitted));
                }
                Poll::Ready(None) => *this.done = true,
                Poll::Pending => break,
            }
        }
        if *this.done {
            // Completion emits the item still held (ReactiveX's trailing edge), then ends.
            return Poll::Ready(this.latest.take());
        }
        if this.latest.is_none() {
            return Poll::Pending;
        }
        if this.window.poll_expired(cx).is_pending() {
            return Poll::Pending;
        }
        // The window ended with an item held: it is emitted, and opens the next window.
        this.window.arm(*this.period);
        Poll::Ready(this.latest.take())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let held = usize::from(self.latest.is_some());
        let (_, upper) = self.stream.size_hint();
        (held, upper.and_then(|upper| upper.checked_add(held)))
    }
}

impl<S: Stream> fmt::Debug for ThrottleLatest<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThrottleLatest")
            .field("stream", &self.stream)
            .field("period", &self.period)
            .field("holding", &self.latest.is_some())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<S: Stream> FusedStream for ThrottleLatest<S> {
    fn is_terminated(&self) -> bool {
        self.done && self.latest.is_none()
    }
}
