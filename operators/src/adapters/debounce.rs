use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

pin_project! {
    /// Stream for [`StreamOps::debounce`](crate::StreamOps::debounce).
    #[must_use = "streams do nothing unless polled"]
    pub struct Debounce<S: Stream> {
        #[pin]
        stream: S,
        period: Duration,
        // Created at the first item, so that the operator can be built outside a runtime.
        sleep: Option<Pin<Box<Sleep>>>,
        pending: Option<S::Item>,
        done: bool,
    }
}

impl<S: Stream> Debounce<S> {
    pub(crate) fn new(stream: S, period: Duration) -> Self {
        Self {
            stream,
            period,
            sleep: None,
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
                    let deadline = Instant::now() + *this.period;
                    match this.sleep.as_mut() {
                        Some(sleep) => sleep.as_mut().reset(deadline),
                        None => *this.sleep = Some(Box::pin(tokio::time::sleep_until(deadline))),
                    }
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
        if let Some(sleep) = this.sleep.as_mut() {
            ready!(sleep.as_mut().poll(cx));
        }
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
