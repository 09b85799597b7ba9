use std::fmt;
use std::mem;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::buffer`](crate::StreamOps::buffer).
    #[must_use = "streams do nothing unless polled"]
    pub struct Buffer<S: Stream> {
        #[pin]
        stream: S,
        count: usize,
        buf: Vec<S::Item>,
        done: bool,
    }
}

impl<S: Stream> Buffer<S> {
    pub(crate) fn new(stream: S, count: usize) -> Self {
        assert!(count > 0, "buffer: the count must be at least 1");
        Self {
            stream,
            count,
            buf: Vec::with_capacity(count.min(4096)),
            done: false,
        }
    }
}

impl<S: Stream> Stream for Buffer<S> {
    type Item = Vec<S::Item>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Vec<S::Item>>> {
        let mut this = self.project();
        if *this.done {
            return Poll::Ready(None);
        }
        loop {
            match ready!(this.stream.as_mut().poll_next(cx)) {
                Some(item) => {
                    this.buf.push(item);
                    if this.buf.len() == *this.count {
                        let next = Vec::with_capacity((*this.count).min(4096));
                        return Poll::Ready(Some(mem::replace(this.buf, next)));
                    }
                }
                None => {
                    *this.done = true;
                    // The partial last buffer is flushed; never an empty one.
                    return Poll::Ready((!this.buf.is_empty()).then(|| mem::take(this.buf)));
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            return (0, Some(0));
        }
        let (low, high) = self.stream.size_hint();
        let buffered = self.buf.len();
        (
            low.saturating_add(buffered) / self.count,
            high.and_then(|h| h.checked_add(buffered))
                .map(|h| h.div_ceil(self.count)),
        )
    }
}

impl<S: Stream> fmt::Debug for Buffer<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("stream", &self.stream)
            .field("count", &self.count)
            .field("buffered", &self.buf.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<S: Stream> FusedStream for Buffer<S>
where
    S: Stream,
{
    fn is_terminated(&self) -> bool {
        self.done
    }
}
