use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::filter`](crate::StreamOps::filter).
    #[must_use = "streams do nothing unless polled"]
    pub struct Filter<S, F> {
        #[pin]
        stream: S,
        predicate: F,
    }
}

impl<S, F> Filter<S, F> {
    pub(crate) fn new(stream: S, predicate: F) -> Self {
        Self { stream, predicate }
    }
}

impl<S, F> Stream for Filter<S, F>
where
    S: Stream,
    F: FnMut(&S::Item) -> bool,
{
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        loop {
            match ready!(this.stream.as_mut().poll_next(cx)) {
                Some(item) if (this.predicate)(&item) => return Poll::Ready(Some(item)),
                Some(_) => {}
                None => return Poll::Ready(None),
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.stream.size_hint().1)
    }
}

impl<S, F> fmt::Debug for Filter<S, F>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filter")
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl<S, F> FusedStream for Filter<S, F>
where
    S: FusedStream,
    Self: Stream,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}
