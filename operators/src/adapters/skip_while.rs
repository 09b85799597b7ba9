use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::skip_while`](crate::StreamOps::skip_while).
    #[must_use = "streams do nothing unless polled"]
    pub struct SkipWhile<S, F> {
        #[pin]
        stream: S,
        predicate: F,
        skipping: bool,
    }
}

impl<S, F> SkipWhile<S, F> {
    pub(crate) fn new(stream: S, predicate: F) -> Self {
        Self {
            stream,
            predicate,
            skipping: true,
        }
    }
}

impl<S, F> Stream for SkipWhile<S, F>
where
    S: Stream,
    F: FnMut(&S::Item) -> bool,
{
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let mut this = self.project();
        loop {
            let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) else {
                return Poll::Ready(None);
            };
            if !*this.skipping || !(this.predicate)(&item) {
                *this.skipping = false;
                return Poll::Ready(Some(item));
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.skipping {
            (0, self.stream.size_hint().1)
        } else {
            self.stream.size_hint()
        }
    }
}

impl<S, F> fmt::Debug for SkipWhile<S, F>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkipWhile")
            .field("stream", &self.stream)
            .field("skipping", &self.skipping)
            .finish_non_exhaustive()
    }
}

impl<S, F> FusedStream for SkipWhile<S, F>
where
    S: FusedStream,
    Self: Stream,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}
