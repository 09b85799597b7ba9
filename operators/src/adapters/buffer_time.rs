use std::fmt;
use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

pin_project! {
    /// Stream for [`StreamOps::buffer_time`](crate::StreamOps::buffer_time) and
    /// [`StreamOps::buffer_time_count`](crate::StreamOps::buffer_time_count).
    #[must_use = "streams do nothing unless polled"]
    pub struct BufferTime<S: Stream> {
        #[pin]
        stream: S,
        period: Duration,
        max: usize,
        // Created at the first poll, so that the operator can be built outside a runtime.
        sleep: Option<Pin<Box<Sleep>>>,
        buf: Vec<S::Item>,
        done: bool,
    }
}

impl<S: Stream> BufferTime<S> {
    pub(crate) fn new(stream: S, period: Duration, max: usize) -> Self {
        assert!(
            !period.is_zero(),
            "buffer_time: the period must be non-zero"
        );
        assert!(
            max > 0,
            "buffer_time_count: the maximum count must be at least 1"
        );
        Self {
            stream,
            period,
            max,
            sleep: None,
            buf: Vec::new(),
            done: false,
        }
    }
}

impl<S: Stream> Stream for BufferTime<S> {
    type Item = Vec<S::Item>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Vec<S::Item>>> {
        let mut this = self.project();
        let period = *this.period;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(period)));
        while !*this.done {
            match this.stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(item)) => {
                    this.buf.push(item);
                    if this.buf.len() >= *this.max {
                        // Full: emitted now, and a new window starts now.
                        sleep.as_mut().reset(Instant::now() + period);
                        return Poll::Ready(Some(mem::take(this.buf)));
                    }
                }
                Poll::Ready(None) => *this.done = true,
                Poll::Pending => break,
            }
        }
        if *this.done {
            // Completion flushes the partial buffer (never an empty one).
            return Poll::Ready((!this.buf.is_empty()).then(|| mem::take(this.buf)));
        }
        loop {
            ready!(sleep.as_mut().poll(cx));
            let next = (sleep.deadline() + period).max(Instant::now());
            sleep.as_mut().reset(next);
            if !this.buf.is_empty() {
                return Poll::Ready(Some(mem::take(this.buf)));
            }
            // An empty window emits nothing.
        }
    }
}

impl<S: Stream> fmt::Debug for BufferTime<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferTime")
            .field("stream", &self.stream)
            .field("period", &self.period)
            .field("max", &self.max)
            .field("buffered", &self.buf.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<S: Stream> FusedStream for BufferTime<S>
where
    S: Stream,
{
    fn is_terminated(&self) -> bool {
        self.done && self.buf.is_empty()
    }
}
