use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

use super::timer::Timer;

pin_project! {
    /// Stream for [`StreamOps::debounce`](crate::StreamOps::debounce).
    #[must_use = "streams do nothing unless polled"]
    pub struct Debounce<S: Stream> {
        #[pin]
        stream: S,
        period: Duration,
        // The quiet period after the last item.
        timer: Timer,
        pending: Option<S::Item>,
        done: bool,
    }
}

impl<S: Stream> Debounce<S> {
    pub(crate) fn new(stream: S, period: Duration) -> Self {
        Self {
            stream,
            period,
            timer: Timer::default(),
            pending: None,
            done: false,
        }
    }
}

impl<S: Stream> Stream for Debounce<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        while !*this.done {
            match this.stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(item)) => {
                    *this.pending = Some(item);
                    this.timer.arm(*this.period);
                }
                Poll::Ready(None) => *this.done = true,
                Poll::Pending => break,
            }
        }
        if *this.done {
            // Completion flushes the item still waiting for its quiet period (as ReactiveX).
            return Poll::Ready(this.pending.take());
        }
        if this.pending.is_none() {
            return Poll::Pending;
        }
        ready!(this.timer.poll_expired(cx));
        Poll::Ready(this.pending.take())
    }
}

impl<S: Stream> fmt::Debug for Debounce<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Debounce")
            .field("stream", &self.stream)
            .field("period", &self.period)
            .field("pending", &self.pending.is_some())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<S: Stream> FusedStream for Debounce<S>
where
    S: Stream,
{
    fn is_terminated(&self) -> bool {
        self.done && self.pending.is_none()
    }
}
