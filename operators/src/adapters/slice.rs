use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::slice`](crate::StreamOps::slice).
    #[must_use = "streams do nothing unless polled"]
    pub struct Slice<S> {
        #[pin]
        stream: S,
        index: usize,
        start: usize,
        end: Option<usize>,
    }
}

impl<S> Slice<S> {
    pub(crate) fn new(stream: S, start: usize, end: Option<usize>) -> Self {
        Self {
            stream,
            index: 0,
            start,
            end,
        }
    }
}

impl<S: Stream> Stream for Slice<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        loop {
            if this
                .end
                .is_some_and(|end| *this.index >= end || end <= *this.start)
            {
                // Past the end: complete without polling the upstream again.
                return Poll::Ready(None);
            }
            let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) else {
                return Poll::Ready(None);
            };
            let index = *this.index;
            *this.index += 1;
            if index >= *this.start {
                return Poll::Ready(Some(item));
            }
        }
    }
}

impl<S> fmt::Debug for Slice<S>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slice")
            .field("stream", &self.stream)
            .field("index", &self.index)
            .field("start", &self.start)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

impl<S> FusedStream for Slice<S>
where
    S: FusedStream,
{
    fn is_terminated(&self) -> bool {
        self.end
            .is_some_and(|end| self.index >= end || end <= self.start)
            || self.stream.is_terminated()
    }
}
