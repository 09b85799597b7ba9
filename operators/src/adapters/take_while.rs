use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::take_while`](crate::StreamOps::take_while).
    #[must_use = "streams do nothing unless polled"]
    pub struct TakeWhile<S, F> {
        #[pin]
        stream: S,
        predicate: F,
        done: bool,
    }
}

impl<S, F> TakeWhile<S, F> {
    pub(crate) fn new(stream: S, predicate: F) -> Self {
        Self {
            stream,
            predicate,
            done: false,
        }
    }
}

impl<S, F> Stream for TakeWhile<S, F>
where
    S: Stream,
    F: FnMut(&S::Item) -> bool,
{
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let this = self.project();
        if *this.done {
            return Poll::Ready(None);
        }
        match ready!(this.stream.poll_next(cx)) {
            Some(item) if (this.predicate)(&item) => Poll::Ready(Some(item)),
            _ => {
                *this.done = true;
                Poll::Ready(None)
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            (0, Some(0))
        } else {
            (0, self.stream.size_hint().1)
        }
    }
}

impl<S, F> fmt::Debug for TakeWhile<S, F>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TakeWhile")
            .field("stream", &self.stream)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<S, F> FusedStream for TakeWhile<S, F>
where
    Self: Stream,
{
    fn is_terminated(&self) -> bool {
        self.done
    }
}
