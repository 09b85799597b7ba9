use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;
use tokio::time::{Instant, Interval, MissedTickBehavior};

pin_project! {
    /// Stream for [`StreamOps::sample`](crate::StreamOps::sample).
    #[must_use = "streams do nothing unless polled"]
    pub struct Sample<S: Stream> {
        #[pin]
        stream: S,
        period: Duration,
        // Created at the first poll, so that the operator can be built outside a runtime.
        interval: Option<Interval>,
        latest: Option<S::Item>,
        done: bool,
    }
}

impl<S: Stream> Sample<S> {
    pub(crate) fn new(stream: S, period: Duration) -> Self {
        assert!(!period.is_zero(), "sample: the period must be non-zero");
        Self {
            stream,
            period,
            interval: None,
            latest: None,
            done: false,
        }
    }
}

impl<S: Stream> Stream for Sample<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        let period = *this.period;
        let interval = this.interval.get_or_insert_with(|| {
            let mut interval = tokio::time::interval_at(Instant::now() + period, period);
            interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
            interval
        });
        while !*this.done {
            match this.stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(item)) => *this.latest = Some(item),
                Poll::Ready(None) => *this.done = true,
                Poll::Pending => break,
            }
        }
        if *this.done {
            // Completion emits the item not yet sampled, then completes.
            return Poll::Ready(this.latest.take());
        }
        loop {
            ready!(interval.poll_tick(cx));
            if let Some(item) = this.latest.take() {
                return Poll::Ready(Some(item));
            }
        }
    }
}

impl<S: Stream> fmt::Debug for Sample<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sample")
            .field("stream", &self.stream)
            .field("period", &self.period)
            .field("latest", &self.latest.is_some())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<S: Stream> FusedStream for Sample<S>
where
    S: Stream,
{
    fn is_terminated(&self) -> bool {
        self.done && self.latest.is_none()
    }
}
