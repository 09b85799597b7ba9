use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;
use tokio::time::Instant;

pin_project! {
    /// Stream for [`StreamOps::throttle`](crate::StreamOps::throttle).
    #[must_use = "streams do nothing unless polled"]
    pub struct Throttle<S> {
        #[pin]
        stream: S,
        period: Duration,
        open_at: Option<Instant>,
    }
}

impl<S> Throttle<S> {
    pub(crate) fn new(stream: S, period: Duration) -> Self {
        Self {
            stream,
            period,
            open_at: None,
        }
    }
}

impl<S: Stream> Stream for Throttle<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        loop {
            let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) else {
                return Poll::Ready(None);
            };
            let now = Instant::now();
            if this.open_at.is_none_or(|open_at| now >= open_at) {
                *this.open_at = Some(now + *this.period);
                return Poll::Ready(Some(item));
            }
            // Inside the window opened by the last emitted item: dropped.
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.stream.size_hint().1)
    }
}

impl<S> fmt::Debug for Throttle<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Throttle")
            .field("stream", &self.stream)
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}

impl<S> FusedStream for Throttle<S>
where
    S: FusedStream,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}
